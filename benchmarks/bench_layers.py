"""Generation throughput of `pavlovattn.layers.AttentionMixer`, per family: one token at a time by `step` (the carried state)
against re-running the prefix for every token, and against one call on the whole sequence (the chunked form where a family
has one, the loop for softmax).

Workload: one mixer, d_model 64, 4 heads, short convolution 4, float32, no gradient, batch --batch (1), T --T (256) tokens.
Each measure: one warm-up, then the median of --repeats timed runs. Tokens/s are of the mixer alone (no embedding, no head):
`step` = T tokens generated one by one; `prefix` = the same T tokens when every token re-runs its whole prefix (T calls of
length 1..T); `whole` = one forward on the T tokens (what a prompt or training costs), not generation. Threads: 1 by default.
Usage: python benchmarks/bench_layers.py [--families delta,gated-delta,...] [--T 256] [--batch 1] [--repeats 3] [--threads 1]
"""
import argparse, statistics, time, platform, datetime
import torch
from pavlovattn.layers import AttentionMixer
from pavlovattn.families import FAMILIES

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
    a = ap.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
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

if __name__ == '__main__': main()
