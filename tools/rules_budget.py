"""The budget of the trained-rules page's claim `classical-rules-enhance-where-delta-learns`, chosen by training
DeltaNet alone (no other family) before that claim was registered (2026-12-06): the candidates it ran, cheapest first,
three seeds each at lr 1e-2, the held-out metric every 20 or 25 steps. Writes nbs/rules_budget.json, which the page
reads. Pass 2 was stopped after the vector task at d_model 32 / batch 32, once repeated-key recall at d_model 64 had
learned (its two remaining candidates never ran). Run: `nice -n 10 python tools/rules_budget.py`."""
import json
from pathlib import Path
from pavlovattn.apps.models import TrainConfig, train

def runs():
    "(pass, config kwargs, seeds) in the order they ran."
    for task in ('rebind', 'vector'):                                    # pass 1: 32 wide, batch 16, 200 steps
        for nl in (1, 2):
            for lr in (3e-3, 1e-2): yield 1, dict(task=task, n_layers=nl, lr=lr, d_model=32, batch=16, steps=200), (0, 1, 2)
    for task, d, B in (('vector', 64, 32), ('rebind', 64, 32)):         # pass 2: wider, larger batches, 150 steps
        yield 2, dict(task=task, n_layers=1, lr=1e-2, d_model=d, batch=B, steps=150), (0, 1, 2)
    yield 2, dict(task='vector', n_layers=1, lr=1e-2, d_model=32, batch=32, steps=150), (0, 1, 2)
    for d, B, steps in ((32, 32, 100), (32, 16, 100), (64, 32, 100), (64, 32, 60)):   # pass 3: repeated-key recall, runs of the candidate length
        yield 3, dict(task='rebind', n_layers=1, lr=1e-2, d_model=d, batch=B, steps=steps), (0, 1, 2)

if __name__ == '__main__':
    out = []
    for p, kw, seeds in runs():
        for seed in seeds:
            every = 20 if kw['steps'] == 60 else 25
            _, m = train(TrainConfig(rule='delta', seed=seed, warmup=10, eval_every=every, eval_batch=128, target=2.0, **kw), progress=False)
            out.append(dict(kw, passno=p, seed=seed, seconds=m['seconds'], history=[[h['step'], round(h['metric'], 3)] for h in m['history']]))
            print(json.dumps(out[-1]), flush=True)
    Path(__file__).parent.parent.joinpath('nbs', 'rules_budget.json').write_text(json.dumps(out, indent=0) + '\n')
