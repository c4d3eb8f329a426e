"""The sweep runner on real backends: a real Dask LocalCluster of 2 worker processes, a real process pool, real worker and
driver kills, two real sweeps on one cache, worker resources (GPU) on CPU. Each test is time-boxed (SIGALRM, 120 s); together
they took 103 s on 2 shared, busy cores (the three-backend table 40 s of it)."""
import json, os, signal, subprocess, sys, textwrap, threading, time
from pathlib import Path
import pytest
from pavlovattn.base import sweep as sw

distributed = pytest.importorskip('distributed', reason='the Dask tests need dask[distributed] (in the dev extras)')

TASK_FILE = textwrap.dedent('''
    import os, time
    def square(x, pause=0.0, marks=None):
        "x squared, after `pause` seconds; leaves a mark <x>-<pid> in `marks` when it starts; x = 13 raises; x = 2 is Ctrl-C while a file 'interrupt' is beside `marks`."
        if marks: open(os.path.join(marks, f'{x}-{os.getpid()}'), 'w').close()
        if marks and x == 2 and os.path.exists(os.path.join(marks, '..', 'interrupt')): raise KeyboardInterrupt   # Ctrl-C inside a task
        time.sleep(pause)
        if x == 13: raise ValueError('thirteen is refused')
        return dict(square=x * x, half=x / 2)
''')

@pytest.fixture(autouse=True)
def time_box():
    "Each test fails instead of hanging CI (120 s)."
    def stop(*_): raise TimeoutError('sweep test ran over its 120 s time box')
    old = signal.signal(signal.SIGALRM, stop); signal.alarm(120)
    yield
    signal.alarm(0); signal.signal(signal.SIGALRM, old)

@pytest.fixture(scope='module')
def checkpoints(tmp_path_factory):
    "The trained models' checkpoints in a folder of this module's own, for this process and every worker started after it."
    old = os.environ.get('PAVLOVATTN_CACHE'); os.environ['PAVLOVATTN_CACHE'] = str(tmp_path_factory.mktemp('checkpoints'))
    yield os.environ['PAVLOVATTN_CACHE']
    if old is None: os.environ.pop('PAVLOVATTN_CACHE')
    else: os.environ['PAVLOVATTN_CACHE'] = old

@pytest.fixture(scope='module')
def client(checkpoints):
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=':0', silence_logs=50)
    c = distributed.Client(cluster)
    yield c
    c.close(); cluster.close()

def square_grid(tmp_path, xs, pause=0.0, marks=True):
    (tmp_path / 'tasks.py').write_text(TASK_FILE)
    m = tmp_path / 'marks'; m.mkdir(exist_ok=True)
    return dict(task='tasks.py:square', fixed=dict(pause=pause, **({'marks': str(m)} if marks else {})), grid=dict(x=list(xs)),
                base=str(tmp_path))

def marks(tmp_path):
    "x -> pids of the processes that started it."
    out = {}
    for p in (tmp_path / 'marks').iterdir():
        x, pid = p.name.split('-'); out.setdefault(int(x), []).append(int(pid))
    return out

def entries(cache):
    return sorted(Path(cache).glob('sweep/*/*.json'))

def package_grids():
    "A capacity grid, a battery grid and an animal-fit grid, each small: the package's own kinds."
    ids = ['acquisition_partial', 'relative_validity']
    return [dict(task='capacity', fixed=dict(draws=4), grid=dict(rule=['hebbian', 'delta'], d=[16, 32])),
            dict(task='battery', fixed=dict(subjects=20), grid=dict(rule=['delta', 'hebbian'])),
            dict(task='animal-fit', fixed=dict(ids=ids, steps=3, restarts=1), configs=[dict(rule='delta')]),
            dict(task='train', fixed=dict(task='rebind', steps=4, d_model=16, n_layers=1, n_heads=1, batch=4, eval_every=2, eval_batch=8, warmup=1),
                 grid=dict(rule=['delta', 'hebbian']))]

