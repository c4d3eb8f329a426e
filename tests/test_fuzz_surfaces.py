"""The fuzz suite of issue 32 (robustness, wave 3), with a fixed seed and a time budget.

Four surfaces, each drawn by its own generator from `random.Random(SEED)`: designs in both dialects (grammar-aware
generation, then mutations with the characters that broke things before), the command line in-process on those designs,
the file readers on damaged input (truncated, bit-flipped, binary, huge counts, gzip cut short or corrupted), and the caches
(JSON entries and checkpoints: truncated, bit-flipped, another key's, another version's, pickled code). Each surface runs at
least `MIN_CASES` cases and then until `SECONDS` have passed (`make test`: 2 s each); set PAVLOVATTN_FUZZ_SECONDS for a
longer run and PAVLOVATTN_FUZZ_SEED for other cases. A case fails on any exception other than the surface's one-line
refusal (a traceback), on running past `CASE_SECONDS` (a hang), on raising this process's peak memory by more than
`RSS_GROWTH` (an unbounded allocation), and on an impossible value accepted without a word (a damaged cache entry that loads
as something else, a design that parses to another design when printed and read back)."""
import contextlib, gzip, io, json, os, pickle, random, resource, signal, string, time
import pytest, torch
from pavlovattn.design.designs import parse_design, DesignError, simulate
from pavlovattn.apps import interop
from pavlovattn.base import cache
from pavlovattn.apps.cli import main

SECONDS = float(os.environ.get('PAVLOVATTN_FUZZ_SECONDS', 2))
SEED = int(os.environ.get('PAVLOVATTN_FUZZ_SEED', 32))
MIN_CASES = int(os.environ.get('PAVLOVATTN_FUZZ_MIN_CASES', 20))
CASE_SECONDS, RSS_GROWTH = 60, 1 << 30

class Hang(Exception): pass

def _peak() -> int: return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

@contextlib.contextmanager
def watchdog(case):
    "Fail the case after CASE_SECONDS (SIGALRM in the main thread) or when it raises the peak memory by RSS_GROWTH."
    def fire(*_): raise Hang(f'still running after {CASE_SECONDS} s: {case!r}'[:400])
    old = signal.signal(signal.SIGALRM, fire); signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS); before = _peak()
    try: yield
    finally: signal.setitimer(signal.ITIMER_REAL, 0); signal.signal(signal.SIGALRM, old)
    assert _peak() - before < RSS_GROWTH, f'peak memory grew by {(_peak() - before) >> 20} MiB on {case!r}'[:400]

def fuzz(gen, check) -> int:
    "Run `check(gen(rng))` for at least MIN_CASES cases and until SECONDS have passed; the number of cases run."
    rng, t0, n = random.Random(SEED), time.monotonic(), 0
    while n < MIN_CASES or time.monotonic() - t0 < SECONDS:
        case = gen(rng)
        with watchdog(case): check(case)
        n += 1
    return n

def one_line(e, *, has=''):
    msg = str(e)
    assert msg and len(msg.splitlines()) == 1 and has in msg, repr(msg)

# ---- designs in both dialects: generated from the grammar, then mutated ----
ODD = ['a', '*', '>', '#', 'skip', 'lam=', 'beta=0.5/', '++', '=', '(', ')', ':', ';', '|', '/', '!', '+', '-', '0', '١', '²', 'Ä', '\u2028', '\x85', '\x0b', '\x1b', '\n',
       '\t', ' ', '(US)', '(US1)', '(US_a)', '(Pellet)', '>B', '>(US)', '99999999', '1000001', '\u00a0', '""', ',', '\x00']

def native(rng) -> str:
    def trial():
        cues = rng.sample(['A', 'B', 'C', 'X', '(ctx)', '(b_2)'], rng.randint(1, 3))
        if rng.random() < 0.2: return f"{rng.choice(['', '1', '2'])}#{''.join(cues)}"
        return f"{rng.choice(['', '1', '3', '10', '007'])}{''.join(cues)}{rng.choice(['+', '-', '(US)', '++'])}"
    sets = lambda: ''.join(f'{k}={rng.choice(["0.5", "2", ".25", "1e-3"])}/' for k in ('lam', 'beta') if rng.random() < 0.15)   # a phase's lam=, beta=
    phase = lambda: 'skip' if rng.random() < 0.1 else ('!' if rng.random() < 0.3 else '') + sets() + '/'.join(trial() for _ in range(rng.randint(1, 3)))
    body = lambda: ' | '.join(phase() for _ in range(rng.randint(1, 3)))
    if rng.random() < 0.5: return body()
    return ' ; '.join(f'{n}: {body()}' for n in rng.sample(['a', 'b', 'exp', 'ctrl', 'g.1'], rng.randint(1, 3)))

