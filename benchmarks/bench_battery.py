"""The whole battery for one family, timed: the issue's target is under a minute on 2 cores, so that a card is something
people run routinely.

Workload: `pavlovattn.battery.battery(rule, subjects=SUBJECTS)` for each built-in family the phenomenon pages take
through, and for one family defined outside the package (tests/families/forget_after_write.py: it runs on its own plain
loop, `reference`, since no tuned algorithm declares it). Every row of the card runs: the dissociation rows (randomised
orders, SUBJECTS subjects), the beyond-RW rows (blocked, one subject, closed forms), this page's one-key rows, and the
two capacity exponents at the battery's reduced sizes (d = 16, 32, 64, 8 draws; marked on the card as reduced).
Baseline, in the same run: one `simulate('20A+ | 20AB+ | #B', rule, subjects=SUBJECTS)` call of the same family (the
unit of work of a randomised row); the table gives the card's seconds, the baseline's, and their ratio.
Protocol: one warm-up card (imports, numba's cache), then the median of REPEATS cards per family. Target: every card
under 60 s. Usage: python benchmarks/bench_battery.py [--subjects 500] [--repeats 3]
"""
import argparse, os, statistics, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import torch
from pavlovattn.battery import battery
from pavlovattn.core import RULES
from pavlovattn.designs import simulate
from pavlovattn.families import load_family

def median_time(f, repeats):
    ts = []
    for _ in range(repeats):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

def main():
    p = argparse.ArgumentParser(); p.add_argument('--subjects', type=int, default=500); p.add_argument('--repeats', type=int, default=3)
    a = p.parse_args()
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

if __name__ == '__main__': main()
