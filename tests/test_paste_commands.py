"""Every shell command on the site and in the README pastes into bash and zsh as shown (issue 51).

The commands are read from the notebooks (fenced ```sh/```bash blocks and `$ ` lines in their Markdown, inline code spans
that start with `pavlovattn `, and saved outputs that print a `pavlovattn ...` command line) and from README.md. Each is
run by bash with history expansion on (`set -H`, as an interactive shell has it) against stub commands that record their
arguments: a `!` inside double quotes (`bash: !20: event not found`, or a silent substitution of an earlier command) or
any other change of the parse fails. A comment on a command line fails too: interactive zsh passes `#` and what follows
as arguments unless `interactive_comments` is set. Then each `pavlovattn` command is parsed by its subcommand's own
argument parser (what `--help` lists), each `make` target must exist, each `pip install '.[x]'` extra must be declared;
the `pavlovattn run` commands run (in-process, a few seconds), and under `--slow` every `pavlovattn` command whose run
is short runs as a subprocess, as a reader would paste it."""
import argparse, configparser, contextlib, io, json, os, re, shlex, subprocess, sys, tempfile
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
SHELLS = ('sh', 'bash', 'shell', 'console', 'zsh')
REDIRECT = ('>', '>>', '<', '|', '2>', '&>', '&&', ';')

def _lines_of_block(text):
    "The command lines of a fenced block: continuation lines joined, a leading `$ ` prompt dropped, blank lines left out."
    out, cur = [], ''
    for l in text.splitlines():
        cur += l[:-1] + ' ' if l.endswith('\\') else l
        if l.endswith('\\'): continue
        if cur.strip(): out.append(cur.strip()[2:] if cur.strip().startswith('$ ') else cur.strip())
        cur = ''
    return out

def _from_markdown(md):
    "[(kind, line)]: shell lines in Markdown text: fenced shell blocks, `$ ` lines outside them ('block'), and inline `pavlovattn ...` code spans ('inline')."
    out = []
    for m in re.finditer(r'^```(\w*)[^\n]*\n(.*?)^```', md, re.S | re.M):
        if m.group(1) in SHELLS: out += _lines_of_block(m.group(2))
    prose = re.sub(r'^```.*?^```', '', md, flags=re.S | re.M)
    out += [l.strip()[2:] for l in prose.splitlines() if l.strip().startswith('$ ')]
    spans = [m.group(1) for m in re.finditer(r'(?<!`)`(pavlovattn [^`\n]+)`(?!`)', prose)]
    return [('block', l) for l in out] + [('inline', s) for s in spans if _concrete(s)]

def _concrete(span):
    "An inline code span that is a command to paste, not a synopsis (`pavlovattn sweep GRID.yaml [--backend ...]`, `run --rule FILE.py`)."
    bare = re.sub(r"'[^']*'|\"[^\"]*\"", '', span)                      # quoted designs may hold | and [
    return not re.search(r'[\[\]|…<>{}]|\.\.\.|:$|(?<![\w-])[A-Z][A-Z0-9_]+(?:\.\w+)?\b', bare)

def commands():
    "[(where, line)] for every shell command shown on a page or in the README."
    found = []
    for nb in sorted((ROOT / 'nbs').glob('*.ipynb')):
        for i, c in enumerate(json.loads(nb.read_text())['cells']):
            if c['cell_type'] == 'markdown': found += [(f'{nb.name} cell {i} {k}', l) for k, l in _from_markdown(''.join(c['source']))]
            for o in c.get('outputs', []):
                text = ''.join(o.get('text', '')) + ''.join(o.get('data', {}).get('text/markdown', ''))
                found += [(f'{nb.name} cell {i} output', l) for l in text.splitlines()
                          if l.startswith('pavlovattn ') and not re.match(r'pavlovattn( [\w-]+)?: ', l)]   # not a message
    if (ROOT / 'README.md').exists(): found += [(f'README.md {k}', l) for k, l in _from_markdown((ROOT / 'README.md').read_text())]
    return found

def _words(line):
    "The arguments bash should see: the line split as written, up to a redirection or a second command."
    w = shlex.split(line, comments=True)
    return w[:next((i for i, x in enumerate(w) if x in REDIRECT), len(w))]

def bash_parse(lines):
    "Each line as bash with history expansion reads it: [argv or None (it did not run)], and bash's stderr."
    names = sorted({w[0] for l in lines for w in [_words(l)] if w and '=' not in w[0]})
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / 'argv'
        script = ['set -H -o history'] + [f'{n}() {{ printf "%s\\037" "$@" >> "$ARGV_LOG"; printf "\\n" >> "$ARGV_LOG"; }}' for n in names]
        for i, l in enumerate(lines): script += [f'printf "@@{i}\\n" >> "$ARGV_LOG"', l]
        r = subprocess.run(['bash', '--norc', '--noprofile', '-c', '\n'.join(script)], cwd=d, capture_output=True, text=True,
                           env={**os.environ, 'ARGV_LOG': str(log)}, timeout=60)
        text = log.read_text() if log.exists() else ''
    got = {}
    for chunk in text.split('@@')[1:]:
        i, _, rest = chunk.partition('\n')
        got[int(i)] = rest.rstrip('\n').split('\x1f')[:-1] if rest.strip('\n') else None
    return [got.get(i) for i in range(len(lines))], r.stderr

