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
