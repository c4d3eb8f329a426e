"""calmr design tables (issue 15): both layouts read as R's write.csv writes them, written back, round trips, and
`pavlovattn run --calmr FILE.csv`."""
import json, subprocess, sys
import pytest
from pavlovattn.designs import parse_design, simulate, calmr_parameters, DesignError
from pavlovattn.interop import read_calmr, write_calmr

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
    return subprocess.run([sys.executable, '-m', 'pavlovattn.cli', 'run', *args], capture_output=True, text=True, timeout=300)

def test_cli_calmr_table(tmp_path):
    (tmp_path / 'b.csv').write_text(BLOCKING_R)
    r = pv('--calmr', str(tmp_path / 'b.csv'), '--format', 'json', '--beta', '0.4', '--salience', 'N=0.4,L=0.4')
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    res = simulate(read_calmr(tmp_path / 'b.csv'), **calmr_parameters('Blocking: 10N>(US) | 10NL>(US)/10#L ; Control:  | 10NL>(US)/10#L'))
    assert j['params']['dialect'] == 'calmr' and j['params']['miniblocks'] is True
    for g in ('Blocking', 'Control'): assert abs(j['groups'][g]['probes'][0]['mean'] - res.probes[g][0]['mean']) < 1e-12

@pytest.mark.parametrize('args, msg', [
    ([], 'the following arguments are required: DESIGN (or --calmr FILE.csv)'),
    (['10A+', '--calmr', 'x.csv'], 'give DESIGN or --calmr FILE.csv, not both'),
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
    from pavlovattn.interop import tidy, write_tidy, TIDY_COLUMNS
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
