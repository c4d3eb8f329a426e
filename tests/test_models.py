"Trained models: tasks, the model, the training loop (tiny, CPU), checkpoints and the cache."
import json, math
import pytest, torch
from pavlovattn.apps.models import (token_recall, TokenTask, VectorTask, AssocLM, loss_and_metric, TrainConfig, train, get_model,
                               save_checkpoint, load_checkpoint, checkpoint_path, lr_sweep, TASKS)
from pavlovattn.base.cache import root
from pavlovattn.model.families import FAMILIES

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
    assert checkpoint_path(TrainConfig()).parent == tmp_path / 'checkpoints'
    cfg = TrainConfig(task='vector', rule='gated-delta', steps=6, batch=4, d_model=16, eval_every=3, eval_batch=8)
    m1, met1 = get_model(cfg, progress=False); assert not met1['cached']
    path = checkpoint_path(cfg); assert path.exists()
    m2, cfg2, met2 = load_checkpoint(path); assert cfg2 == cfg and met2['steps'] == met1['steps']
    b = TASKS['vector'].batch(3, torch.Generator().manual_seed(1))
    with torch.no_grad(): torch.testing.assert_close(m1(b), m2(b))
    _, met3 = get_model(cfg, progress=False); assert met3['cached']
    mtime = path.stat().st_mtime_ns
    _, met4 = get_model(cfg, progress=False, retrain=True); assert not met4['cached'] and path.stat().st_mtime_ns >= mtime
    assert TrainConfig(seed=1).key() != TrainConfig(seed=2).key() and TrainConfig(lr=1e-3).key() != TrainConfig(lr=3e-3).key()

@pytest.mark.parametrize('rule', ['delta', 'hebbian', 'gated-delta'])
def test_loss_at_the_query_rows_is_the_full_outputs_loss(rule):
    "`loss_and_metric` runs the last block's MLP, the final norm and the head at the loss's positions only (`rows`): its loss, metric and every gradient equal those of the whole outputs masked afterwards (float64, 1e-12)."
    import torch.nn.functional as F
    for t in (TokenTask(vocab=32, seq_len=24, pairs=(4, 6)), VectorTask(seq_len=24)):
        torch.manual_seed(0); m = AssocLM(t, rule, d_model=16).double()
        b = {k: v.double() if v.is_floating_point() else v for k, v in t.batch(4, torch.Generator().manual_seed(3)).items()}
        l, a = loss_and_metric(m, b); g = torch.autograd.grad(l, list(m.parameters()), allow_unused=True)
        p = m(b)
        if t.kind == 'token':
            r = b['y'] != -100; lf, af = F.cross_entropy(p[r], b['y'][r]), (p[r].argmax(-1) == b['y'][r]).double().mean()
        else:
            r = b['mask']; e = (p[r] - b['target'][r]).square().sum(-1); lf = e.mean(); af = 1 - e.mean() / b['target'][r].square().sum(-1).mean()
        gf = torch.autograd.grad(lf, list(m.parameters()), allow_unused=True)
        assert 0 < r.sum() < r.numel() and abs(float((l - lf).detach())) <= 1e-12 * abs(float(lf.detach())) and abs(float(a) - float(af.detach())) <= 1e-12
        for x, y in zip(g, gf):
            assert (x is None) == (y is None) and (x is None or torch.allclose(x, y, rtol=1e-10, atol=1e-14))

def test_rows_must_be_a_boolean_mask_of_the_batch():
    t = VectorTask(seq_len=24); m = AssocLM(t, 'delta', d_model=16); b = t.batch(2, torch.Generator().manual_seed(0))
    for bad in (b['mask'].long(), b['mask'][:, :5], [True] * 24):
        with pytest.raises(ValueError, match=r'rows must be a boolean mask \[batch, time\] = \[2, 24\]'): m(b, rows=bad)

