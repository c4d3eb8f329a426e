"The page after Rescorla-Wagner: the Kalman-Mesa identity, Mackintosh as a per-channel delta rule, the failure table, its claims."
import pytest, torch
from pavlovattn.model.core import recur
from pavlovattn.model.families import FAMILIES
from pavlovattn.model.classical import mackintosh, kalman, titans, PKH, OJA, BCM, DIVISIVE, NEUROMODULATED, _acq_oja
from pavlovattn.pages.after_rw import mesa_readout, per_channel_delta, _claim_kalman_mesa, _claim_failures, FAILURES

@pytest.fixture(autouse=True)
def forget():
    before = set(FAMILIES); yield
    for n in set(FAMILIES) - before: FAMILIES.pop(n)

@pytest.mark.parametrize('sr2, sw2', [(0.5, 1.0), (2.0, 0.3)])
def test_kalman_without_drift_is_mesa(sr2, sw2):
    g = torch.Generator().manual_seed(3); k, q, v = (torch.randn(80, d, generator=g, dtype=torch.float64) for d in (4, 4, 2))
    out = recur(k[None, :, None], v[None, :, None], q[None, :, None], rule=kalman(tau2=0.0, sigma_r2=sr2, sigma_w2=sw2)).out[0, :, 0]
    assert float((out - mesa_readout(k, v, q, sr2 / sw2)).abs().max()) < 1e-12
    drift = recur(k[None, :, None], v[None, :, None], q[None, :, None], rule=kalman(tau2=0.05, sigma_r2=sr2, sigma_w2=sw2)).out[0, :, 0]
    assert float((drift - mesa_readout(k, v, q, sr2 / sw2)).abs().max()) > 1e-3     # with drift it is not Mesa: the check can fail

def test_mackintosh_fixed_alphas_is_a_per_channel_delta_rule_on_single_cues():
    g = torch.Generator().manual_seed(4); alpha = torch.tensor([0.8, 0.3, 0.55, 1.0], dtype=torch.float64)
    k = torch.eye(4, dtype=torch.float64)[torch.randint(0, 4, (50,), generator=g)]; v = torch.rand(50, 3, generator=g, dtype=torch.float64)
    fam = mackintosh(thetas=0.0); S0 = fam.initial_state(1, 1, 3, 4); S0[0, 0, -1] = alpha
    a, b = recur(k[None, :, None], v[None, :, None], rule=fam, beta=0.6, S0=S0).pred, per_channel_delta(k, v, alpha, 0.6).pred
    assert float((a - b).abs().max()) < 1e-12
    k2 = k.clone(); k2[::5, 0] = 1.0                                        # compounds: the local and summed errors part
    S0b = fam.initial_state(1, 1, 3, 4); S0b[0, 0, -1] = alpha
    a2 = recur(k2[None, :, None], v[None, :, None], rule=fam, beta=0.6, S0=S0b).pred
    assert float((a2 - per_channel_delta(k2, v, alpha, 0.6).pred).abs().max()) > 1e-3

def test_titans_momentum_zero_is_delta_and_probes_move_nothing():
    g = torch.Generator().manual_seed(5); k, v = torch.rand(1, 20, 1, 3, generator=g, dtype=torch.float64), torch.rand(1, 20, 1, 2, generator=g, dtype=torch.float64)
    assert float((recur(k, v, rule=titans(0.0), beta=0.4).pred - recur(k, v, rule='delta', beta=0.4).pred).abs().max()) < 1e-12
    for fam in (titans(0.7), PKH, mackintosh(), kalman(), OJA, BCM, DIVISIVE, NEUROMODULATED):               # the designs' probe rule: beta 0 changes no part of the state
        S = recur(k, v, rule=fam, beta=0.5).state
        assert torch.equal(recur(k[:, :3], v[:, :3], rule=fam, beta=0.0, S0=S).state, S), fam.name

def test_failure_table_and_claims():
    v = _claim_failures()                                                  # failure_table on every family of PROTOCOL
    assert v.passed and set(v.data['families']) == set(FAILURES) and not any('delta' in f for f in v.data['families'].values())
    assert _claim_kalman_mesa().passed

@pytest.mark.parametrize('k2, beta, lam, x0', [(0.7, 0.3, 1.5, 0.2), (1.0, 0.05, 0.5, 0.0)])
def test_oja_acquisition_closed_form(k2, beta, lam, x0):
    n = 40; k = torch.full((1, n, 1, 1), k2 ** 0.5, dtype=torch.float64); v = torch.full((1, n, 1, 1), lam, dtype=torch.float64)
    pred = recur(k, v, rule=OJA, beta=beta, S0=torch.full((1, 1, 1, 1), x0 / k2 ** 0.5, dtype=torch.float64)).pred[0, :, 0, 0]
    assert float((pred - _acq_oja(torch.arange(n, dtype=torch.float64), lam, k2, beta, 1.0, x0)).abs().max()) < 1e-12

def test_neuromodulator_is_global_and_bcm_threshold_slides():
    "The third factor is one number for every cue (every column of its row equal); BCM's threshold moves towards the mean squared activity."
    g = torch.Generator().manual_seed(6); k, v = torch.rand(1, 25, 1, 4, generator=g, dtype=torch.float64), torch.rand(1, 25, 1, 2, generator=g, dtype=torch.float64)
    m = NEUROMODULATED.parts(recur(k, v, rule=NEUROMODULATED, beta=0.2).state, 2)['modulator'][0, 0, 0]
    assert torch.equal(m, m[:1].expand(4)) and float(m[0]) != 1.0
    th = BCM.parts(recur(torch.zeros(1, 30, 1, 4, dtype=torch.float64), torch.ones(1, 30, 1, 2, dtype=torch.float64), rule=BCM, beta=0.1).state, 2)['theta']
    assert float((th - 1.0).abs().max()) < 1e-8                           # y = v = 1 on every step: theta -> 1 (0.5^30 away)

def test_beyond_rw_table_names_families_and_their_attention_rules():
    "Issue 47: one row per classic failure of RW, the families producing it (as animals) with the attention rule each is, or none; the opposite sign named."
    from pavlovattn.pages.after_rw import beyond_rw_table, failure_table
    t = beyond_rw_table(failure_table({'delta': 0.2, 'kalman': 1.0, 'pkh': 1.0}))
    assert list(t.index) == list(FAILURES) and t.loc['latent-inhibition', 'families'] == 'kalman, pkh'
    assert t.loc['backward-blocking', 'attention'] == 'kalman: uncertainty-scaled regression (Mesa layer; Gated KalmaNet)'
    assert t.loc['sensory-preconditioning', 'families'] == 'none' and t.loc['sensory-preconditioning', 'opposite_sign'] == 'kalman'

@pytest.mark.slow
def test_classical_families_held_out_on_the_animal_data():
    "The after-RW page's slow cell (about 3 min): leave one experiment out on CCNLab's 32 experiments with the animal page's grid; every family on the same experiments, and the four intervals of mean r overlap (as the page says)."
    from pavlovattn.apps import animal
    top = animal.compile_batch(animal.select())
    held = {f: animal.cross_validate(f, batch=top, grid=animal.cv_grid(f, top)) for f in ('delta', 'kalman', 'pkh', 'mackintosh')}
    S = animal.summarize(held)
    assert S['r n'].nunique() == 1 and len(top.exps) == 32
    assert S['r lo'].max() < S['r hi'].min()
