"""Exhaustive checks of pavlovattn.pages.capacity: the worst-case bound on many items, cached sequential writes vs one pass of
`recur`, nesting and monotonicity, the chunked top-1 against a plain argmax, the crossing estimator, Gaussian-key moments."""
import math
import pytest
import torch
from pavlovattn.model.core import recur
from pavlovattn.pages.capacity import (PROTOCOL, PairMemory, random_pairs, row_sum_coherence, worst_case_check, top1, capacity,
                                 _crossing, crosstalk_error, crosstalk_moments, sphere_abs_dot, theory_nstar)

@pytest.mark.slow   # the bound holds by construction (triangle inequality); 6 x 7 settings x 512 draws: exhaustive
def test_worst_case_bound_every_item():
    "|r_i - v_i| <= R_i on every item of many (d, N) settings, float64; decoding exact wherever the premises hold."
    out = worst_case_check(ds=(4, 8, 16, 32, 128, 512), ns=(2, 3, 5, 8, 16, 32, 64), draws=512, seed=7)
    assert out['violations'] == 0 and out['max_excess'] <= 1e-12
    assert out['premise_draws'] > 100 and out['premise_decode_errors'] == 0

@pytest.mark.parametrize('rule', ['delta', 'decay', 'hebbian'])
def test_cached_writes_equal_one_pass(rule):
    "Reads in a bisection-like order (continuing from cached prefixes) give the state of one pass of `recur`."
    g = torch.Generator().manual_seed(0)
    m = PairMemory(24, 5, rule, seed=1, dtype=torch.float64)
    order = torch.randint(1, 120, (15,), generator=g).tolist()
    for n in order:
        S = m.state(n)
        ref = recur(m.K[:, :n, None], m.V[:, :n, None], rule=rule, **PROTOCOL['rules'][rule]).state
        torch.testing.assert_close(S, ref, atol=1e-12, rtol=0)

def test_nested_and_monotone_coherence():
    "Draws are nested, so the per-draw max_i R_i never decreases with N."
    m = PairMemory(32, 64, 'hebbian', seed=3, dtype=torch.float64, values=False)
    m.ensure(60)
    mx = torch.stack([row_sum_coherence(m.K[:, :n]).amax(-1) for n in range(2, 61)])
    assert (mx[1:] >= mx[:-1] - 1e-15).all()

def test_top1_matches_plain_argmax():
    g = torch.Generator().manual_seed(5)
    for n, d in ((7, 4), (50, 8), (300, 16)):
        r, V = torch.randn(3, n, d, generator=g), torch.randn(3, n, d, generator=g)
        ref = torch.einsum('rid,rmd->rim', r, V).argmax(-1) == torch.arange(n)
        for chunk in (1, 97, None):
            assert torch.equal(top1(r, V, chunk=chunk), ref)

@pytest.mark.parametrize('criterion', ['accurate', 'accurate-q', 'identification', 'worst'])
def test_crossing_between_nstar_and_next(criterion):
    "The crossing lies in [N*, N*+1] and the identity resample reproduces it."
    res = capacity(16, criterion, draws=6, dtype=torch.float64 if criterion == 'worst' else torch.float32)
    assert res['n_star'] <= res['crossing'] <= res['n_star'] + 1
    same = torch.arange(6)[None].expand(3, 6)
    torch.testing.assert_close(_crossing(res, same), torch.full((3,), res['crossing'], dtype=torch.float64))

def test_gaussian_keys_error_floor():
    "Gaussian keys N(0, I/d): E|r - v|^2 = 2/d + (N-1)/d (the signal-norm floor of the sensitivity study), within 4 s.e."
    d, n, R = 32, 16, 2048
    k, v = random_pairs(R, n, d, keys='gaussian', generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    r = torch.einsum('rjv,rjk,rik->riv', v, k, k)
    e = ((r - v) ** 2).sum(-1).mean(-1)
    z = (float(e.mean()) - (2 / d + (n - 1) / d)) / float(e.std() / math.sqrt(R))
    assert abs(z) < 4, z

def test_average_case_large_n():
    "E|r - v|^2 = (N-1)/d also far beyond capacity (N = 8d)."
    for x in crosstalk_error(16, ns=(128,), draws=512, seed=11):
        assert abs(x['z']) < 4, x

def test_theory_values_against_independent_facts():
    "The theory curves checked against known values and simulation, not against the formulas they are written with."
    assert sphere_abs_dot(2) == pytest.approx(2 / math.pi, rel=1e-12)      # |cos| of a uniform angle
    assert sphere_abs_dot(3) == pytest.approx(0.5, rel=1e-12)              # the cosine is uniform on [-1, 1] in R^3
    m = crosstalk_moments(64, pairs=100_000, seed=1)
    assert abs(m['abs']['z']) < 4 and abs(m['c2']['z']) < 4, m
    d = 64; n = math.floor(theory_nstar('accurate', d))                     # accurate: mean relative error crosses eps^2 = 0.3 there
    below, above = crosstalk_error(d, ns=(n - 1, n + 2), draws=2048, seed=5)
    assert below['ci'][1] < PROTOCOL['accurate']['eps2'] < above['ci'][0], (below, above)
    n = theory_nstar('identification', 128)                                # the solver returns the fixed point it claims to
    assert n * 4 * math.log(n) == pytest.approx(128 ** 2, rel=1e-9)
