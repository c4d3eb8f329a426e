"""Install into a virtual environment what a make target needs: torch (its CPU build where PyTorch's CPU index answers)
and the package with the extras given, editable. The Makefile's `venv` and `venv-test` call it, and tools/time_install.py
measures it step by step, so the time the README states is the time of this code.

The installer is uv where it can be had: pip installs uv into the environment first (one 17 MB wheel, about 2 s), and uv
then resolves, downloads and unpacks in parallel — the test environment's 130 packages in about 25 s against about 2 min
for pip on this 2-core machine, the same versions (compared with `pip freeze`). uv does not read pip's configuration, so
the index, extra indexes, wheel folders and constraints pip would use (`pip config list`: its files and PIP_* variables)
are passed to it, with pip's rule of taking the best version across all of them. Where uv cannot be installed or fails,
pip does the whole install, said in one line. Nothing is compiled to bytecode here: Python compiles a module the first
time it is imported and keeps it (the Makefile allows that where the environment forbids it), and the checks import
about 2,500 of the environment's 17,500 files, which compiling up front took 40 s of the install.

    python tools/install.py VENV EXTRAS [--pip]     # EXTRAS as in settings.ini, comma-separated ('docs', 'docs,test,interop,fla')
"""
import os, shlex, subprocess, sys, time, urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TORCH = 'torch==2.13.0'
TORCH_CPU_INDEX = 'https://download.pytorch.org/whl/cpu'
_SCOPES = ('global', 'user', 'site', ':env:')     # pip's order: a later one overrides an earlier one


def clock(s:float) -> str:
    "Seconds as the README and the timing records say them: '42 s', '23 min 19 s' (rounded to the second first: never '60 s')."
    s = int(round(s))
    return f'{s} s' if s < 120 else f'{s // 60} min {s % 60:02d} s'

def pip_settings(listing:str) -> dict:
    "The index settings in `pip config list` output: {'index-url': str, 'extra-index-url': [..], 'find-links': [..], 'constraint': [..], 'cert': str} (set ones only)."
    found = {}
    for line in listing.splitlines():
        if '=' not in line: continue
        name, value = line.split('=', 1)
        scope, _, key = name.strip().rpartition('.')
        if key not in ('index-url', 'extra-index-url', 'find-links', 'constraint', 'cert') or scope not in _SCOPES: continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in '\'"': value = value[1:-1]
        found.setdefault(key, {})[scope] = value
    out = {}
    for key, by_scope in found.items():
        value = next(by_scope[s] for s in reversed(_SCOPES) if s in by_scope)
        out[key] = value if key in ('index-url', 'cert') else value.split()
    return out

def uv_args(settings:dict, index_url:str|None=None) -> list:
    "uv's options for pip's `settings` (`pip_settings`), with `index_url` in place of pip's index where given."
    args = ['--index-strategy', 'unsafe-best-match']               # pip's rule: the best version across every index
    if (url := index_url or settings.get('index-url')): args += ['--index-url', url]
    for key in ('extra-index-url', 'find-links', 'constraint'):
        for v in settings.get(key, []): args += [f'--{key}', v]
    return args

def _say(msg): print(f'== venv: {msg}', flush=True)

def _run(cmd, log, env=None) -> bool:
    with open(log, 'a') as f:
        f.write(f'$ {shlex.join(map(str, cmd))}\n'); f.flush()
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env).returncode == 0

def _has_torch(py) -> bool:
    return subprocess.run([py, '-c', "import importlib.util as u, sys; sys.exit(u.find_spec('torch') is None)"]).returncode == 0

def _cpu_index_answers() -> bool:
    try: urllib.request.urlopen(f'{TORCH_CPU_INDEX}/torch/', timeout=5); return True
    except Exception: return False

def install(venv, extras:str, log=None, use_uv:bool=True, say=_say, src=ROOT) -> str:
    "Install torch and the package at `src` with `extras` ('' for none) into `venv` (created if missing), editable; the installer's output to `log`. Which installer did it: 'uv' or 'pip'."
    venv = Path(venv); log = Path(log or venv / 'pip.log')
    if not (venv / 'bin' / 'python').exists():
        say(f'creating {venv} with {Path(sys.executable).name}'); subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True)
    py = str(venv / 'bin' / 'python'); log.write_text('')
    env_pip = [py, '-m', 'pip', 'install', '--no-compile']
    if use_uv and not _run(env_pip + ['uv'], log):
        say(f'uv could not be installed (its output is in {log}): pip installs everything'); use_uv = False
    settings = pip_settings(subprocess.run([py, '-m', 'pip', 'config', 'list'], capture_output=True, text=True).stdout) if use_uv else {}
    uv = [str(venv / 'bin' / 'uv'), 'pip', 'install', '--python', py]
    uv_env = dict(os.environ) | ({'SSL_CERT_FILE': settings['cert']} if settings.get('cert') and not os.environ.get('SSL_CERT_FILE') else {})   # pip's `cert`
    steps = []
    if not _has_torch(py):
        if _cpu_index_answers(): say(f'{TORCH} (CPU build) from {TORCH_CPU_INDEX}'); idx = TORCH_CPU_INDEX
        else:
            say(f'{TORCH_CPU_INDEX} could not be reached (5 s limit): {TORCH} from pip\'s default index and wheel folders '
                f'(on Linux without a local CPU wheel this is the CUDA build, several GB)'); idx = None
        steps.append(('torch', [TORCH], idx))
    steps.append((f'pavlovattn[{extras}]' if extras else 'pavlovattn', ['-e', f'{src}[{extras}]' if extras else str(src)], None))
    for what, args, idx in steps:
        ok = use_uv and _run(uv + uv_args(settings, idx) + args, log, env=uv_env)
        if use_uv and not ok: say(f'uv could not install {what} (its output is in {log}): pip instead'); use_uv = False
        if not ok and not _run(env_pip + (['--index-url', idx] if idx else []) + args, log):
            raise SystemExit(f'== venv: pip could not install {what}: its output is in {log}')
        if what == 'torch':
            r = subprocess.run([py, '-W', 'ignore', '-c', "import torch; print(torch.__version__, '(CUDA build)' if torch.version.cuda else '(CPU build)')"],
                               capture_output=True, text=True)
            say(f'torch {r.stdout.strip()}')
    return 'uv' if use_uv else 'pip'

def main(argv) -> int:
    if len(argv) < 2: print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr); return 2
    venv, extras, t = Path(argv[0]), argv[1], time.time()
    how = install(venv, extras, use_uv='--pip' not in argv)
    s = round(time.time() - t)
    (venv / f'.seconds-{extras}').write_text(f'{s}\n'); (venv / f'.installed-{extras}').touch()
    _say(f"ready ({venv}, pavlovattn[{extras}] in {s} s with {how}; the installer's output: {venv / 'pip.log'})")
    return 0

if __name__ == '__main__': sys.exit(main(sys.argv[1:]))
