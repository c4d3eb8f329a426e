"""Speed of the chunk-parallel forms against the reference loop, per family, in one run (ratios, not timed tests).

Workload: one head, d_k = d_v = D (64), unit keys, random values, rates in (0, 1), gates in (0.9, 1) where the family
has them, float32, the current device (CPU unless CUDA is present). For every fixed-state family of
`pavlovattn.model.families.FAMILIES`, algorithm in {sequential, chunked (C = 64)}, T in {256, 1024, 4096}, batch in {1, 16}:
  fwd      recur(..., algorithm=A, reads='out') under torch.no_grad() (outputs and final state: what a layer computes)
  fwd+bwd  recur(...) with gradients on q, k, v, beta, then backward() with a fixed random gradient of the outputs (T <= 1024
           only; until 2026-12-03 the outputs' sum, whose one broadcast number sends batched products down a per-matrix path)
Protocol: one warm-up call per cell, then the median of REPEATS calls; the two algorithms of a cell are timed back to
back, so each ratio compares like with like under the same load. The plain numpy loop (DeltaNet, batch 1, float64 and
float32, the textbook per-step update) is the baseline for the reference loop itself.
Targets (2-core CPU, issue "families/chunked/layers"): chunked linear attention >= 10x and chunked DeltaNet >= 8x the
sequential loop at batch 1, T = 4096; DeltaNet >= 3x at batch 16; forward+backward of chunked DeltaNet >= 10x the
sequential loop's forward+backward at T = 1024; the sequential loop no slower than the numpy loop at batch 1.
On CUDA with flash-linear-attention installed, also: chunked DeltaNet within 5x of fla's chunk kernel at T = 4096 (ours
in float32; fla's DeltaNet chunk kernel takes only half precision, so it runs in float16: the dtypes are printed).
Usage: python benchmarks/bench_chunked.py [--quick] [--repeats 3] [--families delta,hebbian] [--threads N]
Its runs so far (tables, targets, what was kept): benchmarks/bench_chunked.md.
Run it on an otherwise idle machine: under load, torch's multi-threaded matrix products (the chunked form) wait for
busy cores far more than the loop's tiny single-threaded steps, and the ratios mean nothing (seen: 0.0x at load 5).
The allocator matters too: with glibc's defaults a process may hand the chunked form's megabyte-sized temporaries back
to the system after every call and fault them in again on the next (chunked hebbian at batch 1, T = 4096 took 1.2 ms
in some processes and 2.0-2.9 ms in others); MALLOC_MMAP_THRESHOLD_=268435456 MALLOC_TRIM_THRESHOLD_=268435456 in the
environment keeps them (the header line says which setting ran). The cause is glibc's dynamic mmap threshold: a process
that has once freed a 16 MB block keeps such temporaries mapped too (0-13 page faults a call against 101-996; not used
here, since it would change the protocol: a maintainer's decision).
  --quick: only T = 1024 and 4096 at batch 1 and 16 for hebbian and delta (the targets' cells)
"""
import argparse, os, statistics, sys, time, datetime, platform
import numpy as np
import torch
from pavlovattn.model.families import FAMILIES, kernel_available
from pavlovattn.model.core import recur

def timed(fn, repeats):
    "One warm-up call, then the median of `repeats` timed calls."
    fn(); ts = []
    for _ in range(repeats):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

