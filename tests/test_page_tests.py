"""Tutorial pages read as tutorials (issue 51): on each phenomenon page (02-09) at most 40% of the code blocks the site
shows are tests and none is over 8 lines; exhaustive tests run in `#| hide` cells or in tests/ (tools/page_tests.py)."""
import importlib.util, json
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location('page_tests', ROOT / 'tools' / 'page_tests.py')
page_tests = importlib.util.module_from_spec(spec); spec.loader.exec_module(page_tests)

@pytest.mark.parametrize('row', page_tests.report(), ids=lambda r: r[0])
def test_a_tutorial_page_keeps_its_tests_example_like(row):
    name, shown, n, share, longest, ok = row
    assert ok, f"{name}: {n} of {shown} shown code blocks are tests ({share:.0%}; at most 40%), longest {longest} lines (at most 8)"

def _nb(tmp_path, cells):
    nb = {'cells': [{'cell_type': 'code', 'source': s, 'metadata': {}, 'outputs': [], 'execution_count': None} for s in cells],
          'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}
    p = tmp_path / '02_x.ipynb'; p.write_text(json.dumps(nb)); return p

def test_the_measure_counts_what_the_site_shows(tmp_path):
    p = _nb(tmp_path, ['#| export\ndef f(): return 1', 'f()', 'test_eq(f(), 1)', '#| hide\ntest_eq(f(), 1)\nassert f()',
                       'assert f() == 1\n' * 9])
    (name, shown, n, share, longest, ok), = page_tests.report([p])
    assert (shown, n, longest, ok) == (3, 2, 9, False)       # the exported and hidden cells are not shown; 2 of 3 are tests
    p = _nb(tmp_path, ['#| export\ndef f(): return 1', 'f()', 'f() + 1', 'test_eq(f(), 1)', '#| hide\nassert f()'])
    assert page_tests.report([p])[0][-1] is True
