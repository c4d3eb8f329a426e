"""Issue 49 item 7 and issue 51 item 4: `run` is timed before it starts (`designs.time_estimate`, measured on the spot),
refused in one line where it would take more than an hour, and a long run says how long it will take and shows its progress
on stderr; Ctrl-C during a long run is one line and exit 130."""
import re, contextlib, io, json, signal, subprocess, sys, time
import pytest
from pavlovattn.apps import cli
from pavlovattn.design import designs
from pavlovattn.design.designs import simulate, time_estimate

def main(*args):
    "`pavlovattn run ARGS` in this process: (exit status, stdout, stderr)."
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = cli.main(['run', *args])
    return rc, out.getvalue(), err.getvalue()

def test_a_billion_subjects_are_refused_in_one_line_naming_the_estimate_and_the_way_on(monkeypatch):
    "Before, `--subjects 10**9` was accepted and ran for hours; now the estimate (timed here) refuses it, exit 2. 9e11 subject-trials: hours at the ~4e7 a second measured here, more than an hour on a machine five times faster (CI's: 76 min); were it not refused, the run stops at once (simulate replaced)."
    def never(*a, **k): raise AssertionError('the run was not refused')
    monkeypatch.setattr(designs, 'simulate', never)
    t = time.perf_counter()
    rc, out, err = main('!450A+/450B- | #A', '--subjects', str(10**9))
    assert rc == 2 and out == '' and len(err.strip().splitlines()) == 1, err
    assert re.search(r'would take about [0-9.]+ (min|h) on this machine', err) and 'timed on the spot' in err and '--no-ceiling' in err, err   # 76 min on CI's faster machine
    assert time.perf_counter() - t < 20                               # refused before it runs

def test_a_long_run_says_its_estimate_and_shows_a_bar_on_stderr_only(monkeypatch):
    "Over SAY_FROM_S (here lowered to 0 so that a 0.1 s run counts as long): the estimate and a progress bar on stderr; stdout stays the JSON; --quiet says nothing."
    monkeypatch.setattr(cli, 'SAY_FROM_S', 0)
    args = ('!2000A+/2000B- | #A', '--subjects', '600', '--format', 'json')
    rc, out, err = main(*args)
    assert rc == 0 and json.loads(out)['params']['subjects'] == 600
    assert err.splitlines()[0].startswith('pavlovattn run: about ') and 'a second, timed on the spot' in err, err
    assert 'subject-trials/s' in err or '2.4M/2.4M' in err or '%|' in err, err   # tqdm's bar
    rc, out2, err = main(*args, '--quiet')
    assert rc == 0 and err == '' and out2 == out

def test_progress_reaches_every_subject_trial_and_never_goes_back():
    "simulate(progress=f): f sees the subject-trials done so far, non-decreasing, ending at subjects x trials of every group."
    seen = []
    simulate('a: !3000A+/3000B- | #A ; b: 20A+', subjects=40, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 40 * (6001 + 20)

def test_the_estimate_is_the_run_s_order_of_magnitude():
    "time_estimate within 5x of the run it predicts (a 2-core machine under load: one order of magnitude is what the refusal needs)."
    design, subjects = '!20000A+/20000B- | #A', 500
    est = time_estimate(design, subjects)
    t = time.perf_counter(); simulate(design, subjects=subjects); took = time.perf_counter() - t
    assert est['subject_trials'] == subjects * 40_001 and 1 / 5 < est['seconds'] / took < 5, (est, took)

def test_ctrl_c_during_a_long_run_is_one_line_and_exit_130_within_seconds():
    """A real SIGINT as soon as the progress bar shows: one line (after the estimate) within 5 s, exit 130, no traceback (issue 51 item 4: 31 lines before).
    The child starts with SIGINT at its default, as a terminal's foreground job has: a shell starts a background job (`cmd &`,
    `nohup`, as the fresh-clone runs were started) with SIGINT ignored, and Python then keeps it ignored; that, not numba, was
    why the SIGINT was lost there. 20,000 subjects x 100,001 trials: one compiled call took 8,192 x 58,254 subject-steps (over 10 s)
    before calls were cut at `kernels.CALL_ITEMS` (Python answers a signal only between calls)."""
    p = subprocess.Popen([sys.executable, '-m', 'pavlovattn.apps.cli', 'run', '!50000A+/50000B- | #A', '--subjects', '20000', '--format', 'json'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = p.stderr.readline()                                    # the estimate: the run has begun
        assert first.startswith('pavlovattn run: about '), first
        seen = ''
        while '%|' not in seen and (ch := p.stderr.read(1)): seen += ch  # the bar: the run is in its loop
        t = time.perf_counter(); p.send_signal(signal.SIGINT)
        while 'interrupted' not in seen and (ch := p.stderr.read(1)): seen += ch
        answered = time.perf_counter() - t
        out, err = p.communicate(timeout=60)
        err = seen + err
    finally:
        if p.poll() is None: p.kill(); p.wait()                        # never left running
    lines = [l for l in err.replace('\r', '\n').splitlines() if l.strip() and '|' not in l]   # the bar's redraws left out
    assert p.returncode == 130 and out == '' and lines == ['pavlovattn run: interrupted'], err[-2000:]
    assert answered < 5, answered                                      # a compiled call is about CALL_ITEMS subject-steps: well under a second here
