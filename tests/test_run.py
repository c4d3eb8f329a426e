"""The `pavlovattn run` contract: the JSON object, the table and CSV formats, defaults, and one-line bad-input errors (exit 2)."""
import contextlib, csv, io, json, subprocess, sys
import pytest
from warm_cli import cli      # the command from a warm start: a process per call, forked after the imports

BLOCKING = 'exp: 10A+ | 10AB+ | #B ; ctrl: 10C+ | 10AB+ | #B'

def one_in_default(cases, keep=0):
    "Parametrize cases with all but case `keep` marked slow (make test runs one small case of each refusal list; pytest --slow runs every one)."
    return [c if i == keep else pytest.param(*(c if isinstance(c, tuple) else (c,)), marks=pytest.mark.slow) for i, c in enumerate(cases)]

def pv(*args):
    return cli('run', *args, timeout=300)

def run_json(*args, process:bool=False):
    "The JSON a successful `pavlovattn run` prints: in this process (the command's own `main`; about 4 s less per call than a new Python importing torch), or with `process` as a command (`pv`)."
    if process:
        r = pv(*args, '--format', 'json')
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    from pavlovattn.apps.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out): rc = main(['run', *args, '--format', 'json'])
    assert rc == 0, rc
    return json.loads(out.getvalue())

def test_json_contract_blocking():
    "Top-level keys, per-group probes and strengths, phases from 1, and the closed form of blocking (theory §3.3b)."
    j = run_json(BLOCKING, '--beta', '0.2', process=True)                  # the command itself, in a new process
    assert set(j) == {'rule', 'params', 'groups'} and j['rule'] == 'delta'
    assert list(j['groups']) == ['exp', 'ctrl']
    for g in j['groups'].values():
        assert set(g) == {'probes', 'strengths'}
        assert set(g['strengths']) == {'A', 'B', 'C'}
        [p] = g['probes']
        assert set(p) == {'phase', 'cues', 'mean', 'sd', 'subjects'}
        assert p['phase'] == 3 and p['cues'] == 'B' and p['sd'] == 0 and p['subjects'] == 1
    b = 0.2
    assert abs(j['groups']['exp']['probes'][0]['mean'] - (1 - b)**10 * (1 - (1 - 2*b)**10) / 2) < 1e-12
    assert abs(j['groups']['ctrl']['probes'][0]['mean'] - (1 - (1 - 2*b)**10) / 2) < 1e-12
    # a strength is the read-out after the last trial: B's final strength equals the probe (probes write nothing)
    assert abs(j['groups']['exp']['strengths']['B'] - j['groups']['exp']['probes'][0]['mean']) < 1e-15
    assert abs(j['groups']['exp']['strengths']['A'] - (1 - (1 - b)**10 + (1 - b)**10 * (1 - (1 - 2*b)**10) / 2)) < 1e-12

def test_defaults():
    j = run_json('10A+'); p = j['params']
    assert (p['beta'], p['gamma'], p['lam'], p['keys'], p['subjects'], p['dtype'], p['device']) == (0.1, 1.0, 1.0, 'onehot', 1, 'float64', 'cpu')
    assert run_json('10A+', '--rule', 'decay')['params']['gamma'] == 0.9
    assert run_json('10A+', '--rule', 'gated-delta')['params']['gamma'] == 1.0
    assert abs(j['groups']['group']['strengths']['A'] - (1 - 0.9**10)) < 1e-12

@pytest.mark.parametrize('rule', one_in_default(['hebbian', 'decay', 'delta', 'gated-delta', 'channel-gate', 'softmax'], keep=2))
def test_every_rule_runs(rule):
    j = run_json('!5A+/5AB- | #A/#AB', '--rule', rule, '--subjects', '3', '--beta', '0.3')
    assert j['rule'] == rule and [p['cues'] for p in j['groups']['group']['probes']] == ['A', 'AB']

def test_options_reach_the_simulator():
    j = run_json('!10A(ctx)+/10(ctx)- | #(ctx)', '--keys', 'random', '--dk', '5', '--overlap', '0.25', '--salience', 'A=0.8,(ctx)=0.5',
                 '--normalize', '--subjects', '20', '--seed', '3', '--lam', '2', '--dtype', 'float32')
    p = j['params']
    assert (p['keys'], p['dk'], p['overlap'], p['normalize'], p['subjects'], p['seed'], p['lam'], p['dtype']) == \
           ('random', 5, 0.25, True, 20, 3, 2.0, 'float32')
    assert p['salience'] == {'A': 0.8, 'ctx': 0.5}
    [pr] = j['groups']['group']['probes']
    assert pr['cues'] == '(ctx)' and pr['subjects'] == 20 and pr['sd'] > 0
    assert run_json('!10A(ctx)+/10(ctx)- | #(ctx)', '--subjects', '20', '--seed', '3') == \
           run_json('!10A(ctx)+/10(ctx)- | #(ctx)', '--subjects', '20', '--seed', '3')      # seeded: reproducible

