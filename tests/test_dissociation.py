"""The dissociation table (nbs/04b_dissociation.ipynb): a row, the tested set fixed before measuring, the rows gated-delta misses, and the command line against the cue-competition page's runner on the table's designs."""
import math
import pytest
from pavlovattn.pages.competition import run_design, protocol, FAMILIES
from pavlovattn.pages.dissociation import dissociation_row

def _cli_json(*args):
    import contextlib, io, json
    from pavlovattn.apps.cli import main
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf): rc = main(['run', *args, '--format', 'json'])
    assert rc == 0
    return json.loads(buf.getvalue())

def test_cli_equals_run_design_fixed_orders():
    "`pavlovattn run` and the page's runner give the same probe means to round-off on designs with fixed orders."
    from pavlovattn.pages.dissociation import PHENOMENA
    for name in ('blocking', 'overshadowing'):
        design = PHENOMENA[name].design
        js, mine = _cli_json(design, '--rule', 'delta'), run_design(design)
        for g, v in js['groups'].items():
            for x in v['probes']: assert abs(x['mean'] - float(mine[g][x['cues']])) < 1e-12, (name, g)

def test_dissociation_blocking_row():
    row = dissociation_row('blocking', subjects=1)
    assert set(row) == set(FAMILIES)
    assert row['delta']['present'] and not row['hebbian']['present'] and not row['decay']['present']

def test_tested_set_is_the_one_fixed_before_measuring():
    "delta and gated-delta (and the contiguity families) are tested; the second criterion is a separate claim, not a replacement."
    from pavlovattn.pages.competition import PROTOCOL_GAMMA
    from pavlovattn.pages.dissociation import TESTED, ci_above_zero
    from pavlovattn.base.registry import load_claims
    assert set(TESTED) == {'hebbian', 'decay', 'delta', 'gated-delta'} and PROTOCOL_GAMMA == {'gated-delta': 0.95} and protocol('decay') == {}
    c = load_claims()
    assert 'cue-competition-dissociation' in c and 'cue-competition-ci-above-zero' in c
    assert 'FORMULATED AFTER THE FIRST RESULT' in c['cue-competition-ci-above-zero'].claim
    assert ci_above_zero({'effect': 0.03, 'se': 0.001}) and not ci_above_zero({'effect': 0.03, 'se': 0.02})

def test_gated_delta_misses_fail_their_rows():
    "Retardation: gated-delta's effect is real (CI above 0) but below 0.05 lambda, so the row's check fails."
    from pavlovattn.base.registry import run_claims
    (r,), _ = run_claims(['dissociation-retardation'], progress=False)
    assert r['check'] == 'fail' and 'gated-delta' in r['measured']
    g = r['data']['gated-delta']
    assert 0 < g['effect'] - 1.96 * g['se'] and g['effect'] < 0.05

@pytest.mark.parametrize('name, extra', [('conditioned inhibition (summation)', ()),
                                         ('relative validity (beta- = beta+/2)', ('--beta-minus', '0.05'))])
def test_cli_agrees_with_run_design_randomised(name, extra):
    "With randomised phases the command line (counter-based orders) and the page's runner (`rng='torch'`) draw different subjects: their means agree within 4 standard errors (1,000 subjects each); a group without a randomised phase agrees exactly."
    from pavlovattn.pages.dissociation import PHENOMENA
    design, n = PHENOMENA[name].design, 1000
    js = _cli_json(design, '--rule', 'delta', '--subjects', str(n), *extra)
    mine = run_design(design, subjects=n, **({'beta_minus': 0.05} if extra else {}))
    for g, v in js['groups'].items():
        x = v['probes'][0]; m = mine[g][x['cues']]
        if x['sd'] == 0: assert abs(x['mean'] - float(m.mean())) < 1e-12, g; continue
        z = (x['mean'] - float(m.mean())) / math.sqrt(x['sd']**2 / n + float(m.var()) / n)
        assert abs(z) < 4, (g, z)

NEW_PAGE = '''
from pavlovattn.design.phenomena import contrast, register
from pavlovattn.pages.competition import cue_competition_run, CUE_COMPETITION

PH = contrast('overshadowing by a twice as salient cue', 'overshadowing: 20AB+ | #B; control: 20B+ | #B', ('control', 'B'), ('overshadowing', 'B'), True,
              {'salience': {'A': 2.0}})
register(PH, 'test-salient-overshadowing', 'a page written in a test', cue_competition_run(PH), exact=False, protocol=CUE_COMPETITION)
'''

def test_a_new_pages_cue_competition_phenomenon_is_a_row_with_its_claim(tmp_path, monkeypatch):
    "Issue 45: the table lists no titles; a phenomenon registered under the cue-competition protocol by a module it never named is a row (last), and gets its claim."
    import importlib, sys
    from pavlovattn.design.phenomena import REGISTRY
    from pavlovattn.base.registry import CLAIMS, run_claims
    from pavlovattn.pages import dissociation as d
    before = list(d.PHENOMENA)
    assert before[:2] == ['blocking', 'overshadowing'] and len(before) == 11 and before[-1] == 'partial reinforcement extinction effect'
    (tmp_path / 'a_new_cue_page.py').write_text(NEW_PAGE); monkeypatch.syspath_prepend(str(tmp_path))
    try:
        importlib.import_module('a_new_cue_page')
        name = 'overshadowing by a twice as salient cue'
        assert list(d.PHENOMENA) == before + [name] and d.ROW_IDS[name] == 'test-salient-overshadowing'
        (r,), ok = run_claims(['dissociation-test-salient-overshadowing'], progress=False)
        assert ok and r['check'] == 'pass' and r['data']['delta']['present'] and not r['data']['hebbian']['present']
        plain = d.dissociation_row('overshadowing', subjects=1)['delta']['effect']
        assert r['data']['delta']['effect'] > plain > 0                # a more salient A overshadows B more
    finally:
        REGISTRY.pop('test-salient-overshadowing', None); CLAIMS.pop('dissociation-test-salient-overshadowing', None)
        sys.modules.pop('a_new_cue_page', None); d._dissociation_row.cache_clear()
    assert list(d.PHENOMENA) == before
