"""Our `AttentionMixer` against flash-linear-attention's own layer classes (fla 0.6.0), with the same weights, on CPU.

fla's layers (`fla.layers.DeltaNet`, `GatedDeltaNet`, `GatedLinearAttention`, `LinearAttention`) are real here: built by
fla, their forward run line by line. What cannot run on a CPU is the Triton code under them, so each Triton call is
answered by fla's own pure-torch reference of it, from the same fla release:
  recurrence      `chunk_*` / `fused_recurrent_*`  ->  fla.ops.<family>.naive (`delta_rule_recurrence`, `naive_recurrent_*`)
  GDN gate        `use_gate_in_kernel`             ->  fla.ops.gated_delta_rule.gate.naive_gdn_gate
  output norm     `RMSNorm`, `FusedRMSNormGated`   ->  fla.modules.norm.layernorm.rms_norm_ref, layernorm_gated.rms_norm_ref
  q/k L2 norm     `use_qk_l2norm_in_kernel`        ->  x / sqrt(sum x^2 + 1e-6), fla's l2norm formula (fla has no torch reference)
  short conv      `ShortConvolution` (Triton)      ->  torch's causal depthwise conv1d on fla's weights + SiLU (fla has no torch reference)
  packed calls    `cu_seqlens` (after fla unpads a masked batch)  ->  the reference on each sequence, concatenated
The last two are the only parts not taken from fla. RetNet (`MultiScaleRetention`) is not compared as a layer: it
rotates q and k (rotary embeddings), which our mixer does not; its recurrence is compared on the families page.

Importing fla's layers needs Triton (import only) and the `flash-linear-attention` package (`pip install -e ".[fla]"`,
about 1 GB; part of `.[dev]`, so `make test` runs them): without them every test here skips with one line.
Our layers are built from fla's with `from_fla_config(fla_layer)` (the drop-in path), then fla's weights are copied in.
Tolerance: float32, max |ours - fla| <= 1e-5 * max |fla| (fla's references compute in float32). Measured: outputs 1.4e-7
to 4.3e-6 and input gradients 3.7e-7 to 5.8e-6 unpadded, outputs 1.9e-7 to 6.9e-6 with padding; with scale=1 (ours) instead of fla's d_k^-1/2 the delta families
differ by 0.08-0.19, and without the mask in ours by 0.7-0.96, so the comparison sees these.
"""
import importlib, math
import pytest, torch
import torch.nn.functional as F
from pavlovattn.model.layers import AttentionMixer
from pavlovattn.model.families import fla_references

def _fla_layers():
    try: return importlib.import_module('fla.layers')
    except Exception as e: return f'{type(e).__name__}: {e}'.splitlines()[0]

L = _fla_layers()
pytestmark = pytest.mark.skipif(isinstance(L, str), reason=f"fla's layer classes do not import here ({L}); pip install -e '.[fla]'")

def _per_sequence(f):
    "fla's packed call (`cu_seqlens`, inputs `[1, total, ...]`) answered by running its reference on each sequence and concatenating."
    def g(*a, cu_seqlens=None, **kw):
        if cu_seqlens is None: return f(*a, **kw)
        cu = cu_seqlens.tolist(); outs = []
        for s, e in zip(cu[:-1], cu[1:]):
            cut = lambda x: x[:, s:e] if torch.is_tensor(x) and x.dim() >= 2 and x.shape[:2] == (1, cu[-1]) else x
            outs.append(f(*map(cut, a), **{n: cut(v) for n, v in kw.items()})[0])
        return torch.cat(outs, 1), None
    return g

def _l2(x): return x / torch.sqrt(x.float().square().sum(-1, keepdim=True) + 1e-6).to(x)   # fla's l2norm, eps 1e-6

