"make test's own script (tools/test_all.sh): the settings it runs the checks with."
import os, pathlib, subprocess

SCRIPT = pathlib.Path(__file__).parent.parent / 'tools' / 'test_all.sh'

def test_pytest_gets_a_worker_per_core_whatever_the_thread_settings():
    "The worker count is the cores (at most 4), also with OMP_NUM_THREADS=1 exported as the script does (GNU nproc obeys it)."
    line = next(l for l in SCRIPT.read_text().splitlines() if l.startswith('workers='))
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'OMP_THREAD_LIMIT': '1'}
    got = subprocess.run(['bash', '-c', f'{line}\necho "$workers"'], env=env, capture_output=True, text=True, check=True).stdout
    assert int(got) == min(len(os.sched_getaffinity(0)), 4)
