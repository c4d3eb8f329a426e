"AttentionMixer: every family trains; a tiny model learns in-context associative recall on CPU."
import pytest, torch
from torch import nn
from pavlovattn.model.layers import AttentionMixer
from pavlovattn.model.families import FAMILIES, BUILTIN

class Tiny(nn.Module):
    "Embedding, two pre-norm blocks (mixer + MLP), output head."
    def __init__(self, V, d, rule, L=2):
        super().__init__(); self.emb = nn.Embedding(V, d)
        self.mix = nn.ModuleList([AttentionMixer(d, 2, rule) for _ in range(L)])
        self.mlp = nn.ModuleList([nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d)) for _ in range(L)])
        self.norm = nn.ModuleList([nn.LayerNorm(d) for _ in range(L)]); self.out = nn.Linear(d, V)
    def forward(self, x):
        h = self.emb(x)
        for m, f, n in zip(self.mix, self.mlp, self.norm): h = h + m(n(h)); h = h + f(h)
        return self.out(h)

def recall_batch(B, V, P, gen):
    "P key-value pairs (keys from the first half of the vocabulary, values from the second), then one queried key."
    keys = torch.stack([torch.randperm(V // 2, generator=gen)[:P] for _ in range(B)])
    vals = torch.randint(V // 2, V, (B, P), generator=gen)
    qi = torch.randint(0, P, (B,), generator=gen)
    x = torch.cat([torch.stack([keys, vals], -1).reshape(B, 2 * P), keys[torch.arange(B), qi][:, None]], 1)
    return x, vals[torch.arange(B), qi]

@pytest.mark.slow   # training to recall: ~25 s idle; test_models keeps a training test in make test
def test_tiny_model_learns_associative_recall_on_cpu():
    torch.manual_seed(0); gen = torch.Generator().manual_seed(0)
    V, P = 16, 4
    model = Tiny(V, 32, 'delta'); opt = torch.optim.AdamW(model.parameters(), 3e-3)
    xt, yt = recall_batch(256, V, P, torch.Generator().manual_seed(1))      # held out
    acc0 = (model(xt)[:, -1].argmax(-1) == yt).float().mean().item()
    acc = acc0
    for step in range(600):
        x, y = recall_batch(32, V, P, gen)
        loss = nn.functional.cross_entropy(model(x)[:, -1], y)
        opt.zero_grad(); loss.backward(); opt.step()
        if step % 50 == 49:
            with torch.no_grad(): acc = (model(xt)[:, -1].argmax(-1) == yt).float().mean().item()
            if acc >= 0.95: break
    assert acc0 < 0.4 and acc >= 0.95, (acc0, acc, step)

@pytest.mark.parametrize('rule', list(FAMILIES))
def test_every_family_takes_a_gradient_step(rule):
    torch.manual_seed(0)
    m = AttentionMixer(16, 2, rule); x = torch.randn(3, 150, 16)         # T = 150: the chunked form under 'auto'
    opt = torch.optim.SGD(m.parameters(), 0.1)
    loss0 = (m(x) - x).square().mean(); opt.zero_grad(); loss0.backward(); opt.step()
    loss1 = (m(x) - x).square().mean()
    assert torch.isfinite(loss1) and loss1 < loss0

def test_layer_algorithms_agree_float64():
    torch.manual_seed(0)
    x = torch.randn(2, 200, 32, dtype=torch.float64)
    for rule in BUILTIN:                       # the built-in families (others registered by earlier tests may have no fast form)
        if FAMILIES[rule].exemplar: continue
        m = AttentionMixer(32, 2, rule, algorithm='sequential').double()
        ys = m(x); m.algorithm = 'chunked'; yc = m(x)
        assert (ys - yc).abs().max() < 1e-10, rule

@pytest.mark.parametrize('rule', ['delta', 'gated-delta', 'gla'])
def test_equal_chunks_and_their_gradients_equal_the_loop_float64(rule):
    "T 40 at chunk 16 runs as three chunks of 14 (two padded steps): outputs and every gradient (input, weights) equal the loop's, 1e-10."
    torch.manual_seed(0)
    x = torch.randn(3, 40, 32, dtype=torch.float64)
    m = AttentionMixer(32, 2, rule, chunk=16, algorithm='sequential').double()
    def run(alg):
        m.algorithm = alg; xx = x.clone().requires_grad_(); m.zero_grad()
        y = m(xx); y.backward(torch.cos(torch.arange(y.numel(), dtype=torch.float64)).reshape(y.shape))
        return [y.detach(), xx.grad] + [p.grad.clone() for p in m.parameters() if p.grad is not None]
    for a, c in zip(run('sequential'), run('chunked')): assert (a - c).abs().max() < 1e-10, rule

@pytest.mark.parametrize('rule', list(FAMILIES))
def test_layer_makes_gamma_as_the_spec_says(rule):
    "The layer reads how to make γ from the spec (never from the family's name): a gate from each token, one fixed decay per head, or one learned value per head."
    fam, m = FAMILIES[rule], AttentionMixer(16, n_heads=2, rule=rule, conv_size=0)
    src = fam.layer_gamma if 'gamma' in fam.params else None
    assert (m.g_proj is not None) == (src == 'input') and (m.gamma_fixed is not None) == (src == 'head') and (m.gamma_logit is not None) == (src == 'learned')
    if src == 'input': assert m.g_proj.out_features == (16 if fam.gate == 'channel' else 2)
    if src == 'head': assert torch.allclose(m.gamma_fixed, torch.tensor([1 - 2 ** -5, 1 - 2 ** -6]))

def test_unknown_layer_gamma_is_refused():
    import dataclasses
    from pavlovattn.model import layers
    bad = dataclasses.replace(FAMILIES['gated-delta'], layer_gamma='per-token')
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(layers, 'family', lambda rule: bad)
        with pytest.raises(ValueError, match="layer_gamma must be 'input', 'head' or 'learned'; got 'per-token'"):
            AttentionMixer(16, n_heads=2, rule='gated-delta')

@pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA is not available: the device check runs in make gpu-check')
@pytest.mark.parametrize('rule', list(FAMILIES))
def test_mixer_on_cuda_equals_cpu(rule):
    "Same weights, same input, float64: the mixer's outputs and every gradient on CUDA equal the CPU's."
    import copy
    torch.manual_seed(0); m = AttentionMixer(32, 2, rule, chunk=32).double(); x = torch.randn(2, 150, 32, dtype=torch.float64)
    md = copy.deepcopy(m).to('cuda')
    y, yd = m(x), md(x.to('cuda'))
    assert (y - yd.cpu()).abs().max() < 1e-10, rule
    y.square().sum().backward(); yd.square().sum().backward()
    for (n, p), pd in zip(m.named_parameters(), md.parameters()):
        assert (p.grad - pd.grad.cpu()).abs().max() <= 1e-8 * max(1.0, float(p.grad.abs().max())), (rule, n)

# --- continuing, padding, packing, generation, fla and Zoology construction (issue 29) ---
from pavlovattn.model.layers import MixerState, mask_lengths, unpack_sequences

def _mixer(rule, dtype=torch.float64, **kw):
    torch.manual_seed(0); return AttentionMixer(16, 2, rule, **kw).to(dtype)

def _pieces(m, x, sizes):
    "The outputs of `m` run over `x` in pieces of `sizes` steps, each continuing the state of the last."
    S, ys, a = None, [], 0
    for n in sizes: y, S = m(x[:, a:a + n], state=S, return_state=True); ys.append(y); a += n
    return torch.cat(ys, 1), S

@pytest.mark.parametrize('rule', list(FAMILIES))
def test_any_split_gives_the_whole_sequence_float64(rule):
    "Two halves, ragged pieces and one token at a time (`step`) give the one-call outputs, with the default short convolution."
    m = _mixer(rule); x = torch.randn(2, 13, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = m(x)
    for sizes in ((6, 7), (1, 4, 0, 5, 3), (13,)):
        assert (_pieces(m, x, sizes)[0] - y).abs().max() < 1e-10, (rule, sizes)
    S, ys = None, []
    for t in range(13): yt, S = m.step(x[:, t], S); ys.append(yt)
    assert (torch.stack(ys, 1) - y).abs().max() < 1e-10, rule
    S0 = m.init_state(2); assert (m(x, state=S0) - y).abs().max() < 1e-12

@pytest.mark.parametrize('rule', list(FAMILIES))
def test_split_gradients_equal_the_whole(rule):
    "Gradients through a carried state (every parameter and the input) equal those of the one call, float64."
    m = _mixer(rule, chunk=8); x = torch.randn(2, 20, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(2), requires_grad=True)
    def grads(y):
        m.zero_grad(); x.grad = None; y.square().sum().backward()
        return [p.grad.clone() for p in m.parameters()] + [x.grad.clone()]
    g1, g2 = grads(m(x)), grads(_pieces(m, x, (7, 1, 12))[0])
    for a, b in zip(g1, g2): assert (a - b).abs().max() < 1e-10, rule

@pytest.mark.parametrize('rule', list(FAMILIES))
def test_split_float32_chunked(rule):
    "float32 through the chunked form (the loop for softmax): pieces within 1e-5 of the largest output."
    alg = 'sequential' if FAMILIES[rule].exemplar else 'chunked'
    m = _mixer(rule, torch.float32, chunk=16, algorithm=alg); x = torch.randn(2, 70, 16, generator=torch.Generator().manual_seed(3))
    y = m(x)
    assert (_pieces(m, x, (1, 17, 5, 30, 17))[0] - y).abs().max() <= 1e-5 * y.abs().max(), rule

@pytest.mark.parametrize('rule', list(FAMILIES))
@pytest.mark.parametrize('alg', ['sequential', 'chunked'])
def test_padding_equals_each_sequence_alone(rule, alg):
    "Left and right padding in one batch: real steps as if alone, padded steps zero, and the state continues as each sequence's own."
    if alg == 'chunked' and FAMILIES[rule].exemplar: pytest.skip('softmax runs only the loop')
    m = _mixer(rule, chunk=8, algorithm=alg); gen = torch.Generator().manual_seed(4)
    a, b, z = (torch.randn(1, n, 16, dtype=torch.float64, generator=gen) for n in (10, 7, 5))
    x = torch.zeros(3, 12, 16, dtype=torch.float64); x[0, 2:] = a[0]; x[1, :7] = b[0]; x[2] = torch.randn(12, 16, generator=gen)
    mask = torch.ones(3, 12, dtype=torch.long); mask[0, :2] = 0; mask[1, 7:] = 0; mask[2, :] = 0   # left, right, empty
    y, S = m(x, attention_mask=mask, return_state=True)
    (ya, Sa), (yb, Sb) = m(a, return_state=True), m(b, return_state=True)
    assert (y[0, 2:] - ya[0]).abs().max() < 1e-10 and (y[1, :7] - yb[0]).abs().max() < 1e-10, rule
    assert y[0, :2].abs().max() == 0 and y[1, 7:].abs().max() == 0 and y[2].abs().max() == 0
    c = m(z.expand(3, 5, 16), state=S)
    assert (c[0] - m(z, state=Sa)[0]).abs().max() < 1e-10 and (c[1] - m(z, state=Sb)[0]).abs().max() < 1e-10, rule
    assert (c[2] - m(z)[0]).abs().max() < 1e-10, rule                    # an all-padding row leaves the state empty

@pytest.mark.parametrize('rule', list(FAMILIES))
def test_packed_equals_each_sequence_alone(rule):
    "Packed sequences (`cu_seqlens`): outputs and final states as if each ran alone; no state leaks across a boundary."
    m = _mixer(rule); gen = torch.Generator().manual_seed(5)
    seqs = [torch.randn(1, n, 16, dtype=torch.float64, generator=gen) for n in (5, 1, 9)]
    y, S = m(torch.cat(seqs, 1), cu_seqlens=torch.tensor([0, 5, 6, 15]), return_state=True)
    assert y.shape == (1, 15, 16)
    alone = [m(s, return_state=True) for s in seqs]
    assert (y - torch.cat([o for o, _ in alone], 1)).abs().max() < 1e-10, rule
    z = torch.randn(3, 2, 16, dtype=torch.float64, generator=gen)
    c = m(z, state=S)
    for i, (_, Si) in enumerate(alone): assert (c[i] - m(z[i:i + 1], state=Si)[0]).abs().max() < 1e-10, (rule, i)

def test_bad_masks_and_boundaries_are_refused_by_name():
    m = _mixer('delta'); x = torch.randn(2, 4, 16, dtype=torch.float64)
    for mask, msg in ((torch.tensor([[1, 0, 1, 1], [1, 1, 1, 1]]), 'row 0 is'), (torch.tensor([[0, 1, 1, 0], [1, 1, 1, 1]]), 'row 0 is'),
                      (torch.tensor([[1, 1, 1, 1], [2, 1, 1, 1]]), 'only 0 and 1'), (torch.ones(2, 3), r'attention_mask must be \[batch, time\]')):
        with pytest.raises(ValueError, match=msg): m(x, attention_mask=mask)
    for cu, msg in (([0, 2, 3], 'cu_seqlens must rise from 0 to the packed length 4'), ([0, 3, 2, 4], 'cu_seqlens must rise'),
                    (torch.tensor([0., 4.]), 'integer'), ([1, 4], 'cu_seqlens must rise from 0')):
        with pytest.raises(ValueError, match=msg): m(x[:1], cu_seqlens=torch.as_tensor(cu))
    with pytest.raises(ValueError, match=r'with cu_seqlens, x must be \[1, total, d\]'): m(x, cu_seqlens=torch.tensor([0, 4]))
    with pytest.raises(ValueError, match='not both'): m(x[:1], cu_seqlens=torch.tensor([0, 4]), attention_mask=torch.ones(1, 4))
    with pytest.raises(ValueError, match=r'x must be \[batch, time, d_model=16\]'): m(torch.randn(2, 4, 8, dtype=torch.float64))

def test_a_state_from_another_layer_is_refused_by_name():
    x = torch.randn(2, 4, 16, dtype=torch.float64)
    _, S = _mixer('delta')(x, return_state=True)
    with pytest.raises(ValueError, match='state comes from a delta layer; this layer.s family is hebbian'): _mixer('hebbian')(x, state=S)
    with pytest.raises(ValueError, match=r'state.recurrent does not fit'): _mixer('delta')(x[:1], state=S)   # another batch
    with pytest.raises(ValueError, match=r'state.recurrent does not fit'): AttentionMixer(16, 4, 'delta').double()(x, state=S)
    with pytest.raises(ValueError, match=r'state.conv does not fit'): _mixer('delta', conv_size=3)(x, state=S)
    with pytest.raises(TypeError, match="bare recurrent state lacks the short convolution"): _mixer('delta')(x, state=S.recurrent)
    m0 = _mixer('delta', conv_size=0); y, S0 = m0(x[:, :2], return_state=True)       # no convolution: a bare state still continues
    assert (torch.cat([y, m0(x[:, 2:], state=S0.recurrent)], 1) - m0(x)).abs().max() < 1e-12
    _, Ss = _mixer('softmax')(x, return_state=True)
    with pytest.raises(ValueError, match='state comes from a softmax layer'): _mixer('delta')(x, state=Ss)

def test_fla_names_are_aliases_and_refusals_name_the_argument():
    m = AttentionMixer(hidden_size=32, num_heads=2, rule='gated-delta', use_short_conv=False, use_gate=True, qk_norm='l2',
                       allow_neg_eigval=True, expand_k=1, expand_v=2, mode='chunk', layer_idx=3)
    assert (m.d_model, m.H, m.dk, m.dv, m.convs, m.layer_idx, m.mode) == (32, 2, 16, 32, None, 3, 'chunk')
    assert m.gate_proj.out_features == 64 and m.o_proj.in_features == 64 and m.v_proj.out_features == 64
    assert m.state_size() == 2 * 32 * 16
    assert AttentionMixer(32, 2, 'delta').state_size() == 2 * 16 * 16 + 3 * 2 * 3 * 16          # memory + q, k, v windows
    assert AttentionMixer(32, 2, 'softmax', conv_size=0).state_size(100) == 100 * 2 * (16 + 16 + 1)
    y, S = m(torch.randn(2, 5, 32), return_state=True); assert y.shape == (2, 5, 32) and S.recurrent.shape == (2, 2, 32, 16)
    b = torch.sigmoid(m.b_proj(torch.randn(3, 32))) * 2; assert b.max() <= 2    # the rate the layer writes with lies in (0, 2)
    with pytest.raises(ValueError, match='allow_neg_eigval needs a family whose rates are stable up to 2'): AttentionMixer(32, rule='hebbian', allow_neg_eigval=True)
    with pytest.raises(ValueError, match="d_model=32 and its fla alias hidden_size=16 disagree"): AttentionMixer(32, hidden_size=16)
    with pytest.raises(ValueError, match="qk_norm must be"): AttentionMixer(32, qk_norm='sum')
    with pytest.raises(TypeError, match='needs d_model'): AttentionMixer(n_heads=2)
    with pytest.raises(TypeError, match='unexpected keyword'): AttentionMixer(32, use_rope=True)

def test_neg_eigval_rate_reaches_above_one():
    "With allow_neg_eigval a delta layer writes with beta up to 2: a large bias gives beta near 2, and the state still continues."
    m = _mixer('delta', allow_neg_eigval=True)
    with torch.no_grad(): m.b_proj.bias.fill_(4.)
    x = torch.randn(1, 9, 16, dtype=torch.float64)
    assert torch.sigmoid(m.b_proj(x)).mul(2).min() > 1.9
    assert (_pieces(m, x, (4, 5))[0] - m(x)).abs().max() < 1e-10

class _LM(nn.Module):
    "A Zoology-style language model: each block builds its mixer from a config with `make(layer_idx)`, then pre-norm residual."
    def __init__(self, V, d, make, L=2):
        super().__init__(); self.emb = nn.Embedding(V, d)
        self.mix = nn.ModuleList([make(i) for i in range(L)])
        self.norm = nn.ModuleList([nn.LayerNorm(d) for _ in range(L)]); self.out = nn.Linear(d, V)
    def forward(self, x):
        h = self.emb(x)
        for m, n in zip(self.mix, self.norm): h = h + m(n(h))
        return self.out(h)

CONSTRUCTIONS = {   # Zoology: `ModuleConfig(name=..., kwargs=...).instantiate(d_model=..., layer_idx=...)`; fla: its layer's names
    'zoology': lambda i: AttentionMixer(d_model=32, layer_idx=i, **{'rule': 'delta', 'l_max': 64, 'num_heads': 2, 'use_beta': True,   # Zoology's
                                                                      'use_gate': False, 'use_short_conv': True, 'conv_size': 4}),     # DeltaNet kwargs
    'fla': lambda i: AttentionMixer(hidden_size=32, num_heads=2, use_gate=True, use_short_conv=True, conv_size=4, qk_norm='l2',
                                    rule='gated-delta', allow_neg_eigval=True, expand_k=1, expand_v=2, mode='chunk', layer_idx=i)}

@pytest.mark.parametrize('kind', list(CONSTRUCTIONS))
def test_zoology_and_fla_style_constructions_train(kind):
    "A Zoology-style (`d_model`, `layer_idx`) and an fla-style (`hidden_size`, `num_heads`, `use_gate`, ...) construction train a few steps."
    torch.manual_seed(0); gen = torch.Generator().manual_seed(0)
    model = _LM(16, 32, CONSTRUCTIONS[kind]); opt = torch.optim.AdamW(model.parameters(), 3e-3)
    assert [m.layer_idx for m in model.mix] == [0, 1] and all(m.state_size() > 0 for m in model.mix)
    x, y = recall_batch(64, 16, 4, gen)
    losses = []
    for _ in range(8):
        loss = nn.functional.cross_entropy(model(x)[:, -1], y); opt.zero_grad(); loss.backward(); opt.step(); losses.append(loss.item())
    assert losses[-1] < losses[0], losses

def test_greedy_generation_equals_rerunning_the_prefix():
    "A tiny language model generates by `step` (state carried) the tokens that re-running the whole prefix each time gives."
    torch.manual_seed(0); V, d = 16, 32
    emb, mixes, out = nn.Embedding(V, d), [AttentionMixer(d, 2, r) for r in ('delta', 'gated-delta')], nn.Linear(d, V)
    def full(tok):
        h = emb(tok)
        for m in mixes: h = h + m(h)
        return out(h)
    prompt = torch.randint(0, V, (3, 6), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ref = prompt
        for _ in range(8): ref = torch.cat([ref, full(ref)[:, -1].argmax(-1, keepdim=True)], 1)
        states, toks, last = [None] * len(mixes), prompt, None
        for t in range(prompt.shape[1] + 7):
            h = emb(toks[:, t])
            for i, m in enumerate(mixes): o, states[i] = m.step(h, states[i]); h = h + o
            if t >= prompt.shape[1] - 1: toks = torch.cat([toks, out(h).argmax(-1, keepdim=True)], 1)
    assert torch.equal(toks, ref)

FLA_STYLE = dict(scale=None, norm_eps=1e-5)   # fla's query scale and norm epsilon

@pytest.mark.parametrize('kw, mt', [(dict(rule='delta'), 'delta_net'),
                                    (dict(rule='gated-delta', use_gate=True, expand_v=2, allow_neg_eigval=True, conv_size=2), 'gated_deltanet'),
                                    (dict(rule='gated-delta', head_dim=8, expand_v=2, use_gate=False), 'gated_deltanet'),   # head_dim != d_model / heads
                                    (dict(rule='gla', head_dim=12, qk_norm=False, use_beta=False, conv_size=3, mode='fused_recurrent', layer_idx=4), 'gla'),
                                    (dict(rule='hebbian', qk_norm=False, use_beta=False, conv_size=0), 'linear_attn')])
def test_fla_config_moves_both_ways(kw, mt):
    "`to_fla_kwargs` writes only the names of fla's layer class for the family; `from_fla_config` rebuilds the same layer: same sizes, same state-dict keys, the same outputs from the same weights."
    from pavlovattn.model.layers import FLA_LAYER_ARGS
    torch.manual_seed(0); m = AttentionMixer(32, 2, **kw, **FLA_STYLE)
    out = m.to_fla_kwargs(); assert set(out) <= set(FLA_LAYER_ARGS[mt][1]) and out == m.to_fla_kwargs(mt)
    back = AttentionMixer.from_fla_config(out, model_type=mt)
    assert (back.dk, back.dv, back.conv_size, back.qk_norm, back.neg_eigval, back.mode, back.layer_idx, back.scale, back.norm_eps) == \
           (m.dk, m.dv, m.conv_size, m.qk_norm, m.neg_eigval, m.mode, m.layer_idx, m.scale, m.norm_eps)
    back.load_state_dict(m.state_dict()); x = torch.randn(2, 6, 32)
    assert torch.equal(back(x), m(x))

def test_to_fla_kwargs_refuses_what_the_fla_class_cannot_express():
    for m, msg in ((AttentionMixer(32, 2, 'gla'), "GatedLinearAttention cannot express this layer's qk_norm=True, use_beta=True, scale=1"),
                   (AttentionMixer(32, 2, 'delta', qk_norm=False, **FLA_STYLE), "DeltaNet cannot express this layer's qk_norm=False"),
                   (AttentionMixer(32, 2, 'delta', scale=None), "norm_eps=None"),
                   (AttentionMixer(32, 2, 'hebbian', qk_norm=False, use_beta=False, **FLA_STYLE), "LinearAttention cannot express this layer's use_short_conv=True"),
                   (AttentionMixer(32, 2, 'gated-delta', expand_v=1.5, **FLA_STYLE), 'GatedDeltaNet makes d_v a whole multiple'),
                   (AttentionMixer(32, 2, 'gated-delta', conv_size=0, **FLA_STYLE), r"GatedDeltaNet cannot express this layer's use_short_conv=False \(without it"),
                   (AttentionMixer(32, 2, 'delta', conv_size=0, **FLA_STYLE), "DeltaNet cannot express this layer's use_short_conv=False"),
                   (AttentionMixer(32, 2, 'decay'), 'the decay family has no fla layer')):
        with pytest.raises(ValueError, match=msg): m.to_fla_kwargs()
    with pytest.raises(ValueError, match="MultiScaleRetention rotates q and k"): AttentionMixer(32, 2, 'decay').to_fla_kwargs('retnet')
    with pytest.raises(ValueError, match="fla's DeltaNet computes the delta family; this layer's is gla"): AttentionMixer(32, 2, 'gla').to_fla_kwargs('delta_net')

def test_from_fla_config_reads_an_fla_config_object():
    "An object with fla's attribute names (as fla's config classes have), the family from its model_type, `attn_mode` as `mode`."
    class GatedDeltaNetConfig:   # the mixer's fields of fla's GatedDeltaNetConfig (other fields are ignored)
        model_type, hidden_size, num_heads, head_dim, expand_v, use_gate, use_short_conv, conv_size = 'gated_deltanet', 64, 2, 16, 2, True, True, 4
        attn_mode, allow_neg_eigval, vocab_size = 'chunk', False, 1000
    m = AttentionMixer.from_fla_config(GatedDeltaNetConfig(), layer_idx=0)
    assert (m.rule, m.d_model, m.H, m.dk, m.dv, m.mode, m.layer_idx, m.gate_proj is not None) == ('gated-delta', 64, 2, 16, 32, 'chunk', 0, True)
    with pytest.raises(ValueError, match="rule=None needs a config model_type"): AttentionMixer.from_fla_config({'hidden_size': 32})

@pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA is not available: the device check runs in make gpu-check')
@pytest.mark.parametrize('rule', list(FAMILIES))
def test_continuing_and_padding_on_cuda(rule):
    "On CUDA (float64, the chunked form where a family has one): pieces give the whole, a padded batch gives each sequence alone, and both equal the CPU."
    import copy
    alg = 'sequential' if FAMILIES[rule].exemplar else 'chunked'
    m = _mixer(rule, chunk=16, algorithm=alg); md = copy.deepcopy(m).to('cuda')
    x = torch.randn(2, 70, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(6)); xd = x.to('cuda')
    y, yd = m(x), md(xd)
    assert (y - yd.cpu()).abs().max() < 1e-10 and (_pieces(md, xd, (1, 17, 5, 30, 17))[0] - yd).abs().max() < 1e-10, rule
    mask = torch.ones(2, 70, dtype=torch.long, device='cuda'); mask[0, :20] = 0; mask[1, 41:] = 0
    xp = xd.clone(); xp[0, 20:] = xd[0, :50]
    yp = md(xp, attention_mask=mask)
    assert (yp[0, 20:] - md(xd[:1, :50])[0]).abs().max() < 1e-10 and (yp[1, :41] - md(xd[1:, :41])[0]).abs().max() < 1e-10, rule

# Issue 32, reproducer 13 (AttentionMixer): head_dim=0 became the default, n_heads=0 raised ZeroDivisionError, an unknown
# algorithm was refused only at forward, T=0 raised a conv1d error.
@pytest.mark.parametrize('kw, msg', [(dict(head_dim=0), 'head_dim must be a positive integer'), (dict(n_heads=0), 'n_heads must be a positive integer'),
                                     (dict(num_heads=0), 'n_heads must be a positive integer'), (dict(n_heads=-2), 'n_heads must be'),
                                     (dict(head_dim=2.5), 'head_dim must be'), (dict(d_model=0), 'd_model must be'),
                                     (dict(d_model=2, n_heads=4), 'no channel per head'), (dict(algorithm='nope'), "unknown algorithm 'nope'"),
                                     (dict(algorithm='numba'), "unknown algorithm 'numba'"),
                                     (dict(rule='softmax', algorithm='chunked'), 'does not implement the softmax family'),
                                     (dict(expand_k=0.3), r'expand_k=0.3 gives 0.6 channels'), (dict(expand_v=float('nan')), 'expand_v must be a positive number'),
                                     (dict(conv_size=-1), 'conv_size must be'), (dict(conv_size=2.5), 'conv_size must be'), (dict(conv_size=True), 'conv_size must be'),
                                     (dict(chunk=0), 'chunk must be a positive integer'), (dict(mode='chnk'), "mode must be None or one of fla's"),
                                     (dict(use_gate='no'), 'use_gate must be True or False'), (dict(allow_neg_eigval='yes'), 'allow_neg_eigval must be True or False'),
                                     (dict(use_beta=None), 'use_beta must be True or False'), (dict(norm_eps=-1.), 'norm_eps must be a positive number')])
def test_mixer_refuses_impossible_sizes_and_algorithms_at_construction(kw, msg):
    with pytest.raises(ValueError, match=msg): AttentionMixer(**{'d_model': 8, **kw})

def test_mixer_sizes_that_are_given_are_kept_and_an_empty_sequence_runs():
    import numpy as np
    m = AttentionMixer(np.int64(8), n_heads=2, head_dim=3); assert (m.H, m.dk, m.dv) == (2, 3, 3)
    assert AttentionMixer(8, 2, algorithm='sequential').algorithm == 'sequential'
    y = AttentionMixer(8, 2)(torch.zeros(2, 0, 8)); assert tuple(y.shape) == (2, 0, 8)


def test_use_beta_false_is_a_rate_of_one_and_scale_multiplies_the_queries():
    "use_beta=False is beta = 1 exactly (the same layer with sigmoid(+inf) rates); scale=s equals queries projected s times larger (no norm, no conv)."
    x = torch.randn(2, 9, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    for rule in ('delta', 'hebbian', 'gla'):
        a, b = _mixer(rule, use_beta=False), _mixer(rule)
        assert a.b_proj is None
        sd = {n: p for n, p in a.state_dict().items()}
        sd.update({'b_proj.weight': torch.zeros(2, 16, dtype=torch.float64), 'b_proj.bias': torch.full((2,), float('inf'), dtype=torch.float64)})
        b.load_state_dict(sd)
        assert (a(x) - b(x)).abs().max() < 1e-12, rule
    a, b = _mixer('delta', scale=2.5, qk_norm=False, conv_size=0), _mixer('delta', qk_norm=False, conv_size=0)
    b.load_state_dict(a.state_dict())
    with torch.no_grad(): b.q_proj.weight.mul_(2.5)
    assert (a(x) - b(x)).abs().max() < 1e-12
    assert AttentionMixer(16, 2, 'delta', use_beta=False, **FLA_STYLE).to_fla_kwargs()['use_beta'] is False
    a, b = _mixer('delta', use_beta=False, allow_neg_eigval=True), _mixer('delta', allow_neg_eigval=True)   # fla's DeltaNet: beta = 2
    sd = dict(a.state_dict(), **{'b_proj.weight': torch.zeros(2, 16, dtype=torch.float64), 'b_proj.bias': torch.full((2,), float('inf'), dtype=torch.float64)})
    b.load_state_dict(sd); assert (a(x) - b(x)).abs().max() < 1e-12 and (a(x) - _mixer('delta', use_beta=False)(x)).abs().max() > 1e-3
    assert _mixer('delta', scale=None).scale == 8 ** -0.5 and AttentionMixer(16, 2, norm_eps=1e-5).o_norm.eps == 1e-5
    for bad in (0, -1.0, float('nan'), True, 'd'):
        with pytest.raises(ValueError, match='scale must be a positive number or None'): AttentionMixer(16, 2, scale=bad)


# --- the gradients of the split, padded and packed runs (issue 29, "gradients included") ---
def _grads(m, loss, *xs):
    m.zero_grad()
    for x in xs: x.grad = None
    loss.backward()
    return [p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in m.parameters()], [x.grad.clone() for x in xs]

@pytest.mark.parametrize('rule', list(FAMILIES))
def test_split_gradients_float32(rule):
    "float32 (the chunked form where a family has one): gradients of pieces within 1e-5 of the largest gradient of the one call."
    alg = 'sequential' if FAMILIES[rule].exemplar else 'chunked'
    m = _mixer(rule, torch.float32, chunk=16, algorithm=alg)
    x = torch.randn(2, 40, 16, generator=torch.Generator().manual_seed(8), requires_grad=True)
    (p1, (x1,)), (p2, (x2,)) = _grads(m, m(x).square().sum(), x), _grads(m, _pieces(m, x, (1, 17, 22))[0].square().sum(), x)
    for a, b in zip(p1 + [x1], p2 + [x2]): assert (a - b).abs().max() <= 1e-5 * a.abs().max().clamp_min(1e-30), rule

@pytest.mark.parametrize('rule', list(FAMILIES))
def test_padded_and_packed_gradients_equal_each_sequence_alone(rule):
    "float64: the gradients of a left/right-padded batch and of packed sequences equal the sums over each sequence run alone (padding gets none)."
    m = _mixer(rule, chunk=8); gen = torch.Generator().manual_seed(9)
    a, b = (torch.randn(1, n, 16, dtype=torch.float64, generator=gen, requires_grad=True) for n in (10, 7))
    pa, (ga, gb) = _grads(m, m(a).square().sum() + m(b).square().sum(), a, b)
    xp = torch.zeros(2, 12, 16, dtype=torch.float64); xp[0, 2:] = a[0].detach(); xp[1, :7] = b[0].detach(); xp.requires_grad_()
    mask = torch.zeros(2, 12, dtype=torch.long); mask[0, 2:] = 1; mask[1, :7] = 1
    pp, (gp,) = _grads(m, m(xp, attention_mask=mask).square().sum(), xp)
    xc = torch.cat([a, b], 1).detach().requires_grad_()
    pc, (gc,) = _grads(m, m(xc, cu_seqlens=torch.tensor([0, 10, 17])).square().sum(), xc)
    for u, w, z in zip(pa, pp, pc): assert (u - w).abs().max() < 1e-10 and (u - z).abs().max() < 1e-10, rule
    assert (gp[0, 2:] - ga[0]).abs().max() < 1e-10 and (gp[1, :7] - gb[0]).abs().max() < 1e-10, rule
    assert gp[0, :2].abs().max() == 0 and gp[1, 7:].abs().max() == 0
    assert (gc - torch.cat([ga, gb], 1)).abs().max() < 1e-10, rule

@pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA is not available: the device check runs in make gpu-check')
@pytest.mark.parametrize('rule', list(FAMILIES))
def test_packed_and_gradients_on_cuda(rule):
    "On CUDA, float64: packed sequences equal each alone; the gradients of pieces, of a padded batch and of packed sequences equal those of the sequences run whole and alone."
    m = _mixer(rule, chunk=8).to('cuda'); gen = torch.Generator().manual_seed(10)
    a, b = (torch.randn(1, n, 16, dtype=torch.float64, generator=gen).to('cuda').requires_grad_() for n in (20, 9))
    pa, (ga, gb) = _grads(m, m(a).square().sum() + m(b).square().sum(), a, b)
    ps, (gs,) = _grads(m, _pieces(m, a, (7, 1, 12))[0].square().sum() + m(b).square().sum(), a)
    xc = torch.cat([a, b], 1).detach().requires_grad_()
    yc = m(xc, cu_seqlens=torch.tensor([0, 20, 29], device='cuda'))
    assert (yc - torch.cat([m(a), m(b)], 1)).abs().max() < 1e-10, rule
    pc, (gc,) = _grads(m, yc.square().sum(), xc)
    xp = torch.zeros(2, 20, 16, dtype=torch.float64, device='cuda'); xp[0] = a[0].detach(); xp[1, 11:] = b[0].detach(); xp.requires_grad_()
    mask = torch.ones(2, 20, dtype=torch.long, device='cuda'); mask[1, :11] = 0
    pp, (gp,) = _grads(m, m(xp, attention_mask=mask).square().sum(), xp)
    for u, s, c, p in zip(pa, ps, pc, pp): assert max((u - s).abs().max(), (u - c).abs().max(), (u - p).abs().max()) < 1e-10, rule
    assert (gs - ga).abs().max() < 1e-10 and (gc - torch.cat([ga, gb], 1)).abs().max() < 1e-10, rule
    assert (gp[0] - ga[0]).abs().max() < 1e-10 and (gp[1, 11:] - gb[0]).abs().max() < 1e-10 and gp[1, :11].abs().max() == 0, rule


@pytest.mark.parametrize('rule', list(FAMILIES))
def test_padding_holding_nan_or_inf_is_never_read(rule):
    "NaN or inf at padded steps (a masked softmax layer before this one can leave them) change nothing: the real steps' outputs and every gradient are those of the sequence alone, padding gives 0 and gets no gradient."
    m = _mixer(rule, chunk=8); a = torch.randn(1, 6, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(11))
    x = torch.full((3, 9, 16), float('nan'), dtype=torch.float64); x[0, 3:] = a[0]; x[1, :6] = a[0]; x[2, 4] = float('inf')
    mask = torch.zeros(3, 9, dtype=torch.long); mask[0, 3:] = 1; mask[1, :6] = 1           # left, right, all padding
    x.requires_grad_(); y = m(x, attention_mask=mask); ya = m(a)
    assert max((y[0, 3:] - ya[0]).abs().max(), (y[1, :6] - ya[0]).abs().max()) < 1e-12, rule
    assert y[0, :3].abs().max() == 0 and y[1, 6:].abs().max() == 0 and y[2].abs().max() == 0, rule
    pp, (gx,) = _grads(m, y.square().sum(), x); pa, _ = _grads(m, 2 * ya.square().sum())
    for u, w in zip(pp, pa): assert (u - w).abs().max() < 1e-10, rule
    assert gx[0, :3].abs().max() == 0 and gx[1, 6:].abs().max() == 0 and gx[2].abs().max() == 0, rule


def test_dtype_and_device_mismatches_are_refused_by_name():
    "An input or a state in another dtype or on another device than the layer computes in: one error naming it (was: torch's matmul error, or a state silently cast)."
    m = _mixer('delta'); x = torch.randn(2, 4, 16, dtype=torch.float64)
    with pytest.raises(ValueError, match='x is torch.float32; this layer computes in torch.float64'): m(x.float())
    with pytest.raises(ValueError, match='x must hold floating-point numbers'): m(torch.ones(2, 4, 16, dtype=torch.long))
    with pytest.raises(ValueError, match='x is on meta; this layer.s weights are on cpu'): m(x.to('meta'))
    with pytest.raises(ValueError, match=r'step takes one token per sequence, x of shape \[batch, d_model=16\]; got \(2, 8\)'): m.step(torch.randn(2, 8, dtype=torch.float64))
    _, S = m(x, return_state=True); _, Ss = _mixer('softmax')(x, return_state=True)
    for bad, name in ((MixerState(S.recurrent.float(), S.conv, 'delta'), 'state.recurrent is torch.float32'),
                      (MixerState(S.recurrent, tuple(c.float() for c in S.conv), 'delta'), 'state.conv is torch.float32'),
                      (MixerState(S.recurrent.to('meta'), S.conv, 'delta'), 'state.recurrent is torch.float64 on meta')):
        with pytest.raises(ValueError, match=name): m(x, state=bad)
    with pytest.raises(ValueError, match='state.recurrent is torch.float64 on cpu; this layer computes in torch.float32'):
        _mixer('softmax', torch.float32)(x.float(), state=MixerState(type(Ss.recurrent)(*(t.double() for t in Ss.recurrent)), Ss.conv, 'softmax'))
    for bad, msg in (('yes', 'attention_mask must be'), ):
        with pytest.raises(ValueError, match=msg): m(x, attention_mask=bad)
    with pytest.raises(ValueError, match='cu_seqlens must be'): m(x[:1], cu_seqlens='0,4')
    for b in (-1, 2.5, True):
        with pytest.raises(ValueError, match='batch must be a whole number >= 0'): m.init_state(b)
    m32 = _mixer('gated-delta', torch.float32); x32 = x.float()
    with torch.autocast('cpu', dtype=torch.bfloat16):                   # under autocast the layer computes in bfloat16: its own states continue
        y, S = m32(x32, return_state=True); assert S.recurrent.dtype == torch.bfloat16
        assert m32(x32, state=S).shape == x32.shape and m32(x32, state=m32.init_state(2)).shape == x32.shape


FLA_D = dict(hidden_size=32, num_heads=2)

@pytest.mark.parametrize('cfg, msg', [
    (dict(model_type='delta_net', **FLA_D, qk_activation='relu'), "qk_activation='relu'"),
    (dict(model_type='delta_net', **FLA_D, use_short_conv=False), "use_short_conv=False (without it"),
    (dict(model_type='delta_net', **FLA_D, conv_bias=True), 'conv_bias=True'),
    (dict(model_type='gated_deltanet', **FLA_D, head_dim=16, num_v_heads=4), 'num_v_heads=4'),
    (dict(model_type='gated_deltanet', **FLA_D, head_dim=16, output_gate_activation='sigmoid'), "output_gate_activation='sigmoid'"),
    (dict(model_type='gla', **FLA_D, feature_map='relu'), "feature_map='relu'"),
    (dict(model_type='gla', **FLA_D, num_kv_heads=1), 'num_kv_heads=1'),
    (dict(model_type='gla', **FLA_D, clamp_min=-0.1), 'clamp_min=-0.1'),
    (dict(model_type='gla', **FLA_D, hidden_act='gelu'), "hidden_act='gelu'"),
    (dict(model_type='gla', **FLA_D, gate_logit_normalizer=8), 'gate_logit_normalizer=8'),
    (dict(model_type='gla', **FLA_D, elementwise_affine=False), 'elementwise_affine=False'),
    (dict(model_type='linear_attn', **FLA_D), "feature_map='elementwise_product'"),          # fla's LinearAttention's default feature map
    (dict(model_type='linear_attn', **FLA_D, feature_map='identity', norm_q=True), 'norm_q=True'),
    (dict(model_type='linear_attn', **FLA_D, feature_map='identity', output_norm='identity'), "output_norm='identity'"),
    (dict(model_type='retnet', **FLA_D), 'MultiScaleRetention rotates q and k'),
    (dict(model_type='gla', **FLA_D, use_gate=True, use_output_gate=False), 'use_gate=True and its fla alias use_output_gate=False disagree'),
    (dict(model_type='delta_net', **FLA_D, attn={'layers': [1, 3], 'num_heads': 2}, layer_idx=1), 'softmax attention at layers [1, 3]'),
    (dict(model_type='delta_net', **FLA_D, attn={'layers': [1], 'num_heads': 2}), 'softmax attention at layers [1]')])
def test_from_fla_config_refuses_what_this_layer_does_not_compute(cfg, msg):
    "An fla setting that changes what fla's layer computes, and that this layer does not compute, is refused by name (was: ignored, and the layer computed something else)."
    import re
    with pytest.raises(ValueError, match=re.escape(msg)): AttentionMixer.from_fla_config(cfg)

def test_from_fla_config_takes_fla_layer_defaults_where_a_config_is_silent():
    "Sizes a dict does not give are those of fla 0.6.0's layer class (GatedDeltaNet: 6 heads of 256, d_v 512; GLA: d_k = d_model / 2 over 4 heads; LinearAttention: 8 heads)."
    for cfg, want in ((dict(model_type='gated_deltanet', hidden_size=64), (6, 256, 512)), (dict(model_type='gla', hidden_size=64), (4, 8, 16)),
                      (dict(model_type='linear_attn', hidden_size=64, feature_map='identity'), (8, 8, 8)), (dict(model_type='delta_net', hidden_size=64), (4, 16, 16))):
        m = AttentionMixer.from_fla_config(cfg); assert (m.H, m.dk, m.dv, m.norm_eps, m.scale) == want + (1e-5, m.dk ** -0.5), cfg   # fla's eps and scale
    m = AttentionMixer.from_fla_config(dict(model_type='delta_net', **FLA_D, attn={'layers': [1], 'num_heads': 2}), layer_idx=0)   # a hybrid's linear layer
    assert m.layer_idx == 0


@pytest.mark.parametrize('rule', list(FAMILIES))
def test_layer_equals_its_definition_written_out(rule):
    "float64, no convolution, output gate on, scale 0.7: the projections, the spec's key map (positive keys, or q, k and a write key L2-normalised), the rate, γ as the spec says, the family's reference recurrence, torch's RMSNorm, the SiLU gate and the output projection, written out with torch's own functions, give the layer's output to 1e-12."
    import torch.nn.functional as F
    from pavlovattn.model.core import recur
    fam = FAMILIES[rule]; m = _mixer(rule, conv_size=0, use_gate=True, scale=0.7)
    x = torch.randn(2, 9, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(12))
    B, T, H, dk, dv = 2, 9, m.H, m.dk, m.dv; h = lambda t, d: t.reshape(B, T, H, d)
    q, k, v = h(m.q_proj(x), dk), h(m.k_proj(x), dk), h(m.v_proj(x), dv)
    opts = dict(tau=dk ** 0.5) if fam.grows else dict(beta=torch.sigmoid(m.b_proj(x)))
    if 'kw' in fam.params: opts['kw'] = F.normalize(h(m.kw_proj(x), dk), dim=-1)
    if fam.positive_keys: q, k = F.elu(q) + 1, F.elu(k) + 1
    elif not fam.grows: q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    src = fam.layer_gamma if 'gamma' in fam.params else None
    if src == 'input':
        g = torch.exp(F.logsigmoid(m.g_proj(x)) / 16); opts['gamma'] = h(g, dk) if fam.gamma_channels(dk) is not None else g
    if src == 'head': opts['gamma'] = 1 - 2.0 ** (-5 - torch.arange(H, dtype=torch.float64))
    if src == 'learned': opts['gamma'] = torch.sigmoid(m.gamma_logit)
    out = recur(k, v, 0.7 * q, rule=rule, algorithm='reference' if 'reference' in fam.algorithms else fam.loop, reads='out', check=False, **opts).out
    o = torch.rms_norm(out, (dv,), m.o_norm.weight, m.o_norm.eps) * F.silu(h(m.gate_proj(x), dv))
    assert (m(x) - m.o_proj(o.reshape(B, T, H * dv))).abs().max() < 1e-12, rule


def test_layer_with_a_classical_family_carries_its_state():
    "Issue 47: a layer whose family keeps more than one matrix (the Kalman filter): its state starts at the prior covariance, and two halves with the state carried equal one pass."
    import torch
    from pavlovattn.model.layers import AttentionMixer
    from pavlovattn.model.classical import KALMAN
    from pavlovattn.model.families import FAMILIES
    try:
        torch.manual_seed(0); m = AttentionMixer(16, 2, rule=KALMAN, conv_size=0, dtype=torch.float64)
        st = m.init_state(2); assert torch.equal(st.recurrent[0, 0, 8:], torch.eye(8, dtype=torch.float64))
        x = torch.randn(2, 10, 16, dtype=torch.float64)
        y, s = m(x, return_state=True)
        y1, s1 = m(x[:, :4], return_state=True); y2, s2 = m(x[:, 4:], state=s1, return_state=True)
        assert torch.allclose(torch.cat([y1, y2], 1), y, atol=1e-12) and torch.allclose(s2.recurrent, s.recurrent, atol=1e-12)
    finally: FAMILIES.pop('kalman', None)

@pytest.mark.parametrize('B,T,C,K,carried', [(2, 40, 64, 4, False), (3, 5, 6, 4, True), (1, 1, 3, 2, True), (2, 17, 5, 3, False)])
def test_compiled_short_conv_equals_torch_conv_with_gradients(B, T, C, K, carried):
    "`short_conv` by numba's loops (the CPU's default) and by torch's convolution: the same values and gradients (float64 to 1e-12, float32 to 1e-5), a carried window included."
    from pavlovattn.model.kernels import available
    from pavlovattn.model.layers import short_conv
    if not available(): pytest.skip('numba is not installed')
    g = torch.Generator().manual_seed(B + T + K)
    for dt, tol in ((torch.float64, 1e-12), (torch.float32, 1e-5)):
        x = torch.randn(B, T, C, generator=g, dtype=dt)
        pre = torch.randn(B, K - 1, C, generator=g, dtype=dt) if carried else torch.zeros(B, K - 1, C, dtype=dt)
        xx = torch.cat([pre, x], 1).requires_grad_(); w = torch.randn(C, K, generator=g, dtype=dt, requires_grad=True)
        G = torch.randn(B, T, C, generator=g, dtype=dt)
        ya, yb = short_conv(xx, w, compiled=False), short_conv(xx, w)          # the default on the CPU: the compiled loops
        assert (ya - yb).abs().max() <= tol
        for a, b in zip(torch.autograd.grad(ya, (xx, w), G), torch.autograd.grad(yb, (xx, w), G)):
            assert (a - b).abs().max() <= tol * max(1.0, a.abs().max().item())

@pytest.mark.skipif(not __import__('pavlovattn.model.kernels', fromlist=['x']).available(), reason='numba is not installed')
@pytest.mark.parametrize('rule', [r for r in BUILTIN if not FAMILIES[r].exemplar])
def test_a_layer_on_the_cpu_runs_the_compiled_loop_and_equals_the_loop(rule):
    "A layer on the CPU ('auto': the compiled loop, issue 50): outputs and every gradient (input, weights) as the tuned loop's, float64 1e-12; float32 to rounding."
    torch.manual_seed(0)
    x = torch.randn(3, 40, 32, dtype=torch.float64)
    m = AttentionMixer(32, 2, rule).double()
    def run(alg, dt=torch.float64):
        m.algorithm = alg; m.to(dt); xx = x.to(dt).clone().requires_grad_(); m.zero_grad()
        y = m(xx); y.backward(torch.cos(torch.arange(y.numel(), dtype=dt)).reshape(y.shape))
        return [y.detach(), xx.grad] + [p.grad.clone() for p in m.parameters() if p.grad is not None]
    for a, c in zip(run('sequential'), run('auto')): assert (a - c).abs().max() < 1e-12, rule
    ref = run('sequential', torch.float32)                                # float32 against float32 (the layer's own rounding is larger)
    for a, c in zip(ref, run('auto', torch.float32)): assert (a - c).abs().max() < 1e-4 * (1 + a.abs().max()), rule
