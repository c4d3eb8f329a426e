"""When a model cache was written: the first and last write of its checkpoints and learning-rate sweeps, counted by task,
and (with --report) the claims' seconds of the `reproduce --json` run that wrote it. It records how long a trained tier
took where no timer ran from the start (the release cache of 6 December 2026 was trained by two consecutive
`reproduce --trained` runs, the second resuming the first's cache). Files written after --until are left out (a cache
that later runs add to). Appends one record to the --out JSON file (written atomically).

    python tools/cache_times.py --cache /tmp/relcache --until '2026-12-06 19:30' --report /tmp/rel/trained.json \
        --how '...' --out benchmarks/trained_tier_times.json
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

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--cache', required=True); p.add_argument('--until', help="UTC 'YYYY-MM-DD HH:MM': later files left out")
    p.add_argument('--report', help='the run\'s reproduce --json file (its provenance and per-claim seconds)')
    p.add_argument('--how', default='', help='the conditions, in words'); p.add_argument('--out', required=True)
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
    out = Path(a.out); old = json.loads(out.read_text()) if out.exists() else {'runs': []}
    old['runs'].append(rec)
    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix='.tmp')
    with os.fdopen(fd, 'w') as f: f.write(json.dumps(old, indent=1, ensure_ascii=False) + '\n')
    os.replace(tmp, out); print(json.dumps(rec, indent=1, ensure_ascii=False))

if __name__ == '__main__': main()
