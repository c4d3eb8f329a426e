"""Training cost of the trained-models page in one run: batch generation, each family's training step, and the same model with
`torch.nn.MultiheadAttention` as its mixer, side by side as ratios (one process, one load, so the ratios compare like with like).

Workload: `pavlovattn.models.AssocLM` at the default (CPU) size of the trained-probes page — d_model 64, 2 layers, 2 heads,
MLP x2, short convolution 4 — on the vector cue->outcome task (sequence length 40, or --seq-len T; batch 32; or any task of
`pavlovattn.models.TASKS` with --task), AdamW, float32. Timed separately: the generator (`task.batch`), and one training step on
a batch already made (forward + backward + clip + optimiser step, what `train` does besides generating). Each row: one warm-up,
then the median of REPEATS timed blocks of STEPS calls. The MHA row is the same AssocLM with every mixer replaced by causal
`nn.MultiheadAttention` (same width and heads). Ratios: each row's time over the MHA step. Threads: 1 by default (`train`'s
default); --threads N to change. --profile prints the torch profiler's top operators of one family's step (--profile delta).
Also reports the steps the page's protocol trains on that task and the resulting estimated wall time per family.
Usage: python benchmarks/bench_training.py [--families hebbian,decay,delta,gated-delta,softmax,gla] [--steps 10] [--repeats 3]
       [--threads 1] [--task vector|vector-single|mqar|repeated|rebind] [--seq-len T] [--device cpu] [--profile delta]
"""
import argparse, dataclasses, statistics, time, platform, datetime
import torch
from torch import nn
from pavlovattn.models import AssocLM, TASKS, loss_and_metric

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

def _model(task, rule, device):
    torch.manual_seed(0)
    if rule != 'mha': return AssocLM(task, rule).to(device)
    m = AssocLM(task, 'hebbian'); m.mix = nn.ModuleList([CausalMHA(64, 2) for _ in m.mix]); return m.to(device)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--families', default='hebbian,decay,delta,gated-delta,softmax,gla')
    ap.add_argument('--steps', type=int, default=10); ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--threads', type=int, default=1); ap.add_argument('--task', default='vector')
    ap.add_argument('--seq-len', type=int, default=None); ap.add_argument('--profile', default=None)
    ap.add_argument('--batch', type=int, default=32); ap.add_argument('--device', default='cpu')
    a = ap.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
    task = TASKS[a.task]; fams = a.families.split(',')
    if a.seq_len: task = dataclasses.replace(task, seq_len=a.seq_len)
    cuda = a.device.startswith('cuda')
    print(f'# {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, torch {torch.__version__}, '
          f'threads {torch.get_num_threads()}, device {a.device}, task {a.task} (T={task.seq_len}), batch {a.batch}')
    gen = torch.Generator().manual_seed(0)
    b = {k: v.to(a.device) for k, v in task.batch(a.batch, gen).items()}
    res = {'generator': _timed(lambda: task.batch(a.batch, gen), a.steps, a.repeats, False)}
    for rule in ['mha'] + fams:
        model = _model(task, rule, a.device); opt = torch.optim.AdamW(model.parameters(), 1e-3)
        def step():
            loss, _ = loss_and_metric(model, b); opt.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step()
        res[rule] = _timed(step, a.steps, a.repeats, cuda)
        if rule == a.profile:
            from torch.profiler import profile, ProfilerActivity
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                for _ in range(a.steps): step()
            print(prof.key_averages().table(sort_by='self_cpu_time_total', row_limit=15))
    mha = res['mha']
    for r, t in res.items():
        tok = '' if r == 'generator' else f'{a.batch * task.seq_len / t:9.0f} tokens/s'
        print(f'{r:12s} {1e3 * t:8.2f} ms/{"batch" if r == "generator" else "step "}  {t / mha:6.2f} x MHA step  {tok}', flush=True)
    print(f"generator + step, share of the generator: " + ', '.join(f"{r} {res['generator'] / (res['generator'] + res[r]):.1%}" for r in fams))
    n_steps = PROTOCOL_STEPS.get(a.task)
    if n_steps is None: return
    print(f'the page\'s protocol on {a.task} ({n_steps} steps per family): ' + ', '.join(f'{r} ~{n_steps * (res[r] + res["generator"]) / 60:.1f} min' for r in fams) +
          ' (one process, this load; evaluation and probing not included)')

if __name__ == '__main__': main()
