"""calmr design tables (issue 15): both layouts read as R's write.csv writes them, written back, round trips, and
`pavlovattn run --calmr FILE.csv`."""
import json, re, subprocess, sys
import pytest
from pavlovattn.design.designs import parse_design, simulate, calmr_parameters, DesignError
from pavlovattn.apps.interop import read_calmr, write_calmr
from warm_cli import cli      # the command from a warm start: a process per call, forked after the imports

# calmr's get_design() tables, as R's write.csv(df) writes them (row names on) and with row.names = FALSE
BLOCKING_R = '"","Group","P1","P2"\n"1","Blocking","10N>(US)","10NL>(US)/10#L"\n"2","Control","","10NL>(US)/10#L"\n'
RELVAL_R = '"Group","P1","P2"\n"True","!10AB(US)/10AC","1#A"\n"Pseudo","!5AB(US)/5AB/5AC(US)/5AC","1#A"\n'
RELVAL_OLD = '"","Group","P1","R1","P2","R2"\n"1","True","10AB(US)/10AC",TRUE,"1#A",FALSE\n"2","Pseudo","5AB(US)/5AB/5AC(US)/5AC",TRUE,"1#A",FALSE\n'

def structure(d):
    return [(g.name, [(p.random, [(t.count, t.cues, t.outcome, tuple((s.cues, s.outcome) for s in t.periods)) for t in p.trials])
                      for p in g.phases]) for g in d.groups]

def test_read_both_layouts(tmp_path):
    (tmp_path / 'new.csv').write_text(RELVAL_R); (tmp_path / 'old.csv').write_text(RELVAL_OLD)
    a, b = read_calmr(tmp_path / 'new.csv'), read_calmr(tmp_path / 'old.csv')
    assert structure(a) == structure(b)
    assert [g.name for g in a.groups] == ['True', 'Pseudo'] and a.groups[0].phases[0].random and not a.groups[0].phases[1].random
    assert [(t.cues, t.outcome) for t in a.groups[0].trial_types] == [(('A', 'B'), '+'), (('A', 'C'), '-'), (('A',), '#')]

def test_empty_cell_is_a_skipped_phase(tmp_path):
    (tmp_path / 'b.csv').write_text(BLOCKING_R)
    d, names = read_calmr(tmp_path / 'b.csv', names=True)
    assert names == ['P1', 'P2'] and d.groups[1].phases[0].trials == ()
    res = simulate(d, **calmr_parameters(d))
    assert res.probes['Control'][0]['phase'] == 2

@pytest.mark.parametrize('src', [BLOCKING_R, RELVAL_R, RELVAL_OLD])
def test_r_tables_write_back_byte_for_byte(tmp_path, src):
    (tmp_path / 'in.csv').write_text(src)
    d, names = read_calmr(tmp_path / 'in.csv', names=True)
    old = 'R1' in src
    write_calmr(d, tmp_path / 'out.csv', names=names, layout='randomise' if old else 'phases', row_names=src.startswith('""'))
    assert (tmp_path / 'out.csv').read_text() == src

@pytest.mark.parametrize('design, dialect', [
    ('exp: 10A+ | !10AB+/5B- | #B ; ctrl: 10C+ | !10AB+/5B-', 'native'),
    ('a: !3A(ctx)+/2(b)- | 2#AB ; b: 3AB(US)', 'native'),
    ('FP: !100F>T>(US)/100T ; FN: !100F>T/100T>(US) ; P: !50(US)/50AB/50#A', 'calmr'),
    ('g: 10a(US)/5Ab | 1A# ; h:  | 10A>B/10#A', 'calmr'),
])
@pytest.mark.parametrize('layout', ['phases', 'randomise'])
def test_round_trip(tmp_path, design, dialect, layout):
    d = parse_design(design, dialect)
    write_calmr(d, tmp_path / 'x.csv', layout=layout, row_names=layout == 'phases')
    back = read_calmr(tmp_path / 'x.csv')
    def strip(s):      # the native '+' / '-' are calmr's (US) / no mark; empty trailing phases come back as skipped phases
        return [(n, [p for p in ph if p[1]]) for n, ph in s]
    assert strip(structure(back)) == strip(structure(d))
    write_calmr(back, tmp_path / 'y.csv', layout=layout, row_names=layout == 'phases')
    assert (tmp_path / 'y.csv').read_text() == (tmp_path / 'x.csv').read_text()