@pytest.fixture
def fla_on_cpu(monkeypatch):
    "Every Triton call under fla's layers answered by fla's own torch reference (the table in the module docstring)."
    from fla.modules import RMSNorm, FusedRMSNormGated, ShortConvolution
    from fla.modules.norm import layernorm, layernorm_gated
    from fla.ops.gated_delta_rule.gate import naive_gdn_gate
    from fla.ops.linear_attn.naive import naive_recurrent_linear_attn
    ref = fla_references()
    @_per_sequence
    def conv1(x, self):
        K = self.weight.shape[-1]
        y = F.conv1d(F.pad(x.transpose(1, 2), (K - 1, 0)), self.weight, self.bias, groups=self.weight.shape[0]).transpose(1, 2)
        return (F.silu(y) if self.activation in ('silu', 'swish') else y), None
    def conv(self, x, residual=None, mask=None, cache=None, output_final_state=False, cu_seqlens=None, **kw):
        assert cache is None and residual is None and mask is None                   # what these tests use
        return conv1(x, self, cu_seqlens=cu_seqlens)
    monkeypatch.setattr(ShortConvolution, 'forward', conv)
    monkeypatch.setattr(RMSNorm, 'forward', lambda self, x, *a, **kw: layernorm.rms_norm_ref(x, self.weight, self.bias, eps=self.eps, upcast=True))
    monkeypatch.setattr(FusedRMSNormGated, 'forward', lambda self, x, g, *a, **kw: layernorm_gated.rms_norm_ref(x, self.weight, self.bias, z=g, eps=self.eps))
    @_per_sequence
    def delta(q, k, v, beta, initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=False, **kw):
        if use_qk_l2norm_in_kernel: q, k = _l2(q), _l2(k)
        return ref['delta_rule'](q, k, v, beta, None, initial_state, output_final_state)
    @_per_sequence
    def gated_delta(q, k, v, g, beta, initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=False, use_beta_sigmoid_in_kernel=False,
                    allow_neg_eigval=False, use_gate_in_kernel=False, A_log=None, dt_bias=None, **kw):
        if use_qk_l2norm_in_kernel: q, k = _l2(q), _l2(k)
        if use_beta_sigmoid_in_kernel: beta = beta.sigmoid() * (2 if allow_neg_eigval else 1)
        if use_gate_in_kernel: g = naive_gdn_gate(g, A_log, dt_bias)
        return ref['gated_delta_rule'](q, k, v, g, beta, None, initial_state, output_final_state)
    @_per_sequence
    def gla(q, k, v, g=None, initial_state=None, output_final_state=False, scale=None, gk=None, **kw):   # chunk_gla: g, fused_recurrent_gla: gk
        return ref['gla'](q, k, v, gk if g is None else g, scale, initial_state, output_final_state)
    @_per_sequence
    def linear(q, k, v, initial_state=None, output_final_state=False, normalize=False, scale=None, **kw):
        return naive_recurrent_linear_attn(q, k, v, scale, initial_state, output_final_state, normalize)
    for mod, fns in (('delta_net', dict(chunk_delta_rule=delta, fused_recurrent_delta_rule=delta)),
                     ('gated_deltanet', dict(chunk_gated_delta_rule=gated_delta, fused_recurrent_gated_delta_rule=gated_delta)),
                     ('gla', dict(chunk_gla=gla, fused_recurrent_gla=gla, fused_chunk_gla=gla)),
                     ('linear_attn', dict(chunk_linear_attn=linear, fused_chunk_linear_attn=linear, fused_recurrent_linear_attn=linear))):
        m = importlib.import_module(f'fla.layers.{mod}')
        for n, fn in fns.items():
            if hasattr(m, n): monkeypatch.setattr(m, n, fn)
    monkeypatch.setattr(L.GatedDeltaNet, '_use_fused_qkv_conv', lambda self, *a, **kw: False, raising=False)   # the q, k, v convolutions one by one

D, H = 32, 2

def _copy(ours, theirs:dict):
    "Put fla's weights (name -> tensor, in our layer's names) into our layer; every parameter of ours is set."
    sd = ours.state_dict(); missing = set(sd) - set(theirs)
    assert not missing, missing
    ours.load_state_dict({n: theirs[n].detach().clone().to(sd[n]) for n in sd})

def _jitter(layer, gen):
    "fla's norms start at weight 1; random weights make the comparison see them."
    with torch.no_grad():
        for n, p in layer.named_parameters():
            if n.endswith('o_norm.weight'): p.copy_(1 + 0.5 * torch.randn(p.shape, generator=gen))

def _conv_weights(f):
    return {f'convs.{i}.conv.weight': getattr(f, c).weight for i, c in enumerate(('q_conv1d', 'k_conv1d', 'v_conv1d'))}

