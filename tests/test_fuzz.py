"""Property-based tests (hypothesis) of issue 14: the design grammar against a small reference reading of the documented
grammar (designs page, "The design language"), printed designs parsing back to themselves, `recur`'s refusals (any
shape, dtype, container or parameter: finite results or one-line ValueError/TypeError) and the command line's exit
statuses (0 or 2 with one line on stderr, never a traceback). The budget here is small (a few seconds);
`benchmarks/fuzz_long.py` runs the same properties much longer, plus real processes under a watchdog."""
import contextlib, io, math, os, re
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pavlovattn.design.designs import parse_design, DesignError, MAX_COUNT
from pavlovattn.model.core import RULES

FIXED = not os.environ.get('FUZZ_RANDOM')       # `make test`: the same examples every run; the long run draws new ones
FAST = settings(max_examples=int(os.environ.get('FUZZ_EXAMPLES', 150)), deadline=None, derandomize=FIXED, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CLI = settings(max_examples=int(os.environ.get('FUZZ_CLI_EXAMPLES', 25)), deadline=None, derandomize=FIXED, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---- a reference reading of the documented grammar: regular expressions, written apart from the parser ----
CUE = r'(?:[A-Z]|\(\s*(?!US\s*\))[A-Za-z0-9_]+\s*\))'          # a capital letter, or a parenthesised name (not "US")
TRIAL = re.compile(rf'(?P<count>[0-9]*)\s*(?P<probe>#?)(?P<cues>(?:\s|{CUE})*)(?P<out>\+|-|\(\s*US\s*\))?\s*')
GROUP_NAME = re.compile(r'[A-Za-z0-9_.\-]+(?: +[A-Za-z0-9_.\-]+)*')

def ref_trial(text):
    m = TRIAL.fullmatch(text.strip())
    if not m or not text.strip(): return None
    cues = [c[1:-1].strip() if c.startswith('(') else c for c in re.findall(CUE, m['cues'])]
    count = int(m['count']) if m['count'] else 1
    probe, out = m['probe'] == '#', m['out'] and ('+' if m['out'].startswith('(') else m['out'])
    if not cues or len(set(cues)) < len(cues) or probe == bool(out) or not 1 <= count <= MAX_COUNT: return None
    return (count, tuple(cues), '#' if probe else out)

def ref_design(text):
    "The design as nested tuples [(name, [(random, [(count, cues, outcome)])])], or None where the grammar refuses it."
    if not isinstance(text, str) or not text.strip(): return None
    parts, groups = text.split(';'), []
    for raw in parts:
        if raw.count(':') > 1: return None
        if ':' in raw:
            name, body = raw.split(':')
            name = name.strip()
            if not GROUP_NAME.fullmatch(name): return None
        elif len(parts) > 1: return None
        else: name, body = 'group', raw
        phases = []
        for ph in body.split('|'):
            ph = ph.strip(); rnd = ph.startswith('!')
            trials = [ref_trial(t) for t in (ph[1:] if rnd else ph).split('/')]
            if not ph or None in trials: return None
            phases.append((rnd, trials))
        groups.append((name, phases))
    names = [g[0] for g in groups]
    return groups if len(set(names)) == len(names) else None

def structure(d):
    return [(g.name, [(p.random, [(t.count, t.cues, t.outcome) for t in p.trials]) for p in g.phases]) for g in d.groups]

# ---- strings: mostly well-formed designs, mutated with the characters that broke things before ----
ODD = ['a', '*', '>', '#', '(', ')', ':', ';', '|', '/', '!', '+', '-', '0', '١', '²', '𝟏', 'Ä', '\u2028', '\x85', '\x0b',
       '\x1c', '\n', '\t', ' ', '(US)', '(1)', '(a)', '(ctx)', '( c x )', '99999999', '1000001', '\u00a0']
cue = st.one_of(st.sampled_from('ABCXY'), st.sampled_from(['(ctx)', '(a)', '(1)', '(b_2)', '( ctx )']))
trial = st.builds(lambda n, probe, cs, out, sp: f"{n}{sp}{'#' if probe else ''}{''.join(cs)}{'' if probe else out}",
                  st.sampled_from(['', '1', '3', '10', '007']), st.booleans(), st.lists(cue, min_size=1, max_size=3, unique_by=lambda c: c.strip('() ')),
                  st.sampled_from(['+', '-', '(US)', ' +']), st.sampled_from(['', ' ']))
phase = st.builds(lambda r, ts: ('!' if r else '') + ' / '.join(ts), st.booleans(), st.lists(trial, min_size=1, max_size=3))
group_body = st.lists(phase, min_size=1, max_size=3).map(' | '.join)
named = st.lists(st.tuples(st.sampled_from(['a', 'b', 'exp', 'ctrl', 'x y', 'g.1', 'z-2']), group_body), min_size=1, max_size=3, unique_by=lambda g: g[0])
design = st.one_of(group_body, named.map(lambda gs: ' ; '.join(f'{n}: {b}' for n, b in gs)))

@st.composite
def mutated(draw):
    s = draw(design)
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(s)))
        op = draw(st.sampled_from(['insert', 'delete', 'replace']))
        tok = draw(st.sampled_from(ODD))
        s = s[:i] + tok + s[i:] if op == 'insert' else s[:i] + s[i + 1:] if op == 'delete' else s[:i] + tok + s[i + 1:]
    return s

