"""Issue 51 item 6: a probe of a compound (`#AB`) is a row of its own, named after the compound, in `Result.table`,
`interop.tidy` (so `--results-file`) and `run --format csv` — before, only its cues' strengths were there."""
import io, contextlib
import pandas as pd
import pytest
from pavlovattn.apps import cli
from pavlovattn.apps.interop import tidy
from pavlovattn.design.designs import simulate

def test_the_compound_row_is_the_closed_form_once_at_its_trial():
    "Delta rule, 10 AB+ at beta 0.1: V_AB = 1 - (1 - 2 beta)^10 (the compound key has |k|^2 = 2) at 1e-12, one row at trial 11, none at #A; the cue rows unchanged (half each)."
    res = simulate('10AB+ | #AB/#A', beta=0.1)
    t = res.table
    ab = t[t.cue == 'AB']
    assert ab[['phase', 'trial', 'trial_type', 'probe']].values.tolist() == [[2, 11, '#AB', True]]
    assert abs(ab['mean'].item() - (1 - 0.8**10)) < 1e-12 and ab['mean'].item() == res.probes['group'][0]['mean']
    for cue in 'AB': assert abs(t[(t.trial == 11) & (t.cue == cue)]['mean'].item() - (1 - 0.8**10) / 2) < 1e-12
    assert len(t) == 2 * 12 + 1 and t.index.tolist() == list(range(len(t)))
    long = tidy(res)
    got = long[long.cue == 'AB'].set_index('statistic').value
    assert got.to_dict() == {'mean': ab['mean'].item(), 'sd': 0.0, 'subjects': 1}

def test_a_compound_met_at_different_trials_goes_after_its_phase_and_per_named_us():
    "Shuffled: the phase-1 #AB row after the phase's last trial, with the probe's mean and sd over subjects; named USs: one row per US (AB:X, ...)."
    res = simulate('!3#AB/3A+ | #AB', subjects=10)
    t = res.table; ab = t[t.cue == 'AB']
    assert ab[['phase', 'trial']].values.tolist() == [[1, 6], [2, 7]]
    assert ab[['mean', 'sd']].values.tolist() == [[p['mean'], p['sd']] for p in res.probes['group']]
    res = simulate('10AB(X)/5A(Y) | 1#AB/1#A', dialect='calmr')
    t = res.table; rows = t[t.cue.str.startswith('AB:')]
    want = {f"AB:{p['outcome']}": p['mean'] for p in res.probes['group'] if p['cues'] == 'AB'}
    assert dict(zip(rows.cue, rows['mean'])) == want and len(want) == len(res.outcomes)

def test_run_csv_has_the_compound_row_once():
    "`pavlovattn run --format csv`: the compound's row comes from the table, not added a second time by the CLI."
    out = io.StringIO()
    with contextlib.redirect_stdout(out): rc = cli.main(['run', '10AB+ | #AB/#A', '--format', 'csv'])
    t = pd.read_csv(io.StringIO(out.getvalue()))
    assert rc == 0 and (t.cue == 'AB').sum() == 1 and abs(t[t.cue == 'AB']['mean'].item() - (1 - 0.8**10)) < 1e-9
