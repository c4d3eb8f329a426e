"""Issue 51 item 4 for `battery` and `sweep`: estimated over SAY_FROM_S (lowered here, as tests/test_run_time.py does for
`run`), the estimate and a progress bar go to stderr, never to stdout; --quiet says nothing."""
import contextlib, io, json
import pandas as pd
from pavlovattn.apps import cli, battery
from pavlovattn.design import phenomena

def main(*args):
    "`pavlovattn ARGS` in this process: (exit status, stdout, stderr)."
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = cli.main(list(args))
    return rc, out.getvalue(), err.getvalue()

def test_a_long_battery_says_its_estimate_and_shows_a_bar_on_stderr_only(monkeypatch):
    "Two rows (acquisition: one subject, not estimated; blocking: 30,000 subjects x 82 trials, timed on the spot), SAY_FROM_S 0: the estimate names what it counts, tqdm's bar follows; --quiet: nothing on stderr, the same JSON."
    reg = phenomena.registered()
    monkeypatch.setattr(battery, 'registered', lambda: {k: reg[k] for k in ('acquisition', 'blocking')})
    monkeypatch.setattr(cli, 'SAY_FROM_S', 0)
    args = ('battery', 'delta', '--subjects', '30000', '--format', 'json')
    rc, out, err = main(*args)
    assert rc == 0 and [r['phenomenon'] for r in json.loads(out)['rows']] == ['acquisition', 'blocking'], out[-500:]
    first = err.splitlines()[0]
    assert first.startswith('battery delta: about ') and first.endswith(
        ' on this machine for 1 randomised row (timed on the spot; the other 1 (one subject, or measured) not counted)'), err
    assert '%|' in err, err                                                   # tqdm's bar, with its ETA
    rc, out2, err = main(*args, '--quiet')
    assert rc == 0 and err == '' and out2 == out

def _quick(x): return {'y': 2 * x}

def test_a_long_sweep_says_its_estimate_on_stderr_only(monkeypatch, tmp_path):
    "A kind that estimates 4 s a task, three tasks, SAY_FROM_S 0: one line before the run, on stderr (the CSV on stdout unchanged); --quiet: no line; under the threshold (SAY_FROM_S 13 > 12 s): no line."
    from pavlovattn.base import sweep, cache
    monkeypatch.setattr(sweep, 'KINDS', dict(sweep.KINDS)); monkeypatch.setattr(cache, 'KINDS', dict(cache.KINDS))   # registered for this test only
    sweep.kind('quick-test', estimate=lambda x: 4.0)(_quick)
    grid = tmp_path / 'grid.json'; grid.write_text(json.dumps({'task': 'quick-test', 'grid': {'x': [1, 2, 3]}}))
    monkeypatch.setattr(cli, 'SAY_FROM_S', 0)
    rc, out, err = main('sweep', str(grid), '--cache', str(tmp_path / 'c1'))
    said = [l for l in err.replace('\r', '\n').splitlines() if l.startswith('pavlovattn sweep: about')]
    assert rc == 0 and said == ['pavlovattn sweep: about 12 s on this machine for 3 of its 3 tasks to run, one after another (timed on the spot)'], err
    assert sorted(pd.read_csv(io.StringIO(out)).y) == [2, 4, 6]                  # stdout: the table only
    rc, out2, err = main('sweep', str(grid), '--cache', str(tmp_path / 'c2'), '--quiet')
    assert rc == 0 and 'about' not in err and out2 == out
    monkeypatch.setattr(cli, 'SAY_FROM_S', 13)
    rc, _, err = main('sweep', str(grid), '--cache', str(tmp_path / 'c3'))
    assert rc == 0 and 'about' not in err, err
