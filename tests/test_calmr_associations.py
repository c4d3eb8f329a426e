"""calmr's RW1972 learns every stimulus -> stimulus association (issue 31): `associations='all'` against an independent port of calmr's
loop (R/class_model_RW1972.R, calmr 0.8: per period, cues = that period's stimuli, targets = it and the next period, diag(d) = 0);
calmr designs whose outcomes a cue -> US run does not model are computed, never all-zero without a word; counts are mandatory."""
import json, subprocess, sys, warnings
import numpy as np, pytest
from pavlovattn.design.designs import simulate, parse_design, calmr_parameters, DesignError, PartialWarning, memory_estimate
from warm_cli import cli      # the command from a warm start: a process per call, forked after the imports

def calmr_rw(trials, alphas, on, off, lam):
    "calmr's RW1972: `trials` a list of trials, each a list of periods (lists of stimuli); a trial starting with '#' is a test. Returns V after the run."
    S = sorted({s for t in trials for p in (t[1:] if t[0] == '#' else t) for s in p}); ix = {s: i for i, s in enumerate(S)}
    v = np.zeros((len(S), len(S)))
    for t in trials:
        if t[0] == '#': continue
        for k, p in enumerate(t):
            nxt = t[min(k + 1, len(t) - 1)]
            pn = set(p) | set(nxt)
            x = np.array([1.0 if s in p else 0.0 for s in S])
            a = np.array([alphas[s] if s in pn else 0.0 for s in S])
            b = np.array([on[s] if s in pn else off[s] for s in S])
            l = np.array([lam[s] if s in pn else 0.0 for s in S])
            err = l - x @ v
            d = np.outer(x * a, err) * b[None, :]
            np.fill_diagonal(d, 0); v = v + d
    return {f'{i}:{j}': v[ix[i], ix[j]] for i in S for j in S}

CASES = [  # (calmr design, the trial sequence calmr runs, by hand)
    ('10A>B | 10B(US) | 1#A', [[['A'], ['B']]] * 10 + [[['B', 'US']]] * 10 + [['#', ['A']]]),             # sensory preconditioning
    ('10A(US1)/10B(US2)', [[['A', 'US1']], [['B', 'US2']]] * 10),                                            # calmr's miniblocks: A, B, A, B, ...
    ('12L>(Pellet) | 6L', [[['L'], ['Pellet']]] * 12 + [[['L']]] * 6),
    ('8AX>B | 8A', [[['A', 'X'], ['B']]] * 8 + [[['A']]] * 8),
    ('5AB(US)/5A | 4B>(US)>C', [[['A', 'B', 'US']], [['A']]] * 5 + [[['B'], ['US'], ['C']]] * 4),           # with a US, all forced
]

@pytest.mark.parametrize('design,trials', CASES)
def test_all_associations_equal_calmr_loop(design, trials):
    d = parse_design(design, dialect='calmr')
    st = sorted({s for t in trials for p in (t[1:] if t[0] == '#' else t) for s in p})
    rng = np.random.default_rng(len(design))
    al, on, off, lam = ({s: float(x) for s, x in zip(st, rng.uniform(lo, hi, len(st)))} for lo, hi in ((.2, .9), (.2, .6), (.05, .4), (.5, 2)))
    want = calmr_rw(trials, al, on, off, lam)
    kw = calmr_parameters(d, alphas=al, betas_on=on, betas_off=off, lambdas=lam, associations='all')
    for alg in ('sequential', 'numba'):
        got = simulate(d, algorithm=alg, **kw).strengths['group']
        assert set(got) == set(want)
        assert max(abs(got[k] - want[k]) for k in want) < 1e-13, (alg, {k: (got[k], want[k]) for k in want if abs(got[k] - want[k]) > 1e-13})
    assert max(abs(v) for v in want.values()) > 0.1                     # real values, not zeros

