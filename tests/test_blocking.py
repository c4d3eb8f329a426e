"""Kamin blocking (nbs/03_blocking.ipynb): exhaustive closed form vs simulation checks, beyond the page's grid."""
import json, math, subprocess, sys
import pytest
import torch
from pavlovattn.model.core import RULES
from pavlovattn.design.designs import simulate
from pavlovattn.pages.blocking import (blocking_general, simulate_blocking, blocking_onehot, blocking_normalized, blocking_overlap,
                                 blocking_gated, blocking_contiguity, blocking_keys, blocking_closed_form, blocking_design,
                                 blocking_grid, Blocking)
from warm_cli import cli      # the command from a warm start: a process per call, forked after the imports

F64 = torch.float64


def test_full_grid_float64():
    "The full-size C2 grid (longer phases, one more decay): every family, every keying, float64 within 1e-12."
    g = blocking_grid(full=True)
    assert len(g) > 5000
    assert g.err_general.max() < 1e-12, g.sort_values('err_general').tail(3)
    assert g.err_special.max() < 1e-12
    assert g.special.notna().sum() > 2000


def test_float32_relative_round_off():
    "float32 simulation vs float64 closed form: round-off relative to the largest strength of each family."
    g = blocking_grid(dtype=torch.float32)
    for rule, d in g.groupby('rule'):
        assert d.err_general.max() / max(1.0, d.general.abs().max()) < 1e-5, rule


@pytest.mark.parametrize('rule', RULES)
def test_random_keys_every_family(rule):
    "Random (non-unit, non-orthogonal) keys, a compound that is not a + b, random lengths, rates inside the delta bound."
    gen = torch.Generator().manual_seed(7)
    N, dk = 400, 6
    a, b = torch.randn(N, dk, generator=gen, dtype=F64), torch.randn(N, dk, generator=gen, dtype=F64)
    c = a + b + 0.5 * torch.randn(N, dk, generator=gen, dtype=F64)
    n1, n2 = torch.randint(0, 60, (N,), generator=gen), torch.randint(0, 60, (N,), generator=gen)
    kmax = torch.maximum((a * a).sum(-1), (c * c).sum(-1))
    beta = torch.rand(N, generator=gen, dtype=F64) * 2 / kmax
    gamma = 0.5 + 0.5 * torch.rand(N, generator=gen, dtype=F64)
    sim = simulate_blocking(rule, a, b, c, n1, n2, beta=beta, gamma=gamma)
    cf = blocking_general(a, b, c, n1, n2, beta=beta, gamma=gamma, rule=rule)
    scale = cf.abs().clamp_min(1.0)
    assert ((sim - cf).abs() / scale).max() < 1e-12


def test_special_cases_are_the_general_form():
    "Each special case (b)-(f) is the general box (a) with the inner products substituted: random parameters."
    gen = torch.Generator().manual_seed(11)
    M = 2000
    n1, n2 = torch.randint(0, 80, (M,), generator=gen), torch.randint(0, 80, (M,), generator=gen)
    u = lambda lo, hi: lo + (hi - lo) * torch.rand(M, generator=gen, dtype=F64)
    beta, lam, gam = u(0.001, 0.999), u(0.2, 3.0), u(0.3, 1.0)
    rho, rc = u(-0.45, 0.9), u(-0.45, 0.45)
    e = torch.eye(3, dtype=F64)
    close = lambda x, y: torch.testing.assert_close(x, y, rtol=0, atol=1e-12)
    aA, aB = u(0.1, 1.0), u(0.1, 1.0)
    bs = beta / (aA + aB) * 2 * 0.999                                      # beta (alpha_A + alpha_B) < 2
    bo = blocking_onehot(n1, n2, bs, lam, aA, aB)
    for i in range(40):                                                    # salience dicts hold numbers: one setting at a time
        sal = {'A': float(aA[i]), 'B': float(aB[i])}
        g = blocking_closed_form('delta', n1[i], n2[i], bs[i], lam=lam[i], salience=sal)
        close(g.exp, bo.exp[i]); close(g.ctrl, bo.ctrl[i])
    bn = blocking_normalized(n1, n2, beta, lam)
    gn = blocking_closed_form('delta', n1, n2, beta, lam=lam, normalize=True)
    close(bn.exp, gn.exp); close(bn.ctrl, gn.ctrl)
    b_ = beta / (1 + rho)
    bv = blocking_overlap(n1, n2, b_, rho, lam, rc)
    gv = blocking_closed_form('delta', n1, n2, b_, lam=lam, overlap=rho, overlap_c=rc)
    close(bv.exp, gv.exp); close(bv.ctrl, gv.ctrl)
    bd = blocking_gated(n1, n2, beta, gam, lam)
    for rule in ('gated-delta', 'channel-gate'):
        gd = blocking_closed_form(rule, n1, n2, beta, gamma=gam, lam=lam)
        close(bd.exp, gd.exp); close(bd.ctrl, gd.ctrl)
    for rule in ('hebbian', 'decay', 'softmax'):
        bc = blocking_contiguity(rule, n1, n2, beta, gam, lam, rho, rc)
        gc = blocking_closed_form(rule, n1, n2, beta, gamma=gam, lam=lam, overlap=rho, overlap_c=rc)
        torch.testing.assert_close(bc.exp, gc.exp, rtol=1e-13, atol=1e-12)
        torch.testing.assert_close(bc.ctrl, gc.ctrl, rtol=1e-13, atol=1e-12)


