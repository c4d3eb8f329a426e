"""pyndl's event files at pyndl's scale: `interop.learn_pyndl` against pyndl's own `ndl` on the same file, in one run.

Workload: EVENTS events over 500 cues and 50 outcomes (pyndl's usual shape: letter trigrams -> words), written with a
fixed seed to one gzip event file (pyndl's format, header `cues<TAB>outcomes`). Every outcome has 8 cues of its own
(random, fixed); an event has 1 or 2 outcomes, 6 of each outcome's 8 cues and 2 cues drawn from all 500 (about 10 cues
per event). Rescorla-Wagner with alpha 0.1, betas (0.1, 0.1), lambda 1, every outcome learned on every event.
  ours   pavlovattn.apps.interop.learn_pyndl(file): one pass over the file, events in chunks into the compiled delta write
         (kernels.delta_events), all outcomes at once; one thread
  pyndl  pyndl.ndl.ndl(file, method='openmp', n_jobs=N): counts cues and outcomes (a pool of n_jobs processes), writes
         the events to its binary format, then learns (OpenMP threads over blocks of outcomes); run with n_jobs=1
         (the same single thread as ours) and n_jobs=2
Protocol: each method runs in a process of its own, one after the other, ROUNDS times in alternation (ours, pyndl 1,
pyndl 2, ours, ...). Timed: the call itself (wall clock, perf_counter), with imports and compilation outside it (ours
is run once on a small file first, which loads the kernel from numba's cache or compiles it). Memory: the process's
peak resident set (ru_maxrss, from wait4) and its resident set just before the call; for pyndl also the peak of its
worker processes (RUSAGE_CHILDREN). Reported: the median over rounds, and the ratio pyndl / ours of the medians.
Weights: the two results compared outcome by outcome and cue by cue (max |difference|). The load average before and
after, and the machine, are printed: other processes slow both.
Usage: python benchmarks/bench_pyndl.py [--events 1000000] [--rounds 2] [--keep FILE]
"""
import argparse, gzip, json, os, platform, statistics, subprocess, sys, tempfile, time
import numpy as np

CUES, OUTCOMES, OWN, KEEP, NOISE = 500, 50, 8, 6, 2

def write_events(path, events:int, seed:int=2026) -> int:
    "The benchmark's event file (gzip); returns the number of cue tokens written."
    rng = np.random.default_rng(seed)
    own = np.stack([rng.choice(CUES, OWN, replace=False) for _ in range(OUTCOMES)])
    n_out = rng.integers(1, 3, events); tokens = 0
    with gzip.open(path, 'wt', compresslevel=1) as f:
        f.write('cues\toutcomes\n')
        for lo in range(0, events, 100_000):
            hi = min(events, lo + 100_000); m = hi - lo
            o1, o2 = rng.integers(0, OUTCOMES, m), rng.integers(0, OUTCOMES, m)
            keep1, keep2 = rng.permuted(np.tile(np.arange(OWN), (m, 1)), axis=1)[:, :KEEP], rng.permuted(np.tile(np.arange(OWN), (m, 1)), axis=1)[:, :KEEP]
            noise = rng.integers(0, CUES, (m, NOISE))
            lines = []
            for i in range(m):
                outs = [o1[i]] if n_out[lo + i] == 1 or o2[i] == o1[i] else [o1[i], o2[i]]
                cs = set(own[o1[i], keep1[i]].tolist()) | set(noise[i].tolist())
                if len(outs) == 2: cs |= set(own[o2[i], keep2[i]].tolist())
                tokens += len(cs)
                lines.append('_'.join(f'c{c}' for c in sorted(cs)) + '\t' + '_'.join(f'w{o}' for o in outs))
            f.write('\n'.join(lines) + '\n')
    return tokens

CHILD = r'''
import json, resource, sys, time, numpy as np
method, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
if method == 'ours':
    from pavlovattn.apps.interop import learn_pyndl
    learn_pyndl(sys.argv[4], alpha=0.1, betas=(0.1, 0.1))                       # warm-up: numba's cache (or a compile)
    run = lambda: learn_pyndl(path, alpha=0.1, betas=(0.1, 0.1))
else:
    from pyndl import ndl
    jobs = int(method.split('-')[1])
    run = lambda: ndl.ndl(path, 0.1, (0.1, 0.1), method='openmp', n_jobs=jobs).to_pandas()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter(); W = run(); dt = time.perf_counter() - t
np.save(out, W.to_numpy()); json.dump(dict(outcomes=list(map(str, W.index)), cues=list(map(str, W.columns)), seconds=dt, rss_before_kib=before,
                                           children_peak_kib=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), open(out + '.json', 'w'))
'''

