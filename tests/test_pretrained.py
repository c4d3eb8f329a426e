"""The pretrained adapters (pavlovattn.apps.pretrained) at the head sizes of released checkpoints, and `pavlovattn probe-model` end to end on
tiny random models: nothing is downloaded (HF_HUB_OFFLINE), a missing model is one line and exit status 2."""
import importlib, json, math, os, sys
import pytest
os.environ.setdefault('HF_HUB_OFFLINE', '1')
transformers = pytest.importorskip('transformers', reason='the pretrained adapters need transformers (pip install "pavlovattn[hf]")')
import torch
import torch.nn.functional as F
from pavlovattn.apps import pretrained as pt
from pavlovattn.apps.cli import main
from pavlovattn.model.families import family


@pytest.mark.parametrize('arch', ['qwen3_next', 'olmo_hybrid'])
def test_exact_at_checkpoint_head_sizes(arch):
    "Heads of width 128 (the released checkpoints'), 2 key heads over 4 value heads, 130 tokens (3 chunks of 64): replay within 1e-5 relative, float32."
    cname, mname, extra = pt.ARCHS[arch]
    extra = {**extra, 'linear_key_head_dim': 128, 'linear_value_head_dim': 128}
    cfg = getattr(transformers, cname)(vocab_size=50, hidden_size=64, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                                       num_key_value_heads=1, head_dim=16, layer_types=['linear_attention', 'full_attention'], pad_token_id=None,
                                       bos_token_id=None, eos_token_id=None, **extra)
    torch.manual_seed(3); m = getattr(transformers, mname)(cfg).eval()
    (name, r), = [(k, v) for k, v in pt.read_layers(m, torch.randint(0, 50, (1, 130))).items() if k != 'logits']
    assert r.k.shape == (1, 130, 4, 128) and r.core.dtype == torch.float32
    nk = r.k.norm(dim=-1)                                                        # L2-normalised as the layer does (eps 1e-6 under the root)
    assert float(nk.max()) <= 1 + 1e-6 and float(nk.min()) > 0.9
    err = pt.rel_error(pt.replay(r), r.core)
    assert err < 1e-5, err


def test_cli_missing_model(capsys):
    assert main(['probe-model', 'no-such-org/no-such-model']) == 2
    err = capsys.readouterr().err.strip()
    assert '\n' not in err and 'hf download no-such-org/no-such-model' in err


@pytest.mark.parametrize('arch', list(pt.ARCHS))
def test_cli_tiny_json(capsys, arch):
    "probe-model on a tiny random model of every transformers model type, as JSON: the exactness, the text contrasts and every head's row."
    assert main(['probe-model', f'tiny:{arch}', '--n', '2', '--format', 'json']) == 0
    out = json.loads(capsys.readouterr().out)
    assert max(out['exactness'].values()) < 1e-5
    assert [r['contrast'] for r in out['text']][:2] == ['acquisition (vs never-presented)', 'blocking index (control - blocked)']
    assert len(out['heads']) == 4 and {'blocking', 'overshadowing', 'extinction', 'spontaneous recovery'} <= set(out['heads'][0])


def test_paired_se_by_hand():
    "x = (1, 2, 4), y = (0, 1, 1): differences (1, 1, 3), mean 5/3, sd sqrt(4/3), paired s.e. 2/3 (the independent-groups formula gives sqrt(8/9))."
    e, se = pt.paired_effect(torch.tensor([1., 2., 4.]), torch.tensor([0., 1., 1.]))
    assert abs(e - 5 / 3) < 1e-12 and abs(se - 2 / 3) < 1e-12
    assert pt.paired_effect([2.], [1.]) == (1.0, 0.0)


@pytest.mark.parametrize('arch', list(pt.ARCHS))
def test_cached_decoding_equals_full_pass(arch):
    "The first token, then one token at a time from the model's cache: every layer's reading (q, k, v, beta, gamma, core) and the logits equal the full uncached pass, and our recurrence replays the cached reading."
    m = pt.tiny_model(arch)
    ids = torch.randint(0, 64, (1, 20), generator=torch.Generator().manual_seed(4))
    full, step = pt.read_layers(m, ids), pt.read_layers(m, ids, cached=True)
    assert full.keys() == step.keys() and len(full) == 2
    assert pt.rel_error(step['logits'], full['logits']) < 1e-5
    for name, r in full.items():
        if name == 'logits': continue
        s = step[name]
        for f in ('q', 'k', 'v', 'beta', 'gamma', 'core'):
            assert pt.rel_error(getattr(s, f), getattr(r, f)) < 1e-5, (arch, name, f)
        assert pt.rel_error(pt.replay(s), s.core) < 1e-5


