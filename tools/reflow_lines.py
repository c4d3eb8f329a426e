"""Reflow the long lines of a notebook's export cells without changing what they do: a line over --limit characters is
broken inside its brackets (after a comma, or before `and`/`or`/`if`/`else`/`for`/`+`/`|`), a string literal inside
brackets is split at a space into adjacent literals (Python joins them), a trailing comment gets less padding or a line
of its own above its line (never a docment: a comment on a parameter of a `def` stays where nbdev reads it). Each cell's syntax
tree must stay equal (`ast.dump`), else the cell is left as it was; what is still over the limit is listed (docstrings,
docments, a long name). The rest of the notebook (outputs, other cells) is written back as it was.

    python tools/reflow_lines.py nbs/13_trained_probes.ipynb [--limit 90] [--dry-run] [--all]
"""
import argparse, ast, io, json, re, sys, tokenize
from pathlib import Path

BREAK_BEFORE = {'and', 'or', 'if', 'else', 'for', '+', '|'}
OPEN, CLOSE = '([{', ')]}'

def _tokens(src):
    try: return list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError): return None

def _context(toks):
    "Per token index: the stack of open brackets before it, each (row, col, is_def_signature)."
    st, out = [], []
    for k, t in enumerate(toks):
        out.append(list(st))
        if t.type == tokenize.OP and t.string in OPEN:
            is_def = t.string == '(' and k >= 2 and toks[k-1].type == tokenize.NAME and toks[k-2].string == 'def'
            st.append((t.start[0], t.start[1], is_def or any(d for *_, d in st)))
        elif t.type == tokenize.OP and t.string in CLOSE and st: st.pop()
    return out

def _indent(l): return l[:len(l) - len(l.lstrip())]

def _cont_indent(lines, r, stack, limit, rest_len):
    "Indentation for a continuation inside the innermost open bracket `stack[-1]`: under its first item, or hanging."
    br, bc, _ = stack[-1]
    vis = ' ' * (bc + 1)
    return vis if len(vis) + rest_len <= limit or bc + 1 < 48 else _indent(lines[br-1]) + ' ' * 8

def _split_string(s, room):
    "Split literal token text `s` at a space before column `room` (offsets in s): (head, tail) or None."
    m = re.match(r'(?i)([rbuf]*)(["\'])', s)
    if not m: return None
    pre, q = m[1], m[2]
    if 'b' in pre.lower() or s[len(pre):].startswith(q * 3): return None
    body, f = s[len(pre) + 1:-1], 'f' in pre.lower()
    depth, best, i = 0, None, 0
    while i < len(body):
        ch = body[i]
        if f and ch in '{}' and body[i:i+2] in ('{{', '}}'): i += 2; continue
        if f and ch == '{': depth += 1
        elif f and ch == '}': depth -= 1
        elif ch == '\\': i += 2; continue
        elif ch == ' ' and depth == 0 and 12 < len(pre) + 1 + i + 1 + 1 <= room: best = i
        i += 1
    if best is None: return None
    return f'{pre}{q}{body[:best + 1]}{q}', f'{pre}{q}{body[best + 1:]}{q}'

COMPOUND = {'if', 'elif', 'else', 'for', 'while', 'try', 'except', 'finally', 'with', 'def'}

