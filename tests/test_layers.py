"AttentionMixer: every family trains; a tiny model learns in-context associative recall on CPU."
import pytest, torch
from torch import nn
from pavlovattn.layers import AttentionMixer
from pavlovattn.families import FAMILIES

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
    for rule in FAMILIES:
        if FAMILIES[rule].exemplar: continue
        m = AttentionMixer(32, 2, rule, algorithm='sequential').double()
        ys = m(x); m.algorithm = 'chunked'; yc = m(x)
        assert (ys - yc).abs().max() < 1e-10, rule

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
    from pavlovattn import layers
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
