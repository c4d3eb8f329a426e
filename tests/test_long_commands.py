"""Issue 51 item 4 for `battery` and `sweep`: estimated over SAY_FROM_S (lowered here, as tests/test_run_time.py does for
`run`), the estimate and a progress bar go to stderr, never to stdout; --quiet says nothing."""
import contextlib, io, json
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