@pytest.mark.parametrize('text, msg', [
    ('"Group","P1"\n"a","10A(US)"\n"b","10A>>B"\n', "line 3, column 'P1': bad trial type \"10A>>B\" at position 1: empty period before \">\" at position 5"),
    ('"Group","P1"\n"a","10A(US)","x"\n', 'line 2: 3 fields where the header has 2'),
    ('"Group"\n"a"\n', 'needs a group column and at least one phase column'),
    ('', 'empty file'),
    ('"Group","P1","R1","P2"\n"a","10A",TRUE,"1#A"\n', 'randomise columns (R1) must each follow a phase column'),
])
def test_bad_tables_are_one_line(tmp_path, text, msg):
    (tmp_path / 'bad.csv').write_text(text)
    with pytest.raises(DesignError) as e: read_calmr(tmp_path / 'bad.csv')
    assert msg in str(e.value) and len(str(e.value).splitlines()) == 1

def pv(*args):
    return cli('run', *args, timeout=300)

def test_cli_calmr_table(tmp_path):
    (tmp_path / 'b.csv').write_text(BLOCKING_R)
    r = pv('--calmr', str(tmp_path / 'b.csv'), '--format', 'json', '--beta', '0.4', '--salience', 'N=0.4,L=0.4')
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    res = simulate(read_calmr(tmp_path / 'b.csv'), **calmr_parameters('Blocking: 10N>(US) | 10NL>(US)/10#L ; Control:  | 10NL>(US)/10#L'))
    assert j['params']['dialect'] == 'calmr' and j['params']['miniblocks'] is True
    for g in ('Blocking', 'Control'): assert abs(j['groups'][g]['probes'][0]['mean'] - res.probes[g][0]['mean']) < 1e-12

@pytest.mark.parametrize('args, msg', [
    ([], 'the following arguments are required: DESIGN (or --calmr, --palms or --pyndl FILE)'),
    (['10A+', '--calmr', 'x.csv'], 'give one of DESIGN, --calmr, --palms or --pyndl, not DESIGN and --calmr'),
    (['--calmr', '/nonexistent/x.csv'], 'cannot read --calmr /nonexistent/x.csv'),
    (['10AC'], 'expected + or - after the cues'),
    (['10A>B', '--dialect', 'calmr', '--beta', '3'], 'beta*|k|^2 = 3 > 2'),
    (['10A', '--dialect', 'R'], "unknown dialect 'R'; valid: native, calmr"),
])
def test_cli_refusals(args, msg):
    r = pv(*args)
    assert r.returncode == 2 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr

def test_cli_dialect_orders():
    a = json.loads(pv('10A(US)/10A', '--dialect', 'calmr', '--beta', '0.3', '--salience', 'A=0.5', '--format', 'json').stdout)
    b = json.loads(pv('10A(US)/10A', '--dialect', 'calmr', '--no-miniblocks', '--beta', '0.3', '--salience', 'A=0.5', '--format', 'json').stdout)
    assert abs(a['groups']['group']['strengths']['A'] - 0.44165102625846636) < 1e-12
    assert abs(b['groups']['group']['strengths']['A'] - 0.15811487325620838) < 1e-12

def test_tidy_long_table(tmp_path):
    from pavlovattn.apps.interop import tidy, write_tidy, TIDY_COLUMNS
    import pandas as pd
    res = simulate('exp: 10A+ | !5AB+/5B- | #B ; ctrl: 10C+ | #B', subjects=3, seed=2)
    long = tidy(res)
    assert tuple(long.columns) == TIDY_COLUMNS and len(long) == 3 * len(res.table)
    assert list(dict.fromkeys(long['group'])) == ['exp', 'ctrl']
    wide = long.pivot_table(index=['group', 'trial', 'cue'], columns='statistic', values='value')
    t = res.table.set_index(['group', 'trial', 'cue'])
    assert (wide['mean'] - t['mean']).abs().max() == 0 and (wide['sd'] - t['sd']).abs().max() == 0
    write_tidy(res, tmp_path / 'x.csv')
    back = pd.read_csv(tmp_path / 'x.csv')
    assert list(back.columns) == list(TIDY_COLUMNS) and len(back) == len(long)
    with pytest.raises(ValueError, match='use .csv or .parquet'): write_tidy(res, tmp_path / 'x.txt')


