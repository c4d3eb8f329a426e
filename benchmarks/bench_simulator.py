"""Speed of the design simulator against the two ways conditioning simulators are usually written.

Workload: SUBJECTS subjects x TRIALS randomised trials x 4 cues (one `!` phase of four trial types, every subject with
its own random order), Rescorla-Wagner / delta rule, one-hot keys, float64, CPU. Every method goes from the trial-type
table to every subject's strengths before every trial, INCLUDING drawing the per-subject random orders:
  simulator  pavlovattn.designs.simulate(design, subjects=SUBJECTS): parsing, orders, keys, the recurrence
  numpy      orders by numpy's Generator.permuted, then a vectorised loop: all subjects at once, a Python loop over trials
             (also timed without drawing the orders: "numpy, loop only")
  loop       a plain per-subject Python loop, as PALMS and Learning Simulator do: random.shuffle of the subject's trial
             list, then the textbook RW loop (pavlovattn.core.rescorla_wagner); timed on a subset of subjects and
             extrapolated linearly to all of them
Protocol (fixed in advance): one warm-up call each, then the median wall time of REPEATS timed calls (the per-subject
loop: the median of REPEATS timed passes over the subset). Rate = subject-trials per second. Targets: simulator
>= 200x the per-subject loop and no slower than numpy. The three compute the same strengths: checked on the
simulator's own orders (untimed), max |diff| printed. The machine's load average is printed: other processes slow
every method, the vectorised ones (memory-bound) more than the Python loop. A last row times writing the output array
(every subject's strengths before every trial, float64) once: no method that returns it can beat that floor.
Usage: python benchmarks/bench_simulator.py [--subjects 10000] [--trials 200] [--subset 200] [--repeats 5]
"""
import argparse, os, random, statistics, sys, time
import numpy as np
import torch
from pavlovattn.core import rescorla_wagner
from pavlovattn.designs import simulate, parse_design

def timed(fn, repeats):
    fn()                                                         # warm-up
    ts = []
    for _ in range(repeats):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

def numpy_rw(X, lam, ab):
    "All subjects at once, loop over trials. X [T,S,C] cue indicators, lam [T,S], ab = alpha*beta [C]; strengths before each trial [T,S,C]."
    T, S, C = X.shape
    W = np.zeros((S, C)); hist = np.empty((T, S, C))
    for t in range(T):
        hist[t] = W
        err = lam[t] - (W * X[t]).sum(1)
        W += ab * X[t] * err[:, None]
    return hist

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--subjects', type=int, default=10_000)
    p.add_argument('--trials', type=int, default=200)
    p.add_argument('--subset', type=int, default=200, help='subjects timed in the per-subject Python loop')
    p.add_argument('--repeats', type=int, default=5)
    a = p.parse_args(argv)
    n = a.trials // 4
    design = f'!{n}A+/{n}AB-/{n}BC+/{n}CD-'
    S, T, beta, sub = a.subjects, 4 * n, 0.2, min(a.subset, a.subjects)
    print(f'workload: design "{design}": {S} subjects x {T} randomised trials x 4 cues, delta rule (RW), beta={beta}, '
          f'one-hot keys, float64, CPU; torch {torch.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs, '
          f'load average {os.getloadavg()[0]:.1f}')
    print(f'protocol: every method draws its own per-subject random orders; one warm-up, then the median of {a.repeats} '
          f'timed calls; the per-subject loop is timed on {sub} subjects and extrapolated linearly to {S}')
    tts = parse_design(design).groups[0].trial_types
    cues = ('A', 'B', 'C', 'D')
    ind = np.array([[1. if c in t.cues else 0. for c in cues] for t in tts]); lam_tt = np.array([1. if t.outcome == '+' else 0. for t in tts])
    seq = np.repeat(np.arange(len(tts)), [t.count for t in tts])
    ab = beta * np.ones(len(cues))
    # the simulator
    run = lambda: simulate(design, beta=beta, subjects=S, seed=0)
    t_sim = timed(run, a.repeats)
    # numpy: draw orders, build the inputs, loop over trials
    rng = np.random.default_rng(0)
    def numpy_all():
        order = rng.permuted(np.tile(seq, (S, 1)), axis=1).T            # [T,S]
        return numpy_rw(ind[order], lam_tt[order], ab)
    t_np = timed(numpy_all, a.repeats)
    order0 = rng.permuted(np.tile(seq, (S, 1)), axis=1).T
    X0, L0 = ind[order0], lam_tt[order0]
    t_np_loop = timed(lambda: numpy_rw(X0, L0, ab), a.repeats)
    # the per-subject Python loop
    pr = random.Random(0); ind_l, lam_l, seq_l, ab_l = ind.tolist(), lam_tt.tolist(), seq.tolist(), [1.0] * len(cues)
    def loop():
        out = []
        for _ in range(sub):
            trials = seq_l[:]; pr.shuffle(trials)
            out.append(rescorla_wagner([ind_l[j] for j in trials], [lam_l[j] for j in trials], ab_l, beta))
        return out
    t_loop = timed(loop, a.repeats) * S / sub
    # a floor for any method that returns every subject's strengths before every trial: writing that float64 array once
    t_floor = timed(lambda: torch.empty(T + 1, S, len(cues), dtype=torch.float64).fill_(1.0), a.repeats)
    # agreement, on the simulator's own orders (untimed)
    r = run().runs['group']; o = r['order'].numpy(); V = r['V'][:, :T].numpy()
    err_np = float(np.abs(numpy_rw(ind[o.T], lam_tt[o.T], ab).transpose(1, 0, 2) - V).max())
    err_loop = max(float(np.abs(np.array(rescorla_wagner(ind[o[s]].tolist(), lam_tt[o[s]].tolist(), ab_l, beta)) - V[s]).max())
                   for s in range(min(sub, S)))
    rate = lambda t: S * T / t
    print(f'{"method":44s} {"seconds":>9s} {"subject-trials/s":>17s} {"time / simulator":>17s}')
    for name, t in [('simulator (pavlovattn.designs.simulate)', t_sim), ('numpy, vectorised over subjects', t_np),
                    ('numpy, loop only (orders given, not timed)', t_np_loop),
                    (f'per-subject Python loop (x{S / sub:g} extrapolated)', t_loop),
                (f'floor: writing the {(T + 1) * S * len(cues) * 8 / 2**20:.0f} MB output once', t_floor)]:
        print(f'{name:44s} {t:9.4f} {rate(t):17.3e} {t / t_sim:16.2f}x')
    print(f'agreement with the simulator on its orders: numpy max |diff| = {err_np:.1e}, per-subject loop max |diff| = {err_loop:.1e}')
    print(f'bound: any method that returns every strength takes at least the floor time, i.e. at most '
          f'{t_loop / t_floor:.0f}x the per-subject loop on this machine now')
    print(f'targets: >= 200x the per-subject loop: {"met" if t_loop / t_sim >= 200 else "NOT met"} ({t_loop / t_sim:.0f}x); '
          f'no slower than numpy: {"met" if t_np >= t_sim else "NOT met"} ({t_np / t_sim:.2f}x)')
    return 0

if __name__ == '__main__': sys.exit(main())
