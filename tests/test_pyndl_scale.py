"""pyndl files that scale (issue 31, issue 32 reproducer 2): each distinct event is no longer a row of the tables; steps that learn alike
share one, so 20,000 alternating events cost megabytes, and the memory estimate counts the compiled kernel's Gram table. Every
outcome of a file in one pass (kernels.delta_events, interop.learn_pyndl): equal to the delta family's reference loop and to pyndl,
in memory that does not grow with the events."""
import json, os, subprocess, sys
import pytest
from pavlovattn.design.designs import simulate, memory_estimate
from pavlovattn.apps.interop import read_pyndl

def _file(p, n=20000):
    p.write_text('cues\toutcomes\n' + ''.join('A\tUS\n' if i % 2 == 0 else 'B_C\t\n' for i in range(n))); return p

def test_20000_events_run_in_megabytes(tmp_path):
    d = read_pyndl(_file(tmp_path / 'ev.tab'))
    assert len(d.groups[0].trial_types) == 20000                           # every event a trial type, as written
    est = memory_estimate(d)
    assert est['total'] < 16 * 2**20 and est['tables'] < 2**20, est         # two distinct trial types (the estimate counts the kernel's window since 2d732fc: 8.4 MiB)
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

def test_distinct_probes_stay_apart():
    r = simulate('4A+ | #A | 4A+ | #A | 4A+', beta=0.5)
    assert [x['mean'] for x in r.probes['group']] == pytest.approx([1 - 0.5**4, 1 - 0.5**8], abs=1e-15)


# ---------------------------------------------------------------- every outcome in one pass: kernels.delta_events, interop.learn_pyndl
import gzip, os, resource
import numpy as np
import torch
from pavlovattn.model.core import recur, rescorla_wagner, NonFiniteError
from pavlovattn.design.designs import DesignError
from pavlovattn.model.kernels import delta_events, _events
from warm_cli import cli      # the command from a warm start: a process per call, forked after the imports
from pavlovattn.apps.interop import learn_pyndl

def _events_csr(evs):
    "Events [(cues, outcomes)] as the kernel's offsets and indices."
    return (np.cumsum([0] + [len(c) for c, _ in evs]), [c for cs, _ in evs for c in cs],
            np.cumsum([0] + [len(o) for _, o in evs]), [o for _, os_ in evs for o in os_])

def _random_events(rng, n, cues, outcomes, k=(1, 5), m=(0, 3)):
    return [(rng.choice(cues, rng.integers(*k), replace=False).tolist(), rng.choice(outcomes, rng.integers(*m), replace=False).tolist()) for _ in range(n)]

def test_delta_events_is_recur_with_one_head_per_outcome():
    """The reference loop of the delta family (recur, algorithm='reference'): one head per outcome, key sqrt(alpha) * x, value lam [o present],
    rate beta1 or beta2 per head and step; W = S * sqrt(alpha). With beta1 = beta2, each outcome is also core.rescorla_wagner's textbook loop."""
    rng = np.random.default_rng(3); C, O, T = 12, 4, 80
    evs, alpha, (b1, b2), lam = _random_events(rng, T, C, O), rng.uniform(0.1, 0.6, C), (0.35, 0.2), 0.9
    W = delta_events(np.zeros((C, O)), *_events_csr(evs), alpha, (b1, b2), lam)
    X = torch.zeros(1, T, O, C, dtype=torch.float64); Y = torch.zeros(1, T, O, 1, dtype=torch.float64)
    for t, (cs, os_) in enumerate(evs):
        X[0, t, :, cs] = 1.0; Y[0, t, os_, 0] = lam
    k = X * torch.from_numpy(np.sqrt(alpha))
    beta = torch.full((1, T, O), b2, dtype=torch.float64); beta[Y[..., 0] > 0] = b1
    tr = recur(k, Y, beta=beta, algorithm='reference')
    ref = (tr.state[0, :, 0, :] * torch.from_numpy(np.sqrt(alpha))).T.numpy()
    assert np.abs(W - ref).max() < 1e-12 and np.abs(ref).max() > 0.1
    W1 = delta_events(np.zeros((C, O)), *_events_csr(evs), alpha, (b1, b1), lam)
    for o in range(O):
        x = [[float(c in cs) for c in range(C)] for cs, _ in evs]
        V = np.array(rescorla_wagner(x + [[0.0] * C], [lam * (o in os_) for _, os_ in evs] + [0.0], alpha, b1)[-1])
        assert np.abs(W1[:, o] - V).max() < 1e-12

