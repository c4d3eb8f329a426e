"""Training cost of the trained-models page in one run: batch generation, each family's training step, and the same model with
`torch.nn.MultiheadAttention` as its mixer, side by side as ratios (one process, one load, so the ratios compare like with like).

Workload: `pavlovattn.apps.models.AssocLM` at the default (CPU) size of the trained-probes page — d_model 64, 2 layers, 2 heads,
MLP x2, short convolution 4 — on the vector cue->outcome task (sequence length 40, or --seq-len T; batch 32; or any task of
`pavlovattn.apps.models.TASKS` with --task), AdamW, float32. Timed separately: the generator (`task.batch`), and one training step on
a batch already made (forward + backward + clip + optimiser step, what `train` does besides generating). Each row: one warm-up,
then the median of REPEATS timed blocks of STEPS calls; the training steps' blocks are interleaved round by round (MHA, then each
family), and a family's ratio is the median over rounds of its block over that round's MHA block (robust to a load that changes). The MHA row is the same AssocLM with every mixer replaced by causal
`nn.MultiheadAttention` (same width and heads). Ratios: each row's time over the MHA step. Threads: 1 by default (`train`'s
default); --threads N to change. --profile prints the torch profiler's top operators of one family's step (--profile delta).
Also reports the steps the page's protocol trains on that task and the resulting estimated wall time per family.
--seq-lens 40,256 runs the whole table at each length in the same process (the ratios side by side). --breakdown splits one step of
each family (and of the MHA model) into its parts, each timed alone on the same batch: the mixers (forward + backward of the
`AttentionMixer`s on their inputs), their short convolutions + SiLU (forward + backward), the rest of forward + backward, and the
optimiser (clip + AdamW step; also AdamW's foreach and fused variants, which `train` does not use, to show what they would save).
--chunk N sets every chunked mixer's chunk size (AssocLM uses 32: at most 32 steps a chunk, a sequence cut into equal chunks)
to measure another size; it is not what `train` runs.
The token-task generator is timed too (--token-task, default rebind): every generator's share of an MHA step must stay under 10%.
--ensemble N trains N protocol-size models (vector task; --ensemble-steps steps each, seeds 0..N-1, families cycling through
--families) as the trained tier trains them, `models.get_models` in one worker process per core, and the same N one after
another in this process, both from an empty cache: the ratio of the two, and the throughput as model FLOPs per second (torch's
flop counter on one training step, forward + backward; evaluation and batch generation run but are not counted) against the
machine's matmul rate measured with every core busy (one process per core multiplying the model's own MLP shapes, 1280 x 64 x
128, at one thread). From that throughput it estimates the trained tier's training time (TIER_STEPS, early stops not counted;
probing not included).
--batch-scaling E times one training step of each family at the batch (32) and at E times it, interleaved round by round:
the time per sequence at E x the batch over the time per sequence at the batch. An ensemble of E members trained as one
(stacked weights, members along the batch: `torch.func.stack_module_state` with `vmap`, or grouped weights) does the
work of the E x batch step and more (batched products per member instead of one product), so this ratio bounds what it
can save per model: near 1.0, the step's cost grows with the batch and an ensemble saves nothing on this machine.
Usage: python benchmarks/bench_training.py [--families hebbian,decay,delta,gated-delta,softmax,gla] [--steps 10] [--repeats 3]
       [--threads 1] [--task vector|vector-single|mqar|repeated|rebind] [--seq-len T | --seq-lens 40,256] [--device cpu]
       [--profile delta] [--breakdown] [--token-task rebind] [--chunk 32] [--ensemble 8 --ensemble-steps 60] [--batch-scaling 5]
"""
import argparse, dataclasses, multiprocessing, os, statistics, tempfile, time, platform, datetime
import torch
from torch import nn
from pavlovattn.apps.models import AssocLM, TASKS, TrainConfig, loss_and_metric, train, get_models, cpu_cores, _adamw, _foreach

# the trained tier's training steps at most (early stops not counted): trained-cue-competition's 4 families x 5 seeds x 600
# and their sweeps 4 x 2 x 150; the ablation's 6 cells x 4 families x 5 seeds x 300; the repeated-key claim's 6 x 5 x 300
TIER_STEPS = 4 * 5 * 600 + 4 * 2 * 150 + 6 * 4 * 5 * 300 + 6 * 5 * 300

