"""The compiled kernels against the tensor loop and numpy: seeded shuffles, the index/summary form of `recur`, and
`simulate` with either algorithm. Exhaustive over shapes and families; the pages keep one short example each."""
import numpy as np
import pytest
import torch
from pavlovattn.model import kernels
from pavlovattn.model.core import recur, summarize, SCALAR_GATE_RULES, RULES, FAMILIES, UnstableRateError
from pavlovattn.design.designs import simulate

needs_numba = pytest.mark.skipif(not kernels.available(), reason='numba is not installed')

@needs_numba
@pytest.mark.parametrize('L,S', [(1, 5), (2, 1), (7, 3), (200, 300), (33, 5000)])
def test_shuffle_engines_identical(L, S):
    base = np.arange(L, dtype=np.int16) % 3
    keys = kernels.stream_keys(11, (2, 5), S)
    a = kernels.shuffle_rows(base, keys, engine='numba'); b = kernels.shuffle_rows(base, keys, engine='numpy')
    assert (a == b).all()
    assert (np.sort(a, 1) == np.sort(base)).all()

@needs_numba
def test_shuffle_into_a_strided_slice():
    out = np.zeros((400, 30), dtype=np.int16)
    keys = kernels.stream_keys(0, (1,), 400)
    kernels.shuffle_rows(np.arange(10, dtype=np.int16), keys, out=out[:, 10:20], engine='numba')
    assert (out[:, :10] == 0).all() and (out[:, 20:] == 0).all()
    assert (out[:, 10:20] == kernels.shuffle_rows(np.arange(10, dtype=np.int16), keys, engine='numpy')).all()

def rejected_draws(key, L):
    "How many of the L-1 draws of the stream `key` Lemire's method rejects at least once (computed apart from the kernels)."
    i = np.arange(1, L, dtype=np.uint64)
    z = kernels.mix64(np.uint64(key) + ((i - np.uint64(1)) | np.uint64(1)) * kernels.GOLDEN)   # an odd i and the even i after it share a hash
    x = np.where(i % np.uint64(2) == 1, z >> np.uint64(32), z & np.uint64(0xFFFFFFFF))
    s = i + np.uint64(1)
    return int((((x * s) & np.uint64(0xFFFFFFFF)) < (np.uint64(2**32) % s)).sum())

@needs_numba
def test_shuffle_rejection_path_engines_identical():
    L, keys = 70_000, kernels.stream_keys(5, (1,), 6)             # long rows: a rejected draw is likely (p ~ L^2 / 2^33 per row)
    assert sum(rejected_draws(k, L) for k in keys.tolist()) > 0   # the redraw branch does run
    base = np.arange(L, dtype=np.int32)
    a = kernels.shuffle_rows(base, keys, engine='numba'); b = kernels.shuffle_rows(base, keys, engine='numpy')
    assert (a == b).all() and (np.sort(a, 1) == base).all()

def test_shuffle_is_uniform_over_positions():
    rows = kernels.shuffle_rows(np.arange(5), kernels.stream_keys(4, (0,), 50_000))
    freq = np.stack([(rows == i).mean(0) for i in range(5)])           # P(item i at position j) = 1/5
    assert np.abs(freq - 0.2).max() < 5 * np.sqrt(0.2 * 0.8 / 50_000)

def test_stream_keys_prefix_stable_and_distinct():
    k = kernels.stream_keys(-3, (0, 1, 2), 1000)
    assert (k[:10] == kernels.stream_keys(-3, (0, 1, 2), 10)).all()
    assert len(set(k.tolist())) == 1000

def _tables(seed, N=4, H=2, dk=5, dv=3, C=3):
    g = torch.Generator().manual_seed(seed)
    K = torch.nn.functional.normalize(torch.randn(N, H, dk, generator=g, dtype=torch.float64), dim=-1) * 1.2
    V = torch.randn(N, H, dv, generator=g, dtype=torch.float64)
    b = torch.rand(N, H, generator=g, dtype=torch.float64) * 0.9
    P = torch.randn(C, dk, generator=g, dtype=torch.float64)
    return K, V, b, P

