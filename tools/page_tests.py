"""How much of each tutorial page's code is test code, as a reader of the site sees it (issue 51).

A code block is a code cell whose source the site shows: every cell but those marked `#| hide`, `#| export`,
`#| exporti`, `#| include: false` or `#| echo: false` (nbdev shows an exported function as its documentation, not its
source). A test block is a shown cell that calls a test (`test_eq`, `test_close`, `assert`, ...). Tutorial pages (the
phenomenon pages 02-09) keep their tests example-like: at most 40% of the blocks, none over 8 lines; exhaustive tests
stay, in `#| hide` cells (nbdev_test runs them) or in tests/.

    python tools/page_tests.py        # one line per page; exit status 1 if a tutorial page is over either limit
"""
import json, re, sys
from pathlib import Path

NBS = Path(__file__).resolve().parents[1] / 'nbs'
TUTORIAL = re.compile(r'^0[2-9][a-z]?_')            # the phenomenon pages: 02_acquisition_extinction ... 09_error_propagation
MAX_SHARE, MAX_LINES = 0.4, 8
TEST = re.compile(r'\b(test_eq|test_ne|test_close|test_fail|test_is|test_shuffled|test_warns|test_stdout|assert)\b')
HIDDEN = re.compile(r'^#\|\s*(hide|export|exporti|include:\s*false|echo:\s*false)\b', re.M)

def blocks(nb:Path) -> tuple:
    "(number of shown code blocks, [line counts of the shown test blocks]) of one notebook."
    shown, tests = 0, []
    for c in json.loads(nb.read_text())['cells']:
        if c['cell_type'] != 'code': continue
        src = ''.join(c['source'])
        if not src.strip() or HIDDEN.search(src): continue
        shown += 1
        if TEST.search(src): tests.append(src.rstrip().count('\n') + 1)
    return shown, tests

def report(pages=None) -> list:
    "One row (page, blocks, test blocks, share, longest test block, within limits) per tutorial page."
    rows = []
    for nb in pages or sorted(p for p in NBS.glob('*.ipynb') if TUTORIAL.match(p.name)):
        shown, tests = blocks(nb)
        share, longest = len(tests) / max(shown, 1), max(tests, default=0)
        rows.append((nb.name, shown, len(tests), share, longest, share <= MAX_SHARE + 1e-9 and longest <= MAX_LINES))
    return rows

if __name__ == '__main__':
    rows = report()
    for name, shown, n, share, longest, ok in rows:
        print(f"{'ok  ' if ok else 'OVER'} {name:34s} {n:3d} of {shown:3d} code blocks are tests ({share:.0%}); longest {longest} lines")
    sys.exit(0 if all(r[-1] for r in rows) else 1)
