"""The sweep runner's boundaries: a kind registered from `__main__` reaches worker processes; user code that exits, prints or
returns the wrong thing is a failed task with one line; grid files are counted before they are expanded; a local Dask
cluster listens on loopback only. Small: each test runs in a few seconds."""
import json, os, subprocess, sys, textwrap
from pathlib import Path
import pytest
from pavlovattn.base import sweep as sw

def _in_fresh_process(code:str, *args) -> list:
    "The JSON the last line of `code` prints, run in a fresh interpreter (as a worker process is)."
    out = subprocess.run([sys.executable, '-c', code, *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.splitlines()[-1])

def test_a_kind_registered_from_main_runs_in_a_worker(monkeypatch):
    """A notebook that nbdev_test ran earlier in the same process re-registers a package kind from its own namespace
    (`__main__`); a worker process cannot import `__main__`, and every task of that kind failed with 'ValueError: Empty
    module name' (the sweep page's processes-vs-inprocess cell, flaky because which notebooks share a test process
    depends on timing). The kind keeps the module that registered it before as its home, which a worker imports."""
    from pavlovattn.base import cache
    import pavlovattn.pages.capacity                                       # the package's registration comes first, as in that run
    grid = dict(task='capacity', fixed=dict(criterion='accurate', draws=2), grid=dict(d=[4]))
    here = sw.execute(sw.tasks(grid)[0]); assert here['status'] == 'ok'
    saved = sw.KINDS['capacity'], cache.KINDS['task capacity']
    try:
        ns = {'__name__': '__main__'}                                    # the capacity page's export cell, run by nbdev_test
        exec("from pavlovattn.base.sweep import kind\nfrom pavlovattn.pages.capacity import capacity_task as _c\n"
             "@kind('capacity', 2, code=('pavlovattn.pages.capacity',))\ndef capacity_task(**kw): return _c(**kw)\n", ns)
        spec = sw.tasks(grid)[0]
        assert sw.KINDS['capacity'].fn.__module__ == '__main__' and spec['module'] == 'pavlovattn.pages.capacity'
    finally: sw.KINDS['capacity'], cache.KINDS['task capacity'] = saved
    code = "import json, sys; from pavlovattn.base import sweep; e = sweep.execute(json.loads(sys.argv[1])); print(json.dumps([e['status'], e['error'], e['rows']]))"
    assert _in_fresh_process(code, json.dumps(spec)) == ['ok', None, here['rows']]     # a worker: the same rows as here
    monkeypatch.setattr(sw, 'discover', lambda: [])                      # a kind registered only in a script's __main__: one line
    e = sw.execute(dict(spec, task='no-such-kind', module='__main__'))
    assert e['error'].startswith("CacheError: the task kind 'no-such-kind' was registered in '__main__', which this worker process cannot import")

USER_TASKS = textwrap.dedent('''
    import os, sys, time
    def exits(x): sys.exit(3)
    def raises_exit(x): raise SystemExit
    def prints(x): print('chatter on stdout'); return dict(y=x)
    def wrong(x): return 'not a row'
    def slow(x, marks): open(os.path.join(marks, f'{x}-{os.getpid()}'), 'w').close(); time.sleep(60); return dict(x=x)
''')

def test_user_tasks_that_exit_print_or_return_the_wrong_thing(tmp_path, capsys):
    "sys.exit in a task ended the sweep with no table and no summary (exit 0); a task's print went into the CSV on stdout."
    (tmp_path / 'user.py').write_text(USER_TASKS)
    for fn, error in (('exits', 'the task called sys.exit(3)'), ('raises_exit', 'the task called sys.exit(None)'),
                      ('wrong', 'CacheError: a task returns a dict, a list of dicts or a DataFrame; got str')):
        e = sw.execute(sw.tasks(dict(task=f'{tmp_path}/user.py:{fn}', grid=dict(x=[1])))[0])
        assert (e['status'], e['error']) == ('error', error)
    e = sw.execute(sw.tasks(dict(task=f'{tmp_path}/user.py:prints', grid=dict(x=[1])))[0])
    out = capsys.readouterr()
    assert e['rows'] == [dict(y=1)] and out.out == '' and 'chatter on stdout' in out.err
    df = sw.run(dict(task=f'{tmp_path}/user.py:exits', grid=dict(x=[1, 2])), cache=tmp_path / 'c', progress=False)   # the sweep goes on
    assert df.status.tolist() == ['error', 'error'] and df.attrs['summary']['failed'] == 2

@pytest.mark.parametrize('text, why', [
    ('def f(x:\n', 'does not compile: SyntaxError'),
    ('def g(x): return dict(x=x)\n', "defines no function 'f' at its top level"),
])
def test_task_files_refused_before_the_run(tmp_path, text, why):
    (tmp_path / 'bad.py').write_text(text)
    with pytest.raises(sw.GridError, match=why): sw.tasks(dict(task=f'{tmp_path}/bad.py:f', grid=dict(x=[1])))

BOMB = 'task: json:loads\na: &a ["x","x","x","x","x","x","x","x","x","x"]\n' + ''.join(
    f'{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n' for p, c in zip('abcdefgh', 'bcdefghi')) + 'fixed: {s: *i}\n'

@pytest.mark.parametrize('name, data, why', [
    ('bomb.yaml', BOMB.encode(), 'holds more than 100,000 values'),                       # 400 bytes, 10^9 strings
    ('axes.yaml', ('task: json:loads\ngrid: {' + ', '.join(f'a{i}: [1,2,3,4,5,6,7,8,9,10]' for i in range(9)) + '}\n').encode(),
     'has 1,000,000,000 configurations, more than 100,000'),
    ('deep.yaml', b'task: json:loads\nfixed: {s: ' + b'[' * 20000 + b']' * 20000 + b'}\n', 'nested'),
    ('deep.json', b'{"task": "json:loads", "fixed": {"s": ' + b'[' * 20000 + b']' * 20000 + b'}}', 'nested'),
    ('intaxis.yaml', b'task: json:loads\ngrid: {1: [1, 2]}\n', 'parameter names are strings; got 1'),
    ('latin1.yaml', 'task: json:loads\nfixed: {s: "caf\xe9"}\n'.encode('latin-1'), 'is not UTF-8 text'),
    ('bigint.yaml', b'task: json:loads\nfixed: {s: ' + b'7' * 5000 + b'}\n', 'holds a value that cannot be read'),
    ('bigint.json', b'{"task": "json:loads", "fixed": {"s": ' + b'7' * 5000 + b'}}', 'is not valid JSON'),
    ('dup.yaml', b'task: json:loads\nfixed: {s: "1"}\nfixed: {s: "2"}\n', "the key 'fixed' appears twice"),
])
def test_grid_files_counted_before_they_are_built(tmp_path, name, data, why):
    "Each took 21-81 s and gigabytes, gave a traceback, or (duplicate keys) silently kept the last; now one line, at once."
    (tmp_path / name).write_bytes(data)
    with pytest.raises(sw.GridError, match=why): sw.tasks(sw.load_grid(tmp_path / name))

def test_a_local_dask_cluster_listens_on_loopback_only():
    "LocalCluster(dashboard_address=':0') served the dashboard on 0.0.0.0; every socket the sweep's cluster opens is on 127.0.0.1."
    psutil = pytest.importorskip('psutil'); pytest.importorskip('distributed')
    d = sw._Dask(None, 1, 1, False)
    try:
        me = psutil.Process()
        ips = {c.laddr.ip for p in [me, *me.children(recursive=True)] for c in p.net_connections(kind='inet') if c.status == psutil.CONN_LISTEN}
    finally: d.close()
    assert ips == {'127.0.0.1'} and d.dashboard.startswith('http://127.0.0.1:')

def test_workers_die_with_a_killed_driver(tmp_path):
    "SIGKILL of a --backend processes sweep left its workers running (holding the driver's stdout: `sweep | cat` never ended)."
    psutil = pytest.importorskip('psutil')
    (tmp_path / 'user.py').write_text(USER_TASKS); marks = tmp_path / 'marks'; marks.mkdir()
    code = (f"from pavlovattn.base import sweep\nif __name__ == '__main__': sweep.run(dict(task={str(tmp_path / 'user.py')!r} + ':slow', "
            f"fixed=dict(marks={str(marks)!r}), grid=dict(x=[1, 2, 3])), cache={str(tmp_path / 'c')!r}, backend='processes', workers=2, progress=False)\n")
    (tmp_path / 'driver.py').write_text(code)
    p = subprocess.Popen([sys.executable, str(tmp_path / 'driver.py')], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    t0 = __import__('time').time()
    while len(list(marks.iterdir())) < 2 and __import__('time').time() - t0 < 90: __import__('time').sleep(0.05)
    kids = psutil.Process(p.pid).children(recursive=True)
    workers = [int(m.name.split('-')[1]) for m in marks.iterdir()]
    p.kill(); p.wait()
    try:
        gone, alive = psutil.wait_procs([k for k in kids if k.pid in workers], timeout=5)
        assert not alive, f'workers still running 5 s after the driver was killed: {alive}'
        assert p.stdout.read() == b''                                    # every holder of the driver's stdout has closed it
    finally:
        for k in kids:
            with __import__('contextlib').suppress(psutil.Error): k.kill()
