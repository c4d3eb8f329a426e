"""Every check runs the code it vouches for (issue 46): a changed update of a built-in family changes what every claim
naming that family measures. The mutations and the claims each must flip are written here once. The default run checks
the claims' measurements at small sizes (seconds); the `slow` one runs the claims themselves (IN_TEST sizes) and asks
for each verdict to flip (measured 2026-12-06: all four flip; about 12 minutes, the mutated family running on its plain
loop; error-propagation-bound fails by a non-finite value, the delta rule at beta 1 diverging on its keys)."""
import dataclasses
import pytest
import torch
from pavlovattn.model import families as F

DELTA_STEP = F.FAMILIES['delta'].step

MUTATIONS = {   # (family, what changes) -> its changed spec (a spec that is not the built-in one runs on the reference loop only)
    ('hebbian', 'writes the error, as the delta rule'): lambda f: dataclasses.replace(f, step=DELTA_STEP),
}

MUST_FLIP = {   # the claims that name the family and must flip under the mutation
    ('hebbian', 'writes the error, as the delta rule'): ('capacity-exponent-accurate', 'heads-total-state', 'error-propagation-bound', 'error-propagation-chained'),
}


@pytest.fixture
def mutated(monkeypatch):
    "Apply a mutation for the test's duration (and forget the capacity sweeps cached in this process, before and after)."
    from pavlovattn.pages import capacity
    def apply(key):
        name, _ = key
        capacity._sweep.cache_clear()
        monkeypatch.setitem(F.FAMILIES, name, MUTATIONS[key](F.FAMILIES[name]))
    yield apply
    capacity._sweep.cache_clear()


def _measurements():
    "What the linear-attention rows measure, at small sizes: capacity N*, a head grid cell's errors, per-head crosstalk, a chained read-out."
    from pavlovattn.pages.capacity import capacity
    from pavlovattn.pages.heads import head_cell
    from pavlovattn.pages.propagation import head_errors
    g = lambda s: torch.Generator().manual_seed(s)
    return dict(n_star=capacity(64, 'accurate', 'hebbian', draws=16)['n_star'],
                heads=head_cell(2, 16, 48, draws=8, generator=g(1))['rel_l2'],
                crosstalk=head_errors(24, 16, 4, draws=64, generator=g(2)))


@pytest.mark.parametrize('key', list(MUTATIONS))
def test_a_mutated_family_changes_every_measurement_of_its_rows(key, mutated):
    before = _measurements()
    mutated(key)
    after = _measurements()
    assert after['n_star'] != before['n_star'], (before['n_star'], after['n_star'])
    for k in ('heads', 'crosstalk'):
        assert not torch.allclose(after[k], before[k], rtol=1e-3), k


def test_the_table_names_registered_claims():
    from pavlovattn.base.registry import load_claims
    claims = load_claims()
    assert {i for ids in MUST_FLIP.values() for i in ids} <= set(claims)
    assert set(MUST_FLIP) == set(MUTATIONS)


@pytest.mark.slow
@pytest.mark.parametrize('key', list(MUTATIONS))
def test_a_mutated_family_flips_every_claim_that_names_it(key, mutated, monkeypatch):
    from pavlovattn.base.registry import run_claims
    monkeypatch.setenv('IN_TEST', '1')
    before = {r['id']: r['verdict'] for r in run_claims(list(MUST_FLIP[key]), progress=False)[0]}
    assert set(before.values()) == {'pass'}, before
    mutated(key)
    after = {r['id']: r['verdict'] for r in run_claims(list(MUST_FLIP[key]), progress=False)[0]}
    assert all(v == 'fail' for v in after.values()), after