def test_no_us_designs_are_computed_not_zero():
    for design in ('10A>B', '10A>B>C', '30AX>B/30A', '10A(US1)/10B(US2)', '12L>(Pellet)/12N'):
        r = simulate(design, dialect='calmr', beta=0.2)
        assert r.params['associations'] == 'all' and not r.notes
        assert max(r.strengths['group'].values()) > 0.5, (design, r.strengths)
    assert simulate('10A>B', dialect='calmr', beta=0.2).strengths['group']['A:B'] == pytest.approx(1 - 0.8**10, abs=1e-14)

def test_a_partial_run_says_so_everywhere(tmp_path):
    with pytest.warns(PartialWarning, match=r"also learns 4 stimulus-to-stimulus associations .*A->B"):
        r = simulate('10AB(US) | 1#A', dialect='calmr')
    assert r.notes and r.to_json()['notes'] == list(r.notes)
    from pavlovattn.apps.interop import write_results
    for layout in ('tidy', 'calmr'):
        p = write_results(r, tmp_path / f'{layout}.csv', layout=layout)
        import pandas as pd
        assert pd.read_csv(p)['note'].iloc[0] == r.notes[0]
    with warnings.catch_warnings():                                   # the native grammar has no stimulus-to-stimulus links: no note
        warnings.simplefilter('error'); assert not simulate('10AB+ | #A').notes

def pv(*a): return cli(*a)

def test_cli_partial_note_and_counts():
    for fmt in ('table', 'json', 'csv'):
        r = pv('run', '10AB(US) | 1#A', '--dialect', 'calmr', '--format', fmt)
        assert r.returncode == 0 and 'partial: calmr' in r.stderr, (fmt, r.stderr)
    assert json.loads(pv('run', '10AB(US) | 1#A', '--dialect', 'calmr', '--format', 'json').stdout)['notes'][0].startswith('partial')
    for design, pos, what in (('AB/10AC', 1, 'AB'), ('10#Rescorla/Wagner', 13, 'Wagner'), ('10A(US) | #A', 11, '#A')):
        r = pv('run', design, '--dialect', 'calmr')
        assert r.returncode == 2 and r.stderr.count('\n') == 1 and f'"{what}" at position {pos}: no count' in r.stderr, r.stderr
    with pytest.raises(DesignError, match='at position 1: no count'): parse_design('AB', dialect='calmr')
    assert parse_design('AB+').groups[0].phases[0].trials[0].count == 1     # the native grammar keeps its count of 1

def test_one_named_us_with_a_probe(tmp_path):   # issue 32, reproducer 1: a TypeError in Result.probes
    want = 0.4 * 1.0                              # one A(US_a) trial at beta 0.4, then the probe reads V(A -> US_a)
    r = simulate('1A(US_a) | 1#A', dialect='calmr', beta=0.4)
    assert r.probes['group'] == [dict(phase=2, cues='A', outcome='US_a', mean=pytest.approx(want), sd=0.0, subjects=1)]
    for fmt in ('table', 'json', 'csv'):
        x = pv('run', '1A(US_a) | 1#A', '--dialect', 'calmr', '--beta', '0.4', '--format', fmt)
        assert x.returncode == 0 and 'Traceback' not in x.stderr, x.stderr
    assert json.loads(pv('run', '1A(US_a) | 1#A', '--dialect', 'calmr', '--beta', '0.4', '--format', 'json').stdout)['groups']['group']['probes'][0]['mean'] == pytest.approx(want)
    f = tmp_path / 'd.csv'; f.write_text('Group,P1,P2\nG,1A(US_a),1#A\n')
    x = pv('run', '--calmr', str(f), '--beta', '0.4')
    assert x.returncode == 0 and '#A -> US_a' in x.stdout and '0.4' in x.stdout, x.stderr