PROTOCOL_STEPS = {'vector': 5 * 600 + 2 * 150, 'rebind': 5 * 300, 'vector-single': 5 * 300}   # steps per family (at most); vector-single: the ablation

class CausalMHA(nn.Module):
    "`nn.MultiheadAttention` as a causal token mixer with AttentionMixer's call signature (the reference row)."
    def __init__(self, d_model, n_heads):
        super().__init__(); self.att = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
    def forward(self, x):
        T = x.shape[1]; mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        return self.att(x, x, x, attn_mask=mask, need_weights=False)[0]

def _timed(fn, steps, repeats, cuda):
    fn(); ts = []
    for _ in range(repeats):
        if cuda: torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(steps): fn()
        if cuda: torch.cuda.synchronize()
        ts.append((time.perf_counter() - t) / steps)
    return statistics.median(ts)

CHUNK = None   # --chunk: the chunk size of every chunked mixer (AssocLM's is 32), to measure what another size would cost

def _model(task, rule, device):
    torch.manual_seed(0)
    if rule != 'mha':
        m = AssocLM(task, rule)
        if CHUNK:
            for x in m.mix: x.chunk = CHUNK
        return m.to(device)
    m = AssocLM(task, 'hebbian'); m.mix = nn.ModuleList([CausalMHA(64, 2) for _ in m.mix]); return m.to(device)

def _breakdown(task, rules, b, steps, repeats, cuda, device):
    "Each part of one training step, timed alone: {rule: {part: seconds}}."
    out = {}
    for rule in rules:
        model = _model(task, rule, device); loss, _ = loss_and_metric(model, b); loss.backward()
        xs = []                                                              # each mixer's input in this batch
        hs = [model.mix[i].register_forward_hook(lambda m, a, o: xs.append(a[0].detach())) for i in range(len(model.mix))]
        with torch.no_grad(): model(b)
        for h in hs: h.remove()
        gs = [torch.randn_like(x) for x in xs]                               # a fixed output gradient (a sum's is a broadcast
        def mixers():                                                        # zero-stride tensor, which batched products copy)
            for m, x, g in zip(model.mix, xs, gs): m(x.requires_grad_()).backward(g)
        convs = [(c, x.new_empty(x.shape[0], x.shape[1], c.channels).normal_().requires_grad_(), x.new_empty(x.shape[0], x.shape[1], c.channels).normal_())
                 for m, x in zip(model.mix, xs) if getattr(m, 'convs', None) is not None for c in m.convs]   # each conv's input and output gradient, drawn once
        def conv():
            for c, xc, g in convs: c(xc).backward(g)
        def fwd_bwd(): loss, _ = loss_and_metric(model, b); model.zero_grad(); loss.backward()
        r = dict(step=None, forward_backward=_timed(fwd_bwd, steps, repeats, cuda), mixers=_timed(mixers, steps, repeats, cuda),
                 conv_silu=_timed(conv, steps, repeats, cuda) if convs else 0.0)
        for name, kw in (('adamw', dict(foreach=False)), ('adamw_foreach', dict(foreach=True)), ('adamw_fused', dict(fused=True))):
            try: opt = torch.optim.AdamW(model.parameters(), 1e-3, **kw)
            except (RuntimeError, TypeError): r[name] = float('nan'); continue
            r[name] = _timed(lambda: (nn.utils.clip_grad_norm_(model.parameters(), 1.0), opt.step()), steps, repeats, cuda)
        out[rule] = r
    return out

