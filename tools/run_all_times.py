"""Time each notebook as Jupyter's Run All runs it, and check that the run changes no tracked file.

Each notebook runs in a fresh Jupyter kernel (ipykernel through nbclient, as Run All in JupyterLab), every code cell in
order, `#| slow`, `#| gpu` and `#| notest` cells included (Jupyter ignores nbdev's directives), with `IN_TEST` unset, the
notebook's folder as the working directory, one thread (OMP_NUM_THREADS=1, MKL_NUM_THREADS=1), at lowered priority, and by
default from an empty cache of its own (`PAVLOVATTN_CACHE` set to a new temporary folder: what a fresh clone meets). The
executed notebook is written outside the repository (`--out_dir`), so the saved outputs in nbs/ are untouched. With
`--clone` the notebooks run in a fresh `git clone` of HEAD in a temporary folder, importing that clone's package: the
tree check then sees only what the notebooks did (in a checkout where other work is going on, it also sees that work).

Per notebook it records the wall seconds, ok or the first error line, the 1-minute load average sampled during the run
(other work on the machine makes the time an upper bound), and whether `git status --porcelain` changed during the run
(a page must not change a tracked file or leave an untracked one). The results are merged into `--json_path`
(default nbs/run_all_times.json, written atomically, with the markdown table and the sentence the front page shows);
`--table_only` prints the table and runs nothing.

    python tools/run_all_times.py --clone                 # every notebook in nbs/, in a fresh clone of HEAD (as the front page's table)
    python tools/run_all_times.py --paths "nbs/00_core.ipynb nbs/03_blocking.ipynb"
    python tools/run_all_times.py --table_only            # print the table of the recorded runs, run nothing
"""
import datetime, json, os, shutil, subprocess, sys, tempfile, threading, time
from pathlib import Path
from fastcore.script import call_parse, store_true
from install import clock   # tools/install.py: the one formatter of these records
from pavlovattn.base.cache import atomic_write

ROOT = Path(__file__).resolve().parent.parent

def _porcelain(top:Path) -> set:
    "The lines of `git status --porcelain` in `top` (tracked changes and untracked, not ignored, files)."
    return set(subprocess.run(['git', 'status', '--porcelain'], cwd=top, capture_output=True, text=True, check=True).stdout.splitlines())

def _load() -> float: return float(Path('/proc/loadavg').read_text().split()[0])

class _LoadSampler(threading.Thread):
    "Samples the 1-minute load average every `every` seconds while a notebook runs."
    def __init__(self, every=10.0):
        super().__init__(daemon=True); self.every, self.xs, self.stop = every, [_load()], threading.Event()
    def run(self):
        while not self.stop.wait(self.every): self.xs.append(_load())

def _first_error(e) -> str:
    "One line for a failed run: the exception's name and value (no traceback)."
    name, value = getattr(e, 'ename', None), getattr(e, 'evalue', None)
    line = f'{name}: {value}' if name else f'{type(e).__name__}: {e}'
    return ' '.join(line.split())[:300]

def run_one(fn:Path, out_dir:Path, timeout:int, fresh_cache:bool, top:Path=ROOT) -> dict:
    "Run All of notebook `fn` in a fresh kernel; seconds, ok, first error line, load, tree changes."
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(fn, as_version=4)
    env_keep = {k: os.environ.get(k) for k in ('PAVLOVATTN_CACHE',)}
    tmp = tempfile.mkdtemp(prefix='runall-cache-') if fresh_cache else None
    if tmp: os.environ['PAVLOVATTN_CACHE'] = tmp
    before, sampler, err = _porcelain(top), _LoadSampler(), None
    client = NotebookClient(nb, timeout=timeout, kernel_name='python3', resources={'metadata': {'path': str(fn.parent)}})
    sampler.start(); t0 = time.perf_counter()
    try: client.execute()
    except Exception as e: err = _first_error(e)
    secs = time.perf_counter() - t0; sampler.stop.set(); sampler.join()
    changed = sorted(_porcelain(top) ^ before)
    for k, v in env_keep.items():
        if v is None: os.environ.pop(k, None)
        else: os.environ[k] = v
    if tmp: shutil.rmtree(tmp, ignore_errors=True)
    out_dir.mkdir(parents=True, exist_ok=True); nbformat.write(nb, out_dir / fn.name)
    return dict(seconds=round(secs, 1), ok=err is None, error=err, tree_changed=changed,
                load_mean=round(sum(sampler.xs) / len(sampler.xs), 2), load_max=round(max(sampler.xs), 2),
                date=datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'),
                cache='empty (a new folder)' if fresh_cache else 'the project cache')

def _write_atomic(path:Path, obj): atomic_write(path, json.dumps(obj, indent=1, ensure_ascii=False) + '\n')   # the package's one atomic writer


def table(res:dict) -> str:
    "The markdown table of the recorded runs: notebook, Run All time, result, load during the run, date."
    rows = ['| notebook | Run All | result | load (mean, max) | date |', '|---|---:|---|---|---|']
    for name, r in sorted(res['notebooks'].items()):
        ok = 'ok' if r['ok'] else 'failed: ' + r['error'].replace('|', '\\|')
        if r['tree_changed']: ok += ' (changed the tree)'
        rows.append(f"| {name} | {clock(r['seconds'])} | {ok} | {r['load_mean']:.1f}, {r['load_max']:.1f} | {r['date'][:10]} |")
    return '\n'.join(rows)