def test_the_pages_show_commands():
    "The collection finds the commands it exists to check (the dissociation page's designs, the README's make lines)."
    found = commands()
    assert sum(w.startswith('04b_dissociation') for w, _ in found) >= 10, found
    assert ('README.md block', 'make reproduce') in found

def test_commands_paste_into_bash_with_history_expansion_and_zsh():
    found = commands()
    lines = [l for _, l in found]
    argv, err = bash_parse(lines)
    bad = [f'{w}: {l!r} -> {a}' for (w, l), a in zip(found, argv) if a is None or (a != _words(l)[1:] and '=' not in _words(l)[0])]
    assert not bad and 'event not found' not in err, (err, bad[:5])
    comment = [f'{w}: {l!r}' for w, l in found if _has_comment(l)]
    assert not comment, f'a comment on a command line (zsh runs it as arguments): {comment[:5]}'

def _has_comment(line):
    try: return shlex.split(line, comments=True) != shlex.split(line)
    except ValueError: return True                                               # a quote opened in a comment: the comment counts

def test_the_check_fails_on_a_bang_in_double_quotes():
    "The check can fail: the dissociation page's old quoting is an event not found (or a changed parse)."
    argv, err = bash_parse(['echo first', 'pavlovattn run "inhibition: !20A+/20AX- | #X" --rule delta'])
    assert argv[1] is None and 'event not found' in err
    argv, _ = bash_parse(['pavlovattn run first', "pavlovattn run 'inhibition: !20A+/20AX- | #X' --rule delta"])
    assert argv[1] == ['run', 'inhibition: !20A+/20AX- | #X', '--rule', 'delta']
    assert _has_comment("make test   # every notebook's tests") and not _has_comment("pavlovattn run '#B' --rule delta")

def _parser(name):
    from pavlovattn.apps import cli
    p = argparse.ArgumentParser(prog=f'pavlovattn {name}', add_help=True)
    cli.SUBCOMMANDS[name][1](p); return p

def test_each_command_is_understood():
    "Each `pavlovattn` line of a block or an output parses under its subcommand (what --help lists); each make target and pip extra exists; the run lines run."
    from pavlovattn.apps import cli
    targets = set(re.findall(r'^([\w-]+):', (ROOT / 'Makefile').read_text(), re.M))
    cfg = configparser.ConfigParser(delimiters=['=']); cfg.read(ROOT / 'settings.ini')
    extras = {k[:-len('_requirements')] for k in cfg['DEFAULT'] if k.endswith('_requirements') and k != 'requirements'}
    bad, runs = [], []
    for where, line in commands():
        w = _words(line)
        if w[0] == 'pavlovattn' and where.endswith(' inline') or w[1:] in (['--help'], ['--version']): continue   # prose naming flags: bash-checked only
        if w[0] == 'pavlovattn':
            if len(w) < 2 or w[1] not in cli.SUBCOMMANDS: bad.append(f'{where}: no subcommand {w[1:2]}'); continue
            if w[1] == 'cache' or len(w) < 3 and line.startswith('pavlovattn ') and ' ' not in line[11:]: continue
            try:
                with contextlib.redirect_stderr(io.StringIO()) as e, contextlib.redirect_stdout(io.StringIO()): _parser(w[1]).parse_args(w[2:])
            except SystemExit as x:
                if x.code == 0: continue                                             # --help
                bad.append(f'{where}: {line!r}: {e.getvalue().strip().splitlines()[-1:]}'); continue
            if w[1] == 'run' and '--rule' in w and not any(x.endswith('.py') for x in w): runs.append((where, w))
        elif w[0] == 'make' and not {x for x in w[1:] if '=' not in x} <= targets: bad.append(f'{where}: no make target in {line!r}')
        elif w[:2] == ['pip', 'install']:
            for x in w[2:]:
                m = re.match(r'(?:pavlovattn|\.)\[([\w,]+)\]$', x)
                if m and not set(m.group(1).split(',')) <= extras | {'dev', 'gpu'}: bad.append(f'{where}: no extra {m.group(1)} in {line!r}')
    assert not bad, bad
    assert runs                                                                  # the dissociation page's designs, the README's
    for where, w in runs:
        with contextlib.redirect_stdout(io.StringIO()) as out: rc = cli.main(w[1:])
        assert rc == 0 and out.getvalue(), (where, w)

LONG = ('reproduce', 'battery', 'probe-model', 'sweep', 'fit', 'score', 'train')   # these run minutes: --help instead

@pytest.mark.slow
def test_commands_run_as_pasted():
    "Every `pavlovattn` command a reader pastes: run in bash (history expansion on) as a subprocess; the long ones with --help."
    for where, line in commands():
        w = _words(line)
        if w[0] != 'pavlovattn' or len(w) < 2: continue
        cmd = shlex.join(w[:2] + ['--help']) if w[1] in LONG or '>' in shlex.split(line) else shlex.join(w)
        r = subprocess.run(['bash', '--norc', '--noprofile', '-c', 'set -H -o history\n' + cmd], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and 'event not found' not in r.stderr, (where, cmd, r.stderr[-300:])