def _table(task, a, fams, gens):
    "The training-step table at one sequence length: {row: seconds}."
    cuda = a.device.startswith('cuda'); gen = torch.Generator().manual_seed(0)
    b = {k: v.to(a.device) for k, v in task.batch(a.batch, gen).items()}
    res = {f'generator ({n})': _timed(lambda t=t: t.batch(a.batch, gen), a.steps, a.repeats, False) for n, t in gens.items()}
    steps = {}
    for rule in ['mha'] + fams:
        model = _model(task, rule, a.device); opt = _adamw(model.parameters(), TrainConfig('vector', rule, 0, lr=1e-3))
        def step(model=model, opt=opt):                # the optimiser and clip of `train` (models page), for every row alike
            loss, _ = loss_and_metric(model, b); opt.zero_grad(); loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=_foreach(a.device)); opt.step()
        steps[rule] = step; step()
        if rule == a.profile:
            from torch.profiler import profile, ProfilerActivity
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                for _ in range(a.steps): step()
            print(prof.key_averages().table(sort_by='self_cpu_time_total', row_limit=15))
    blocks = {r: [] for r in steps}                  # the rows' blocks interleaved (mha, delta, ..., mha, delta, ...): a change of
    for _ in range(a.repeats):                       # load between blocks hits every row alike, and each ratio pairs one round's blocks
        for r, f in steps.items(): blocks[r].append(_timed(f, a.steps, 1, cuda))
    for r in steps: res[r] = statistics.median(blocks[r])
    res['_ratio'] = {r: statistics.median(x / m for x, m in zip(blocks[r], blocks['mha'])) for r in steps}
    br = _breakdown(task, ['mha'] + fams, b, a.steps, a.repeats, cuda, a.device) if a.breakdown else None
    return res, br, b

def step_flops(task, rule, batch=32, model=None) -> float:
    """Model FLOPs of one training step (forward + backward) of `model` (default: the protocol-size model of `rule`): the
    matrix products by torch's flop counter, the short convolutions counted here, 2 B T C K multiply-adds' FLOPs for the
    output and for each of its two gradients. The counter sees no compiled loop (the CPU's `short_conv`), and on torch's
    depthwise convolution it counted the taps' gradient without its groups, C times over (270 of 946 MFLOP a delta step)."""
    from torch.utils.flop_counter import FlopCounterMode
    from pavlovattn.model.layers import ShortConv
    model = model if model is not None else _model(task, rule, 'cpu'); b = task.batch(batch, torch.Generator().manual_seed(0))
    # the recurrence counted as the chunked form's matrix products, as in every record: the compiled loop that AssocLM runs
    # on the CPU from checkpoint version 6 is invisible to the counter (it would count no recurrence at all)
    place = getattr(model, '_place', None)
    if place is not None:
        model._place = lambda h: h
        for m in model.mix: m.algorithm = model._alg
    try:
        with FlopCounterMode(display=False) as fc: loss, _ = loss_and_metric(model, b); loss.backward()
    finally:
        if place is not None: del model._place
    counted = sum(v for op, v in fc.get_flop_counts().get('Global', {}).items() if 'convolution' in str(op))
    convs = sum(3 * 2 * batch * task.seq_len * m.channels * m.size for m in model.modules() if isinstance(m, ShortConv))
    return float(fc.get_total_flops() - counted + convs)

def _matmul_rate(seconds, q):
    torch.set_num_threads(1); a, b = torch.randn(1280, 64), torch.randn(64, 128); n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        for _ in range(50): torch.mm(a, b)
        n += 50
    f = 2 * 1280 * 64 * 128 * n
    q.put((f / (time.perf_counter() - t0), f / (time.process_time() - c0)))   # per second of wall clock, per second of CPU time

def matmul_rate(procs:int, seconds:float=3.0) -> tuple:
    "FLOP/s of `procs` processes multiplying at once (one thread each): (summed over wall clock: the machine's matmul rate with every core busy, at this load; per CPU-second of one core, which another job's load does not lower)."
    ctx = multiprocessing.get_context('spawn'); q = ctx.Queue()
    ps = [ctx.Process(target=_matmul_rate, args=(seconds, q)) for _ in range(procs)]
    for p in ps: p.start()
    r = [q.get() for _ in ps]
    for p in ps: p.join()
    return sum(w for w, _ in r), statistics.mean(c for _, c in r)

