"Trained models: tasks, the model, the training loop (tiny, CPU), checkpoints and the cache."
import json, math
import pytest, torch
from pavlovattn.models import (token_recall, TokenTask, VectorTask, AssocLM, loss_and_metric, TrainConfig, train, get_model,
                               save_checkpoint, load_checkpoint, cache_dir, lr_sweep, TASKS)
from pavlovattn.families import FAMILIES

def test_mqar_every_key_once_and_targets_are_values():
    b = token_recall(64, vocab=64, seq_len=40, pairs=(8, 8), gen=torch.Generator().manual_seed(0))
    x, y = b['x'], b['y']; P = 8
    for i in range(64):
        keys = x[i, 0:2 * P:2]; assert len(set(keys.tolist())) == P and (keys < 32).all() and (keys > 0).all()
        for p in (y[i] != -100).nonzero().flatten().tolist():
            assert p >= 2 * P and int(y[i, p]) == int(x[i, 1:2 * P:2][keys == x[i, p]][0]) and int(x[i, p + 1]) == int(y[i, p])

def test_repeated_keys_last_value_wins():
    b = token_recall(128, vocab=32, seq_len=40, pairs=(10, 10), distinct=3, gen=torch.Generator().manual_seed(2))
    x, y = b['x'], b['y']; rebound = 0
    for i in range(128):
        keys, vals = x[i, 0:20:2], x[i, 1:20:2]
        for p in (y[i] != -100).nonzero().flatten().tolist():
            hits = (keys == x[i, p]).nonzero().flatten()
            assert int(y[i, p]) == int(vals[hits[-1]]); rebound += len(hits) > 1 and int(vals[hits[0]]) != int(vals[hits[-1]])
    assert rebound > 50                                          # overwriting actually occurs

def test_vector_task_additive_targets():
    t = VectorTask(p_rebind=0.0); b = t.batch(16, torch.Generator().manual_seed(0))
    for i in range(16):                                          # a single-cue trial's outcome is that cue's target at its queries
        for s in b['query'][i].nonzero().flatten().tolist():
            c = b['cue'][i, s, 0]
            solo = ((b['cue'][i, :s, 0] == c) & (b['cue'][i, :s, 1] == 0) & ~b['query'][i, :s]).nonzero().flatten()
            if len(solo): torch.testing.assert_close(b['out'][i, solo[-1]], b['target'][i, s])

def test_seeded_batches_repeat():
    for t in TASKS.values():
        a, b = t.batch(4, torch.Generator().manual_seed(7)), t.batch(4, torch.Generator().manual_seed(7))
        assert all(torch.equal(a[k], b[k]) for k in a)

@pytest.mark.parametrize('rule', ['hebbian', 'decay', 'delta', 'gated-delta', 'softmax', 'gla'])
def test_model_every_family_forward_backward(rule):
    for t in (TokenTask(vocab=16, seq_len=12, pairs=(2, 3)), VectorTask(seq_len=12)):
        m = AssocLM(t, rule, d_model=16); l, a = loss_and_metric(m, t.batch(2, torch.Generator().manual_seed(0)))
        l.backward(); assert torch.isfinite(l) and 0 <= float(a) <= 1 or t.kind == 'vector'

def test_training_reduces_loss_on_a_trivial_task():
    task = TokenTask(vocab=16, seq_len=12, pairs=(2, 2))
    cfg = TrainConfig(task='mqar', rule='delta', steps=150, batch=32, d_model=32, lr=3e-3, eval_every=25, eval_batch=128, target=0.9)
    torch.manual_seed(cfg.seed); m0 = AssocLM(task, 'delta', 32, 2, 2)
    held = task.batch(128, torch.Generator().manual_seed(10_000))
    with torch.no_grad(): l0, a0 = loss_and_metric(m0, held)
    model, met = train(cfg, progress=False, task=task)
    assert met['final_loss'] < 0.7 * float(l0), (float(l0), met['history'])
    assert met['final_metric'] > float(a0) + 0.2 and len(met['history']) >= 1

def test_early_stop_at_target():
    task = TokenTask(vocab=16, seq_len=12, pairs=(2, 2))
    _, met = train(TrainConfig(steps=100, batch=8, d_model=16, eval_every=5, eval_batch=16, target=-1.0), progress=False, task=task)
    assert met['steps'] == 5 and met['reached_target']

def test_checkpoint_round_trip_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path))
    assert cache_dir() == tmp_path / 'checkpoints'
    cfg = TrainConfig(task='vector', rule='gated-delta', steps=6, batch=4, d_model=16, eval_every=3, eval_batch=8)
    m1, met1 = get_model(cfg, progress=False); assert not met1['cached']
    path = cache_dir() / f'{cfg.key()}.pt'; assert path.exists()
    m2, cfg2, met2 = load_checkpoint(path); assert cfg2 == cfg and met2['steps'] == met1['steps']
    b = TASKS['vector'].batch(3, torch.Generator().manual_seed(1))
    with torch.no_grad(): torch.testing.assert_close(m1(b), m2(b))
    _, met3 = get_model(cfg, progress=False); assert met3['cached']
    mtime = path.stat().st_mtime_ns
    _, met4 = get_model(cfg, progress=False, retrain=True); assert not met4['cached'] and path.stat().st_mtime_ns >= mtime
    assert TrainConfig(seed=1).key() != TrainConfig(seed=2).key() and TrainConfig(lr=1e-3).key() != TrainConfig(lr=3e-3).key()

def test_lr_sweep_cached(tmp_path, monkeypatch):
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path))
    cfg = TrainConfig(task='vector', rule='hebbian', batch=4, d_model=16, eval_every=2, eval_batch=8)
    sw = lr_sweep(cfg, lrs=(1e-3, 1e-2), steps=4)
    assert sw['best'] in (1e-3, 1e-2) and set(sw['metric']) == {'0.001', '0.01'}
    files = list(cache_dir().glob('sweep-*.json')); assert len(files) == 1 and json.loads(files[0].read_text()) == sw
    assert lr_sweep(cfg, lrs=(1e-3, 1e-2), steps=4) == sw

def test_rebind_task_rebinds_keys_in_every_sequence():
    t = TASKS['rebind']; b = t.batch(64, torch.Generator().manual_seed(4)); x = b['x']
    for i in range(64):
        k = x[i][(x[i] > 0) & (x[i] < t.vocab // 2)]                  # key tokens: pairs and queries
        assert len(set(k.tolist())) == 3 and len(k) >= 4 + 3           # >= 4 pairs over 3 keys: some key is rebound