def test_cached_probe_equals_full_probe():
    "A text prompt's US log-probability read token by token from the cache equals the uncached one (the probe of the page)."
    m, tok = pt.tiny_model('qwen3_5', vocab=len(pt.word_tokenizer())), pt.word_tokenizer()
    p = pt.text_design(pt.DESIGNS['blocking'], 1)['exp'][0][0]
    ids, _, us = pt._encode(tok, p)
    lp = float(pt.read_layers(m, ids, cached=True)['logits'][0, -1].log_softmax(-1)[us])
    assert abs(lp - pt.us_logprob(m, tok, p)) < 1e-5


def test_reading_refuses_a_cache_it_did_not_see():
    "A cached step from a state filled outside this reading, or from another sequence's state, is refused, not misread."
    m = pt.tiny_model('qwen3_5')
    a, b = (torch.randint(0, 64, (1, 8), generator=torch.Generator().manual_seed(s)) for s in (1, 2))
    with torch.no_grad():
        with pt.reading(m): out = m(input_ids=a, use_cache=True)
        with pytest.raises(ValueError, match='did not see'):
            with pt.reading(m): m(input_ids=a[:, :1], past_key_values=out.past_key_values, use_cache=True)
        with pytest.raises(ValueError, match='not the one its reading reaches'):
            with pt.reading(m):
                m(input_ids=b, use_cache=False)                 # the reading holds sequence b; the cache holds sequence a
                m(input_ids=a[:, :1], past_key_values=out.past_key_values, use_cache=True)


# fla's own model classes (package flash-linear-attention, in the dev extra with Triton to import it, so CI runs these): their layers' Triton calls answered by fla's
# torch references, through the layers' fixture of tests/test_fla_layers.py; the MLP's SwiGLU, GLA's and RetNet's output
# gate and HGRN2's output norm (Triton) by their torch forms (all after the recurrence), HGRN2's query activation (fla's
# Triton swish) by torch's SiLU; RetNet's rotary embedding and retention, and KDA's gate and recurrence, by fla's torch references.
def _fla_missing():
    try: importlib.import_module('fla.models'); importlib.import_module('fla.layers'); return None
    except Exception as e: return f'{type(e).__name__}: {e}'.splitlines()[0]

