"""The whole battery for one family, timed: the issue's target is under a minute on 2 cores, so that a card is something
people run routinely.

Workload: `pavlovattn.apps.battery.battery(rule, subjects=SUBJECTS)` for each built-in family the phenomenon pages take
through, and for one family defined outside the package (tests/families/forget_after_write.py: it runs on its own plain
loop, `reference`, since no tuned algorithm declares it). Every row of the card runs: the dissociation rows (randomised
orders, SUBJECTS subjects), the beyond-RW rows (blocked, one subject, closed forms), this page's one-key rows, and the
two capacity exponents at the battery's reduced sizes (d = 16, 32, 64, 8 draws; marked on the card as reduced).
Baseline, in the same run: one `simulate('20A+ | 20AB+ | #B', rule, subjects=SUBJECTS)` call of the same family (the
unit of work of a randomised row); the table gives the card's seconds, the baseline's, and their ratio.
Protocol: one warm-up card (imports, numba's cache), then the median of REPEATS cards per family. Target: every card
under 60 s.

Part 2, the sweep runner's cost over a plain loop (issue 33), on a grid of cards: hebbian, delta, decay, gated-delta x
seeds 0, 1 (8 tasks, SUBJECTS subjects), timed as
  loop        the same `battery` calls in a Python loop, results kept in a list (the baseline);
  inprocess   `sweep.run` in this process, a fresh cache (every task runs, every entry written);
  cached      the same `run` again (every task read from the cache, none run);
  processes   `sweep.run(backend='processes', workers=2)`, a fresh cache (pool start included);
  dask        `sweep.run` on a LocalCluster of 2 workers started beforehand (its start is printed, not counted), a fresh cache.
Each is the median of REPEATS, in seconds and as a ratio to the loop; one torch thread per task everywhere (the runner's
default), so the loop runs with one thread too.
Usage: python benchmarks/bench_battery.py [--subjects 500] [--repeats 3] [--part cards|sweep|both]
"""
import argparse, os, statistics, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import torch
from pavlovattn.apps.battery import battery
from pavlovattn.model.core import RULES
from pavlovattn.design.designs import simulate
from pavlovattn.model.families import load_family

def median_time(f, repeats):
    ts = []
    for _ in range(repeats):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

def cards(a):
    user = load_family(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'families', 'forget_after_write.py'))
    rules = list(RULES) + [user.name]
    print(f'battery: {a.subjects} subjects, median of {a.repeats}; torch {torch.__version__}, {torch.get_num_threads()} threads, '
          f'load {os.getloadavg()[0]:.2f}')
    battery('delta', subjects=a.subjects, progress=False); simulate('20A+ | 20AB+ | #B', subjects=a.subjects)   # warm-up
    print(f"{'family':<20} {'card s':>8} {'simulate s':>11} {'ratio':>7}  target < 60 s")
    ok = True
    for r in rules:
        tc = median_time(lambda: battery(r, subjects=a.subjects, progress=False), a.repeats)
        ts = median_time(lambda: simulate('20A+ | 20AB+ | #B', rule=r, subjects=a.subjects), a.repeats)
        ok &= tc < 60
        print(f'{r:<20} {tc:>8.2f} {ts:>11.4f} {tc / ts:>7.0f}  {"yes" if tc < 60 else "NO"}')
    print('every card under 60 s' if ok else 'a card took 60 s or more')

SWEEP = dict(task='battery', grid=dict(rule=['hebbian', 'delta', 'decay', 'gated-delta'], seed=[0, 1]))

def sweep(a):
    from pavlovattn.base import sweep as sw
    grid = dict(SWEEP, fixed=dict(subjects=a.subjects)); cfgs = sw.expand(grid)
    torch.set_num_threads(1)
    print(f'sweep: {len(cfgs)} battery cards as tasks, median of {a.repeats}; 1 torch thread, load {os.getloadavg()[0]:.2f}')
    loop = lambda: [battery(c['rule'], subjects=c['subjects'], seed=c['seed'], progress=False) for c in cfgs]
    loop()                                                                           # warm-up
    fresh = lambda **kw: (lambda: sw.run(grid, cache=tempfile.mkdtemp(), progress=False, **kw))
    rows = [('loop', median_time(loop, a.repeats)), ('inprocess', median_time(fresh(), a.repeats))]
    d = tempfile.mkdtemp(); sw.run(grid, cache=d, progress=False)
    rows.append(('cached', median_time(lambda: sw.run(grid, cache=d, progress=False), a.repeats)))
    rows.append(('processes', median_time(fresh(backend='processes', workers=2), a.repeats)))
    try:
        from distributed import LocalCluster, Client
        t = time.perf_counter(); cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=':0', silence_logs=50); client = Client(cluster)
        print(f'LocalCluster of 2 workers started in {time.perf_counter() - t:.2f} s (not counted)')
        fresh(scheduler=client)()                                                    # warm-up: the workers import torch
        rows.append(('dask', median_time(fresh(scheduler=client), a.repeats)))
        client.close(); cluster.close()
    except ImportError: print('dask: not installed (pip install "pavlovattn[dask]"); skipped')
    base = rows[0][1]
    print(f"{'how':<10} {'seconds':>8} {'ratio to loop':>14}")
    for name, s in rows: print(f'{name:<10} {s:>8.3f} {s / base:>14.2f}')

def main():
    p = argparse.ArgumentParser(); p.add_argument('--subjects', type=int, default=500); p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--part', choices=('cards', 'sweep', 'both'), default='both')
    a = p.parse_args()
    if a.part in ('cards', 'both'): cards(a)
    if a.part in ('sweep', 'both'): sweep(a)

if __name__ == '__main__': main()
