"""The `pavlovattn` command as a whole: `--help` and `--version` answer without importing torch, every error starts with the
command's name and is one line with exit status 2, and what `--help` lists agrees with what the commands accept."""
import configparser, json, pathlib, subprocess, sys, time
import pytest
from pavlovattn.apps.cli import SUBCOMMANDS
from warm_cli import cli      # the command from a warm start: a process per call, forked after the imports

HEAVY = ('torch', 'numpy', 'pandas', 'matplotlib', 'numba')
ROOT = pathlib.Path(__file__).resolve().parents[1]

def pv(*args, timeout=600):
    return cli(*args, timeout=timeout)

def loaded_after(argv):
    "Run `main(argv)` in a fresh interpreter; return (exit status, stdout, heavy modules it imported, seconds)."
    code = ("import sys, time, json; t = time.perf_counter(); from pavlovattn.apps.cli import main\n"
            "try: rc = main(%r)\nexcept SystemExit as e: rc = e.code\n"
            "print(json.dumps([rc, sorted(m for m in %r if m in sys.modules), time.perf_counter() - t]), file=sys.stderr)" % (argv, HEAVY))
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    rc, heavy, secs = json.loads(r.stderr.strip().splitlines()[-1])
    return rc, r.stdout, heavy, secs

def test_import_loads_no_heavy_module():
    r = subprocess.run([sys.executable, '-c', 'import sys, pavlovattn.apps.cli; print(sorted(m for m in %r if m in sys.modules))' % (HEAVY,)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == '[]', r.stdout + r.stderr

@pytest.mark.parametrize('argv, shows', [
    (['--help'], 'usage: pavlovattn'), (['run', '--help'], '--rule RULE'), (['reproduce', '--help'], '--only ID'),
    (['score', '--help'], '--rule RULE'), (['fit', '--help'], '--held-out'), (['fit', '--help'], '--cv'), (['--version'], 'pavlovattn '),
])
def test_help_and_version_answer_without_torch(argv, shows):
    rc, out, heavy, secs = loaded_after(argv)
    assert rc == 0 and shows in out and heavy == [], (rc, heavy, out)
    assert secs < 5, secs          # without torch it is ~0.05 s; the bound only catches a heavy import slipping back in

def test_version_is_the_package_version():
    cfg = configparser.ConfigParser(); cfg.read(ROOT / 'settings.ini')
    r = pv('--version')
    assert r.returncode == 0 and r.stdout.strip() == f"pavlovattn {cfg['DEFAULT']['version']}"

def test_help_names_what_the_commands_accept():
    "`--help` cannot import the families (torch): the names the command line lists are the library's own lists, in full."
    from pavlovattn.apps.cli import _NAMES
    from pavlovattn.model.core import RULES
    from pavlovattn.design.designs import design_rules, KEY_CODINGS, DIALECTS
    from pavlovattn.apps.interop import RESULT_LAYOUTS
    from pavlovattn.model.families import BUILTIN
    from pavlovattn.base.sweep import BACKENDS
    # families registered since (a user's, a classical one on first use) are not listed by --help
    assert _NAMES == {'rule': tuple(r for r in design_rules() if r in BUILTIN), 'page rule': RULES, 'key coding': KEY_CODINGS, 'dialect': DIALECTS, 'results layout': RESULT_LAYOUTS,
                      'family': BUILTIN, 'backend': BACKENDS}
    out = ' '.join(pv('run', '--help').stdout.split())
    assert f"attention family: {', '.join(_NAMES['rule'])} (default delta)" in out and 'key coding: onehot, random' in out
    r = pv('run', '10A+', '--rule', 'nope')                              # the full list comes with the refusal
    assert r.returncode == 2 and f"valid rules: {', '.join(_NAMES['rule'])}" in r.stderr

@pytest.mark.parametrize('argv, line', [
    (['run', '10A+', '--rule', 'detla'], "pavlovattn run: unknown rule 'detla'; valid rules: hebbian, normalized, decay, gla, delta, "
                                         "gated-delta, channel-gate, softmax, trace, vhw, mackintosh, pkh, kalman, kalman-ccnlab, oja, bcm, divisive, neuromodulated, titans"),
    (['run', '10A+', '--keys', 'rand'], "pavlovattn run: unknown key coding 'rand'; valid: onehot, random"),
    (['run', '10A+', '--dialect', 'R'], "pavlovattn run: unknown dialect 'R'; valid: native, calmr"),
    (['run', '10A+', '--results-file', 'r.csv', '--results-layout', 'wide'], "pavlovattn run: unknown results layout 'wide'; valid: tidy, calmr"),
    (['run', '10A+ |'], 'pavlovattn run: empty phase at position 7: expected trial types such as 10A+ between the "|"s (skip: a phase this group skips)'),
    (['score', '--rule', 'gla'], "pavlovattn score: unknown rule 'gla'; valid: hebbian, decay, delta, gated-delta, channel-gate, softmax"),
    (['fit', '--format', 'csv'], "pavlovattn fit: unknown format 'csv'; valid: table, json"),
    # audit of issue 36: a missing file, a misspelt family on battery, sizes and suffixes were refused only after torch
    (['run', '10A+', '--dk', '0'], 'pavlovattn run: argument --dk: dk must be a positive integer; got 0'),
    (['run', '10A+', '--rule', 'vhw', '--omega', '-1'], 'pavlovattn run: argument --omega: omega must be a number >= 0; got -1'),
    (['run', '--calmr', 'no-such.csv'], 'pavlovattn run: cannot read --calmr no-such.csv: No such file or directory'),
    (['run', '--palms', 'no-such.rw'], 'pavlovattn run: cannot read --palms no-such.rw: no such file (a design written out goes as DESIGN)'),
    (['run', '--pyndl', 'no-such.tab'], 'pavlovattn run: cannot read --pyndl no-such.tab: No such file or directory'),
    (['run', '10A+', '--rule', 'no-such.py'], 'pavlovattn run: cannot load a family from no-such.py: no such file'),
    (['run', '10A+', '--rule', 'no-such.py:MINE'], 'pavlovattn run: cannot load a family from no-such.py: no such file'),
    (['run', '10A+', '--results-file', 'r.txt'], 'pavlovattn run: cannot write .txt: use .csv or .parquet'),
    (['battery', 'detla'], "pavlovattn battery: unknown rule 'detla'; valid rules: hebbian, normalized, decay, gla, trace, delta, "
                           "gated-delta, channel-gate, vhw, softmax, mackintosh, pkh, kalman, kalman-ccnlab, oja, bcm, divisive, neuromodulated, titans (or a Python file or module:NAME that defines a Family)"),
    (['battery', 'no-such.py'], 'pavlovattn battery: cannot load a family from no-such.py: no such file'),
    (['battery', 'delta', '--format', 'xml'], "pavlovattn battery: unknown format 'xml'; valid: table, json, csv"),   # was 'pavlovattn run: ...'
    (['reproduce', '--backend', 'nope'], "pavlovattn reproduce: unknown backend 'nope'; valid: inprocess, processes, dask"),
    (['probe-model', '/no/such/dir'], "pavlovattn probe-model: no such directory '/no/such/dir' (a local model directory, or a name in "
                                      "the local Hugging Face cache such as org/name)"),
])
def test_argument_errors_are_answered_before_torch_is_imported(argv, line, capsys):
    "Issue 36: a misspelt name or design took 20 s on a loaded machine to be refused, the time to import torch; now before it."
    rc, out, heavy, secs = loaded_after(argv)
    assert rc == 2 and out == '' and not {'torch', 'numba'} & set(heavy), (rc, heavy)
    r = pv(*argv)                                                        # the same line as when the library itself refused it
    assert r.returncode == 2 and r.stderr == line + '\n', r.stderr

def test_a_family_file_is_not_refused_by_name(tmp_path):
    "`--rule FILE.py` and `module:NAME` are not in the list of names: they go to the family loader, which says what is wrong."
    r = pv('run', '10A+', '--rule', str(tmp_path / 'nope.py'))
    assert r.returncode == 2 and 'unknown rule' not in r.stderr and 'nope.py' in r.stderr, r.stderr

def test_probe_model_refusal_is_one_line_with_fla_installed():
    "fla printed 'UserWarning: Triton is not supported on current platform' and its source line on stderr before the refusal (3 lines)."
    pytest.importorskip('transformers'); pytest.importorskip('fla')
    r = pv('probe-model', 'no-such-org/no-such-model')
    assert r.returncode == 2 and r.stdout == '' and r.stderr == ("pavlovattn probe-model: no model 'no-such-org/no-such-model' on this machine "
        "(nothing is downloaded): get it with `hf download no-such-org/no-such-model` (or pass a local directory)\n"), r.stderr

def no_cuda():
    import torch
    return not torch.cuda.is_available()

@pytest.mark.parametrize('argv, start', [
    (['run', '10A+', '--device', 'cuda'], "pavlovattn run: device 'cuda' cannot run this here"),
    (['reproduce', '--only', 'core-deltanet-is-rescorla-wagner', '--device', 'cuda', '--quiet'], "pavlovattn reproduce: device 'cuda' cannot run this here"),
    (['score', '--only', 'overexpectation', '--device', 'cuda'], "pavlovattn score: device 'cuda' cannot run this here"),
    (['fit', '--only', 'overexpectation', '--device', 'cuda'], "pavlovattn fit: device 'cuda' cannot run this here"),
])
def test_cuda_without_a_gpu_names_the_command(argv, start):
    if not no_cuda(): pytest.skip('this machine has CUDA')
    r = pv(*argv)
    assert r.returncode == 2 and r.stderr.startswith(start) and len(r.stderr.splitlines()) == 1 and r.stdout == '', r.stderr

@pytest.mark.parametrize('argv, start', [
    (['run', '10A+', '--beta', 'x'], 'pavlovattn run: argument --beta'),
    (['run', '10A+', '--rule', 'lstm'], "pavlovattn run: unknown rule 'lstm'"),
    (['run', '10A+', '--dialect', 'r'], "pavlovattn run: unknown dialect 'r'; valid: native, calmr"),
    (['run', '--calmr', '/no/such/file.csv'], 'pavlovattn run: cannot read --calmr /no/such/file.csv'),
    (['reproduce', '--only', 'nope'], 'pavlovattn reproduce: unknown claim id(s) nope'),
    (['reproduce', '--frobnicate'], 'pavlovattn reproduce: unrecognized arguments: --frobnicate'),
    (['score', '--rule', 'normalized'], "pavlovattn score: unknown rule 'normalized'"),
    (['score', '--format', 'csv'], "pavlovattn score: unknown format 'csv'"),
    (['fit', '--steps', '0'], 'pavlovattn fit: --steps must be at least 1'),
    (['fit', '--held-out', 'renewal'], 'pavlovattn fit: --held-out needs --joint'),
    (['explode'], f"pavlovattn: argument {{{','.join(SUBCOMMANDS)}}}: invalid choice: 'explode'"),   # every command, in their order
    (['--versoin'], 'pavlovattn: unrecognized arguments: --versoin'),
])
def test_every_error_starts_with_the_command(argv, start):
    r = pv(*argv)
    assert r.returncode == 2 and r.stderr.startswith(start) and len(r.stderr.splitlines()) == 1, r.stderr
    assert 'Traceback' not in r.stderr and r.stdout == ''

def test_no_command_prints_a_usage_line_on_stderr_and_exits_2():
    "Issue 32, reproducer 13: `pavlovattn` with no arguments exited 2 with an empty stderr."
    r = pv()
    assert r.returncode == 2 and r.stdout == '' and len(r.stderr.splitlines()) == 1, (r.stdout, r.stderr)
    assert r.stderr.startswith('pavlovattn: a command is required; usage: pavlovattn') and '--help' in r.stderr

def test_claims_that_cannot_run_are_reported_under_the_command(monkeypatch, capsys):
    "A claim whose code fails: the table shows it, stderr names it in one line under `pavlovattn reproduce:`, exit status 1."
    from pavlovattn.apps import cli
    from pavlovattn.base import registry
    rows = [dict(id='toy', claim='c', source='s', expected='e', measured='could not run: RuntimeError: x', verdict='fail', check='fail',
                 paper='no number', paper_rule='', seconds=0.0, data={'error': 'RuntimeError: x'})]
    monkeypatch.setattr(registry, 'run_claims', lambda ids, **kw: (rows, False))
    assert cli.main(['reproduce', '--only', 'core-deltanet-is-rescorla-wagner', '--quiet']) == 1
    err = capsys.readouterr().err
    assert err == 'pavlovattn reproduce: some claims could not run: toy\n'

# designs from other simulators on the command line: the same numbers as the readers give in Python; results written as tables
PALMS = 'Blocking|10A+|10AB+|1B\nControl|10C+|10AB+|1B\n'
EVENTS = 'cues\toutcomes\tfrequency\nA_B\tx\t5\nA\tx\t3\nB\t\t2\n'

def _strengths(out): return {g: v['strengths'] for g, v in json.loads(out)['groups'].items()}

def test_palms_and_pyndl_files_run_as_their_readers_read_them(tmp_path):
    from pavlovattn.apps import interop
    from pavlovattn.design import designs
    (tmp_path / 'b.rw').write_text(PALMS); (tmp_path / 'e.tsv').write_text(EVENTS)
    for flag, path, design in (('--palms', 'b.rw', interop.read_palms(str(tmp_path / 'b.rw'))),
                               ('--pyndl', 'e.tsv', interop.read_pyndl(tmp_path / 'e.tsv'))):
        r = pv('run', flag, str(tmp_path / path), '--beta', '0.2', '--format', 'json')
        assert r.returncode == 0, r.stderr
        want = designs.simulate(design, beta=0.2).to_json()['groups']
        got = _strengths(r.stdout)
        assert got.keys() == want.keys()
        for g in got: assert got[g] == pytest.approx(want[g]['strengths'], abs=1e-12), (flag, g)
    # unsigned PALMS trials: '-' by default (PALMS since 2026-02), '+' on request; here the last B trial is unsigned
    hi = _strengths(pv('run', '--palms', str(tmp_path / 'b.rw'), '--palms-unsigned', '+', '--format', 'json').stdout)
    lo = _strengths(pv('run', '--palms', str(tmp_path / 'b.rw'), '--format', 'json').stdout)
    assert hi['Blocking']['B'] > lo['Blocking']['B']

def test_results_file_layouts(tmp_path):
    import pandas as pd
    r = pv('run', 'exp: 3A+ | 2AB+', '--results-file', str(tmp_path / 't.csv'))
    assert r.returncode == 0, r.stderr
    t = pd.read_csv(tmp_path / 't.csv')
    assert {'group', 'phase', 'trial', 'cue', 'statistic', 'value'} <= set(t.columns)
    r = pv('run', 'exp: 3A+ | 2AB+', '--results-file', str(tmp_path / 'c.csv'), '--results-layout', 'calmr', '--beta', '0.5')
    assert r.returncode == 0, r.stderr
    c = pd.read_csv(tmp_path / 'c.csv')
    assert list(c.columns) == ['group', 'phase', 'trial_type', 'trial', 'block_size', 's1', 's2', 'value', 'model']
    V, ref = {'A': 0.0, 'B': 0.0}, []                                   # an independent Rescorla-Wagner loop, beta 0.5, lambda 1
    for cues in ('A', 'A', 'A', 'AB', 'AB'):
        ref.append(dict(V)); err = 1 - sum(V[x] for x in cues)
        for x in cues: V[x] += 0.5 * err
    for cue in 'AB':
        got = c[c.s1 == cue].sort_values('trial')['value'].tolist()     # strength before each trial
        assert got == pytest.approx([r[cue] for r in ref], abs=1e-12), cue

@pytest.mark.parametrize('argv, start', [
    (['run', 'a: 2A+', '--palms', 'x.rw'], 'pavlovattn run: give one of DESIGN'),
    (['run'], 'pavlovattn run: the following arguments are required'),
    (['run', 'a: 2A+', '--outcome', 'x'], 'pavlovattn run: --outcome goes with --pyndl'),
    (['run', 'a: 2A+', '--results-layout', 'calmr'], 'pavlovattn run: --results-layout goes with --results-file'),
    (['run', 'a: 2A+', '--results-file', 'r.csv', '--results-layout', 'wide'], 'pavlovattn run: unknown results layout'),
    (['run', 'a: 2A+', '--results-file', 'r.txt'], 'pavlovattn run: cannot write .txt'),
    (['run', '--pyndl', 'does-not-exist.tsv'], 'pavlovattn run: cannot read --pyndl'),
    (['run', '--palms', 'does-not-exist.rw'], 'pavlovattn run: cannot read'),
])
def test_interop_flags_refuse_bad_input_in_one_line(argv, start, tmp_path):
    r = cli(*argv, timeout=600, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith(start) and len(r.stderr.strip().splitlines()) == 1, r.stderr

def test_omega_reaches_vhw_and_is_refused_elsewhere():
    from pavlovattn.design import designs
    d = 'g: 10AB+ | 10A+ | #B'
    for w in (0.25, 1.0):
        r = pv('run', '--rule', 'vhw', '--omega', str(w), d, '--format', 'json')
        want = designs.simulate(d, rule='vhw', omega=w).to_json()['groups']['g']['probes'][0]['mean']
        assert r.returncode == 0 and json.loads(r.stdout)['groups']['g']['probes'][0]['mean'] == pytest.approx(want, abs=1e-12)
    r = pv('run', '--omega', '1', d)
    assert r.returncode == 2 and r.stderr.startswith('pavlovattn run: the delta family has no omega')

def test_named_us_probe_rows_name_their_us():
    r = pv('run', '--dialect', 'calmr', 'g: 10A(US_a)/10B(US_b) | 1#A')
    assert r.returncode == 0, r.stderr
    assert '#A -> US_a' in r.stdout and '#A -> US_b' in r.stdout

EVENTS2 = 'cues\toutcomes\nA_B\tx\nA\tx_y\nB\t\n'                        # two outcomes

@pytest.mark.parametrize('args, line', [
    (['a: 2A+', '--all-outcomes'], 'pavlovattn run: --all-outcomes goes with --pyndl'),
    (['--pyndl', 'e.tsv', '--all-outcomes', '--outcome', 'x'], 'pavlovattn run: --outcome NAME runs one outcome as a design and --all-outcomes learns every outcome: give one of them'),
    (['--pyndl', 'e.tsv', '--all-outcomes', '--rule', 'hebbian', '--subjects', '3'], "pavlovattn run: --all-outcomes learns pyndl's model (the delta rule on one event after another, "
     "in float64 on the CPU: alpha = --salience, betas = --beta and --beta-minus, lambda = --lam) and takes no --rule, --subjects"),
    (['--pyndl', 'e.tsv', '--all-outcomes', '--device', 'cuda'], "pavlovattn run: --all-outcomes learns pyndl's model (the delta rule on one event after another, "
     "in float64 on the CPU: alpha = --salience, betas = --beta and --beta-minus, lambda = --lam) and takes no --device"),
    (['--pyndl', 'e.tsv', '--all-outcomes', '--results-file', 'w.csv', '--results-layout', 'calmr'], "pavlovattn run: --all-outcomes learns pyndl's model (the delta rule on "
     "one event after another, in float64 on the CPU: alpha = --salience, betas = --beta and --beta-minus, lambda = --lam) and takes no --results-layout"),
    (['--pyndl', 'e.tsv', '--all-outcomes', '--results-file', 'w.txt'], 'pavlovattn run: cannot write .txt: use .csv or .parquet'),
    (['--pyndl', 'nope.tsv', '--all-outcomes'], 'pavlovattn run: cannot read --pyndl nope.tsv: No such file or directory'),
    (['--pyndl', 'e.tsv', '--all-outcomes', '--salience', 'Z=2'], 'pavlovattn run: salience given for unknown cue(s) Z; no event of e.tsv has them'),
    (['--pyndl', 'e.tsv', '--all-outcomes', '--beta', '1.5', '--beta-minus', '0.5'], "pavlovattn run: unstable learning rate: the event on line 2 of e.tsv has "
     "beta * (sum of its cues' alphas) = 3 > 2 (stable writes need <= 2; beta is --beta towards a present outcome, --beta-minus towards an absent one); "
     "--allow-unstable runs it anyway, with a warning"),                  # A_B -> x: 1.5 * 2; the design route refuses A_B+ at beta 1.5 too
    (['--pyndl', 'e.tsv'], "pavlovattn run: e.tsv: 2 outcomes (x, y): give --outcome NAME to run one of them as a design, or --all-outcomes to learn every outcome's weights in one pass"),
])
def test_all_outcomes_refuses_in_one_line(args, line, tmp_path):
    "`run --pyndl EVENTS --all-outcomes` (learn_pyndl: every outcome in one pass) takes pyndl's parameters only; the rest is refused, one line, exit 2."
    (tmp_path / 'e.tsv').write_text(EVENTS2)
    r = cli('run', *args, timeout=600, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr == line + '\n' and r.stdout == '', r.stderr

def test_all_outcomes_rows_are_the_design_route_per_outcome(tmp_path):
    "Each row of --all-outcomes is what --outcome NAME gives as final strengths (the design route, the compiled summary kernel), to 1e-12; text table too."
    (tmp_path / 'e.tsv').write_text(EVENTS2)
    args = ('--pyndl', str(tmp_path / 'e.tsv'), '--beta', '0.3', '--beta-minus', '0.2', '--salience', 'A=0.5', '--lam', '0.9')
    r = pv('run', *args, '--all-outcomes', '--format', 'json')
    assert r.returncode == 0, r.stderr
    W = json.loads(r.stdout)['weights']
    for o in ('x', 'y'):
        s = pv('run', *args, '--outcome', o, '--format', 'json')
        assert s.returncode == 0, s.stderr
        assert W[o] == pytest.approx(_strengths(s.stdout)['group'], abs=1e-12) and any(abs(v) > 0.1 for v in W[o].values()), o
    t = pv('run', *args, '--all-outcomes').stdout.splitlines()
    assert t[0].startswith("pyndl's ndl (the delta rule on every outcome, one pass): 3 events, 2 cues x 2 outcomes") and t[1].split() == ['outcome', '\\', 'cue', 'A', 'B']
    assert [float(v) for v in t[2].split()[1:]] == pytest.approx([W['x']['A'], W['x']['B']], rel=1e-5)

def test_all_outcomes_allow_unstable_warns_and_answers(tmp_path):
    "--allow-unstable: the unstable event named in one warning line on stderr, the weights those of learn_pyndl (to 1e-12), exit 0."
    from pavlovattn.apps.interop import learn_pyndl
    (tmp_path / 'e.tsv').write_text(EVENTS2)
    r = pv('run', '--pyndl', str(tmp_path / 'e.tsv'), '--all-outcomes', '--beta', '1.5', '--beta-minus', '0.5', '--allow-unstable', '--format', 'json')
    assert r.returncode == 0 and len(r.stderr.splitlines()) == 1 and r.stderr.startswith('pavlovattn run: warning: unstable learning rate: the event on line 2'), r.stderr
    W, ref = json.loads(r.stdout)['weights'], learn_pyndl(tmp_path / 'e.tsv', alpha=1.0, betas=(1.5, 0.5))
    assert max(abs(W[o][c] - ref.loc[o, c]) for o in ref.index for c in ref.columns) < 1e-12


def test_palms_params_run_a_palms_file_with_its_own_parameters(tmp_path):
    "run --palms FILE --palms-params: the file's @ lines (beta, betan, lamda, per-cue alpha, num_trials) as PALMS runs them, equal to read_palms(params=True) + simulate; a flag the file sets is refused, not ignored; another model's file by its name."
    from pavlovattn.apps.interop import read_palms
    from pavlovattn.design.designs import simulate
    f = pathlib.Path(__file__).parent / 'fixtures' / 'palms' / 'phase_params.rw'
    r = pv('run', '--palms', str(f), '--palms-params', '--format', 'json')
    assert r.returncode == 0, r.stderr
    d, kw = read_palms(f, params=True)
    assert kw['beta'] == {'+': 0.45, '-': 0.25} and kw['lam'] == 0.8 and kw['subjects'] == 1000 and kw['salience']['B'] == 0.35
    want = simulate(d, **kw).to_json(); got = json.loads(r.stdout)
    assert got['params']['beta'] == kw['beta'] and got['params']['salience'] == kw['salience'] and got['groups'] == want['groups']
    plain = json.loads(pv('run', '--palms', str(f), '--allow-unstable', '--format', 'json').stdout)   # without the flag: the command line's defaults
    assert plain['params']['beta'] == 0.1 and plain['groups'] != got['groups']
    for args, msg in ((('--palms', str(f), '--palms-params', '--lam', '2'), 'leave out --lam'), (('10A+', '--palms-params'), '--palms-params goes with --palms')):
        r = pv("run", *args)
        assert r.returncode == 2 and r.stderr.count('\n') == 1 and msg in r.stderr, r.stderr
    other = tmp_path / 'ph.rw'; other.write_text('@model=Pearce Hall\nG|4A+\n')
    r = pv('run', '--palms', str(other), '--palms-params')
    assert r.returncode == 2 and "'Pearce Hall'" in r.stderr and r.stderr.count('\n') == 1, r.stderr

def test_readme_commands_name_input_files_a_clone_has():
    "Issue 36 audit: the README's shell lines run as written from a fresh clone; `pavlovattn battery my_family.py` named a file no clone has."
    import re, shlex
    lines = [l for b in re.findall(r'```sh\n(.*?)```', (ROOT / 'README.md').read_text(), re.S) for l in b.splitlines()]
    inputs = []
    for words in (shlex.split(l, comments=True) for l in lines):
        if words[:1] != ['pavlovattn']: continue
        inputs += [w for i, w in enumerate(words) if i > 1 and w.endswith(('.py', '.csv', '.rw', '.tab', '.tsv', '.gz', '.yaml', '.yml'))
                   and (words[i - 1] in ('--rule', '--calmr', '--palms', '--pyndl') or (i == 2 and words[1] in ('battery', 'sweep')))]
    assert inputs, lines                                                   # the README names at least one input file
    assert [w for w in inputs if not (ROOT / w).is_file()] == []

def test_tier_plans_state_only_measured_costs():
    "Issue 36 audit: --full's plan line gave the trained claims' CPU cost at the default size (1-1.5 h), which is not what --full trains; the other tiers' counts come from the registry."
    from pavlovattn.apps.cli import _tier_plan, _trains, TRAINED_COST
    from pavlovattn.base.registry import load_claims
    claims = load_claims(); trained = [i for i in claims if _trains(claims[i])]
    full = _tier_plan(claims, list(claims), 'full')
    assert 'not measured on a CPU' in full and TRAINED_COST not in full and f'the {len(trained)} trained-model claim(s) train larger models' in full, full
    assert TRAINED_COST in _tier_plan(claims, list(claims), 'trained')
    default = _tier_plan(claims, [i for i in claims if i not in trained], 'default')
    assert f'--trained adds the {len(trained)} trained-model claims' in default and TRAINED_COST not in default, default

_CTRL_C_IN_COMPILE = '''
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)   # Ctrl-C as in a terminal (a job started in the background ignores it)
from numba.core import event
import pavlovattn.model.kernels                       # the package counts numba's compilations from here on
hit = []
class CtrlC(event.Listener):                         # the user presses Ctrl-C as numba starts compiling the first kernel
    def on_start(self, e):
        if not hit: hit.append(e.data['dispatcher']); signal.raise_signal(signal.SIGINT)
    def on_end(self, e): pass
event.register('numba:compile', CtrlC())
from pavlovattn.apps import cli
rc = cli.main(sys.argv[1:])
print('compiled', len(hit[0].signatures) if hit else None, file=sys.stderr); sys.exit(rc)
'''

def test_ctrl_c_while_numba_compiles_waits_for_the_compilation(tmp_path):
    "Ctrl-C in a numba compilation: one line and 130 once the kernel is compiled (raised inside it, LLVM can abort the process)."
    env = {k: v for k, v in __import__('os').environ.items() if k != 'NUMBA_CACHE_DIR'}   # set by this process when it loaded the kernels
    env['PAVLOVATTN_CACHE'] = str(tmp_path)                                              # an empty cache: the kernels compile here
    p = subprocess.run([sys.executable, '-c', _CTRL_C_IN_COMPILE, 'run', '!10A+/10B-', '--subjects', '5000'],
                       capture_output=True, text=True, env=env, timeout=300)
    assert (p.returncode, p.stderr.splitlines()) == (130, ['pavlovattn run: interrupted', 'compiled 1']), p.stderr[-2000:]