FLA = _fla_missing()
needs_fla = pytest.mark.skipif(FLA is not None, reason=f"fla's model classes do not import here ({FLA}); pip install -e '.[dev]' (or '.[fla]')")
if FLA is None:
    sys.path.insert(0, os.path.dirname(__file__))
    from test_fla_layers import fla_on_cpu, _l2   # noqa: F401  (the fixture, and fla's q/k norm)

    @pytest.fixture
    def fla_models_on_cpu(fla_on_cpu, monkeypatch):
        import fla.modules.mlp as mlp, fla.modules.rotary.ops as rot, fla.layers.multiscale_retention as msr
        from fla.ops.retention.naive import naive_retention
        monkeypatch.setattr(mlp, 'swiglu', lambda x, y: F.silu(x.float()).to(x) * y)
        import fla.layers.kda as kda                                           # KDA: fla's reference recurrence and gates, its kernel's flags applied
        from fla.ops.kda.naive import naive_recurrent_kda
        from fla.ops.kda.gate import naive_kda_gate, naive_kda_lowerbound_gate
        def kda_ref(q, k, v, g, beta, A_log=None, dt_bias=None, scale=None, initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=False,
                    use_gate_in_kernel=False, use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False, lower_bound=None, cu_seqlens=None, **kw):
            assert cu_seqlens is None
            if use_qk_l2norm_in_kernel: q, k = _l2(q), _l2(k)
            if use_beta_sigmoid_in_kernel: beta = beta.sigmoid() * (2 if allow_neg_eigval else 1)
            if use_gate_in_kernel: g = naive_kda_gate(g, A_log, dt_bias) if lower_bound is None else naive_kda_lowerbound_gate(g, A_log, dt_bias, lower_bound)
            return naive_recurrent_kda(q, k, v, g, beta, scale, initial_state, output_final_state)
        for n in ('chunk_kda', 'fused_recurrent_kda'): monkeypatch.setattr(kda, n, kda_ref)
        from fla.modules.activations import ACT2FN                             # GLA's and RetNet's output gate as built (e.g. by loading): torch's SiLU
        monkeypatch.setitem(ACT2FN, 'swish', F.silu)
        def rotary(x, cos, sin, interleaved=False, seqlen_offsets=0, cu_seqlens=None, **kw):   # fla's torch reference at the positions
            assert cu_seqlens is None and isinstance(seqlen_offsets, int)
            T = x.shape[1]; return rot.rotary_embedding_ref(x, cos[seqlen_offsets:seqlen_offsets + T], sin[seqlen_offsets:seqlen_offsets + T], interleaved)
        monkeypatch.setattr(rot, 'rotary_embedding', rotary)
        def retention(q, k, v, initial_state=None, output_final_state=False, cu_seqlens=None, **kw):   # fla's reference, heads first
            assert initial_state is None and cu_seqlens is None
            return naive_retention(*(x.transpose(1, 2) for x in (q, k, v))).transpose(1, 2), None
        for n in ('chunk_retention', 'fused_chunk_retention', 'parallel_retention', 'fused_recurrent_retention'): monkeypatch.setattr(msr, n, retention)
        import fla.layers.gla as gla, fla.layers.hgrn2 as hgrn2                # HGRN2 calls GLA's recurrence: the same references
        for n in ('chunk_gla', 'fused_chunk_gla', 'fused_recurrent_gla'): monkeypatch.setattr(hgrn2, n, getattr(gla, n))
        monkeypatch.setattr(hgrn2, 'swish', F.silu)                            # its query activation (fla's Triton swish: x sigmoid(x))
        from fla.modules.norm import layernorm                                 # HGRN2's output norm and projection (after the recurrence)
        monkeypatch.setattr(hgrn2, 'rms_norm_linear', lambda x, nw, nb, lw, lb, residual=None, eps=1e-5, **kw:
                            F.linear(layernorm.rms_norm_ref(x, nw, nb, eps=eps, upcast=True).to(x), lw, lb))

FLA_MODELS = [('DeltaNet', 'delta'), ('GatedDeltaNet', 'gated-delta'), ('GLA', 'gla'), ('RetNet', 'decay'), ('HGRN2', 'gla'), ('LinearAttention', 'hebbian'),
              ('KDA', 'channel-gate')]

def fla_model(name, vocab=50, seed=0, **kw):
    import fla.models as M
    cfg = getattr(M, f'{name}Config')(hidden_size=32, num_heads=2, num_hidden_layers=2, vocab_size=vocab, hidden_ratio=2, fuse_norm=False,
                                      fuse_swiglu=False, fuse_cross_entropy=False, **(dict(expand_ratio=16) if name == 'HGRN2' else {}), **kw)
    torch.manual_seed(seed); m = getattr(M, f'{name}ForCausalLM')(cfg).eval()
    for layer in m.model.layers:
        if hasattr(layer.attn, 'gate_fn'):   # GLA's and RetNet's output gate (fla's Triton swish), after the recurrence
            layer.attn.gate_fn = torch.nn.SiLU() if isinstance(layer.attn.gate_fn, torch.nn.Module) else F.silu
    return m

@needs_fla
@pytest.mark.parametrize('name, rule', FLA_MODELS)
def test_fla_model_exact(fla_models_on_cpu, name, rule):
    "fla's DeltaNet, Gated DeltaNet, GLA, RetNet and HGRN2 models: each layer's reading (after its convolutions, activations, q/k norm, beta sigmoid and gate) replayed by our recurrence gives its core output within 1e-5, float32, over 70 tokens."
    m = fla_model(name)
    R = pt.read_layers(m, torch.randint(0, 50, (2, 70), generator=torch.Generator().manual_seed(5)))
    layers = {k: r for k, r in R.items() if k != 'logits'}
    assert list(layers) == ['model.layers.0.attn', 'model.layers.1.attn']
    for r in layers.values():
        assert r.rule == rule and r.core.shape == r.v.shape
        assert (r.gamma.dim() == 4) == (family(rule).gate == 'channel') and bool(((r.gamma > 0) & (r.gamma <= 1)).all())
        err = pt.rel_error(pt.replay(r), r.core)
        assert err < 1e-5, (name, err)

