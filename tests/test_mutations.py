"""Every check runs the code it vouches for (issue 46): a changed update of a built-in family changes what every claim
naming that family measures, and fails every passing claim that can see the change.

The mutations, the claims each must fail (`MUST_FLIP`) and the passing claims that name the family but cannot see that
mutation, with the reason (`CANNOT_FLIP`), are written here once. They were measured on 2026-12-06 by running every
claim of the default tier (IN_TEST sizes) under each mutation; a mutated spec is not the built-in one, so every
algorithm but the plain reference loop declines it and each claim runs the mutated update. Claims that already fail
unmutated (their measurement moves; their verdict cannot flip to fail) are in neither table. The q/k swap is a mutation of
the wiring, not of the update: the plain loop hands the mutant its queries as keys and its keys as queries (`SWAPPED`);
most designs read a cue with the key it was written with, so few claims can see it, and the table says which.

`make test` runs one cheap claim per mutation (`FAST`, seconds) and the measurements of the linear-attention rows;
`pytest --slow` runs every claim of `MUST_FLIP` (minutes per mutation)."""
import dataclasses
import pytest
import torch
from pavlovattn.model import families as F

STEP = {n: F.FAMILIES[n].step for n in ('hebbian', 'decay', 'delta')}

def _no_decay(f):
    "The same update with every gate at 1: nothing is ever forgotten."
    st = f.step
    return dataclasses.replace(f, step=lambda S, k, v, b, g, kw: st(S, k, v, b, None if g is None else torch.ones_like(g), kw))

def _read_after_write(f):
    "The delta rule computing its error from the state after a Hebbian write (a read placed after the write)."
    return dataclasses.replace(f, step=lambda S, k, v, b, g, kw: F._step_delta(S + F._outer(b[:, None] * v, k), k, v, b, g, kw) - F._outer(b[:, None] * v, k))

MUTATIONS = {   # (family, what changes) -> its changed spec
    ('delta', 'writes the target, not the error'): lambda f: dataclasses.replace(f, step=STEP['hebbian']),
    ('delta', 'reads its prediction after it writes'): _read_after_write,
    ('gated-delta', 'writes the target, not the error'): lambda f: dataclasses.replace(f, step=STEP['decay']),
    ('gated-delta', 'never forgets'): _no_decay,
    ('hebbian', 'writes the error, as the delta rule'): lambda f: dataclasses.replace(f, step=STEP['delta']),
    ('decay', 'never forgets'): _no_decay,
    ('delta', 'writes with its queries and reads with its keys'): dataclasses.replace,      # the same update: the swap is in its wiring (`SWAPPED`)
    ('hebbian', 'writes with its queries and reads with its keys'): dataclasses.replace,
}
SWAPPED = {k for k in MUTATIONS if k[1] == 'writes with its queries and reads with its keys'}   # the loop hands the family q for k and k for q

def _swap_reference(mutant):
    "The plain loop with queries and keys exchanged for `mutant` only (a mutated spec runs on the plain loop alone)."
    ref = F.reference
    def swapped(fam, q, k, *a, **kw):
        if fam is mutant and q is not None: q, k = k, q
        return ref(fam, q, k, *a, **kw)
    return swapped

_CLOSED = ('core-acquisition-closed-forms', 'acquisition-extinction-closed-forms', 'blocking-closed-form', 'time-closed-forms')
_BEYOND = ('beyond-latent-inhibition', 'beyond-backward-blocking', 'beyond-recovery-from-overshadowing', 'beyond-renewal', 'beyond-reinstatement')
_DISS = ('dissociation-blocking', 'dissociation-overshadowing', 'dissociation-summation', 'dissociation-overexpectation',
         'dissociation-protection-from-extinction', 'dissociation-contingency')
