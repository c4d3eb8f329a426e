"""Time `make reproduce` as a newcomer meets it: a fresh `git clone` of HEAD in a temporary folder, an empty home folder,
no project cache, at lowered priority; record what each stage took and what the run left behind.

The home folder is a new empty one (HOME set to it, XDG_CACHE_HOME and PAVLOVATTN_CACHE unset), with only the user's
pip and npm configuration files copied in, so that the same package index or wheel mirror is used. `make reproduce`
runs with its output timestamped line by line; the stages are read from its own lines (`== reproduce 1/2` ends the venv,
`== reproduce 2/2` ends the site, the end of the run ends the claims). Recorded, per run: the seconds of each stage and
in all, the 1-minute load average at the start and the end, for the trained tier this machine's speed just before and after
the run (`step_ms`: the MHA and delta models' training step, outside the timed run), the claims' summary line, whether the report and the site
were written, what the run changed among the clone's tracked files (`git status --porcelain`, the report and the site
being ignored), and which files it wrote into the home folder outside pip's, uv's and npm's own caches (a per-project cache
writes none there). Merged into `--json_path` (default nbs/reproduce_times.json, written atomically), newest last; the
README's `make reproduce` time is the newest record.

    python tools/time_reproduce.py                 # one timed run (2 min 34 s in the first recorded run, on 2 CPU cores; the venv is most of it)
    python tools/time_reproduce.py --tier trained  # make reproduce TIER=trained: the trained-model claims too, from an empty cache
    python tools/time_reproduce.py --show          # print the recorded runs, run nothing

Each record names its tier (`tier`; records before this option ran the default tier) and the environment's
PAVLOVATTN_TRAINED_SIZE when set (a quick check of the trained tier is not its protocol size).
"""
import datetime, json, os, re, shutil, subprocess, sys, tempfile, time
from pathlib import Path
from fastcore.script import call_parse, store_true
from install import clock   # tools/install.py: the one formatter of these records

ROOT = Path(__file__).resolve().parent.parent
STAGES = (('venv', '== reproduce 1/2'), ('site', '== reproduce 2/2'))   # a stage ends where the next one's line appears

def stages(lines:list) -> dict:
    "Seconds per stage from `(seconds since start, line)` pairs of a `make reproduce` run: venv, site, claims (to the last line), total."
    marks = {}
    for t, line in lines:
        for name, start_of_next in STAGES:
            if name not in marks and line.startswith(start_of_next): marks[name] = t
    if len(marks) < len(STAGES): raise ValueError(f"the run's output has no {' or '.join(repr(s) for n, s in STAGES if n not in marks)} line: is this make reproduce?")
    end = lines[-1][0]
    return dict(venv=round(marks['venv'], 1), site=round(marks['site'] - marks['venv'], 1), claims=round(end - marks['site'], 1), total=round(end, 1))

SUMMARY = re.compile(r'^\d+ claims?: \d+ checks? pass')

def _load() -> float: return float(Path('/proc/loadavg').read_text().split()[0])


TIERS = ('default', 'trained', 'full')   # the Makefile's TIER values
STEP = re.compile(r'^(mha|delta)\s+([\d.]+) ms/step', re.M)

def step_ms() -> dict|None:
    "This machine's speed now: the training step at T 40 of the MHA model and of the delta model, one thread (benchmarks/bench_training.py, 2 repeats), in ms; None where the benchmark does not run. A trained-tier record takes it before and after its run: the same code takes up to 40% longer at a slow hour."
    try: r = subprocess.run([sys.executable, str(ROOT / 'benchmarks' / 'bench_training.py'), '--families', 'delta', '--seq-lens', '40', '--repeats', '2'],
                            capture_output=True, text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS='1'))
    except (OSError, subprocess.SubprocessError): return None
    got = {m.group(1): float(m.group(2)) for m in STEP.finditer(r.stdout)}
    return got if r.returncode == 0 and len(got) == 2 else None

def sentence(r:dict) -> str:
    "One line for a recorded run."
    tier = r.get('tier', 'default'); size = f" at PAVLOVATTN_TRAINED_SIZE={r['trained_size']}" if r.get('trained_size') else ''
    return (f"make reproduce{'' if tier == 'default' else ' TIER=' + tier}{size} from a fresh clone of {r['commit']} took {clock(r['seconds']['total'])}: {clock(r['seconds']['venv'])} for the venv, "
            f"{clock(r['seconds']['site'])} for the site, {clock(r['seconds']['claims'])} for the claims ({r['claims_line'] or 'no summary line'}); "
            f"load {r['load_start']} at the start, {r['load_end']} at the end" + _speed(r) + f"; {r['date']}")

def _speed(r:dict) -> str:
    "The machine's speed around a run, as `step_ms` read it (records before it have none)."
    b, a = r.get('step_ms_before'), r.get('step_ms_after')
    say = lambda x: f"{x['mha']:.2f} ms" if x else 'not measured'
    return f"; the MHA model's step {say(b)} before, {say(a)} after" if 'step_ms_before' in r else ''