def summary(res:dict) -> str:
    "One sentence over the recorded runs: how many ran to the end, whether any changed the tree, the total, the longest three."
    nb = res['notebooks']; ok = sum(r['ok'] for r in nb.values()); dirty = [n for n, r in nb.items() if r['tree_changed']]
    top = ', '.join(f"{n} ({clock(nb[n]['seconds'])})" for n in sorted(nb, key=lambda n: -nb[n]['seconds'])[:3])
    commits = sorted({r.get('commit') for r in nb.values()} - {None})
    tree = f"changed the tree: {', '.join(dirty)}" if dirty else 'none changed a tracked file or left a new one'
    on = f"; measured on a clone of commit {', '.join(commits)}" if commits else ''
    return f"{len(nb)} notebooks: {ok} ran to the end, {len(nb) - ok} failed; {tree}; {clock(sum(r['seconds'] for r in nb.values()))} in all, the longest {top}{on}."

@call_parse
def main(paths:str='',                              # notebooks to run, space separated (default: every nbs/*.ipynb)
         json_path:str='nbs/run_all_times.json',     # where the results are merged in (atomically)
         out_dir:str='',                             # where the executed notebooks go (default: a new folder in /tmp)
         timeout:int=3600,                           # seconds a cell may run before the notebook counts as failed
         project_cache:store_true=False,             # use the project's cache instead of an empty one per notebook
         clone:store_true=False,                     # run the notebooks of a fresh clone of HEAD (in /tmp), importing its package
         table_only:store_true=False):               # print the table of the recorded runs and run nothing
    jp = ROOT / json_path
    res = json.loads(jp.read_text()) if jp.exists() else {}
    res.setdefault('how', 'Run All in a fresh Jupyter kernel (nbclient), every cell incl. slow/gpu ones, IN_TEST unset, '
                          'cwd nbs/, OMP_NUM_THREADS=1, nice 5, on a 2-core machine shared with other work')
    res.setdefault('notebooks', {})
    if table_only: print(table(res)); return
    os.nice(5)
    os.environ.pop('IN_TEST', None); os.environ.update(OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
    def refuse(msg): print(f'run_all_times: {msg}', file=sys.stderr); sys.exit(2)
    names = [Path(p).name for p in paths.split()] if paths else sorted(f.name for f in (ROOT / 'nbs').glob('[!_.]*.ipynb'))
    if (missing := [n for n in names if not (ROOT / 'nbs' / n).is_file()]): refuse(f"no such notebook in nbs/: {', '.join(missing)}")
    if out_dir and Path(out_dir).resolve().is_relative_to(ROOT): refuse('--out_dir must be outside the repository (the saved outputs in nbs/ stay untouched)')
    top = ROOT
    if clone:
        top = Path(tempfile.mkdtemp(prefix='runall-clone-')) / 'repo'
        subprocess.run(['git', 'clone', '-q', str(ROOT), str(top)], check=True)
        os.environ['PYTHONPATH'] = os.pathsep.join([str(top)] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p])
        res['clone'] = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=top, capture_output=True, text=True).stdout.strip()
        # Most pages end with nbdev's export cell, which Run All executes: it rewrites the library and its index from every notebook.
        # CI requires that to change nothing; where a commit left the generated files behind, they are brought up to date and
        # committed in the clone first, so that the check below sees only what each page changes.
        subprocess.run([str(Path(sys.executable).parent / 'nbdev_export')], cwd=top, check=True, capture_output=True)
        stale = sorted(l[3:] for l in _porcelain(top))
        if stale:
            subprocess.run(['git', '-c', 'user.name=run_all_times', '-c', 'user.email=none', 'commit', '-qam', 'nbdev_export'], cwd=top, check=True)
            print(f'nbdev_export changed {", ".join(stale)} in the clone (committed there before the runs)', flush=True)
        res['export_before'] = stale
        print(f'running the notebooks of a clone of HEAD ({res["clone"]}) in {top}', flush=True)
    files = [top / 'nbs' / n for n in names]
    if (missing := [f.name for f in files if not f.is_file()]):
        shutil.rmtree(top.parent); refuse(f"not committed, so not in the clone: {', '.join(missing)}")
    od = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix='runall-nbs-'))
    bad = 0
    for fn in files:
        print(f'{fn.name}: running (load {_load():.2f}) ...', flush=True)
        r = run_one(fn, od, timeout, not project_cache, top)
        if clone: r['commit'] = res['clone']
        res['notebooks'][fn.name] = r; res['table'], res['summary'] = table(res), summary(res); _write_atomic(jp, res)
        bad += (not r['ok']) or bool(r['tree_changed'])
        print(f"{fn.name}: {clock(r['seconds'])}, {'ok' if r['ok'] else 'FAILED: ' + r['error']}, load {r['load_mean']} (max {r['load_max']})"
              + (f", tree changed: {r['tree_changed']}" if r['tree_changed'] else ''), flush=True)
    if clone: shutil.rmtree(top.parent)
    print(f'executed notebooks in {od}')
    sys.exit(1 if bad else 0)
