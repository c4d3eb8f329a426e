"The trained rules page (issues 47, 48): the three trained claims end to end at the quick size, and the verdicts' rules on given numbers."
import math
import pytest
from pavlovattn.apps import rules
from pavlovattn.base.registry import CLAIMS
from pavlovattn.apps.cli import _trains

def test_the_trained_claims_run_end_to_end_at_the_quick_size(tmp_path, monkeypatch):
    "Quick size: untrained 16-wide models (a check of the code, not the protocol); the rows say the size, and reproduce --trained runs them."
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path)); monkeypatch.setenv('PAVLOVATTN_TRAINED_SIZE', 'quick')
    C = CLAIMS                                                               # registered when rules was imported (no discover: seconds)
    for i in ('stacked-trained-second-order', 'classical-rules-enhance-transformers', 'classical-rules-enhance-where-delta-learns'):
        assert C[i].trains and _trains(C[i]) and C[i].paper.covered and C[i].module == 'pavlovattn.apps.rules'
        v = C[i].fn()
        assert v.data['size'] == 'quick' and v.measured.startswith('[quick check'), v.measured
        if i.startswith('stacked'):                                         # every family and design: one finite effect per seed
            assert sorted(v.data['stats']) == [f'{d}/{r}' for d in sorted(rules.STACK_DESIGNS) for r in ('delta', 'hebbian')]
            assert all(s['n'] == 2 and all(map(math.isfinite, s['values'])) for s in v.data['stats'].values())
        elif i.endswith('transformers'):
            assert sorted(v.data['metrics']) == sorted(f'{r}/{t}' for r in ('delta',) + rules.ENHANCE_RULES for t in rules.ENHANCE_TASKS)
        else:                                                               # every tested rule, mackintosh, pkh and titans too, trained
            assert set(rules.LEARNED_RULES) >= {'mackintosh', 'pkh', 'titans'} | set(rules.ENHANCE_RULES)
            assert sorted(v.data['final']) == sorted(('delta',) + rules.LEARNED_RULES)
            assert all(len(x) == 2 for x in v.data['final'].values()) and 'premise fails' in v.measured

def test_the_verdicts_follow_their_protocols():
    "Given numbers: a rule helps only beyond the margin (paired by seed), a diverged rule does not help; a stack passes only when every family shows both effects."
    m = {('delta', t): [0.5, 0.6, 0.55] for t in rules.ENHANCE_TASKS}
    m.update({(r, t): [0.5, 0.6, 0.55] for r in rules.ENHANCE_RULES for t in rules.ENHANCE_TASKS})
    assert not rules.enhance_verdict(m).passed                               # equal to DeltaNet: no rule helps
    m[('oja', 'vector')] = [0.7, 0.81, 0.74]; m[('bcm', 'mqar')] = [math.nan] * 3
    v = rules.enhance_verdict(m)
    assert v.passed and v.data['helps']['oja/vector'] and 'bcm/mqar diverged' in v.measured and not v.data['helps']['bcm/mqar']
    m[('oja', 'vector')] = [0.51, 0.62, 0.56]                                # +0.01: inside the margin
    assert not rules.enhance_verdict(m).passed
    eff = {d: {'delta': [0.3, 0.32, 0.29, 0.31, 0.3], 'hebbian': [0.2, 0.25, 0.22, 0.21, 0.24]} for d in rules.STACK_DESIGNS}
    assert rules.stack_verdict(dict(effects=eff, learned={'delta': 0.9, 'hebbian': 0.9})).passed
    eff['preconditioning']['hebbian'] = [0.01, -0.02, 0.0, 0.02, -0.01]
    assert not rules.stack_verdict(dict(effects=eff, learned={'delta': 0.9, 'hebbian': 0.9})).passed
