"""The pretrained adapters (pavlovattn.pretrained) at the head sizes of released checkpoints, and `pavlovattn probe-model` end to end on
tiny random models: nothing is downloaded (HF_HUB_OFFLINE), a missing model is one line and exit status 2."""
import json, os
import pytest
os.environ.setdefault('HF_HUB_OFFLINE', '1')
transformers = pytest.importorskip('transformers', reason='the pretrained adapters need transformers (pip install "pavlovattn[hf]")')
import torch
from pavlovattn import pretrained as pt
from pavlovattn.cli import main


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


def test_cli_tiny_json(capsys):
    "probe-model on a tiny random model, as JSON: the exactness, the text contrasts and every head's row."
    assert main(['probe-model', 'tiny:qwen3_5', '--n', '2', '--format', 'json']) == 0
    out = json.loads(capsys.readouterr().out)
    assert max(out['exactness'].values()) < 1e-5
    assert [r['contrast'] for r in out['text']][:2] == ['acquisition (vs never-presented)', 'blocking index (control - blocked)']
    assert len(out['heads']) == 4 and {'blocking', 'overshadowing', 'extinction', 'spontaneous recovery'} <= set(out['heads'][0])


def test_reading_refuses_cached_decode():
    "One cached decoding step runs from a stored state that the reading did not see: refused, not misread."
    m = pt.tiny_model('qwen3_5')
    ids = torch.randint(0, 64, (1, 8))
    with torch.no_grad():
        out = m(input_ids=ids, use_cache=True)
        with pytest.raises(ValueError, match='cached state'):
            with pt.reading(m): m(input_ids=ids[:, :1], past_key_values=out.past_key_values, use_cache=True)
