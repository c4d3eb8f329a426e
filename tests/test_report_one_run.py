"""One report, one commit (issue 50): the saved report that the front page and README quote names one run, and where it
holds trained-model rows, that run trained (or loaded) models of the checkpoint code version the code has now."""
import json
from pathlib import Path

SUMMARY = Path(__file__).resolve().parent.parent / 'nbs' / 'report_summary.json'

def test_every_row_comes_from_one_run():
    s = json.loads(SUMMARY.read_text())
    runs = {r['run'] for r in s['rows']}
    assert len(runs) == 1 and set(s['runs']) == runs, f"the saved report's rows come from {len(runs)} runs: {sorted(runs)}"

def test_trained_rows_come_from_models_of_the_current_checkpoint_version():
    from pavlovattn.base.registry import load_claims
    from pavlovattn.base.cache import KINDS
    from pavlovattn.apps.cli import _trains
    s, claims = json.loads(SUMMARY.read_text()), load_claims()
    trained = {r['run'] for r in s['rows'] if r['id'] in claims and _trains(claims[r['id']])}
    assert trained, 'the saved report has no trained-model row'
    for run in trained:
        assert s['runs'][run].get('checkpoint_version') == KINDS['checkpoint'].version, (run, s['runs'][run].get('checkpoint_version'))

def test_trained_pages_saved_outputs_come_from_models_of_the_current_checkpoint_version():
    "A saved output of the trained-model pages that names the checkpoint version of its models (the trained-probes page's training cell prints it) names the code's: a page executed with older models fails here."
    import re
    import pavlovattn.apps.models                                       # registers the checkpoint kind
    from pavlovattn.base.cache import KINDS
    found = []
    for name in ('13_trained_probes.ipynb', '13a_trained_rules.ipynb'):
        for c in json.loads((SUMMARY.parent / name).read_text())['cells']:
            for o in c.get('outputs', []):
                text = ''.join(o.get('text', '')) + ''.join(o.get('data', {}).get('text/plain', ''))
                found += [(name, int(v)) for m in re.finditer(r'checkpoint version ([\d, ]+)', text) for v in re.findall(r'\d+', m[1])]
    assert found, 'no saved output of the trained-model pages names its checkpoint version'
    assert all(v == KINDS['checkpoint'].version for _, v in found), found
