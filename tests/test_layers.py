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