def ensemble(a, fams):
    "Training N protocol-size models at once (`get_models`) and one after another (`train`): seconds, ratio, FLOP/s against the matmul rate."
    task = TASKS['vector']
    cfgs = [TrainConfig(task='vector', rule=fams[i % len(fams)], seed=i, lr=1e-2, steps=a.ensemble_steps, target=2.0, eval_every=50) for i in range(a.ensemble)]
    flops = sum(step_flops(task, c.rule) for c in cfgs) * a.ensemble_steps
    cores = cpu_cores(); peak, core = matmul_rate(cores)
    with tempfile.TemporaryDirectory() as d:
        os.environ['PAVLOVATTN_CACHE'] = d; t0 = time.perf_counter()
        got = get_models(cfgs, progress=False, workers=cores); together = time.perf_counter() - t0
    busy = sum(m['seconds'] for _, m in got) / cores                    # the members' own training time per core: the pool's start left out
    t0, c0 = time.perf_counter(), time.process_time()
    for c in cfgs: train(c, progress=False)
    alone, cpu = time.perf_counter() - t0, time.process_time() - c0     # one thread: its CPU time is what an idle core would take
    print(f'## ensemble: {a.ensemble} models ({", ".join(sorted(set(fams)))}), {a.ensemble_steps} steps each, vector task, batch 32, d_model 64')
    print(f'at once (get_models, {cores} worker processes, pool start included): {together:.1f} s; one after another (train): {alone:.1f} s; '
          f'ratio {alone / together:.2f}x; without the pool\'s start (the members\' training seconds per core) {busy:.1f} s, ratio {alone / busy:.2f}x')
    print(f'model FLOPs {flops / 1e9:.1f} G: at once {flops / together / 1e9:.1f} GFLOP/s, one after another {flops / alone / 1e9:.1f} GFLOP/s; '
          f'matmul rate with {cores} cores busy {peak / 1e9:.1f} GFLOP/s: fraction {flops / together / peak:.2f} (without the pool\'s start '
          f'{flops / busy / peak:.2f}; one after another {flops / alone / peak:.2f})')
    rate = a.ensemble * a.ensemble_steps / together
    print(f'the trained tier: at most {TIER_STEPS:,} steps at {rate:.1f} steps/s (this mix of families, this load) = ~{TIER_STEPS / rate / 60:.0f} min of training '
          '(early stops shorten it; probing and the page\'s other work add to it)')
    per_step = cpu / (a.ensemble * a.ensemble_steps)                     # CPU-seconds of one step (evaluation and batches included)
    print(f'by CPU time (what another job\'s load does not lower): {1e3 * per_step:.1f} ms of one core per step, model FLOPs {flops / cpu / 1e9:.1f} GFLOP per '
          f'CPU-second against a core\'s matmul rate of {core / 1e9:.1f}: fraction {flops / cpu / core:.2f}; on {cores} idle cores, each training its own '
          f'models, the trained tier\'s training would take ~{TIER_STEPS * per_step / cores / 60:.0f} min (at most; one model after another on one core: '
          f'~{TIER_STEPS * per_step / 60:.0f} min)', flush=True)

