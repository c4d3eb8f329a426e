"""Stacked circuits through `simulate` (issue 48): a one-layer stack is its family bit for bit, randomised orders through a
stack equal a plain per-subject loop written here (numpy matrices, no package code), a stack's refusals are one line."""
import warnings
import numpy as np
import pytest
import torch
from pavlovattn.design.designs import simulate, compare, design_rules
from pavlovattn.pages.stacked import stack, parse_stack, stacked_run

RANDOM = '!6A+/6B-/3AB+ | 4#A | !5C>A/5A>B/4B+ | 2#C | 1#B'   # random phases, calmr periods, probes between

@pytest.mark.parametrize('rule', [r for r in design_rules() if r != 'vhw'])
def test_a_one_layer_stack_is_its_family_bit_for_bit(rule):
    "Both wirings of one layer run every step as `simulate` runs the family: every cue's mean, sd and per-subject strengths, and the probes, identical."
    kw = dict(beta=0.2, subjects=12, seed=3, per_subject=True, dialect='calmr')
    a = simulate(RANDOM, rule=rule, **kw).runs['group']
    for w in ('chain', 'bootstrap'):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            b = simulate(RANDOM, rule=stack(rule, w), **kw).runs['group']
        assert torch.equal(a['order'], b['order'])
        for k in ('mean', 'sd', 'V') + (('probe_mean', 'pred_sum') if rule != 'softmax' else ()):
            assert torch.equal(a[k], b[k]), (rule, w, k)
        if rule == 'softmax':   # the table path sums softmax's predictions in its own order (summarize): equal to 1e-14, the read-outs bit for bit
            assert float((a['pred_sum'] - b['pred_sum']).abs().max()) < 1e-14

def _loop(steps, first, cues, wiring, rules, rates, beta, lam):
    "One subject through a stack of delta/hebbian layers, written with numpy matrices: each step's response before its write, every cue's after it."
    C, L = len(cues), len(rules)
    S = [np.zeros((C if wiring == 'chain' and l < L - 1 else 1, C)) for l in range(L)]
    key = lambda t: np.array([float(c in t.cues) for c in cues])
    def write(l, k, v, b):
        S[l] += b * np.outer(v - S[l] @ k if rules[l] == 'delta' else v, k)
    def respond(k):
        if wiring == 'bootstrap': return sum(float((S[l] @ k)[0]) for l in range(L))
        q = k
        for l in range(L): y = S[l] @ q; q = k + y
        return float(y[0])
    resp, V = [], []
    for i, t in enumerate(steps):
        k, p = key(t), None if first[i] else key(steps[i - 1])
        u, b = (lam if t.outcome == '+' else 0.0), (0.0 if t.probe else beta)
        pre = [S[l] @ k for l in range(L)]
        resp.append(respond(k))
        if wiring == 'chain':
            for l in range(L - 1):
                if p is not None: write(l, p, k, b * rates[l])
            write(L - 1, k, np.array([u]), b * rates[L - 1])
        else:
            write(0, k, np.array([u]), b * rates[0])
            for l in range(1, L):
                if p is not None: write(l, p, np.array([u + pre[l - 1][0]]), b * rates[l])
        V.append([respond(np.eye(C)[c]) for c in range(C)])
    return np.array(resp), np.array(V)

@pytest.mark.parametrize('wiring,rules', [('chain', ('delta', 'hebbian', 'delta')), ('bootstrap', ('delta', 'delta', 'hebbian'))])
def test_randomised_orders_through_a_stack_equal_a_per_subject_loop(wiring, rules):
    "Each subject's own random order (calmr periods kept together), three layers: every cue's strength after every step and the probes' responses equal the numpy loop to 1e-12."
    st, rates, beta, lam = stack(rules, wiring, rates=(1.0, 0.5, 2.0)), (1.0, 0.5, 2.0), 0.15, 0.9
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        res = simulate(RANDOM, rule=st, beta=beta, lam=lam, subjects=8, seed=5, dialect='calmr', per_subject=True)
    r, g = res.runs['group'], res.design.groups[0]
    first = [j == 0 for ph in g.phases for t in ph.trials for j in range(len(t.steps))]
    assert len({tuple(o.tolist()) for o in r['order']}) == 8                  # eight different orders
    for s in range(8):
        idx = r['order'][s].tolist()
        resp, V = _loop([g.trial_types[i] for i in idx], [first[i] for i in idx], res.cues, wiring, rules, rates, beta, lam)
        assert np.abs(r['V'][s, 1:].numpy() - V).max() < 1e-12
        ps = np.zeros(len(g.trial_types)); np.add.at(ps, idx, resp)
        assert np.abs(r['pred_sum'][s].numpy() - ps).max() < 1e-12

def test_stacks_through_compare_and_by_spec_string():
    "`compare` runs families and stacks side by side (a stack keyed by its name); a spec string is read like a family name; thousands of subjects run."
    d = 'g: !20B+/20C- | !10A>B/10B+ | 1#A'      # A>B trials among B+ trials: each subject's order matters
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        out = compare(d, rules=('delta', 'stack:delta>delta:chain', stack(('delta', 'delta'), 'bootstrap')), beta=0.3, gamma=0.9, subjects=2000, dialect='calmr')
    assert list(out) == ['delta', 'stack:delta>delta:chain', 'stack:delta>delta:bootstrap']
    assert out['delta'].probes['g'][0]['mean'] == 0.0                             # a single state: no second-order conditioning
    assert all(out[n].probes['g'][0]['mean'] > 0.05 and out[n].probes['g'][0]['sd'] > 0 for n in list(out)[1:]) and out['stack:delta>delta:chain'].params['stack'] == 'stack:delta>delta:chain'

@pytest.mark.parametrize('kw,msg', [(dict(gamma=0.9), 'gamma=0.9 is not taken by a stack'), (dict(algorithm='numba'), 'algorithm'),
                                    (dict(design='2A(US_a)/2B(US_b) | 1#A'), 'learns one US'), (dict(design='2{A 0-2, US 3} | #A', dialect='native'), 'is timed')])
def test_a_stack_refuses_what_it_does_not_take_in_one_line(kw, msg):
    design = kw.pop('design', '2A>B | 1#A')
    kw.setdefault('dialect', 'calmr')
    with pytest.raises(ValueError, match=msg) as e: simulate(design, rule=stack(('delta', 'delta')), **kw)
    assert '\n' not in str(e.value)
    with pytest.raises(ValueError, match='stack:FAMILY>FAMILY'): parse_stack('stack:')
