"""What `pavlovattn probe-model` costs on a checkpoint of a given size, measured without downloading one: a randomly
initialised `transformers` Qwen3.5 model with a released hybrid's shapes (hidden size HIDDEN, LAYERS layers, three of
every four Gated DeltaNet, heads of 128, vocabulary 151,936) costs what the real weights cost, whatever their values.

Workload: one forward pass of a TOKENS-token prompt (no cache) inside `pretrained.reading` (as every pass of probe-model runs), the unit `probe_model` repeats 28n + 1 times
(`pretrained.probe_model`: exactness 1, head battery 2n, text probes 26n prompts). Baseline, in the same run: the same
pass on the page's tiny random model (`pretrained.tiny_model('qwen3_5')`); the table gives both times, their ratio, the
peak resident memory, and the run time that the per-pass time implies for n sequences.
Protocol: one warm-up pass, then the median of REPEATS passes. Usage:
python benchmarks/bench_pretrained.py [--hidden 1024] [--layers 24] [--tokens 150] [--repeats 3] [--n 20] [--device cpu] [--dtype float32]
(hidden 1024 / 24 layers is about 0.65 B parameters; hidden 2048 / 28 layers about 2 B.)
"""
import argparse, os, resource, statistics, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import torch
import transformers
from pavlovattn.pretrained import tiny_model, reading


def model_of(hidden, layers, dtype, device):
    "A random Qwen3.5 causal LM of a released hybrid's shapes."
    types = ['full_attention' if (i + 1) % 4 == 0 else 'linear_attention' for i in range(layers)]
    cfg = transformers.Qwen3_5TextConfig(vocab_size=151936, hidden_size=hidden, intermediate_size=int(3.5 * hidden), num_hidden_layers=layers,
                                         num_attention_heads=hidden // 128, num_key_value_heads=min(2, hidden // 128), head_dim=256, linear_num_key_heads=hidden // 64,
                                         linear_num_value_heads=hidden // 64, linear_key_head_dim=128, linear_value_head_dim=128,
                                         linear_conv_kernel_dim=4, layer_types=types, pad_token_id=None, bos_token_id=None,
                                         eos_token_id=None, tie_word_embeddings=True)
    return transformers.Qwen3_5ForCausalLM(cfg).to(device=device, dtype=getattr(torch, dtype)).eval()


@torch.no_grad()
def seconds(m, tokens, repeats, device):
    "Median seconds of one uncached forward pass of `tokens` random tokens, its layers read as `probe_model` reads them (after one warm-up pass)."
    ids = torch.randint(0, m.config.vocab_size, (1, tokens), device=device)
    def once():
        t = time.perf_counter()
        with reading(m): m(input_ids=ids, use_cache=False)
        if device != 'cpu': torch.cuda.synchronize()
        return time.perf_counter() - t
    once()
    return statistics.median(once() for _ in range(repeats))


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--hidden', type=int, default=1024); p.add_argument('--layers', type=int, default=24)
    p.add_argument('--tokens', type=int, default=150); p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--n', type=int, default=20); p.add_argument('--device', default='cpu'); p.add_argument('--dtype', default='float32')
    a = p.parse_args()
    base = seconds(tiny_model('qwen3_5', device=a.device), a.tokens, a.repeats, a.device)
    m = model_of(a.hidden, a.layers, a.dtype, a.device)
    P = sum(x.numel() for x in m.parameters())
    s = seconds(m, a.tokens, a.repeats, a.device)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f'{P / 1e9:.2f} B parameters ({a.dtype}, {a.device}, {torch.get_num_threads()} threads), {a.tokens} tokens a pass')
    print(f'  pass: {s:.3f} s   tiny model: {base:.4f} s   ratio {s / base:.0f}   peak RSS {rss:.1f} GB')
    print(f'  probe-model --n {a.n}: {28 * a.n + 1} prompts, about {(28 * a.n + 1) * s / 60:.0f} min at this rate (unbatched)')


if __name__ == '__main__': main()