@needs_numba
@pytest.mark.parametrize('rule', SCALAR_GATE_RULES)
@pytest.mark.parametrize('B,T', [(1, 1), (1, 30), (7, 0), (64, 50), (501, 17)])
def test_summary_algorithms_agree(rule, B, T):
    K, V, b, P = _tables(B * 100 + T)
    ix = torch.randint(0, K.shape[0], (B, T), generator=torch.Generator().manual_seed(T))
    S0 = torch.randn(B, 2, 3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(B)) / 4
    for probes, s0 in ((P, S0), (None, None)):
        a, c = (summarize(K, V, rule=rule, beta=b, **FAMILIES[rule].kwargs(gamma=0.9), S0=s0, probes=probes, index=ix, algorithm=e)
                for e in ('sequential', 'numba'))
        for x, y in zip(a, c):
            if x is None: assert y is None; continue
            torch.testing.assert_close(x, y, atol=1e-12, rtol=0)

@needs_numba
@pytest.mark.parametrize('dtype', [torch.int16, torch.int32, torch.int64])
def test_summary_index_dtypes(dtype):
    K, V, b, P = _tables(1)
    ix = torch.randint(0, 4, (20, 15))
    ref = summarize(K, V, beta=b, probes=P, index=ix, algorithm='sequential')
    got = summarize(K, V, beta=b, probes=P, index=ix.to(dtype), algorithm='numba')
    torch.testing.assert_close(got.probe_mean, ref.probe_mean, atol=1e-12, rtol=0)

def test_summary_of_identical_sequences_has_zero_sd():
    K, V, b, P = _tables(2)
    ix = torch.randint(0, 4, (1, 40)).expand(9, 40)
    algs = ('sequential', 'chunked', 'numba') if kernels.available() else ('sequential', 'chunked')
    for e in algs:
        assert summarize(K, V, beta=b, probes=P, index=ix, algorithm=e).probe_sd.max() == 0

def test_index_form_refusals():
    K, V, b, P = _tables(3)
    ix = torch.randint(0, 4, (5, 6))
    with pytest.raises(ValueError, match=r'index values must lie in 0\.\.3'): summarize(K, V, index=ix - 1)
    with pytest.raises(ValueError, match='integer tensor'): recur(K, V, index=ix.double())
    with pytest.raises(TypeError): summarize(K[None], V[None])                     # the index is required
    with pytest.raises(ValueError, match="algorithm='numba' cannot run this: channel-gate is not one of"):
        summarize(K, V, rule='channel-gate', index=ix, algorithm='numba')
    with pytest.raises(ValueError, match="algorithm must be one of auto, reference, sequential, chunked, numba; got 'jax'"): summarize(K, V, index=ix, algorithm='jax')
    with pytest.raises(TypeError, match="unexpected keyword argument 'engine'"): summarize(K, V, index=ix, engine='numba')   # the old name is not ignored
    with pytest.raises(UnstableRateError, match='for index value 0, head 0'): summarize(K * 3, V, beta=1.0, index=ix)
    with pytest.raises(ValueError, match='at least one sequence'): summarize(K, V, index=ix[:0])

DESIGNS = ['a: !12A+/12AB-/4#B | !6AC-/6C+ | 3#C ; b: 8B+ | !4AB-/4(ctx)+/2#A(ctx)', '!30A+/30AX- | #X/#A',
           'exp: 10A+ | 10AB+ | #B ; ctrl: 10C+ | 10AB+ | #B']

