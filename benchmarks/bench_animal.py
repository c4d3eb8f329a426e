"""Families against animal data (issue 17): time to score every expressible experiment for one family, and to fit one
family jointly by gradient, in one run (ratios and times of this run; the machine may be shared, so read them as such).

    .venv/bin/python benchmarks/bench_animal.py [--rule delta] [--steps 40] [--restarts 2] [--cv-beta 4] [--threads N] [--device cpu]

Also the leave-one-experiment-out cross-validation (issue 34): its cost is one forward pass per grid point, whatever the number of folds.
"""
import argparse, time
import torch
from pavlovattn.apps.animal import select, compile_batch, score, fit, strengths, cross_validate, param_grid, summarize


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--rule', default='delta'); p.add_argument('--steps', type=int, default=40)
    p.add_argument('--restarts', type=int, default=2); p.add_argument('--threads', type=int, default=None)
    p.add_argument('--device', default='cpu'); p.add_argument('--cv-beta', type=int, default=4)
    a = p.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
    t = time.perf_counter(); b = compile_batch(select(), device=a.device); t_compile = time.perf_counter() - t
    print(f'batch: {len(b.exps)} experiments, {b.X.shape[0]} rows x {b.X.shape[1]} steps x {b.X.shape[2]} cues, '
          f'{len(b.y)} data points; compiled in {t_compile:.2f} s; torch threads {torch.get_num_threads()}')
    t = time.perf_counter(); s = score(a.rule, batch=b); t_score = time.perf_counter() - t
    print(f'score {a.rule}: {t_score:.2f} s for all experiments (target: seconds)')
    beta = torch.tensor(0.1, dtype=b.X.dtype, device=b.X.device, requires_grad=True)
    for alg in ('sequential', 'chunked'):
        if alg not in __import__('pavlovattn.model.families', fromlist=['FAMILIES']).FAMILIES[a.rule].algorithms: continue
        t = time.perf_counter(); strengths(b, a.rule, beta, check=False, algorithm=alg).sum().backward(); dt = time.perf_counter() - t
        print(f'  one forward+backward, algorithm={alg}: {dt:.3f} s')
    t = time.perf_counter(); f = fit(a.rule, batch=b, joint=True, steps=a.steps, restarts=a.restarts); t_fit = time.perf_counter() - t
    print(f'joint fit {a.rule}: {t_fit:.1f} s for {a.steps} steps x {a.restarts} restarts (target: minutes); params {f["params"]}')
    print(f'ratio fit / score: {t_fit / t_score:.0f}x')
    g = param_grid(a.rule, b, n_beta=a.cv_beta, gammas=(0.9, 1.0), taus=(0.5, 1.0))
    t = time.perf_counter(); cv = cross_validate(a.rule, batch=b, grid=g); t_cv = time.perf_counter() - t
    s = summarize({a.rule: cv}, n=10_000).iloc[0]
    print(f'leave-one-out {a.rule}: {t_cv:.1f} s for {len(b.exps)} folds on {len(g)} grid points ({t_cv / len(g):.2f} s a point); '
          f"held-out mean ordinal {s['mean ordinal']:.3f} [{s['ordinal lo']:.3f}, {s['ordinal hi']:.3f}]")


if __name__ == '__main__': main()