def test_a_family_file_is_keyed_by_its_content(tmp_path, monkeypatch):
    "A model of a family named by a file is cached under the checkpoints folder itself (its path's separators written as _, not as folders) and keyed by the file's content: the same file loads, an edited one trains again (it loaded the old family's model)."
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path / 'cache'))
    f = tmp_path / 'fams' / 'fam.py'; f.parent.mkdir(); f.write_text("from pavlovattn.model.families import Family, FAMILIES\nFAM = Family('from-file', 'a', 'b', 'S', step=FAMILIES['hebbian'].step)\n")
    from pavlovattn.model.families import register, Family, FAMILIES
    try:
        cfg = TrainConfig(**dict(TINY, rule=f'{f}:FAM')); key = cfg.key()
        assert checkpoint_path(cfg).parent == tmp_path / 'cache' / 'checkpoints' and '/' not in key
        assert not get_model(cfg, progress=False)[1]['cached'] and get_model(cfg, progress=False)[1]['cached']
        f.write_text(f.read_text().replace("FAMILIES['hebbian']", "FAMILIES['delta']"))
        assert cfg.key() != key and not get_model(cfg, progress=False)[1]['cached']
        assert TrainConfig(**TINY).key().startswith('vector-delta-s0-')                # a built-in name: as before
        register(Family('by-name', 'a', 'b', 'S', step=FAMILIES['hebbian'].step)); named = TrainConfig(**dict(TINY, rule='by-name')).key()
        register(Family('by-name', 'a', 'b', 'S', step=FAMILIES['delta'].step))    # a family registered by name: its definition keys it
        assert TrainConfig(**dict(TINY, rule='by-name')).key() != named
    finally:
        for n in ('from-file', 'by-name'): FAMILIES.pop(n, None)                     # later tests loop over the registered families

def test_a_family_registered_by_name_trains_here(tmp_path, monkeypatch, capfd):
    "Worker processes do not know a family registered by name in this process: `get_models` trains its models here, one line says so, and each model is the one `train` gives alone (a worker would fail: unknown rule)."
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path))
    from pavlovattn.apps.models import get_models
    from pavlovattn.model.families import register, Family
    try:
        register(Family('here-only', 'a', 'b', 'S', step=FAMILIES['hebbian'].step))
        cfgs = [TrainConfig(**dict(TINY, rule='here-only', seed=s)) for s in (0, 1)]
        got = get_models(cfgs, workers=2, progress=False)
        assert "'here-only' is a family registered in this process" in capfd.readouterr().err
        for c, (m, met) in zip(cfgs, got):
            alone, _ = train(c, progress=False)
            assert met['source'] == 'trained' and all(torch.equal(a, b) for a, b in zip(m.state_dict().values(), alone.state_dict().values()))
    finally: FAMILIES.pop('here-only', None)

def test_lr_sweep_cached(tmp_path, monkeypatch):
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path))
    cfg = TrainConfig(task='vector', rule='hebbian', batch=4, d_model=16, eval_every=2, eval_batch=8)
    sw = lr_sweep(cfg, lrs=(1e-3, 1e-2), steps=4)
    assert sw['best'] in (1e-3, 1e-2) and set(sw['metric']) == {'0.001', '0.01'}
    files = list(root('lr-sweeps').glob('*.json')); assert len(files) == 1
    assert {k: v for k, v in json.loads(files[0].read_text()).items() if k not in ('code_version', 'sha256')} == sw
    assert lr_sweep(cfg, lrs=(1e-3, 1e-2), steps=4) == sw

