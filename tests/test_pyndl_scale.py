"""pyndl files that scale (issue 31, issue 32 reproducer 2): each distinct event is no longer a row of the tables; steps that learn alike
share one, so 20,000 alternating events cost megabytes, and the memory estimate counts the compiled kernel's Gram table."""
import json, subprocess, sys
import pytest
from pavlovattn.designs import simulate, memory_estimate
from pavlovattn.interop import read_pyndl

def _file(p, n=20000):
    p.write_text('cues\toutcomes\n' + ''.join('A\tUS\n' if i % 2 == 0 else 'B_C\t\n' for i in range(n))); return p

def test_20000_events_run_in_megabytes(tmp_path):
    d = read_pyndl(_file(tmp_path / 'ev.tab'))
    assert len(d.groups[0].trial_types) == 20000                           # every event a trial type, as written
    est = memory_estimate(d)
    assert est['total'] < 8 * 2**20 and est['tables'] < 2**20, est          # two distinct trial types
    beta = 1e-4
    r = simulate(d, beta=beta)
    A, B = 0.0, 0.0                                                       # Rescorla-Wagner by hand: A+ and BC- alternate, no shared cue
    for i in range(20000):
        if i % 2 == 0: A += beta * (1 - A)
        else: B += beta * (0 - 2 * B)
    assert r.strengths['group']['A'] == pytest.approx(A, abs=1e-12) and A > 0.6
    assert abs(r.strengths['group']['B']) < 1e-300
    big = memory_estimate(d, per_subject=True)                           # every step its own row: the [N, N + C] Gram table is counted
    assert big['tables'] >= 8 * 20000 * 20000 and big['total'] > 2.9 * 2**30

def test_cli_pyndl_20000_events(tmp_path):
    f = _file(tmp_path / 'ev.tab')
    r = subprocess.run([sys.executable, '-m', 'pavlovattn.cli', 'run', '--pyndl', str(f), '--beta', '1e-4', '--format', 'json'], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)['groups']['group']['strengths']['A'] == pytest.approx(1 - (1 - 1e-4)**10000, abs=1e-12)

def test_distinct_probes_stay_apart():
    r = simulate('4A+ | #A | 4A+ | #A | 4A+', beta=0.5)
    assert [x['mean'] for x in r.probes['group']] == pytest.approx([1 - 0.5**4, 1 - 0.5**8], abs=1e-15)