def _home(real_home:Path) -> Path:
    "A new empty home folder holding only copies of the user's pip and npm configuration (the same index or mirror)."
    h = Path(tempfile.mkdtemp(prefix='reproduce-home-'))
    for rel in ('.config/pip/pip.conf', '.pip/pip.conf', '.npmrc'):
        if (real_home / rel).is_file(): (h / rel).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(real_home / rel, h / rel)
    return h

def _files(top:Path) -> set: return {str(p.relative_to(top)) for p in top.rglob('*') if p.is_file()}

def run(keep:bool=False, tier:str='default') -> dict:
    "One timed `make reproduce TIER=tier` in a fresh clone of HEAD with an empty home folder; the record."
    work = Path(tempfile.mkdtemp(prefix='reproduce-clone-')); repo = work / 'repo'
    subprocess.run(['git', 'clone', '-q', str(ROOT), str(repo)], check=True)
    commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()
    real_home = Path.home(); home = _home(real_home); before = _files(home)
    env = {k: v for k, v in os.environ.items() if k not in ('XDG_CACHE_HOME', 'PAVLOVATTN_CACHE', 'VIRTUAL_ENV')}
    env.update(HOME=str(home), PYENV_ROOT=os.environ.get('PYENV_ROOT') or str(real_home / '.pyenv'))   # a pyenv python keeps working
    print(f'time_reproduce: make reproduce TIER={tier} in a fresh clone of {commit} ({repo}), home {home}', file=sys.stderr, flush=True)
    speed0 = step_ms() if tier == 'trained' else None                        # outside the timed run
    load0, t0, lines = _load(), time.perf_counter(), []
    p = subprocess.Popen(['nice', '-n', '5', 'make', 'reproduce', f'TIER={tier}'], cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    for line in p.stdout:
        for part in line.rstrip('\n').split('\r'):                             # a progress bar's redraws are lines too
            if part.strip(): lines.append((time.perf_counter() - t0, part))
    rc = p.wait(); lines.append((time.perf_counter() - t0, f'(exit status {rc})'))
    load1 = _load(); speed1 = step_ms() if tier == 'trained' else None
    status = subprocess.run(['git', 'status', '--porcelain'], cwd=repo, capture_output=True, text=True, check=True).stdout.splitlines()
    wrote = sorted(f for f in _files(home) - before if not f.startswith(('.cache/pip/', '.cache/uv/', '.npm/')))   # the installers' own caches
    rec = dict(commit=commit, tier=tier, trained_size=os.environ.get('PAVLOVATTN_TRAINED_SIZE') or None, cores=len(os.sched_getaffinity(0)), date=datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'), exit_status=rc,
               seconds=stages(lines), load_start=round(load0, 2), load_end=round(load1, 2),
               **(dict(step_ms_before=speed0, step_ms_after=speed1) if tier == 'trained' else {}),
               claims_line=next((l for _, l in reversed(lines) if SUMMARY.match(l)), None),
               report_written=(repo / 'reproduce-report.json').is_file(), site_written=(repo / '_docs' / 'index.html').is_file(),
               tree_changed=status, home_written=wrote, project_cache_in_home=any('pavlovattn' in f for f in wrote),
               how='fresh git clone of HEAD, empty HOME (pip and npm configuration copied), no PAVLOVATTN_CACHE, nice 5, 2-core machine shared with other work')
    if not keep: shutil.rmtree(work, ignore_errors=True); shutil.rmtree(home, ignore_errors=True)
    return rec

@call_parse
def main(json_path:str='nbs/reproduce_times.json', # where the record is appended (atomically)
         show:store_true=False,                    # print the recorded runs and run nothing
         keep:store_true=False,                    # keep the clone and the home folder (their paths are printed)
         tier:str='default'):                      # the Makefile's TIER: default, trained (the trained-model claims too) or full
    "Time `make reproduce` from a fresh clone with an empty home folder and record it."
    path = Path(json_path) if Path(json_path).is_absolute() else ROOT / json_path
    try: runs = json.loads(path.read_text())['runs'] if path.exists() else []
    except (ValueError, KeyError, TypeError) as e: print(f'time_reproduce: {path} is not a record of runs ({e})', file=sys.stderr); sys.exit(2)
    if show:
        for r in runs: print(sentence(r))
        return
    if tier not in TIERS: print(f"time_reproduce: --tier must be one of {', '.join(TIERS)}; got {tier!r}", file=sys.stderr); sys.exit(2)
    if not shutil.which('make') or not shutil.which('git'): print('time_reproduce: needs make and git on PATH', file=sys.stderr); sys.exit(2)
    rec = run(keep, tier)
    from pavlovattn.base.cache import atomic_write                                  # the package's one atomic writer
    atomic_write(path, json.dumps(dict(runs=runs + [rec]), indent=1, ensure_ascii=False) + '\n')
    print(sentence(rec))
    if rec['exit_status'] or rec['tree_changed'] or rec['project_cache_in_home']: print(f"time_reproduce: see {path}: {rec['exit_status']=}, {rec['tree_changed']=}, {rec['project_cache_in_home']=}", file=sys.stderr)