def test_delta_events_without_numba_is_the_same_loop():
    "The Python function numba compiles (what runs when numba is missing) gives the same weights."
    rng = np.random.default_rng(4); evs = _random_events(rng, 40, 9, 3)
    cp, ci, op, oi = (np.asarray(x, dtype=np.int64) for x in _events_csr(evs))
    alpha = rng.uniform(0.1, 0.5, 9); W = delta_events(np.zeros((9, 3)), cp, ci, op, oi, alpha, (0.3, 0.1), 1.0)
    py = getattr(_events, 'py_func', _events); W2 = np.zeros((9, 3))
    py(W2, 3, cp, ci, op, oi, np.ones(40, np.int64), alpha, 0.3, 0.1, 1.0, np.empty(3), np.empty(3), np.empty(3))
    assert np.abs(W - W2).max() < 1e-15

def _write(path, evs, cue=lambda c: f'c{c}', out=lambda o: f'o{o}'):
    with gzip.open(path, 'wt') as f:
        f.write('cues\toutcomes\n' + ''.join('_'.join(map(cue, cs)) + '\t' + '_'.join(map(out, os_)) + '\n' for cs, os_ in evs))
    return path

def _pyndl_ndl(path, alpha, betas, lambda_, tmp):
    """pyndl's own `ndl` (openmp, 1 job) in a fresh interpreter: in a process that has forked workers or started threads
    (a test session: torch, numba, Dask) pyndl 1.2.4's worker pool deadlocks (its error callback then fails to unpack None)."""
    import pandas as pd
    code = ("import sys; from pyndl import ndl\n"
            f"ndl.ndl(sys.argv[1], {alpha!r}, {tuple(betas)!r}, lambda_={lambda_!r}, method='openmp', n_jobs=1).to_pandas().to_csv(sys.argv[2])")
    subprocess.run([sys.executable, '-c', code, str(path), str(tmp / 'pyndl.csv')], check=True, timeout=300)
    return pd.read_csv(tmp / 'pyndl.csv', index_col=0)

def test_learn_pyndl_equals_pyndl(tmp_path):
    """pyndl 1.2.4 (the dev extra) on the same file: `ndl` (openmp, scalar alpha) and `dict_ndl` (alpha per cue), every outcome,
    2,000 events of 50 cues x 5 outcomes, to 1e-12; ours in chunks of 333 events (the chunks change nothing)."""
    from pyndl import ndl
    rng = np.random.default_rng(5); evs = _random_events(rng, 2000, 50, 5, (2, 9), (1, 3))
    p = _write(tmp_path / 'ev.tab.gz', evs)
    ours = learn_pyndl(p, alpha=0.1, betas=(0.2, 0.05), chunk=333)
    theirs = _pyndl_ndl(p, 0.1, (0.2, 0.05), 1.0, tmp_path)
    assert ours.shape == (5, 50) and set(ours.index) == set(theirs.index) and set(ours.columns) == set(theirs.columns)
    assert np.abs(theirs.loc[ours.index, ours.columns].to_numpy() - ours.to_numpy()).max() < 1e-12 and ours.abs().max().max() > 0.1
    alphas = {f'c{c}': float(a) for c, a in enumerate(rng.uniform(0.02, 0.2, 50))}
    ours = learn_pyndl(p, alpha=alphas, betas=(0.2, 0.05))
    d = ndl.dict_ndl(str(p), alphas, (0.2, 0.05))
    assert max(abs(d[o][c] - ours.loc[o, c]) for o in ours.index for c in ours.columns) < 1e-12

