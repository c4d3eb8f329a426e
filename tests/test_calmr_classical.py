"calmr's MAC1975 and PKH1982 against the classical families on calmr's own deterministic designs (stored calmr 0.8.0 numbers; live calmr when R has it)."
import json, pathlib, shutil, subprocess, pytest
from pavlovattn.apps.interop import check_calmr_classical, calmr_graph

FX = pathlib.Path(__file__).parent / 'fixtures' / 'calmr'
RUNS = json.loads((FX / 'classical.json').read_text())['runs']

def test_every_stored_run_agrees_to_1e9():
    "Every associations matrix and associability vector before every trial and at the end, 64 runs of 33 designs: within 1e-9 (measured: 6e-15)."
    verdicts = [check_calmr_classical(r) for r in RUNS]
    bad = [(r['model'], r['design'], v) for r, v in zip(RUNS, verdicts) if v[0] not in ('agree', 'calmr fails')]
    assert not bad, bad
    assert sum(v[0] == 'agree' for v in verdicts) == 64 and max(v[1] for v in verdicts if v[0] == 'agree') < 1e-9
    assert [r['design']['P1'][0] for r, v in zip(RUNS, verdicts) if v[0] == 'calmr fails'] == ['10A>(B_a)', '10A>(B_a)>A']

def test_a_changed_number_is_caught():
    "The check can fail: one association of calmr's nudged by 1e-7 is reported as a difference."
    r = json.loads(json.dumps(next(x for x in RUNS if x['model'] == 'PKH1982' and 'groups' in x)))
    g = next(iter(r['groups'].values())); g['ev'][-1][0][-1] += 1e-7
    assert check_calmr_classical(r)[0] == 'differ'

def test_refusals_name_what_is_missing():
    with pytest.raises(ValueError, match="betas_on and betas_off must be equal"):
        calmr_graph('G: 10A(US)', 'MAC1975', dict(betas_off=0.2))
    with pytest.raises(ValueError, match="thetas differ between stimuli"):
        calmr_graph('G: 10A(US)', 'PKH1982', dict(thetas={'A': 0.5, 'US': 1.0}))
    with pytest.raises(ValueError, match="runs designs without '!'"):
        calmr_graph('G: !10A(US)/10B', 'MAC1975', {})

@pytest.mark.slow
@pytest.mark.skipif(shutil.which('Rscript') is None, reason='R is not installed (tests/fixtures/calmr/README.md)')
def test_live_calmr_agrees(tmp_path):
    "calmr itself, run now on the same designs (when R and calmr are installed): every run agrees as the stored ones do."
    ok = subprocess.run(['Rscript', '-e', 'library(calmr)'], capture_output=True).returncode == 0
    if not ok: pytest.skip('calmr is not installed in R')
    subprocess.run(['Rscript', str(FX / 'make_classical.R'), str(FX / 'designs.json'), str(tmp_path / 'c.json')], check=True, capture_output=True)
    runs = json.loads((tmp_path / 'c.json').read_text())['runs']
    assert all(check_calmr_classical(r)[0] in ('agree', 'calmr fails') for r in runs)
