"""`python -m pavlovattn.apps.cli ARGS` for the tests, from a warm start: a process per call, as before, but forked from a
server process of this pytest worker that has imported torch, numpy, pandas, matplotlib, numba and the package already.

Most command-line tests spent their time starting Python: about 3 s of imports before the command ran (torch alone 2.3 s
on this machine), several hundred times in `make test`. A forked child runs the real command's `__main__` (`runpy`, as
`-m` does) in its own process, with the test's working directory, environment and stdin, its own stdout/stderr files,
and ends as an interpreter ends (atexit handlers, non-daemon threads joined); its exit status is the command's. What
it does not check is the start-up itself (which modules a bare `pavlovattn` imports, how long `--help` takes): the
tests of that (tests/test_cli.py) keep starting a fresh interpreter, as do the tests that send signals to a run or
measure its memory.

    from warm_cli import cli
    r = cli('run', 'A+', cwd=tmp_path)       # a subprocess.CompletedProcess: returncode, stdout, stderr (text)
"""
import atexit, json, os, signal, subprocess, sys, tempfile, threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SERVER = r'''
import json, os, sys
import torch, numpy, pandas, matplotlib, matplotlib.pyplot, numba          # what the commands import, once
import pavlovattn.design.designs, pavlovattn.design.results, pavlovattn.model.kernels
req = None
for line in sys.stdin:                       # one request a line: {argv, cwd, env, stdin, out, err}
    req = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0: break                       # the child leaves the loop and runs the command below
    print(json.dumps(dict(pid=pid)), flush=True)
    _, status = os.waitpid(pid, 0)
    print(json.dumps(dict(status=os.waitstatus_to_exitcode(status))), flush=True)
    req = None
if req is None: sys.exit(0)                  # the server: its stdin closed
import io, runpy
keep = [sys.stdin, sys.stdout, sys.stderr]   # the server's streams: kept, so that collecting them cannot close fds 0-2
for fd, path, mode in ((0, req['stdin'] or os.devnull, os.O_RDONLY), (1, req['out'], os.O_WRONLY | os.O_TRUNC),
                       (2, req['err'], os.O_WRONLY | os.O_TRUNC)):
    f = os.open(path, mode); os.dup2(f, fd); os.close(f)
sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, 'r', closefd=False), encoding='utf-8')
sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False), encoding='utf-8')
sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.FileIO(2, 'w', closefd=False), encoding='utf-8', errors='backslashreplace',
                                               line_buffering=True)
os.chdir(req['cwd']); os.environ.clear(); os.environ.update(req['env'])
sys.path[0] = os.getcwd()                    # as `python -m` puts the working directory first
import importlib.util
sys.argv = [importlib.util.find_spec('pavlovattn.apps.cli').origin, *req['argv']]
sys.modules.pop('pavlovattn.apps.cli', None)
# As the interpreter ends a `python -m` run: SystemExit's code, a traceback and 1 for an exception, then the non-daemon
# threads joined, the atexit handlers run and the streams flushed; the teardown of every module (half a second with
# torch loaded) is skipped, as nothing a command writes depends on it.
import atexit, threading, traceback
try: runpy.run_module('pavlovattn.apps.cli', run_name='__main__', alter_sys=True); code = 0
except SystemExit as e: code = e.code
except KeyboardInterrupt: traceback.print_exc(); code = 130
except BaseException: traceback.print_exc(); code = 1
if code is None: code = 0
elif not isinstance(code, int): print(code, file=sys.stderr); code = 1
threading._shutdown(); atexit._run_exitfuncs()
for f in (sys.stdout, sys.stderr):
    try: f.flush()
    except Exception: pass
os._exit(code & 0xff)
'''

_lock, _server = threading.Lock(), None

def _start():
    global _server
    if _server is None or _server.poll() is not None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')])))
        _server = subprocess.Popen([sys.executable, '-c', SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                   cwd=str(ROOT), env=env, start_new_session=True)
        atexit.register(_server.stdin.close)
    return _server

def cli(*argv, cwd=None, env=None, input=None, timeout=600) -> subprocess.CompletedProcess:
    "Run `python -m pavlovattn.apps.cli *argv` from the warm server; like subprocess.run(..., capture_output=True, text=True)."
    argv = [str(a) for a in argv]; args = [sys.executable, '-m', 'pavlovattn.apps.cli', *argv]
    with _lock, tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp); (t / 'out').touch(); (t / 'err').touch()
        if input is not None: (t / 'in').write_text(input)
        srv = _start()
        srv.stdin.write(json.dumps(dict(argv=argv, cwd=str(cwd or os.getcwd()), env=dict(os.environ if env is None else env),
                                        stdin=str(t / 'in') if input is not None else None, out=str(t / 'out'), err=str(t / 'err'))) + '\n')
        srv.stdin.flush()
        pid = json.loads(srv.stdout.readline())['pid']
        late = threading.Event()
        def kill(): late.set(); os.kill(pid, signal.SIGKILL)
        timer = threading.Timer(timeout, kill); timer.start()
        try: status = json.loads(srv.stdout.readline())['status']
        finally: timer.cancel()
        if late.is_set(): raise subprocess.TimeoutExpired(args, timeout)
        out, err = (t / 'out').read_text(), (t / 'err').read_text()
    return subprocess.CompletedProcess(args, status, out, err)