def _pair_delta(gate, neg):
    f = L.DeltaNet(hidden_size=D, num_heads=H, use_gate=gate, allow_neg_eigval=neg, use_short_conv=True, conv_size=4, norm_eps=1e-5)
    ours = AttentionMixer.from_fla_config(f, model_type='delta_net')      # fla's layer read as a config: the drop-in path
    w = dict(q_proj=f.q_proj, k_proj=f.k_proj, v_proj=f.v_proj, b_proj=f.b_proj, o_proj=f.o_proj)
    return f, ours, {**{f'{n}.weight': m.weight for n, m in w.items()}, 'b_proj.bias': torch.zeros(H), **_conv_weights(f),
                     'o_norm.weight': f.o_norm.weight, **({'gate_proj.weight': f.g_proj.weight} if gate else {})}

def _pair_gated_delta(gate, neg):
    f = L.GatedDeltaNet(hidden_size=D, num_heads=H, head_dim=16, expand_v=1, use_gate=gate, allow_neg_eigval=neg, use_short_conv=True,
                        conv_size=4, norm_eps=1e-5)
    with torch.no_grad(): f.A_log.fill_(math.log(1 / 16))   # ours: log gamma = logsigmoid(W x + b) / 16, fla's gate at exp(A_log) = 1/16
    ours = AttentionMixer.from_fla_config(f, model_type='gated_deltanet')
    # fla: log gamma = -exp(A_log) softplus(a x + dt_bias) = -softplus(a x + dt_bias) / 16 = logsigmoid(-a x - dt_bias) / 16
    return f, ours, {'q_proj.weight': f.q_proj.weight, 'k_proj.weight': f.k_proj.weight, 'v_proj.weight': f.v_proj.weight,
                     'b_proj.weight': f.b_proj.weight, 'b_proj.bias': torch.zeros(H), 'g_proj.weight': -f.a_proj.weight,
                     'g_proj.bias': -f.dt_bias, 'o_proj.weight': f.o_proj.weight, 'o_norm.weight': f.o_norm.weight, **_conv_weights(f),
                     **({'gate_proj.weight': f.g_proj.weight} if gate else {})}

def _pair_gla(gate, neg, conv=False):
    f = L.GatedLinearAttention(hidden_size=D, num_heads=H, expand_k=0.5, expand_v=1, use_output_gate=gate, use_short_conv=conv, norm_eps=1e-5)
    ours = AttentionMixer.from_fla_config(f, model_type='gla')          # no rate, no q/k norm, no conv: fla's GLA defaults
    lo, hi = f.gk_proj[0], f.gk_proj[1]                       # fla's low-rank gate, one full-rank projection of ours
    return f, ours, {'q_proj.weight': f.q_proj.weight, 'k_proj.weight': f.k_proj.weight, 'v_proj.weight': f.v_proj.weight,
                     'g_proj.weight': hi.weight @ lo.weight, 'g_proj.bias': hi.bias, 'o_proj.weight': f.o_proj.weight,
                     'o_norm.weight': f.g_norm_swish_gate.weight if gate else f.g_norm.weight,
                     **({'gate_proj.weight': f.g_proj.weight} if gate else {}), **(_conv_weights(f) if conv else {})}

def _pair_hebbian(gate, neg):
    f = L.LinearAttention(hidden_size=D, num_heads=H, feature_map='identity', output_norm='rmsnorm', norm_eps=1e-5)
    ours = AttentionMixer.from_fla_config(f, model_type='linear_attn')
    return f, ours, {'q_proj.weight': f.q_proj.weight, 'k_proj.weight': f.k_proj.weight, 'v_proj.weight': f.v_proj.weight,
                     'o_proj.weight': f.o_proj.weight, 'o_norm.weight': f.norm.weight}

PAIRS = {'delta': _pair_delta, 'gated-delta': _pair_gated_delta, 'gla': _pair_gla, 'hebbian': _pair_hebbian,
         'gla+conv': lambda gate, neg: _pair_gla(gate, neg, conv=True)}
CASES = [('delta', False, False), ('delta', True, True), ('gated-delta', False, False), ('gated-delta', True, True),
         ('gla', True, False), ('gla', False, False), ('gla+conv', True, False), ('hebbian', False, False)]