def calmr(rng) -> str:
    def trial():
        cues = ''.join(rng.sample('ABCXL', rng.randint(1, 3)))
        if rng.random() < 0.2: return f"{rng.choice(['1', '2'])}#{cues}"
        return f"{rng.choice(['1', '3', '10', '12'])}{cues}{rng.choice(['', '(US)', '(US)', '(US1)', '(US_a)', '>(US)', '>B', '(Pellet)'])}"
    body = lambda: ' | '.join(('!' if rng.random() < 0.3 else '') + '/'.join(trial() for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3)))
    return ' ; '.join(f'{n}: {body()}' for n in rng.sample(['G1', 'G2', 'ctrl', 'exp'], rng.randint(1, 2)))

def mutate(rng, s:str) -> str:
    for _ in range(rng.randint(0, 3)):
        i, tok = rng.randint(0, len(s)), rng.choice(ODD)
        s = rng.choice([lambda: s[:i] + tok + s[i:], lambda: s[:i] + s[i + 1:], lambda: s[:i] + tok + s[i + 1:]])()
    return s

def design_case(rng):
    dialect = rng.choice(['native', 'calmr'])
    return dialect, mutate(rng, native(rng) if dialect == 'native' else calmr(rng))

def structure(d):
    return [(g.name, [(p.random, p.lam, p.beta, [(t.count, t.label, t.lam, t.beta, t.rate) for t in p.trials]) for p in g.phases]) for g in d.groups]

def check_design(case):
    dialect, s = case
    try: d = parse_design(s, dialect)
    except DesignError as e: one_line(e, has='position'); return
    again = parse_design(str(d), d.dialect)
    assert structure(again) == structure(d), (case, str(d))                 # printed and read back: the same design
    if sum(g.n for g in d.groups) <= 300:
        try: simulate(d, subjects=2, beta=0.3)
        except ValueError as e: one_line(e)                                # a refusal (unstable rate, nothing to learn, ...)

def test_designs_in_both_dialects():
    assert fuzz(design_case, check_design) >= MIN_CASES

# ---- the command line, in-process, on those designs ----
OPTS = [('--rule', ['delta', 'hebbian', 'softmax', 'vhw', 'nope', '']), ('--beta', ['0.3', '1e-320', '-0', 'nan', '١']),
        ('--subjects', ['1', '3', '0', '1e3']), ('--format', ['table', 'json', 'csv', 'xml']), ('--keys', ['onehot', 'random']),
        ('--seed', ['0', '-1', '1' * 40]), ('--lam', ['1', '1e308', '-inf']), ('--salience', ['A=0.5', 'A=nan', '=', 'Z=1'])]

def cli_case(rng):
    dialect, s = design_case(rng)
    args = ['run', s, '--dialect', dialect]
    for flag, values in rng.sample(OPTS, rng.randint(0, 4)): args += [flag, rng.choice(values)]
    return args

def check_cli(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = main(args)     # an exception here is a traceback
    out, err = out.getvalue(), err.getvalue()
    assert rc in (0, 2), (args, rc, err)
    if rc == 2: assert len(err.splitlines()) == 1 and err.startswith('pavlovattn'), (args, err)
    else:
        assert out and all(l.startswith('pavlovattn') for l in err.splitlines()), (args, err)    # notes and warnings: one line each
        if '--format' in args and args[args.index('--format') + 1] == 'json':
            json.loads(out, parse_constant=lambda c: pytest.fail(f'{c} in JSON output of {args!r}'))

def test_command_line_on_both_dialects():
    assert fuzz(cli_case, check_cli) >= MIN_CASES

# ---- the file readers on damaged input ----
def damage(rng, data:bytes) -> bytes:
    kind = rng.choice(['cut', 'flip', 'binary', 'count', 'nul', 'crlf', 'gzip-cut', 'gzip-flip', 'none'])
    if kind == 'cut': return data[:rng.randint(0, len(data))]
    if kind == 'flip':
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)): i = rng.randrange(len(b)); b[i] ^= 1 << rng.randrange(8)
        return bytes(b)
    if kind == 'binary': i = rng.randint(0, len(data)); return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))) + data[i:]
    if kind == 'count': return data.replace(b'1', b'9' * rng.choice([7, 20, 400]), 1)
    if kind == 'nul': i = rng.randint(0, len(data)); return data[:i] + b'\x00' + data[i:]
    if kind == 'crlf': return data.replace(b'\n', b'\r\n')
    z = gzip.compress(data, mtime=0)
    if kind == 'gzip-cut': return z[:rng.randint(0, len(z) - 1)]
    if kind == 'gzip-flip': b = bytearray(z); i = rng.randrange(10, len(b)); b[i] ^= 1 << rng.randrange(8); return bytes(b)
    return data

