"""The sweep runner's cost over a plain loop, in one run: what a user pays for the cache, the locks, the table and a backend.

Workload: a capacity grid (`capacity.capacity`, criterion 'accurate', 8 draws) over rules hebbian, delta, decay and
d = 16, 32, 64, 128 (12 tasks), timed as
  loop        the same calls in a Python loop, results kept in a list (the baseline);
  inprocess   `sweep.run` in this process, a fresh cache (every task runs, every entry written);
  cached      the same `run` again (every task read from the cache, none run);
  processes   `sweep.run(backend='processes', workers=2)`, a fresh cache (pool start included);
  dask        `sweep.run` on a LocalCluster of 2 workers started beforehand (its start is printed, not counted), a fresh cache.
Each is the median of REPEATS, reported in seconds and as a ratio to the loop. One thread per task everywhere (the runner's
default), so the loop runs with one torch thread too. Usage: python benchmarks/bench_sweep.py [--repeats 3]
"""
import argparse, os, statistics, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import torch
from pavlovattn.capacity import capacity
from pavlovattn import sweep as sw

GRID = dict(task='capacity', fixed=dict(criterion='accurate', draws=8), grid=dict(rule=['hebbian', 'delta', 'decay'], d=[16, 32, 64, 128]))

def median_time(f, repeats):
    ts = []
    for _ in range(repeats):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

def main():
    p = argparse.ArgumentParser(); p.add_argument('--repeats', type=int, default=3); a = p.parse_args()
    torch.set_num_threads(1)
    cfgs = sw.expand(GRID)
    print(f'sweep: {len(cfgs)} capacity tasks, median of {a.repeats}; torch {torch.__version__}, load {os.getloadavg()[0]:.2f}')
    loop = lambda: [capacity(c['d'], c['criterion'], c['rule'], c['draws']) for c in cfgs]
    loop()                                                                           # warm-up
    rows = [('loop', median_time(loop, a.repeats))]
    rows.append(('inprocess', median_time(lambda: sw.run(GRID, cache=tempfile.mkdtemp(), progress=False), a.repeats)))
    d = tempfile.mkdtemp(); sw.run(GRID, cache=d, progress=False)
    rows.append(('cached', median_time(lambda: sw.run(GRID, cache=d, progress=False), a.repeats)))
    rows.append(('processes', median_time(lambda: sw.run(GRID, cache=tempfile.mkdtemp(), backend='processes', workers=2, progress=False), a.repeats)))
    try:
        from distributed import LocalCluster, Client
        t = time.perf_counter(); cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=':0', silence_logs=50); client = Client(cluster)
        print(f'LocalCluster of 2 workers started in {time.perf_counter() - t:.2f} s (not counted)')
        sw.run(GRID, cache=tempfile.mkdtemp(), scheduler=client, progress=False)    # warm-up: the workers import torch
        rows.append(('dask', median_time(lambda: sw.run(GRID, cache=tempfile.mkdtemp(), scheduler=client, progress=False), a.repeats)))
        client.close(); cluster.close()
    except ImportError: print('dask: not installed (pip install "pavlovattn[dask]"); skipped')
    base = rows[0][1]
    print(f"{'how':<10} {'seconds':>8} {'ratio to loop':>14}")
    for name, s in rows: print(f'{name:<10} {s:>8.3f} {s / base:>14.2f}')

if __name__ == '__main__': main()