MUST_FLIP = {   # measured 2026-12-06: every claim below passes unmutated and fails under the mutation
    ('delta', 'writes the target, not the error'): _CLOSED + _BEYOND + _DISS + (
        'core-deltanet-is-rescorla-wagner', 'designs-rw-reference', 'extinction-dissociation', 'blocking-delta-present', 'blocking-normalized-partial',
        'overshadowing-closed-form', 'conditioned-inhibition-closed-form', 'overexpectation-closed-form', 'superconditioning-closed-form',
        'protection-from-extinction-closed-form', 'contingency-delta-p', 'partial-reinforcement-closed-form', 'relative-validity-no-effect',
        'random-order-mean-recursion', 'beyond-extinction-of-inhibition', 'stacked-closed-forms', 'ccnlab-rw-timestep'),
    ('delta', 'reads its prediction after it writes'): _CLOSED + _BEYOND + (
        'core-deltanet-is-rescorla-wagner', 'designs-rw-reference', 'extinction-dissociation', 'blocking-delta-present', 'overshadowing-closed-form',
        'conditioned-inhibition-closed-form', 'overexpectation-closed-form', 'superconditioning-closed-form', 'protection-from-extinction-closed-form',
        'contingency-delta-p', 'partial-reinforcement-closed-form', 'random-order-mean-recursion', 'beyond-extinction-of-inhibition',
        'stacked-closed-forms', 'ccnlab-rw-timestep'),
    ('gated-delta', 'writes the target, not the error'): _CLOSED + _BEYOND + _DISS + (
        'blocking-delta-present', 'random-order-mean-recursion', 'recovery-overshoot-toward-zero', 'beyond-extinction-of-inhibition'),
    ('gated-delta', 'never forgets'): _CLOSED + _BEYOND + ('random-order-mean-recursion', 'no-spontaneous-recovery', 'recovery-overshoot-toward-zero',
        'beyond-extinction-of-inhibition'),
    ('hebbian', 'writes the error, as the delta rule'): _CLOSED + _BEYOND + _DISS + (
        'extinction-dissociation', 'blocking-contiguity-absent', 'random-order-mean-recursion', 'beyond-extinction-of-inhibition', 'stacked-closed-forms',
        'capacity-exponent-accurate', 'heads-total-state', 'error-propagation-bound', 'error-propagation-chained'),
    ('decay', 'never forgets'): _CLOSED + _BEYOND + ('extinction-dissociation', 'random-order-mean-recursion', 'no-spontaneous-recovery'),
    ('delta', 'writes with its queries and reads with its keys'): (
        'core-acquisition-closed-forms', 'designs-rw-reference', 'no-spontaneous-recovery', 'recovery-history-contrast-contracts',
        'stacked-three-layer-closed-forms', 'stacked-closed-forms', 'stacked-preconditioning'),
    ('hebbian', 'writes with its queries and reads with its keys'): (
        'core-acquisition-closed-forms', 'no-spontaneous-recovery', 'stacked-three-layer-closed-forms', 'stacked-closed-forms', 'stacked-preconditioning'),
}