def test_periods_are_labelled_by_their_whole_trial(tmp_path):
    "Issue 36: calmr's `N>(US)` came out as trial types `N+` and `(US)`. Each step of a trial with periods (or of a timed trial) is labelled by the whole trial, with its period; where subjects differ: '*' and <NA>, checked against every subject's own order."
    from pavlovattn.apps.interop import tidy, write_tidy, TIDY_COLUMNS
    import pandas as pd
    t = simulate('g: 2N>(US)/2N', dialect='calmr').table
    assert t.trial_type.tolist() == ['N>(US)', 'N>(US)', 'N-'] * 2 and t.period.tolist() == [1, 2, 1] * 2 and t.trial.tolist() == list(range(1, 7))
    assert simulate('t: 2{A 0-2, US 2}').table.period.tolist() == [1, 2, 3] * 2       # a timed trial: its time steps
    assert 'period' not in simulate('g: 2A+/2B-').table.columns                         # one step per trial: no column
    res = simulate('FP: !4F>T>(US)/4T', dialect='calmr', subjects=5, seed=1)
    g = res.design.groups[0]
    whole = [(tt.label, k) for ph in g.phases for tt in ph.trials for k in range(1, len(tt.steps) + 1)]
    O = res.orders('FP').long().tolist()
    t = res.table[res.table.cue == 'F']
    for step, (lab, per) in enumerate(zip(t.trial_type, t.period)):
        labs, pers = {whole[o[step]][0] for o in O}, {whole[o[step]][1] for o in O}
        assert lab == (labs.pop() if len(labs) == 1 else '*') and (per == pers.pop() if len(pers) == 1 else pd.isna(per)), step
    assert {'*', 'F>T>(US)', 'T-'} <= set(t.trial_type) and t.period.isna().any() and t.period.notna().any()
    long = tidy(res)
    assert list(long.columns) == list(TIDY_COLUMNS[:4]) + ['period'] + list(TIDY_COLUMNS[4:])
    write_tidy(res, tmp_path / 'p.csv'); back = pd.read_csv(tmp_path / 'p.csv')
    assert back.period.isna().sum() == long.period.isna().sum() > 0

# ---------------------------------------------------------------- PALMS design lines
import gzip
import numpy as np
import pandas as pd
from pavlovattn.apps.interop import (read_palms, write_palms, read_pyndl, read_pyndl_events, write_pyndl, calmr_results,
                                write_results, tidy, CALMR_RESULT_COLUMNS, PALMS_DEFAULTS)

# the design lines of three experiments PALMS ships (Experiments/*.rw at cal-r/PALMS-Simulator b84c565)
MCNALLY = """@model=Mackintosh Extended
@alpha=0.15;alpha_mack=0.15;alpha_hall=0.15;beta=0.5;betan=0.3;gamma=0.2;thetaE=0.25;thetaI=0.2;num_trials=500
@alpha_A'=0.15;alpha_B'=0.3;alpha_mack_A'=0.15;salience_A=0.2;salience_A'=0.2
Blk Exp1 McN|12A+|rand/4AB+/4CD+|rand/4B-/4D-
Blk HS Target|12A'+|rand/4A'B'+/4C'D'+|rand/4B'-/4D'-
"""
LEPELLEY = """@model=Mackintosh Extended
@alpha=0.9;alpha_mack=0.9;alpha_hall=0.9;lamda=1;beta=0.5;betan=0.3;gamma=0.1;thetaE=0.8;thetaI=0.1
@salience_A=0.2;salience_X=0.2
Learned Irrelevance|rand/20X+/20X-/20AX+/20AX-|8A+
CS-preexposure|rand/20X-/20X-/20AX-/20AX-|8A+
Novel||8A+
"""
HALL_PEARCE = "T+|lambda=0.25/beta=0.05/66T+|beta=0.8/lambda=1/6T+\n"

def test_palms_shipped_designs():
    d = read_palms(MCNALLY)
    assert str(d) == ("Blk Exp1 McN: 12A+ | !4AB+/4CD+ | !4B-/4D- ; "
                      "Blk HS Target: 12(Ap)+ | !4(Ap)(Bp)+/4(Cp)(Dp)+ | !4(Bp)-/4(Dp)-")
    d = read_palms(LEPELLEY)
    assert [len(g.phases) for g in d.groups] == [2, 2, 2] and d.groups[2].phases[0].trials == ()
    assert d.groups[0].phases[0].random and not d.groups[0].phases[1].random and d.dialect == 'native'
    res = simulate(d, beta=0.3, salience={'A': 0.5, 'X': 0.5}, subjects=4)
    assert res.strengths['Novel']['X'] == 0 and res.strengths['Novel']['A'] > 0
    with pytest.raises(DesignError, match='line 1: group name "T\\+" has no spelling here'): read_palms(HALL_PEARCE)   # its lambda=/beta= read; not its name
    assert str(read_palms(HALL_PEARCE.replace('T+|', 'T|', 1))) == 'T: lam=0.25/beta=0.05/66T+ | lam=1.0/beta=0.8/6T+'
    with pytest.raises(DesignError, match="model is 'Pearce Kaye Hall'"): read_palms('@model=Pearce Kaye Hall\n' + HALL_PEARCE, params=True)   # the model first
    with pytest.raises(DesignError, match="model is 'Mackintosh Extended'"): read_palms(MCNALLY, params=True)