def inputs(fam, B, T, D, device, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    k = torch.nn.functional.normalize(torch.randn(B, T, 1, D, generator=g), dim=-1)
    if fam.extra_row == 'norm': k = k.abs()
    q, v = torch.randn(B, T, 1, D, generator=g), torch.randn(B, T, 1, D, generator=g)
    if fam.extra_row == 'norm': q = q.abs()
    kw = dict(beta=torch.rand(B, T, 1, generator=g))
    if 'gamma' in fam.params: kw['gamma'] = 0.9 + 0.1 * torch.rand(B, T, 1, *((D,) if fam.gate == 'channel' else ()), generator=g)
    if fam.write_key: kw['kw'] = k * 0.9
    to = lambda x: x.to(device=device, dtype=dtype)
    return to(q), to(k), to(v), {n: to(x) for n, x in kw.items()}

def cell(fam, B, T, D, device, alg, bwd, repeats, dtype=torch.float32):
    q, k, v, kw = inputs(fam, B, T, D, device, dtype)
    if not bwd:
        def f():
            with torch.no_grad(): recur(k, v, q, rule=fam.name, algorithm=alg, check=False, reads='out', **kw)
    else:
        G = torch.randn(v.shape, generator=torch.Generator().manual_seed(1)).to(v)   # the outputs' gradient (as a layer's)
        def f():
            xs = [x.clone().requires_grad_() for x in (q, k, v, kw['beta'])]
            tr = recur(xs[1], xs[2], xs[0], rule=fam.name, algorithm=alg, check=False, reads='out', **{**kw, 'beta': xs[3]})
            tr.out.backward(G)
    if device.type == 'cuda':
        g = f
        def f(): g(); torch.cuda.synchronize()
    return timed(f, repeats)

def numpy_delta(B, T, D, dtype, seed=0):
    "The textbook per-step DeltaNet update in numpy (batch 1): read, error, outer-product write, read."
    rng = np.random.default_rng(seed)
    k = rng.standard_normal((T, D)).astype(dtype); k /= np.linalg.norm(k, axis=1, keepdims=True)
    v, q, b = rng.standard_normal((T, D)).astype(dtype), rng.standard_normal((T, D)).astype(dtype), rng.random(T).astype(dtype)
    def f():
        S = np.zeros((D, D), dtype); out = np.empty((T, D), dtype)
        for t in range(T):
            p = S @ k[t]; S += np.outer(b[t] * (v[t] - p), k[t]); out[t] = S @ q[t]
        return out
    return f

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--quick', action='store_true'); ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--families', default=None); ap.add_argument('--D', type=int, default=64)
    ap.add_argument('--threads', type=int, default=None, help='torch intra-op threads (default: torch\'s own; use 1 on a busy machine)')
    a = ap.parse_args(argv)
    if a.threads: torch.set_num_threads(a.threads)
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    fams = [f for f in FAMILIES.values() if not f.exemplar]
    if a.families: fams = [FAMILIES[n] for n in a.families.split(',')]
    elif a.quick: fams = [FAMILIES['hebbian'], FAMILIES['delta']]
    Ts, Bs = ((1024, 4096) if a.quick else (256, 1024, 4096)), (1, 16)
    print(f"# {datetime.date.today()} | {device} ({platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads) | load average {os.getloadavg()[0]:.2f} | D = {a.D}, float32 | "
          f"malloc: {', '.join(f'{k}={os.environ[k]}' for k in ('MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_') if k in os.environ) or 'glibc defaults'}")
    print(f"{'family':13s} {'pass':8s} {'B':>3s} {'T':>5s} {'sequential ms':>14s} {'chunked ms':>11s} {'ratio':>7s}")
    R = {}
    for fam in fams:
        for bwd in (False, True):
            for B in Bs:
                for T in Ts:
                    if bwd and T > 1024: continue                                 # the loop's backward over 4096 steps takes minutes
                    s = cell(fam, B, T, a.D, device, 'sequential', bwd, a.repeats)
                    c = cell(fam, B, T, a.D, device, 'chunked', bwd, a.repeats)
                    R[fam.name, bwd, B, T] = s / c
                    print(f"{fam.name:13s} {'fwd+bwd' if bwd else 'fwd':8s} {B:3d} {T:5d} {s * 1e3:14.1f} {c * 1e3:11.1f} {s / c:7.1f}x", flush=True)
    base = {}
    for dt, tdt in ((np.float64, torch.float64), (np.float32, torch.float32)):
        tn = timed(numpy_delta(1, 4096, a.D, dt), a.repeats)
        q, k, v, kw = inputs(FAMILIES['delta'], 1, 4096, a.D, torch.device('cpu'), dtype=tdt)
        def f():
            with torch.no_grad(): recur(k, v, q, rule='delta', algorithm='sequential', check=False, reads='out', **kw)
        ts = timed(f, a.repeats); base[dt.__name__] = tn / ts
        print(f"numpy loop (delta, B=1, T=4096, {dt.__name__}): {tn * 1e3:.1f} ms; sequential loop {ts * 1e3:.1f} ms: loop/numpy speed {tn / ts:.2f}x")
    K = {}
    why = kernel_available(device)
    if why: print(f"fla's kernels: not run ({why})")
    else:                                                                 # ours against fla's chunk kernel, forward, T = 4096
        for fam in fams:
            if fam.kernel is None: continue
            kdt = torch.float16 if fam.kernel == 'delta_rule' else torch.float32   # fla's DeltaNet chunk kernel refuses float32
            for B in Bs:
                c = cell(fam, B, 4096, a.D, device, 'chunked', False, a.repeats)
                kt = cell(fam, B, 4096, a.D, device, 'kernel', False, a.repeats, kdt)
                K[fam.name, B] = c / kt
                print(f"{fam.name:13s} fwd {B:3d}  4096  chunked (float32) {c * 1e3:.2f} ms, fla chunk_{fam.kernel} "
                      f"({str(kdt).split('.')[-1]}) {kt * 1e3:.2f} ms: chunked/fla {c / kt:.1f}x", flush=True)
    targets = [('chunked hebbian >= 10x sequential, B=1, T=4096, fwd', R.get(('hebbian', False, 1, 4096)), 10, False),
               ('chunked delta >= 8x sequential, B=1, T=4096, fwd', R.get(('delta', False, 1, 4096)), 8, False),
               ('chunked delta >= 3x sequential, B=16, T=4096, fwd', R.get(('delta', False, 16, 4096)), 3, False),
               ('chunked delta fwd+bwd >= 10x sequential fwd+bwd, B=1, T=1024', R.get(('delta', True, 1, 1024)), 10, False),
               ('sequential loop no slower than numpy (float32, B=1, T=4096)', base['float32'], 1, False),
               ('sequential loop no slower than numpy (float64, B=1, T=4096)', base['float64'], 1, False)]   # (name, ratio, threshold, at most)
    if device.type == 'cuda':
        targets += [(f'chunked delta within 5x of fla chunk_delta_rule (time chunked/fla <= 5), B={B}, T=4096, fwd',
                     K.get(('delta', B)), 5, True) for B in Bs]
    print('\ntargets:')
    for name, r, t, most in targets:
        ok = r is not None and (r <= t if most else r >= t)
        print(f"  {'met    ' if ok else 'NOT met' if r is not None else 'not run'} {name}: {'-' if r is None else f'{r:.2f}x'}")

if __name__ == '__main__': main()