def test_three_backends_give_identical_tables(tmp_path, client, checkpoints):
    "Capacity, battery, animal fits and trained models in one sweep: the in-process table equals the process pool's and the Dask cluster's, value for value."
    g = package_grids(); n = sum(len(sw.tasks(x)) for x in g)
    a = sw.run(g, cache=tmp_path / 'a', progress=False)
    b = sw.run(g, cache=tmp_path / 'b', backend='processes', workers=2, progress=False)
    c = sw.run(g, cache=tmp_path / 'c', scheduler=client, progress=False)
    assert (a.status == 'ok').all(), a[a.status != 'ok'].error.tolist()
    from pavlovattn.apps.battery import rows
    assert set(a.function) == {'capacity', 'battery', 'animal-fit', 'train'} and len(a) == 4 + 2 * len(rows()) + 2 + 2   # a card: a row per registered phenomenon and contrast; a fit: one per experiment
    assert a.equals(b) and a.equals(c)
    assert a.attrs['summary']['ran'] == b.attrs['summary']['ran'] == c.attrs['summary']['ran'] == n
    assert len(list(Path(checkpoints, 'checkpoints').glob('rebind-*.pt'))) == 2                    # the models' checkpoints, kept for the probes
    again = sw.run(g, cache=tmp_path / 'c', progress=False)
    assert (again.attrs['summary']['ran'], again.attrs['summary']['cached']) == (0, n) and again.equals(a)   # finished tasks never run again

def test_a_failing_task_is_recorded_and_the_rest_complete(tmp_path, client):
    g = square_grid(tmp_path, [1, 13, 3], marks=False)
    t = sw.run(g, cache=tmp_path / 'c', scheduler=client, progress=False)
    assert t.status.tolist() == ['ok', 'error', 'ok'] and t.square.tolist()[::2] == [1, 9]
    assert t.error[1] == 'ValueError: thirteen is refused' and t.x[1] == 13
    assert t.attrs['summary']['failed'] == 1 and t.attrs['summary']['ran'] == 3
    e = json.loads(next(p for p in entries(tmp_path / 'c') if 'thirteen' in p.read_text()).read_text())
    assert e['config'] == dict(x=13, pause=0.0) and 'Traceback' in e['traceback']
    t2 = sw.run(g, cache=tmp_path / 'c', progress=False)                                   # a failed task is tried again
    assert (t2.attrs['summary']['ran'], t2.attrs['summary']['cached'], t2.attrs['summary']['failed']) == (1, 2, 1)

def _kill_an_inflight_worker(tmp_path, cache, n_before, killed):
    "Once `n_before` entries exist, SIGKILL a process that started a task whose entry is not written yet."
    while True:
        done = {json.loads(p.read_text())['config']['x'] for p in entries(cache)}
        if len(done) >= n_before:
            todo = [(x, pid) for x, pids in marks(tmp_path).items() for pid in pids if x not in done]
            if todo: x, pid = todo[0]; killed.append((x, pid)); os.kill(pid, signal.SIGKILL); return
        time.sleep(0.02)

@pytest.mark.parametrize('backend', ['processes', 'dask'])
def test_a_worker_killed_during_a_run(tmp_path, client, backend):
    "A worker process killed mid-task: its task runs again elsewhere, the sweep completes and nothing is lost."
    xs = list(range(8)); g = square_grid(tmp_path, xs, pause=0.4); cache = tmp_path / 'c'; killed = []
    k = threading.Thread(target=_kill_an_inflight_worker, args=(tmp_path, cache, 2, killed), daemon=True); k.start()
    t = sw.run(g, cache=cache, backend=backend, workers=2, scheduler=client if backend == 'dask' else None, progress=False)
    k.join(5)
    assert killed, 'no worker was killed'
    (x, pid), = killed
    assert (t.status == 'ok').all() and t.x.tolist() == xs and t.square.tolist() == [v * v for v in xs]
    assert len(marks(tmp_path)[x]) >= 2 and pid in marks(tmp_path)[x]                  # started on the killed worker, run again
    where = {e['key']: e['where'] for e in sw.Store(cache).read_log() if e.get('event') == 'task'}
    assert len(where) == len(xs) and not where[t.key[xs.index(x)]].endswith(f':{pid}')   # its entry came from another process
    if backend == 'processes': assert t.attrs['summary']['retried'] >= 1

def _driver(grid_path, cache, out=None, reverse=False):
    code = ("import json, sys; from pavlovattn import sweep as sw\n"
            f"g = sw.load_grid({str(grid_path)!r})\n"
            + ("g['grid']['x'] = g['grid']['x'][::-1]\n" if reverse else '')
            + f"t = sw.run(g, cache={str(cache)!r}, progress=False)\n"
            + (f"json.dump(dict(t.attrs['summary'], table=t.sort_values('x').to_dict('records')), open({str(out)!r}, 'w'))\n" if out else ''))
    return subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