def run_child(method, path, out, small):
    "One method in a process of its own: its result, timings and peak memory."
    env = dict(os.environ, OMP_NUM_THREADS='1' if method in ('ours', 'pyndl-1') else '2')
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, '-c', CHILD, method, path, out, small], env=env, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0); err = p.stderr.read().decode(); p.stderr.close()
    if status != 0: raise SystemExit(f'{method} failed:\n{err[-2000:]}')
    r = json.load(open(out + '.json')); r.update(process_seconds=time.perf_counter() - t, peak_mib=ru.ru_maxrss / 1024,
                                                 before_mib=r['rss_before_kib'] / 1024, children_peak_mib=r['children_peak_kib'] / 1024)
    return r

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--events', type=int, default=1_000_000)
    p.add_argument('--rounds', type=int, default=2)
    p.add_argument('--keep', default=None, help='write the event file here (default: a temporary folder)')
    a = p.parse_args(argv)
    try: import pyndl
    except ImportError: raise SystemExit('pyndl is not installed: pip install pyndl==1.2.4 (the dev extra has it)')
    with tempfile.TemporaryDirectory() as d:
        path = a.keep or os.path.join(d, 'events.tab.gz'); small = os.path.join(d, 'small.tab.gz')
        t = time.perf_counter(); tokens = write_events(path, a.events); write_events(small, 100, seed=1)
        print(f'{time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}; {platform.node()}: {platform.processor() or platform.machine()}, '
              f'{os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {np.__version__}, pyndl {pyndl.__version__}')
        print(f'{a.events:,} events, {CUES} cues, {OUTCOMES} outcomes, {tokens / a.events:.1f} cues per event; '
              f'file {os.path.getsize(path) / 2**20:.1f} MiB gzip, written in {time.perf_counter() - t:.1f} s')
        print(f'load average before: {os.getloadavg()[0]:.2f}')
        res = {m: [] for m in ('ours', 'pyndl-1', 'pyndl-2')}
        for r in range(a.rounds):
            for m in res:
                res[m].append(run_child(m, path, os.path.join(d, f'{m}-{r}.npy'), small))
                x = res[m][-1]; workers = f', workers {x["children_peak_mib"]:.0f} MiB' if m != 'ours' else ''
                print(f'  round {r + 1} {m:8s}: {x["seconds"]:7.2f} s (process {x["process_seconds"]:.1f} s), peak {x["peak_mib"]:.0f} MiB '
                      f'(before the call {x["before_mib"]:.0f} MiB{workers})', flush=True)
        print(f'load average after: {os.getloadavg()[0]:.2f}')
        med = {m: {k: statistics.median(x[k] for x in v) for k in ('seconds', 'peak_mib', 'before_mib', 'children_peak_mib')} for m, v in res.items()}
        W = {m: (np.load(os.path.join(d, f'{m}-0.npy')), json.load(open(os.path.join(d, f'{m}-0.npy.json')))) for m in res}
        w0, l0 = W['ours']
        for m in ('pyndl-1', 'pyndl-2'):
            w, l = W[m]
            oi, ci = [l['outcomes'].index(o) for o in l0['outcomes']], [l['cues'].index(c) for c in l0['cues']]
            assert sorted(l['outcomes']) == sorted(l0['outcomes']) and sorted(l['cues']) == sorted(l0['cues'])
            med[m]['max_abs_diff'] = float(np.abs(w[np.ix_(oi, ci)] - w0).max())
        print(f'\n{"method":9s} {"seconds":>8s} {"peak MiB":>9s} {"growth MiB":>11s} {"max |W - ours|":>15s}')
        for m, x in med.items():
            print(f'{m:9s} {x["seconds"]:8.2f} {x["peak_mib"]:9.0f} {x["peak_mib"] - x["before_mib"]:11.0f} {x.get("max_abs_diff", 0.0):15.1e}')
        for m in ('pyndl-1', 'pyndl-2'):
            print(f'{m} / ours: time {med[m]["seconds"] / med["ours"]["seconds"]:.1f}x, peak memory {med[m]["peak_mib"] / med["ours"]["peak_mib"]:.2f}x')
        print(f'largest weight {np.abs(w0).max():.3f}; weights {w0.shape[0]} outcomes x {w0.shape[1]} cues')
        return med

if __name__ == '__main__': main()
