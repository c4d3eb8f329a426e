"""When a model cache was written: the first and last write of its checkpoints and learning-rate sweeps, counted by task,
and (with --report) the claims' seconds of the `reproduce --json` run that wrote it. It records how long a trained tier
took where no timer ran from the start (the release cache of 6 December 2026 was trained by two consecutive
`reproduce --trained` runs, the second resuming the first's cache). Files written after --until are left out (a cache
that later runs add to). Appends one record to the --out JSON file (written atomically).

With --same-as OTHER it counts the checkpoints whose tensors equal those of the file of the same name in cache OTHER.
With --flops SECONDS it also puts the tier's training throughput beside the machine's limit: the model FLOPs of every
checkpoint's training steps (its own `metrics['steps']`, times torch's flop count of one training step of its
configuration, forward + backward, at its batch; evaluation, batch generation and the learning-rate sweeps' short runs
are not counted, so the throughput is a lower bound) over SECONDS of wall clock (the run's claims stage), against the
matmul rate of the 2 cores measured at once (`benchmarks/bench_training.py`'s `matmul_rate`: one process per core
multiplying the model's MLP shape 1280 x 64 x 128 at one thread).

    python tools/cache_times.py --cache /tmp/relcache --until '2026-12-06 19:30' --report /tmp/rel/trained.json \
        --how '...' --out benchmarks/trained_tier_times.json [--flops 1234]
"""
import argparse, collections, datetime as dt, json, os, re, sys, tempfile
from pathlib import Path

def _utc(t: float) -> str: return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')

def summary(cache: Path, until: float | None) -> dict:
    "First and last write, and counts by task, of the cache's checkpoints and learning-rate sweeps written before `until`."
    out = {}
    for kind, folder, pat in (('checkpoints', 'checkpoints', '*.pt'), ('lr_sweeps', 'lr-sweeps', '*.json')):
        fs = [(f.stat().st_mtime, f.name) for f in (cache / folder).glob(pat)]
        fs = sorted((t, n) for t, n in fs if until is None or t <= until)
        by = collections.Counter(re.sub(r'-s\d+-[0-9a-f]{10}.*$', '', n) for _, n in fs)
        out[kind] = dict(count=len(fs), first=_utc(fs[0][0]) if fs else None, last=_utc(fs[-1][0]) if fs else None,
                         by_task_and_family=dict(sorted(by.items())))
    ts = [dt.datetime.strptime(v, '%Y-%m-%d %H:%M:%S UTC').replace(tzinfo=dt.timezone.utc).timestamp()
          for k in out.values() for v in (k['first'], k['last']) if v]
    out['wall_clock_min'] = round((max(ts) - min(ts)) / 60, 1) if ts else None   # first write to last write
    return out

def throughput(cache: Path, seconds: float, until: float | None) -> dict:
    "Model FLOPs of the checkpoints' training steps (one flop count per configuration) over `seconds`, against the cores' matmul rate."
    from dataclasses import replace
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'benchmarks'))
    from bench_training import matmul_rate, step_flops
    from pavlovattn.apps.models import TASKS, _model, _read, cpu_cores
    per, total, steps, secs = {}, 0.0, 0, 0.0
    for f in sorted((cache / 'checkpoints').glob('*.pt')):
        if until is not None and f.stat().st_mtime > until: continue
        ck = _read(f); model, c = _model(ck, None, None, None)              # the model and configuration the checkpoint holds
        arch = replace(c, seed=0, lr=0.0, steps=0, target=0.0)              # what the step's FLOPs depend on
        if arch not in per: per[arch] = step_flops(TASKS[c.task], c.rule, c.batch, model=model.train())
        n = int(ck['metrics'].get('steps') or 0); steps += n; total += n * per[arch]; secs += ck['metrics'].get('seconds') or 0
    wall, _ = matmul_rate(cpu_cores())
    return dict(model_tflop=round(total / 1e12, 2), training_steps=steps, training_seconds=round(secs), configurations=len(per), seconds=seconds,
                gflops=round(total / seconds / 1e9, 2), matmul_gflops_all_cores=round(wall / 1e9, 1),
                fraction=round(total / seconds / wall, 3))

def same_as(cache: Path, other: Path) -> dict:
    "How many of the cache's checkpoints have a file of the same name in `other` holding the same tensors (`models._state_digest`): a rerun of deterministic training writes the same models."
    from pavlovattn.apps.models import _read, _state_digest
    mine = sorted((cache / 'checkpoints').glob('*.pt')); n = same = 0; differ = []
    for f in mine:
        g = other / 'checkpoints' / f.name
        if not g.exists(): continue
        n += 1; a, b = _read(f), _read(g)
        if _state_digest(a['state']) == _state_digest(b['state']) and a['config'] == b['config']: same += 1
        else: differ.append(f.name)
    return dict(cache=str(other), checkpoints=len(mine), in_both=n, same_tensors=same, differ=differ)

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--cache', required=True); p.add_argument('--until', help="UTC 'YYYY-MM-DD HH:MM': later files left out")
    p.add_argument('--report', help='the run\'s reproduce --json file (its provenance and per-claim seconds)')
    p.add_argument('--how', default='', help='the conditions, in words'); p.add_argument('--out', required=True)
    p.add_argument('--flops', type=float, metavar='SECONDS', help="the run's wall-clock seconds to put the checkpoints' model FLOPs over")
    p.add_argument('--same-as', metavar='CACHE', help='another cache: count the checkpoints of the same name whose tensors are the same')
    a = p.parse_args(argv)
    cache = Path(a.cache)
    if not (cache / 'checkpoints').is_dir(): print(f'cache_times: {cache} has no checkpoints/ folder', file=sys.stderr); sys.exit(2)
    until = dt.datetime.strptime(a.until, '%Y-%m-%d %H:%M').replace(tzinfo=dt.timezone.utc).timestamp() if a.until else None
    rec = dict(cache=str(cache), until=a.until, how=a.how, **summary(cache, until))
    if a.report:
        r = json.loads(Path(a.report).read_text())
        secs = {x['id']: x.get('seconds') for x in r.get('rows', [])}
        rec['run'] = dict(provenance=r.get('provenance'), claim_seconds=secs,
                          claims_minutes=round(sum(s or 0 for s in secs.values()) / 60, 1))
    if a.flops: rec['throughput'] = throughput(cache, a.flops, until)
    if a.same_as: rec['same_as'] = same_as(cache, Path(a.same_as))
    out = Path(a.out); old = json.loads(out.read_text()) if out.exists() else {'runs': []}
    old['runs'].append(rec)
    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix='.tmp')
    with os.fdopen(fd, 'w') as f: f.write(json.dumps(old, indent=1, ensure_ascii=False) + '\n')
    os.replace(tmp, out); print(json.dumps(rec, indent=1, ensure_ascii=False))

if __name__ == '__main__': main()
