"""Error propagation: the chained-network check passes on the network it was derived for and fails on one that violates it."""
import math
from pavlovattn.pages.propagation import chained_sweep, chained_verdict, chained_bound, network_mc

def test_chained_law_and_bounds_pass():
    v = chained_verdict(chained_sweep(draws=1000, seed=7))
    assert v.passed, v.measured
    assert max(abs(z) for z in v.data['z']) <= 4

def test_chained_check_fails_on_a_violating_network():
    "Read-outs amplified before they query the next layer: the propagation law (and the per-layer bound) is violated."
    v = chained_verdict(chained_sweep(draws=1000, seed=7, gain=1.1))
    assert not v.passed
    assert v.data['layers_z_fail']

def test_independent_layers_do_not_propagate():
    "The baseline's layers keep the single-head error sigma^2 at every depth, so the chained law fails there."
    n, dk = 16, 128
    th = chained_bound(n, dk, H=2, delta=1.0, L=8)['msq']
    assert math.isclose(th[0], (n - 1) / dk) and th[-1] > 2 * th[0]
    r = network_mc(n, dk, H=2, L=8, delta=1.0, dv=dk, draws=1000, seed=3)
    lr = r['layer_rate'].tolist()
    assert max(lr) - min(lr) < 0.01                    # flat in depth: nothing carries over
    c = network_mc(n, dk, H=2, L=8, delta=1.0, chained=True, draws=1000, seed=3)
    assert c['layer_rate'][-1] > c['layer_rate'][0] + 0.1
