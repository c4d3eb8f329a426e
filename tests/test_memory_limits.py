"""Issue 32 (robustness, wave 3), reproducer 5: memory is counted before it is spent, against the real limit.

A child process lowers its own address-space limit (RLIMIT_AS, what `ulimit -v` sets) to 1 GiB above what it already uses;
every library entry point is then asked for a call of a few GiB. Each must be refused with one `SizeError` line that names the
size and the limit, before it allocates (the child's memory stays under the limit, so an allocation would have been torch's
`RuntimeError` or a `MemoryError` instead). The same calls fit this machine without the limit (their estimates are below what
`available_bytes` gives here), so it is the limit that refuses them. No mocks: the kernel enforces the limit."""
import json, subprocess, sys, textwrap
import pytest, torch
from pavlovattn.model.core import available_bytes, check_memory, SizeError, CHECK_FROM_BYTES

CHILD = textwrap.dedent('''
    import json, resource, sys, traceback
    import numpy as np, torch
    from pavlovattn.model import core
    from pavlovattn.model.core import recur, probe_readouts, summarize, one_key_trials, acquisition_curve, available_bytes, SizeError
    from pavlovattn.model.layers import AttentionMixer
    from pavlovattn.design.designs import simulate
    def vm(): return next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize:'))
    z = torch.zeros(1, dtype=torch.float64)
    big = z.reshape(1, 1, 1, 1).expand(2000, 100_000, 1, 1)                       # views: nothing allocated yet
    idx = torch.zeros(1, 1, dtype=torch.long).expand(2000, 100_000)
    n = z.expand(50_000_000)
    mixer = AttentionMixer(16, n_heads=2, rule='delta')
    x = torch.zeros(1, 1, 16).expand(64, 200_000, 16)
    cases = dict(recur=lambda: recur(big, big), probe_readouts=lambda: probe_readouts(big, big, torch.ones(1, 1, dtype=torch.float64)),
                 recur_index=lambda: recur(torch.ones(2, 1, 1, dtype=torch.float64), torch.ones(2, 1, 1, dtype=torch.float64), index=idx),
                 summarize=lambda: summarize(torch.ones(2, 1, 1, dtype=torch.float64), torch.ones(2, 1, 1, dtype=torch.float64), idx),
                 one_key_trials=lambda: one_key_trials(200_000_000), acquisition_curve=lambda: acquisition_curve('delta', n),
                 mixer=lambda: mixer(x), simulate=lambda: simulate('100A+', subjects=3_000_000, per_subject=True))
    from pavlovattn.apps.interop import read_palms, read_calmr                          # reproducer 2: files whose trial types are all distinct
    open('big.rw', 'w').write('G|' + '/'.join(f'1A^{i}+' for i in range(6000)) + '\\n')
    open('big.csv', 'w').write('Group,P1\\nG,"' + '/'.join(f'1(c{i})(US)' for i in range(6000)) + '"\\n')
    cases.update(palms_phase=lambda: simulate(read_palms('big.rw')), calmr_cell=lambda: simulate(read_calmr('big.csv')),
                 repeated_phases=lambda: simulate(' | '.join(['1A+'] * 20000), beta=1e-4))   # 20,000 phases of one trial type: runs
    limit = vm() + 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))
    out = dict(available=available_bytes('cpu'), headroom=limit - vm())
    try: torch.empty(2**31, dtype=torch.uint8); out['plain_allocation'] = 'allocated'   # the limit is real: 2 GiB is refused
    except (RuntimeError, MemoryError) as e: out['plain_allocation'] = type(e).__name__
    for name, f in cases.items():
        try: f(); out[name] = 'ran'
        except SizeError as e: out[name] = 'SizeError: ' + str(e)
        except BaseException as e: out[name] = 'other: ' + ''.join(traceback.format_exception_only(e)).strip()
    print(json.dumps(out))
''')

@pytest.fixture(scope='module')
def child(tmp_path_factory):
    r = subprocess.run([sys.executable, '-c', CHILD], capture_output=True, text=True, timeout=300, cwd=tmp_path_factory.mktemp('child'))
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])

def test_the_limit_is_the_address_space_limit(child):
    assert child['plain_allocation'] in ('RuntimeError', 'MemoryError')          # the kernel refuses 2 GiB there
    assert abs(child['available'] - child['headroom']) < 64 * 2**20, child          # available_bytes sees RLIMIT_AS less VmSize

ENTRY = ['recur', 'probe_readouts', 'recur_index', 'summarize', 'one_key_trials', 'acquisition_curve', 'mixer', 'simulate',
         'palms_phase', 'calmr_cell']     # reproducer 2: a PALMS phase and a calmr cell of 6,000 distinct trial types (a few GiB of tables)

@pytest.mark.parametrize('name', ENTRY)
def test_every_entry_point_refuses_beyond_the_limit_with_one_line(child, name):
    got = child[name]
    assert got.startswith('SizeError: ') and len(got.splitlines()) == 1, got
    assert 'needs about' in got and 'GiB of memory' in got and 'more than the' in got and 'available on cpu' in got, got

def test_the_same_sizes_fit_without_the_limit():
    "Here (no RLIMIT_AS) the check lets each of those sizes through: what refused them in the child was the limit."
    have = available_bytes('cpu')
    if have < 8 * 2**30: pytest.skip(f'this machine has {have / 2**30:.1f} GiB free; the comparison needs 8')
    check_memory(4 * 2**30, 'a 4 GiB call')                                          # no SizeError
    with pytest.raises(SizeError, match='needs about 1.07 PiB'): check_memory(1.2e15, 'a 1.2 PB call')
    check_memory(CHECK_FROM_BYTES - 1, 'small', 'cpu')

def test_repeated_phases_run_under_the_limit(child):
    "Reproducer 2: `' | '.join(['1A+'] * 20000)` (97 s and 6.6 GB before) runs within the child's 1 GiB: 20,000 steps of one trial type share one row."
    assert child['repeated_phases'] == 'ran', child['repeated_phases']


def test_softmax_work_quadratic_in_steps_is_refused_before_it_runs(monkeypatch):
    "Issue 32, reproducer 5's last case: softmax at T = 2e5 ran past 60 s (its memory is bounded, its work is T²). Refused at once, in one line; the limit can be raised."
    import time
    from pavlovattn.model import core
    from pavlovattn.model.core import recur
    k = torch.zeros(1, 1, 1, 8, dtype=torch.float64).expand(1, 200_000, 1, 8); v = torch.zeros(1, 1, 1, 1, dtype=torch.float64).expand(1, 200_000, 1, 1)
    t = time.perf_counter()
    with pytest.raises(SizeError, match=r'8\.0e\+10 query-key similarities') as e: recur(k, v, rule='softmax')
    assert time.perf_counter() - t < 5 and '\n' not in str(e.value) and 'EXEMPLAR_READ_LIMIT' in str(e.value)
    k2, v2 = torch.randn(2, 30, 1, 4, dtype=torch.float64), torch.randn(2, 30, 1, 1, dtype=torch.float64)
    ok = recur(k2, v2, rule='softmax').out                                    # 2 x 30 x 30 x 2 = 3,600 similarities: runs
    monkeypatch.setattr(core, 'EXEMPLAR_READ_LIMIT', 3_599)
    with pytest.raises(SizeError): recur(k2, v2, rule='softmax')
    assert recur(k2, v2, rule='softmax', reads=False).state is not None       # no read-out: no quadratic work, not refused
    assert recur(k2, v2, rule='hebbian').out.shape == ok.shape                # a fixed-state family is linear in its steps: not counted
