"""Acquisition/extinction closed forms (pavlovattn.pages.acquisition) at the edges of their parameter ranges, against the compiler and against a hand-built `recur` sweep (an independent oracle of the compiler)."""
import math
import pytest
import torch
from pavlovattn.model.core import RULES, FAMILIES, recur
from pavlovattn.pages.acquisition import extinction_curve, acq_ext_curve, simulate_acq_ext

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

_UPDATE = {   # each family's matrix update on one trial (key k as a column, value v, d_v = 1), written out independently of core
    'hebbian': lambda S, k, v, b, g, I: S + b * v * k.T,
    'decay': lambda S, k, v, b, g, I: g * S + b * v * k.T,
    'delta': lambda S, k, v, b, g, I: S + b * (v - S @ k) @ k.T,
    'gated-delta': lambda S, k, v, b, g, I: g * S @ (I - b * k @ k.T) + b * v * k.T,
    'channel-gate': lambda S, k, v, b, g, I: S @ (g * I) @ (I - b * k @ k.T) + b * v * k.T,   # the same gate on both channels
}

def _sequential(rule, n_acq, n_ext, lam, k2, beta, gamma, other=False):
    "A plain per-trial loop of the family's update on a 2-channel state: A's read-out before trial 1 and after every trial."
    kA = torch.tensor([[math.sqrt(k2)], [0.0]], dtype=torch.float64); kB = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    S = torch.zeros(1, 2, dtype=torch.float64); I = torch.eye(2, dtype=torch.float64); out = [0.0]
    for t in range(n_acq + n_ext):
        k = kB if (other and t >= n_acq) else kA
        v = lam if t < n_acq else 0.0                                  # lambda = 0 on every non-reinforced trial
        S = _UPDATE[rule](S, k, v, beta, gamma, I)
        out.append(float(S @ kA))
    return torch.tensor(out, dtype=torch.float64)

@pytest.mark.parametrize('rule', [r for r in RULES if r in _UPDATE])
@pytest.mark.parametrize('other', [False, True])
def test_extinction_against_sequential_recurrence(rule, other):
    "Extinction (A- trials, or B- trials of an orthogonal cue) against the sequential recurrence with lambda = 0, not against its own formula."
    for beta, gamma, k2 in ((0.4, 0.8, 0.7), (0.9, 0.95, 1.5), (0.2, 1.0, 1.0)):
        seq = _sequential(rule, 6, 12, 0.6, k2, beta, gamma, other)
        x_acq = float(seq[6])
        cf = extinction_curve(rule, torch.arange(13), x_acq=x_acq, k2=k2, beta=beta, gamma=gamma, other=other)
        assert (seq[6:] - cf).abs().max() < 1e-12, (rule, other, beta, gamma, k2)
        assert (seq - acq_ext_curve(rule, 6, 12, lam=0.6, k2=k2, beta=beta, gamma=gamma, other=other)).abs().max() < 1e-12

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


def _recur_sweep(rule, n_acq, n_ext, lam=1.0, k2=1.0, beta=1.0, gamma=None, other=False, dtype=torch.float64):
    "The page's former sweep, kept as an oracle: settings in the batch, keys sqrt(k2) e_1 (A) and e_2 (B) built by hand, A's key as the query."
    T = n_acq + n_ext; kw = dict(dtype=dtype)
    B = max([torch.as_tensor(p).numel() for p in (k2, beta, gamma) if p is not None] + [1])
    col = lambda p: torch.as_tensor(p, **kw).reshape(-1).expand(B)
    k = torch.zeros(B, T, 1, 2, **kw)
    k[:, :n_acq, 0, 0] = col(k2).sqrt()[:, None]
    if other: k[:, n_acq:, 0, 1] = 1.0
    else: k[:, n_acq:, 0, 0] = col(k2).sqrt()[:, None]
    v = torch.zeros(B, T, 1, 1, **kw); v[:, :n_acq] = lam
    q = k[:, :1].expand(B, T, 1, 2)
    g = None if gamma is None or 'gamma' not in FAMILIES[rule].params else col(gamma)[:, None, None]
    if g is not None and FAMILIES[rule].gate == 'channel': g = g[..., None]
    out = recur(k, v, q, rule=rule, beta=col(beta)[:, None, None], gamma=g).out[:, :, 0, 0]
    return torch.cat([torch.zeros(B, 1, **kw), out], 1)

@pytest.mark.parametrize('rule', RULES)
def test_compiler_equals_hand_built_sweep(rule):
    "designs.simulate (through simulate_acq_ext) equals the hand-built batched recur call to 1e-12 in float64, on the claim's grid and the edges."
    g = torch.cartesian_prod(*(torch.tensor(a, dtype=torch.float64) for a in ((0.05, 0.3, 0.9), (0.8, 0.95, 1.0), (0.5, 1.0, 1.5))))
    g = torch.cat([g[g[:, 0] * g[:, 2] <= 2], torch.tensor(EDGES, dtype=torch.float64)[:, [0, 1, 2]]])
    for other in (False, True):
        kw = dict(lam=0.8, k2=g[:, 2], beta=g[:, 0], gamma=g[:, 1], other=other)
        assert (simulate_acq_ext(rule, 12, 9, **kw) - _recur_sweep(rule, 12, 9, **kw)).abs().max() < 1e-12, (rule, other)