@pytest.mark.parametrize('line, unsigned, want', [
    ('g|10A/10AB+', '-', 'g: 10A-/10AB+'),           # PALMS since b84c565 ("US is - by default")
    ('g|10A/10AB+', '+', 'g: 10A+/10AB+'),           # PALMS before it
    ('g|A+|B', '-', 'g: 1A+ | 1B-'),
    ("g|3a'b^2+|rand/2c-/2C''", '-', "g: 3(Ap)(B_2)+ | !2C-/2(Cpp)-"),
    ('g | 4AB+ / 4B- |rand/ 2A+', '-', 'g: 4AB+/4B- | 2A+'),   # one trial: rand shuffles nothing, but the phase is marked
])
def test_palms_unsigned_and_cues(line, unsigned, want):
    d = read_palms(line, unsigned=unsigned)
    assert str(d).replace('!', '') == want.replace('!', '')
    if "rand/2c" in line: assert d.groups[0].phases[1].random

@pytest.mark.parametrize('text, msg', [
    ('g|10A+++', 'line 1, phase 1: cannot read "10A+++"'),
    ('g|beta=0.3/beta=0.4/10A+', 'line 1, phase 1: "beta=0.4": a second beta in one phase'),
    ('g|lambda=0/10A+', 'PALMS reads a lambda of 0 as not set'),
    ('g|lamda=1e-3/10A+', 'lamda is a number in digits'),
    ('g|beta=/10A+', 'beta is a number in digits'),
    ('g/config|10AB+', 'unknown group option /config (PALMS reads /conf, /configural, /cc)'),
    ('g|10A+\nh', 'line 2: "h" has no phases'),
    ('g|10A+|4A*', 'line 1, phase 2: cannot read "4A*"'),
    ('g|4Ñ+', 'cue "Ñ" has no name here'),
    ('g|4AA+', 'appears twice in one compound'),
    ('@alpha=x\ng|4A+', 'alpha=x is not a number'),
    ('# only a comment\n', 'no design lines'),
])
def test_palms_refusals_are_one_line(text, msg):
    with pytest.raises(DesignError) as e: read_palms(text, params='@' in text)
    assert msg in str(e.value) and len(str(e.value).splitlines()) == 1, str(e.value)

def test_palms_missing_file():
    with pytest.raises(DesignError, match='cannot read /nonexistent/x.rw'): read_palms('/nonexistent/x.rw')

def palms_rw(lines, alpha, beta, betan, lam):
    "PALMS's Rescorla Wagner on fixed-order phases, written out independently: + trials beta, lam; - trials betan, 0."
    V, hist = {}, []
    for trials in lines:
        for count, cues, sign in trials:
            for _ in range(count):
                s = sum(V.get(c, 0.0) for c in cues)
                b, l = (beta, lam) if sign == '+' else (betan, 0.0)
                for c in cues: V[c] = V.get(c, 0.0) + alpha.get(c, 0.1) * b * (l - s)
                hist.append(dict(V))
    return V

def test_palms_rescorla_wagner_semantics():
    text = "@model=Rescorla Wagner\n@alpha=0.2;beta=0.45;betan=0.25;lamda=0.8\n@alpha_B=0.35;alpha_C'=0.5\nexp|6A+/4B|5AB+/3C'B-|4A"
    d, kw = read_palms(text, params=True)
    assert kw == dict(salience={'A': 0.2, 'B': 0.35, 'Cp': 0.5}, beta={'+': 0.45, '-': 0.25}, lam=0.8, subjects=PALMS_DEFAULTS['num_trials'])
    res = simulate(d, **{**kw, 'subjects': 1})
    want = palms_rw([[(6, 'A', '+'), (4, 'B', '-')], [(5, 'AB', '+'), (3, ('Cp', 'B'), '-')], [(4, 'A', '-')]],
                    {'A': 0.2, 'B': 0.35, 'Cp': 0.5}, 0.45, 0.25, 0.8)
    for c, v in want.items(): assert abs(res.strengths['exp'][c] - v) < 1e-12

