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
