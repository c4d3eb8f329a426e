"""What `pavlovattn probe-model` costs on a checkpoint of a given size, measured without downloading one: a randomly
initialised `transformers` Qwen3.5 model with a released hybrid's shapes (hidden size HIDDEN, LAYERS layers, three of
every four Gated DeltaNet, heads of 128, vocabulary 151,936) costs what the real weights cost, whatever their values.

Part `pass` (the default): one forward pass of a TOKENS-token prompt (no cache) inside `pretrained.reading` (as every pass of probe-model runs), the unit `probe_model` repeats 28n + 1 times
(`pretrained.probe_model`: exactness 1, head battery 2n, text probes 26n prompts). Baseline, in the same run: the same
pass on the page's tiny random model (`pretrained.tiny_model('qwen3_5')`); the table gives both times, their ratio, the
peak resident memory, and the run time that the per-pass time implies for n sequences.
Protocol: one warm-up pass, then the median of REPEATS passes.

Part `probes`: the measurements themselves on the same random model, with the page's word tokenizer (one token a word;
a checkpoint's tokenizer cuts nonce words into more pieces, so its prompts are longer): the head-level battery
(`cue_numbers` + `head_battery`, 2n unbatched passes of the blocking design's prompts) and one model-level probe design
(`text_scores` of the blocking design, 4n prompts, batched by length), each once after one warm-up pass, wall and CPU
time (user + system, all threads: less sensitive to other jobs) and the process's peak resident memory after it; the full `probe_model` time at n is then extrapolated from them (stated as such: 26n text prompts at the
blocking design's rate per prompt), never measured. Baseline, in the same run: the same two steps on the page's tiny model.
Usage:
python benchmarks/bench_pretrained.py [--part pass|probes|all] [--hidden 1024] [--layers 24] [--tokens 150] [--repeats 3]
       [--n 20] [--probe-n 2] [--device cpu] [--dtype float32]
(hidden 1024 / 24 layers is 0.65 B parameters; hidden 2048 / 28 layers 2.6 B, counted on the meta device.)
"""
import argparse, os, resource, statistics, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import torch
import transformers
from pavlovattn.apps import pretrained as pt
from pavlovattn.apps.pretrained import tiny_model, reading


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


def rss_gb():
    "Peak resident memory of this process so far, GB (Linux reports KiB)."
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


def probes(m, tok, n, seed=0):
    "((wall s, CPU s, peak RSS GB) after the head-level battery, the same after one model-level design (blocking)), each run once on `n` sequences; CPU s: this process's user + system time, all threads (less sensitive to other jobs on the machine than wall time)."
    def timed(f):
        w, c = time.perf_counter(), time.process_time(); f()
        return time.perf_counter() - w, time.process_time() - c, rss_gb()
    return (timed(lambda: pt.head_battery(pt.cue_numbers(m, tok, n, seed))),
            timed(lambda: pt.text_scores(m, tok, pt.DESIGNS['blocking'], n, seed)))


def header(a, m):
    P = sum(x.numel() for x in m.parameters())
    load = os.getloadavg()
    print(f'{P / 1e9:.2f} B parameters ({a.dtype}, {a.device}, {torch.get_num_threads()} threads; {os.cpu_count()} cores, '
          f'load average {load[0]:.1f} / {load[1]:.1f} over 1 / 5 min at the start)')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--part', choices=('pass', 'probes', 'all'), default='pass')
    p.add_argument('--hidden', type=int, default=1024); p.add_argument('--layers', type=int, default=24)
    p.add_argument('--tokens', type=int, default=150); p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--n', type=int, default=20); p.add_argument('--probe-n', type=int, default=2)
    p.add_argument('--device', default='cpu'); p.add_argument('--dtype', default='float32')
    a = p.parse_args()
    for name in ('tokens', 'repeats', 'n', 'probe_n', 'hidden', 'layers'):
        if getattr(a, name) < 1: p.error(f'--{name.replace("_", "-")} must be at least 1')
    if a.part in ('pass', 'all'):
        base = seconds(tiny_model('qwen3_5', device=a.device), a.tokens, a.repeats, a.device)
        r0 = rss_gb(); m = model_of(a.hidden, a.layers, a.dtype, a.device); header(a, m)
        print(f'  peak RSS after building the model: {rss_gb():.1f} GB (before: {r0:.1f} GB)')
        s = seconds(m, a.tokens, a.repeats, a.device)
        print(f'  pass: {s:.3f} s   tiny model: {base:.4f} s   ratio {s / base:.0f}   peak RSS {rss_gb():.1f} GB')
        print(f'  probe-model --n {a.n}: {28 * a.n + 1} prompts, about {(28 * a.n + 1) * s / 60:.0f} min at this rate (unbatched)')
        del m
    if a.part in ('probes', 'all'):
        tok = pt.word_tokenizer(); n = a.probe_n
        lens = sorted({pt._encode(tok, s[0])[0].shape[1] for seqs in pt.text_design(pt.DESIGNS['blocking'], n).values() for s in seqs})
        (bh, _, _), (bt, _, _) = probes(tiny_model('qwen3_5', vocab=len(tok), device=a.device), tok, n)
        r0 = rss_gb(); m = model_of(a.hidden, a.layers, a.dtype, a.device); header(a, m)
        print(f'  probes, n = {n} sequences, blocking prompts of {"/".join(map(str, lens))} tokens (word tokenizer); '
              f'peak RSS {r0:.1f} GB before the model, {rss_gb():.1f} GB after building it')
        w, c = time.perf_counter(), time.process_time()                      # warm-up: the first pass of a model costs more (timed apart)
        pt.us_logprob(m, tok, pt.text_design(pt.DESIGNS['blocking'], 1, 1)['exp'][0][0])
        print(f'  first pass (warm-up, not in the rates below): {time.perf_counter() - w:.1f} s wall, {time.process_time() - c:.1f} s CPU')
        (th, ch, rh), (tt, ct, rt) = probes(m, tok, n)
        print(f'  head-level battery: {th:.1f} s wall, {ch:.1f} s CPU ({2 * n} passes; tiny model {bh:.2f} s wall)   peak RSS {rh:.1f} GB')
        print(f'  model-level design (blocking): {tt:.1f} s wall, {ct:.1f} s CPU ({4 * n} prompts, batched; tiny model {bt:.2f} s wall)   peak RSS {rt:.1f} GB')
        scale = lambda h, t: h / (2 * n) + h / n * a.n + t / (4 * n) * 26 * a.n
        print(f'  extrapolated, not measured: probe-model --n {a.n} about {scale(th, tt) / 60:.0f} min wall at these rates, {scale(ch, ct) / 60:.0f} min of CPU time '
              f'(exactness 1 pass + battery {2 * a.n} passes + text probes {26 * a.n} prompts at the blocking rate)')
    print(f'  load average at the end: {os.getloadavg()[0]:.1f} (1 min)')


if __name__ == '__main__': main()
