"tools/run_all_times.py: a real Run All of one small page in a fresh Jupyter kernel, recorded with its tree check; bad input refused."
import json, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / 'tools' / 'run_all_times.py'

def _run(*args):
    return subprocess.run([sys.executable, str(TOOL), *args], cwd=ROOT, capture_output=True, text=True, timeout=600)

def test_run_all_of_the_front_page_is_recorded_with_its_outputs(tmp_path):
    "The front page (no export cell) runs to the end in a real kernel; the record says ok, no tree change, and the executed copy has outputs."
    jp, od = tmp_path / 'times.json', tmp_path / 'out'
    r = _run('--paths', 'nbs/index.ipynb', '--json_path', str(jp), '--out_dir', str(od))
    assert r.returncode == 0, r.stdout + r.stderr
    rec = json.loads(jp.read_text())['notebooks']['index.ipynb']
    assert rec['ok'] and rec['error'] is None and rec['tree_changed'] == [], rec
    assert 0 < rec['seconds'] < 600
    nb = json.loads((od / 'index.ipynb').read_text())
    assert any(c.get('outputs') for c in nb['cells'] if c['cell_type'] == 'code')   # it really executed
    t = _run('--json_path', str(jp), '--table_only').stdout
    assert '| index.ipynb |' in t and '| ok |' in t

def test_bad_input_is_one_line_and_exit_2(tmp_path):
    r = _run('--paths', 'nbs/no_such_page.ipynb', '--json_path', str(tmp_path / 't.json'))
    assert r.returncode == 2 and r.stderr.strip().splitlines() == ['run_all_times: no such notebook in nbs/: no_such_page.ipynb']
    r = _run('--paths', 'nbs/index.ipynb', '--out_dir', str(ROOT / 'nbs'), '--json_path', str(tmp_path / 't.json'))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and '--out_dir must be outside' in r.stderr
    assert not (tmp_path / 't.json').exists()
