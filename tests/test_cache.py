"The cache module: atomic writes under a racing reader, checked reads, report paths (symlinks, FIFOs, devices, empty)."
import json, os, stat, subprocess, sys, threading
import pytest
from pavlovattn.base.cache import write_json, read_json, write_report, atomic_write, CacheError, safe_line, finite
from warm_cli import cli      # the command from a warm start: a process per call, forked after the imports

def test_a_racing_reader_never_sees_a_torn_entry(tmp_path, capsys):
    "Reproducer 4: 62 of 1,146 reads racing one writer got a JSONDecodeError with path.write_text."
    p = tmp_path / 'e.json'; a, b = dict(x=list(range(2000))), dict(x=list(range(3000)))
    write_json(p, a); stop = threading.Event(); seen = []
    def writer():
        i = 0
        while not stop.is_set(): write_json(p, a if i % 2 else b); i += 1
    def writers_rival():                                     # a second writer on the same key
        while not stop.is_set(): write_json(p, b)
    ts = [threading.Thread(target=writer), threading.Thread(target=writers_rival)]
    for t in ts: t.start()
    try:
        for _ in range(400): seen.append(read_json(p))
    finally:
        stop.set()
        for t in ts: t.join()
    assert all(s in (a, b) for s in seen) and capsys.readouterr().err == ''
    assert sorted(os.listdir(tmp_path)) == ['e.json']

def test_sigterm_during_a_write_leaves_no_temporary_file(tmp_path):
    "A report write killed by SIGTERM removes its temporary file (31 of 48 kills left one)."
    code = ("import os, signal, pavlovattn.base.cache as c\n"
            "real = os.fsync\n"
            "def slow(fd): os.kill(os.getpid(), signal.SIGTERM); real(fd)\n"
            "os.fsync = slow\n"
            f"c.atomic_write({str(tmp_path / 'r.json')!r}, 'x' * 100000)\n")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 143 and os.listdir(tmp_path) == [], (r.returncode, r.stderr, os.listdir(tmp_path))

def test_report_paths(tmp_path):
    "Reproducer 9: a symlink is followed (its target replaced), a FIFO and a device written in place, an empty path refused."
    t = tmp_path / 't.json'; t.write_text('old'); link = tmp_path / 'l.json'; link.symlink_to(t)
    write_report(link, 'new'); assert link.is_symlink() and t.read_text() == 'new'
    dangling = tmp_path / 'd.json'; dangling.symlink_to(tmp_path / 'nowhere.json')
    write_report(dangling, 'made'); assert dangling.is_symlink() and (tmp_path / 'nowhere.json').read_text() == 'made'
    fifo = tmp_path / 'f'; os.mkfifo(fifo); got = []
    r = threading.Thread(target=lambda: got.append(open(fifo).read())); r.start()
    write_report(fifo, 'piped'); r.join(); assert got == ['piped'] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    write_report('/dev/null', 'x'); assert stat.S_ISCHR(os.stat('/dev/null').st_mode)
    for bad in ('', '  ', None): 
        with pytest.raises(CacheError, match='empty'): write_report(bad, 'x')
    with pytest.raises(CacheError, match='folder'): write_report(tmp_path, 'x')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['d.json', 'f', 'l.json', 'nowhere.json', 't.json']

def test_checks_and_lines():
    assert safe_line('a\x1b[2Jb\x07\x08\u202e\n') == 'a\\x1b[2Jb\\x07\\x08\\u202e\\x0a'
    for bad in (float('nan'), float('inf'), 2.0, True, 'x', None):
        with pytest.raises(CacheError): finite(bad, 0, 1)
    assert finite(0.5, 0, 1) == 0.5


# ---- one root, one layout, one invalidation rule (issues 33, 32, 36) ----
import io, re, shutil
from pathlib import Path
import torch
from pavlovattn.base import cache
from pavlovattn.apps.models import TrainConfig, get_model, train, checkpoint_path, lr_sweep, _state_digest, _ck_digest
from pavlovattn.base.cache import root, code_version, fingerprint, KINDS, sealed, migrate