def test_cli_associations_flag_and_table_note(capsys):
    "`pavlovattn run --associations all` computes calmr's stimulus associations; a partial cue -> US run prints its note in the table."
    import json
    from pavlovattn.apps.cli import main
    assert main(['run', '10A(US)/10B | 1#A', '--dialect', 'calmr', '--associations', 'all', '--format', 'json']) == 0
    out = json.loads(capsys.readouterr().out)
    assert out['params']['associations'] == 'all' and 'notes' not in out
    assert main(['run', '10A(US) | 1#A', '--dialect', 'calmr']) == 0
    cap = capsys.readouterr()
    assert cap.out.splitlines()[1].startswith("note: partial: calmr's RW1972 also learns 1 stimulus-to-stimulus association")
    assert main(['run', '10A(US) | 1#A', '--dialect', 'calmr', '--associations', 'bogus']) == 2
    assert "unknown associations 'bogus'" in capsys.readouterr().err

# ---------------------------------------------------------------- calmr's own designs without a US: never a silent zero
def _fixture_designs():
    import pathlib, re
    US = re.compile(r'\(US(_\w+)?\)')
    m = json.loads((pathlib.Path(__file__).parent / 'fixtures' / 'calmr' / 'designs.json').read_text())
    return [r for r in m['designs'] if not any(US.search(str(v)) for c in r['design'] for v in r['design'][c])]

NO_US = _fixture_designs()

def _answer(out:str, err:str, fmt:str):
    "'note' | 'values' (a non-zero strength) | 'zeros' for one CLI answer."
    import io, pandas as pd
    if fmt == 'json':
        j = json.loads(out)
        if j.get('notes'): return 'note'
        vals = [v for g in j['groups'].values() for v in g['strengths'].values()]
    elif fmt == 'csv':
        t = pd.read_csv(io.StringIO(out))
        if 'note' in t.columns and t['note'].notna().all(): return 'note'
        vals = t['mean'].tolist()
    else:
        if any(l.startswith('note: ') for l in out.splitlines()): return 'note'
        vals = [float(x) for l in out.splitlines() if 'final strengths' in l for x in re.findall(r' (-?[0-9.]+(?:e-?\d+)?)(?=\s|$)', l.split(':', 1)[1])]
    return 'values' if any(abs(v) > 0 for v in vals) else 'zeros'

import re
@pytest.mark.parametrize('rec', NO_US, ids=[' ; '.join(str(v) for c in r['design'] for v in r['design'][c][:1])[:40] for r in NO_US])
def test_no_us_design_never_a_silent_zero(rec, tmp_path, capsys):
    "Each of calmr's own designs without a (US)/(US_x), run from its table by every output path: refused in one line, or a note, or non-zero strengths; all-zero only where calmr's own RW1972 is all-zero (probe trials only)."
    from pavlovattn.apps.cli import main
    cols = list(rec['design']); q = lambda v: ('TRUE' if v else 'FALSE') if isinstance(v, bool) else '"' + str(v) + '"'
    f = tmp_path / 'd.csv'
    f.write_text('\n'.join([','.join(q(c) for c in cols)] + [','.join(q(rec['design'][c][i]) for c in cols) for i in range(len(rec['design'][cols[0]]))]) + '\n')
    calmr_zero = 'ends' in rec and not any(abs(v) > 0 for v in rec['ends']['mean'])
    seen = set()
    for extra in ([], ['--associations', 'us']):
        for fmt in ('table', 'json', 'csv'):
            rc = main(['run', '--calmr', str(f), '--format', fmt, *extra]); cap = capsys.readouterr()
            if rc == 2:
                assert cap.err.count('\n') == 1 and not cap.out, cap.err; seen.add('refused'); continue
            assert rc == 0, cap.err
            a = _answer(cap.out, cap.err, fmt); seen.add(a)
            if extra: assert a == 'note', (fmt, cap.out[:300])                       # a cue -> US run of a design without a US says so
            else: assert a == 'values' or (a == 'zeros' and calmr_zero) or a == 'note', (fmt, cap.out[:300])
    if 'calmr_error' in rec and 'argument is of length zero' in rec['calmr_error']: assert seen == {'refused'}   # calmr's grammar errors