@pytest.mark.parametrize('rule, gate, neg', CASES)
def test_mixer_equals_fla_layer_with_the_same_weights(fla_on_cpu, rule, gate, neg):
    "Outputs and input gradients of our layer equal fla's layer (its Triton calls answered by its references), float32, 1e-5 of the largest."
    torch.manual_seed(0); gen = torch.Generator().manual_seed(1)
    f, ours, w = PAIRS[rule](gate, neg)
    _jitter(f, gen); _copy(ours, w)
    x = torch.randn(2, 70, D, generator=gen, requires_grad=True)
    yf = f(x)[0]; yo = ours(x)
    assert yf.shape == yo.shape == x.shape
    err = (yo - yf).abs().max().item(); top = yf.abs().max().item()
    assert err <= 1e-5 * top, (rule, gate, neg, err, top)
    gf, = torch.autograd.grad(yf.square().sum(), x); go, = torch.autograd.grad(yo.square().sum(), x)
    assert (go - gf).abs().max() <= 1e-5 * gf.abs().max(), (rule, gate, neg)

@pytest.mark.parametrize('rule, gate, neg', [('delta', True, False), ('gated-delta', True, True), ('gla', True, False)])
def test_padded_batch_equals_fla_layer(fla_on_cpu, rule, gate, neg):
    "A 0/1 attention_mask (left padding, right padding, none): ours equals fla's layer, which unpads the batch and runs the sequences packed."
    torch.manual_seed(0); gen = torch.Generator().manual_seed(2)
    f, ours, w = PAIRS[rule](gate, neg); _jitter(f, gen); _copy(ours, w)
    x = torch.randn(3, 40, D, generator=gen)
    mask = torch.ones(3, 40, dtype=torch.long); mask[0, :9] = 0; mask[1, 31:] = 0
    yf, yo = f(x, attention_mask=mask)[0], ours(x, attention_mask=mask)
    assert (yo - yf).abs().max() <= 1e-5 * yf.abs().max(), rule
    assert yo[0, :9].abs().max() == 0 and yo[1, 31:].abs().max() == 0

def test_hand_built_layer_equals_the_one_read_from_fla(fla_on_cpu):
    "The constructor with fla's conventions spelled out (scale=None, norm_eps=1e-5, no rate, no q/k norm) builds what from_fla_config reads from fla's GLA."
    f, ours, w = _pair_gla(True, False)
    hand = AttentionMixer(hidden_size=D, num_heads=H, rule='gla', expand_k=0.5, use_gate=True, conv_size=0, qk_norm=False, use_beta=False,
                          scale=None, norm_eps=1e-5)
    assert hand.state_dict().keys() == ours.state_dict().keys() and (hand.scale, hand.norm_eps, hand.qk_norm) == (ours.scale, ours.norm_eps, ours.qk_norm)

def test_fla_layer_config_builds_our_layer(fla_on_cpu):
    "fla's own layer attributes read by `from_fla_config` give our layer of the same sizes (DeltaNet's names)."
    f = L.DeltaNet(hidden_size=D, num_heads=H, expand_v=2, use_gate=True, allow_neg_eigval=True, conv_size=3, layer_idx=2)
    m = AttentionMixer.from_fla_config(f, rule='delta')
    assert (m.d_model, m.H, m.dk, m.dv, m.conv_size, m.layer_idx, m.neg_eigval) == (D, H, f.head_k_dim, f.head_v_dim, 3, 2, True)
    assert m.gate_proj.weight.shape == f.g_proj.weight.shape and m.o_proj.weight.shape == f.o_proj.weight.shape

@pytest.mark.parametrize('kw, mt', [(dict(rule='delta', use_gate=True, allow_neg_eigval=True, expand_v=2, conv_size=3, layer_idx=1), 'delta_net'),
                                    (dict(rule='gated-delta', use_gate=False, expand_v=2, conv_size=2), 'gated_deltanet'),
                                    (dict(rule='gated-delta', head_dim=8, expand_v=2, use_gate=True), 'gated_deltanet'),
                                    (dict(rule='gla', expand_k=0.5, qk_norm=False, use_beta=False, use_gate=True, conv_size=0), 'gla'),
                                    (dict(rule='gla', qk_norm=False, use_beta=False, use_gate=False, conv_size=4, mode='fused_recurrent'), 'gla'),
                                    (dict(rule='hebbian', qk_norm=False, use_beta=False, conv_size=0), 'linear_attn')])