texts = st.one_of(design, mutated(), st.lists(st.sampled_from(ODD + list('ABC10+-')), max_size=30).map(''.join))

def check_against_reference(s):
    ref = ref_design(s)
    try: got = structure(parse_design(s))
    except DesignError as e:
        msg = str(e)
        assert len(msg.splitlines()) == 1 and 'position' in msg, msg
        assert ref is None, f'{s!r}: refused ({msg}) but the grammar accepts it as {ref}'
        return None
    assert got == ref, f'{s!r}: parsed as {got}, the grammar reads {ref}'
    return got

@FAST
@given(texts)
def test_parser_agrees_with_the_reference_grammar(s):
    check_against_reference(s)

@FAST
@given(design)
def test_well_formed_designs_are_accepted(s):
    "The generator's designs follow the documented grammar: the reference accepts them (a check of the reference itself)."
    assert check_against_reference(s) is not None, s

@FAST
@given(texts)
def test_printed_designs_parse_back_to_themselves(s):
    try: d = parse_design(s)
    except DesignError: return
    d2 = parse_design(str(d))
    assert structure(d2) == structure(d) and str(d2) == str(d), (s, str(d))

# ---- the reproducers of issue 14, exactly ----
@pytest.mark.parametrize('text, msg', [
    ('١٠A+', '"١" at position 1: counts are written with the ASCII digits 0-9'),
    ('𝟏𝟎A+', '"𝟏" at position 1: counts are written with the ASCII digits 0-9'),
    ('²A+', '"²" at position 1: counts are written with the ASCII digits 0-9'),
    ('9' * 4301 + 'A+', 'at position 1: count 99999999999999999... is more than 1,000,000 trials of one type'),
    ('A' * 100000 + '+', 'at position 1: cue A appears twice in one compound'),
    ('10A\u2028* | 1B+', 'bad trial type "10A\\u2028*" at position 1'),
    ('10A\x0b*', '"10A\\x0b*"'), ('10A\x1c*', '"10A\\x1c*"'), ('10A\x85*', '"10A\\x85*"'), ('10A\u2029*', '"10A\\u2029*"'),
])
def test_issue14_grammar_reproducers(text, msg):
    with pytest.raises(DesignError) as e: parse_design(text)
    assert msg in str(e.value) and len(str(e.value).splitlines()) == 1, str(e.value)

def test_issue14_single_character_names_keep_their_parentheses():
    d = parse_design('10(1)+ / 5(0)- | #(1)(0)')
    assert str(d) == 'group: 10(1)+/5(0)- | #(1)(0)'
    assert str(parse_design('#(a)')) == 'group: #(a)' and structure(parse_design(str(parse_design('#(a)')))) == structure(parse_design('#(a)'))

