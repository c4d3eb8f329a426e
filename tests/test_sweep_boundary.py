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

def test_a_kind_registered_from_main_runs_in_a_worker():
    """A notebook that nbdev_test ran earlier in the same process re-registers a package kind from its own namespace
    (`__main__`); a worker process cannot import `__main__`'s registration, and every task of that kind failed with
    'ValueError: Empty module name' (the sweep page's processes-vs-inprocess cell, flaky because which notebooks share a
    test process depends on timing). The worker now finds the package's kind; an unknown one is refused in one line."""
    spec = sw.tasks(dict(task='capacity', fixed=dict(criterion='accurate', draws=2), grid=dict(d=[4])))[0]
    here = sw.execute(spec)
    assert here['status'] == 'ok'
    code = ("import json, sys; from pavlovattn.base import sweep\n"
            "es = [sweep.execute(json.loads(a)) for a in sys.argv[1:]]\n"
            "print(json.dumps([[e['status'], e['error'], e['rows']] for e in es]))")
    got = _in_fresh_process(code, json.dumps(dict(spec, module='__main__')), json.dumps(dict(spec, task='no-such-kind', module='__main__')))
    assert got[0] == ['ok', None, here['rows']]                       # the same rows as in this process
    assert got[1][0] == 'error' and got[1][1].startswith("CacheError: the task kind 'no-such-kind' was registered in '__main__', which this worker")