def _grid_file(tmp_path, xs, pause):
    g = square_grid(tmp_path, xs, pause); g.pop('base'); p = tmp_path / 'grid.json'; p.write_text(json.dumps(g)); return p

def test_the_driver_killed_and_restarted_runs_only_the_missing_tasks(tmp_path):
    xs = list(range(8)); p = _grid_file(tmp_path, xs, 0.3); cache = tmp_path / 'c'
    d = _driver(p, cache)
    while len(entries(cache)) < 3:
        assert d.poll() is None, d.communicate()
        time.sleep(0.02)
    d.kill(); d.wait(10)
    k = len(entries(cache)); assert 3 <= k < len(xs)
    t = sw.run(sw.load_grid(p), cache=cache, progress=False)
    s = t.attrs['summary']
    assert (s['cached'], s['ran'], s['failed']) == (k, len(xs) - k, 0)                   # counted: only the missing ones ran
    assert t.square.tolist() == [x * x for x in xs]
    assert sum(e.get('event') == 'start' for e in sw.Store(cache).read_log()) == 2      # the log has both runs

def test_two_sweeps_on_one_cache_run_each_task_once(tmp_path):
    xs = list(range(6)); p = _grid_file(tmp_path, xs, 0.4); cache = tmp_path / 'c'
    a, b = _driver(p, cache, tmp_path / 'a.json'), _driver(p, cache, tmp_path / 'b.json', reverse=True)
    for d in (a, b): _, err = d.communicate(timeout=60); assert d.returncode == 0, err
    A, B = (json.loads((tmp_path / f).read_text()) for f in ('a.json', 'b.json'))
    assert {x: len(v) for x, v in marks(tmp_path).items()} == dict.fromkeys(xs, 1)        # no task ran twice
    assert A['ran'] >= 1 and B['ran'] >= 1 and A['ran'] + B['ran'] == len(xs)           # both worked, on different tasks
    assert A['table'] == B['table'] and len(entries(cache)) == len(xs)
    assert all(sw.Store(cache).get(e.stem) is not None for e in entries(cache))           # every entry whole and valid