def test_issue14_a_large_design_parses_in_linear_time():
    import itertools, string, time
    names = [''.join(p) for p in itertools.islice(itertools.product(string.ascii_lowercase, repeat=4), 30_000)]
    t = time.perf_counter(); d = parse_design('10' + ''.join(f'({n})' for n in names) + '+')
    assert len(d.cues) == 30_000 and time.perf_counter() - t < 5
    t = time.perf_counter()
    with pytest.raises(DesignError, match='cue A appears twice'): parse_design('A' * 100_000 + '+')
    assert time.perf_counter() - t < 5

# ---- the command line: exit status 0 or 2, one line on stderr, never a traceback ----
def opt(name, values): return st.one_of(st.just([]), st.sampled_from(values).map(lambda v: [name, v]))
small_design = st.one_of(st.sampled_from(['10A+ | #A', 'exp: !5A+/5AB- | #B ; ctrl: 5C+ | #B', '!3A(ctx)+/3(ctx)- | 2#A', '3AB+ | #A/#B',
                                          '1000000000000A+', '١٠A+', '10A\u2028* | 1B+', '', ' ; ', 'a: 1A+ ; a: 1B+']), mutated())
argv = st.builds(lambda d, *opts: ['run', d] + [x for o in opts for x in o], small_design,
                 opt('--rule', list(RULES) + ['lstm', '']), opt('--beta', ['0.1', '0.5', '1.9', '3', '-1', 'nan', 'inf', '1e308', 'x']),
                 opt('--beta-minus', ['0.2', '-0.1', 'nan']), opt('--gamma', ['0', '0.5', '1', '1.5', 'nan']),
                 opt('--lam', ['1', '-2', '1e308', 'inf']), opt('--keys', ['onehot', 'random', 'hash']),
                 opt('--dk', ['1', '3', '8', '0', '-1', '1000000000000', '2.5']), opt('--overlap', ['0', '0.3', '-0.9', '1', 'nan']),
                 opt('--salience', ['A=0.5', 'A=1,A=0.5', '(ctx)=2', 'Z=1', 'A=-1', 'A=nan', '=', 'A=1,,B=2', 'Z\u2028Y=1']),
                 opt('--subjects', ['1', '7', '0', '-3', '1000000000000', '1.5']), opt('--seed', ['0', '-5', '1.7', str(10**30)]),
                 opt('--dtype', ['float64', 'float32', 'float16']), opt('--device', ['cpu', 'meta', 'cuda:7', 'nosuchdevice']),
                 opt('--tau', ['1', '0', '-1', 'nan', '1e-300']), opt('--format', ['table', 'json', 'csv', 'xml']),
                 st.sampled_from([[], ['--normalize'], ['--miniblocks'], ['--normalize', '--miniblocks']]))

def run_main(args):
    from pavlovattn.apps.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = main(args)   # an exception here is a traceback
    return rc, out.getvalue(), err.getvalue()

def check_cli(args):
    rc, out, err = run_main(args)
    assert rc in (0, 2), (args, rc, err)
    if rc == 2:
        assert len(err.splitlines()) == 1 and err.startswith('pavlovattn'), (args, err)
    else: assert out and not err, (args, err)

@CLI
@given(argv)
def test_cli_exits_0_or_2_never_a_traceback(args):
    check_cli(args)

# ---- recur's refusals: any shape, dtype, container or parameter either runs (finite results) or is refused with one line ----
from pavlovattn.model.core import recur
from pavlovattn.model.families import FAMILIES