_ZERO = 'the claim predicts no effect for this family and for the mutant alike (both are 0 by the same algebra)'
_ANY_GAMMA = "the claim's statement about this family holds for every gamma, 1 included"
_STILL_RW = 'the mutant still corrects its error (at a smaller effective rate): the claim states a direction or a rate-free limit, which it keeps'
_THEOREM = 'a theorem of every fixed-size family: contiguity attention shows no recovery either'
_NO_TRACE = "'no trace' is true by construction for a step with no cue (the time page says so)"
CANNOT_FLIP = {   # passing claims that name the family and cannot see the mutation, and why (measured 2026-12-06)
    ('delta', 'writes the target, not the error'): {
        'dissociation-relative-validity-equal-rates': _ZERO, 'dissociation-pree': _ZERO, 'beyond-sensory-preconditioning': _ZERO,
        'no-spontaneous-recovery': _THEOREM, 'time-stimulus-trace-positive-delay': _NO_TRACE},
    ('delta', 'reads its prediction after it writes'): {
        **{i: _STILL_RW for i in _DISS + ('blocking-normalized-partial', 'relative-validity-no-effect')},
        'dissociation-relative-validity-equal-rates': _ZERO, 'dissociation-pree': _ZERO, 'beyond-sensory-preconditioning': _ZERO,
        'no-spontaneous-recovery': _THEOREM, 'time-stimulus-trace-positive-delay': _NO_TRACE},
    ('gated-delta', 'writes the target, not the error'): {
        'dissociation-relative-validity-equal-rates': _ZERO, 'dissociation-pree': _ZERO, 'beyond-sensory-preconditioning': _ZERO,
        'no-spontaneous-recovery': _THEOREM, 'time-stimulus-trace-positive-delay': _NO_TRACE},
    ('gated-delta', 'never forgets'): {
        'blocking-delta-present': 'blocking (ratio < 1) holds at gamma = 1: gated-delta without its gate is the delta rule',
        **{i: "gated-delta's effect without the gate is delta's, which the claim also calls present" for i in _DISS},
        'time-stimulus-trace-positive-delay': _NO_TRACE,
        'dissociation-relative-validity-equal-rates': _ZERO, 'dissociation-pree': _ZERO, 'beyond-sensory-preconditioning': _ZERO},
    ('decay', 'never forgets'): {
        'blocking-contiguity-absent': _ANY_GAMMA, **{i: _ANY_GAMMA for i in _DISS}, 'dissociation-relative-validity-equal-rates': _ZERO,
        'dissociation-pree': _ZERO, 'beyond-sensory-preconditioning': _ZERO, 'beyond-extinction-of-inhibition': _ZERO,
        'time-stimulus-trace-positive-delay': _NO_TRACE},
    ('hebbian', 'writes the error, as the delta rule'): {
        'dissociation-relative-validity-equal-rates': _ZERO, 'dissociation-pree': _ZERO, 'beyond-sensory-preconditioning': _ZERO},
}

_QK = ('every step it runs reads a cue with the key that cue was written with (q = k): swapping them changes nothing it measures '
       '(its measured text was unchanged, to rounding, under the swap)')
for _k in SWAPPED:       # the claims that name the family in its other mutations' tables and cannot see the swap
    _named = {i for m, ids in MUST_FLIP.items() if m[0] == _k[0] and m not in SWAPPED for i in ids} | \
             {i for m, ids in CANNOT_FLIP.items() if m[0] == _k[0] and m not in SWAPPED for i in ids}
    CANNOT_FLIP[_k] = {i: _QK for i in sorted(_named - set(MUST_FLIP[_k]))}

FAST = {   # one cheap claim per mutation for `make test` (the whole list runs under --slow)
    ('delta', 'writes the target, not the error'): 'overexpectation-closed-form',
    ('delta', 'reads its prediction after it writes'): 'overexpectation-closed-form',
    ('gated-delta', 'writes the target, not the error'): 'recovery-overshoot-toward-zero',
    ('gated-delta', 'never forgets'): 'recovery-overshoot-toward-zero',
    ('hebbian', 'writes the error, as the delta rule'): 'beyond-backward-blocking',
    ('decay', 'never forgets'): 'beyond-renewal',
    ('delta', 'writes with its queries and reads with its keys'): 'core-acquisition-closed-forms',
    ('hebbian', 'writes with its queries and reads with its keys'): 'core-acquisition-closed-forms',
}


@pytest.fixture
def mutated(monkeypatch):
    "Apply a mutation for the test's duration: the family's spec replaced by the mutant, accepted where a built-in name would be refused (capacity sweeps cached in this process forgotten before and after)."
    from pavlovattn.pages import capacity
    def apply(key):
        name, _ = key
        capacity._sweep.cache_clear()
        mutant = MUTATIONS[key](F.FAMILIES[name]); register = F.register
        monkeypatch.setitem(F.FAMILIES, name, mutant)
        monkeypatch.setattr(F, 'register', lambda fam: fam if fam is mutant else register(fam))
        if key in SWAPPED: monkeypatch.setattr(F, 'reference', _swap_reference(mutant))
    yield apply
    capacity._sweep.cache_clear()


