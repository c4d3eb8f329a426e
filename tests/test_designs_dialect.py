"""The calmr dialect (issue 15): calmr's phase strings and trial orders, held to an independent Rescorla-Wagner loop
written here (its own reading of a calmr phase string, its own miniblock order, and calmr's RW1972 update for the
US column: each `>` period one update of that period's stimuli, reinforced when the US is in that period or the next,
alpha of the stimulus times the US's beta on/off), on calmr's example designs (`get_design()` and the vignettes)."""
import math, re
import pytest
import torch
from pavlovattn.design.designs import parse_design, simulate, calmr_parameters, DesignError, _orders

# calmr's own example designs: get_design() (blocking, relative_validity, controlled_blocking) and its vignettes
CALMR_DESIGNS = {
    'blocking': {'Blocking': ['10N>(US)', '10NL>(US)/10#L'], 'Control': ['', '10NL>(US)/10#L']},
    'relative_validity': {'True': ['!10AB(US)/10AC', '1#A'], 'Pseudo': ['!5AB(US)/5AB/5AC(US)/5AC', '1#A']},
    'controlled_blocking': {'Blocking': ['10N>(US)', '10NL>(US)/10#L'], 'Control': ['10C>(US)', '10NL>(US)/10#L']},
    'vignette_blocking': {'Exp': ['10A(US)', '10AB(US)', '1#A/1#B'], 'Control': ['10C(US)', '10AB(US)', '1#A/1#B']},
    'directional': {'Directional': ['10A>(US)', '10B>A/10#A'], 'Simultaneous': ['10A>(US)', '10BA/10#A']},
    'pavlovian_inhibition': {'group': ['!50(US)/50AB/50#A']},
    'feature_positive': {'FP': ['!100F>T>(US)/100T'], 'FN': ['!100F>T/100T>(US)']},
}

# ---- an independent reading of calmr's phase strings (after calmr's phase_parser; written apart from ours) ----
def read_trial(t):
    m = re.fullmatch(r'(\d*)(.*)', t.strip())
    reps, body = int(m[1] or 1), m[2]
    test = '#' in body
    periods = []
    for per in body.replace('#', '').split('>'):
        names = re.findall(r'\(([^()]*)\)', per)
        simple = [ch for ch in re.sub(r'\([^()]*\)', '', per) if not ch.isspace()]
        periods.append(simple + names)
    return reps, test, periods

def read_phase(s):
    if not s: return False, []
    return '!' in s, [read_trial(t) for t in s.replace('!', '').split('/')]

