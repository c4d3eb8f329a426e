"""Speed of the design simulator against the two ways conditioning simulators are usually written.

Workload: SUBJECTS subjects x TRIALS randomised trials x 4 cues (one `!` phase of four trial types), Rescorla-Wagner /
delta rule, one-hot keys, float64, CPU. Compared, in one run:
  simulator  pavlovattn.designs.simulate (all subjects batched; includes compiling the per-subject orders and keys)
  loop       a plain per-subject Python loop of the RW rule (pavlovattn.core.rescorla_wagner), as PALMS and Learning
             Simulator do: timed on a subset of subjects and extrapolated linearly to all of them
  numpy      a vectorised numpy loop: all subjects at once, a Python loop over trials
Protocol (fixed in advance): one warm-up call each, then the median wall time of REPEATS timed calls (the per-subject
loop: the median of REPEATS timed passes over the subset). Rate = subject-trials per second. Targets: simulator
>= 200x the per-subject loop and no slower than numpy. All three compute the same strengths (checked, max |diff| printed).
Usage: python benchmarks/bench_simulator.py [--subjects 10000] [--trials 200] [--subset 200] [--repeats 5]
"""
import argparse, os, statistics, sys, time
import numpy as np
import torch
from pavlovattn.core import rescorla_wagner
from pavlovattn.designs import simulate

def timed(fn, repeats):
    fn()                                                         # warm-up
    ts = []
    for _ in range(repeats):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

def numpy_rw(X, lam, alpha, beta):
    "All subjects at once, loop over trials. X [T,S,C] cue indicators, lam [T,S]; returns strengths before each trial [T,S,C]."
    T, S, C = X.shape
    W = np.zeros((S, C)); hist = np.empty((T, S, C))
    ab = beta * alpha
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
    S, T, beta = a.subjects, 4 * n, 0.2
    print(f'workload: design "{design}", {S} subjects x {T} trials x 4 cues, delta rule (RW), beta={beta}, float64, CPU, '
          f'torch {torch.__version__} with {torch.get_num_threads()} threads, {os.cpu_count()} CPUs')
    print(f'protocol: one warm-up, then the median of {a.repeats} timed calls; per-subject loop timed on {min(a.subset, S)} '
          f'subjects and extrapolated linearly to {S}')
    run = lambda: simulate(design, beta=beta, subjects=S, seed=0)
    t_sim = timed(run, a.repeats)
    res = run(); r = res.runs['group']
    tts = r['trial_types']; order = r['order'].numpy()
    ind = np.array([[1. if c in t.cues else 0. for c in res.cues] for t in tts])       # [n_tt, C]
    lam_tt = np.array([1. if t.outcome == '+' else 0. for t in tts])
    X = np.ascontiguousarray(ind[order].transpose(1, 0, 2)); L = np.ascontiguousarray(lam_tt[order].T)
    alpha = np.ones(len(res.cues))
    t_np = timed(lambda: numpy_rw(X, L, alpha, beta), a.repeats)
    err_np = float(np.abs(numpy_rw(X, L, alpha, beta).transpose(1, 0, 2) - r['V'][:, :T].numpy()).max())
    sub = min(a.subset, S)
    cues = [X[:, s].tolist() for s in range(sub)]; lams = [L[:, s].tolist() for s in range(sub)]
    loop = lambda: [rescorla_wagner(cues[s], lams[s], alpha.tolist(), beta) for s in range(sub)]
    t_loop = timed(loop, a.repeats) * S / sub
    err_loop = max(float(np.abs(np.array(h) - r['V'][s, :T].numpy()).max()) for s, h in enumerate(loop()))
    rate = lambda t: S * T / t
    print(f'{"method":34s} {"seconds":>10s} {"subject-trials/s":>17s} {"simulator speed-up":>19s}')
    for name, t in [('simulator (pavlovattn.simulate)', t_sim), ('numpy, vectorised over subjects', t_np),
                    (f'per-subject Python loop (x{S // sub} extrap.)', t_loop)]:
        print(f'{name:34s} {t:10.4f} {rate(t):17.3e} {t / t_sim:18.1f}x')
    print(f'agreement with the simulator: numpy max |diff| = {err_np:.1e}, per-subject loop max |diff| = {err_loop:.1e}')
    ok_loop, ok_np = t_loop / t_sim >= 200, t_np / t_sim >= 1
    print(f'targets: >= 200x the per-subject loop: {"met" if ok_loop else "NOT met"} ({t_loop / t_sim:.0f}x); '
          f'no slower than numpy: {"met" if ok_np else "NOT met"} ({t_np / t_sim:.2f}x)')
    return 0

if __name__ == '__main__': sys.exit(main())
