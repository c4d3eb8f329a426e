"""A long design runs a window of steps at a time (issue 49 item 9) with the same answers; and two of issue 51 item 6's
smaller items: a string where simulate wants a number is refused in one line naming the parameter, and recur computes mixed
float32/float64 inputs in float64 (it returned float32 silently)."""
import math
import pytest, torch
from pavlovattn.design import designs
from pavlovattn.design.designs import simulate, compare, closed_form
from pavlovattn.model.core import recur

def test_windows_give_the_closed_form_and_the_unwindowed_run(monkeypatch):
    "With windows of a few dozen steps, a fixed-order design equals its closed form at 1e-12, and a randomised one equals the run in one window at 1e-12."
    fixed, mixed = '300A+ | 200AB- | #A | #B', '!300A+/300AB- | !100B+/50A- | #A'
    whole = simulate(mixed, subjects=50, beta=0.2)
    monkeypatch.setattr(designs, 'WINDOW_BYTES', 2**15)
    assert designs._window(50, 951, 2) < 100                                 # many windows
    cf = closed_form(fixed, beta=0.2)['group']
    got = {p['cues']: p['mean'] for p in simulate(fixed, subjects=50, beta=0.2).probes['group']}
    assert max(abs(got[c] - cf[c]) for c in cf) < 1e-12, (got, cf)
    win = simulate(mixed, subjects=50, beta=0.2)
    for key in ('mean', 'sd', 'probe_mean'):
        assert (win.runs['group'][key] - whole.runs['group'][key]).abs().max() < 1e-12, key

@pytest.mark.parametrize('kw, msg', [(dict(beta='0.1'), "beta must be a number; got '0.1' (a string)"),
                                     (dict(beta={'+': 0.1, '-': '0.2'}), "beta must be a number; got '0.2' (a string)"),
                                     (dict(lam='1'), "lam must be a number; got '1' (a string)"),
                                     (dict(rule='gated-delta', gamma='0.9'), "gamma must be a number; got '0.9' (a string)")])
def test_a_string_for_a_number_is_refused_naming_the_parameter(kw, msg):
    with pytest.raises(ValueError) as e: simulate('10A+', **kw)
    assert str(e.value) == msg

def test_recur_computes_float32_keys_and_float64_values_in_float64():
    gen = torch.Generator().manual_seed(0)
    k, v = torch.rand(2, 40, 1, 3, generator=gen), torch.rand(2, 40, 1, 1, generator=gen, dtype=torch.float64)
    for rule in ('delta', 'hebbian'):
        mixed, wide = recur(k, v, rule=rule, beta=0.3), recur(k.double(), v, rule=rule, beta=0.3)
        assert mixed.pred.dtype == mixed.out.dtype == mixed.state.dtype == torch.float64
        assert (mixed.pred - wide.pred).abs().max() == 0 and (mixed.state - wide.state).abs().max() == 0
    ix = torch.tensor([[0, 1, 0, 2]])                                          # the index form too
    assert recur(k[0, :3], v[0, :3], index=ix, beta=0.3).pred.dtype == torch.float64

def test_compare_reports_progress_over_every_family():
    seen = []
    compare('!20A+/20B- | #A', rules=('delta', 'hebbian'), subjects=5, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 2 * 5 * 41