def test_palms_per_phase_lambda_beta_and_double_rate():
    "PALMS's Group.runPhase: + at the phase's beta (else the file's) towards its lambda (else lamda); ++ at twice that beta; - at betan towards 0."
    text = ("@model=Rescorla Wagner\n@alpha=0.2;beta=0.45;betan=0.25;lamda=0.8\n@alpha_B=0.35\n"
            "exp|lambda=0.3/beta=0.1/6A+/4B-/2AB++|beta=0.6/5AB+/3B/2A++|4A++/2AB+|lamda=1.5/lamda=2")
    with pytest.raises(DesignError, match='a second lamda'): read_palms(text)
    d, kw = read_palms(text.replace('|lamda=1.5/lamda=2', '|lamda=1.5'), params=True)
    assert str(d) == 'exp: lam=0.3/beta=0.1/6A+/4B-/2AB++ | beta=0.6/5AB+/3B-/2A++ | 4A++/2AB+ | skip'
    a, V = {'A': 0.2, 'B': 0.35}, {'A': 0.0, 'B': 0.0}
    for n, cues, l, b in [(6, 'A', 0.3, 0.1), (4, 'B', 0, 0.25), (2, 'AB', 0.3, 0.2), (5, 'AB', 0.8, 0.6), (3, 'B', 0, 0.25),
                          (2, 'A', 0.8, 1.2), (4, 'A', 0.8, 0.9), (2, 'AB', 0.8, 0.45)]:
        for _ in range(n):
            e = l - sum(V[c] for c in cues)
            for c in cues: V[c] += a[c] * b * e
    res = simulate(d, **{**kw, 'subjects': 1})
    for c, v in V.items(): assert abs(res.strengths['exp'][c] - v) < 1e-12
    back = write_palms(d, params=kw)
    assert back.splitlines()[-1] == 'exp|lambda=0.3/beta=0.1/6A+/4B-/2AB++|beta=0.6/5AB+/3B-/2A++|4A++/2AB+|'
    assert read_palms(back, params=True) == (d, kw)
    with pytest.raises(ValueError, match='lambda=0 has no PALMS spelling'): write_palms('lam=0/4A+')
    assert write_palms('lam=0.00001/4A+') == 'group|lambda=0.00001/4A+\n'     # PALMS reads digits only, no exponent

def test_palms_default_alpha_of_primed_and_marked_cues():
    # PALMS's Group.set_vals: a cue without its own alpha gets the product of its name's characters' alphas
    d, kw = read_palms("@alpha=0.2;alpha_B=0.5;alpha_D'=0.7\ng|4C'+|4B^2+|2A''+|1D'-", params=True)
    want = {'Cp': 0.2 * 0.2, 'B_2': 0.5 * 0.2 * 0.2, 'App': 0.2 ** 3, 'Dp': 0.7}
    assert kw['salience'].keys() == want.keys() and all(abs(kw['salience'][c] - a) < 1e-15 for c, a in want.items())

def test_palms_defaults_when_the_file_gives_none():
    d, kw = read_palms('g|4A+', params=True)
    assert kw == dict(salience={'A': 0.1}, beta={'+': 0.3, '-': 0.2}, lam=1.0, subjects=100)

@pytest.mark.parametrize('design', [
    'exp: 10A+ | !10AB+/5B- ; ctrl: 10C+ | !10AB+/5B-',
    'a: 3(Ap)(B_2)+/2(Cpp)- | !4A+/4B+/1AB-',
    'g: 12A+',
])
def test_palms_round_trip(tmp_path, design):
    d = parse_design(design)
    text = write_palms(d, tmp_path / 'x.rw')
    assert (tmp_path / 'x.rw').read_text() == text
    back = read_palms(tmp_path / 'x.rw')
    assert structure(back) == structure(d) and str(back) == str(d)
    assert write_palms(back) == text
    kw = dict(salience={c: 0.1 + 0.05 * i for i, c in enumerate(d.cues)}, beta={'+': 0.3, '-': 0.15}, lam=0.9, subjects=7)
    assert read_palms(write_palms(d, params=kw), params=True) == (back, kw)

def test_palms_round_trip_with_a_skipped_phase():
    d = read_palms(LEPELLEY)
    assert str(read_palms(write_palms(d))) == str(d)
    assert write_palms(d).splitlines()[-1] == 'Novel||8A+'

def test_palms_writes_every_trial_signed_and_drops_probes():
    assert write_palms('exp: 10A+ | 4B- | #B ; c: 3A-/#A') == 'exp|10A+|4B-|\nc|3A-\n'

@pytest.mark.parametrize('design, dialect, msg', [
    ('10(ctx)+', 'native', "cue 'ctx' has no PALMS spelling"),
    ('10a(US)', 'calmr', "cue 'a' has no PALMS spelling"),
    ('10N>(US)', 'calmr', 'periods'),
    ('10(US)/10A', 'calmr', 'US alone'),
    ('10A(US_a)/10B(US_b) | 1#A', 'calmr', 'the design names 2 USs (US_a, US_b): PALMS learns one US'),   # issue 32, reproducer 10
])
def test_palms_write_refusals(design, dialect, msg):
    with pytest.raises(ValueError, match=re.escape(msg)): write_palms(design, dialect=dialect)

def test_writers_never_merge_named_uss(tmp_path):
    "Issue 32, reproducer 10: write_palms wrote 10A(US_a)/10B(US_b) as 10A+/10B+ and write_pyndl gave both outcomes the name US; the calmr writer keeps them."
    s = '10A(US_a)/10B(US_b) | 1#A'
    with pytest.raises(ValueError, match=re.escape("names 2 USs (US_a, US_b): a file written here gives every + event the one outcome 'US'")):
        write_pyndl(s, tmp_path / 'e.tab', dialect='calmr')
    assert not (tmp_path / 'e.tab').exists()
    assert write_palms('10A(US_a)/10B | 1#A', dialect='calmr') == 'group|10A+/10B-|\n'    # one US, named or not: PALMS's one US