@needs_fla
@pytest.mark.parametrize('name, rule', [('GLA', 'gla'), ('RetNet', 'decay')])
def test_fla_model_probes(fla_models_on_cpu, name, rule):
    "probe_model end to end on fla's GLA (per-channel gates through the head battery) and RetNet (fixed decays) models, with the word tokenizer."
    tok = pt.word_tokenizer(); m = fla_model(name, vocab=len(tok))
    res = pt.probe_model(m, tok, n=2)
    assert max(res['exactness'].values()) < 1e-5 and set(res['heads']['rule']) == {rule} and len(res['heads']) == 4
    assert res['text'].shape[0] == 4 + len(pt.INTERVALS) - 1


# fla's own cache API: `fla.models`' Cache (`past_key_values`) holds each layer's recurrent state and its short convolutions'
# last inputs. On a CPU its Triton code is answered as above, plus what a cached pass needs: the short convolution with a
# cache (its last W inputs before the new ones; a single token updates it in place, as fla's step does), the state's layout
# `state_v_first` honoured (fla's Gated DeltaNet and GLA keep [B,H,dv,dk]), and retention from a state (fla's own
# `fused_recurrent_retention` is simple GLA with the fixed decay, so fla's simple-GLA reference answers it).
if FLA is None:
    @pytest.fixture
    def fla_cache_on_cpu(fla_models_on_cpu, monkeypatch):
        import fla.layers as FL
        from fla.modules import ShortConvolution
        from pavlovattn.model.families import fla_references
        def conv(self, x, residual=None, mask=None, cache=None, output_final_state=False, cu_seqlens=None, **kw):
            assert residual is None and mask is None and cu_seqlens is None
            N, T, D = x.shape; W = self.weight.shape[-1]
            xs = torch.cat([x.new_zeros(N, D, W) if cache is None else cache.to(x), x.transpose(1, 2)], -1)   # [N,D,W+T]: past W inputs, then x
            y = F.conv1d(xs[..., 1:], self.weight, self.bias, groups=D).transpose(1, 2)
            y = F.silu(y) if self.activation in ('silu', 'swish') else y
            last = xs[..., -W:]
            if T == 1 and not torch.is_grad_enabled():                  # fla's decode step: the cache updated in place, and returned
                if cache is None: return y, last.clone()
                cache.copy_(last); return y, cache
            return y, (last.clone() if output_final_state else None)
        monkeypatch.setattr(ShortConvolution, 'forward', conv)
        simple = fla_references()['simple_gla']
        def retention(q, k, v, initial_state=None, output_final_state=False, cu_seqlens=None, scale=None, **kw):
            assert cu_seqlens is None
            g = torch.log1p(-torch.exp2(-5.0 - torch.arange(q.shape[2], dtype=torch.float))).expand(q.shape[:3])
            return simple(q, k, v, g, scale, initial_state, output_final_state)
        def v_first(f):
            def g(*a, state_v_first=False, initial_state=None, **kw):
                t = (lambda S: S if S is None or not state_v_first else S.transpose(-1, -2).contiguous())
                o, S = f(*a, initial_state=t(initial_state), **kw)
                return o, t(S)
            return g
        for cls, (names, _) in pt.FLA_LAYERS.items():
            mod = sys.modules[getattr(FL, cls).__module__]
            for n in names:
                if hasattr(mod, n): monkeypatch.setattr(mod, n, v_first(retention if n.endswith('retention') else getattr(mod, n)))

@needs_fla
@pytest.mark.parametrize('name, rule', FLA_MODELS)
def test_fla_cached_decoding_equals_full_pass(fla_cache_on_cpu, name, rule):
    "fla's models decoding from their own cache (`past_key_values`, fla's Cache): the first token, then one at a time, two sequences: every layer's reading and the logits equal the full uncached pass (1e-5, float32), and each cached state met on the way is the one our recurrence reaches (checked by `reading`)."
    m = fla_model(name)
    ids = torch.randint(0, 50, (2, 12), generator=torch.Generator().manual_seed(6))
    full, step = pt.read_layers(m, ids), pt.read_layers(m, ids, cached=True)
    assert type(m(input_ids=ids[:, :1], use_cache=True).past_key_values).__module__.startswith('fla.')
    assert full.keys() == step.keys() and len(full) == 3
    assert pt.rel_error(step['logits'], full['logits']) < 1e-5
    for n, r in full.items():
        if n == 'logits': continue
        s = step[n]; assert s.rule == rule
        for f in ('q', 'k', 'v', 'beta', 'gamma', 'core'):
            assert pt.rel_error(getattr(s, f), getattr(r, f)) < 1e-5, (name, n, f)
        assert pt.rel_error(pt.replay(s), s.core) < 1e-5