def test_fla_classes_take_to_fla_kwargs(kw, mt):
    "fla's own layer class accepts `to_fla_kwargs()` as it is (no extra keyword), builds the same sizes, and reads back as the same layer."
    from pavlovattn.model.layers import FLA_LAYER_ARGS
    m = AttentionMixer(D, H, scale=None, norm_eps=1e-5, **kw)
    f = getattr(L, FLA_LAYER_ARGS[mt][0])(**m.to_fla_kwargs())
    assert (f.num_heads, f.head_k_dim, f.head_v_dim) == (m.H, m.dk, m.dv)
    back = AttentionMixer.from_fla_config(f, model_type=mt)
    assert back.state_dict().keys() == m.state_dict().keys() and (back.dk, back.dv, back.conv_size, back.gate_proj is None, back.scale, back.norm_eps) == \
           (m.dk, m.dv, m.conv_size, m.gate_proj is None, m.scale, m.norm_eps)


@pytest.mark.parametrize('make, msg', [(lambda: L.DeltaNet(hidden_size=D, num_heads=H, qk_activation='relu'), "qk_activation='relu'"),
                                       (lambda: L.DeltaNet(hidden_size=D, num_heads=H, use_short_conv=False), 'use_short_conv=False'),
                                       (lambda: L.GatedDeltaNet(hidden_size=D, num_heads=H, head_dim=16, num_v_heads=4), 'num_v_heads=4'),
                                       (lambda: L.GatedDeltaNet(hidden_size=D, num_heads=H, head_dim=16, output_gate_activation='sigmoid'), "output_gate_activation='sigmoid'"),
                                       (lambda: L.GatedLinearAttention(hidden_size=D, num_heads=H, clamp_min=-1.0), 'clamp_min=-1.0'),
                                       (lambda: L.GatedLinearAttention(hidden_size=D, num_heads=H, feature_map='relu'), 'feature_map='),
                                       (lambda: L.GatedLinearAttention(hidden_size=D, num_heads=H, fuse_norm=False, gate_fn='sigmoid'), 'gate_fn='),
                                       (lambda: L.LinearAttention(hidden_size=D, num_heads=H), 'feature_map='),
                                       (lambda: L.LinearAttention(hidden_size=D, num_heads=H, feature_map='identity', output_norm='identity'), "output_norm='identity'")])
def test_an_fla_layer_this_layer_does_not_compute_is_refused(make, msg):
    "Read from a built fla layer (its attributes and modules), a setting that changes what it computes and that ours does not compute is refused by name."
    import re, warnings
    with warnings.catch_warnings(): warnings.simplefilter('ignore'); f = make()
    mt = {'DeltaNet': 'delta_net', 'GatedDeltaNet': 'gated_deltanet', 'GatedLinearAttention': 'gla', 'LinearAttention': 'linear_attn'}[type(f).__name__]
    with pytest.raises(ValueError, match=re.escape(msg)): AttentionMixer.from_fla_config(f, model_type=mt)

def test_an_fla_layer_s_norm_epsilon_is_read_from_its_norm():
    "fla's layers keep no norm_eps attribute: the epsilon comes from the layer's output norm (fla's model configs default to 1e-6)."
    assert AttentionMixer.from_fla_config(L.DeltaNet(hidden_size=D, num_heads=H, norm_eps=1e-6), model_type='delta_net').norm_eps == 1e-6

def test_the_fla_defaults_written_here_are_fla_s():
    "FLA_LAYER_DEFAULTS and FLA_LAYER_SETTINGS state fla's layer defaults by hand: each one that is an argument of fla's layer class equals the default in its signature (fla 0.6.0)."
    import inspect
    from pavlovattn.model.layers import FLA_LAYER_ARGS, FLA_LAYER_DEFAULTS, FLA_LAYER_SETTINGS
    ours = {'use_gate': 'use_output_gate'}                                  # GLA's name for the output gate
    checked = 0
    for mt, (cls, _, _) in FLA_LAYER_ARGS.items():
        sig = inspect.signature(getattr(L, cls)).parameters
        stated = {**{n: d for n, (d, _, _) in FLA_LAYER_SETTINGS.get(mt, {}).items()},
                  **{n: v for n, v in FLA_LAYER_DEFAULTS[mt].items() if n not in ('use_beta', 'qk_norm')}}   # our arguments fla's classes lack
        for n, d in stated.items():
            n = n if n in sig else ours.get(n, n)
            if n in sig: assert sig[n].default == d, (cls, n, sig[n].default, d); checked += 1
    assert checked >= 20, checked