REPO = Path(__file__).resolve().parent.parent
TINY = dict(task='vector', rule='delta', steps=4, batch=4, d_model=16, n_layers=1, eval_every=2, eval_batch=8)

def _root_in(env, cwd, path=None):
    "`cache.root()` as a fresh interpreter sees it with environment `env` (the package found on `path`, default this checkout)."
    env = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    if path is not None: env['PYTHONPATH'] = str(path)
    r = subprocess.run([sys.executable, '-c', 'import pavlovattn.base.cache as c; print(c.root()); print(c.__file__)'], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split('\n')[:2]

def test_the_default_root_is_per_project(tmp_path):
    "A source checkout keeps its cache in <checkout>/.cache/pavlovattn (ignored by git), wherever the command runs from; an installed copy uses the user's cache folder."
    env = dict(PAVLOVATTN_CACHE=None, XDG_CACHE_HOME=str(tmp_path / 'xdg'))
    got, src = _root_in(env, tmp_path)
    if Path(src).resolve().parent.parent == REPO / 'pavlovattn':                       # the package runs from this checkout (editable install)
        assert got == str(REPO / '.cache' / 'pavlovattn')
        r = subprocess.run(['git', 'check-ignore', '-q', str(REPO / '.cache' / 'pavlovattn' / 'checkpoints' / 'x.v1.pt')], cwd=REPO)
        assert r.returncode == 0, 'the checkout cache is not ignored by git'
    inst = tmp_path / 'site'; shutil.copytree(REPO / 'pavlovattn', inst / 'pavlovattn', ignore=shutil.ignore_patterns('__pycache__'))
    got, src = _root_in(env, tmp_path, inst)
    assert Path(src).parent.parent == inst / 'pavlovattn' and got == str(tmp_path / 'xdg' / 'pavlovattn')
    home = dict(HOME=str(tmp_path / 'home'))                                          # platformdirs' user cache folder: the XDG rules
    assert _root_in({**env, **home, 'XDG_CACHE_HOME': None}, tmp_path, inst)[0] == str(tmp_path / 'home' / '.cache' / 'pavlovattn')
    assert _root_in({**env, **home, 'XDG_CACHE_HOME': 'relative/x'}, tmp_path, inst)[0] == str(tmp_path / 'home' / '.cache' / 'pavlovattn')
    (inst / 'settings.ini').write_text('[DEFAULT]\nlib_name = pavlovattn\n'); (inst / '.git').mkdir()   # that copy inside a checkout
    assert _root_in(env, tmp_path, inst)[0] == str(inst / '.cache' / 'pavlovattn')

HOLD = ("import sys, time; from pavlovattn.base.cache import locked\n"
        "with locked(sys.argv[1]): print('held', flush=True); time.sleep(60)")

def test_a_lock_holds_across_processes_and_goes_with_a_killed_holder(tmp_path):
    "`flock` (kept on purpose, not `filelock`): another process holding `<entry>.lock` refuses `try_lock`; SIGKILL the holder and the lock is free."
    from pavlovattn.base.cache import try_lock, unlock
    import signal
    e = tmp_path / 'e.json'
    holder = subprocess.Popen([sys.executable, '-c', HOLD, str(e)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == 'held'
        assert try_lock(f'{e}.lock') is None                                           # held by the other process
        os.kill(holder.pid, signal.SIGKILL); holder.wait(timeout=30)
        fd = try_lock(f'{e}.lock'); assert fd is not None; unlock(fd)                  # the kernel dropped it with its holder
        fd = try_lock(f'{e}.lock'); assert fd is not None and try_lock(f'{e}.lock') is None; unlock(fd)   # one holder at a time, in one process too
    finally:
        if holder.poll() is None: holder.kill(); holder.wait()

def test_pavlovattn_cache_overrides(tmp_path):
    assert _root_in(dict(PAVLOVATTN_CACHE=str(tmp_path / 'c')), tmp_path)[0] == str(tmp_path / 'c')
    assert _root_in(dict(PAVLOVATTN_CACHE='  ', XDG_CACHE_HOME=str(tmp_path)), tmp_path)[0] != '  '          # blank: as if unset

def test_code_versions_are_bumped():
    "Each kind's code version and the fingerprint of its code, as recorded: code changed without a bump (or a bump not recorded) fails here."
    from pavlovattn.base.registry import discover; discover()                                     # every module registers its kinds
    want = json.loads((Path(__file__).parent / 'code_versions.json').read_text())
    assert set(want) == set(KINDS), (sorted(want), sorted(KINDS))
    for k, c in KINDS.items():
        assert c.version == want[k]['version'], (f'{k}: version {c.version}, recorded {want[k]["version"]}: record it with '
                                                  '`python -m pavlovattn.base.cache versions --record`')
        assert fingerprint(k) == want[k]['fingerprint'], (
            f"the code of {k} entries changed ({', '.join(c.code)}) and its version {c.version} did not: bump it where it is registered "
            f"(its entries are rebuilt), or, if no result can change, record the fingerprint: python -m pavlovattn.base.cache versions --record")

def test_kinds_that_run_a_family_name_all_its_code():
    "A kind whose entries run a family's recurrence names every module of it (`core.recurrence_code`: the loops, the kernels and the classical catalogue), so that a change to, say, the Kalman filter's update changes the fingerprint of the checkpoints and lr-sweeps that train it (it was missing from them)."
    from pavlovattn.base.registry import discover; discover()
    from pavlovattn.model.core import recurrence_code
    rec = set(recurrence_code()); assert {'pavlovattn.model.classical', 'pavlovattn.model.kernels'} <= rec
    runs = {k: c for k, c in KINDS.items() if rec & {x.partition(':')[0] for x in c.code}}
    assert {'checkpoint', 'lr-sweep', 'task capacity', 'task battery', 'task animal-fit', 'task animal-score'} <= set(runs)
    for k, c in runs.items(): assert rec <= set(c.code), (k, sorted(rec - set(c.code)))

def _one_line(capsys, why):
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and why in err and 'Traceback' not in err, err
    return err

class _Evil:
    def __init__(self, marker): self.marker = marker
    def __reduce__(self): return (os.system, (f'touch {self.marker}',))

def test_bad_checkpoints_are_rebuilt_with_one_line(tmp_path, monkeypatch, capsys):
    "Corrupted, swapped, stale-version and pickled-code checkpoints: each retrained (the same weights) with one line saying why, then loaded."
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path))
    cfg, other = TrainConfig(**TINY), TrainConfig(**{**TINY, 'seed': 1})
    ref, met = get_model(cfg, progress=False); path = checkpoint_path(cfg); good = path.read_bytes()
    get_model(other, progress=False); swapped = checkpoint_path(other).read_bytes()
    ck = torch.load(io.BytesIO(good), weights_only=True)
    def resealed(**change):
        buf = io.BytesIO(); x = {**ck, **change}; torch.save(dict(x, sha256=_ck_digest(x)), buf); return buf.getvalue()
    def kept(**change):
        buf = io.BytesIO(); torch.save({**ck, **change}, buf); return buf.getvalue()
    evil = io.BytesIO(); marker = tmp_path / 'ran'; torch.save({'state': _Evil(marker)}, evil)
    w = next(v for v in ck['state'].values() if v.numel() >= 8).contiguous().numpy().tobytes()
    at = good.find(w); assert at > 0                                               # a tensor's bytes as stored in the file
    flipped = bytearray(good); flipped[at + 5] ^= 0x10; flipped = bytes(flipped)    # reproducer 3: loaded with outputs off by 2e-7 .. NaN
    b = {k: v for k, v in ref.task.batch(3, torch.Generator().manual_seed(1)).items()}
    with torch.no_grad(): want = ref(b)
    for name, data, why in (('cut', good[:len(good) // 2], 'plain tensors'), ('last byte dropped', good[:-1], 'plain tensors'),
                            ('a flipped byte in the tensor data', flipped, 'hash'), ("another seed's", swapped, 'it holds'),
                            ('stale version', resealed(code_version='checkpoint v0; pavlovattn cache 3'), 'made by'),
                            ('metric edited, hash kept', kept(metrics={**ck['metrics'], 'final_metric': 1.0}), 'hash'),
                            ('pickled code', evil.getvalue(), 'plain tensors')):
        path.write_bytes(data); capsys.readouterr()
        model, m = get_model(cfg, progress=False); _one_line(capsys, why)
        assert m['source'] == 'trained' and m['checkpoint'] == str(path), name
        with torch.no_grad(): torch.testing.assert_close(model(b), want, rtol=0, atol=0)
        assert get_model(cfg, progress=False)[1]['source'] == 'loaded' and capsys.readouterr().err == '', name
    assert not marker.exists()

def test_changed_training_code_retrains(tmp_path, monkeypatch, capsys):
    "A bump of the checkpoint version: the old entry is not reused; the model is trained again with one line, and filed under the new version."
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path))
    cfg = TrainConfig(**TINY); get_model(cfg, progress=False); old = checkpoint_path(cfg)
    k = KINDS['checkpoint']
    try:
        cache.code_kind('checkpoint', k.version + 1, k.folder, k.code)
        _, m = get_model(cfg, progress=False); _one_line(capsys, 'another version of the training code')
        assert m['source'] == 'trained' and checkpoint_path(cfg) != old and checkpoint_path(cfg).exists() and old.exists()
    finally: cache.code_kind('checkpoint', k.version, k.folder, k.code)
    assert get_model(cfg, progress=True)[1]['source'] == 'loaded'
    err = capsys.readouterr().err; assert err.strip() == f'pavlovattn: {cfg.key()} loaded from {old}', err    # one line per model says where from

TWO = ("import json, sys; from pavlovattn.apps.models import TrainConfig, get_model\n"
       f"_, m = get_model(TrainConfig(**{TINY!r}), progress=False)\n"
       "print(json.dumps(dict(source=m['source'], sha=m['sha256'])))\n")

def test_two_processes_on_one_entry(tmp_path):
    "Two processes asking for one model at once: one trains it, the other waits and loads it; one entry, whole, no temporary file."
    env = {**os.environ, 'PAVLOVATTN_CACHE': str(tmp_path)}
    ps = [subprocess.Popen([sys.executable, '-c', TWO], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in ps]
    assert all(p.returncode == 0 for p in ps), [o[1] for o in outs]
    got = [json.loads(o[0]) for o in outs]
    assert sorted(g['source'] for g in got) == ['loaded', 'trained'] and got[0]['sha'] == got[1]['sha']
    files = sorted(p.name for p in (tmp_path / 'checkpoints').iterdir())
    v = KINDS['checkpoint'].version
    assert files == [f'{TrainConfig(**TINY).key()}.v{v}.pt', f'{TrainConfig(**TINY).key()}.v{v}.pt.lock']

WRITER = ("import sys; from pavlovattn.base.cache import write_json\n"
          "for i in range(150): write_json(sys.argv[1], dict(who=sys.argv[2], x=list(range(3000 + i))))\n")

def test_two_processes_writing_one_json_entry(tmp_path, capsys):
    p = tmp_path / 'e.json'
    ws = [subprocess.Popen([sys.executable, '-c', WRITER, str(p), w]) for w in 'ab']
    seen = []
    while any(w.poll() is None for w in ws):
        if p.exists(): seen.append(cache.read_json(p))
    assert all(w.returncode == 0 for w in ws)
    assert all(s is not None and s['who'] in 'ab' and s['x'] == list(range(len(s['x']))) for s in seen) and capsys.readouterr().err == ''
    assert sorted(os.listdir(tmp_path)) == ['e.json']

def _legacy(tmp_path, monkeypatch):
    "A cache in the layout before one root (checkpoints/<key>.pt, sweep-*.json, probes-*.json; format 'cache 2'), made from a real run."
    from pavlovattn.apps.probes import measure_family, _probe_key, DEFAULT
    new = tmp_path / 'made'; monkeypatch.setenv('PAVLOVATTN_CACHE', str(new))
    kw = dict(seeds=(0,), n=8, progress=False, train_kw=dict(steps=2, batch=4, d_model=16, n_layers=1, eval_every=2, eval_batch=8), sweep=dict(lrs=(1e-2, 3e-3), steps=2))
    res = measure_family('delta', **kw)
    src = tmp_path / 'old'; (src / 'checkpoints').mkdir(parents=True); V = 'pavlovattn 0.1.0 cache 2'
    for f in (new / 'checkpoints').glob('*.pt'):
        ck = torch.load(f, weights_only=True)
        torch.save(dict(code_version=V, key=ck['key'], config=ck['config'], metrics=ck['metrics'], state=ck['state'], sha256=_state_digest(ck['state'])),
                   src / 'checkpoints' / f"{ck['key']}.pt")
    for kind, pre in (('lr-sweeps', 'sweep-'), ('probes', 'probes-')):
        for f in (new / kind).glob('*.json'):
            o = {k: v for k, v in json.loads(f.read_text()).items() if k not in ('code_version', 'sha256', 'model')}
            (src / 'checkpoints' / (pre + re.sub(r'\.v\d+\.json$', '.json', f.name))).write_text(json.dumps(sealed(o, V)))
    return src, kw, res

def test_migrate_re_keys_a_legacy_cache(tmp_path, monkeypatch, capsys):
    "Issue 36: checkpoints trained before the new rule stay usable. migrate checks and re-files them; afterwards nothing is trained or measured again."
    from pavlovattn.apps.probes import measure_family
    src, kw, res = _legacy(tmp_path, monkeypatch)
    (src / 'checkpoints' / 'vector-delta-s3-0123456789.pt').write_bytes(b'damaged')             # refused, reported
    stale = dict(torch.load(next((src / 'checkpoints').glob('*-s0-*.pt')), weights_only=True), code_version='checkpoint v0; pavlovattn cache 3')
    torch.save(stale, src / 'checkpoints' / 'vector-delta-s0-0123456789.pt')                   # an older version under the rule: refused
    before = {p: p.read_bytes() for p in src.rglob('*')  if p.is_file()}
    dst = tmp_path / 'new'; monkeypatch.setenv('PAVLOVATTN_CACHE', str(dst)); capsys.readouterr()
    n = migrate(src)
    err = capsys.readouterr().err
    assert n == dict(migrated=3, current=0, refused=2), (n, err)                              # a model, its sweep, its probes
    assert 'earlier version of the current code' in err and len(err.splitlines()) == 5
    assert {p: p.read_bytes() for p in src.rglob('*') if p.is_file()} == before                # the source is left as it was
    again = measure_family('delta', **kw)
    assert again['train'][0]['source'] == 'loaded' and again['per_seed'] == res['per_seed'] and again['lr'] == res['lr']
    assert capsys.readouterr().err == ''                                                        # no sweep, no probe result rebuilt
    assert migrate(src, quiet=True) == dict(migrated=0, current=3, refused=2)                   # a second run: nothing to do

def test_migrate_command(tmp_path, monkeypatch):
    src, _, _ = _legacy(tmp_path, monkeypatch)
    env = {**os.environ, 'PAVLOVATTN_CACHE': str(tmp_path / 'elsewhere')}
    r = subprocess.run([sys.executable, '-m', 'pavlovattn.base.cache', 'migrate', str(src), str(tmp_path / 'dst')], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == f"migrated 3, already current 0, refused 0 (into {tmp_path / 'dst'})", (r.stdout, r.stderr)
    assert len(list((tmp_path / 'dst' / 'checkpoints').glob(f"*.v{KINDS['checkpoint'].version}.pt"))) == 1 and not (tmp_path / 'elsewhere').exists()
    r = subprocess.run([sys.executable, '-m', 'pavlovattn.base.cache', 'migrate', str(tmp_path / 'nowhere')], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and 'not a folder' in r.stderr

def test_numbas_cache_lives_under_the_one_root(tmp_path):
    "Issue 33: numba's compiled kernels are cached under `cache.root()/numba` (a fresh interpreter with PAVLOVATTN_CACHE set), nothing beside the package's modules; a user's own NUMBA_CACHE_DIR is kept; a numba imported first is told too."
    import pavlovattn
    pkg = Path(pavlovattn.__file__).parent
    beside = lambda: {str(p): p.stat().st_mtime_ns for p in pkg.rglob('*.nb[ic]')}
    before, env = beside(), {k: v for k, v in os.environ.items() if k != 'NUMBA_CACHE_DIR'}
    def fresh(code, **more):
        r = subprocess.run([sys.executable, '-c', code], env=dict(env, PAVLOVATTN_CACHE=str(tmp_path / 'c'), **more), capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()
    out = fresh("import numpy as np; from pavlovattn import kernels; import numba\n"
                "keys = np.arange(5, dtype=np.uint64)\n"
                "a, b = kernels.shuffle_rows(np.arange(7), keys, engine='numba'), kernels.shuffle_rows(np.arange(7), keys, engine='numpy')\n"
                "assert (a == b).all() and not (a == np.arange(7)).all(); print(numba.config.CACHE_DIR)")
    assert out == str(tmp_path / 'c' / 'numba')
    idx = sorted(p.name for p in (tmp_path / 'c' / 'numba').rglob('*.nbi'))
    assert any(n.startswith('kernels._shuffle_par') for n in idx), idx                   # the kernel just compiled, cached there
    assert beside() == before, 'numba wrote beside the modules'
    assert fresh("import numba, pavlovattn.model.kernels; print(numba.config.CACHE_DIR)", NUMBA_CACHE_DIR=str(tmp_path / 'mine')) == str(tmp_path / 'mine')
    assert fresh("import numba; import pavlovattn.model.kernels; print(numba.config.CACHE_DIR)") == str(tmp_path / 'c' / 'numba')


def test_pavlovattn_cache_is_a_subcommand(tmp_path):
    "`pavlovattn cache` (issue 45): the cache's commands beside the others; bad arguments get one line and exit 2; `versions` lists every kind the pages register (found by discover, no module list)."
    env = dict(os.environ, PAVLOVATTN_CACHE=str(tmp_path / 'c'))
    run = lambda *a: cli('cache', *a, env=env, timeout=300)
    r = run('root'); assert r.returncode == 0 and r.stdout.strip() == str(tmp_path / 'c'), r.stderr
    for bad in (('bogus',), ('migrate',)):
        r = run(*bad); assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith('pavlovattn cache'), r.stderr
    r = run('versions'); assert r.returncode == 0, r.stderr
    kinds = json.loads(r.stdout)
    assert {'checkpoint', 'task capacity', 'task battery', 'task stacked', 'task claim'} <= set(kinds), sorted(kinds)

def test_a_folder_at_a_cache_path_is_one_line(tmp_path, capsys):
    "A directory where a cache entry goes crashed the write (IsADirectoryError from os.replace); a file where its folder goes, likewise."
    from pavlovattn.base import cache, sweep as sw
    with pytest.raises(cache.CacheError, match='a folder is in its place'): cache.write_json(tmp_path, {})
    (tmp_path / 'f').write_text('')
    with pytest.raises(cache.CacheError, match='cannot make the folder of'): cache.write_json(tmp_path / 'f' / 'x.json', {})
    g = dict(task='json:loads', configs=[dict(s='{"a": 1}'), dict(s='{"a": 2}')])
    (tmp_path / 'c').mkdir(); sw.Store(tmp_path / 'c').path(sw.tasks(g)[0]['key']).mkdir(parents=True)
    df = sw.run(g, cache=tmp_path / 'c', progress=False)                    # the sweep goes on; that entry is not stored
    assert df.a.tolist() == [1, 2] and 'a folder is in its place' in capsys.readouterr().err
