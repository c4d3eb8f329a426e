"""The `pavlovattn reproduce` contract: table (two verdicts, nothing cut), JSON rows, --only, --strict on the exact (theorem-type) claims, exit codes."""
import json, os, subprocess, sys
import pytest
from pavlovattn.base.registry import PAPER_VERDICTS
from warm_cli import cli      # the command from a warm start: a process per call, forked after the imports

def _rows(path):
    "The rows of a `reproduce --json` report (beside them it holds its provenance: tests/test_cli_reader.py)."
    return json.loads(path.read_text())['rows']

def pv(*args):
    return cli(*args, timeout=1800)

def test_exact_claims_pass_strictly(tmp_path):
    "Every exact (closed form vs simulation) claim passes under --strict; the JSON rows carry the documented keys."
    out = tmp_path / 'r.json'
    r = pv('reproduce', '--exact', '--strict', '--json', str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = _rows(out)
    # issue 36: the plan line comes first on stderr (the tier, its claims, their measured cost, what the other tiers add),
    # and the default tier runs no trained-model claim
    from pavlovattn.apps.cli import _costs
    plan, unmeasured = r.stderr.splitlines()[0], [x['id'] for x in rows if x['id'] not in _costs()['seconds']]
    assert plan.startswith(f'pavlovattn reproduce: default tier: every claim that trains no model: {len(rows)} claim(s), measured ')
    assert '--trained adds' in plan and (f'; {len(unmeasured)} claim(s) not measured' in plan) == bool(unmeasured), plan
    assert not [x['id'] for x in rows if x['id'].startswith('trained-')]
    assert {'core-deltanet-is-rescorla-wagner', 'core-acquisition-closed-forms'} <= {x['id'] for x in rows}
    for x in rows:
        assert set(x) == {'id', 'claim', 'source', 'expected', 'measured', 'verdict', 'check', 'paper', 'paper_v1', 'paper_rule', 'datum', 'seconds', 'data'}
        assert x['verdict'] in ('pass', 'fail') and x['check'] == x['verdict']
        assert x['paper'] in PAPER_VERDICTS and x['paper_v1'] in PAPER_VERDICTS and x['paper_rule'] and x['datum']
        assert x['verdict'] == 'pass', x
    head = r.stdout.splitlines()[0]
    assert [c.strip() for c in head.split('|')] == ['id', 'claim', 'source', 'expected', 'measured', 'check', 'paper', 'seconds']
    last = r.stdout.splitlines()[-2]                 # the summary line, then "report: PATH"
    assert last.startswith(f'{len(rows)} claims: {len(rows)} checks pass, 0 fail; the paper: agrees on'), last

def test_paper_numbers_and_not_covered_rows(tmp_path):
    "Where the paper gives a number it is in data['paper'] beside our interval; a claim with no experiment is a row, not covered."
    out = tmp_path / 'r.json'
    r = pv('reproduce', '--only', 'blocking-closed-form', 'capacity-exponent-accurate', '--quiet', '--json', str(out))
    assert r.returncode == 0, r.stderr
    rows = {x['id']: x for x in _rows(out)}
    assert rows['blocking-closed-form']['data']['paper'] == 1e-7 and rows['blocking-closed-form']['paper'] == 'agrees'
    acc = rows['capacity-exponent-accurate']
    assert acc['data']['paper'] == 1.22 and len(acc['data']['ci']) == 2
    lo, hi = acc['data']['ci']                                        # the rule of 2026-12-06: no margin, so never 'agrees'
    assert acc['paper'] == ('not shown' if lo <= 1.22 <= hi else 'differs') and acc['paper_v1'] == ('agrees' if lo <= 1.22 <= hi else 'differs')
    from pavlovattn.base.registry import not_covered, run_claims, CLAIMS
    not_covered('test-not-built', 'a claim with no experiment', source='test', why='nothing built')
    try:
        (x,), _ = run_claims(['test-not-built'], progress=False)
        assert (x['check'], x['paper']) == ('fail', 'not covered') and x['measured'].startswith('not built')
    finally: del CLAIMS['test-not-built']

def test_table_cuts_nothing(tmp_path):
    "Every word of every cell is in the table, wrapped (default) or on one line (--wide)."
    ids = ('core-deltanet-is-rescorla-wagner', 'blocking-closed-form')
    for extra in ((), ('--wide',)):
        out = tmp_path / 'r.json'
        r = pv('reproduce', '--only', *ids, '--quiet', '--json', str(out), *extra)
        assert r.returncode == 0 and '…' not in r.stdout
        for x in _rows(out):
            for key in ('claim', 'source', 'expected', 'measured'):
                for w in x[key].split(): assert w in r.stdout, (extra, key, w)
    assert len(r.stdout.splitlines()) == 2 + len(ids) + 2          # header, rule, one line per row, summary, "report: PATH"

def test_list_names_every_claim():
    r = pv('reproduce', '--list')
    assert r.returncode == 0 and 'core-deltanet-is-rescorla-wagner' in r.stdout
    assert 'trained-cue-competition' in r.stdout and 'trained-no-spontaneous-recovery' in r.stdout

@pytest.mark.parametrize('args, msg', [
    (['reproduce', '--only', 'nope'], 'unknown claim id(s) nope'),
    (['reproduce', '--device', 'nosuchdevice'], "device 'nosuchdevice'"),
    (['reproduce', '--frobnicate'], 'unrecognized arguments'),
    (['explode'], 'invalid choice'),
])
def test_bad_input_is_one_line_and_exit_2(args, msg):
    r = pv(*args)
    assert r.returncode == 2
    assert msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert 'Traceback' not in r.stderr


def test_claims_follow_the_pages():
    "load_claims orders claims by the notebook each comes from (then by registration), whatever was imported first."
    import pavlovattn.apps.probes, pavlovattn.pages.random_orders                  # imported out of page order on purpose
    from pavlovattn.base.registry import load_claims, _page_order
    ids = list(load_claims())
    pages = [_page_order(load_claims()[i].module) for i in ids]
    assert pages == sorted(pages), [p for p, q in zip(pages, pages[1:]) if p > q][:3]
    assert ids.index('blocking-closed-form') < ids.index('random-order-mean-recursion') < ids.index('no-spontaneous-recovery') < ids.index('trained-cue-competition')
    assert _page_order('pavlovattn.pages.random_orders') == '04a_random_orders' and _page_order('__main__') == '~__main__'


def test_no_placeholder_source_links():
    "While settings.ini's git_url is the placeholder, show_doc (the package's renderer) and the saved notebook outputs link no 'source' there."
    from pathlib import Path
    from pavlovattn.base.registry import doc_renderer
    from pavlovattn.model.core import recur
    md = doc_renderer(recur)._repr_markdown_()
    assert '### recur' in md and 'github.com/example/' not in md
    nbs = Path(__file__).resolve().parent.parent / 'nbs'
    bad = [p.name for p in sorted(nbs.glob('*.ipynb')) if '](https://github.com/example/' in p.read_text()]
    assert not bad, bad

# ---- issue 36: tiers, the plan line, partial reports ----
def test_only_trained_claims_train(tmp_path):
    "The claims left out of the default tier are exactly the claims that train models: the trained-probes and trained-rules pages' claims."
    from pavlovattn.base.registry import load_claims
    from pavlovattn.apps.cli import _trains
    claims = load_claims()
    assert {i for i, c in claims.items() if _trains(c)} == {i for i, c in claims.items() if c.module in ('pavlovattn.apps.probes', 'pavlovattn.apps.rules')}

@pytest.mark.parametrize('sig, status', [(2, 130), (15, 143)])        # SIGINT (Ctrl-C), SIGTERM
def test_a_stopped_run_leaves_a_partial_report(tmp_path, sig, status):
    "Stopped after its first claim, the run prints what finished and PARTIAL, and the JSON report holds that row and 'not run' rows."
    import os, signal, time
    out = tmp_path / 'r.json'
    ids = ['core-deltanet-is-rescorla-wagner', 'designs-rw-reference', 'blocking-closed-form']   # the second takes seconds
    p = subprocess.Popen([sys.executable, '-m', 'pavlovattn.apps.cli', 'reproduce', '--only', *ids, '--json', str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t = time.time()
    while time.time() - t < 300:
        try: rows = _rows(out)
        except (OSError, ValueError, KeyError, TypeError): rows = []
        if rows and rows[0]['check'] != 'not run': break
        time.sleep(0.05)
    p.send_signal(sig)
    stdout, stderr = p.communicate(timeout=300)
    rows = _rows(out)
    assert p.returncode == status, stderr[-2000:]
    assert [x['id'] for x in rows] == ids and rows[0]['check'] in ('pass', 'fail')
    assert [x['check'] for x in rows[1:]] == ['not run', 'not run'] and all(x['data'] == {'partial': True} for x in rows[1:])
    assert 'PARTIAL: 1 of 3 claims ran' in stdout and stderr.rstrip().endswith('pavlovattn reproduce: stopped after 1 of 3 claims')

# ---- issues 30, 36: the report's saved rows, what the front page and README quote ----
def test_report_summary_names_each_rows_run():
    "report_summary.json: every claim that trains no model has a row, each row names a run (commit, date, tier), the summary counts these rows, every failure has its sentence; README and the report page show that summary, README every failing check."
    from pathlib import Path
    from pavlovattn.base.registry import load_claims, summary_line
    from pavlovattn.apps.cli import _trains
    root = Path(__file__).resolve().parent.parent
    s = json.loads((root / 'nbs' / 'report_summary.json').read_text())
    claims, ids = load_claims(), [r['id'] for r in s['rows']]
    assert len(ids) == len(set(ids)) and set(ids) <= set(claims), sorted(set(ids) - set(claims))
    missing = [i for i, c in claims.items() if i not in ids and not _trains(c)]
    assert not missing, f'rerun the report page with PAVLOVATTN_WRITE_SUMMARY=1 (about 3 min): no row for {missing}'
    assert s['summary'] == summary_line(s['rows']) and all(r['datum'] for r in s['rows'])   # the independent count needs each row's datum
    assert set(s['runs']) == {r['run'] for r in s['rows']}
    for k, run in s['runs'].items(): assert run['commit'] == k[:len(run['commit'])] and run['date'].endswith('UTC') and run['tier'], run
    for r in s['rows']:
        assert r['check'] in ('pass', 'fail') and r['paper'] in PAPER_VERDICTS + ('not recomputed',) and r['paper_v1'] in PAPER_VERDICTS, r
        if r['check'] == 'fail' or r['paper'] in ('differs', 'not shown', 'not covered'): assert r['note'], r['id']
    readme = (root / 'README.md').read_text()
    listed = readme.split('Checks that fail: ', 1)[1].split('.', 1)[0].split(', ')
    assert s['summary'] in readme and listed == [r['id'] for r in s['rows'] if r['check'] == 'fail'], listed
    assert f"**{s['summary']}**" in (root / 'nbs' / '11_report.ipynb').read_text()

def test_pip_install_leaves_no_untracked_file(tmp_path):
    "Issue 36: `pip install .` in a checkout left an untracked `build/` (setuptools builds in the source tree). A copy of the tracked files, installed with pip (no index, no build isolation), then `git status` shows nothing new."
    import pathlib, shutil
    root, src = pathlib.Path(__file__).resolve().parents[1], tmp_path / 'src'
    git = lambda *a, cwd=src: subprocess.run(['git', '-c', 'user.name=t', '-c', 'user.email=t@t', *a], cwd=cwd, capture_output=True, text=True, check=True).stdout
    for f in git('ls-files', '-z', cwd=root).split('\0'):
        if f and (root / f).is_file(): (src / f).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(root / f, src / f)
    git('init', '-q'); git('add', '-A'); git('commit', '-q', '-m', 'tracked files')
    r = subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--no-deps', '--no-index', '--no-build-isolation', '--target', str(tmp_path / 'site'), '.'],
                       cwd=src, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / 'site' / 'pavlovattn' / 'apps' / 'cli.py').is_file() and (tmp_path / 'site' / 'pavlovattn' / 'data' / 'experiments.csv').is_file()
    assert git('status', '--porcelain', '--untracked-files=all') == '', 'pip install . left files git does not ignore'

def test_time_reproduce_reads_the_stages_from_makes_own_lines(tmp_path):
    "tools/time_reproduce.py (the README's make reproduce time): stages from the run's timestamped lines; a record shown in one sentence; bad input one line, exit 2."
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1]; sys.path.insert(0, str(root / 'tools'))
    try: import time_reproduce as tr
    finally: sys.path.pop(0)
    lines = [(0.0, '== venv: creating .venv'), (130.5, '== venv: ready (.venv)'), (131.0, '== reproduce 1/2: the website'),
             (150.0, '== reproduce 2/2: the claims'), (215.25, '55 claims: 46 checks pass, 9 fail; ...'), (216.0, '(exit status 0)')]
    assert tr.stages(lines) == dict(venv=131.0, site=19.0, claims=66.0, total=216.0)
    with pytest.raises(ValueError, match="no '== reproduce 2/2' line"): tr.stages(lines[:3])
    assert tr.SUMMARY.match('1 claim: 1 check passes') and tr.SUMMARY.match('55 claims: 46 checks pass, 9 fail')
    rec = dict(commit='abc1234', seconds=dict(venv=131.0, site=19.0, claims=66.0, total=216.0), claims_line='55 claims: 46 checks pass, 9 fail',
               load_start=0.2, load_end=2.9, date='2026-12-03 22:33 UTC')
    (tmp_path / 't.json').write_text(json.dumps(dict(runs=[rec])))
    r = subprocess.run([sys.executable, str(root / 'tools' / 'time_reproduce.py'), '--json_path', str(tmp_path / 't.json'), '--show'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == ('make reproduce from a fresh clone of abc1234 took 3 min 36 s: 2 min 11 s for the venv, 19 s for the site, '
                                              '66 s for the claims (55 claims: 46 checks pass, 9 fail); load 0.2 at the start, 2.9 at the end; 2026-12-03 22:33 UTC\n'), r.stdout
    sped = dict(rec, tier='trained', step_ms_before=dict(mha=14.25, delta=20.1), step_ms_after=None)
    (tmp_path / 's.json').write_text(json.dumps(dict(runs=[sped])))
    r = subprocess.run([sys.executable, str(root / 'tools' / 'time_reproduce.py'), '--json_path', str(tmp_path / 's.json'), '--show'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "2.9 at the end; the MHA model's step 14.25 ms before, not measured after; 2026-12-03" in r.stdout, r.stdout
    assert tr.STEP.findall('mha    14.86 ms/step  1.00 x\ndelta   21.18 ms/step') == [('mha', '14.86'), ('delta', '21.18')]
    (tmp_path / 'bad.json').write_text('[1]')
    r = subprocess.run([sys.executable, str(root / 'tools' / 'time_reproduce.py'), '--json_path', str(tmp_path / 'bad.json'), '--show'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and 'is not a record of runs' in r.stderr, r.stderr

def test_readme_states_the_recorded_make_reproduce_time():
    "The README's `make reproduce` time and its stages are the newest run recorded by tools/time_reproduce.py in nbs/reproduce_times.json."
    import pathlib, re
    root = pathlib.Path(__file__).resolve().parents[1]; sys.path.insert(0, str(root / 'tools'))
    try: import time_reproduce as tr
    finally: sys.path.pop(0)
    r = [x for x in json.loads((root / 'nbs' / 'reproduce_times.json').read_text())['runs'] if x.get('tier', 'default') == 'default'][-1]
    assert r['exit_status'] == 0 and r['report_written'] and r['site_written'] and not r['project_cache_in_home']
    readme = ' '.join((root / 'README.md').read_text().split())
    s = {k: tr.clock(v) for k, v in r['seconds'].items()}
    want = (f"`make reproduce` from a fresh clone, with an empty home folder and no cache, took {s['total']} on 2 CPU cores shared with other work "
            f"(load {r['load_start']:.1f} to {r['load_end']:.1f}): {s['venv']} for the venv")
    n = int(r['claims_line'].split()[0])                               # the run's own count (55 when this test was written)
    assert want in readme and f"{s['site']} for the site, {s['claims']} for the {n} claims that train no model" in readme, re.findall(r'`make reproduce` from a fresh clone[^.]*', readme)

def test_readme_states_the_recorded_trained_tier_time():
    "Issue 50: the README's `make reproduce TIER=trained` time is the newest trained-tier run recorded in nbs/reproduce_times.json (a fresh clone, an empty cache), and that run's report is the one the report page shows."
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1]; sys.path.insert(0, str(root / 'tools'))
    try: import time_reproduce as tr
    finally: sys.path.pop(0)
    r = [x for x in json.loads((root / 'nbs' / 'reproduce_times.json').read_text())['runs'] if x.get('tier') == 'trained' and not x.get('trained_size')][-1]
    assert r['exit_status'] == 0 and r['report_written'] and not r['project_cache_in_home']
    readme = ' '.join((root / 'README.md').read_text().split())
    want = f"`make reproduce TIER=trained` from a fresh clone, with an empty home folder and no cache, took {tr.clock(r['seconds']['total'])}"
    assert want in readme, want
    runs = json.loads((root / 'nbs' / 'report_summary.json').read_text())['runs']
    assert [x['commit'] for x in runs.values()] == [r['commit']], (list(runs), r['commit'])

def test_summary_line_grammar_for_one():
    "Issue 36 named '1 claims'; the audit found '1 claim: 1 checks pass' beside it."
    from pavlovattn.base.registry import summary_line
    row = lambda check: dict(check=check, paper='no number')
    assert summary_line([row('pass')]).startswith('1 claim: 1 check passes, 0 fail; ')
    assert summary_line([row('fail')]).startswith('1 claim: 0 checks pass, 1 fails; ')
    assert summary_line([row('pass'), row('pass'), row('fail')]).startswith('3 claims: 2 checks pass, 1 fails; ')
    assert summary_line([row('pass'), row('fail'), row('fail')]).startswith('3 claims: 1 check passes, 2 fail; ')

def test_quiet_claims_draw_no_progress():
    "Issue 36 audit: `reproduce --quiet` still drew every trained model's bar. A claim reads `claim_progress()`: False inside run_claims(progress=False), True inside progress=True or claim_output=True (what the CLI passes without --quiet), True again after (also after a claim that raised); the trained claims pass it on to their training."
    from pavlovattn.base import registry
    from pavlovattn.apps import probes
    seen = []
    def fn(full=False, device='cpu'):
        seen.append(registry.claim_progress())
        if len(seen) == 2: raise RuntimeError('a claim that fails')
        return registry.Verdict('ok', True)
    registry.claim('test-quiet-probe', 'a claim that records whether it may draw progress', source='test', expected='-')(fn)
    try:
        for p in (False, False, True): registry.run_claims(['test-quiet-probe'], progress=p)
        registry.run_claims(['test-quiet-probe'], progress=False, claim_output=True)   # the CLI: its own bar, the claim's output shown
    finally: registry.CLAIMS.pop('test-quiet-probe', None)
    assert seen == [False, False, True, True] and registry.claim_progress() is True
    import inspect
    src = inspect.getsource(probes)
    assert src.count('progress=claim_progress()') == 3, 'each trained claim family (run_families, run_ablation, rebind) passes the flag on'

def test_the_timing_records_say_seconds_rounded_once():
    "tools' one formatter of run times (tools/install.py `clock`, used by time_reproduce, run_all_times and time_install): rounded to the second before it is split, so 1439.6 s is 24 min 00 s, never '23 min 60 s'."
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1]; sys.path.insert(0, str(root / 'tools'))
    try: import time_reproduce as tr
    finally: sys.path.pop(0)
    assert [tr.clock(s) for s in (42.4, 119.4, 119.6, 1399.2, 1439.6)] == ['42 s', '119 s', '2 min 00 s', '23 min 19 s', '24 min 00 s']

def test_the_first_trained_protocol_is_trained_ahead_only_where_cores_would_idle():
    "Issue 50: `reproduce` trains the first trained claim's models in a thread while the claims before it run (`cli._ahead`), only where that uses idle cores: the claim comes after claims that train nothing, on the CPU, its models not retrained, not --full."
    from types import SimpleNamespace as NS
    from pavlovattn.apps.cli import _ahead, _trains, AHEAD
    from pavlovattn.base.registry import load_claims
    claims = load_claims(); assert _trains(claims[AHEAD])
    first = next(i for i in claims if not _trains(claims[i])); other = next(i for i in claims if _trains(claims[i]) and i != AHEAD)
    arg = lambda **k: NS(**{**dict(full=False, retrain=False, device='cpu'), **k})
    for ids, a in (([AHEAD], arg()), ([other, first, AHEAD], arg()), ([first, AHEAD], arg(retrain=True)), ([first, AHEAD], arg(full=True)),
                   ([first, AHEAD], arg(device='cuda')), ([first, other], arg())):
        assert _ahead(claims, ids, a) is None, ids

@pytest.mark.slow   # about 40 s: 12 models and 4 sweeps at the quick size
def test_the_first_trained_protocol_trained_ahead_is_what_its_claim_loads(tmp_path):
    "With a claim that trains nothing before it, `trained-cue-competition` finds every model trained (and probed) by the thread that ran beside that claim: it loads them all and trains none; the row is the claim's."
    import os
    env = {**os.environ, 'PAVLOVATTN_CACHE': str(tmp_path / 'c'), 'PAVLOVATTN_TRAINED_SIZE': 'quick'}
    r = subprocess.run([sys.executable, '-m', 'pavlovattn.apps.cli', 'reproduce', '--only', 'designs-rw-reference', 'trained-cue-competition',
                        '--json', str(tmp_path / 'r.json')], capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stderr.count('loaded from') == 12 and 'trained at once' not in r.stderr and 'ahead failed' not in r.stderr, r.stderr[-3000:]
    row = {x['id']: x for x in _rows(tmp_path / 'r.json')}['trained-cue-competition']
    assert row['measured'].startswith('[quick check') and row['check'] in ('pass', 'fail')
    assert row['seconds'] > 5, row['seconds']   # its wait for the models trained ahead counts as its time (it took 0.5 s of its own)

def test_the_workers_niceness_is_read_from_the_environment(monkeypatch):
    "`models.worker_nice`: PAVLOVATTN_WORKER_NICE as a whole number 0-19 (unset or empty: 0); anything else refused in one line naming the variable."
    from pavlovattn.apps.models import worker_nice
    for v, want in (('', 0), ('0', 0), (' 10 ', 10), ('19', 19)):
        monkeypatch.setenv('PAVLOVATTN_WORKER_NICE', v); assert worker_nice() == want
    monkeypatch.delenv('PAVLOVATTN_WORKER_NICE'); assert worker_nice() == 0
    for v in ('20', '-1', 'x', '2.5'):
        monkeypatch.setenv('PAVLOVATTN_WORKER_NICE', v)
        with pytest.raises(ValueError, match="PAVLOVATTN_WORKER_NICE must be a whole number from 0 to 19; got"): worker_nice()

@pytest.mark.slow   # about 40 s: 12 models and 4 sweeps at the quick size
def test_training_ahead_leaves_the_workers_niceness_as_it_was(tmp_path, monkeypatch):
    "`reproduce` sets PAVLOVATTN_WORKER_NICE (10) for a run that trains ahead, and only for that run: called in a process (a notebook's), it leaves the variable as it found it."
    from pavlovattn.apps.cli import main
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path / 'c')); monkeypatch.setenv('PAVLOVATTN_TRAINED_SIZE', 'quick')
    monkeypatch.delenv('PAVLOVATTN_WORKER_NICE', raising=False)
    assert main(['reproduce', '--only', 'designs-rw-reference', 'trained-cue-competition', '--quiet', '--json', str(tmp_path / 'r.json')]) in (0, 1)
    from pavlovattn.base import sweep
    try:
        assert 'PAVLOVATTN_WORKER_NICE' not in os.environ
        assert [k for k in sweep._KEPT if k[1] == 10], list(sweep._KEPT)   # it did train ahead: its pool, niced, is kept
        assert {x['id'] for x in _rows(tmp_path / 'r.json')} == {'designs-rw-reference', 'trained-cue-competition'}
    finally: sweep._close_kept()