def fix_line(lines, r, limit):
    "One change that shortens row r (1-based) of `lines`, in place; True if made."
    src = '\n'.join(lines) + '\n'; toks = _tokens(src)
    if toks is None: return False
    ctx = _context(toks); line = lines[r-1]; ind = _indent(line)
    row = [(k, t) for k, t in enumerate(toks) if t.start[0] == r and t.end[0] == r]
    code_toks = [(k, t) for k, t in row if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)]
    if not code_toks:                                                   # a comment line: wrapped at a space
        com = next((t for k, t in row if t.type == tokenize.COMMENT), None)
        if com is None or ' ' not in line.strip()[2:limit - len(ind)]: return False
        cut = line.rindex(' ', 0, limit + 1)
        if cut <= len(ind) + 2: return False
        lines[r-1:r] = [line[:cut], ind + '# ' + line[cut + 1:]]; return True
    at_start = not ctx[code_toks[0][0]]                                 # the row starts a statement (no open bracket)
    top = [(k, t) for k, t in code_toks if not ctx[k]]                  # tokens outside every bracket
    kw = code_toks[0][1].string
    if at_start and kw in COMPOUND:                                     # `if x: y` -> `if x:` / `    y`
        colon = next((t for k, t in top if t.type == tokenize.OP and t.string == ':'), None)
        if colon is not None and line[colon.end[1]:].strip() and not line[colon.end[1]:].strip().startswith('#'):
            lines[r-1:r] = [line[:colon.end[1]], ind + '    ' + line[colon.end[1]:].lstrip()]; return True
    if at_start:                                                        # `a; b` -> `a` / `b`
        semi = next((t for k, t in top if t.type == tokenize.OP and t.string == ';'), None)
        if semi is not None and line[semi.end[1]:].strip():
            lines[r-1:r] = [line[:semi.start[1]].rstrip(), ind + line[semi.end[1]:].lstrip()]; return True
    com = next(((k, t) for k, t in row if t.type == tokenize.COMMENT and line[:t.start[1]].strip()), None)
    in_def = any(d for *_, d in ctx[code_toks[-1][0]]) or any(d for *_, d in ctx[code_toks[0][0]]) or kw == 'def'
    if com:                                                             # a trailing comment: less padding, or its own line
        k, t = com; code = line[:t.start[1]].rstrip()
        if len(code) + 2 + len(t.string) <= limit and line[len(code):t.start[1]] != '  ':
            lines[r-1] = code + '  ' + t.string; return True
        if not in_def and not any(d for *_, d in ctx[k]):
            lines[r-1:r] = [ind + t.string, code]; return True         # above its own line (inside brackets: still its item)
    if in_def and com: return False                                     # a docment stays on its parameter's line
    if at_start and kw == 'from' and '(' not in line and ' import ' in line and not com:
        i = line.index(' import ') + len(' import ')
        lines[r-1] = line[:i] + '(' + line[i:].rstrip() + ')'; return True
    if at_start and len(code_toks) == 1 and code_toks[0][1].type == tokenize.STRING:   # a docstring: (head\n tail)
        t = code_toks[0][1]; sp = _split_string(t.string, limit - t.start[1] - 1)
        if sp: lines[r-1:r] = [ind + '(' + sp[0], ind + ' ' + sp[1] + ')' + line[t.end[1]:]]; return True
    def subscript(stack_top):
        br, bc, _ = stack_top; l = lines[br-1]; j = bc - 1
        while j >= 0 and l[j] == ' ': j -= 1
        word = re.search(r'(\w+)$', l[:j + 1]) if j >= 0 else None
        if word and word[1] in ('return', 'in', 'and', 'or', 'not', 'if', 'else', 'yield', 'lambda', 'for', 'is'): return False
        return l[bc] == '[' and j >= 0 and (l[j].isalnum() or l[j] in '_)]')
    def closes_late(k, stack):
        "The innermost bracket open at token k closes after the limit, or on a later row."
        for j in range(k + 1, len(toks)):
            u = toks[j]
            if u.type == tokenize.OP and u.string in CLOSE and len(ctx[j]) == len(stack):
                return u.start[0] != r or u.start[1] > limit
        return True
    cands, in_target = [], {}                                           # (depth, is_operator, -column, stack, closes late)
    for k, t in code_toks:
        stack = ctx[k]; d = len(stack)
        if t.string == 'for': in_target[d] = True                       # `for a, b in`: no break in a loop's target
        elif t.string == 'in': in_target[d] = False
        if not stack or any(subscript(b) for b in stack): continue
        late = closes_late(k, stack)
        if t.type == tokenize.OP and t.string == ',' and t.end[1] <= limit and not in_target.get(d):
            nxt = next((u for j, u in code_toks if u.start[1] >= t.end[1]), None)
            if nxt is not None and nxt.string not in CLOSE: cands.append((d, 0, -t.end[1], stack, late))
        elif t.string in BREAK_BEFORE and t.start[1] <= limit and t.start[1] > len(ind):
            cands.append((d, 1, -t.start[1], stack, late))
    for d, _, col, stack, late in sorted(cands, key=lambda x: x[:3]):  # the outermost bracket first, commas first
        col = -col; head, rest = line[:col].rstrip(), line[col:].lstrip()
        ci = _cont_indent(lines, r, stack, limit, len(rest))
        if len(ci) + len(rest) >= len(line) or len(head) <= len(ind) + 8: continue
        if not late and len(ci) + len(rest) > limit: continue           # inside a bracket that closes early: only to end it
        lines[r-1:r] = [head, ci + rest]; return True
    for k, t in row:                                                    # a long literal inside brackets: split at a space
        if t.type != tokenize.STRING or not ctx[k] or t.end[1] <= limit: continue
        sp = _split_string(t.string, limit - t.start[1])
        if not sp: continue
        head = line[:t.start[1]] + sp[0]; rest = sp[1] + line[t.end[1]:]
        lines[r-1:r] = [head, ' ' * t.start[1] + rest]; return True
    return False

def reflow(src, limit):
    "The cell `src` with its long lines reflowed, and the lines still over `limit`."
    lines = src.split('\n'); r, guard = 1, 0
    while r <= len(lines) and guard < 10000:
        guard += 1
        if len(lines[r-1]) > limit and fix_line(lines, r, limit): continue
        r += 1
    return '\n'.join(lines), [l for l in lines if len(l) > limit]

def _tree(src): return ast.dump(ast.parse(src))

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('path'); p.add_argument('--limit', type=int, default=90); p.add_argument('--dry-run', action='store_true')
    p.add_argument('--all', action='store_true', help='every code cell, not only the export cells (a cell that does not parse, e.g. with a magic, is left as it was)')
    a = p.parse_args(argv); path = Path(a.path)
    if not path.exists(): print(f'reflow_lines: {path} does not exist', file=sys.stderr); sys.exit(2)
    nb = json.loads(path.read_text()); changed = before = 0; left, refused = [], []
    for i, c in enumerate(nb['cells']):
        s = ''.join(c['source'])
        if c['cell_type'] != 'code' or not (a.all or s.startswith('#| export')): continue
        n0 = sum(len(l) > a.limit for l in s.split('\n')); before += n0
        if not n0: continue
        new, still = reflow(s, a.limit)
        try: same = _tree(new) == _tree(s)
        except SyntaxError: same = False
        if not same: refused.append(i); left += [(i, l) for l in s.split('\n') if len(l) > a.limit]; continue
        if new != s: changed += 1; c['source'] = new.splitlines(keepends=True)
        left += [(i, l) for l in still]
    if not a.dry_run: path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')
    print(f"{before} lines over {a.limit} in {'code' if a.all else 'export'} cells;"
          f' {changed} cells reflowed; {len(left)} lines still over; '
          f'cells left as they were (tree would change): {refused or "none"}')
    for i, l in left: print(f'  cell {i} ({len(l)}): {l.strip()[:110]}')

if __name__ == '__main__': main()
