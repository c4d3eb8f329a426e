"""Cue competition with fixed trial orders (nbs/04_cue_competition.ipynb): the page's runner and its refusals, closed forms vs the batched recurrence, the runner against the blocking closed forms and the command line."""
import pytest
import torch
from pavlovattn.pages.competition import (run_design, protocol, rw_phase, overshadowing, conditioned_inhibition, overexpectation,
                                    superconditioning, protection_from_extinction, FAMILIES)

def test_run_design_refuses_bad_trial_types():
    "The page's runner reads designs with the one parser: its errors name the position."
    with pytest.raises(ValueError, match='bad trial type "10AB" at position 1'): run_design('10AB')
    with pytest.raises(ValueError, match='position'): run_design('10A+ | #B+')
    with pytest.raises(ValueError, match="unknown sampling 'without'"): run_design('!2A+/2B-', sampling='without')

def test_run_design_labels_and_long_cue_names():
    r = run_design('20A(ctx)+ | #A/#(ctx) | 5A- | #A', subjects=3)['group']
    assert list(r) == ['A@2', '(ctx)', 'A@4'] and all(x.shape == (3,) for x in r.values())
    assert abs(float(r['A@2'][0]) - 0.5 * (1 - 0.8**20)) < 1e-12

@pytest.mark.parametrize('beta', [0.05, 0.3, 0.6])
def test_closed_forms_match_deltanet(beta):
    r = run_design('o: 15AB+ | #B; c: 15B+ | #B', beta=beta, salience={'A': 1.2, 'B': 0.4})
    e, c = overshadowing(15, alpha_A=1.2, alpha_B=0.4, beta=beta)
    assert abs(float(r['o']['B']) - e) < 1e-12 and abs(float(r['c']['B']) - c) < 1e-12
    r = run_design('25A+ | 12AX- | #A/#X', beta=beta)['group']
    va, vx = conditioned_inhibition(25, 12, beta=beta)
    assert abs(float(r['A']) - va) < 1e-12 and abs(float(r['X']) - vx) < 1e-12
    r = run_design('25A+ | 25B+ | 7AB+ | #A/#B', beta=beta)['group']
    p = 1 - (1 - beta)**25
    assert abs(float(r['A']) - overexpectation(7, p, p, beta=beta)[0]) < 1e-12
    V = rw_phase(rw_phase(rw_phase([0., 0.], [1, 0], 1., 25, [1., 1.], beta), [0, 1], 1., 25, [1., 1.], beta), [1, 1], 1., 7, [1., 1.], beta)
    assert abs(float(V[0]) - float(r['A'])) < 1e-12

def test_superconditioning_twice_and_protection():
    e, c = superconditioning(torch.arange(1, 20, dtype=torch.float64), -1.0)
    assert torch.allclose(e / c, torch.full((19,), 2., dtype=torch.float64), atol=1e-12)
    assert abs(protection_from_extinction(8, 0.7, -0.7)[0] - 0.7) < 1e-15

def test_run_design_matches_blocking_closed_form_every_family():
    "The page's runner against the blocking page's closed forms (`blocking_closed_form`), every family of the page at its protocol."
    from pavlovattn.pages.blocking import blocking_closed_form
    from pavlovattn.model.core import family
    for fam in FAMILIES:
        r = run_design('blocking: 20A+ | 20AB+ | #B; control: 20C+ | 20AB+ | #B', rule=fam, **protocol(fam))
        cf = blocking_closed_form(fam, n1=20, n2=20, beta=0.1, gamma=family(fam).gamma_or_default(protocol(fam).get('gamma')))
        assert abs(float(r['blocking']['B']) - float(cf.exp)) < 1e-12, fam
        assert abs(float(r['control']['B']) - float(cf.ctrl)) < 1e-12, fam