def test_rates_per_outcome_and_miniblocks():
    j = run_json('10A+ | 10A- | #A', '--beta', '0.3', '--beta-minus', '0.1')
    assert j['params']['beta'] == {'+': 0.3, '-': 0.1}
    assert abs(j['groups']['group']['probes'][0]['mean'] - (1 - 0.7**10) * 0.9**10) < 1e-12
    r = pv('!2A+/4B-', '--miniblocks', '--subjects', '50', '--format', 'csv')
    rows = [x for x in csv.DictReader(io.StringIO(r.stdout)) if x['cue'] == 'A']
    assert run_json('!2A+/4B-', '--miniblocks')['params']['miniblocks'] is True and len(rows) == 6

def test_table_and_csv():
    r = pv(BLOCKING, '--beta', '0.2')
    assert r.returncode == 0 and 'group exp' in r.stdout and 'group ctrl' in r.stdout and '#B' in r.stdout
    r = pv(BLOCKING, '--format', 'csv')
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert list(rows[0]) == ['group', 'phase', 'trial', 'trial_type', 'cue', 'probe', 'mean', 'sd', 'subjects']
    assert len(rows) == 2 * 21 * 3                                 # groups x trials x cues

@pytest.mark.parametrize('args, msg', one_in_default([
    (['10A+ | 10A*'], 'bad trial type "10A*" at position 8: expected + or - after the cues'),
    (['10A+ |\n 10A\n*'], 'bad trial type "10A\\n*" at position 9'),
    (['exp: 10A+ ; 10B+'], 'group "10B+" at position 13 has no name'),
    (['10A+', '--rule', 'lstm'], "unknown rule 'lstm'; valid rules: hebbian, normalized, decay, gla, delta, gated-delta, channel-gate, softmax"),
    (['10A+', '--keys', 'hash'], "unknown key coding 'hash'; valid: onehot, random"),
    (['10A+', '--format', 'xml'], "unknown format 'xml'; valid: table, json, csv"),
    (['10A+', '--dtype', 'float16'], "unknown dtype 'float16'; valid: float64, float32"),
    (['10A+', '--salience', 'A:0.8'], "bad --salience item 'A:0.8'"),
    (['10A+', '--salience', 'A=0.8,B=x'], "bad --salience item 'B=x'"),
    (['10A+', '--salience', 'A=-1'], "bad --salience item 'A=-1'"),
    (['10A+', '--salience', 'Z=0.5'], 'salience given for unknown cue(s) Z'),
    (['exp: 10A+ | 10AB+', '--beta', '1.2'], 'trial type AB+ in group exp, phase 2 has beta*|k|^2 = 2.4 > 2 (stable writes need beta*|k|^2 <= 2)'),
    (['10A+ | 10AB+', '--beta', '0.6', '--salience', 'A=2,B=2'], 'trial type AB+ in group group, phase 2 has beta*|k|^2 = 2.4 > 2'),
    (['10ABC+', '--keys', 'random', '--overlap', '-0.6'], 'outside the positive-definite range for 3 unit keys'),
    (['10A+', '--overlap', '0.3'], "overlap needs keys='random'"),
    (['10A+', '--rule', 'decay', '--gamma', '1.5'], 'gamma must lie in [0, 1]'),
    (['10A+', '--subjects', '0'], 'subjects must be a positive integer'),
    (['10A+', '--beta', 'fast'], "argument --beta: invalid float value: 'fast'"),
    (['10A+', '--device', 'nosuchdevice'], "device 'nosuchdevice'"),
    ([], 'the following arguments are required: DESIGN'),
]))
def test_bad_input_is_one_line_and_exit_2(args, msg):
    r = pv(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert 'Traceback' not in r.stderr and r.stdout == ''

# ---- issue 14: sizes checked before allocating, nothing accepted that does nothing, reports written safely ----

@pytest.mark.parametrize('args, msg', one_in_default([
    (['1000000000000A+'], 'bad trial type "1000000000000A+" at position 1: count 1000000000000 is more than 1,000,000 trials'),
    (['10A+', '--subjects', '1000000000000'], 'subject-trials is more than one run simulates'),
    (['10A+', '--dk', '1000000000000'], 'this run needs about'),
    (['10A+', '--dk', '0'], 'argument --dk: dk must be a positive integer; got 0'),   # refused by the parser, before torch (issue 36)
    (['10A+', '--device', 'meta'], "device 'meta' cannot run this here"),
    (['10A+', '--salience', 'A=1,A=0.5'], "--salience gives 'A' twice ('A=1' and 'A=0.5')"),
    (['10(ctx)+', '--salience', 'ctx=1,(ctx)=0.5'], "--salience gives 'ctx' twice"),
    (['20A+ | #A', '--rule', 'delta', '--gamma', '0'], 'the delta family has no gamma'),
    (['20A+ | #A', '--rule', 'hebbian', '--gamma', '0.5'], 'the hebbian family has no gamma'),
    (['١٠A+'], '"١" at position 1: counts are written with the ASCII digits 0-9'),
    (['𝟏𝟎A+'], 'counts are written with the ASCII digits 0-9'),
    (['10A\u2028* | 1B+'], 'bad trial type "10A\\u2028*" at position 1'),
    (['10A\x0b* | 1B+'], 'bad trial type "10A\\x0b*" at position 1'),
    (['10A\x1c*'], 'bad trial type "10A\\x1c*"'),
    (['10A\x85*'], 'bad trial type "10A\\x85*"'),
    (['10A+', '--salience', 'Z\u2028Y=0.5'], 'salience given for unknown cue(s) Z\\u2028Y'),
]))
def test_issue14_refusals_are_one_line_exit_2(args, msg):
    r = pv(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith('pavlovattn run: ') and 'Traceback' not in r.stderr and r.stdout == ''

def test_cuda_refused_without_a_gpu():
    import torch
    if torch.cuda.is_available(): pytest.skip('this machine has CUDA')
    r = pv('10A+', '--device', 'cuda')
    assert r.returncode == 2 and r.stderr.startswith("pavlovattn run: device 'cuda' cannot run this here") and len(r.stderr.splitlines()) == 1

def test_gamma_one_is_accepted_for_a_family_without_gamma():
    assert run_json('20A+ | #A', '--gamma', '1')['params']['gamma'] == 1.0

def test_memory_does_not_grow_with_subjects():
    "A summary over a million subjects streams in blocks: its peak memory exceeds that of 10 subjects by about one block, not by the 400 MB its orders alone would take."
    def peak(subjects):
        code = ("import resource, sys; from pavlovattn.apps.cli import main; main(['run', '!100A+/100B-', '--subjects', '%d', '--format', 'json']);"
                "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, file=sys.stderr)" % subjects)
        r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)['groups']['group']['strengths']['A'] > 0
        return int(r.stderr.strip().splitlines()[-1])
    from pavlovattn.base.machine import BLOCK_BYTES
    small, big = peak(10), peak(1_000_000)
    assert big - small < BLOCK_BYTES + 150 * 2**20, (small, big)

def test_table_format_is_linear_in_groups():
    "1,000 groups print in seconds (the table used to recompute every group's probes inside its loop over groups)."
    import time
    design = ' ; '.join(f'g{i}: 2A+ | #A' for i in range(1000))
    t = time.perf_counter(); r = pv(design); dt = time.perf_counter() - t
    assert r.returncode == 0 and r.stdout.count('\ngroup g') == 1000, r.stderr
    assert dt < 60, dt

def reproduce(*args):
    return cli('reproduce', *args, timeout=300)

def test_reproduce_json_is_written_atomically(tmp_path, monkeypatch):
    "The report goes to a temporary file in the same folder and is renamed over the old one: a failed write leaves the old report whole."
    from pavlovattn.apps import cli
    path = tmp_path / 'report.json'
    cli._write_json(str(path), [{'id': 'x'}])
    assert json.loads(path.read_text()) == [{'id': 'x'}]
    def boom(*a, **k): raise OSError(28, 'No space left on device')
    import pavlovattn.base.cache as cache
    monkeypatch.setattr(cache.os, 'fsync', boom)                          # the disk fills up as the temporary file is flushed
    with pytest.raises(cli.UsageError, match="pavlovattn reproduce: cannot write .*No space left on device"):
        cli._write_json(str(path), [{'id': 'y'}])
    assert json.loads(path.read_text()) == [{'id': 'x'}]                 # the old report is whole
    assert [p.name for p in tmp_path.iterdir()] == ['report.json']      # and no temporary file is left behind

def test_reproduce_list_json_and_unwritable_path(tmp_path):
    r = reproduce('--list', '--json', str(tmp_path / 'ids.json'))
    assert r.returncode == 0 and isinstance(json.loads((tmp_path / 'ids.json').read_text()), list)
    r = reproduce('--list', '--json', str(tmp_path / 'no' / 'such' / 'dir.json'))
    assert r.returncode == 2 and r.stderr.startswith('pavlovattn reproduce: cannot write') and len(r.stderr.splitlines()) == 1

def test_reproduce_refuses_meta_device():
    r = reproduce('--only', 'core-deltanet-is-rescorla-wagner', '--device', 'meta', '--quiet')
    assert r.returncode == 2 and r.stderr.startswith("pavlovattn reproduce: device 'meta'") and len(r.stderr.splitlines()) == 1

# ---- issue 45: simulate is validate / compile / run; every refusal word for word as before, in the same order ----

@pytest.mark.parametrize('kw, msg', [
    (dict(subjects=0), 'subjects must be a positive integer; got 0'),
    (dict(subjects=1.5), 'subjects must be a positive integer; got 1.5'),
    (dict(seed='x'), "seed must be an integer; got 'x'"),
    (dict(dk=0), 'dk must be an integer >= 1; got 0'),
    (dict(rule='gated-delta', gamma=1.5), 'gamma must lie in [0, 1] (a decay); got 1.5'),
    (dict(rule='vhw', omega=-1.), 'omega must be a finite number >= 0; got -1.0'),
    (dict(design='10A+ | 10ABC+', beta=0.8), 'unstable learning rate: trial type ABC+ in group group, phase 2 has beta*|k|^2 = 2.4 > 2 '
                                             '(stable writes need beta*|k|^2 <= 2); allow_unstable=True (--allow-unstable) runs it anyway, with a warning'),
    (dict(lam=float('inf')), 'lam must be a finite number; got inf'),
    (dict(tau=float('nan')), 'tau must be a finite number; got nan'),
    (dict(design='10(US)', dialect='calmr', associations='us'), 'the design has no cues: US-alone trials only'),
    (dict(associations='all'), "associations='all' learns calmr's stimulus-to-stimulus associations: it reads designs with dialect='calmr'"),
    (dict(rule='trace', dialect='calmr', associations='all', design='10A>B'), "associations='all' runs families whose inputs come from trial-type tables; "
                                                                               "the trace family has a history (a key trace or write keys): use associations='us'"),
    (dict(salience={'Z': 1}), 'salience given for unknown cue(s) Z; the cues are A'),
    (dict(keys='bad'), "unknown key coding 'bad'; valid codings: onehot, random"),
    (dict(dtype='int8'), "unknown floating dtype 'int8'; use float64 or float32"),
    (dict(sampling='x'), "unknown sampling 'x'; valid: shuffle, iid"),
    (dict(orders={'nope': [[0]]}), "orders given for unknown group 'nope'; the groups are group"),
    (dict(lam={'US_a': 1.}), "lam per US ({US name: value}) needs a design with named USs, such as (US_a), with dialect='calmr'"),
    (dict(rng='torch', miniblocks=True), "rng='torch' draws whole trials in written phases: it takes no miniblocks and no calmr periods (use rng='counter')"),
    (dict(subjects=0, gamma=5, lam=float('inf')), 'subjects must be a positive integer; got 0'),          # the first check wins, as before
    (dict(rule='gated-delta', gamma=1.5, lam=float('inf'), device='meta'), 'gamma must lie in [0, 1] (a decay); got 1.5'),
    (dict(lam=float('inf'), device='meta', salience={'Z': 1}), 'lam must be a finite number; got inf'),
])
def test_simulate_refusals_word_for_word_in_order(kw, msg):
    from pavlovattn.design.designs import simulate
    with pytest.raises(ValueError) as e: simulate(**{'design': '10A+', **kw})
    assert str(e.value) == msg

def test_simulate_is_a_short_entry_point():
    "validate (`_validate`), compile (`_compile`, `compile_group` per group) and run (`_run`, `_run_group` per group): simulate's body is those calls."
    import inspect
    from pavlovattn.design import designs
    def body(f):                                                             # the lines after the docstring
        src = inspect.getsource(getattr(designs, f)); return src[src.index(inspect.getdoc(getattr(designs, f))):].splitlines()[1:]
    assert len(body('simulate')) <= 10 and all(f'{f}(' in '\n'.join(body('simulate')) for f in ('_validate', '_compile', '_run', '_params', '_notes'))
    for f in ('_validate', '_family_values', '_all_stimuli', '_compile', '_params', '_run', '_run_group', '_notes', 'compile_group'):
        assert len(body(f)) <= 25, (f, len(body(f)))
