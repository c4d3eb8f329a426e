"""Training throughput of the trained-models page, per family, in one run (tokens/s and ratios to linear attention).

Workload: `pavlovattn.models.AssocLM` at the default (CPU) size of the trained-probes page — d_model 64, 2 layers, 2 heads,
MLP x2, short convolution 4 — on the vector cue->outcome task (sequence length 40, batch 32; or any task of
`pavlovattn.models.TASKS` with --task, e.g. `rebind`, the repeated-key task the trained-probes page probes), AdamW, float32, one
training step = batch generation + forward + backward + optimiser step (what `train` does). Each family: one warm-up step,
then the median of REPEATS timed blocks of STEPS steps; families are timed in turn under the same load, so the ratios
compare like with like. Threads: 1 by default (`train`'s default; the small models run faster without contention on 2
shared cores); --threads N to change. Also reports the steps the page's protocol trains on that task (vector: 600 per
model, 5 seeds, sweep 2 x 150; rebind: at most 300 per model, 5 seeds, no sweep) and the resulting estimated wall time per
family from an empty checkpoint cache (an upper bound where early stopping ends runs sooner).
Usage: python benchmarks/bench_training.py [--families hebbian,decay,delta,gated-delta,softmax,gla] [--steps 10] [--repeats 3]
       [--threads 1] [--task vector|mqar|repeated|rebind] [--device cpu]
"""
import argparse, statistics, time, platform, datetime
import torch
from pavlovattn.models import AssocLM, TASKS, loss_and_metric

PROTOCOL_STEPS = {'vector': 5 * 600 + 2 * 150, 'rebind': 5 * 300}   # steps the trained-probes page trains per family (at most)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--families', default='hebbian,decay,delta,gated-delta,softmax,gla')
    ap.add_argument('--steps', type=int, default=10); ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--threads', type=int, default=1); ap.add_argument('--task', default='vector')
    ap.add_argument('--batch', type=int, default=32); ap.add_argument('--device', default='cpu')
    a = ap.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
    task = TASKS[a.task]; fams = a.families.split(',')
    print(f'# {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, torch {torch.__version__}, '
          f'threads {torch.get_num_threads()}, device {a.device}, task {a.task} (T={task.seq_len}), batch {a.batch}')
    res = {}
    for rule in fams:
        torch.manual_seed(0); gen = torch.Generator().manual_seed(0)
        model = AssocLM(task, rule).to(a.device); opt = torch.optim.AdamW(model.parameters(), 1e-3)
        def step():
            b = {k: v.to(a.device) for k, v in task.batch(a.batch, gen).items()}
            loss, _ = loss_and_metric(model, b); opt.zero_grad(); loss.backward(); opt.step()
        step()
        ts = []
        for _ in range(a.repeats):
            if a.device.startswith('cuda'): torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(a.steps): step()
            if a.device.startswith('cuda'): torch.cuda.synchronize()
            ts.append((time.perf_counter() - t) / a.steps)
        res[rule] = statistics.median(ts)
        print(f'{rule:12s} {1e3 * res[rule]:8.1f} ms/step  {a.batch * task.seq_len / res[rule]:9.0f} tokens/s', flush=True)
    base = res.get('hebbian', next(iter(res.values())))
    print('\nratios (tokens/s relative to ' + ('hebbian' if 'hebbian' in res else fams[0]) + '): ' +
          ', '.join(f'{r} {base / t:.2f}' for r, t in res.items()))
    n_steps = PROTOCOL_STEPS.get(a.task)
    if n_steps is None: return
    print(f'the page\'s protocol on {a.task} ({n_steps} steps per family): ' + ', '.join(f'{r} ~{n_steps * t / 60:.1f} min' for r, t in res.items()) +
          ' (one process, this load; evaluation and probing not included)')

if __name__ == '__main__': main()
