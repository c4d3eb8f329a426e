"""User code at the command line's boundary: a family file that exits, raises or returns the wrong thing at import or in
its step is one line naming the file and what it did, exit 2 (it exited 0 with nothing said, or printed a traceback);
Ctrl-C is one line; the usage line has no escaped line break. Each case runs `main` in this process (a second or less)."""
import signal, textwrap, threading
import pytest
from pavlovattn.apps.cli import main

HEAD = textwrap.dedent('''
    import sys, torch
    from pavlovattn.model.families import Family
    def good(S, k, v, beta, gamma, kw): return S + beta[:, None, None] * (v - (S @ k[:, :, None])[..., 0])[:, :, None] * k[:, None, :]
''')
TAIL = "FAMILY = Family('user-fam', 'x', 'y', 'z', step=step)\n"
CASES = {
    'exit_at_import': ('sys.exit(0)\nstep = good\n', 'called sys.exit(0)'),
    'exit3_at_import': ('raise SystemExit(3)\nstep = good\n', 'called sys.exit(3)'),
    'exit_in_step': ('def step(S, k, v, beta, gamma, kw): sys.exit(0)\n', 'called sys.exit(0)'),
    'raises_in_step': ('def step(S, k, v, beta, gamma, kw): raise RuntimeError("boom")\n', 'raised RuntimeError: boom'),
    'wrong_shape': ('def step(S, k, v, beta, gamma, kw): return S.flatten()\n', 'gave something its declared model cannot use'),
    'wrong_type': ('def step(S, k, v, beta, gamma, kw): return "S"\n', 'user-family.py'),
    'wrong_dtype': ('def step(S, k, v, beta, gamma, kw): return good(S, k, v, beta, gamma, kw).to(torch.int64)\n', 'user-family.py'),
}

@pytest.mark.parametrize('case', sorted(CASES))
def test_a_family_file_that_misbehaves_is_one_line(tmp_path, capsys, case):
    body, said = CASES[case]
    f = tmp_path / 'user-family.py'; f.write_text(HEAD + body + TAIL)
    code = main(['run', '5A+ | #A', '--rule', str(f)])
    err = capsys.readouterr().err
    assert code == 2 and err.count('\n') == 1 and 'Traceback' not in err, (code, err)
    assert said in err and err.startswith('pavlovattn run: '), err

def test_ctrl_c_while_a_command_starts_is_one_line(capsys, monkeypatch):
    "Ctrl-C during `reproduce`'s start-up (claims loading) printed a traceback."
    import pavlovattn.base.registry as reg
    def interrupted(*a, **k): raise KeyboardInterrupt
    monkeypatch.setattr(reg, 'load_claims', interrupted)
    try: code = main(['reproduce', '--only', 'x'])
    except KeyboardInterrupt: pytest.fail('Ctrl-C escaped main: Python printed a traceback')
    assert code == 130
    assert capsys.readouterr().err == 'pavlovattn reproduce: interrupted\n'

def test_the_usage_line_has_no_escaped_line_break(capsys):
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and '\\x0a' not in err and err.startswith('pavlovattn: a command is required; usage: pavlovattn ')

@pytest.mark.parametrize('args, said', [
    (['battery', 'delta', '--subjects', '1000000'], 'pavlovattn battery: argument --subjects: subjects must be an integer <= 100000; got 1000000'),
    (['probe-model', 'gpt2', '--n', str(2**64)], f'pavlovattn probe-model: argument --n: n must be an integer >= 2 and <= 10000; got {2**64}'),
])
def test_sizes_are_counted_before_anything_is_built(capsys, args, said):
    "A million battery subjects ran 78-245 s into the out-of-memory fallback; `probe-model --n 2**64` was accepted."
    assert main(args) == 2
    assert capsys.readouterr().err == said + '\n'

def test_a_palms_file_whose_name_has_a_bar_is_a_file(tmp_path, capsys):
    "--palms 'a|b.rw' was read as design text (its name has a |): the flag always names a file."
    f = tmp_path / 'odd|name.rw'; f.write_text('Grp|4A+|4A-\n')
    assert main(['run', '--palms', str(f)]) == 0
    assert 'Grp' in capsys.readouterr().out
