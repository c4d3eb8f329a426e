"""Spontaneous recovery (nbs/05_spontaneous_recovery.ipynb): the theorem over more seeds, the counterexample's closed form,
agreement with `designs.simulate`, and bad input."""
import math
import pytest
import torch
from pavlovattn.model.core import UnstableRateError, FAMILIES
from pavlovattn.pages.recovery import (check_no_recovery, channel_gate_counterexample, run_recovery, recovery_inputs,
                                 check_history_contrast, orthogonal_keys)
from pavlovattn.design.designs import simulate

@pytest.mark.parametrize('seed', [0, 1, 2])
def test_theorem_random_batches(seed):
    for rule, d in check_no_recovery(B=96, seed=100 * seed).items():
        assert d['max_err'] < 1e-12, (rule, d)
        assert d['max_excess'] <= 1e-12, (rule, d)

def test_theorem_float32_relative():
    for rule, d in check_no_recovery(B=64, dtype=torch.float32, seed=7).items():
        assert d['max_err'] / d['max_abs'] < 1e-4, (rule, d)

@pytest.mark.parametrize('alpha, n_ext, beta', [((0.8, 0.999), 4, 0.5), ((0.6, 0.99), 2, 0.3), ((0.9, 0.995), 6, 0.8)])
def test_channel_gate_rises_and_matches_closed_form(alpha, n_ext, beta):
    ce = channel_gate_counterexample(n_ext=n_ext, alpha=alpha, beta=beta)
    assert ce['closed_form_err'] < 1e-12
    assert ce['r_peak'] > ce['r_ext'] and ce['w_ext'][0] < ce['w_ext'][1]

def test_channel_gate_equal_gates_is_the_theorem():
    ce = channel_gate_counterexample(alpha=(0.9, 0.9), alpha_filler=0.9)
    assert abs(ce['r_test'] - 0.9**30 * ce['r_ext']) < 1e-12

@pytest.mark.parametrize('rule', ['hebbian', 'decay', 'delta', 'gated-delta', 'channel-gate'])
@pytest.mark.parametrize('filler', ['-', '+'])
def test_simulate_agrees_with_run_recovery(rule, filler):
    beta, gamma = 0.4, 0.93
    res = simulate(f'25A+ | 6A- | #A | 17B{filler} | #A', rule=rule, beta=beta, **FAMILIES[rule].kwargs(gamma=gamma))
    (p_ext, p_test), = res.probes.values()
    kA, kB = torch.eye(2, dtype=torch.float64)
    fam = FAMILIES[rule]
    g = None if 'gamma' not in fam.params else gamma if fam.gate != 'channel' else torch.tensor([gamma, gamma], dtype=torch.float64)
    rr = run_recovery(rule, kA, kB.expand(1, 17, 2), n_acq=25, n_ext=6, beta=beta, gamma=g,
                      ret_v=torch.full((1, 17, 1), 1.0 if filler == '+' else 0.0, dtype=torch.float64))
    assert abs(p_ext['mean'] - rr.r_ext.item()) < 1e-12 and abs(p_test['mean'] - rr.r_test.item()) < 1e-12
    a = 1.0 if fam.gate == 'none' else gamma**17
    assert abs(p_test['mean'] - a * p_ext['mean']) < 1e-12

def test_history_contrast_identity():
    for rule, d in check_history_contrast(B=64, seed=5).items():
        assert d['max_err'] < 1e-12 and d['max_abs_kappa'] <= 1 + 1e-12, (rule, d)

def test_orthogonal_keys():
    kA = torch.randn(8, 5, dtype=torch.float64)
    assert torch.einsum('bnd,bd->bn', orthogonal_keys(kA, 9), kA).abs().max() < 1e-13

def test_bad_input():
    kA = torch.tensor([1., 0.], dtype=torch.float64)
    with pytest.raises(ValueError, match='n_ret <= 3'):
        recovery_inputs(kA, torch.zeros(1, 3, 2, dtype=torch.float64), n_ret=4)
    with pytest.raises(UnstableRateError):
        run_recovery('delta', kA, torch.zeros(1, 3, 2, dtype=torch.float64), beta=2.5)
