"""Acquisition/extinction closed forms (pavlovattn.acquisition) at the edges of their parameter ranges, against recur."""
import math
import pytest
import torch
from pavlovattn.core import RULES
from pavlovattn.acquisition import extinction_curve, acq_ext_curve, simulate_acq_ext

EDGES = [  # (beta, gamma, k2): no decay, full decay, one-shot delta learning, alternating delta errors, zero rate
    (0.3, 1.0, 1.0), (0.3, 0.0, 1.0), (1.0, 0.9, 1.0), (1.0, 0.9, 2.0), (0.0, 0.9, 1.0), (0.7, 0.5, 0.3)]

@pytest.mark.parametrize('rule', RULES)
@pytest.mark.parametrize('other', [False, True])
def test_edges_match_simulation(rule, other):
    g = torch.tensor(EDGES, dtype=torch.float64)
    sim = simulate_acq_ext(rule, 7, 9, lam=0.6, k2=g[:, 2], beta=g[:, 0], gamma=g[:, 1], other=other)
    for i, (b, gm, k2) in enumerate(EDGES):
        cf = acq_ext_curve(rule, 7, 9, lam=0.6, k2=k2, beta=b, gamma=gm, other=other)
        assert (sim[i] - cf).abs().max() < 1e-12, (rule, other, EDGES[i])

@pytest.mark.parametrize('rule', [r for r in RULES if r != 'softmax'])
def test_extinction_is_acquisition_with_zero_us(rule):
    from pavlovattn.core import acquisition_curve
    n = torch.arange(12)
    assert torch.equal(extinction_curve(rule, n, x_acq=0.7, beta=0.4, gamma=0.8),
                       acquisition_curve(rule, n, lam=0.0, x0=0.7, beta=0.4, gamma=0.8))

def test_softmax_dilution_limit():
    "With a large write weight the read-out is the fraction of reinforced stored trials."
    x = extinction_curve('softmax', 30, n_acq=10, beta=1e9, lam=2.0)
    assert abs(float(x) - 2.0 * 10 / 40) < 1e-8

def test_bad_input():
    with pytest.raises(ValueError, match='valid rules'): extinction_curve('attention', 3, x_acq=1.0)
    with pytest.raises(ValueError, match='give x_acq'): extinction_curve('delta', 3)
    with pytest.raises(ValueError, match='depends on n_acq'): extinction_curve('softmax', 3)

def test_float32_close():
    for rule in RULES:
        s32 = simulate_acq_ext(rule, 20, 20, beta=0.3, gamma=0.9, dtype=torch.float32)[0].double()
        cf = acq_ext_curve(rule, 20, 20, beta=0.3, gamma=0.9)
        assert ((s32 - cf).abs() / cf.abs().clamp_min(1)).max() < 1e-5, rule