def test_without_dask_the_scheduler_says_what_to_install(tmp_path):
    code = ("import sys; sys.modules['distributed'] = None\n"
            "from pavlovattn import sweep as sw\n"
            "try: sw.run(dict(task='json:loads', configs=[dict(s='{}')]), cache=sys.argv[1], scheduler='tcp://127.0.0.1:1', progress=False)\n"
            "except sw.BackendError as e: print(e)\n")
    r = subprocess.run([sys.executable, '-c', code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == sw.DASK_MISSING and "pip install 'pavlovattn[dask]'" in r.stdout

def test_the_command_line_interrupted_then_resumed(tmp_path):
    "`pavlovattn sweep`: Ctrl-C exits 130 and keeps what finished; the same command runs only the rest and exits 1 for the failed task."
    xs = [1, 2, 3, 13, 5, 6]; p = _grid_file(tmp_path, xs, 0.3); cache = tmp_path / 'c'
    cmd = [sys.executable, '-m', 'pavlovattn.apps.cli', 'sweep', str(p), '--cache', str(cache), '--quiet']
    d = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,    # Ctrl-C's default, also under a shell that ignores it
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    while len(entries(cache)) < 2:
        assert d.poll() is None, d.communicate()
        time.sleep(0.02)
    d.send_signal(signal.SIGINT); _, err = d.communicate(timeout=30)
    assert d.returncode == 130 and 'the same command runs only the missing ones' in err, (d.returncode, err)
    k = len(entries(cache))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr                                                  # one task failed
    assert f'6 tasks: {6 - k} ran here, {k} from the cache, 0 finished by another sweep, 1 failed' in r.stderr
    import pandas as pd, io
    t = pd.read_csv(io.StringIO(r.stdout))
    assert t.x.tolist() == xs and t.status.tolist() == ['ok'] * 3 + ['error'] + ['ok'] * 2
    assert t.error[3] == 'ValueError: thirteen is refused' and t.square[t.status == 'ok'].tolist() == [1, 4, 9, 25, 36]

def test_ctrl_c_in_process_then_the_same_call_again(tmp_path):
    "Ctrl-C inside an in-process task: the finished tasks are kept, the interrupted one's lock is released, and the same call in the same process runs only the rest."
    xs = [0, 1, 2, 3]; g = square_grid(tmp_path, xs); cache = tmp_path / 'c'
    (tmp_path / 'interrupt').touch()
    with pytest.raises(KeyboardInterrupt): sw.run(g, cache=cache, progress=False)
    assert len(entries(cache)) == 2
    (tmp_path / 'interrupt').unlink()
    t = sw.run(g, cache=cache, progress=False)
    assert (t.attrs['summary']['cached'], t.attrs['summary']['ran']) == (2, 2) and t.square.tolist() == [0, 1, 4, 9]

def test_the_table_as_parquet(tmp_path):
    "Issue 33: the tidy table written as Parquet (pyarrow, in the dask and dev extras) reads back equal to the one in memory (same columns and rows as its CSV)."
    pd = pytest.importorskip('pandas'); pytest.importorskip('pyarrow', reason='Parquet tables need pyarrow (pip install pyarrow)')
    df = sw.run(square_grid(tmp_path, [1, 2, 3, 13], marks=False), cache=tmp_path / 'cache', progress=False)
    sw.save(df, tmp_path / 't.parquet'); sw.save(df, tmp_path / 't.csv')
    back = pd.read_parquet(tmp_path / 't.parquet')
    pd.testing.assert_frame_equal(back, df.reset_index(drop=True))
    csv = pd.read_csv(tmp_path / 't.csv'); assert list(csv.columns) == list(back.columns) and csv['key'].tolist() == back['key'].tolist()
    assert list(back['status']) == ['ok', 'ok', 'ok', 'error'] and back['square'].tolist()[:3] == [1, 4, 9]

def test_task_kinds_follow_the_cache_rule():
    "A package kind's key carries its code version under the cache's one rule; bumping it gives every task a new key."
    from pavlovattn.base import cache
    g = dict(task='capacity', grid=dict(d=[4]))
    (t,) = sw.tasks(g); assert t['version'] == cache.code_version('task capacity') == f"task capacity v{cache.KINDS['task capacity'].version}; {cache.CODE_VERSION}"
    k = cache.KINDS['task capacity']
    try:
        cache.code_kind(k.name, k.version + 1, k.folder, k.code)
        assert sw.tasks(g)[0]['key'] != t['key']
    finally: cache.code_kind(k.name, k.version, k.folder, k.code)
    assert sw.tasks(g)[0]['key'] == t['key']

STAMP_FILE = textwrap.dedent('''
    import time
    def stamp(x, pause=0.4, device='cpu'):
        "When it ran and on which Dask worker: it never touches `device` (a CUDA device in the grid only asks Dask for the resource GPU)."
        from distributed import get_worker
        t0 = time.time(); time.sleep(pause)
        return dict(worker=get_worker().address, start=t0, end=time.time())
''')

def _stamp_grid(tmp_path, device, n=6):
    (tmp_path / 'stamp.py').write_text(STAMP_FILE)
    return dict(task='stamp.py:stamp', fixed=dict(device=device), grid=dict(x=list(range(n))), base=str(tmp_path))

def _overlaps(t):
    "Per worker, how many of its tasks started before the one before it ended."
    return {w: int((g.start.values[1:] < g.end.values[:-1]).sum()) for w, g in t.sort_values('start').groupby('worker')}

def test_gpu_tasks_run_one_per_worker_resource(tmp_path):
    "Issue 33 on CPU: two workers of two threads, each offering GPU=1; CUDA tasks (which touch no device) run one at a time per worker, on both, while CPU tasks on the same workers overlap. The CUDA part itself needs a GPU and is not run here. (Thread workers: the scheduler's resource accounting is the same, and they start in a fraction of the time.)"
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=False, dashboard_address=':0', silence_logs=50, resources={'GPU': 1})
    c = distributed.Client(cluster)
    try:
        gpu = sw.run(_stamp_grid(tmp_path, 'cuda:0'), cache=tmp_path / 'g', scheduler=c, progress=False)
        cpu = sw.run(_stamp_grid(tmp_path, 'cpu'), cache=tmp_path / 'c', scheduler=c, progress=False)
    finally: c.close(); cluster.close()
    assert (gpu.status == 'ok').all() and (cpu.status == 'ok').all(), gpu.error.tolist()
    assert len(set(gpu.worker)) == 2 and set(_overlaps(gpu).values()) == {0}          # both workers, never two GPU tasks at once on one
    assert sum(_overlaps(cpu).values()) >= 1                                         # the control: the same workers run two CPU tasks at once

def test_a_resource_no_worker_offers_fails_in_one_line(tmp_path, client, capsys):
    "GPU tasks on a cluster without the resource: after `resource_wait` seconds each fails with one line, the sweep ends (no hang), and a later run tries them again."
    t0 = time.monotonic()
    t = sw.run(_stamp_grid(tmp_path, 'cuda', 3), cache=tmp_path / 'c', scheduler=client, progress=False, resource_wait=1.0)
    took = time.monotonic() - t0
    assert 1.0 <= took < 15, took
    assert t.status.tolist() == ['error'] * 3 and t.attrs['summary']['failed'] == 3
    assert set(t.error) == {"no Dask worker offers the resource GPU this task asks for (device 'cuda'); waited 1 s (start workers with --resources GPU=1)"}
    err = capsys.readouterr().err
    assert 'no Dask worker offers the resource GPU; GPU tasks fail in 1 s unless one joins' in err and len(err.strip().splitlines()) == 1
    def left(dask_scheduler): return [k for k in dask_scheduler.tasks if 'stamp' in str(k)]
    deadline = time.monotonic() + 5
    while client.run_on_scheduler(left) and time.monotonic() < deadline: time.sleep(0.1)
    assert client.run_on_scheduler(left) == []                                       # cancelled: nothing left waiting on the cluster
    assert {json.loads(p.read_text())['status'] for p in entries(tmp_path / 'c')} == {'error'}   # recorded: a later run tries them again

def test_a_kept_pool_serves_the_next_run(tmp_path):
    "Issue 50: `keep=True` leaves a finished run's process pool running, and the next such run of the same size takes it (its workers have imported and compiled what the first run's tasks needed); a run without `keep` starts its own and leaves the kept one alone."
    runs, pools = [], []
    try:
        for name, keep in (('a', True), ('b', True), ('c', False)):
            (tmp_path / name).mkdir(); g = square_grid(tmp_path / name, [1, 3, 4, 5])
            df = sw.run(g, cache=tmp_path / name / 'cache', backend='processes', workers=2, progress=False, keep=keep)
            assert (df.status == 'ok').all() and sorted(df.square) == [1, 9, 16, 25]
            runs.append({p for ps in marks(tmp_path / name).values() for p in ps}); pools.append(sw._KEPT.get((2, 0)))
        kept = set(pools[0]._processes)                                    # the kept pool's worker processes (started on demand, at most 2)
        assert len(kept) <= 2 and runs[0] <= kept and runs[1] <= kept and not runs[2] & kept
        assert pools[0] is pools[1] is pools[2]                            # the run without keep left it alone
    finally: sw._close_kept()

def test_a_niced_pool_runs_below_the_driver(tmp_path):
    "Issue 50: `nice=10` starts workers whose niceness is the driver's plus 10 (at most 19), kept apart from the pools of another niceness; a niceness outside 0-19, and either setting on a backend without worker processes, is refused before anything runs."
    base = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        (tmp_path / 'a').mkdir(); g = square_grid(tmp_path / 'a', [1, 2, 3, 4])
        df = sw.run(g, cache=tmp_path / 'a' / 'cache', backend='processes', workers=2, progress=False, keep=True, nice=10)
        assert (df.status == 'ok').all()
        pids = {p for ps in marks(tmp_path / 'a').values() for p in ps}
        assert pids and {os.getpriority(os.PRIO_PROCESS, p) for p in pids} == {min(19, base + 10)}
        assert (2, 10) in sw._KEPT and (2, 0) not in sw._KEPT
        for bad in (-1, 20, 2.5, True):
            with pytest.raises(ValueError, match='nice must be a whole number from 0 to 19'):
                sw.run(g, cache=tmp_path / 'b', backend='processes', workers=2, progress=False, nice=bad)
        assert not (tmp_path / 'b').exists()
        with pytest.raises(ValueError, match="nice applies to the processes backend's workers; the inprocess backend has none"):
            sw.run(g, cache=tmp_path / 'b', backend='inprocess', progress=False, nice=5)
        with pytest.raises(ValueError, match="keep applies to the processes backend's pool; the inprocess backend keeps none"):
            sw.run(g, cache=tmp_path / 'b', backend='inprocess', progress=False, keep=True)
        assert not (tmp_path / 'b').exists()
    finally: sw._close_kept()

KEEPER = textwrap.dedent('''
    import multiprocessing as mp, sys
    def child(grid, cache):
        from pavlovattn.base import sweep as sw
        sw.run(grid, cache=cache, backend='processes', workers=2, progress=False, keep=True)   # leaves its pool running
    if __name__ == '__main__':
        import json; grid, cache = json.loads(sys.argv[1]), sys.argv[2]
        p = mp.get_context('spawn').Process(target=child, args=(grid, cache)); p.start(); p.join(90)
        print('exited' if p.exitcode == 0 else f'still running' if p.exitcode is None else f'exit {p.exitcode}')
        if p.exitcode is None: p.kill()
''')

def test_a_worker_process_with_a_kept_pool_exits(tmp_path):
    "A process that is itself a multiprocessing worker (a notebook runner's, say) waits for its child processes before it exits, and a kept pool's workers wait for work: it hung there (make test's notebook runner never finished). The kept pools are shut down first, so it exits."
    (tmp_path / 'keeper.py').write_text(KEEPER)
    g = square_grid(tmp_path, [1, 2])
    r = subprocess.run([sys.executable, str(tmp_path / 'keeper.py'), json.dumps(g), str(tmp_path / 'cache')], capture_output=True, text=True, timeout=110, cwd=tmp_path)
    assert r.stdout.strip() == 'exited', r.stdout + r.stderr[-2000:]

FAMILY_FILE = '''from pavlovattn.model.families import Family
def _step(S, k, v, b, g, kw): return S + RATE * b[:, None, None] * (v[:, :, None] * k[:, None, :])
RATE = 1.0
FAM = Family('edited', 'linear attention, scaled', 'Hebbian contiguity, scaled', 'S += r b v k^T', step=_step)
'''

def test_an_edited_family_file_runs_again(tmp_path, monkeypatch):
    "A sweep entry is keyed by the content of a family file its configuration names (`code_digest`): the same file is read from the cache; an edited one runs again and gives its own numbers (it was answered with the old file's card)."
    from pavlovattn.model.families import FAMILIES
    monkeypatch.chdir(tmp_path); (tmp_path / 'fam.py').write_text(FAMILY_FILE)
    g = dict(task='battery', configs=[dict(rule='fam.py:FAM', subjects=20, seed=0)])
    try:
        first = sw.run(g, cache=tmp_path / 'c', progress=False)
        again = sw.run(g, cache=tmp_path / 'c', progress=False)
        assert (first.attrs['summary']['ran'], again.attrs['summary']['ran'], again.attrs['summary']['cached']) == (1, 0, 1)
        (tmp_path / 'fam.py').write_text(FAMILY_FILE.replace('RATE = 1.0', 'RATE = 0.5'))
        edited = sw.run(g, cache=tmp_path / 'c', progress=False)
    finally: FAMILIES.pop('edited', None)                                           # later tests loop over the registered families
    assert edited.attrs['summary']['ran'] == 1 and set(edited.key) != set(first.key)
    assert not first.drop(columns='key').equals(edited.drop(columns='key'))            # another family: another card

def test_a_family_registered_by_name_is_refused_on_worker_backends(tmp_path):
    "Worker processes do not see a family registered by name in this process (each task failed with 'unknown rule'): the processes backend refuses it in one line before starting; in process it runs."
    from pavlovattn.model.families import FAMILIES, Family, register
    g = dict(task='battery', configs=[dict(rule='here-only', subjects=20, seed=0)])
    try:
        register(Family('here-only', 'a', 'b', 'S', step=FAMILIES['hebbian'].step))
        with pytest.raises(sw.BackendError, match=r"'here-only' is defined in this process only .*backend='inprocess'"):
            sw.run(g, cache=tmp_path / 'p', backend='processes', workers=2, progress=False)
        assert not (tmp_path / 'p' / 'sweep').exists() or not any((tmp_path / 'p' / 'sweep').iterdir())
        assert sw.run(g, cache=tmp_path / 'i', progress=False).attrs['summary']['ran'] == 1
    finally: FAMILIES.pop('here-only', None)