@st.composite
def recur_call(draw):
    B, T, H, dk, dv = draw(st.integers(0, 2)), draw(st.integers(0, 4)), 1, draw(st.integers(1, 3)), draw(st.integers(1, 2))
    dtype = draw(st.sampled_from(['float64', 'float32', 'int64', 'bool', 'complex64']))
    box = draw(st.sampled_from(['tensor', 'numpy', 'list']))
    def make(shape, scale):
        import torch
        x = (torch.rand(*shape, generator=torch.Generator().manual_seed(draw(st.integers(0, 99)))) * scale).to(getattr(torch, dtype))
        return x if box == 'tensor' else x.numpy() if box == 'numpy' else x.tolist()
    kw = dict(rule=draw(st.sampled_from(sorted(FAMILIES) + ['nope'])), beta=draw(st.sampled_from([0.0, 0.2, 1.0, -0.5, math.nan, math.inf])))
    for name, values in (('gamma', [None, 0.5, 1.0, 1.5, -0.1]), ('tau', [None, 1.0, 0.0, -1.0]), ('sink', [None, 1.0, 0.0, -1.0])):
        x = draw(st.sampled_from(values))
        if x is not None: kw[name] = x
    return make((B, T, H, dk), 0.7), make((B, T, H, dv), 1.0), kw

def test_recur_on_meta_tensors_is_one_line():
    "Issue 32, reproducer 13: recur on meta tensors raised from Tensor.item(); now one line, and check=False gives the shapes on meta."
    import torch
    k, v = torch.zeros(2, 3, 1, 4, device='meta'), torch.zeros(2, 3, 1, 1, device='meta')
    with pytest.raises(ValueError) as e: recur(k, v, rule='delta', beta=0.1)
    assert 'meta tensors hold no values' in str(e.value) and len(str(e.value).splitlines()) == 1
    tr = recur(k, v, rule='delta', beta=0.1, check=False)
    assert tr.pred.device.type == 'meta' and tr.pred.shape == (2, 3, 1, 1)

@FAST
@given(recur_call())
def test_recur_runs_or_refuses_with_one_line(call):
    import torch
    k, v, kw = call
    try: tr = recur(k, v, **kw)
    except (ValueError, TypeError) as e:
        assert len(str(e).splitlines()) == 1 and str(e), repr(e)
        return
    assert torch.isfinite(tr.pred).all() and torch.isfinite(tr.out).all(), kw

# ---- issue 32: every numeric flag x {NaN, ±inf, ±0, subnormal, 1e308, Unicode digits, underscores, empty} ----
IMPOSSIBLE = ['nan', 'NaN', 'inf', '-inf', '1e309', '١٠', '１', '1_0', '', ' ', '0x10', '1e', '--']
ODD = ['0', '-0', '5e-324', '1e308', '-1e308', '2.5', '-1']
FLAGS = {('run', '10A+ | #A'): ['--beta', '--beta-minus', '--gamma', '--lam', '--dk', '--overlap', '--subjects', '--seed', '--tau', '--omega'],
         ('score',): ['--beta', '--gamma', '--tau', '--subjects', '--seed'],
         ('fit',): ['--steps', '--restarts', '--lr', '--subjects', '--seed'],
         ('battery', 'delta'): ['--subjects', '--seed', '--gamma']}

def _stop_before_work(cmd):
    "Flags that end the command right after its checks (fit/score/battery would otherwise run their experiments)."
    return {'score': ['--format', 'xml'], 'fit': ['--held-out', 'renewal'], 'battery': ['--format', 'xml']}.get(cmd[0], [])

@pytest.mark.parametrize('cmd, flag', [(c, f) for c, fs in FLAGS.items() for f in fs])
def test_numeric_flags_refuse_impossible_values_and_never_trace(cmd, flag):
    for v in IMPOSSIBLE + ODD:
        args = [*cmd, flag, v, *_stop_before_work(cmd)]
        if cmd[0] == 'run' and flag == '--omega': args += ['--rule', 'vhw']
        rc, out, err = run_main(args)
        assert rc in (0, 2) and 'Traceback' not in err, (args, rc, err)
        if rc == 2: assert len(err.splitlines()) == 1 and err.startswith('pavlovattn'), (args, err)
        if v in IMPOSSIBLE: assert rc == 2 and flag in err, (args, rc, out, err)          # never silently accepted
        if rc == 0: assert 'NaN' not in out and 'Infinity' not in out, (args, out)