# ---------------------------------------------------------------- pyndl event files
def write_events(path, lines, header='cues\toutcomes', gz=True):
    text = '\n'.join([header] + lines) + '\n'
    if gz:
        with gzip.open(path, 'wt', encoding='utf-8') as f: f.write(text)
    else: path.write_text(text)
    return path

@pytest.mark.parametrize('gz', [True, False])
def test_pyndl_read(tmp_path, gz):
    p = write_events(tmp_path / 'e.tab', ['A_B\tUS', 'A_B\tUS', 'C\t', 'ctx_A\tUS', 'C\t'], gz=gz)
    d = read_pyndl(p)
    assert str(d) == 'group: 2AB+/1C-/1(ctx)A+/1C-'
    assert read_pyndl_events(p)[2] == (['C'], [], 1, 4)

def test_pyndl_frequency_column_crlf_and_zero(tmp_path):
    p = tmp_path / 'e.tab'
    p.write_bytes(b'Cues\tOutcomes\tFrequency\r\nA\tUS\t3\r\nA\tUS\t2\r\nB\tUS\t0\r\nB\tX\t1\r\n')
    assert str(read_pyndl(p, outcome='US', group='g')) == 'g: 5A+/1B-'
    assert str(read_pyndl(p, outcome='X')) == 'group: 5A-/1B+'

def test_pyndl_outcomes(tmp_path):
    p = write_events(tmp_path / 'e.tab.gz', ['A\tfood_shock', 'B\tfood'])
    with pytest.raises(DesignError, match=r"2 outcomes \(food, shock\): pass outcome="): read_pyndl(p)
    assert str(read_pyndl(p, outcome='shock')) == 'group: 1A+/1B-'
    with pytest.raises(DesignError, match="outcome 'US' is in no event"): read_pyndl(p, outcome='US')
    q = write_events(tmp_path / 'none.tab.gz', ['A\t', 'B\t'])
    assert str(read_pyndl(q)) == 'group: 1A-/1B-'

def test_pyndl_rename(tmp_path):
    p = write_events(tmp_path / 'e.tab.gz', ['#h_ha\tUS'])
    with pytest.raises(DesignError, match="cue '#h' has no name here"): read_pyndl(p)
    assert str(read_pyndl(p, rename={'#h': 'h0'})) == 'group: 1(h0)(ha)+'

@pytest.mark.parametrize('lines, msg', [
    (['A\tUS\t1\textra'], 'line 2: 4 tab-separated fields'),
    (['A US'], 'line 2: 1 tab-separated fields'),
    (['A\tUS\tmany'], "line 2: frequency 'many' is not a whole number"),
    (['A_A\tUS'], 'line 2: a cue appears twice in one event'),
    (['A__B\tUS'], 'line 2: empty cue name'),
    ([], 'no events after the header'),
    (['A\tUS\t0'], 'every event has frequency 0'),
])
def test_pyndl_refusals(tmp_path, lines, msg):
    p = write_events(tmp_path / 'bad.tab.gz', lines)
    with pytest.raises(DesignError) as e: read_pyndl(p)
    assert msg in str(e.value) and len(str(e.value).splitlines()) == 1, str(e.value)

def test_pyndl_write(tmp_path):
    write_pyndl('exp: 3A(US) | 2AB | 1#B/1(US) ; c: 1C(US)', tmp_path / 'x.tab', group='exp', dialect='calmr')   # no probes, no US alone
    assert (tmp_path / 'x.tab').read_text() == 'cues\toutcomes\nA\tUS\nA\tUS\nA\tUS\nA_B\t\nA_B\t\n'
    write_pyndl('exp: 3A+ | 2AB- | #B', tmp_path / 'f.tab.gz', frequency=True, outcome='food')
    with gzip.open(tmp_path / 'f.tab.gz', 'rt') as f: assert f.read() == 'cues\toutcomes\tfrequency\nA\tfood\t3\nA_B\t\t2\n'
    assert str(read_pyndl(tmp_path / 'f.tab.gz')) == 'group: 3A+/2AB-'
    with pytest.raises(ValueError, match=r'2 groups \(exp, c\): pass group='): write_pyndl('exp: 3A+ ; c: 1C+', tmp_path / 'y.tab')
    with pytest.raises(ValueError, match="no group 'd'"): write_pyndl('exp: 3A+ ; c: 1C+', tmp_path / 'y.tab', group='d')
    with pytest.raises(ValueError, match='reads as a separator'): write_pyndl('3(a_b)+', tmp_path / 'y.tab')

