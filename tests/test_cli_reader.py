"""What a reader of the command line's output gets (issue 51): `reproduce --only` repeated or written with commas, the table
at the terminal's width, provenance in every report file (`reproduce --json`, `run --results-file`, a sweep table), a
compound probe as a row of its own in `run --format csv`, a probe of a cue never trained saying so. Each test fails on the
code before the issue (about 10 s in all; the probe-model one, a fresh process importing transformers, under --slow)."""
import contextlib, io, json, subprocess, sys
from pathlib import Path
import pandas as pd
import pytest
from pavlovattn.apps.cli import main

ROOT = Path(__file__).resolve().parent.parent
CHEAP = ['core-deltanet-is-rescorla-wagner', 'overexpectation-closed-form']     # a second or less each

def run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = main(list(args))
    return rc, out.getvalue(), err.getvalue()

def _head():
    return subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout.strip() or None

def test_only_repeated_runs_every_id_and_provenance_is_in_the_report(tmp_path, monkeypatch):
    "`--only A --only B` runs both (it ran only B); the report is {provenance, rows}, its commit this checkout's; the table fits the terminal."
    from pavlovattn.apps import cli
    monkeypatch.setattr(cli, '_terminal_columns', lambda: 110)           # a terminal 110 columns wide
    rc, out, err = run('reproduce', '--only', CHEAP[0], '--only', CHEAP[1], '--quiet', '--json', str(tmp_path / 'r.json'))
    assert rc == 0, err
    rep = json.loads((tmp_path / 'r.json').read_text())
    assert [r['id'] for r in rep['rows']] == CHEAP
    p = rep['provenance']
    assert set(p) == {'commit', 'dirty', 'date', 'tier', 'package', 'torch', 'python', 'device', 'threads'}
    assert p['tier'] == 'only' and p['commit'] == _head() and p['device'].startswith('cpu') and p['threads'] >= 1
    lines = out.splitlines()[:-1]                                          # the last: "report: PATH"
    assert max(map(len, lines)) <= 110, max(lines, key=len)               # was 258 columns whatever the terminal
    for w in ('core-deltanet-is-rescorla-wagner', 'overexpectation-closed-form'): assert w in out

def test_only_with_commas_says_to_use_spaces():
    rc, _, err = run('reproduce', '--only', ','.join(CHEAP))
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert 'separate ids with spaces (--only A B), not commas' in err

def test_run_results_file_has_its_provenance_beside_it(tmp_path):
    rc, _, err = run('run', '10A+ | #A', '--results-file', str(tmp_path / 'r.csv'))
    assert rc == 0, err
    assert pd.read_csv(tmp_path / 'r.csv').shape[0] > 0                  # the CSV stays plain: no comment line
    p = json.loads((tmp_path / 'r.csv.provenance.json').read_text())
    assert p['commit'] == _head() and p['tier'] is None and p['python'] == '.'.join(map(str, sys.version_info[:3]))

def test_sweep_table_has_its_provenance_beside_it(tmp_path):
    from pavlovattn.base.sweep import save
    save(pd.DataFrame({'a': [1]}), tmp_path / 't.csv')
    assert json.loads((tmp_path / 't.csv.provenance.json').read_text())['commit'] == _head()

DESIGN = 'g: 10A+ | #B | #AB; h: 5A+/5B+ | #AB'

def test_compound_probe_is_a_csv_row_and_an_untrained_cue_says_so():
    rc, out, err = run('run', DESIGN, '--format', 'csv')
    assert rc == 0, err
    t = pd.read_csv(io.StringIO(out), keep_default_na=False)
    ab = t[(t.trial_type == '#AB') & (t.cue == 'AB')]
    assert list(ab.group) == ['g', 'h']                                   # the compound's own row (was: only its A and B rows)
    h = t[(t.group == 'h') & (t.trial_type == '#AB')].set_index('cue')['mean']
    assert h['AB'] == pytest.approx(h['A'] + h['B']) and h['AB'] > 0.8  # delta with one-hot keys: the compound reads the sum
    assert set(t[t.trial_type == '#B'].note) == {'never trained before this probe: B'}
    assert set(t[t.group == 'h'].note) == {''}
    rc, out, _ = run('run', DESIGN)
    assert '#B              0  sd 0  n=1  (never trained before this probe: B)' in out
    assert out.count('never trained') == 2                                # #B and #AB of group g; none in h
    rc, out, _ = run('run', DESIGN, '--format', 'json')
    probes = json.loads(out)['groups']
    assert [x.get('never_trained') for x in probes['g']['probes']] == [['B'], ['B']]
    assert 'never_trained' not in probes['h']['probes'][0]

@pytest.mark.slow                                                         # a fresh process importing transformers: 10-40 s
def test_probe_model_prints_no_kernel_fallback_warning():
    "transformers said on every run that `causal_conv1d_fn` falls back to its PyTorch reference; the model's loader silences that note (a fresh process: the warning is once per process)."
    pytest.importorskip('transformers')
    code = ("import torch; from pavlovattn.apps.pretrained import load_model, read_layers\n"
            "m, tok = load_model('tiny:qwen3_next'); read_layers(m, torch.tensor([[1, 2, 3]]))")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300, env={**__import__('os').environ, 'HF_HUB_OFFLINE': '1'})
    assert r.returncode == 0, r.stderr[-500:]
    assert 'falling back' not in r.stderr, r.stderr

def test_a_report_with_trained_rows_names_the_checkpoint_version(tmp_path):
    "Issue 50: a report holding a trained-model row records the checkpoint code version of the models it used (the report page checks that version against the code's); a report without one does not (the test above)."
    from pavlovattn.base import registry
    from pavlovattn.base.cache import KINDS
    registry.load_claims()
    registry.claim('test-trains-probe', 'a claim marked as training models', source='test', expected='-', trains=True)(
        lambda full=False, device='cpu': registry.Verdict('ok', True))
    try: rc, out, err = run('reproduce', '--only', 'test-trains-probe', '--quiet', '--json', str(tmp_path / 'r.json'))
    finally: registry.CLAIMS.pop('test-trains-probe', None)
    assert rc == 0, err
    assert json.loads((tmp_path / 'r.json').read_text())['provenance']['checkpoint_version'] == KINDS['checkpoint'].version