def file_case(rng):
    fmt = rng.choice(['pyndl', 'calmr', 'palms'])
    if fmt == 'pyndl':
        events = [('_'.join(rng.sample(['A', 'B', 'ctx', 'X1'], rng.randint(1, 3))), rng.choice(['US', '', 'US_food']), rng.choice(['', '\t1', '\t3']))
                  for _ in range(rng.randint(1, 12))]
        freq = all(f for _, _, f in events)
        data = ('cues\toutcomes' + ('\tfrequency' if freq else '') + '\n' + ''.join(f'{c}\t{o}{f if freq else ""}\n' for c, o, f in events)).encode()
    elif fmt == 'calmr': data = _calmr_csv(rng)
    else: data = interop.write_palms(_palms_design(rng)).encode()
    return fmt, damage(rng, data)

def _calmr_csv(rng) -> bytes:
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, 'd.csv'); interop.write_calmr(calmr(rng), p, dialect='calmr')
        return open(p, 'rb').read()

def _palms_design(rng) -> str:
    sets = lambda: ''.join(f'{k}={rng.choice(["0.5", "2", "0.125"])}/' for k in ('lam', 'beta') if rng.random() < 0.2)   # PALMS's lambda=, beta=
    phase = lambda: ('!' if rng.random() < 0.3 else '') + sets() + '/'.join(
        f"{rng.choice(['1', '4', '10'])}{''.join(rng.sample('ABCX', rng.randint(1, 2)))}{rng.choice(['+', '-', '++'])}" for _ in range(rng.randint(1, 3)))
    phases = lambda k: [phase() if i == k or rng.random() > 0.15 else 'skip' for i in range(rng.randint(k + 1, 3))]   # phase k runs
    return ' ; '.join(f'{n}: ' + ' | '.join(phases(rng.randint(0, 2))) for n in rng.sample(['G1', 'G2', 'ctrl'], rng.randint(1, 2)))

READERS = dict(pyndl=lambda p: interop.read_pyndl(p, outcome='US') if _outcomes(p) > 1 else interop.read_pyndl(p),
               calmr=interop.read_calmr, palms=interop.read_palms)

def _outcomes(p) -> int:
    try: return len({o for _, os_, _, _ in interop.read_pyndl_events(p) for o in os_})
    except DesignError: return 0

def check_file(case):
    fmt, data = case
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, 'in.' + dict(pyndl='tsv', calmr='csv', palms='rw')[fmt]); open(p, 'wb').write(data)
        try: des = READERS[fmt](p)
        except DesignError as e: one_line(e); return
        assert structure(parse_design(str(des), des.dialect)) == structure(des), (case, str(des))   # empty phases too (`skip`)

def test_file_readers_on_damaged_input():
    assert fuzz(file_case, check_file) >= MIN_CASES

# ---- the caches: JSON entries and checkpoints, damaged ----
class _Code:
    "A pickle that runs code when loaded unchecked (it would create `marker`)."
    def __init__(self, marker): self.marker = marker
    def __reduce__(self): return (open, (self.marker, 'w'))

def spoil(rng, data:bytes, other:bytes, marker:str) -> tuple:
    kind = rng.choice(['cut', 'flip', 'other-key', 'pickled-code', 'empty', 'none'])
    if kind == 'cut': return kind, data[:rng.randint(0, len(data) - 1)]
    if kind == 'flip':
        b = bytearray(data); i = rng.randrange(len(b)); b[i] ^= 1 << rng.randrange(8); return kind, bytes(b)
    if kind == 'other-key': return kind, other
    if kind == 'pickled-code': return kind, pickle.dumps(_Code(marker))
    if kind == 'empty': return kind, b''
    return kind, data