def _verdicts(ids):
    from pavlovattn.base.registry import run_claims
    return {r['id']: r['check'] for r in run_claims(list(ids), progress=False)[0]}


def test_the_tables_name_registered_claims_once():
    from pavlovattn.base.registry import load_claims
    claims = load_claims()
    assert set(MUST_FLIP) == set(MUTATIONS) == set(FAST) and set(CANNOT_FLIP) <= set(MUTATIONS)
    for key, ids in MUST_FLIP.items():
        assert len(ids) == len(set(ids)) and set(ids) <= set(claims), key
        assert FAST[key] in ids and not set(ids) & set(CANNOT_FLIP.get(key, {})), key
    assert {i for v in CANNOT_FLIP.values() for i in v} <= set(claims)


@pytest.mark.parametrize('key', list(MUTATIONS))
def test_a_mutated_family_fails_its_cheapest_claim(key, mutated, monkeypatch):
    monkeypatch.setenv('IN_TEST', '1')
    assert _verdicts([FAST[key]]) == {FAST[key]: 'pass'}
    mutated(key)
    assert _verdicts([FAST[key]]) == {FAST[key]: 'fail'}


def _measurements():
    "What the linear-attention rows measure, at small sizes: capacity N*, a head grid cell's errors, per-head crosstalk."
    from pavlovattn.pages.capacity import capacity
    from pavlovattn.pages.heads import head_cell
    from pavlovattn.pages.propagation import head_errors
    g = lambda s: torch.Generator().manual_seed(s)
    return dict(n_star=capacity(64, 'accurate', 'hebbian', draws=16)['n_star'],
                heads=head_cell(2, 16, 48, draws=8, generator=g(1))['rel_l2'],
                crosstalk=head_errors(24, 16, 4, draws=64, generator=g(2)))


def test_the_linear_attention_rows_measure_the_family(mutated):
    "The five rows that once built their state with their own sum (capacity, head grid, error propagation) now run the family's update."
    before = _measurements()
    mutated(('hebbian', 'writes the error, as the delta rule'))
    after = _measurements()
    assert after['n_star'] != before['n_star'], (before['n_star'], after['n_star'])
    for k in ('heads', 'crosstalk'):
        assert not torch.allclose(after[k], before[k], rtol=1e-3), k


_RUN = """
import json, sys, importlib.util
spec = importlib.util.spec_from_file_location('tm', sys.argv[1]); tm = importlib.util.module_from_spec(spec); spec.loader.exec_module(tm)
from pavlovattn.model import families as F
from pavlovattn.base.registry import run_claims
key = tuple(json.loads(sys.argv[2]))
if key != ('none', ''):
    mutant = F.FAMILIES[key[0]] = tm.MUTATIONS[key](F.FAMILIES[key[0]]); register = F.register
    F.register = lambda fam: fam if fam is mutant else register(fam)
    if key in tm.SWAPPED: F.reference = tm._swap_reference(mutant)
print(json.dumps({r['id']: r['check'] for r in run_claims(tm.MUST_FLIP[tuple(json.loads(sys.argv[3]))], progress=False)[0]}))
"""

def _fresh(key, ids_of):
    "The claims of MUST_FLIP[ids_of] run in a fresh process with `key` applied (('none', ''): unmutated): pages cache what they measured per process."
    import json, os, subprocess, sys
    r = subprocess.run([sys.executable, '-c', _RUN, __file__, json.dumps(key), json.dumps(ids_of)], capture_output=True, text=True,
                       env=dict(os.environ, IN_TEST='1'), timeout=1200)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize('key', list(MUTATIONS))
def test_a_mutated_family_flips_every_claim_that_can_see_it(key):
    before = _fresh(('none', ''), key)
    assert set(before.values()) == {'pass'}, before
    after = _fresh(key, key)
    assert all(v == 'fail' for v in after.values()), {i: v for i, v in after.items() if v != 'fail'}