def written_order(trials, every=True):
    "calmr's .sample_trials without randomisation: miniblocks (when several trial types) in written order within each block."
    reps = [r for r, _, _ in trials]
    if len(reps) > 1 and every:
        g = reps[0]
        for r in reps[1:]: g = math.gcd(g, r)
        block = [j for j, r in enumerate(reps) for _ in range(r // g)]
        return block * g
    return [j for j, r in enumerate(reps) for _ in range(r)]

def rw_steps(seq, alphas, b_on, b_off, lam):
    "calmr RW1972's US column: V per stimulus before every step, and after the last; probe readings (sum of V before the probe)."
    V, before, probes = {}, [], []
    for stims, us_now, us_next, test, who in seq:
        before.append(dict(V))
        if test: probes.append((who, sum(V.get(c, 0.0) for c in stims if c != 'US'))); continue
        on = us_now or us_next
        cs = [c for c in stims if c != 'US']
        err = (lam if on else 0.0) - sum(V.get(c, 0.0) for c in cs)
        for c in cs: V[c] = V.get(c, 0.0) + alphas[c] * (b_on if on else b_off) * err
    before.append(dict(V))
    return before, probes

def steps_of(trial, j):
    "One trial's steps: (stimuli of the period, US in it, US in the next one (clamped), test, (trial string, period))."
    _, test, periods = trial
    P = len(periods)
    return [(p, 'US' in p, 'US' in periods[min(k + 1, P - 1)], test, (j, k)) for k, p in enumerate(periods)]

def as_string(groups):
    return ' ; '.join(f'{g}: ' + ' | '.join(ph) for g, ph in groups.items())

ALPHA = {'A': 0.3, 'B': 0.5, 'C': 0.4, 'N': 0.35, 'L': 0.45, 'F': 0.25, 'T': 0.55}
PARS = dict(betas_on=0.6, betas_off=0.2, lambdas=1.3)

@pytest.mark.parametrize('name', list(CALMR_DESIGNS))
def test_calmr_dialect_equals_independent_rw_loop(name):
    groups = CALMR_DESIGNS[name]
    text = as_string(groups)
    d = parse_design(text, dialect='calmr')
    kw = calmr_parameters(d, alphas={c: ALPHA[c] for c in d.cues}, **PARS)
    S = 4
    res = simulate(d, subjects=S, seed=3, per_subject=True, **kw)
    for gname, phases in groups.items():
        parsed = [read_phase(p) for p in phases]
        r = res.runs[gname]
        flat = [t for _, ts in parsed for t in ts]                      # the group's trial strings, in written order
        start, i = [], 0
        for t in flat: start.append(i); i += len(t[2])
        for s in range(S):
            order, k, trials = r['order'][s].tolist(), 0, []
            for rnd, ts in parsed:                                      # rebuild the trial sequence from the simulated steps
                n = sum(t[0] for t in ts); seq = []
                for _ in range(n):
                    j = start.index(order[k]); P = len(flat[j][2])
                    assert order[k:k + P] == list(range(order[k], order[k] + P)), 'the periods of a trial run one after the other'
                    seq.append(j); k += P
                off = flat.index(ts[0]) if ts else 0
                local = [j - off for j in seq]
                if not rnd: assert local == written_order(ts), (gname, 'written miniblock order')
                else:                                                   # a shuffled phase: every miniblock holds its share of each type
                    want = written_order(ts)
                    reps = [t[0] for t in ts]; m = reps[0]
                    for x in reps[1:]: m = math.gcd(m, x)
                    B = len(want) // m
                    for b in range(m): assert sorted(local[b * B:(b + 1) * B]) == sorted(want[:B]), (gname, 'miniblock contents')
                trials += seq
            assert k == len(order)
            steps = [st for j in trials for st in steps_of(flat[j], j)]
            before, probes = rw_steps(steps, ALPHA, PARS['betas_on'], PARS['betas_off'], PARS['lambdas'])
            want = torch.tensor([[b.get(c, 0.0) for c in res.cues] for b in before], dtype=torch.float64)
            assert (r['V'][s] - want).abs().max() < 1e-12, (name, gname, s)
        if S and all(not rnd for rnd, _ in parsed):                     # deterministic: every subject identical, probes exact
            got, seen = [p['mean'] for p in res.probes[gname]], {}
            for who, x in probes: seen.setdefault(who, []).append(x)    # each probe type: the mean of its readings
            want = [sum(xs) / len(xs) for who, xs in sorted(seen.items())]
            assert len(got) == len(want) and max([abs(a - b) for a, b in zip(got, want)] or [0]) < 1e-12, (name, gname, got, want)

def test_unmarked_and_written_blocks():
    "calmr interleaves 10A(US)/10A even without !: V_A 0.442 at alpha .5, beta .3; written blocks give 0.158."
    a = simulate('10A(US)/10A', dialect='calmr', salience={'A': 0.5}, beta=0.3).strengths['group']['A']
    b = simulate('10A+/10A-', salience={'A': 0.5}, beta=0.3).strengths['group']['A']
    c = simulate('10A(US)/10A', dialect='calmr', miniblocks=False, salience={'A': 0.5}, beta=0.3).strengths['group']['A']
    assert abs(a - 0.44165102625846636) < 1e-12 and abs(b - 0.15811487325620838) < 1e-12 and c == b

def test_calmr_forms_parse_and_print_back():
    for s, steps in [('10AC', [(('A', 'C'), '-')]), ('10(US)A', [(('A',), '+')]), ('10(US)', [((), '+')]),
                     ('1#A(US)', [(('A',), '#')]), ('1A#', [(('A',), '#')]), ('10A>B', [(('A',), '-'), (('B',), '-')]),
                     ('10N>(US)', [(('N',), '+'), ((), '+')]), ('10A(US)>B', [(('A',), '+'), (('B',), '-')]),
                     ('g: 10A | 5B+ ; h:  | 2#A', [(('A',), '-'), (('B',), '+')])]:
        d = parse_design(s, dialect='calmr')
        assert [(t.cues, t.outcome) for t in d.groups[0].trial_types] == steps, s
        assert str(parse_design(str(d), dialect='calmr')) == str(d), s

@pytest.mark.parametrize('s, msg', [
    ('10A>B+', 'marks its US with (US) only'), ('10A(US)+', 'marks its US with (US) only'),
    ('10A(US_a)(US_a)', 'a second (US_a) in one period at position 10'), ('10A>>B', 'empty period before ">" at position 5'),
    ('10A>', 'no cues'), ('10A(US)(US)', 'a second (US) in one period at position 8'), ('10(US)', 'no cues'),
])
def test_calmr_refusals_are_positioned(s, msg):
    with pytest.raises((DesignError, ValueError)) as e:
        d = parse_design(s, dialect='calmr'); simulate(d)
    assert msg in str(e.value) and len(str(e.value).splitlines()) == 1

def test_native_grammar_unchanged():
    with pytest.raises(DesignError, match=r'expected \+ or - after the cues'): parse_design('10AC')
    with pytest.raises(DesignError, match='calmr periods'): parse_design('10A>B+')
    assert simulate('10A+ | 10AB+ | #B').to_json()['params'].get('dialect') is None

def test_unstable_rate_opt_in():
    "The refusal stays the default and names the opt-in; the opt-in runs with a RuntimeWarning and equals the RW loop."
    with pytest.raises(ValueError, match=r'allow_unstable=True \(--allow-unstable\)'): simulate('exp: 1A+ | 2AB+', beta=1.2)
    with pytest.warns(RuntimeWarning, match='beta\\*\\|k\\|\\^2 = 2.4 > 2'):
        r = simulate('exp: 1A+ | 2AB+', beta=1.2, allow_unstable=True)
    VA = 1.2; VB = 0.0
    for _ in range(2): e = 1 - VA - VB; VA += 1.2 * e; VB += 1.2 * e
    assert abs(r.strengths['exp']['A'] - VA) < 1e-12 and abs(r.strengths['exp']['B'] - VB) < 1e-12

# ---- the native grammar's skipped phase, per-phase lam=/beta= and ++ (PALMS's, issues 31 and 32) ----
def rw_given_steps(steps, alpha, cues):
    "An independent RW loop over explicit steps (cues, lam, beta): V_i += alpha_i * beta * (lam - sum V) for present i."
    V = {c: 0.0 for c in cues}
    for cs, lam, beta in steps:
        err = lam - sum(V[c] for c in cs)
        for c in cs: V[c] += alpha[c] * beta * err
    return V

@pytest.mark.filterwarnings('ignore:partial')
def test_skip_phase_parses_prints_and_runs_as_calmrs_empty_cell():
    d = parse_design('exp: 10A+ | 10AB+ | #B ; ctrl: skip | 10AB+ | #B')
    assert str(d) == 'exp: 10A+ | 10AB+ | #B ; ctrl: skip | 10AB+ | #B' and d.groups[1].phases[0].trials == ()
    assert str(parse_design(str(d))) == str(d)
    c = parse_design('exp: 10A(US) | 10AB(US) | 1#B ; ctrl:  | 10AB(US) | 1#B', dialect='calmr')
    assert c.groups[1].phases[0].trials == () and str(c) == 'exp: 10A+ | 10AB+ | 1#B ; ctrl:  | 10AB+ | 1#B'
    a, b = simulate(d, beta=0.3).probes, simulate(c, beta=0.3, dialect='calmr').probes
    assert [(p['phase'], p['mean']) for p in a['ctrl']] == [(p['phase'], p['mean']) for p in b['ctrl']]
    assert b['ctrl'][0]['phase'] == 3                                     # the skipped phase keeps its number
    for bad, msg in [('10A+ || 5B-', 'empty phase at position 7'), ('g: skip | skip', 'has no trials'),
                     ('10A+ | !skip', '"s" at position 9'), ('skip/10A+', '"s" at position 1')]:
        with pytest.raises(DesignError, match=re.escape(msg)): parse_design(bad)

def test_phase_lam_beta_and_double_rate_against_a_hand_computation():
    "PALMS's semantics: a + trial learns at its phase's beta (else the run's beta+), towards its phase's lam (else the run's lam); ++ doubles that beta; - trials keep beta- and 0, whatever the phase sets."
    text = 'exp: lam=0.5/beta=0.2/5A+/3B- | !beta=0.05/4AB++/2A+/3B- | lam=2.0/2B+/2AB-'
    d = parse_design('exp: lam=0.5/beta=0.2/5A+/3B- | !4AB++/beta=0.05/2A+/3B- | 2B+/lam=2/2AB-')   # a setting anywhere in its phase; printed first
    assert str(parse_design(str(d))) == str(d) == text
    alpha, bp, bm, lam = {'A': 0.7, 'B': 0.4}, 0.15, 0.3, 1.0
    for alg in ('sequential', 'numba'):
        r = simulate(d, beta={'+': bp, '-': bm}, lam=lam, salience=alpha, subjects=3, per_subject=True, algorithm=alg, seed=5)
        tts = r.runs['exp']['trial_types']
        for s in range(3):
            seq = [tts[int(i)] for i in r.runs['exp']['order'][s]]
            want = {'A+': ({'A'}, 0.5, 0.2), 'B-': ({'B'}, 0.0, bm), 'AB++': ({'A', 'B'}, lam, 2 * 0.05), 'A+@2': ({'A'}, lam, 0.05),
                    'B+': ({'B'}, 2.0, bp), 'AB-': ({'A', 'B'}, 0.0, bm)}
            steps, phase = [], [pi for pi, ph in enumerate(d.groups[0].phases, 1) for _ in range(ph.n)]
            for t, pi in zip(seq, phase):
                steps.append(want['A+@2' if (t.label, pi) == ('A+', 2) else t.label])
            V = rw_given_steps(steps, alpha, 'AB')
            for j, c in enumerate(r.cues): assert abs(float(r.runs['exp']['V'][s, -1, j]) - V[c]) < 1e-12, (alg, s, c)

def test_phase_settings_closed_form_one_cue():
    "One cue, fixed order: each phase is V <- lam - (lam - V)(1 - alpha beta)^n, composed by hand."
    a = 0.6
    r = simulate('lam=0.25/beta=0.05/66T+ | beta=0.8/lam=1/6T+ | 2T++ | 3T-/#T', beta={'+': 0.3, '-': 0.1}, lam=1.0, salience={'T': a})
    V = 0.25 * (1 - (1 - a * 0.05) ** 66); V = 1 - (1 - V) * (1 - a * 0.8) ** 6; V = 1 - (1 - V) * (1 - a * 0.6) ** 2; V *= (1 - a * 0.1) ** 3
    assert abs(r.probes['group'][0]['mean'] - V) < 1e-12

@pytest.mark.parametrize('bad, msg', [
    ('lam=1/lam=2/10A+', 'a second lam= at position 7'),
    ('lam=-1/10A+', 'bad setting "lam=-1" at position 1'),
    ('10A+ | beta=nan/4A+', 'bad setting "beta=nan" at position 8'),
    ('lam=1e999/10A+', 'lam is a finite number >= 0'),
    ('beta=١/1A+', 'in ASCII digits'),
    ('lam=1 | 4A+', 'sets lam but has no trial types'),
    ('10A+++', 'unexpected "+" at position 6'),
    ('#A++', 'a probe (#) reads without a US'),
])
def test_phase_settings_refused_with_position(bad, msg):
    with pytest.raises(DesignError) as e: parse_design(bad)
    assert msg in str(e.value) and len(str(e.value).splitlines()) == 1, str(e.value)

def test_phase_settings_have_no_calmr_spelling_and_no_blocks(tmp_path):
    from pavlovattn.apps.interop import write_calmr, write_pyndl
    for s in ('lam=0.5/10A+', '10A++'):
        with pytest.raises(ValueError, match='calmr has no spelling of them'): write_calmr(s, tmp_path / 'x.csv')
        with pytest.raises(ValueError, match='pyndl has one lambda and one beta pair per file'): write_pyndl(s, tmp_path / 'e.tab')
    with pytest.raises(DesignError): parse_design('10A++', dialect='calmr')
    with pytest.raises(DesignError): parse_design('g: lam=0.5/10A(US)', dialect='calmr')
    from pavlovattn.design.designs import design_blocks
    with pytest.raises(ValueError, match='sets its own lam or rate'): design_blocks('lam=0.5/10A+ | #A')
    with pytest.raises(ValueError, match='sets its own lam or rate'): design_blocks('10A++ | #A')

def test_phase_beta_counts_in_the_stability_check():
    with pytest.raises(ValueError, match=r'beta\*\|k\|\^2 = 2.4 > 2'): simulate('beta=1.2/2A++', beta=0.1)
    simulate('beta=1.0/2A++', beta=0.1)                                   # 2.0: at the bound, runs


@pytest.mark.parametrize('design', ['lam=0.5/6A+ | #A', 'beta=0.2/6A+ | #A', '6A++ | #A', '2{A 0-3, US 5} | #A', '6A(US_a)/6B(US_b) | #A'])
def test_compilers_of_plain_trials_refuse_what_they_do_not_model(design):
    "Never a silent answer: the trained-model and text-probe compilers (one US, one step a trial, one rate) refuse a phase's own lam/beta, ++, timed trials and named USs in one line, where they used to drop them; design_blocks and the animal batch refuse the phase settings too."
    from pavlovattn.apps.probes import compile_design
    from pavlovattn.apps.pretrained import _steps
    from pavlovattn.design.designs import design_blocks
    d = parse_design('6A(US_a)/6B(US_b) | 1#A', 'calmr') if 'US_' in design else design
    for f in (compile_design, _steps):
        with pytest.raises(ValueError, match='several|sets its own|timed') as e: f(d)
        assert '\n' not in str(e.value)
    if 'lam=' in design or 'beta=' in design or '++' in design:
        from pavlovattn.apps.animal import Experiment, compile_batch           # the animal batch: one rate per experiment (issue 45)
        with pytest.raises(ValueError, match='sets its own lam or rate'): design_blocks(design)
        with pytest.raises(ValueError, match=r'compile_batch \(x\) carries one rate'):
            compile_batch([Experiment('x', '', design, '', 'up', '', '', '', True, points=[('group', (1,), 'test', 1.0)])])
    assert _steps('6A+ | #A') and compile_design('6A+ | #A', n=4)   # the plain design still compiles
