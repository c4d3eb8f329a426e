"""Generation throughput of `pavlovattn.model.layers.AttentionMixer`, per family: one token at a time by `step` (the carried state)
against re-running the prefix for every token, and against one call on the whole sequence (the chunked form where a family
has one, the loop for softmax).

Workload: one mixer, d_model 64, 4 heads, short convolution 4, float32, no gradient, batch --batch (1), T --T (256) tokens.
Each measure: one warm-up, then the median of --repeats timed runs. Tokens/s are of the mixer alone (no embedding, no head):
`step` = T tokens generated one by one; `prefix` = the same T tokens when every token re-runs its whole prefix (T calls of
length 1..T); `whole` = one forward on the T tokens (what a prompt or training costs), not generation. Threads: 1 by default.
Usage: python benchmarks/bench_layers.py [--families delta,gated-delta,...] [--T 256] [--batch 1] [--repeats 3] [--threads 1]
                                        [--part generation|rates|auto|all] [--rate-T 1024,4096] [--rate-batch 1,16]

Part `rates` (issue 29): the chunked form's arithmetic rate per family, next to fla's pure-torch chunked references and
transformers' torch fallback (`torch_chunk_gated_delta_rule` of Qwen3-Next) on the same inputs, and the measured rate of
64 x 64 batched matrix products, all in one run. Workload: one head, d_k = d_v = 64, chunk 64, float32, unit keys,
rates in (0, 1), gates in (0.9, 1) (`bench_chunked.inputs`), batch in --rate-batch, T in --rate-T; forward under no_grad
and, for the error-correcting families, forward + backward with a fixed random gradient of the outputs (as a layer's
backward brings; until 2026-12-03 the outputs' sum, whose gradient is one number broadcast with zero strides, which
sends torch's batched products down a per-matrix path once no zero-filled copy stands in between). GFLOP/s use one nominal count for every
implementation of a family, the chunked algorithm's products per chunk of C steps and d = 64 channels: error-correcting
families 8 C^2 d + 6 C d^2 (the pair matrix, the triangular solve on [U, W], errors, state update, the causal read,
P U and Q S), the others 4 C^2 d + 4 C d^2; so a ratio of rates is a ratio of times. `matmul` is torch.bmm on
[M, 64, 64] x [M, 64, 64] at M = the batch ours issues (B x chunks per segment) and the best M of 16..4096. A reference is
run only where its conventions match (q scaled by sqrt(d) where it hard-codes d^-1/2); `max rel` is its largest
difference from ours relative to our largest output (it must be small, else the rows time different computations).
fla's references: delta_rule_chunkwise (delta), naive_chunk_gated_delta_rule (gated-delta), naive_chunk_simple_gla
(decay, hebbian with a zero log-gate), naive_chunk_linear_attn (hebbian); fla has no chunked GLA reference.

Part `auto` (issue 29): the rule of `recur(algorithm='auto')` for short sequences that need a gradient, checked against
both forms it chooses between. Workload: `bench_chunked.inputs` (as above), d_k = d_v in --auto-d (16,64), batch x heads
in --auto-batch (1,16,256), T in --auto-T (8,16,32,64,128), families --auto-families; gradients on q, k, v, then
backward() of the outputs' sum (reads='out', what a layer computes). Each cell times the loop ('sequential') and the
chunked form (chunk 64) back to back and prints loop/chunked (> 1: chunked faster), auto's choice, and `ok` when auto's
choice is the faster of the two or within 1.25x of it (the criterion, fixed before the run).

Part `compiled` (issue 50): the compiled loop (`'compiled'`, numba on the CPU) against the loop and the chunked form, on the
calls it answers: outputs and final state (reads='out'), float32, `bench_chunked.inputs`, d_k = d_v in --compiled-d
(16,64,128), (batch x heads, T) in --compiled-cells (1x256, 64x40, 1000x40: one long sequence, a training batch of the
trained tier, a probing batch), families --compiled-families, with a gradient (a fixed random gradient of the outputs,
backward) and without. Each cell times the three back to back and prints each one's ms, auto's choice, and `ok` when
auto's choice is the fastest of the three or within 1.25x of it (the criterion, fixed before the run).

Part `layout` (issue 29): where a layer's forward goes besides its products. AttentionMixer(64, 4 heads, conv 4), float32,
algorithm 'chunked', batch x T in --layout-cells (16x1024, 1x4096), families --layout-families, no gradient and
forward + backward; torch.profiler over --repeats calls after one warm-up: total ms a call, and the shares of self CPU time
in layout work (aten::copy_, cat, contiguous, clone), in the q/k norm (aten::linalg_vector_norm) and in the short
convolution (aten::mkldnn_convolution / convolution). To compare two versions, run this part of each back to back
(`PYTHONPATH=<other tree>`), alternating, in one shell command.

Part `profile` (issue 29): where the chunked form's own forward + backward goes, on the `rates` workload (one head, d_k = d_v
= 64, chunk 64, float32, batch x T in --profile-cells, default 16x4096; families --profile-families, default delta; a fixed
random gradient of the outputs). torch.profiler over --repeats calls after one warm-up: ms a call, and shares of the total
self CPU time: the triangular solve (aten::linalg_solve_triangular with everything it calls, plus the gradient node of the
inverse it computes), fills (aten::fill_, aten::zero_), copies (aten::copy_, cat, contiguous, clone) and products (bmm,
baddbmm, mm, addmm).
"""
import argparse, importlib.util, inspect, pathlib, statistics, sys, time, platform, datetime
import torch
from pavlovattn.model.layers import AttentionMixer
from pavlovattn.model.families import FAMILIES
from pavlovattn.model.core import recur
sys.path.insert(0, str(pathlib.Path(__file__).parent)); from bench_chunked import inputs   # one workload for both benchmarks

