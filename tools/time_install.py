"""Measure what each install step of the Makefile costs: a fresh virtual environment in a temporary folder, a clone of HEAD,
then, one after another, torch and the package (the runtime), the docs extra (`make reproduce` stops here), the test and
interop extras and the fla extra (Triton and flash-linear-attention: `make test` stops here, for fla's exactness tests). For each step:
the seconds, the megabytes it adds to the environment, the packages it adds; with the machine's 1-minute load average at
the start and the end, the cores and where pip took the wheels from. Merged into `--json_path` (default
nbs/install_times.json, newest last, with the newest one's table and sentence); `make` prints the newest record's time before it installs, and the front page
(README) shows its table.

    python tools/time_install.py                  # one measured run (about 5 min on 2 cores from a local wheel mirror)
    python tools/time_install.py --show           # print the newest record's table, run nothing
    python tools/time_install.py --note docs .venv   # the line `make` prints before it installs .[docs] into .venv
"""
import configparser, datetime, json, os, re, shlex, subprocess, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from install import clock
import install   # the installer the Makefile runs (tools/install.py): this measures that code

ROOT = Path(__file__).resolve().parent.parent
STEPS = (('runtime', 'torch and the package (numpy, pandas, matplotlib, numba, scipy, ...)', None),
         ('docs', 'the docs toolchain (nbdev, execnb, smalldocs): make reproduce', 'docs'),
         ('test, interop', 'pytest, hypothesis, dask, pyarrow, transformers, pyndl', 'docs,test,interop'),
         ('fla', 'Triton and flash-linear-attention (the fla exactness tests, GPU work): make test', 'docs,test,interop,fla'))

def _load() -> float: return float(Path('/proc/loadavg').read_text().split()[0])

def _mb(path) -> float: return int(subprocess.run(['du', '-sk', str(path)], capture_output=True, text=True).stdout.split()[0]) / 1024

def _packages(py) -> int:
    return len(json.loads(subprocess.run([py, '-m', 'pip', 'list', '--format', 'json'], capture_output=True, text=True).stdout))


def table(rec) -> str:
    "The Markdown table of a record: each step's time, size and packages, and the running totals."
    rows = ['| step | what it installs | time | adds | environment |', '|---|---|---|---|---|']
    for s in rec['steps']:
        rows.append(f"| {s['step']} | {s['what']} | {clock(s['seconds'])} | {s['added_mb']:.0f} MB, {s['packages_added']} packages | {s['total_mb']:.0f} MB |")
    return '\n'.join(rows)

def sentence(rec) -> str:
    return (f"Measured on {rec['date']} in a fresh environment on {rec['cores']} CPU cores (1-minute load {rec['load_start']:.1f} at the start, "
            f"{rec['load_end']:.1f} at the end), wheels from {rec['source']}, installed with {_installer(rec)} (tools/install.py); "
            f"downloading them from PyPI adds their transfer time.")

def _installer(rec) -> str: return ' and '.join(sorted({s.get('installer', 'pip') for s in rec['steps']}))

def measure() -> dict:
    load0, t_all = _load(), time.time()
    with tempfile.TemporaryDirectory(prefix='pavlovattn-install-') as d:
        src, venv = Path(d) / 'src', Path(d) / 'venv'
        subprocess.run(['git', 'clone', '-q', '--depth', '1', f'file://{ROOT}', str(src)], check=True)
        subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True)
        py, base = str(venv / 'bin' / 'python'), _mb(venv)
        idx = install._cpu_index_answers()
        os.environ['UV_CACHE_DIR'] = str(Path(d) / 'uv-cache')   # an empty cache, as on a new machine
        steps, size, n = [], base, _packages(py)
        for step, what, extras in STEPS:
            t = time.time()
            try: how = install.install(venv, extras or '', log=Path(d) / 'install.log', say=lambda m: None, src=src)
            except SystemExit as e: sys.exit(f'time_install: {step}: {e}')
            new, m = _mb(venv), _packages(py)
            steps.append(dict(step=step, what=what, extras=extras, seconds=round(time.time() - t, 1), added_mb=round(new - size, 1),
                              total_mb=round(new, 1), packages_added=m - n, installer=how))
            size, n = new, m
            print(f'{step}: {clock(steps[-1]["seconds"])}, +{steps[-1]["added_mb"]:.0f} MB', flush=True)
    conf = subprocess.run([sys.executable, '-m', 'pip', 'config', 'list'], capture_output=True, text=True).stdout
    source = 'the PyTorch CPU index and PyPI' if idx else ('a local wheel mirror' if 'file://' in conf or 'find-links' in conf else 'PyPI')
    return dict(date=datetime.date.today().isoformat(), cores=os.cpu_count(), load_start=load0, load_end=_load(), source=source,
                total_seconds=round(time.time() - t_all, 1), steps=steps)

def note(extras:str, venv:str, runs:list) -> str:
    "What `make` is about to install for `extras` (package names from settings.ini) and how long it took the last time: on this machine (the venv keeps it), else as measured in the newest record."
    cfg = configparser.ConfigParser(delimiters=['=']); cfg.read(ROOT / 'settings.ini'); c = cfg['DEFAULT']
    names = lambda key: ', '.join(re.split(r'[<>=\[!~;]', r)[0] for r in shlex.split(c.get(key, '')))
    what = [f"torch and pavlovattn's runtime ({names('requirements').replace('torch, ', '')})"] + [f"{x}: {names(x + '_requirements')}" for x in extras.split(',')]
    here = Path(venv) / f'.seconds-{extras}'
    if here.exists(): last = f'{clock(float(here.read_text()))} the last time here'
    elif runs:
        rec, upto = runs[-1], {'docs': 2, 'docs,test,interop': 3, 'docs,test,interop,fla': 4}.get(extras)
        last = (f"about {clock(sum(s['seconds'] for s in rec['steps'][:upto]))} into a new environment as measured on {rec['date']}, "
                f"{rec['cores']} cores at load {rec['load_start']:.1f}, wheels from {rec['source']}" if upto else 'not measured')
    else: last = 'not measured yet'
    return f"== venv: installing into {venv}: {'; '.join(what)} ({last}; the installer's output goes to {venv}/pip.log)"

def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog='time_install.py', description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--json_path', default=str(ROOT / 'nbs' / 'install_times.json'), help='the records file (default: nbs/install_times.json)')
    ap.add_argument('--show', action='store_true', help="print the newest record's table and sentence; run nothing")
    ap.add_argument('--note', nargs=2, metavar=('EXTRAS', 'VENV'), help='print the line `make` shows before it installs EXTRAS into VENV; run nothing')
    a = ap.parse_args(argv)                                              # a wrong or unknown option: one line, exit 2, nothing measured
    path = Path(a.json_path)
    runs = json.loads(path.read_text())['runs'] if path.exists() else []
    if a.note: print(note(a.note[0], a.note[1], runs)); return 0
    if a.show:
        if not runs: print(f'time_install: no record in {path}'); return 1
        print(table(runs[-1])); print(sentence(runs[-1])); return 0
    rec = measure(); runs.append(rec)
    tmp = path.with_suffix('.tmp'); tmp.write_text(json.dumps({'table': table(rec), 'sentence': sentence(rec), 'runs': runs}, indent=1) + '\n')
    os.replace(tmp, path)
    print(table(rec)); print(sentence(rec)); return 0

if __name__ == '__main__': sys.exit(main(sys.argv[1:]))
