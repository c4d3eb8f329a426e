"Issue 32 (robustness, wave 3): the command line's reproducers 5, 7, 8, 9, 11 and 13, each a test that would catch it again."
import contextlib, io, json, os, stat, subprocess, sys, threading
import pytest
from pavlovattn.apps.cli import main

def run_main(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = main(list(args))
    return rc, out.getvalue(), err.getvalue()

def refused(*args, has=''):
    rc, out, err = run_main(*args)
    assert rc == 2 and out == '' and len(err.splitlines()) == 1 and err.startswith('pavlovattn') and has in err, (args, rc, out, err)
    return err

def strict_json(text):
    def no(c): raise ValueError(f'{c} is not JSON')
    return json.loads(text, parse_constant=no)

# ---- 7: outputs are valid or refused ----
@pytest.mark.parametrize('fmt', ['json', 'table', 'csv'])
def test_a_non_finite_statistic_is_refused_with_its_cause(fmt):
    refused('run', '!5A+/5AB- | #A', '--lam', '1e300', '--beta', '0.5', '--subjects', '3', '--format', fmt, has='not finite')

def test_a_refusal_after_a_warning_is_still_one_line():
    "Found by the fuzz suite (seeds 7 and 32 at 30 s): a calmr run with a partial-run note whose sd overflowed printed the note, then the refusal (two lines, exit 2)."
    err = refused('run', '!5A(US)/5AB | 1#A', '--dialect', 'calmr', '--lam', '1e300', '--beta', '0.5', '--subjects', '3', '--format', 'json', has='is not finite')
    assert 'partial' not in err
    rc, out, err = run_main('run', '!5A(US)/5AB | 1#A', '--dialect', 'calmr', '--subjects', '3', '--format', 'json')
    assert rc == 0 and strict_json(out) and err.startswith('pavlovattn run: warning: partial') and len(err.splitlines()) == 1, err

def test_json_output_is_strict():
    rc, out, err = run_main('run', '!5A+/5AB- | #A/#B', '--subjects', '3', '--format', 'json')
    assert rc == 0 and strict_json(out)['groups']['group']['probes'][0]['subjects'] == 3

@pytest.mark.parametrize('x', ['nan', '1e309', '-1', '1.5', '1e308', '-inf'])
def test_overlap_is_checked_with_one_cue(x):
    refused('run', '10A+ | #A', '--keys', 'random', '--overlap', x, '--format', 'json', has='--overlap')

# ---- 8: a softmax temperature <= 0 ----
@pytest.mark.parametrize('tau', ['-1', '-0', '0', '0.0', 'nan'])
def test_run_refuses_tau_at_or_below_zero(tau):
    err = refused('run', '10A+ | #A', '--rule', 'softmax', '--tau', tau)
    assert '--tau' in err and 'beta or lam' not in err

def test_a_positive_tau_runs():
    rc, out, _ = run_main('run', '10A+ | #A', '--rule', 'softmax', '--tau', '0.5', '--format', 'json')
    assert rc == 0 and strict_json(out)['params']['tau'] == 0.5

# ---- 5: a CPU out-of-memory is the one-line message ----
def test_torch_cpu_allocator_error_is_out_of_memory():
    import torch
    from pavlovattn.apps.cli import _out_of_memory
    with pytest.raises(RuntimeError) as e: torch.empty(2**44, dtype=torch.uint8)       # 16 TiB: refused by the allocator, nothing spent
    assert _out_of_memory(e.value), str(e.value)
    assert not _out_of_memory(RuntimeError('a shape mismatch'))

def test_out_of_memory_under_ulimit_is_one_line():
    "The reproducer: (ulimit -v 3000000; pavlovattn run '10(c0)...(c14999)+') was a RuntimeError traceback."
    design = '10' + ''.join(f'(c{i})' for i in range(15000)) + '+'
    code = ("import resource, sys; import torch, pavlovattn.design.designs, pavlovattn.apps.interop\n"
            "resource.setrlimit(resource.RLIMIT_AS, (3_000_000 * 1024, resource.RLIM_INFINITY))\n"
            "from pavlovattn.apps.cli import main; sys.exit(main(sys.argv[1:]))")
    r = subprocess.run([sys.executable, '-c', code, 'run', design], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and 'Traceback' not in r.stderr, r.stderr[-2000:]
    assert r.stderr.startswith('pavlovattn run: ') and ('out of memory' in r.stderr or 'needs about' in r.stderr), r.stderr

# ---- 9: report writes ----
def test_report_through_a_symlink_a_fifo_and_dev_stdout(tmp_path, capfd):
    target = tmp_path / 'report.json'; target.write_text('old'); link = tmp_path / 'link.json'; link.symlink_to(target)
    assert run_main('reproduce', '--list', '--exact', '--json', str(link))[0] == 0
    assert link.is_symlink() and isinstance(strict_json(target.read_text()), list)
    fifo = tmp_path / 'fifo'; os.mkfifo(fifo); got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read())); reader.start()
    assert run_main('reproduce', '--list', '--exact', '--json', str(fifo))[0] == 0
    reader.join(10); assert isinstance(strict_json(got[0]), list) and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ['fifo', 'link.json', 'report.json']   # no temporary file left
    r = subprocess.run([sys.executable, '-m', 'pavlovattn.apps.cli', 'reproduce', '--list', '--exact', '--json', '/dev/stdout'],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and '[\n {\n  "id"' in r.stdout, r.stderr

@pytest.mark.parametrize('args', [['reproduce', '--list', '--json', ''], ['run', '10A+', '--results-file', ''],
                                  ['battery', 'delta', '--figure', ''], ['reproduce', '--json', ' ']])
def test_an_empty_report_path_is_refused(args):
    refused(*args, has='empty')

# ---- 11: bounded work ----
@pytest.mark.parametrize('flag, value', [('--steps', str(2**64)), ('--restarts', '1000'), ('--subjects', '1000000')])
def test_fit_has_ceilings(flag, value):
    refused('fit', '--only', 'overexpectation', flag, value, has='--no-ceiling')

def test_no_ceiling_lifts_them():
    refused('fit', '--steps', '6000', '--restarts', '60', '--subjects', '2000', '--no-ceiling', '--held-out', 'renewal', has='--held-out needs --joint')
    refused('fit', '--steps', str(2**40), '--no-ceiling', has='more than 2,147,483,647')

def test_results_file_is_size_checked_like_csv(tmp_path, monkeypatch):
    "Reproducer 11: --results-file built the tidy table without the size check --format csv has (300 bytes a row here: 1 cue x 11 steps)."
    from pavlovattn.design import designs
    monkeypatch.setattr(designs, '_available_bytes', lambda device='cpu': 3000)
    refused('run', '10A+', '--results-file', str(tmp_path / 'r.csv'), has='the --results-file table of this run needs about 3.22 KiB of memory, more than the 2.93 KiB available')
    refused('run', '10A+', '--format', 'csv', has='the csv table of this run needs about 3.22 KiB')
    assert not (tmp_path / 'r.csv').exists()

def test_a_device_given_as_a_file_stops_at_a_size_limit():
    refused('run', '--pyndl', '/dev/zero', has='not a regular file')

def test_a_fifo_given_as_a_file_is_read(tmp_path):
    fifo = tmp_path / 'events'; os.mkfifo(fifo)
    w = threading.Thread(target=lambda: open(fifo, 'w').write('cues\toutcomes\nA\tUS\nB\t\nA\tUS\n')); w.start()
    rc, out, err = run_main('run', '--pyndl', str(fifo), '--format', 'json'); w.join(10)
    assert rc == 0 and strict_json(out)['groups'], err

# ---- 13: minor ----
@pytest.mark.parametrize('args', [['run', '10A+', '--subjects', '١٠'], ['run', '10A+', '--beta', '１'], ['run', '10A+', '--lam', '1_0'],
                                  ['run', '10A+', '--dk', '٣'], ['run', '10A+', '--seed', '５'], ['fit', '--steps', '١٠'],
                                  ['score', '--subjects', '1_0'], ['battery', 'delta', '--subjects', '٥٠'], ['run', '10A+', '--salience', 'A=１']])
def test_numeric_flags_take_ascii_digits_only(args):
    refused(*args, has='invalid' if '--salience' not in args else 'bad --salience')

def test_control_characters_are_escaped_in_errors():
    err = refused('run', '10A\x1b]0;pwned\x07+')
    assert '\x1b' not in err and '\x07' not in err and '10A\\x1b]0' in err
    err = refused('run', '10A\u202e\x08+')
    assert '\u202e' not in err and '\x08' not in err

def test_no_arguments_prints_a_usage_line():
    refused(has='a command is required; usage: pavlovattn')

def test_flags_that_would_do_nothing_are_refused():
    refused('run', '10A+', '--palms-unsigned', '+', has='--palms-unsigned goes with --palms')
    refused('run', '10A+', '--allow-unstable', '--rule', 'hebbian', has='the hebbian family has none')
    rc, _, err = run_main('run', '10A+', '--allow-unstable', '--beta', '3')           # delta has a bound: runs, with a warning
    assert rc == 0 and 'warning: unstable learning rate' in err
