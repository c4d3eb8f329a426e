"""Random trial orders (nbs/04a_random_orders.ipynb): the exact mean recursion and its limits, the relative-validity pitfall, i.i.d. subjects against the exact mean."""
import math
import pytest
import torch
from pavlovattn.pages.competition import run_design
from pavlovattn.pages.random_orders import (mean_recursion, mean_asymptote, delta_p, contingency_types, partial_reinforcement,
                                      partial_reinforcement_moments, relative_validity_gap, relative_validity_permuted_gap)

def test_mean_recursion_limits():
    V, cues = mean_asymptote(['A+', 'AX-'], [1, 1])
    assert cues == ['A', 'X'] and torch.allclose(V, torch.tensor([1., -1.], dtype=torch.float64), atol=1e-12)
    ty, pr = contingency_types(0.7, 0.3, 0.4)
    V, _ = mean_asymptote(ty, pr, salience={'A': 0.5})
    assert torch.allclose(V, torch.tensor(delta_p(0.7, 0.3), dtype=torch.float64), atol=1e-12)
    m1, _ = partial_reinforcement_moments(200, 0.3, beta_plus=0.2, beta_minus=0.05)
    assert torch.allclose(m1, partial_reinforcement(torch.arange(201), 0.3, beta_plus=0.2, beta_minus=0.05), atol=1e-12)
    for rule in ('softmax', 'trace', 'vhw', 'normalized'):
        with pytest.raises(ValueError, match='affine map'): mean_recursion(['A+'], [1], 5, rule=rule)

def test_relative_validity_pitfall():
    assert relative_validity_gap(150, salience={'X': 0.3}).abs().max() < 1e-12
    assert abs(relative_validity_permuted_gap(4)) < 1e-12
    assert relative_validity_gap(150, beta_minus=0.05)[-1] > 0.05

def test_iid_mean_within_4_se():
    r = run_design('!20A+/20AX-/20B+/20BX- | #A/#X', subjects=10_000, sampling='iid', seed=3)['group']
    ex, cues = mean_recursion(['A+', 'AX-', 'B+', 'BX-'], [1, 1, 1, 1], 80)
    for c in 'AX':
        x = r[c]; se = float(x.std()) / math.sqrt(len(x))
        assert abs(float(x.mean()) - float(ex[-1, cues.index(c)])) <= 4 * se