def timed(f, repeats):
    f(); ts = []
    for _ in range(repeats):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return statistics.median(ts)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--families', default=','.join(FAMILIES)); ap.add_argument('--T', type=int, default=256)
    ap.add_argument('--batch', type=int, default=1); ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--threads', type=int, default=1); ap.add_argument('--d_model', type=int, default=64)
    ap.add_argument('--part', default='all', choices=('generation', 'rates', 'auto', 'compiled', 'layout', 'profile', 'all'))
    ap.add_argument('--compiled-families', default='delta,gated-delta,hebbian,gla'); ap.add_argument('--compiled-d', default='16,64,128')
    ap.add_argument('--compiled-cells', default='1x256,64x40,1000x40')
    ap.add_argument('--profile-families', default='delta'); ap.add_argument('--profile-cells', default='16x4096')
    ap.add_argument('--layout-families', default='delta,gla'); ap.add_argument('--layout-cells', default='16x1024,1x4096')
    ap.add_argument('--auto-families', default='delta,gated-delta,hebbian,gla'); ap.add_argument('--auto-d', default='16,64')
    ap.add_argument('--auto-batch', default='1,16,256'); ap.add_argument('--auto-T', default='8,16,32,64,128')
    ap.add_argument('--rate-T', default='1024,4096'); ap.add_argument('--rate-batch', default='1,16')
    a = ap.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
    if a.part in ('generation', 'all'): generation(a)
    if a.part in ('rates', 'all'): rates(a)
    if a.part in ('auto', 'all'): auto(a)
    if a.part in ('compiled', 'all'): compiled(a)
    if a.part in ('layout', 'all'): layout(a)
    if a.part in ('profile', 'all'): profile(a)