def test_learn_pyndl_refuses(tmp_path):
    p = tmp_path / 'e.tab'
    for text, msg in [('cues\toutcomes\nA_B\tX\nA_A\tX\n', 'line 3: a cue appears twice in one event'),
                      ('cues\toutcomes\nA\tX_X\n', 'line 2: an outcome appears twice'),
                      ('cues\toutcomes\nA__B\tX\n', 'line 2: empty cue name'),
                      ('cues\toutcomes\nA\tX\t0\n', 'every event has frequency 0'),
                      ('cues\toutcomes\n', 'no events after the header')]:
        p.write_text(text)
        with pytest.raises(DesignError, match=msg): learn_pyndl(p)
    p.write_text('cues\toutcomes\nA_B\tX\n')
    with pytest.raises(DesignError, match="cue 'B' has no alpha"): learn_pyndl(p, alpha={'A': 0.1})
    p.write_text('cues\toutcomes\n' + 'A_B_C\tX\n' * 2000)                  # beta * 3 alpha = 2.7: each error times -1.7
    with pytest.raises(NonFiniteError, match='overflowed'): learn_pyndl(p, alpha=1.0, betas=(0.9, 0.9))
    p.write_text('cues\toutcomes\tfrequency\nA\tX\t3\nB\t\t1\nA_B\tY\t2\n')       # repeats, an event without outcomes, an outcome seen late
    W, wa, wb, ya, yb = learn_pyndl(p, alpha=0.5, betas=(0.4, 0.2)), 0.0, 0.0, 0.0, 0.0
    for _ in range(3): wa += 0.5 * (0.4 * (1 - wa))                         # A -> X, three times; B alone: no error, no change
    for _ in range(2):                                                       # A_B: X absent (towards 0), Y present (towards 1)
        e = 0.2 * (0 - (wa + wb)); wa += 0.5 * e; wb += 0.5 * e
        e = 0.4 * (1 - (ya + yb)); ya += 0.5 * e; yb += 0.5 * e
    assert list(W.index) == ['X', 'Y'] and list(W.columns) == ['A', 'B'] and W.attrs['events'] == 6
    assert np.abs(W.to_numpy() - [[wa, wb], [ya, yb]]).max() < 1e-12