@needs_numba
@pytest.mark.parametrize('rule', SCALAR_GATE_RULES)
@pytest.mark.parametrize('design', DESIGNS)
def test_simulate_algorithms_agree(rule, design):
    kw = dict(rule=rule, beta=0.3, **FAMILIES[rule].kwargs(gamma=0.9), subjects=300, seed=5, keys='random', dk=7, overlap=0.2, salience={'A': 0.7})
    a, c = simulate(design, algorithm='sequential', **kw), simulate(design, algorithm='numba', **kw)
    for g in a.runs:
        for key in ('mean', 'sd', 'probe_mean', 'probe_sd'):
            torch.testing.assert_close(a.runs[g][key], c.runs[g][key], atol=1e-12, rtol=0)
        assert (a.orders(g) == c.orders(g)).all()
    assert a.to_json()['groups'].keys() == c.to_json()['groups'].keys()

def test_simulate_refuses_an_algorithm_the_family_lacks():
    "simulate takes its algorithm from the one registry: one that cannot compute a family's summaries is refused, naming those that can."
    with pytest.raises(ValueError, match="algorithm 'numba' cannot simulate the vhw family; valid: auto, reference, sequential, chunked"):
        simulate('10A+', rule='vhw', algorithm='numba')
    with pytest.raises(ValueError, match="algorithm 'kernel' cannot simulate the delta family; valid: auto, reference, sequential, chunked, numba"):
        simulate('10A+', algorithm='kernel')
    a, c = (simulate(DESIGNS[2], rule='vhw', subjects=5, seed=2, algorithm=x) for x in ('sequential', 'chunked'))
    for g in a.runs: torch.testing.assert_close(a.runs[g]['mean'], c.runs[g]['mean'], atol=1e-12, rtol=0)

def test_subject_orders_do_not_depend_on_the_number_of_subjects():
    d = 'g1: !10A+/10B- | !5AB+/5C- ; g2: !3A+/3B+'
    small, big = simulate(d, subjects=7, seed=3), simulate(d, subjects=3000, seed=3)
    for g in small.runs: assert (small.orders(g) == big.orders(g)[:7]).all()

@pytest.mark.parametrize('rule', RULES)
def test_per_subject_strengths_match_the_summary(rule):
    r = simulate(DESIGNS[0], rule=rule, beta=0.2, subjects=40, seed=1, per_subject=True)
    for g, x in r.runs.items():
        torch.testing.assert_close(x['mean'], x['V'].mean(0), atol=1e-12, rtol=0)
        torch.testing.assert_close(x['sd'], x['V'].std(0), atol=1e-12, rtol=0)

@pytest.mark.parametrize('algorithm', ['sequential', 'numba'])
def test_summary_overflow_is_refused_not_propagated(algorithm):
    if algorithm == 'numba' and not kernels.available(): pytest.skip('numba is not installed')
    from pavlovattn.model.core import NonFiniteError
    K = torch.full((2, 1, 3), 1e150, dtype=torch.float64); V = torch.full((2, 1, 1), 1e200, dtype=torch.float64)
    ix = torch.randint(0, 2, (4, 30))
    with pytest.raises(NonFiniteError, match='hebbian recurrence produced NaN or inf'):
        summarize(K, V, rule='hebbian', index=ix, probes=torch.eye(3, dtype=torch.float64), algorithm=algorithm)

# ---- issue 14: determinism across thread counts, bounded memory, orders keyed by the group's name ----

@needs_numba
def test_summary_is_bit_identical_for_any_number_of_threads():
    import numba
    K, V, b, P = _tables(9)
    ix = torch.randint(0, 4, (5000, 60), generator=torch.Generator().manual_seed(1))
    runs, old = [], numba.get_num_threads()
    try:
        for w in sorted({1, 2, numba.config.NUMBA_NUM_THREADS} & set(range(1, numba.config.NUMBA_NUM_THREADS + 1))):
            numba.set_num_threads(w)                                     # prange's threads
            runs.append(summarize(K, V, rule='gated-delta', beta=b, gamma=0.9, probes=P, index=ix, algorithm='numba'))
    finally: numba.set_num_threads(old)
    for r in runs[1:]:
        for x, y in zip(runs[0], r):
            if x is not None: assert torch.equal(x if torch.is_tensor(x) else x.values, y if torch.is_tensor(y) else y.values)

