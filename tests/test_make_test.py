"make test's own scripts (tools/test_all.sh, tools/install.py): the settings they run and install with."
import os, pathlib, subprocess

SCRIPT = pathlib.Path(__file__).parent.parent / 'tools' / 'test_all.sh'

def test_pytest_gets_a_worker_per_core_whatever_the_thread_settings():
    "The worker count is the cores (at most 4), also with OMP_NUM_THREADS=1 exported as the script does (GNU nproc obeys it)."
    line = next(l for l in SCRIPT.read_text().splitlines() if l.startswith('workers='))
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'OMP_THREAD_LIMIT': '1'}
    got = subprocess.run(['bash', '-c', f'{line}\necho "$workers"'], env=env, capture_output=True, text=True, check=True).stdout
    assert int(got) == min(len(os.sched_getaffinity(0)), 4)

def _install():
    import importlib.util
    spec = importlib.util.spec_from_file_location('install', SCRIPT.parent / 'install.py')
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

def test_uv_gets_the_indexes_pip_would_use():
    "pip's settings from `pip config list` (environment over site over user over global files), passed to uv as options."
    listing = """global.extra-index-url='file:///a/simple file:///b/simple'
global.find-links='/opt/wheels'
global.constraint='/etc/c.txt'
global.index-url='https://mirror/simple'
user.index-url='https://user/simple'
:env:.find-links='/env/wheels'
global.cert='/etc/ca.pem'
global.timeout='60'
"""
    inst = _install(); s = inst.pip_settings(listing)
    assert s == {'extra-index-url': ['file:///a/simple', 'file:///b/simple'], 'find-links': ['/env/wheels'], 'constraint': ['/etc/c.txt'],
                 'index-url': 'https://user/simple', 'cert': '/etc/ca.pem'}
    assert inst.uv_args(s) == ['--index-strategy', 'unsafe-best-match', '--index-url', 'https://user/simple',
                               '--extra-index-url', 'file:///a/simple', '--extra-index-url', 'file:///b/simple',
                               '--find-links', '/env/wheels', '--constraint', '/etc/c.txt']
    assert inst.uv_args(s, 'https://cpu/whl')[2:4] == ['--index-url', 'https://cpu/whl']     # torch's CPU index in place of pip's
    assert inst.uv_args(inst.pip_settings('')) == ['--index-strategy', 'unsafe-best-match']  # nothing configured: uv's defaults (PyPI)