def test_design_language_grid():
    "The design strings under `designs.simulate` against `blocking_closed_form`, every variant."
    variants = [('delta', {}, {}), ('delta', dict(salience={'A': .6, 'B': .9, 'C': .3}), {}),
                ('delta', dict(normalize=True), {}), ('delta', dict(overlap=-0.3), dict(keys='random', dk=4)),
                ('delta', dict(overlap=0.5), dict(keys='random', dk=7)), ('gated-delta', dict(gamma=0.85), {}),
                ('channel-gate', dict(gamma=0.95), {}), ('hebbian', {}, {}), ('decay', dict(gamma=0.7), {}),
                ('softmax', {}, {}), ('hebbian', dict(overlap=0.4), dict(keys='random', dk=3)),
                ('softmax', dict(overlap=0.4), dict(keys='random', dk=3)), ('gated-delta', dict(gamma=0.9, normalize=True), {})]
    worst = 0.0
    for rule, kw, extra in variants:
        k = blocking_keys(**{x: v for x, v in kw.items() if x != 'gamma'})
        kmax = max(float((k[X] * k[X]).sum()) for X in ('A', 'C', 'AB'))
        for f in (0.1, 0.7, 1.3, 1.9):
            for n1, n2 in ((1, 1), (7, 3), (30, 30)):
                r = simulate(blocking_design(n1, n2), rule=rule, beta=f / kmax, **kw, **extra).probes
                cf = blocking_closed_form(rule, n1, n2, f / kmax, **kw)
                worst = max(worst, abs(r['exp'][0]['mean'] - float(cf.exp)), abs(r['ctrl'][0]['mean'] - float(cf.ctrl)))
    assert worst < 1e-12, worst


def test_contiguity_ratio_exactly_one_and_delta_below():
    for rule in ('hebbian', 'decay', 'softmax'):
        for beta in (0.01, 0.3, 0.9):
            p = simulate(blocking_design(17, 9), rule=rule, beta=beta).probes
            assert p['exp'][0]['mean'] == p['ctrl'][0]['mean'], rule
    for rule in ('delta', 'gated-delta', 'channel-gate'):
        for beta in (0.01, 0.3, 0.9):
            p = simulate(blocking_design(17, 9), rule=rule, beta=beta, gamma=0.9 if rule != 'delta' else None).probes
            assert p['exp'][0]['mean'] < p['ctrl'][0]['mean'], rule


def test_limits_and_errors():
    torch.testing.assert_close(blocking_normalized(10**4, 50, 0.3).ratio, torch.tensor(1 - 2**-0.5, dtype=F64), rtol=0, atol=1e-12)
    bl = blocking_overlap(10**4, 10**4, 0.3, 0.35, rho_c=0.2)
    torch.testing.assert_close(bl.ratio, torch.tensor(0.35, dtype=F64), rtol=0, atol=1e-12)
    assert isinstance(blocking_onehot(1, 1, 0.1), Blocking)
    with pytest.raises(ValueError, match='not realisable'): blocking_keys(overlap=0.0, overlap_c=0.9)
    with pytest.raises(ValueError, match='families without error correction'): blocking_contiguity('delta', 1, 1, 0.1)
    with pytest.raises(ValueError, match='unknown rule'): blocking_general([1.], [1.], [1.], 1, 1, rule='attention')


def test_cli_json_matches_closed_form():
    r = cli('run', blocking_design(10, 10), '--rule', 'delta', '--beta', '0.2', '--format', 'json', timeout=300)
    assert r.returncode == 0, r.stderr
    g = json.loads(r.stdout)['groups']
    cf = blocking_closed_form('delta', 10, 10, 0.2)
    assert abs(g['exp']['probes'][0]['mean'] - float(cf.exp)) < 1e-12
    assert abs(g['ctrl']['probes'][0]['mean'] - float(cf.ctrl)) < 1e-12


def test_claims_pass():
    from pavlovattn.pages.blocking import _claim_closed_form, _claim_delta_present, _claim_contiguity_absent, _claim_normalized
    for f in (_claim_closed_form, _claim_delta_present, _claim_contiguity_absent, _claim_normalized):
        v = f()
        assert v.passed, (f.__name__, v.measured)
    d = _claim_closed_form().data
    assert d['max_err_float64'] < 1e-12 and d['max_err_float32'] > 0


@pytest.mark.parametrize('rule', RULES)
def test_hand_built_harness_is_an_oracle_of_the_compiler(rule):
    "`simulate_blocking` builds its trial tensors by hand (any key vectors, settings in the batch); on the designs it shares with the design language (one-hot keys, saliences, normalised compounds) it equals `designs.simulate` to 1e-12."
    fam_gamma = 'gamma' in __import__('pavlovattn.model.families', fromlist=['FAMILIES']).FAMILIES[rule].params
    for kw in ({}, dict(salience={'A': 0.7, 'B': 0.4, 'C': 0.5}), dict(normalize=True)):
        k = blocking_keys(**kw)
        for beta, gamma, n1, n2 in ((0.3, 0.9, 7, 5), (0.9, 0.8, 1, 12), (0.05, 1.0, 20, 20)):
            g = dict(gamma=gamma) if fam_gamma else {}
            p = simulate(blocking_design(n1, n2), rule=rule, beta=beta, **kw, **g).probes
            h = simulate_blocking(rule, torch.stack([k['A'], k['C']]), k['B'], k['AB'], n1, n2, beta=beta, gamma=gamma if fam_gamma else None)
            assert abs(float(h[0]) - p['exp'][0]['mean']) < 1e-12 and abs(float(h[1]) - p['ctrl'][0]['mean']) < 1e-12, (rule, kw, beta)