def test_rebind_task_rebinds_keys_in_every_sequence():
    t = TASKS['rebind']; b = t.batch(64, torch.Generator().manual_seed(4)); x = b['x']
    for i in range(64):
        k = x[i][(x[i] > 0) & (x[i] < t.vocab // 2)]                  # key tokens: pairs and queries
        assert len(set(k.tolist())) == 3 and len(k) >= 4 + 3           # >= 4 pairs over 3 keys: some key is rebound


# Robustness wave 3, reproducer 3: checkpoints are loaded with weights_only=True and checked (version, key, hash); a bad one is retrained.
TINY = dict(task='vector', rule='delta', steps=4, batch=4, d_model=16, n_layers=1, eval_every=2, eval_batch=8)

class _Evil:
    def __init__(self, marker): self.marker = marker
    def __reduce__(self): import os; return (os.system, (f'touch {self.marker}',))

def _rebuilt(capsys, call):
    "Run `call`; the one stderr line it printed (it must print exactly one)."
    capsys.readouterr(); out = call(); err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and 'unusable' in err and 'Traceback' not in err, err
    return out, err

def test_damaged_checkpoints_are_retrained_with_one_line(tmp_path, monkeypatch, capsys):
    import io, os
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path))
    cfg = TrainConfig(**TINY); b = TASKS['vector'].batch(3, torch.Generator().manual_seed(1))
    ref, _ = get_model(cfg, progress=False); path = checkpoint_path(cfg); good = path.read_bytes()
    with torch.no_grad(): want = ref(b)
    other = {}
    for name, c in (('seed', TrainConfig(**{**TINY, 'seed': 1})), ('width', TrainConfig(**{**TINY, 'd_model': 8}))):
        get_model(c, progress=False); other[name] = checkpoint_path(c).read_bytes()
    ck = torch.load(io.BytesIO(good), weights_only=True)
    def saved(**change):
        buf = io.BytesIO(); torch.save({**ck, **change}, buf); return buf.getvalue()
    from pavlovattn.apps.models import _ck_digest
    resealed = lambda **change: saved(**change, sha256=_ck_digest({**ck, **change}))   # changed, and its hash made to match
    big = max(ck['state'].values(), key=lambda t: t.numel()).contiguous().view(-1).view(torch.uint8).numpy().tobytes()
    at = good.find(big); assert at > 0
    flipped = bytearray(good); flipped[at + len(big) // 2] ^= 0x10
    evil = io.BytesIO(); marker = tmp_path / 'ran'; torch.save({'state': _Evil(marker)}, evil)
    cases = {'last byte dropped': (good[:-1], 'plain tensors'), 'empty': (b'', 'plain tensors'), 'flipped tensor byte': (bytes(flipped), 'hash'),
             'pickled code': (evil.getvalue(), 'plain tensors'), "another seed's file": (other['seed'], 'it holds'),
             "another width's file": (other['width'], 'it holds'), 'another version': (saved(code_version='pavlovattn 0.0.1'), 'made by'),
             'old format (no hash)': (saved(sha256=None, code_version=None), 'made by'),
             'tensors edited, hash kept': (saved(state={k: v + 1 for k, v in ck['state'].items()}), 'hash'),
             'key edited': (saved(key='x'), 'hash'), 'key matches, config not': (resealed(key='x'), 'filed under'),
             'metric edited': (saved(metrics={**ck['metrics'], 'final_metric': 1.0}), 'hash'),
             'older code version, resealed': (resealed(code_version='checkpoint v0; pavlovattn cache 3'), 'made by')}
    for name, (data, why) in cases.items():
        path.write_bytes(data)
        (model, met), err = _rebuilt(capsys, lambda: get_model(cfg, progress=False))
        assert not met['cached'] and why in err and 'weights_only' not in err, (name, err)   # issue 49: never torch's advice to unpickle it
        with torch.no_grad(): torch.testing.assert_close(model(b), want, rtol=0, atol=0)
        assert get_model(cfg, progress=False)[1]['cached'], name            # rebuilt: the next call loads it
    assert not marker.exists()                                             # the pickled call never ran
    path.write_bytes(other['seed'])
    with pytest.raises(ValueError, match='it holds'): load_checkpoint(path, cfg=cfg)
    assert [p.name for p in path.parent.iterdir() if p.name.startswith('.')] == []   # no temporary file left

# Reproducer 4: the JSON sweep cache is written atomically and checked when read; a bad entry is rebuilt with one line.
def test_damaged_sweep_cache_is_rebuilt(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv('PAVLOVATTN_CACHE', str(tmp_path))
    from pavlovattn.base.cache import code_version, sealed as _sealed
    sealed = lambda o: _sealed(o, code_version('lr-sweep')); CODE_VERSION = code_version('lr-sweep')
    cfg = TrainConfig(**TINY); kw = dict(lrs=(1e-3, 1e-2), steps=2)
    sw = lr_sweep(cfg, **kw); (path,) = root('lr-sweeps').glob('*.json')
    cases = {'empty': (b'', 'Expecting value'), 'truncated': (path.read_bytes()[:20], 'line 1'), '{}': (b'{}', 'made by'),
             'no metric': (json.dumps(sealed(dict(best=0.01))).encode(), 'fields'),
             'best 1e9': (json.dumps(sealed(dict(best=1e9, metric=sw['metric']))).encode(), 'not one of the rates'),
             'best not the best': (json.dumps(sealed(dict(best=[x for x in (1e-3, 1e-2) if x != sw['best']][0], metric=sw['metric']))).encode(), 'not the rate of the best'),
             'NaN metric': (json.dumps(dict(best=sw['best'], metric={'0.001': float('nan'), '0.01': 0.1}, code_version=CODE_VERSION)).encode(), 'non-finite'),
             'metric 7': (json.dumps(sealed(dict(best=0.01, metric={'0.001': 0.1, '0.01': 7.0}))).encode(), 'outside'),
             'other rates': (json.dumps(sealed(dict(best=0.01, metric={'0.01': 0.1}))).encode(), 'rates')}
    for name, (data, why) in cases.items():
        path.write_bytes(data)
        out, err = _rebuilt(capsys, lambda: lr_sweep(cfg, **kw))
        assert out == sw and why in err, (name, err)
        assert lr_sweep(cfg, **kw) == sw and capsys.readouterr().err == ''
    with pytest.raises(ValueError, match='positive finite'): lr_sweep(cfg, lrs=(1e9, float('nan')), steps=2)

@pytest.mark.parametrize('rule', ['hebbian', 'decay', 'delta', 'gated-delta', 'channel-gate', 'softmax', 'gla', 'trace', 'normalized', 'vhw'])
def test_generate_equals_rerunning_the_prefix(rule):
    "Greedy generation through each mixer's recurrent step gives the tokens that re-running the whole prefix gives, for every family."
    import torch
    from pavlovattn.apps.models import AssocLM, TokenTask
    m = AssocLM(TokenTask(vocab=32, seq_len=24, pairs=(4, 6)), rule, d_model=16).eval()
    x = torch.randint(0, 32, (3, 6), generator=torch.Generator().manual_seed(1))
    y, ref = m.generate(x, 6), x
    with torch.no_grad():
        for _ in range(6): ref = torch.cat([ref, m({'x': ref})[:, -1].argmax(-1, keepdim=True)], 1)
    assert torch.equal(y, ref) and torch.equal(m.generate(x, 0), x)
    with pytest.raises(ValueError, match='integer tokens'): m.generate(x.float(), 2)

@pytest.mark.parametrize('rule', ['delta', 'gated-delta', 'softmax'])
def test_seeded_sampling_equals_rerunning_the_prefix(rule):
    "Sampling at a temperature with a seeded generator (float64) gives the tokens that re-running the prefix and sampling with the same seed gives; bad n, temperature or tokens are refused by name (was: n = -3 returned one token)."
    import torch
    from pavlovattn.apps.models import AssocLM, TokenTask
    m = AssocLM(TokenTask(vocab=32, seq_len=24, pairs=(4, 6)), rule, d_model=16).eval().double()
    x = torch.randint(0, 32, (3, 6), generator=torch.Generator().manual_seed(1))
    y, ref, g = m.generate(x.tolist(), 8, temperature=1.5, generator=torch.Generator().manual_seed(2)), x, torch.Generator().manual_seed(2)
    with torch.no_grad():
        for _ in range(8): ref = torch.cat([ref, torch.multinomial(torch.softmax(m({'x': ref})[:, -1] / 1.5, -1), 1, generator=g)], 1)
    assert torch.equal(y, ref) and not torch.equal(y, m.generate(x, 8)), rule          # sampled, and not the greedy tokens
    for kw, msg in ((dict(n=-3), 'n must be a whole number >= 0'), (dict(n=2.0), 'n must be'), (dict(n=2, temperature=-1.0), 'temperature must be'),
                    (dict(n=2, temperature=float('nan')), 'temperature must be')):
        with pytest.raises(ValueError, match=msg): m.generate(x, **kw)
    with pytest.raises(ValueError, match='tokens outside the vocabulary 0..31'): m.generate(x + 26, 2)


# The token-task generator draws a whole batch at once; its previous per-sequence loop is kept here as the reference. The random
# stream differs (one draw per tensor, not per sequence), so the distributions are compared: two-sample chi-square tests on every
# statistic the task is defined by, on fixed seeds, with a check that the same tests reject a generator with another query-gap law.
def _loop_token_recall(batch, vocab, seq_len, pairs, distinct=None, alpha=0.01, gen=None):
    "The previous generator of `token_recall` (one sequence at a time), the reference of the distribution tests."
    from pavlovattn.apps.models import _power_slots
    P = int(torch.randint(pairs[0], pairs[1] + 1, (1,), generator=gen)); D = P if distinct is None else min(distinct, P); half = vocab // 2
    x = torch.zeros(batch, seq_len, dtype=torch.long); y = torch.full((batch, seq_len), -100, dtype=torch.long)
    for b in range(batch):
        keyset = torch.randperm(half - 1, generator=gen)[:D] + 1
        keys = keyset if D == P else keyset[torch.cat([torch.arange(D), torch.randint(0, D, (P - D,), generator=gen)])[torch.randperm(P, generator=gen)]]
        vals = torch.randint(half, vocab, (P,), generator=gen)
        x[b, 0:2 * P:2], x[b, 1:2 * P:2] = keys, vals
        last = {int(k): int(v) for k, v in zip(keys, vals)}
        qk = torch.tensor(list(last)); qk = qk[torch.randperm(len(qk), generator=gen)]
        n_slots = (seq_len - 2 * P) // 2; nq = min(len(qk), n_slots)
        for k, s in zip(qk[:nq].tolist(), _power_slots(n_slots, nq, alpha, gen)[0].tolist()):
            p = 2 * P + 2 * s; x[b, p], x[b, p + 1], y[b, p] = k, last[k], last[k]
    return dict(x=x, y=y)

def _stats(b, P):
    "Statistics of a token-recall batch with P pairs (within a sequence: draws without replacement or independent ones; a repeated key once)."
    x, y = b['x'], b['y']; keys, vals = x[:, 0:2 * P:2], x[:, 1:2 * P:2]; q = (y != -100).nonzero()
    qk = x[q[:, 0], q[:, 1]]; hit = keys[q[:, 0]] == qk[:, None]                         # the pairs binding each queried key
    lastp = (hit * torch.arange(1, P + 1)).argmax(-1)
    mult = torch.sort((keys[:, :, None] == keys[:, None, :]).sum(-1), -1).values          # each pair's key multiplicity, sorted
    return {'query position': q[:, 1], 'queries per sequence': (y != -100).sum(1), 'first key id': keys[:, 0], 'value id': vals.flatten(),
            'queried key id': qk, 'last binding of a queried key': lastp, 'bindings of a queried key': hit.sum(-1),
            'multiplicities': torch.tensor([hash(tuple(r)) % 1_000_003 for r in mult.tolist()]),
            'first slot x queried key order': q[:, 1] * 64 + (keys[q[:, 0]] == qk[:, None]).float().argmax(-1)}

def _chi2_p(a, b, min_count=5):
    "p-value of the two-sample chi-square test that the integer samples `a` and `b` come from one distribution (rare cells pooled)."
    cats = torch.unique(torch.cat([a, b])); ca = (a[:, None] == cats).sum(0).double(); cb = (b[:, None] == cats).sum(0).double()
    keep = (ca + cb) >= min_count; ca = torch.cat([ca[keep], ca[~keep].sum()[None]]); cb = torch.cat([cb[keep], cb[~keep].sum()[None]])
    ok = (ca + cb) > 0; ca, cb = ca[ok], cb[ok]
    if len(ca) < 2: return 1.0
    na, nb = ca.sum(), cb.sum(); stat = ((ca * (nb / na).sqrt() - cb * (na / nb).sqrt()) ** 2 / (ca + cb)).sum()
    return float(torch.special.gammaincc(torch.tensor((len(ca) - 1) / 2, dtype=torch.float64), stat / 2))

_TOKEN_CASES = [dict(vocab=32, seq_len=32, pairs=(6, 6), distinct=3),          # the rebind task's shape (its P fixed, so statistics pool)
                dict(vocab=64, seq_len=48, pairs=(8, 8)),                      # MQAR: every key once
                dict(vocab=64, seq_len=64, pairs=(12, 12), distinct=4)]        # the repeated task's shape

@pytest.mark.parametrize('case', _TOKEN_CASES, ids=['rebind', 'mqar', 'repeated'])
def test_vectorised_token_generator_has_the_loops_distribution(case):
    P = case['pairs'][0]
    new = _stats(token_recall(3000, gen=torch.Generator().manual_seed(11), **case), P)
    old = _stats(_loop_token_recall(3000, gen=torch.Generator().manual_seed(12), **case), P)
    ps = {k: _chi2_p(new[k], old[k]) for k in new}
    assert min(ps.values()) > 1e-3 / len(ps), ps                             # Bonferroni over the statistics
    shifted = _stats(_loop_token_recall(3000, alpha=0.5, gen=torch.Generator().manual_seed(13), **case), P)
    assert _chi2_p(new['query position'], shifted['query position']) < 1e-6 # the same test tells another gap law apart

def test_vectorised_token_generator_draws_pairs_per_batch_like_the_loop():
    for s in range(20):                                                      # the batch's pair count is the first draw of both
        a = token_recall(2, vocab=32, seq_len=32, pairs=(4, 8), distinct=3, gen=torch.Generator().manual_seed(s))
        b = _loop_token_recall(2, vocab=32, seq_len=32, pairs=(4, 8), distinct=3, gen=torch.Generator().manual_seed(s))
        assert ((a['x'] > 0).sum(1) == (b['x'] > 0).sum(1)).all()             # same pairs and queries per sequence

def test_token_checkpoints_are_keyed_by_the_generator_version():
    import hashlib, dataclasses
    plain = lambda c: hashlib.sha1(json.dumps({k: v for k, v in dataclasses.asdict(c).items() if k not in ('conv_size', 'out_norm')},
                                              sort_keys=True).encode()).hexdigest()[:10]
    assert TASKS['rebind'].generator == 2 and not TrainConfig(task='rebind').key().endswith(plain(TrainConfig(task='rebind')))  # retrained
    assert TrainConfig(task='vector').key().endswith(plain(TrainConfig(task='vector')))     # the vector task's keys are as before

@pytest.mark.parametrize('rule', ['delta', 'gla', 'hebbian'])
def test_a_model_runs_recurs_choice_on_the_cpu_and_the_chunked_form_elsewhere(rule):
    "On the CPU each mixer runs `recur(algorithm='auto')` (the compiled loop where `choose_algorithm` takes it), the same model as the chunked form to float32 rounding, gradients too; `_place` leaves the chunked form for any other device."
    torch.manual_seed(0); m = AssocLM(TASKS['vector'], rule, d_model=32)
    b = TASKS['vector'].batch(4, torch.Generator().manual_seed(1))
    def run(chunked):
        m.zero_grad()
        if chunked:
            for x in m.mix: x.algorithm = 'chunked'
            h = m.embed(b)
            for x, n1, n2, f in zip(m.mix, m.n1, m.n2, m.mlp): h = h + x(n1(h)); h = h + f(n2(h))
            y = m.head(m.norm(h))
        else: y = m(b)
        y.square().sum().backward()
        return [y.detach()] + [p.grad.clone() for p in m.parameters() if p.grad is not None]
    auto, ref = run(False), run(True)
    assert m._place(torch.zeros(1, device='meta')) is not None and all(x.algorithm == 'chunked' for x in m.mix)
    m(b); assert all(x.algorithm == 'auto' for x in m.mix)
    for a, c in zip(auto, ref): assert (a - c).abs().max() <= 1e-4 * (1 + c.abs().max())