@needs_fla
def test_fla_generate_is_read_whole(fla_cache_on_cpu):
    "fla's `generate` (greedy, its own cache): one reading covers the prompt and every generated token fed back, and equals a full pass over them."
    m = fla_model('GatedDeltaNet')
    ids = torch.randint(0, 50, (1, 9), generator=torch.Generator().manual_seed(7))
    with torch.no_grad(), pt.reading(m) as r:
        out = m.generate(input_ids=ids, max_new_tokens=5, do_sample=False, use_cache=True)
    assert out.shape == (1, 14)
    full = pt.read_layers(m, out[:, :-1])                               # the last generated token is never fed back
    for n, s in r.layers.items():
        assert s.k.shape[1] == 13
        for f in ('q', 'k', 'v', 'beta', 'gamma', 'core'):
            assert pt.rel_error(getattr(s, f), getattr(full[n], f)) < 1e-5, (n, f)


def _same_results(out, api):
    "The CLI's JSON and the API's summary of the same model: the same layers, contrasts and heads, numbers within 1e-6 (float32 passes)."
    assert out['exactness'].keys() == api['exactness'].keys() and max(out['exactness'].values()) < 1e-5
    assert [r['contrast'] for r in out['text']] == [r['contrast'] for r in api['text']] and len(out['heads']) == len(api['heads'])
    for a, b in zip(out['text'] + out['heads'], api['text'] + api['heads']):
        for k, v in b.items():
            if isinstance(v, float): assert abs(a[k] - v) <= 1e-6 * max(1.0, abs(v)), (k, a[k], v)
            else: assert a[k] == v, (k, a[k], v)

@pytest.mark.parametrize('arch', list(pt.ARCHS))
def test_cli_local_directory(tmp_path, capsys, arch):
    """Every transformers model type saved to a directory (`save_pretrained`, with the page's word tokenizer), then `pavlovattn probe-model DIR`: loaded by transformers' own loader from that directory, nothing fetched, and its JSON equals the API's `probe_model` on the model in memory.
    Qwen3.5-MoE: transformers (5.23) loads a directory of that model type with Qwen3.5's own tokenizer class, which does not read the word tokenizer's vocabulary back: the command says so in one line (exit 2) rather than probing unknown tokens."""
    tok = pt.word_tokenizer(); m = pt.tiny_model(arch, vocab=len(tok), seed=2)
    m.save_pretrained(tmp_path); tok.save_pretrained(tmp_path)
    code = main(['probe-model', str(tmp_path), '--n', '2', '--format', 'json']); out, err = capsys.readouterr()
    if arch == 'qwen3_5_moe':
        last = err.strip().splitlines()[-1]                             # after transformers' own progress bars
        assert code == 2 and last.startswith('pavlovattn probe-model: the tokenizer') and 'does not cover the prompt' in last; return
    assert code == 0
    _same_results(json.loads(out), json.loads(json.dumps(pt.summary(pt.probe_model(m, tok, n=2), str(tmp_path)))))

@needs_fla
@pytest.mark.parametrize('name', [n for n, _ in FLA_MODELS])
def test_fla_cli_local_directory(fla_models_on_cpu, tmp_path, capsys, name):
    "fla's models saved to a directory, then `pavlovattn probe-model DIR` (fla's model types registered with transformers' loader by `load_model`): the JSON equals the API's `probe_model` on the model in memory."
    tok = pt.word_tokenizer(); m = fla_model(name, vocab=len(tok), seed=2, **(dict(head_dim=16) if name == 'GatedDeltaNet' else {}))   # fla's reference loops over heads of 256 x 512 slowly
    m.save_pretrained(tmp_path); tok.save_pretrained(tmp_path)
    assert main(['probe-model', str(tmp_path), '--n', '2', '--format', 'json']) == 0
    _same_results(json.loads(capsys.readouterr().out), json.loads(json.dumps(pt.summary(pt.probe_model(m, tok, n=2), str(tmp_path)))))

@needs_fla
def test_fla_normalised_linear_attention_refused(fla_models_on_cpu):
    "fla's linear attention with its normalised read-out (S q / z q, cached as the pair (S, z)) is refused in one line, and the model's functions are put back."
    import fla.layers.linear_attn as la
    m = fla_model('LinearAttention', norm_feature_map=True); before = la.fused_recurrent_linear_attn
    with pytest.raises(ValueError, match='normalised read-out'): pt.read_layers(m, torch.randint(0, 50, (1, 6)))
    assert la.fused_recurrent_linear_attn is before