def _rss_growth(code, *args):
    "Run `code` in a fresh interpreter; its peak resident set minus the one before `run()` (MiB), and what it printed."
    src = ("import resource, sys\n" + code + "\nbefore = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\nout = run()\n"
           "print(out, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)")
    r = subprocess.run([sys.executable, '-c', src, *map(str, args)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    *out, mib = r.stdout.split()
    return ' '.join(out), float(mib)

def _pyndl_shape_file(path, events, seed=0):
    "pyndl's usual shape: 500 cues, 50 outcomes, about 11 cues and 1-2 outcomes per event (benchmarks/bench_pyndl.py's generator)."
    import importlib.util, pathlib
    spec = importlib.util.spec_from_file_location('bench_pyndl', pathlib.Path(__file__).parent.parent / 'benchmarks' / 'bench_pyndl.py')
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    m.write_events(path, events, seed); return path

def test_1e5_events_500_cues_50_outcomes_in_bounded_memory(tmp_path):
    """Issue 31: 1e5 events of 500 cues x 50 outcomes, which the trial-type route asked 75 GiB for, learn in one pass with memory that
    does not grow with the events: the peak grows by less than 16 MiB during the call (W is 200 KB, a chunk of 4,096 events about 1 MiB)."""
    p = _pyndl_shape_file(tmp_path / 'e.tab.gz', 100_000)
    out, mib = _rss_growth("from pavlovattn.apps.interop import learn_pyndl\nlearn_pyndl(sys.argv[1], chunk=1000)\n"
                           "run = lambda: (lambda W: f'{W.shape[0]}x{W.shape[1]}:{W.attrs[\"events\"]}')(learn_pyndl(sys.argv[1]))", p)
    assert out == '50x500:100000' and mib < 16, (out, mib)

def test_cli_pyndl_20000_events_under_100_mb(tmp_path):
    """Issue 32: the 20,000-event alternating file through the CLI peaks less than 100 MB above the same CLI on a 2-event file
    (peak resident sets from wait4, numba's kernel loaded from its cache in both: most of the difference is loading it)."""
    f, small = _file(tmp_path / 'ev.tab'), _file(tmp_path / 'small.tab', 2)
    simulate(read_pyndl(f), beta=1e-4)                                      # fills numba's on-disk cache: loaded, not compiled, below
    outs, rss = [], []
    for path in (small, f):
        p = subprocess.Popen([sys.executable, '-m', 'pavlovattn.apps.cli', 'run', '--pyndl', str(path), '--beta', '1e-4', '--format', 'json'],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out = p.stdout.read(); p.stdout.close()
        _, status, ru = os.wait4(p.pid, 0); p.returncode = status
        assert status == 0, path
        outs.append(out); rss.append(ru.ru_maxrss / 1024)
    assert json.loads(outs[1])['groups']['group']['strengths']['A'] == pytest.approx(1 - (1 - 1e-4)**10000, abs=1e-12)
    assert rss[1] - rss[0] < 100, rss

@pytest.mark.slow
def test_1e6_events_in_bounded_memory(tmp_path):
    "The benchmark's 1e6 events (500 cues x 50 outcomes): the peak grows by less than 16 MiB during the call, as for 1e5 (about 1 min)."
    p = _pyndl_shape_file(tmp_path / 'e.tab.gz', 1_000_000)
    out, mib = _rss_growth("from pavlovattn.apps.interop import learn_pyndl\nlearn_pyndl(sys.argv[1], chunk=1000)\n"
                           "run = lambda: (lambda W: f'{W.shape[0]}x{W.shape[1]}:{W.attrs[\"events\"]}')(learn_pyndl(sys.argv[1]))", p)
    assert out == '50x500:1000000' and mib < 16, (out, mib)


# ---------------------------------------------------------------- the command line: pavlovattn run --pyndl EVENTS --all-outcomes
def _cli(*args, **kw):
    if kw:                                       # a resource limit set before the command starts: a process of its own
        return subprocess.run([sys.executable, '-m', 'pavlovattn.apps.cli', 'run', *map(str, args)], capture_output=True, text=True, timeout=600, **kw)
    return cli('run', *args, timeout=600)

def test_cli_all_outcomes_equals_learn_pyndl_and_pyndl(tmp_path):
    """`run --pyndl EVENTS --all-outcomes` is learn_pyndl with alpha = --salience (default 1), betas = (--beta, --beta-minus),
    lambda = --lam; its CSV (stdout and --results-file) and JSON equal learn_pyndl and pyndl 1.2.4's own `ndl` and `dict_ndl` to 1e-12
    (2,000 events of 50 cues x 5 outcomes)."""
    import pandas as pd
    from io import StringIO
    from pyndl import ndl
    rng = np.random.default_rng(6); evs = _random_events(rng, 2000, 50, 5, (2, 9), (1, 3))
    p = _write(tmp_path / 'ev.tab.gz', evs)
    r = _cli('--pyndl', p, '--all-outcomes', '--beta', '0.02', '--beta-minus', '0.005', '--lam', '0.8', '--format', 'csv',
             '--results-file', tmp_path / 'w.csv')
    assert r.returncode == 0 and r.stderr == '', r.stderr
    got = pd.read_csv(StringIO(r.stdout), index_col=0)
    ours = learn_pyndl(p, alpha=1.0, betas=(0.02, 0.005), lambda_=0.8)
    theirs = _pyndl_ndl(p, 1.0, (0.02, 0.005), 0.8, tmp_path)
    assert list(got.index) == list(ours.index) and list(got.columns) == list(ours.columns) and got.shape == (5, 50)
    assert np.abs(got.to_numpy() - ours.to_numpy()).max() < 1e-12 and np.abs(got.abs().to_numpy()).max() > 0.1
    assert np.abs(got.to_numpy() - theirs.loc[got.index, got.columns].to_numpy()).max() < 1e-12
    assert np.abs(pd.read_csv(tmp_path / 'w.csv', index_col=0).to_numpy() - got.to_numpy()).max() == 0      # the file: the same table
    sal = {'c0': 0.5, 'c7': 2.0}                                             # --salience per cue; a cue it does not name has 1
    r = _cli('--pyndl', p, '--all-outcomes', '--salience', 'c0=0.5,c7=2', '--beta', '0.02', '--format', 'json')
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    d = ndl.dict_ndl(str(p), {c: sal.get(c, 1.0) for c in ours.columns}, (0.02, 0.02))
    assert j['events'] == 2000 and j['params']['alpha'] == {c: sal.get(c, 1.0) for c in ours.columns} and j['params']['betas'] == [0.02, 0.02]
    assert max(abs(j['weights'][o][c] - d[o][c]) for o in j['outcomes'] for c in j['cues']) < 1e-12

def test_cli_all_outcomes_1e5_events_in_bounded_memory(tmp_path):
    """The 1e5-event file of 500 cues x 50 outcomes through the command's entry point (main, JSON out): the peak grows by less than 32 MiB
    (bound fixed before measuring: 200 KB of weights, one chunk of events, the JSON text and its parse), where the design route asks 77.5 GiB."""
    p, small = _pyndl_shape_file(tmp_path / 'e.tab.gz', 100_000), _pyndl_shape_file(tmp_path / 's.tab.gz', 1000)
    code = ("import contextlib, io, json\nfrom pavlovattn.apps.cli import main\n"
            "def cli(path):\n    buf = io.StringIO()\n"
            "    with contextlib.redirect_stdout(buf): rc = main(['run', '--pyndl', path, '--all-outcomes', '--format', 'json'])\n"
            "    j = json.loads(buf.getvalue()); return f\"{rc}:{len(j['outcomes'])}x{len(j['cues'])}:{j['events']}\"\n"
            "cli(sys.argv[2])\nrun = lambda: cli(sys.argv[1])")
    out, mib = _rss_growth(code, p, small)
    assert out == '0:50x500:100000' and mib < 32, (out, mib)

def test_cli_design_route_too_big_names_all_outcomes(tmp_path):
    """Under a 2.5 GiB address-space limit (ulimit -v), 20,000 distinct events read as a design (--outcome) need more (their trial-type
    tables alone 2.6 GiB): refused in one line, exit 2, naming --all-outcomes; under the same limit --all-outcomes learns every outcome."""
    import resource
    from io import StringIO
    import pandas as pd
    rng = np.random.default_rng(5); p = _write(tmp_path / 'd.tab.gz', _random_events(rng, 20000, 50, 5, (2, 9), (1, 3)))
    lim = lambda: resource.setrlimit(resource.RLIMIT_AS, (5 << 29, 5 << 29))
    r = _cli('--pyndl', p, '--outcome', 'o0', preexec_fn=lim)
    assert r.returncode == 2 and r.stdout == '' and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith('pavlovattn run: this run needs about') and '; --all-outcomes learns every outcome' in r.stderr, r.stderr
    r = _cli('--pyndl', p, '--all-outcomes', '--format', 'csv', preexec_fn=lim)
    assert r.returncode == 0, r.stderr
    got, ours = pd.read_csv(StringIO(r.stdout), index_col=0), learn_pyndl(p, alpha=1.0, betas=(0.1, 0.1))
    assert got.shape == (5, 50) and np.abs(got.to_numpy() - ours.loc[got.index, got.columns].to_numpy()).max() < 1e-12