@needs_numba
def test_numba_num_threads_does_not_change_the_last_bit():
    import json, os, subprocess, sys
    code = ("import json; from pavlovattn.design.designs import simulate; r = simulate('a: !40A+/40AB-/20#B | !30B- ; b: !25A+/25C+', rule='delta', "
            "beta=0.2, subjects=20000, seed=3, algorithm='numba'); print(json.dumps({g: [x['mean'].tolist(), x['sd'].tolist()] for g, x in r.runs.items()}))")
    out = [subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300, env=dict(os.environ, NUMBA_NUM_THREADS=str(n)))
           for n in (1, 2)]
    assert all(o.returncode == 0 for o in out), [o.stderr for o in out]
    assert json.loads(out[0].stdout) == json.loads(out[1].stdout)     # float64 printed exactly (repr round-trips)

def test_stream_keys_of_a_block_are_the_keys_of_those_subjects():
    assert (kernels.stream_keys(5, (1, 2), 40)[17:29] == kernels.stream_keys(5, (1, 2), 12, first=17)).all()

def test_orders_are_keyed_by_the_group_name():
    alone, after = simulate('a: !10A+/10B-', subjects=20, seed=4), simulate('z: 3C+ ; a: !10A+/10B-', subjects=20, seed=4)
    assert (alone.orders('a') == after.orders('a')).all()
    assert (simulate('b: !10A+/10B-', subjects=20, seed=4).orders('b') != alone.orders('a')).any()   # another name, other orders

@pytest.mark.parametrize('rule', RULES)
def test_blocks_of_subjects_merge_to_the_same_summary(rule, monkeypatch):
    "Subjects simulated block by block (bounded memory): the merged mean and sd equal the per-subject strengths' mean and sd."
    from pavlovattn.design import designs; from pavlovattn.base import machine
    kw = dict(rule=rule, beta=0.2, subjects=300, seed=2, per_subject=True)
    one = simulate(DESIGNS[0], **kw)
    monkeypatch.setattr(machine, 'BLOCK_BYTES', 20_000)                  # many blocks
    many = simulate(DESIGNS[0], **kw)
    assert len(designs._blocks(300, designs._subject_bytes(31, 4, 8, 4, True, True))) > 5
    for g, x in many.runs.items():
        assert torch.equal(x['V'], one.runs[g]['V']) and torch.equal(x['order'], one.runs[g]['order'])
        for key in ('mean', 'sd', 'probe_mean', 'probe_sd'):
            torch.testing.assert_close(x[key], one.runs[g][key], atol=1e-12, rtol=0)
        torch.testing.assert_close(x['mean'], x['V'].mean(0), atol=1e-12, rtol=0)
        torch.testing.assert_close(x['sd'], x['V'].std(0), atol=1e-12, rtol=0)
    assert many.table.drop(columns=['mean', 'sd']).equals(one.table.drop(columns=['mean', 'sd']))

def test_identical_subjects_in_many_blocks_have_sd_exactly_zero(monkeypatch):
    from pavlovattn.design import designs; from pavlovattn.base import machine
    monkeypatch.setattr(machine, 'BLOCK_BYTES', 5_000)
    r = simulate('10A+ | 5AB- | #B', subjects=100, beta=0.3)
    assert all(float(x['sd'].abs().max()) == 0 and float(x['probe_sd'].abs().max()) == 0 for x in r.runs.values())

