"Time within a trial: the trial-level language is the timeline language's special case, for every family, on every phenomenon page's designs."
import pytest, torch
from pavlovattn.design.language import parse_design
from pavlovattn.design.designs import simulate, closed_form
from pavlovattn.model.families import FAMILIES, BUILTIN
from pavlovattn.pages import competition, random_orders, beyond

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
    from pavlovattn.apps.interop import write_calmr, write_palms
    with pytest.raises(ValueError, match='is timed: calmr has no spelling'): write_calmr('10{A 0-2, US 3}', tmp_path / 'd.csv')
    with pytest.raises(ValueError, match='a timed trial'): write_palms('10{A 0-2, US 3}', tmp_path / 'd.txt')


# --- calmr's timed designs (TD/ANCCR timings) read into timelines (issue 34) ---

@pytest.mark.parametrize('rule', BUILTIN)
def test_calmr_timed_one_bin_no_iti_is_the_trial_level_design(rule):
    from pavlovattn.design.language import calmr_timed
    tm = dict(time_resolution=1, sample_timings=False,
              trial_ts=[dict(trial=n, post_trial_delay=0, mean_ITI=0) for n in ('A(US)', 'AB(US)', 'B')])
    d = calmr_timed('g: 10A(US) | 10AB(US)/5B | 2#A', tm)
    assert d == 'g: 10{A 0-1, US 0, iti 0} | 10{A 0-1, B 0-1, US 0, iti 0}/5{B 0-1, iti 0} | 2#A'
    a, b = simulate(d, rule=rule, beta=0.1).probes['g'], simulate('g: 10A+ | 10AB+/5B- | 2#A', rule=rule, beta=0.1).probes['g']
    assert [p['mean'] for p in a] == pytest.approx([p['mean'] for p in b], abs=1e-12)


def test_calmr_timed_serial_trial_by_hand():
    from pavlovattn.design.language import calmr_timed
    # calmr's defaults: res 0.5, F and T 1 s each (2 bins) with a 1 s transition, the US 1 s, then post-trial delay 1 + mean ITI 30 = 62 bins
    d = calmr_timed('g: 3F>T>(US) | 1#F')
    assert d == 'g: 3{F 0-2, T 4-6, US 8, US 9, iti 62} | 1#F'
    # delta by hand, one token a bin: F's key on bins 0-1, T's on 4-5, the US (no cue) on 8-9, then empty bins
    w, beta = {'F': 0., 'T': 0.}, 0.1
    for _ in range(3):
        for step in range(72):
            cues = ['F'] if step < 2 else ['T'] if 4 <= step < 6 else []
            err = (1.0 if step in (8, 9) else 0.0) - sum(w[c] for c in cues)
            for c in cues: w[c] += beta * err
    assert simulate(d, beta=beta).probes['g'][0]['mean'] == pytest.approx(w['F'], abs=1e-15)
    for t in (1.0, 0.25): assert 'iti' in calmr_timed('g: 3F>T>(US)', dict(time_resolution=t, sample_timings=False))
    with pytest.raises(ValueError, match='more than 10,000 steps'):
        calmr_timed('g: 3F>T>(US)', dict(time_resolution=0.001, sample_timings=False))
    with pytest.raises(ValueError, match='different mean_ITI'):
        calmr_timed('g: 3A(US)/3B', dict(sample_timings=False, trial_ts=[dict(trial='A(US)', mean_ITI=10), dict(trial='B', mean_ITI=20)]))