def test_pyndl_write_orders_are_subject_zero(tmp_path):
    d = 'g: !5A+/5B-/3AB+ | 2C-'
    write_pyndl(d, tmp_path / 'x.tab', seed=4)
    o = simulate(d, subjects=1, seed=4).orders('g')[0].tolist()
    tts = parse_design(d).groups[0].trial_types
    ev = read_pyndl_events(tmp_path / 'x.tab')
    assert [('_'.join(tts[i].cues), tts[i].outcome) for i in o] == [('_'.join(c), '+' if o_ else '-') for c, o_, _, _ in ev]

def test_pyndl_write_calmr_orders(tmp_path):
    write_pyndl('4A(US)/4A', tmp_path / 'x.tab', dialect='calmr')           # calmr's miniblocks: A+, A-, A+, ...
    assert [o for _, o, _, _ in read_pyndl_events(tmp_path / 'x.tab')] == [['US'], []] * 4

def test_pyndl_round_trip(tmp_path):
    d = parse_design('g: 4A+/2(ctx)B-/1A+/3(ctx)-')
    write_pyndl(d, tmp_path / 'x.tab.gz')
    assert str(read_pyndl(tmp_path / 'x.tab.gz', group='g')) == str(d)

def _pyndl():
    try:
        from pyndl import ndl, io
        return ndl, io
    except Exception as e:                                  # ImportError, or a broken compiled extension
        reason = f'pyndl is not importable ({type(e).__name__}: {e}); pip install pyndl to run the cross-check'
        print(reason); pytest.skip(reason)

@pytest.mark.parametrize('design, alpha, betas, lam, seed', [
    ('exp: 8A+ | !6AB+/6C-/4AC+ | 5A-', {'A': 0.3, 'B': 0.2, 'C': 0.5}, (0.4, 0.25), 1.0, 5),
    ('g: !20A(ctx)+/20(ctx)- | 10AB+', {'A': 0.2, 'B': 0.6, 'ctx': 0.1}, (0.3, 0.3), 0.7, 1),
    ('g: 10A(US)/10AB', {'A': 0.4, 'B': 0.4}, (0.4, 0.4), 1.0, 0),              # calmr dialect: miniblocks
])
def test_delta_equals_pyndl_dict_ndl(tmp_path, design, alpha, betas, lam, seed):
    ndl, _ = _pyndl()
    dialect = 'calmr' if '(US)' in design else 'native'
    ours = simulate(design, beta={'+': betas[0], '-': betas[1]}, salience=alpha, lam=lam, seed=seed, dialect=dialect).strengths
    (g, s), = ours.items()
    write_pyndl(design, tmp_path / 'e.tab.gz', seed=seed, dialect=dialect)
    w = ndl.dict_ndl(str(tmp_path / 'e.tab.gz'), alpha, betas, lam)
    assert max(abs(w['US'][c] - s[c]) for c in alpha) < 1e-12

def test_pyndl_reads_our_files_and_we_read_its(tmp_path):
    _, io = _pyndl()
    write_pyndl('g: 3AB+/2A-/1B+', tmp_path / 'ours.tab.gz', frequency=True)
    assert list(io.events_from_file(str(tmp_path / 'ours.tab.gz'))) == [(['A', 'B'], ['US'])] * 3 + [(['A'], [''])] * 2 + [(['B'], ['US'])]
    io.events_to_file([(['A', 'B'], ['US']), (['A'], ['US', 'X']), (['B'], ['X'])], str(tmp_path / 'theirs.tab.gz'))
    assert str(read_pyndl(tmp_path / 'theirs.tab.gz', outcome='US')) == 'group: 1AB+/1A+/1B-'
    io.events_to_file([(['A'], ['US'])], str(tmp_path / 'legacy.tab.gz'), compatible=True,
                      columns=('Cues', 'Outcomes', 'Frequency'))
    assert str(read_pyndl(tmp_path / 'legacy.tab.gz')) == 'group: 1A+'


# ---------------------------------------------------------------- results in calmr's layout
def test_calmr_results_deterministic():
    d = parse_design('exp: 4A+/4AB- | 2#B ; ctrl: 3C+', 'native')
    res = simulate(d, beta=0.3)
    cr = calmr_results(res, phases=['train', 'test'])
    assert tuple(cr.columns) == CALMR_RESULT_COLUMNS
    e = cr[cr.group == 'exp']
    assert list(e[e.s1 == 'A'].trial_type) == ['A(US)'] * 4 + ['AB'] * 4 + ['#B'] * 2
    assert list(e[e.s1 == 'A'].phase) == ['train'] * 8 + ['test'] * 2 and set(cr.s2) == {'US'} and set(cr.model) == {'delta'}
    assert set(cr.block_size) == {1} and len(cr) == (10 + 3) * len(res.cues)
    t = res.table.set_index(['group', 'trial', 'cue'])['mean']
    for _, r in cr.iterrows(): assert r.value == t[(r.group, r.trial, r.s1)]