def test_simulate_integers_and_sizes():
    from pavlovattn.design.designs import SizeError
    assert simulate('10A+', subjects=np.int64(5), seed=np.int32(2), dk=np.int64(3)).params['subjects'] == 5
    for bad, msg in ((dict(seed=1.7), 'seed must be an integer; got 1.7'), (dict(subjects=True), 'subjects must be a positive integer'),
                     (dict(subjects=2.0), 'subjects must be a positive integer'), (dict(dk=2.5), 'dk must be an integer')):
        with pytest.raises(ValueError, match=msg.replace('(', r'\(')): simulate('10A+', **bad)
    with pytest.raises(SizeError, match='this run needs about .* of memory'): simulate('10A+', dk=10**12)
    with pytest.raises(SizeError, match='subject-trials is more than one run simulates'): simulate('10A+', subjects=10**12)
    with pytest.raises(ValueError, match="device 'meta' cannot run a simulation"): simulate('10A+', device='meta')
    with pytest.raises(ValueError, match='salience of A given twice'): simulate('10A+', salience={'A': 1, '(A)': 0.5})

def test_torch_batch_reductions_within_the_documented_bound_across_threads():
    "The tensor loop's summaries reduce over subjects with torch: across torch thread counts they agree within n * 2^-53 of the largest value (the designs page's bound; bit-identical on the machines we tried)."
    from pavlovattn.model.core import batch_mean_sd
    x = torch.randn(200_000, 40, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    old, res = torch.get_num_threads(), []
    try:
        for n in (1, 2, 4):
            torch.set_num_threads(n); res.append(batch_mean_sd(x))
    finally: torch.set_num_threads(old)
    bound = x.shape[0] * 2.0**-53 * float(x.abs().max())
    for m, s in res[1:]:
        assert float((m - res[0][0]).abs().max()) <= bound and float((s - res[0][1]).abs().max()) <= bound

def _conv_reference(xx, w):
    "The definition, z[b, t] = sum_i w[i] xx[b, t + i], as a sum of shifted arrays (numpy)."
    K, T = w.shape[0], xx.shape[1] - w.shape[0] + 1
    return sum(w[i] * xx[:, i:i + T] for i in range(K))

@needs_numba
@pytest.mark.parametrize('B,T,C,K', [(1, 1, 1, 1), (2, 1, 3, 4), (3, 5, 2, 1), (2, 40, 64, 4), (1, 7, 5, 7), (4, 17, 3, 2)])
def test_causal_conv_and_its_gradients_against_the_definition(B, T, C, K):
    rng = np.random.default_rng(B * 100 + T * 10 + K)
    xx, w, dz = rng.normal(size=(B, T + K - 1, C)), rng.normal(size=(K, C)), rng.normal(size=(B, T, C))
    np.testing.assert_allclose(kernels.causal_conv(xx, w), _conv_reference(xx, w), rtol=0, atol=1e-12)
    dxx, dw = kernels.causal_conv_grad(xx, w, dz)
    want = np.zeros_like(xx)
    for i in range(K): want[:, i:i + T] += w[i] * dz                      # each output reads K inputs
    np.testing.assert_allclose(dxx, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dw, np.stack([(dz * xx[:, i:i + T]).sum((0, 1)) for i in range(K)]), rtol=0, atol=1e-11)
    z32 = kernels.causal_conv(xx.astype(np.float32), w.astype(np.float32))   # float32: the same within its rounding
    assert z32.dtype == np.float32 and np.abs(z32 - _conv_reference(xx, w)).max() < 1e-5 * max(1.0, np.abs(xx).max() * np.abs(w).sum(0).max())

@needs_numba
def test_causal_conv_refusals_name_what_is_wrong():
    xx, w = np.zeros((2, 6, 3)), np.zeros((4, 3))
    for args, msg in (((xx.astype(np.float32), w), 'one dtype'), ((xx, np.zeros((4, 2))), '[K, C]'), ((xx, np.zeros((7, 3))), '[K, C]'),
                      ((xx[:, ::2], w), 'C-contiguous'), ((xx.astype(np.int64), w.astype(np.int64)), 'float32 or float64')):
        with pytest.raises(ValueError, match=msg.replace('[', r'\[').replace(']', r'\]')): kernels.causal_conv(*args)
    with pytest.raises(ValueError, match='dz must be'): kernels.causal_conv_grad(xx, w, np.zeros((2, 4, 3)))
