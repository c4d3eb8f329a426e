"""The `pavlovattn reproduce` contract: table, JSON rows, --only, --strict on the exact (theorem-type) claims, exit codes."""
import json, subprocess, sys
import pytest

def pv(*args):
    return subprocess.run([sys.executable, '-m', 'pavlovattn.cli', *args], capture_output=True, text=True, timeout=1800)

def test_exact_claims_pass_strictly(tmp_path):
    "Every exact (closed form vs simulation) claim passes under --strict; the JSON rows carry the documented keys."
    out = tmp_path / 'r.json'
    r = pv('reproduce', '--exact', '--strict', '--quiet', '--json', str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.loads(out.read_text())
    assert {'core-deltanet-is-rescorla-wagner', 'core-acquisition-closed-forms'} <= {x['id'] for x in rows}
    for x in rows:
        assert set(x) == {'id', 'claim', 'source', 'expected', 'measured', 'verdict', 'seconds', 'data'}
        assert x['verdict'] in ('pass', 'fail')
        assert x['verdict'] == 'pass', x
    head = r.stdout.splitlines()[0]
    assert [c.strip() for c in head.split('|')] == ['id', 'claim', 'source', 'expected', 'measured', 'verdict', 'seconds']

def test_only_runs_a_subset():
    r = pv('reproduce', '--only', 'core-acquisition-closed-forms', '--quiet')
    assert r.returncode == 0
    assert 'core-acquisition-closed-forms' in r.stdout and 'core-deltanet-is-rescorla-wagner' not in r.stdout

def test_list_names_every_claim():
    r = pv('reproduce', '--list')
    assert r.returncode == 0 and 'core-deltanet-is-rescorla-wagner' in r.stdout

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
