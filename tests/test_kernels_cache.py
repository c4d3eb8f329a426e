"Issue 32, reproducer 12: a damaged numba cache file (cut short, emptied, a flipped byte) is detected, cleared and rebuilt with one line."
import glob, os, shutil, subprocess, sys
import pytest
pytest.importorskip('numba')

RUN = ("import numpy as np; from pavlovattn.model.kernels import shuffle_rows, stream_keys\n"
       "print(int(shuffle_rows(np.arange(9, dtype=np.int16), stream_keys(3, (1,), 11), engine='numba').sum(axis=0)[0]))")

def run(cache):
    r = subprocess.run([sys.executable, '-c', RUN], capture_output=True, text=True, timeout=300, env={**os.environ, 'NUMBA_CACHE_DIR': str(cache)})
    return r.returncode, r.stdout.strip(), r.stderr

@pytest.fixture(scope='module')
def good_cache(tmp_path_factory):
    d = tmp_path_factory.mktemp('numba-good'); rc, out, err = run(d)
    assert rc == 0 and err == '', err
    assert glob.glob(f'{d}/**/kernels._shuffle_par-*.nbi', recursive=True)
    return d, out

def _damage(path, how):
    b = open(path, 'rb').read()
    open(path, 'wb').write(b[:len(b) // 2] if how == 'cut' else b'' if how == 'empty' else b[:-30] + bytes([b[-30] ^ 0xff]) + b[-29:])

@pytest.mark.parametrize('what, how', [('nbi', 'cut'), ('nbc', 'empty'), ('nbi', 'flip')])
def test_a_damaged_numba_cache_is_cleared_and_rebuilt(good_cache, tmp_path, what, how):
    good, want = good_cache
    cache = tmp_path / 'cache'; shutil.copytree(good, cache)
    (target,) = glob.glob(f'{cache}/**/kernels._shuffle_par-*.{"nbi" if what == "nbi" else "1.nbc"}', recursive=True)
    _damage(target, how)
    rc, out, err = run(cache)
    assert rc == 0 and out == want, err[-3000:]
    assert len(err.splitlines()) == 1 and 'numba cache of shuffle_rows was damaged' in err and 'compiled it again' in err, err
    rc, out, err = run(cache)                                             # rebuilt: read back without a word
    assert rc == 0 and out == want and err == '', err


def run_in(root):
    "RUN with the package's own numba folder (under PAVLOVATTN_CACHE; NUMBA_CACHE_DIR unset)."
    env = {k: v for k, v in os.environ.items() if k != 'NUMBA_CACHE_DIR'}; env['PAVLOVATTN_CACHE'] = str(root)
    r = subprocess.run([sys.executable, '-c', RUN], capture_output=True, text=True, timeout=300, env=env)
    return r.returncode, r.stdout.strip(), r.stderr

class _Plant:
    "A pickle that runs code when it is read: it creates the file named by `path`."
    def __init__(self, path): self.path = path
    def __reduce__(self): return (open, (self.path, 'w'))

@pytest.mark.slow   # three runs that import torch and compile two kernels: about 20 s
def test_the_package_numba_cache_runs_no_planted_code_and_repairs_in_one_run(tmp_path):
    "numba unpickles its index files: a planted index ran a command at the next run, and with several kernels damaged each run repaired one. Every file the package did not record is removed before numba reads it, in one line, and the next run is clean."
    import pickle
    rc, want, err = run_in(tmp_path)                                       # compiles, records the files' hashes as numba saves them
    assert rc == 0 and err == '', err
    nbi = sorted(glob.glob(f'{tmp_path}/numba/**/*.nbi', recursive=True)); assert len(nbi) >= 2
    marker = tmp_path / 'pwned'
    for p in nbi: open(p, 'wb').write(pickle.dumps(_Plant(str(marker))))    # every index replaced by a pickle that runs code
    _damage(glob.glob(f'{tmp_path}/numba/**/*.nbc', recursive=True)[0], 'flip')
    rc, out, err = run_in(tmp_path)
    assert (rc, out) == (0, want) and not marker.exists()
    assert err.count('\n') == 1 and 'removed' in err and 'numba cache file(s)' in err, err
    assert run_in(tmp_path) == (0, want, '')                               # repaired in that one run

def test_unrecorded_numba_files_are_removed_before_numba_reads_them(tmp_path, capsys):
    "The check itself, in this process (no compile): recorded files stay, a planted, a changed and an unrecorded one go, said in one line."
    from pavlovattn.base.cache import _numba_verify, _numba_record
    d = tmp_path / 'numba' / 'model_x'; d.mkdir(parents=True)
    for n in ('k-1.py311.nbi', 'k-1.py311.1.nbc', 'j-2.py311.nbi'): (d / n).write_bytes(n.encode() * 10)
    _numba_record(str(tmp_path / 'numba'), [str(p) for p in d.iterdir()])   # what the package does when numba saves a kernel
    assert _numba_verify(str(tmp_path / 'numba')) == 0 and capsys.readouterr().err == ''
    (d / 'k-1.py311.nbi').write_bytes(b'planted')                        # changed after it was recorded
    (d / 'evil-3.py311.nbi').write_bytes(b'never recorded')
    assert _numba_verify(str(tmp_path / 'numba')) == 2
    assert sorted(p.name for p in d.iterdir()) == ['j-2.py311.nbi', 'k-1.py311.1.nbc']
    err = capsys.readouterr().err; assert err.count('\n') == 1 and 'removed 2 numba cache file(s)' in err
    (tmp_path / 'numba' / 'manifest.json').write_text('{"files": {}, "sha256": "x"}')   # a damaged manifest trusts nothing
    assert _numba_verify(str(tmp_path / 'numba')) == 2 and not list(d.iterdir())


WORKERS = ("from dataclasses import replace\n"
           "from pavlovattn.apps.models import TrainConfig, get_models\n"
           "if __name__ == '__main__':\n"
           "    c = TrainConfig(task='vector', rule='delta', lr=1e-2, steps=2, batch=4, d_model=16, eval_every=2, eval_batch=8, warmup=1)\n"
           "    get_models([replace(c, seed=s) for s in (0, 1)], progress=False, workers=2, load=False)\n")

def test_kernels_compiled_by_worker_processes_are_recorded(tmp_path):
    "Issue 50: a worker process inherits the NUMBA_CACHE_DIR the package set in its driver. It took that folder for the user's and recorded nothing, so the next process removed every kernel the workers had compiled (one line) and every pool of workers compiled them again (4-5 s a worker). Every file a worker writes is now recorded, and the next run reads the folder without a word."
    import hashlib, json
    (tmp_path / 'w.py').write_text(WORKERS)
    env = {k: v for k, v in os.environ.items() if k not in ('NUMBA_CACHE_DIR', 'PAVLOVATTN_NUMBA_CACHE_DIR')}; env['PAVLOVATTN_CACHE'] = str(tmp_path / 'c')
    r = subprocess.run([sys.executable, str(tmp_path / 'w.py')], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    d = tmp_path / 'c' / 'numba'
    files = {os.path.relpath(p, d): hashlib.sha256(open(p, 'rb').read()).hexdigest() for p in glob.glob(f'{d}/**/*.nb[ic]', recursive=True)}
    assert any('_rec_fwd' in f for f in files) and any('_rec_bwd' in f for f in files)   # the recurrence's kernels, compiled by the workers
    recorded = json.loads((d / 'manifest.json').read_text())['files']
    assert {f: recorded.get(f) for f in files} == files
    rc, _, err = run_in(tmp_path / 'c')
    assert rc == 0 and err == '', err