def test_json_cache_entries_damaged(tmp_path, capsys):
    def check(o): cache.need(set(o) == {'key', 'x'} and o['key'] == 'k1', f"not the entry of k1: {o.get('key')!r}"); cache.finite(o['x'], 0, 1, 'x'); return o
    good = dict(key='k1', x=0.123456789)
    p = tmp_path / 'e.json'; cache.write_json(p, good); data = p.read_bytes()
    cache.write_json(p, dict(key='k2', x=0.5)); other = p.read_bytes()
    versions = [json.dumps(cache.sealed(good, 'pavlovattn 0.0.1 cache 1')).encode()]
    def gen(rng):
        if rng.random() < 0.15: return 'other-version', versions[0]
        return spoil(rng, data, other, str(tmp_path / 'ran'))
    def run(case):
        kind, b = case; p.write_bytes(b); capsys.readouterr()
        got = cache.read_json(p, check); err = capsys.readouterr().err
        assert got == good or (got is None and len(err.splitlines()) == 1 and 'rebuilding it' in err), (kind, got, err)
        if got is not None: assert b == data, (kind, 'a damaged entry loaded without a word')
        assert not (tmp_path / 'ran').exists()
    assert fuzz(gen, run) >= MIN_CASES

@pytest.fixture(scope='module')
def checkpoints(tmp_path_factory):
    from pavlovattn.apps.models import TrainConfig, train, save_checkpoint
    d = tmp_path_factory.mktemp('ck')
    cfgs = [TrainConfig(steps=2, d_model=16, n_layers=1, eval_every=2, eval_batch=8, batch=4, seed=s) for s in (0, 1)]
    paths = [save_checkpoint(train(c, progress=False)[0], c, dict(final_metric=0.0), d / f'{c.key()}.pt') for c in cfgs]
    return cfgs, [p.read_bytes() for p in paths], d

def test_checkpoints_damaged(checkpoints):
    from pavlovattn.apps.models import load_checkpoint
    cfgs, (data, other), d = checkpoints
    ref = {k: v.clone() for k, v in load_checkpoint(d / f'{cfgs[0].key()}.pt', cfg=cfgs[0])[0].state_dict().items()}
    marker = str(d / 'ran'); p = d / 'case.pt'
    def run(case):
        kind, b = case; p.write_bytes(b)
        try: m, c, _ = load_checkpoint(p, cfg=cfgs[0])
        except cache.CacheError as e: one_line(e); return
        finally: assert not os.path.exists(marker), 'a pickled call ran'
        assert c == cfgs[0] and all(torch.equal(v, ref[k]) for k, v in m.state_dict().items()), (kind, 'another model loaded without a word')
    assert fuzz(lambda rng: spoil(rng, data, other, marker), run) >= MIN_CASES

# ---- every numeric flag of every command (read from the parser, so a new flag is covered when it is added) ----
IMPOSSIBLE = ['nan', '-inf', '1e309', '١٠', '1_0', '', '\x00', '5\u2028', '5\x85']   # (tests/test_fuzz.py: more values on the flags it lists)
POSITIONAL = {'run': ['10A+ | #A'], 'battery': ['delta'], 'sweep': ['grid.yaml'], 'probe-model': ['m']}

def numeric_flags():
    import argparse
    from pavlovattn.apps.cli import SUBCOMMANDS
    for name, (_, add, _) in SUBCOMMANDS.items():
        p = argparse.ArgumentParser(); add(p)
        for a in p._actions:
            if a.option_strings and getattr(a.type, '__qualname__', '').startswith('_number'): yield name, a.option_strings[0]

@pytest.mark.parametrize('cmd, flag', list(numeric_flags()))
def test_every_numeric_flag_refuses_impossible_values_when_parsed(cmd, flag):
    for v in IMPOSSIBLE:
        args = [cmd, *POSITIONAL.get(cmd, []), flag, v]
        with watchdog(args):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = main(args)
        err = err.getvalue()
        assert rc == 2 and out.getvalue() == '' and len(err.splitlines()) == 1 and flag in err and '\x00' not in err, (args, rc, err)

LONG = SECONDS > 2

@pytest.mark.skipif(not LONG, reason='every flag of every command: PAVLOVATTN_FUZZ_SECONDS > 2 (about 10 min on a loaded 2-core machine)')
def test_every_flag_refuses_an_empty_or_nul_value():
    import argparse
    from pavlovattn.apps.cli import SUBCOMMANDS
    for name, (_, add, _) in SUBCOMMANDS.items():
        p = argparse.ArgumentParser(); add(p)
        for a in p._actions:
            if not a.option_strings or a.nargs == 0 or a.option_strings[0] == '-h': continue
            for v in ('', '\x00'):
                args = [name, *POSITIONAL.get(name, []), a.option_strings[0], v]
                with watchdog(args):
                    out, err = io.StringIO(), io.StringIO()
                    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = main(args)
                assert rc == 2 and len(err.getvalue().splitlines()) == 1, (args, rc, err.getvalue())