def generation(a):
    print(f'# {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, torch {torch.__version__}, '
          f'threads {torch.get_num_threads()}, d_model {a.d_model}, 4 heads, batch {a.batch}, T {a.T}, float32, no gradient')
    print(f"{'family':14s} {'step tok/s':>11s} {'prefix tok/s':>13s} {'step/prefix':>12s} {'whole tok/s':>12s} {'max |step - whole|':>19s}")
    for rule in a.families.split(','):
        torch.manual_seed(0); m = AttentionMixer(a.d_model, 4, rule); x = torch.randn(a.batch, a.T, a.d_model)
        if 'chunked' in FAMILIES[rule].algorithms: m.algorithm = 'chunked'
        with torch.no_grad():
            def gen():
                S, ys = None, []
                for t in range(a.T): y, S = m.step(x[:, t], S); ys.append(y)
                return torch.stack(ys, 1)
            def prefix(): return [m(x[:, :t + 1])[:, -1] for t in range(a.T)]
            ts, tp, tw = timed(gen, a.repeats), timed(prefix, max(1, a.repeats // 3)), timed(lambda: m(x), a.repeats)
            err = (gen() - m(x)).abs().max().item()
        n = a.batch * a.T
        print(f'{rule:14s} {n / ts:11.0f} {n / tp:13.0f} {tp / ts:12.1f} {n / tw:12.0f} {err:19.2e}')

def _fla_naive(name):
    "fla's pure-torch reference file `fla/ops/<name>/naive.py`, loaded without importing fla (its ops need Triton); None without fla-core."
    spec = importlib.util.find_spec('fla')
    if spec is None: return None
    f = pathlib.Path(list(spec.submodule_search_locations)[0]) / 'ops' / name / 'naive.py'
    s = importlib.util.spec_from_file_location(f'fla_naive_{name}', f); m = importlib.util.module_from_spec(s); s.loader.exec_module(m)
    return m

def _transformers_gdn():
    "transformers' own torch function: where fla is installed, transformers wraps it to call fla's Triton kernel instead (no CPU)."
    try: return inspect.unwrap(importlib.import_module('transformers.models.qwen3_next.modeling_qwen3_next').torch_chunk_gated_delta_rule)
    except Exception as e: return f'{type(e).__name__}: {e}'.splitlines()[0]

def references(fam, q, k, v, kw, C=64):
    "name -> function of (q, k, v, kw) giving outputs [B, T, 1, d] in our convention, for the references that compute `fam`."
    D = q.shape[-1]; s = D ** 0.5; out = {}
    lg = (lambda kw: torch.log(kw['gamma'])) if 'gamma' in kw else (lambda kw: torch.zeros_like(kw['beta']))
    if fam.name == 'delta' and (m := _fla_naive('delta_rule')):
        hf = lambda x: x.transpose(1, 2)
        out['fla delta_rule_chunkwise'] = lambda q, k, v, kw, m=m: hf(m.delta_rule_chunkwise(hf(q * s), hf(k), hf(v), hf(kw['beta']), chunk_size=C)[0])
    if fam.name in ('delta', 'gated-delta'):
        if (m := _fla_naive('gated_delta_rule')):
            out['fla naive_chunk_gated_delta_rule'] = lambda q, k, v, kw, m=m: m.naive_chunk_gated_delta_rule(q, k, v, lg(kw), kw['beta'], chunk_size=C, scale=1.0)[0]
        f = _transformers_gdn()
        if callable(f): out['transformers torch_chunk_gated_delta_rule'] = lambda q, k, v, kw, f=f: f(q * s, k, v, lg(kw), kw['beta'], chunk_size=C)[0]
        else: print(f"  (transformers' fallback not run: {f})")
    if fam.name in ('decay', 'hebbian') and (m := _fla_naive('simple_gla')):   # the rate scales the value written
        out['fla naive_chunk_simple_gla'] = lambda q, k, v, kw, m=m: m.naive_chunk_simple_gla(q, k, v * kw['beta'][..., None], lg(kw), chunk_size=C, scale=1.0)[0]
    if fam.name == 'hebbian' and (m := _fla_naive('linear_attn')):
        out['fla naive_chunk_linear_attn'] = lambda q, k, v, kw, m=m: m.naive_chunk_linear_attn(q, k, v * kw['beta'][..., None], scale=1.0)   # returns the outputs alone
    return out

def matmul_rate(M, repeats, d=64):
    "GFLOP/s of torch.bmm on [M, d, d] x [M, d, d]."
    x, y = torch.randn(M, d, d), torch.randn(M, d, d); o = torch.empty(M, d, d)
    return 2 * M * d ** 3 / timed(lambda: torch.bmm(x, y, out=o), repeats) / 1e9

def rates(a, D=64, C=64):
    print(f'# rates: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, torch {torch.__version__}, '
          f'threads {torch.get_num_threads()}, one head, d {D}, chunk {C}, float32')
    best = max(matmul_rate(M, a.repeats) for M in (16, 64, 256, 1024, 4096))
    print(f'matmul [M, 64, 64] best rate over M = 16..4096: {best:.1f} GFLOP/s')
    print(f"{'family':12s} {'pass':7s} {'B':>3s} {'T':>6s} {'implementation':44s} {'ms':>9s} {'GFLOP/s':>8s} {'/matmul(M)':>10s} {'/best':>6s} {'ours x':>7s} {'max rel':>8s}")
    for rule in a.families.split(','):
        fam = FAMILIES[rule]
        if 'chunked' not in fam.algorithms: continue
        ec = fam.error_correcting
        for B in map(int, a.rate_batch.split(',')):
            for T in map(int, a.rate_T.split(',')):
                q, k, v, kw = inputs(fam, B, T, D, torch.device('cpu'))
                flops = B * (T // C) * ((8 if ec else 4) * C * C * D + (6 if ec else 4) * C * D * D)
                n_s = max(1, max(C, 2 ** 18 // (B * D) // C * C) // C); M = B * min(n_s, -(-T // C))
                mm = matmul_rate(M, a.repeats)
                ours = lambda q, k, v, kw: recur(k, v, q, rule=rule, algorithm='chunked', chunk=C, check=False, reads='out', **kw).out
                impls = {'ours (chunked)': ours, **references(fam, q, k, v, kw, C)}
                G = torch.randn(q.shape, generator=torch.Generator().manual_seed(1))   # the outputs' gradient (as a layer's)
                for bwd in ((False, True) if ec else (False,)):
                    t_ours, ref_out = None, None
                    for name, f in impls.items():
                        if bwd:
                            def run(f=f):
                                xs = [x.clone().requires_grad_() for x in (q, k, v)]; f(*xs, kw).backward(G)
                        else:
                            def run(f=f):
                                with torch.no_grad(): return f(q, k, v, kw)
                        t = timed(run, a.repeats)
                        with torch.no_grad(): o = f(q, k, v, kw)
                        if t_ours is None: t_ours, ref_out, err = t, o, 0.0
                        else: err = ((o.to(ref_out) - ref_out).abs().max() / ref_out.abs().max()).item()
                        r = flops * (3 if bwd else 1) / t / 1e9          # backward counted as twice the forward's products
                        print(f"{rule:12s} {'fwd+bwd' if bwd else 'fwd':7s} {B:3d} {T:6d} {name:44s} {t * 1e3:9.2f} {r:8.1f} {r / mm:10.2f} {r / best:6.2f} "
                              f"{t / t_ours:7.2f} {err:8.1e}", flush=True)

def auto(a):
    "loop / chunked forward+backward time per cell, auto's choice, and whether it is the faster form (or within 1.25x)."
    from pavlovattn.model.core import choose_algorithm
    print(f'# auto: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, torch {torch.__version__}, '
          f'threads {torch.get_num_threads()}, float32, forward + backward, chunk 64')
    print(f"{'family':12s} {'d':>3s} {'B*H':>4s} {'T':>4s} {'loop ms':>8s} {'chunked ms':>10s} {'loop/chunked':>12s} {'auto':>10s} {'ok':>3s}")
    n_ok = n = 0
    for rule in a.auto_families.split(','):
        fam = FAMILIES[rule]
        for D in map(int, a.auto_d.split(',')):
            for B in map(int, a.auto_batch.split(',')):
                for T in map(int, a.auto_T.split(',')):
                    q, k, v, kw = inputs(fam, B, T, D, torch.device('cpu'))
                    def run(alg):
                        xs = [x.clone().requires_grad_() for x in (q, k, v)]
                        recur(xs[1], xs[2], xs[0], rule=rule, algorithm=alg, chunk=64, check=False, reads='out', **kw).out.sum().backward()
                    t = {alg: timed(lambda alg=alg: run(alg), a.repeats) for alg in ('sequential', 'chunked')}
                    pick = choose_algorithm(fam, T, D, True, B, 'cpu')
                    ok = t[pick] <= 1.25 * min(t.values()); n_ok += ok; n += 1
                    print(f"{rule:12s} {D:3d} {B:4d} {T:4d} {t['sequential'] * 1e3:8.2f} {t['chunked'] * 1e3:10.2f} "
                          f"{t['sequential'] / t['chunked']:12.2f} {pick:>10s} {'ok' if ok else 'NO':>3s}", flush=True)
    print(f'auto within 1.25x of the faster form in {n_ok} of {n} cells')

def compiled(a):
    "Per cell: ms of the loop, the chunked form and the compiled loop (outputs and final state), auto's choice, and whether it is the fastest (or within 1.25x)."
    from pavlovattn.model.core import choose_algorithm
    print(f'# compiled: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, torch {torch.__version__}, '
          f'threads {torch.get_num_threads()}, float32, reads=out, chunk 64')
    print(f"{'family':12s} {'d':>3s} {'B*H':>5s} {'T':>5s} {'pass':8s} {'loop ms':>8s} {'chunked ms':>10s} {'compiled ms':>11s} {'auto':>10s} {'ok':>3s}")
    algs, n_ok, n = ('sequential', 'chunked', 'compiled'), 0, 0
    for rule in a.compiled_families.split(','):
        fam = FAMILIES[rule]
        for D in map(int, a.compiled_d.split(',')):
            for cell in a.compiled_cells.split(','):
                B, T = map(int, cell.split('x'))
                q, k, v, kw = inputs(fam, B, T, D, torch.device('cpu'))
                gen = torch.Generator().manual_seed(1); go = torch.randn(B, T, 1, D, generator=gen)
                for grad in (True, False):
                    def run(alg):
                        xs = [x.clone().requires_grad_(grad) for x in (q, k, v)]
                        out = recur(xs[1], xs[2], xs[0], rule=rule, algorithm=alg, chunk=64, check=False, reads='out', **kw).out
                        if grad: out.backward(go.expand_as(out))
                    t = {alg: timed(lambda alg=alg: run(alg), a.repeats) for alg in algs}
                    pick = choose_algorithm(fam, T, D, grad, B, 'cpu', True)
                    ok = t[pick] <= 1.25 * min(t.values()); n_ok += ok; n += 1
                    print(f"{rule:12s} {D:3d} {B:5d} {T:5d} {'fwd+bwd' if grad else 'fwd':8s} " + ' '.join(f'{t[x] * 1e3:{w}.2f}' for x, w in zip(algs, (8, 10, 11)))
                          + f" {pick:>10s} {'ok' if ok else 'NO':>3s}", flush=True)
    print(f'auto within 1.25x of the fastest of the three in {n_ok} of {n} cells')

def layout(a):
    "Per family and cell: ms a forward (and forward+backward), and the shares of layout copies, the q/k norm and the convolution."
    from torch.profiler import profile, ProfilerActivity
    import pavlovattn
    print(f'# layout: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, pavlovattn from {pathlib.Path(pavlovattn.__file__).parent}, '
          f'threads {torch.get_num_threads()}, d_model 64, 4 heads, conv 4, chunked, float32')
    groups = {'copies': ('aten::copy_', 'aten::cat', 'aten::contiguous', 'aten::clone'), 'norm': ('aten::linalg_vector_norm',),
              'conv': ('aten::mkldnn_convolution', 'aten::convolution', 'aten::_convolution')}
    print(f"{'family':12s} {'pass':7s} {'B x T':>9s} {'ms':>8s} {'copies':>7s} {'norm':>6s} {'conv':>6s}")
    for rule in a.layout_families.split(','):
        for cell in a.layout_cells.split(','):
            B, T = map(int, cell.split('x'))
            torch.manual_seed(0); m = AttentionMixer(64, 4, rule, algorithm='chunked'); x = torch.randn(B, T, 64)
            for bwd in (False, True):
                def run():
                    if bwd: m(x).sum().backward()
                    else:
                        with torch.no_grad(): m(x)
                run()
                with profile(activities=[ProfilerActivity.CPU]) as p:
                    for _ in range(a.repeats): run()
                ev = p.key_averages(); tot = sum(e.self_cpu_time_total for e in ev)
                share = {g: sum(e.self_cpu_time_total for e in ev if e.key in names) / tot for g, names in groups.items()}
                print(f"{rule:12s} {'fwd+bwd' if bwd else 'fwd':7s} {cell:>9s} {tot / a.repeats / 1e3:8.2f} {share['copies']:7.1%} "
                      f"{share['norm']:6.1%} {share['conv']:6.1%}", flush=True)

def profile(a, D=64, C=64):
    "Per family and cell: ms a forward + backward of the chunked form alone, and the shares of the solve, fills, copies and products."
    from torch.profiler import profile as prof, ProfilerActivity
    print(f'# profile: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, threads {torch.get_num_threads()}, one head, d {D}, chunk {C}, '
          f'float32, forward + backward of recur(algorithm=\'chunked\')')
    groups = {'fills': ('aten::fill_', 'aten::zero_'), 'copies': ('aten::copy_', 'aten::cat', 'aten::contiguous', 'aten::clone'),
              'products': ('aten::bmm', 'aten::baddbmm', 'aten::baddbmm_', 'aten::mm', 'aten::addmm')}
    print(f"{'family':12s} {'B x T':>9s} {'ms':>8s} {'solve':>6s} {'fills':>6s} {'copies':>7s} {'products':>8s}")
    for rule in a.profile_families.split(','):
        fam = FAMILIES[rule]
        for cell in a.profile_cells.split(','):
            B, T = map(int, cell.split('x'))
            q, k, v, kw = inputs(fam, B, T, D, torch.device('cpu'))
            G = torch.randn(q.shape, generator=torch.Generator().manual_seed(1))
            def run():
                xs = [x.clone().requires_grad_() for x in (q, k, v)]
                recur(xs[1], xs[2], xs[0], rule=rule, algorithm='chunked', chunk=C, check=False, reads='out', **kw).out.backward(G)
            run()
            with prof(activities=[ProfilerActivity.CPU]) as p:
                for _ in range(a.repeats): run()
            ev = p.key_averages(); tot = sum(e.self_cpu_time_total for e in ev)
            share = {g: sum(e.self_cpu_time_total for e in ev if e.key in names) / tot for g, names in groups.items()}
            solve = sum(e.cpu_time_total for e in ev if e.key == 'aten::linalg_solve_triangular' or
                        (e.key.startswith('autograd::engine::evaluate_function') and 'TriInv' in e.key)) / tot
            print(f"{rule:12s} {cell:>9s} {tot / a.repeats / 1e3:8.2f} {solve:6.1%} {share['fills']:6.1%} {share['copies']:7.1%} "
                  f"{share['products']:8.1%}", flush=True)

if __name__ == '__main__': main()
