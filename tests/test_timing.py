"Time within a trial: the trial-level language is the timeline language's special case, for every family, on every phenomenon page's designs."
import pytest, torch
from pavlovattn.language import parse_design
from pavlovattn.designs import simulate, closed_form
from pavlovattn.families import FAMILIES, BUILTIN
from pavlovattn import competition, random_orders, beyond

def timed(design:str) -> str:
    "The same design with every trial written as a one-step timeline: 10AB+ -> 10{A 0, B 0, US 0}."
    d = parse_design(design)
    def conv(t):
        if t.probe: return str(t)
        ev = [(c if len(c) == 1 else f'({c})') + ' 0' for c in t.cues] + (['US 0'] if t.outcome == '+' else [])
        return f"{t.count}{{{', '.join(ev)}}}"
    return ' ; '.join(f'{g.name}: ' + ' | '.join(('!' if ph.random else '') + '/'.join(conv(t) for t in ph.trials) for ph in g.phases) for g in d.groups)

DESIGNS = [p.design for p in (*competition.PHENOMENA.values(), *random_orders.PHENOMENA.values(), *beyond.PHENOMENA.values())]

@pytest.mark.parametrize('rule', BUILTIN)
def test_every_phenomenon_design_gives_the_same_numbers_written_as_timelines(rule):
    kw = dict(beta=0.1, subjects=16, seed=3, rng='torch')
    for d in DESIGNS:
        a, b = simulate(d, rule=rule, **kw).probes, simulate(timed(d), rule=rule, **kw).probes
        assert a.keys() == b.keys()
        for g in a:
            for p, q in zip(a[g], b[g]): assert abs(p['mean'] - q['mean']) <= 1e-12 and abs(p['sd'] - q['sd']) <= 1e-12, (rule, d, g)

def test_timeline_conversion_is_not_the_identity():
    assert timed('10A+ | #A') == 'group: 10{A 0, US 0} | #A'
    assert parse_design(timed('10AB- | 5(ctx)+')).groups[0].phases[0].trials[0].timeline == 'A 0, B 0'

def test_us_magnitude_scales_lambda_and_each_step_is_an_update():
    m = simulate('10{A 0, US 0*0.5} | #A', beta=0.2).probes['group'][0]['mean']
    assert abs(m - simulate('10A+ | #A', beta=0.2, lam=0.5).probes['group'][0]['mean']) < 1e-15
    # delta, CS on for 3 steps with the US at the last: two extinction steps then one reinforced step per trial
    v = simulate('5{A 0-3, US 2} | #A', beta=0.2).probes['group'][0]['mean']
    w = 0.0
    for _ in range(5): w = 0.8 * 0.8 * w; w = w + 0.2 * (1 - w)
    assert abs(v - w) < 1e-15
    assert abs(closed_form('5{A 0-3, US 2} | #A', 'delta', beta=0.2)['group']['A'] - w) < 1e-15

def test_a_timed_design_is_refused_where_it_cannot_be_spelt(tmp_path):
    from pavlovattn.interop import write_calmr, write_palms
    with pytest.raises(ValueError, match='is timed: calmr has no spelling'): write_calmr('10{A 0-2, US 3}', tmp_path / 'd.csv')
    with pytest.raises(ValueError, match='a timed trial'): write_palms('10{A 0-2, US 3}', tmp_path / 'd.txt')