# ---- issue 49: grid files, timed trials, user family files and sweep tasks ----
# Each runs at least NEW_MIN cases and then until a fifth of SECONDS (the five together cost what one surface above does).
NEW_SECONDS, NEW_MIN = SECONDS / 5, max(5, MIN_CASES // 4)

def fuzz_quick(gen, check) -> int:
    rng, t0, n = random.Random(SEED), time.monotonic(), 0
    while n < NEW_MIN or time.monotonic() - t0 < NEW_SECONDS:
        case = gen(rng)
        with watchdog(case): check(case)
        n += 1
    return n

def grid_case(rng) -> tuple:
    "A grid file (name, bytes): a valid grid of json:loads, then damaged the ways grids were (aliases, depth, size, keys, bytes)."
    axes = {f'a{i}': [rng.randint(0, 9) for _ in range(rng.randint(1, 12))] for i in range(rng.randint(0, 9))}
    yaml_text = 'task: json:loads\nfixed: {s: "1"}\ngrid: {' + ', '.join(f'{k}: {v}' for k, v in axes.items()) + '}\n'
    pick = rng.randrange(8)
    if pick == 0: yaml_text = 'task: json:loads\na: &a [1,1,1,1,1,1,1,1,1,1]\n' + ''.join(f'{c}: &{c} [{", ".join([f"*{p}"] * 10)}]\n' for p, c in zip('abcdefgh', 'bcdefghi'[:rng.randint(1, 8)]))
    elif pick == 1: d = rng.choice([10, 100, 5000, 30000]); yaml_text = 'task: json:loads\nfixed: {s: ' + '[' * d + ']' * d + '}\n'
    elif pick == 2: yaml_text += rng.choice(['fixed: {s: "2"}\n', 'grid: {1: [1]}\n', 'configs: [{s: ' + '9' * rng.choice([10, 5000]) + '}]\n'])
    elif pick == 3: yaml_text = yaml_text.replace(rng.choice(':{}[],'), rng.choice(['', '\x00', '\xff', '\u2028', '*x', '&y', '!!python/object:os.system']), 1)
    data = yaml_text.encode() if pick != 4 else yaml_text.encode()[:rng.randint(0, len(yaml_text))] + bytes([rng.randrange(256)])
    if pick == 5: return 'g.json', json.dumps(dict(task='json:loads', fixed=dict(s='1'), grid=axes)).encode()[:rng.randint(1, 200)]
    return 'g.yaml', data

def check_grid(case):
    from pavlovattn.base import sweep as sw
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, case[0]); open(p, 'wb').write(case[1])
        try: ts = sw.tasks(sw.load_grid(p))
        except sw.GridError as e: one_line(e); return
        assert len(ts) <= sw.MAX_CONFIGS

def test_grid_files():
    assert fuzz_quick(grid_case, check_grid) >= NEW_MIN

def timeline_case(rng) -> str:
    ev = [f"{rng.choice(['A', 'B', '(ctx)', '(US)', '(iti)', 'US', 'iti', 'Z9'])} {rng.choice(['0', '2', '0-3', '3-1', '1-' + '9' * 7, '١', '1_0', '-1'])}"
          + (f"*{rng.choice(['0.5', '0.1234567', '1e-9', '1_5', '١', '-1', 'nan', '2*3', '0.12345678901234567'])}" if rng.random() < 0.4 else '')
          for _ in range(rng.randint(0, 4))]
    return f"{rng.choice(['', '1', '20'])}{{{', '.join(ev)}}}" + rng.choice(['', ' | #A', '/10A+'])

def check_timeline(s):
    try: d = parse_design(s)
    except DesignError as e: one_line(e); return
    again = parse_design(str(d).split(': ', 1)[1])
    assert str(again) == str(d), (s, str(d), str(again))                  # printed and read back: the same design
    assert not any(c == 'US' for g in d.groups for ph in g.phases for t in ph.trials for c in t.cues), s

def test_timed_trials():
    assert fuzz_quick(timeline_case, check_timeline) >= NEW_MIN

_BAD_STEPS = ['return S', 'return S.flatten()', 'return S.float()', 'return S.to(torch.int64)', 'return "S"', 'return None', 'return (S, S)',
              'raise RuntimeError("boom\\nsecond line")', 'sys.exit(0)', 'sys.exit(3)', 'raise SystemExit', 'print("chatter"); return S',
              'return S * float("nan")', 'return S[..., :0]', 'raise KeyError(1)']

