"""Issue 32 reproducer 13: `train(..., threads=None)` changed its loss by 2.4e-7 between 1 and 2 threads. What `train` promises
(its `threads` argument): the same thread count gives bit-identical runs, the default (1 thread, what `get_model` trains
checkpoints with) whatever torch's own setting is, and another count changes only the last bits (float32 sums in another order)."""
import torch
from pavlovattn.apps.models import TrainConfig, train

CFG = TrainConfig(steps=4, d_model=16, n_layers=1)

def weights(**kw):
    m, met = train(CFG, progress=False, **kw)
    return torch.cat([p.detach().flatten() for p in m.parameters()]), met['final_loss']

def test_the_default_is_one_thread_whatever_torch_is_set_to():
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(1); a, la = weights()
        torch.set_num_threads(2); b, lb = weights()
        assert torch.get_num_threads() == 2                                   # restored after training
    finally: torch.set_num_threads(old)
    assert torch.equal(a, b) and la == lb

def test_the_same_thread_count_repeats_bit_for_bit_and_another_changes_only_the_last_bits():
    one, l1 = weights(threads=1)
    two, l2 = weights(threads=2)
    two_again, l2b = weights(threads=2)
    assert torch.equal(two, two_again) and l2 == l2b
    assert (one - two).abs().max() <= 1e-5 * max(1.0, float(one.abs().max())) and abs(l1 - l2) <= 1e-5