def test_calmr_results_periods_are_one_trial():
    d = parse_design('g: 3N>(US) | 2NL>(US)/2#L', 'calmr')
    res = simulate(d, beta=0.3, miniblocks=False, dialect='calmr')
    cr = calmr_results(res)
    n = cr[cr.s1 == 'N']
    assert list(n.trial) == list(range(1, 8)) and list(n.trial_type) == ['N>(US)'] * 3 + ['NL>(US)'] * 2 + ['#L'] * 2
    steps = [1, 3, 5, 7, 9, 11, 12]                          # the first period of each trial
    assert np.allclose(n.value.to_numpy(), res.runs['g']['mean'][[s - 1 for s in steps], 0].numpy(), atol=0, rtol=0)

def test_calmr_results_block_size():
    res = simulate('10A(US)/10A | !2B(US)/4B', dialect='calmr', beta=0.2, subjects=3, per_subject=True)
    cr = calmr_results(res)
    assert cr[cr.trial <= 20].block_size.unique().tolist() == [2] and cr[cr.trial > 20].block_size.unique().tolist() == [3]
    res = simulate('!2B+/4B-', miniblocks=True, beta=0.2, subjects=3, per_subject=True)
    assert calmr_results(res).block_size.unique().tolist() == [3]
    assert calmr_results(simulate('!2B+/4B-', beta=0.2, subjects=3, per_subject=True)).block_size.unique().tolist() == [1]

def test_calmr_results_random_phase_averages_by_trial_type():
    res = simulate('g: !6A+/6B- | 2AB-', beta=0.25, subjects=40, seed=3, per_subject=True)
    cr = calmr_results(res)
    V, O = res.runs['g']['V'].double().numpy(), res.orders('g').numpy()
    tts = [t.label for t in res.runs['g']['trial_types']]
    rows = [(k + 1, {'A+': 'A(US)', 'B-': 'B', 'AB-': 'AB'}[tts[O[s, k]]], c, V[s, k, ci])
            for s in range(40) for k in range(14) for ci, c in enumerate(res.cues)]
    want = pd.DataFrame(rows, columns=['trial', 'trial_type', 's1', 'v']).groupby(['trial', 'trial_type', 's1'], sort=False).v.mean()
    got = cr.set_index(['trial', 'trial_type', 's1']).value
    assert len(got) == len(want) and max(abs(got[i] - want[i]) for i in want.index) < 1e-12
    with pytest.raises(ValueError, match='per_subject=True'): calmr_results(simulate('g: !6A+/6B-', subjects=4))

def test_write_results_layouts(tmp_path):
    res = simulate('exp: 4A+ | #A ; ctrl: 2B+ | #A', beta=0.3)
    before = json.dumps(res.to_json())
    write_results(res, tmp_path / 'c.csv', layout='calmr', phases=['P1', 'Test'])
    back = pd.read_csv(tmp_path / 'c.csv')
    assert tuple(back.columns) == CALMR_RESULT_COLUMNS and len(back) == len(calmr_results(res))
    write_results(res, tmp_path / 't.csv')
    assert len(pd.read_csv(tmp_path / 't.csv')) == len(tidy(res))
    assert json.dumps(res.to_json()) == before                 # the run's JSON is untouched
    with pytest.raises(ValueError, match="unknown layout 'wide'"): write_results(res, tmp_path / 'x.csv', layout='wide')
    with pytest.raises(ValueError, match='1 phase names for 2 phases'): calmr_results(res, phases=['x'])

def test_write_results_parquet(tmp_path):
    res = simulate('4A+', beta=0.3)
    try: import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match='needs pyarrow'): write_results(res, tmp_path / 'x.parquet')
        reason = 'pyarrow is not installed: Parquet writing is optional (the refusal was checked)'
        print(reason); pytest.skip(reason)
    for layout in ('tidy', 'calmr'):
        write_results(res, tmp_path / f'{layout}.parquet', layout=layout)
        back = pd.read_parquet(tmp_path / f'{layout}.parquet')
        want = tidy(res) if layout == 'tidy' else calmr_results(res)
        assert list(back.columns) == list(want.columns) and np.allclose(back.value, want.value)

@pytest.mark.parametrize('s', ['g: 10A(US_a)/10B(US_b) | 1#A', 'g: 10A>B(US_a) | 5(US_b)/2AB', 'g: 4AB(US_a)(US_b) | 1#A ; h: 4A(US_b) | 1#A'])
def test_calmr_writer_keeps_named_uss(tmp_path, s):
    from pavlovattn.design.designs import parse_design
    d = parse_design(s, 'calmr'); p = tmp_path / 'd.csv'
    write_calmr(d, p)
    assert 'US_' in p.read_text() and str(read_calmr(p)) == str(d)