def batch_scaling(a, fams, E):
    "Per-sequence time of a training step at E x the batch over that at the batch, per family (median over rounds of interleaved blocks)."
    task = TASKS[a.task]; out = {}
    for r in fams:
        steps = {}
        for B in (a.batch, E * a.batch):
            model = _model(task, r, a.device); opt = torch.optim.AdamW(model.parameters(), 3e-3, weight_decay=0.01)
            b = {k: v.to(a.device) for k, v in task.batch(B, torch.Generator().manual_seed(0)).items()}
            def step(model=model, opt=opt, b=b):
                loss, _ = loss_and_metric(model, b); opt.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step()
            steps[B] = step
        rounds = [(_timed(steps[a.batch], a.steps, 1, False), _timed(steps[E * a.batch], max(1, a.steps // E), 1, False)) for _ in range(a.repeats)]
        out[r] = statistics.median(big / (E * small) for small, big in rounds)
        small = statistics.median(s for s, _ in rounds)
        print(f'{r:12s} batch {a.batch}: {1e3 * small:7.2f} ms/step; batch {E * a.batch}: per sequence {out[r]:.2f} x batch {a.batch}\'s '
              f'(an ensemble of {E} saves at most {1 - out[r]:.0%} per model)', flush=True)
    return out

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--families', default='hebbian,decay,delta,gated-delta,softmax,gla')
    ap.add_argument('--steps', type=int, default=10); ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--threads', type=int, default=1); ap.add_argument('--task', default='vector')
    ap.add_argument('--seq-len', type=int, default=None); ap.add_argument('--profile', default=None)
    ap.add_argument('--seq-lens', default=None); ap.add_argument('--breakdown', action='store_true')
    ap.add_argument('--token-task', default='rebind'); ap.add_argument('--chunk', type=int, default=None)
    ap.add_argument('--batch', type=int, default=32); ap.add_argument('--device', default='cpu')
    ap.add_argument('--ensemble', type=int, default=0); ap.add_argument('--ensemble-steps', type=int, default=60)
    ap.add_argument('--batch-scaling', type=int, default=0)
    a = ap.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
    global CHUNK; CHUNK = a.chunk
    fams = a.families.split(',')
    lens = [int(x) for x in a.seq_lens.split(',')] if a.seq_lens else [a.seq_len or TASKS[a.task].seq_len]
    print(f'# {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, torch {torch.__version__}, '
          f'threads {torch.get_num_threads()}, device {a.device}, task {a.task} (T={",".join(map(str, lens))}), batch {a.batch}'
          + (f', chunk {a.chunk}' if a.chunk else '') + f', load average {os.getloadavg()[0]:.2f} (1 min) at the start')
    if a.ensemble: ensemble(a, fams); return
    if a.batch_scaling: batch_scaling(a, fams, a.batch_scaling); return
    summary = {}
    for T in lens:
        task = dataclasses.replace(TASKS[a.task], seq_len=T)
        gens = {a.task: task}
        if a.token_task and a.token_task != a.task: gens[a.token_task] = TASKS[a.token_task]
        res, br, _ = _table(task, a, fams, gens)
        mha, ratio = res['mha'], res.pop('_ratio'); print(f'## T = {T}')
        for r, t in res.items():
            g = r.startswith('generator')
            tok = '' if g else f'{a.batch * T / t:9.0f} tokens/s'
            print(f'{r:22s} {1e3 * t:8.2f} ms/{"batch" if g else "step "}  {t / mha if g else ratio[r]:6.2f} x MHA step  {tok}', flush=True)
        gk = f'generator ({a.task})'
        print(f"generator + step, share of the generator: " + ', '.join(f"{r} {res[gk] / (res[gk] + res[r]):.1%}" for r in fams))
        if br:
            print(f'breakdown (ms; each part timed alone; ratios to the MHA model\'s same part):')
            print(f'{"":12s} {"fwd+bwd":>9s} {"mixers":>9s} {"conv+silu":>9s} {"rest":>9s} {"AdamW":>9s} {"foreach":>9s} {"fused":>9s}')
            for r, x in br.items():
                print(f'{r:12s} ' + ' '.join(f'{1e3 * v:9.2f}' for v in (x['forward_backward'], x['mixers'], x['conv_silu'],
                      x['forward_backward'] - x['mixers'], x['adamw'], x['adamw_foreach'], x['adamw_fused'])), flush=True)
            for r in fams:
                x, m = br[r], br['mha']
                print(f'{r:12s} mixers {x["mixers"] / m["mixers"]:.2f} x MHA\'s, conv+silu {x["conv_silu"] / x["mixers"]:.0%} of its mixers, '
                      f'optimiser {x["adamw"] / res[r]:.0%} of its step (fused: {x["adamw_fused"] / res[r]:.0%})')
        summary[T] = {r: ratio[r] for r in fams}
    print(f'load average {os.getloadavg()[0]:.2f} (1 min) at the end')
    if 40 in summary and 'delta' in summary[40]:
        print(f"short-sequence step: delta at T = 40 {summary[40]['delta']:.2f}x the MHA model's step (target <= 1.5x)")
    if len(lens) > 1:
        print('step / MHA step: ' + '; '.join(f'{r} ' + ', '.join(f'T {T} {summary[T][r]:.2f}x' for T in lens) for r in fams))
    n_steps = PROTOCOL_STEPS.get(a.task)
    if n_steps is None or len(lens) > 1 or lens[0] != TASKS[a.task].seq_len: return
    print(f'the page\'s protocol on {a.task} ({n_steps} steps per family): ' + ', '.join(f'{r} ~{n_steps * (res[r] + res[gk]) / 60:.1f} min' for r in fams) +
          ' (one process, this load; evaluation and probing not included)')

if __name__ == '__main__': main()
