"""Issue 50: the trained tier's models are trained several at once (`models.get_models`: the missing members of a set, each in a
worker process of its own) and every member must be the model `train` gives alone — the same seed, data stream, clipping,
schedule, evaluation and early stop — bit for bit (the same arithmetic at one thread);
caching stays per model: a member loads alone, and a set that stopped part way trains only its missing members. Equal weights
give equal probe scores. Each test starts a pool of worker processes (several seconds): `make test` runs the models page's check
(nbs/12_models.ipynb, a partial set of three tiny models, bit for bit); these run with --slow."""
import os
from dataclasses import replace
from unittest import mock
import pytest, torch
from pavlovattn.apps.models import TrainConfig, train, get_model, get_models, load_checkpoint, checkpoint_path, lr_sweep

# the quick size's model (d_model 32, 2 layers), a few steps (a worker pool starts in a few seconds: one per test)
QUICK = TrainConfig(task='vector', rule='delta', lr=1e-2, steps=6, batch=8, d_model=32, eval_every=3, eval_batch=16, warmup=3)

def _same(a, b): return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))

@pytest.mark.slow                  # make test runs the models page's own check of the same (a partial set of three, bit for bit)
def test_members_trained_together_equal_each_trained_alone_and_a_partial_set_resumes(tmp_path):
    cfgs = [replace(QUICK, seed=0), replace(QUICK, seed=1, rule='hebbian'), replace(QUICK, seed=2, lr=3e-3)]
    with mock.patch.dict(os.environ, PAVLOVATTN_CACHE=str(tmp_path)):
        _, m0 = get_model(cfgs[0], progress=False)                         # trained before: the set is partial
        got = get_models(cfgs + cfgs[:1], progress=False, workers=2)          # a repeat is trained once
        assert [m['source'] for _, m in got] == ['loaded', 'trained', 'trained', 'loaded'] and got[0][1]['sha256'] == m0['sha256']
        for c, (model, met) in zip(cfgs, got):
            alone, ma = train(c, progress=False)
            assert _same(alone, model) and _same(alone, load_checkpoint(checkpoint_path(c), cfg=c)[0])   # loads alone, too
            assert (met['steps'], met['final_metric'], met['history']) == (ma['steps'], ma['final_metric'], ma['history'])
        again = get_models(cfgs, progress=False, workers=2)                   # nothing left to train
        assert [m['source'] for _, m in again] == ['loaded'] * 3 and [m['sha256'] for _, m in again] == [m['sha256'] for _, m in got[:3]]

@pytest.mark.slow
def test_the_sweep_runs_its_rates_at_once_with_the_metrics_of_runs_alone(tmp_path):
    with mock.patch.dict(os.environ, PAVLOVATTN_CACHE=str(tmp_path)):
        sw = lr_sweep(QUICK, lrs=(3e-3, 1e-2), steps=6)
    for lr in (3e-3, 1e-2):
        _, m = train(replace(QUICK, seed=1000, steps=6, lr=lr, target=2.0), progress=False)
        assert sw['metric'][f'{lr:g}'] == m['final_metric']

def test_models_are_probed_by_the_workers_that_trained_them(tmp_path):
    "The trained tier's protocols probe each model in the worker process that trained it (`get_models(..., after=...)`): the cached scores are the checkpoint's (its hash), equal to the same probe run here on the loaded model, and are what the family's measurement then reads."
    from pavlovattn.apps.probes import _probed, _probe_key, measure_model, _probe_check
    from pavlovattn.base.cache import entry, read_json
    cfgs = [replace(QUICK, seed=0), replace(QUICK, seed=1, rule='hebbian')]
    with mock.patch.dict(os.environ, PAVLOVATTN_CACHE=str(tmp_path)):
        get_models(cfgs, progress=False, workers=2, load=False, after=('pavlovattn.apps.probes:_probed', dict(n=8)))
        for c in cfgs:
            model, met = get_model(c, progress=False)
            stored = read_json(entry('probes', _probe_key(c, 8)), what='probe results', kind='probes')
            assert stored['model'] == met['sha256']                            # measured on this checkpoint, in the worker
            here = measure_model(model, 8)
            assert _probed(model, c, met, 8) == _probe_check({k: v for k, v in stored.items() if k != 'model'})
            assert all(abs(here[k] - stored[k]) <= 1e-6 for k in ('s_acq', 'BI', 'OI')) and here['s_acq'] != 0

def test_the_costliest_members_start_first_and_results_come_back_in_order(tmp_path):
    "`_train_all` submits the members costliest first (`_cost`: a set's last members are short, so its workers end together) and returns each member's result at its own place: here the cheap one is given first."
    from pavlovattn.apps.models import _train_all, _cost
    cfgs = [replace(QUICK, seed=3, steps=3, eval_every=3), replace(QUICK, seed=4, steps=9, rule='kalman', eval_every=9)]
    assert _cost(cfgs[1]) > 3 * _cost(cfgs[0])                                  # a reference-loop family, three times the steps
    with mock.patch.dict(os.environ, PAVLOVATTN_CACHE=str(tmp_path)):
        got = _train_all(cfgs, False, False, False, 2)
    for c, r in zip(cfgs, got):
        _, m = train(c, progress=False)
        assert r['source'] == 'trained' and r['final_metric'] == m['final_metric']