@needs_fla
def test_fla_kda_bounded_gate_exact(fla_models_on_cpu):
    "KDA with its lower-bounded gate (b sigmoid(e^A (a + dt)), b = -5) and negative eigenvalues allowed (beta up to 2): the reading replays the layer within 1e-5, and its decays lie in [e^-5, 1]."
    m = fla_model('KDA', lower_bound=-5.0, allow_neg_eigval=True)
    R = pt.read_layers(m, torch.randint(0, 50, (2, 70), generator=torch.Generator().manual_seed(8)))
    for k, r in R.items():
        if k == 'logits': continue
        assert float(r.gamma.min()) >= math.exp(-5) - 1e-7 and float(r.beta.max()) > 1
        assert pt.rel_error(pt.replay(r), r.core) < 1e-5


# --- the design compiler (issue 45): the head battery's steps and runs are what they were before compile_group and probe_rule ---

def _steps_before(design):
    "pretrained._steps before it took its steps from `compile_group` (kept here)."
    from pavlovattn.design.designs import parse_design
    return {g.name: [(t.cues, 1.0 if t.outcome == '+' else 0.0, t.label if t.probe else None) for p in g.phases for t in p.trials for _ in range(t.count)]
            for g in parse_design(design).groups}

def _head_run_before(steps, nums, rule):
    "head_run with its own probe rule (kept here): a probe's rate 0 and decay 1 left as initialised."
    from pavlovattn.model.core import recur
    K, B, G = nums['k'], nums['beta'], nums['gamma']
    n, H, dk = next(iter(K.values())).shape; T = len(steps); gs = next(iter(G.values())).shape[2:]
    k = torch.zeros(n, T, H, dk, dtype=torch.float64); v = torch.zeros(n, T, H, 1, dtype=torch.float64)
    b = torch.zeros(n, T, H, dtype=torch.float64); g = torch.ones(n, T, H, *gs, dtype=torch.float64)
    for t, (cues, lam, probe) in enumerate(steps):
        if not cues: g[:, t] = G['A']; continue
        k[:, t] = F.normalize(sum(K[c] for c in cues), dim=-1)
        if probe is None: g[:, t] = sum(G[c] for c in cues) / len(cues); b[:, t] = sum(B[c] for c in cues) / len(cues); v[:, t, :, 0] = lam
    pred = recur(k, v, rule=rule, beta=b, gamma=g if 'gamma' in family(rule).params else None).pred[..., 0]
    return {probe: pred[:, t] for t, (_, _, probe) in enumerate(steps) if probe is not None}

def test_head_battery_steps_and_runs_are_what_they_were_before_the_design_compiler():
    "Bit for bit: the steps of every design the head battery runs (and a multi-phase one), and every head's read-outs at its probes, for the linear families a pretrained layer reads as (scalar and per-channel gates, none)."
    gen = torch.Generator().manual_seed(5)
    groups = [st for _, gs, *_ in pt._head_phenomena() for st in gs.values()]
    for design in [ph.design for ph in pt.dissociation.PHENOMENA.values()] + ['a: 3A+ | 2A- | #A/2#AB ; b: 3(ctx)+ | 2A(ctx)- | #A(ctx)']:
        want = _steps_before(design)
        assert pt._steps(design) == want, design
        groups += list(want.values())
    for rule, channel in (('gated-delta', False), ('gla', True), ('delta', False), ('decay', False), ('channel-gate', True)):
        cues = {c for st in groups for cs, _, _ in st for c in cs} | {'A'}
        nums = {'k': {c: F.normalize(torch.randn(4, 3, 5, generator=gen, dtype=torch.float64), dim=-1) for c in cues},
                'beta': {c: torch.rand(4, 3, generator=gen, dtype=torch.float64) for c in cues},
                'gamma': {c: 0.3 + 0.7 * torch.rand(4, 3, *((5,) if channel else ()), generator=gen, dtype=torch.float64) for c in cues}}
        for st in groups:
            got, want = pt.head_run(st, nums, rule), _head_run_before(st, nums, rule)
            assert list(got) == list(want) and all(torch.equal(got[p], want[p]) for p in want), (rule, st)
