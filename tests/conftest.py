"""Test tiers: tests marked `slow` (exhaustive sweeps, 1e6-event runs) are left out of `make test` and run with
`pytest --slow` or PAVLOVATTN_SLOW=1, as the notebooks' `#| slow` cells run with `nbdev_test --flags slow`."""
import os, pytest

def pytest_addoption(parser):
    parser.addoption('--slow', action='store_true', default=False, help='also run the tests marked slow')

def pytest_configure(config):
    config.addinivalue_line('markers', 'slow: a long test left out of make test (run with --slow or PAVLOVATTN_SLOW=1)')

def pytest_collection_modifyitems(config, items):
    if config.getoption('--slow') or os.environ.get('PAVLOVATTN_SLOW') == '1': return
    skip = pytest.mark.skip(reason='slow: run with pytest --slow or PAVLOVATTN_SLOW=1')
    for item in items:
        if 'slow' in item.keywords: item.add_marker(skip)

@pytest.fixture(autouse=True, scope='module')
def _families_as_found():
    "A test file that registers a family (from a file, by name) leaves the registry as it found it: files that later run in the same pytest worker loop over every registered family (test_animal's bit-for-bit check ran a test's leftover family)."
    from pavlovattn.model.families import FAMILIES, catalogue
    before = set(dict.keys(FAMILIES)); yield
    for n in set(dict.keys(FAMILIES)) - before - set(catalogue()): dict.pop(FAMILIES, n, None)