def family_case(rng) -> tuple:
    where = rng.choice(['step', 'step', 'import'])
    body = rng.choice(_BAD_STEPS)
    src = 'import sys, torch\nfrom pavlovattn.model.families import Family\n'
    if where == 'import': src += (body.replace('return ', 'X = ') if body.startswith('return') else body) + '\ndef step(S, k, v, beta, gamma, kw): return S\n'
    else: src += f'def step(S, k, v, beta, gamma, kw):\n    {body}\n'
    return src + "FAMILY = Family('fuzzed', 'x', 'y', 'z', step=step)\n", rng.choice(['run', 'sweep'])

def check_family(case):
    import tempfile
    src, how = case
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, 'fam.py'); open(f, 'w').write(src)
        if how == 'run': check_cli(['run', '3A+ | #A', '--rule', f])
        else:
            from pavlovattn.base import sweep as sw
            task = os.path.join(d, 'task.py'); open(task, 'w').write(src.replace('def step(S, k, v, beta, gamma, kw)', 'def step(S=None, k=None, v=None, beta=None, gamma=None, kw=None)')
                                                                     .replace("FAMILY = Family('fuzzed', 'x', 'y', 'z', step=step)\n", ''))
            try: ts = sw.tasks(dict(task=f'{task}:step', configs=[dict(S=1)]))
            except sw.GridError as e: one_line(e); return
            out = io.StringIO()
            with contextlib.redirect_stdout(out): e = sw.execute(ts[0])
            assert out.getvalue() == '' and e['status'] in ('ok', 'error')
            if e['status'] == 'error': one_line(e['error'])

def test_family_files_and_sweep_tasks():
    assert fuzz_quick(family_case, check_family) >= NEW_MIN

def numba_case(rng) -> list:
    "What happens to a recorded numba folder: per file none, a cut, a flipped byte, a pickle swapped in, a new file; and the manifest damaged or not."
    return [rng.choice(['keep', 'keep', 'cut', 'flip', 'pickle', 'new']) for _ in range(rng.randint(1, 5))] + [rng.choice(['ok', 'ok', 'cut', 'flip', 'gone'])]

def check_numba(case):
    import tempfile, hashlib
    from pavlovattn.base.cache import _numba_verify, _numba_record
    *files, manifest = case
    with tempfile.TemporaryDirectory() as d:
        sub = os.path.join(d, 'model_x'); os.makedirs(sub)
        names = [f'k{i}-1.py311.nbi' if i % 2 else f'k{i}-1.py311.1.nbc' for i in range(len(files))]
        for n in names: open(os.path.join(sub, n), 'wb').write(pickle.dumps({'kernel': n, 'code': list(range(50))}))
        _numba_record(d, [os.path.join(sub, n) for n in names])
        for n, how in zip(names, files):
            p = os.path.join(sub, n); b = open(p, 'rb').read()
            if how == 'cut': open(p, 'wb').write(b[:len(b) // 2])
            elif how == 'flip': open(p, 'wb').write(b[:5] + bytes([b[5] ^ 1]) + b[6:])
            elif how == 'pickle': open(p, 'wb').write(pickle.dumps(('planted', n)))
            elif how == 'new': open(os.path.join(sub, 'x' + n), 'wb').write(b)
        m = os.path.join(d, 'manifest.json'); mb = open(m, 'rb').read()
        if manifest == 'cut': open(m, 'wb').write(mb[:len(mb) // 2])
        elif manifest == 'flip': open(m, 'wb').write(mb.replace(b'"files"', b'"filez"'))
        elif manifest == 'gone': os.unlink(m)
        err = io.StringIO()
        with contextlib.redirect_stderr(err): removed = _numba_verify(d)
        left = sorted(os.listdir(sub))
        want = sorted(n for n, how in zip(names, files) if how in ('keep', 'new')) if manifest == 'ok' else []   # 'new' adds a file beside it
        assert left == want, (case, left)                                  # nothing unrecorded or changed is left for numba to unpickle
        assert removed == len(files) + files.count('new') - len(want)
        lines = [l for l in err.getvalue().splitlines() if 'numba cache file(s)' in l]
        assert len(lines) == (1 if removed else 0), (case, err.getvalue())

def test_numba_cache_damage():
    assert fuzz_quick(numba_case, check_numba) >= NEW_MIN
