"""One compiler: every design in the package runs through `designs.simulate`. Independent oracles (the hand-built tensor
harnesses the pages used before, kept here) must equal it to 1e-12 in float64; i.i.d. sampling, trajectories, the torch
stream, given orders, and the families with a history (trace, vhw) are checked against direct loops."""
import math, pathlib, re
import pytest
import torch
from pavlovattn.model.core import recur
from pavlovattn.model.families import FAMILIES
from pavlovattn.design.designs import parse_design, simulate, trial_orders, expected_absent, vhw_keys, calmr_parameters
from pavlovattn.pages import competition, dissociation

# --- oracle 1: the cue-competition page's former runner (its own reader, sequences and recur call) -------------------------

def _oracle_sequences(d, cues, subjects, sampling, gen):
    "Per group: cue indicators [B,T,n], reinforced [B,T], probe [B,T], probe labels; orders from one torch.Generator."
    out = {}
    for g in d.groups:
        ind, rein, probe, labels = [], [], [], []
        for i, ph in enumerate(g.phases):
            items = [(t.count, t.cues, None if t.probe else t.outcome == '+') for t in ph.trials]
            X = torch.tensor([[float(c in it[1]) for c in cues] for it in items], dtype=torch.float64)
            r = torch.tensor([float(bool(it[2])) for it in items], dtype=torch.float64)
            p = torch.tensor([float(it[2] is None) for it in items], dtype=torch.float64)
            counts = torch.tensor([it[0] for it in items])
            base = torch.repeat_interleave(torch.arange(len(items)), counts)
            if not ph.random: idx = base.expand(subjects, -1)
            elif sampling == 'iid': idx = torch.multinomial(counts.double().expand(subjects, -1), int(counts.sum()), replacement=True, generator=gen)
            else: idx = base[torch.argsort(torch.rand(subjects, len(base), generator=gen), dim=1)]
            ind.append(X[idx]); rein.append(r[idx]); probe.append(p[idx])
            labels += [f"{''.join(it[1])}@{i + 1}" for it in items for _ in range(it[0]) if it[2] is None]
        out[g.name] = (torch.cat(ind, 1), torch.cat(rein, 1), torch.cat(probe, 1), labels)
    return out

def oracle_run(design, rule='delta', beta=0.1, beta_minus=None, gamma=None, lam=1.0, salience=None, subjects=1,
               sampling='shuffle', seed=0):
    "Probe read-outs per subject and every cue's strength after every step, built by hand and run by one `recur` call per group."
    d = parse_design(design); cues = sorted(d.cues)
    sal = torch.tensor([(salience or {}).get(c, 1.0) for c in cues], dtype=torch.float64)
    gamma = FAMILIES[rule].gamma_or_default(gamma); bm = beta if beta_minus is None else beta_minus
    out = {}
    for name, (ind, rein, probe, labels) in _oracle_sequences(d, cues, subjects, sampling, torch.Generator().manual_seed(seed)).items():
        k = (ind * sal.sqrt())[:, :, None, :]; v = (lam * rein)[:, :, None, None]; one = torch.ones_like(rein)
        b = torch.where(probe > 0, 0 * one, torch.where(rein > 0, beta * one, bm * one))[:, :, None]
        g = torch.where(probe > 0, one, gamma * one)[:, :, None]
        if FAMILIES[rule].gate == 'channel': g = g[..., None]              # one gate for every key feature
        gk = dict(gamma=g) if 'gamma' in FAMILIES[rule].params else {}
        H = len(cues); q = torch.diag(sal.sqrt())[None, None].expand(k.shape[0], k.shape[1], H, H)
        traj = recur(k.expand(-1, -1, H, -1), v.expand(-1, -1, H, -1), q, rule=rule, beta=b, **gk).out[..., 0]
        reads = recur(k, v, rule=rule, beta=b, **gk).out[:, :, 0, 0][probe.bool()].view(k.shape[0], -1)
        names = [l.split('@')[0] for l in labels]
        res = {(l.split('@')[0] if names.count(l.split('@')[0]) == 1 else l): reads[:, j] for j, l in enumerate(labels)}
        res['_trajectory'], res['_cues'] = traj, cues
        out[name] = res
    return out

def _max_diff(mine, ref):
    worst = 0.
    for g, res in ref.items():
        for lab, x in res.items():
            if lab == '_cues': continue
            if lab == '_trajectory':
                y = mine[g]['_trajectory'][..., [mine[g]['_cues'].index(c) for c in res['_cues']]]
                worst = max(worst, float((y - x).abs().max()))
            else: worst = max(worst, float((mine[g][lab] - x).abs().max()))
    return worst

@pytest.mark.parametrize('rule', ['delta'] + [pytest.param(r, marks=pytest.mark.slow) for r in ('hebbian', 'decay', 'gated-delta', 'softmax', 'gla', 'channel-gate')])
def test_competition_runner_equals_hand_built_oracle(rule):   # delta in make test (3 s); every family with --slow (30 s)
    "Every dissociation design (randomised phases drawn from the torch stream, both samplings, unequal rates) equals the oracle."
    for name, ph in dissociation.PHENOMENA.items():
        design = ph.design
        for sampling in ('shuffle', 'iid'):
            opts = dict(rule=rule, subjects=40, seed=5, sampling=sampling, **ph.options, **competition.protocol(rule))
            mine = competition.run_design(design, trajectory=True, **opts)
            assert _max_diff(mine, oracle_run(design, **opts)) < 1e-12, (rule, name, sampling)

def test_competition_runner_oracle_with_saliences_and_lam():
    opts = dict(beta=0.3, beta_minus=0.05, lam=1.7, salience={'A': 0.4, 'X': 1.3}, subjects=30, seed=2)
    d = 'a: !10A+/10AX-/5X+ | #A/#X/#AX ; b: 10AX+ | !4A-/4X- | #X'
    for rule in ('delta', 'gated-delta', 'decay'):
        assert _max_diff(competition.run_design(d, rule=rule, trajectory=True, **opts), oracle_run(d, rule=rule, **opts)) < 1e-12

# --- i.i.d. sampling, streams, given orders ----------------------------------------------------------------------------

@pytest.mark.parametrize('rng', ['counter', 'torch'])
def test_iid_sampling_frequencies(rng):
    "i.i.d. draws: each trial type with probability count/total at every position, independently; counts vary between subjects."
    S = 20_000
    o = trial_orders('10A+ | !30A+/10B-/20C- | 5B-', subjects=S, seed=3, sampling='iid', rng=rng)['group'].long()
    assert o.shape == (S, 75) and (o[:, :10] == 0).all() and (o[:, 70:] == 4).all()
    ph = o[:, 10:70]
    for j, p in ((1, 0.5), (2, 1 / 6), (3, 1 / 3)):
        f = (ph == j).double().mean(0)                                  # per position
        assert (f - p).abs().max() < 4.5 * math.sqrt(p * (1 - p) / S)
    n1 = (ph == 1).sum(1).double()                                      # per subject: binomial(60, 1/2)
    assert abs(float(n1.mean()) - 30) < 4 * math.sqrt(15 / S) and abs(float(n1.var()) - 15) < 1.0
    same = (ph[:, :-1] == 1) & (ph[:, 1:] == 1)                          # independence of neighbours
    assert abs(float(same.double().mean()) - 0.25) < 0.01

def test_shuffle_keeps_counts_and_torch_stream_is_the_oracles():
    o = trial_orders('g1: !6A+/3B- ; g2: !2C+/2D-', subjects=500, seed=9)
    assert ((o['g1'].long() == 0).sum(1) == 6).all() and ((o['g2'].long() == 0).sum(1) == 2).all()
    t = trial_orders('g1: !6A+/3B- ; g2: !2C+/2D-', subjects=500, seed=9, rng='torch')
    gen = torch.Generator().manual_seed(9)
    a = torch.repeat_interleave(torch.arange(2), torch.tensor([6, 3]))[torch.argsort(torch.rand(500, 9, generator=gen), dim=1)]
    b = torch.repeat_interleave(torch.arange(2), torch.tensor([2, 2]))[torch.argsort(torch.rand(500, 4, generator=gen), dim=1)]
    assert torch.equal(t['g1'].long(), a) and torch.equal(t['g2'].long(), b)
    with pytest.raises(ValueError, match='no miniblocks'): trial_orders('!2A+/2B-', sampling='iid', miniblocks=True)
    with pytest.raises(ValueError, match="unknown sampling"): simulate('!2A+/2B-', sampling='perm')

def test_orders_are_what_simulate_runs():
    d = 'a: !5A+/5AB- | #B ; b: !3B+/6(ctx)-'
    for kw in (dict(), dict(sampling='iid'), dict(rng='torch'), dict(sampling='iid', rng='torch')):
        r = simulate(d, subjects=7, seed=4, per_subject=True, **kw)
        o = trial_orders(d, subjects=7, seed=4, **kw)
        for g in ('a', 'b'): assert torch.equal(r.runs[g]['order'].long(), o[g].long()) and torch.equal(r.orders(g).long(), o[g].long())

def test_given_orders_run_as_given():
    d = '!3A+/2AB- | #B'
    o = torch.tensor([[0, 1, 0, 1, 0, 2], [1, 1, 0, 0, 0, 2]])
    r = simulate(d, subjects=2, orders={'group': o}, per_subject=True, beta=0.3)
    assert torch.equal(r.orders('group').long(), o) and r.params['orders'] == 'given'
    for s in range(2):                                                   # against a hand loop
        V = torch.zeros(2, dtype=torch.float64)
        for t in o[s].tolist():
            x = torch.tensor([1., float(t != 0)], dtype=torch.float64) if t < 2 else None
            if x is None: break
            V = V + 0.3 * ((1.0 if t == 0 else 0.0) - float(x @ V)) * x
        assert float((r.runs['group']['V'][s, 5] - V).abs().max()) < 1e-12
    with pytest.raises(ValueError, match=r'shape \[subjects, trials\] = \[2, 6\]'): simulate(d, subjects=2, orders={'group': o[:, :5]})
    with pytest.raises(ValueError, match='index its 3 trial types'): simulate(d, subjects=2, orders={'group': o + 1})
    with pytest.raises(ValueError, match='unknown group'): simulate(d, subjects=2, orders={'x': o})

def test_trajectories_equal_probe_reads():
    "`V` (every cue's strength after every step) read before a single-cue probe equals that probe's read-out, per subject."
    d = 'a: !10A+/10B-/5AB+ | #A | !6B+/6A- | #B/#A'
    for rule in ('delta', 'gated-delta', 'hebbian', 'decay', 'trace', 'vhw'):
        r = simulate(d, rule=rule, subjects=25, seed=1, per_subject=True, sampling='iid')
        run = r.runs['a']; o = run['order'].long(); tts = run['trial_types']
        for s in range(25):
            for t in range(o.shape[1]):
                tt = tts[int(o[s, t])]
                if tt.probe:
                    assert abs(float(run['V'][s, t, r.cues.index(tt.cues[0])]) - float(run['pred_sum'][s, int(o[s, t])])) < 1e-12

# --- no second path ------------------------------------------------------------------------------------------------------

MINE = ('designs', 'acquisition', 'blocking', 'competition', 'random_orders', 'dissociation', 'recovery', 'beyond')

# Theorem harnesses that run `recur` on inputs no design expresses: arbitrary key vectors per experiment (any overlap,
# any norm), ragged phase lengths, per-step retention gates and values. They are not designs, so they stay on their pages.
NOT_DESIGNS = {('blocking', 'simulate_blocking'), ('recovery', 'run_recovery'), ('recovery', 'channel_gate_counterexample'),
               ('recovery', '_overwrite_run')}   # the battery's overwriting row: two writes of random 4-d values on one random 8-d key

def _source(m:str) -> str:
    "The source of module `m` on its floor (`pavlovattn.MOVED`)."
    import pavlovattn
    return (pathlib.Path(pavlovattn.__file__).parent / pavlovattn.MOVED[m] / f'{m}.py').read_text()

def test_no_module_runs_a_design_with_recur_but_designs():
    "The phenomenon modules call `recur` only in the theorem harnesses above, and never draw their own trial orders: designs is the one compiler."
    for m in MINE[1:]:
        src, fn = _source(m), None
        for line in src.splitlines():
            if (d := re.match(r'\s*def (\w+)\(', line)) and not line.startswith(' '): fn = d.group(1)
            if re.search(r'\brecur\s*\(', line): assert (m, fn) in NOT_DESIGNS, f'{m}.{fn} calls recur'
        assert not re.search(r'torch\.(multinomial|randperm)|argsort\(torch\.rand', src), f'{m}.py draws its own orders'
    assert 'def _sequences' not in _source('competition') and 'vhw_simulate' not in _source('beyond')

def test_no_module_of_these_pages_reads_old_family_aliases():
    for m in MINE:
        src = _source(m)
        for alias in ('DELTA_RULES', 'DEFAULT_GAMMA', 'SCALAR_GATE_RULES'): assert alias not in src, f'{m}.py uses {alias}'

def test_the_probe_rule_is_written_once():
    "Issue 45: only the design compiler asks a family how it reads probes (`probe_rule`, `probe_read`); the animal batch, the trained-model and text probes and the pretrained heads take their steps from `compile_group`."
    import pavlovattn
    asks = sorted(m for m in pavlovattn.MOVED if 'probe_is_query' in _source(m))
    assert asks == ['designs', 'families'], asks                              # families defines it; designs applies it
    for m, users in (('animal', ('compile_group', 'probe_rule', 'probe_read')), ('probes', ('compile_group', 'written_order')),
                     ('pretrained', ('compile_group', 'written_order', 'probe_rule', 'probe_read'))):
        src = _source(m)
        assert all(f'{u}(' in src for u in users), (m, [u for u in users if f'{u}(' not in src])

# --- families with a history: a key trace (trace), write keys (vhw) ----------------------------------------------------

def _loop(rule, design, res, group, s, beta, lam, gamma=None, omega=0.5, salience=None, normalize=False):
    "Subject s of `group` by a plain per-trial loop written here: every cue's strength after every step, and every step's read-out."
    cues = list(res.cues); C = len(cues); tts = res.runs[group]['trial_types']
    a = torch.tensor([(salience or {}).get(c, 1.0) for c in cues], dtype=torch.float64).sqrt()
    S = torch.zeros(C, dtype=torch.float64); e = torch.zeros(C, dtype=torch.float64)
    seen = set(); V, reads = [S.clone()], []
    for i in res.runs[group]['order'][s].tolist():
        tt = tts[i]; x = torch.tensor([float(c in tt.cues) for c in cues], dtype=torch.float64)
        k = x * a; n = float(k.norm())
        if normalize and n > 0: k = k / n
        reads.append(float(S @ k))
        if not tt.probe:
            v = lam if tt.outcome == '+' else 0.0
            if rule == 'trace':
                e = gamma * e + k; S = S + beta * v * e
            else:
                absent = torch.tensor([float(c not in tt.cues and any((c, p) in seen for p in tt.cues)) for c in cues], dtype=torch.float64)
                w = k - omega * (absent * a) * ((1 / n) if normalize and n > 0 else 1.0)
                S = S + beta * (v - float(S @ k)) * w
        seen |= {(p, q) for p in tt.cues for q in tt.cues if p != q}      # presented together (probes too)
        V.append(S * a)
    return torch.stack(V), reads

@pytest.mark.parametrize('rule', ['trace', 'vhw'])
def test_history_families_equal_a_direct_loop(rule):
    "simulate(rule='trace'/'vhw') on randomised multi-group designs equals a per-subject loop to 1e-12: strengths after every step and read-outs."
    cases = [('bb: !6AB+/3C- | 10A+ | #B/#A ; ctrl: !6AB+/3C- | 10C+ | #B', dict(beta=0.2)),
             ('!5AB/5A(US)/4(US) | 1#B | !4B(US)/4AB | 1#A/1#AB', dict(beta=0.3, salience={'A': 0.6, 'B': 1.4}, lam=1.5, dialect='calmr')),   # US-alone trials, calmr's miniblocks
             ('a: !8A+/8AB-/4(ctx)+ | #B/#(ctx)', dict(beta=0.25, normalize=True))]
    for design, kw in cases:
        if rule == 'trace': kw = {**kw, 'gamma': 0.7}
        else: kw = {**kw, 'omega': 0.35}
        if rule == 'trace' and '(US)' not in design and 'normalize' in kw: kw['gamma'] = 0.0
        r = simulate(design, rule=rule, subjects=6, seed=3, per_subject=True, **kw)
        for g in r.runs:
            run = r.runs[g]; tts = run['trial_types']
            for s in range(6):
                V, reads = _loop(rule, design, r, g, s, kw['beta'], kw.get('lam', 1.0), kw.get('gamma'), kw.get('omega', 0.5),
                                 kw.get('salience'), kw.get('normalize', False))
                assert float((run['V'][s] - V).abs().max()) < 1e-12, (rule, design, g, s)
                o = run['order'][s].long()
                for i in range(len(tts)):                                   # per trial type: the sum of its read-outs
                    tot = sum(x for x, j in zip(reads, o.tolist()) if j == i)
                    assert abs(float(run['pred_sum'][s, i]) - tot) < 1e-12
        m = torch.stack([run['V'] for run in r.runs.values()][:1])[0].mean(0)
        assert float((r.runs[next(iter(r.runs))]['mean'] - m).abs().max()) < 1e-12

def test_history_family_refusals_and_defaults():
    with pytest.raises(ValueError, match='has no omega'): simulate('10A+', rule='delta', omega=0.3)
    with pytest.raises(ValueError, match='omega must be a finite number'): simulate('10A+', rule='vhw', omega=-1)
    r = simulate('10AB+ | 10A+ | #B', rule='vhw', beta=0.2)
    assert r.params['omega'] == 0.5 and r.params['gamma'] == 1.0
    p = 1 - 0.6**10; f = 1 - 0.8**10
    assert abs(r.probes['group'][0]['mean'] - (p / 2 - 0.5 * (1 - p / 2) * f)) < 1e-12   # the beyond page's closed form
    t = simulate('10A+', rule='trace', beta=0.1)
    assert t.params['gamma'] == FAMILIES['trace'].default_gamma
    n = torch.arange(11, dtype=torch.float64)
    assert float((t.runs['group']['mean'][:, 0] - FAMILIES['trace'].acquisition(n, 1.0, 1.0, 0.1, 0.9, 0.0)).abs().max()) < 1e-12

def test_expected_absent_and_vhw_keys():
    x = torch.tensor([[1, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0]])        # AB, A, C, B
    assert torch.equal(expected_absent(x), torch.tensor([[0., 0, 0], [0, 1, 0], [0, 0, 0], [1, 0, 0]], dtype=torch.float64))
    kr, kw = vhw_keys(x, torch.eye(3, dtype=torch.float64), omega=0.25)
    assert torch.equal(kw[1], torch.tensor([1., -0.25, 0.], dtype=torch.float64)) and torch.equal(kr, x.double())

# --- named USs (calmr dialect): one value dimension (head) per US, each with its own lambda and rates ------------------

def _rw_multi(res, group, s, alpha, lams, on, off):
    "Rescorla-Wagner with several USs, written here: V[cue][us] += alpha_cue beta_us (lambda_us [us present] - sum of present V[.][us])."
    cues, us = [c.split(':')[0] for c in res.cues[::len(res.outcomes)]], res.outcomes
    V = {c: {u: 0.0 for u in us} for c in cues}; tts = res.runs[group]['trial_types']; out = [[0.0] * (len(cues) * len(us))]; reads = []
    for i in res.runs[group]['order'][s].tolist():
        tt = tts[i]
        reads.append([sum(V[c][u] for c in tt.cues) for u in us])
        if not tt.probe:
            err = {u: (lams[u] if u in tt.outcomes else 0.0) - sum(V[c][u] for c in tt.cues) for u in us}
            for c in tt.cues:
                for u in us: V[c][u] += alpha.get(c, 1.0) * (on[u] if u in tt.outcomes else off[u]) * err[u]
        out.append([V[c][u] for c in cues for u in us])
    return torch.tensor(out, dtype=torch.float64), reads

def test_named_uss_equal_an_independent_loop():
    design = ('a: !6A(US_a)/6B(US_b)/4AB(US_a)(US_b)/3C | !5AC(US_b)/5C(US)/5B | 1#A/1#B/1#C ; '
              'b: 8A>B(US_a)/4(US_b) | !3A(US_b)/3AB | 1#AB')
    alpha, lams = {'A': 0.6, 'B': 1.2, 'C': 0.8}, {'US_a': 1.0, 'US_b': 1.7, 'US': 0.5}
    on, off = {'US_a': 0.3, 'US_b': 0.2, 'US': 0.25}, {'US_a': 0.1, 'US_b': 0.05, 'US': 0.15}
    r = simulate(design, dialect='calmr', salience=alpha, lam=lams, beta={u: {'+': on[u], '-': off[u]} for u in on},
                 subjects=5, seed=2, per_subject=True)
    assert r.outcomes == ('US_a', 'US_b', 'US') and r.cues[:3] == ('A:US_a', 'A:US_b', 'A:US')
    for g in ('a', 'b'):
        run = r.runs[g]
        for s in range(5):
            V, reads = _rw_multi(r, g, s, alpha, lams, on, off)
            assert float((run['V'][s] - V).abs().max()) < 1e-12, (g, s)
            o = run['order'][s].long().tolist()
            for i in range(len(run['trial_types'])):
                tot = torch.tensor([sum(x[h] for x, j in zip(reads, o) if j == i) for h in range(3)], dtype=torch.float64)
                assert float((run['pred_sum'][s, i] - tot).abs().max()) < 1e-12
    p = r.probes['a']
    assert [(x['cues'], x['outcome']) for x in p[:3]] == [('A', 'US_a'), ('A', 'US_b'), ('A', 'US')]
    po = r.per_outcome['a']
    assert set(po) == {'US_a', 'US_b', 'US'} and po['US_b']['B'] == r.strengths['a']['B:US_b']
    assert r.params['lam'] == lams and r.params['beta']['US_b'] == {'+': 0.2, '-': 0.05}
    assert simulate('5A(US_a)/5B(US_b)', dialect='calmr', beta=0.2).params['beta'] == 0.2   # one shared value: shown once
    c = calmr_parameters(design, alphas=alpha, betas_on=on, betas_off=off, lambdas=lams)
    r2 = simulate(design, subjects=5, seed=2, per_subject=True, **c)
    assert torch.equal(r2.runs['a']['V'], r.runs['a']['V'])

def test_named_us_refusals_and_single_us_unchanged():
    with pytest.raises(ValueError, match='needs a design with named USs'): simulate('10A+', lam={'US_a': 1.0})
    with pytest.raises(ValueError, match="needs exactly the keys"): simulate('10A+', beta={'US_a': 1.0})
    with pytest.raises(ValueError, match='missing: US_b'): simulate('5A(US_a)/5B(US_b)', dialect='calmr', lam={'US_a': 1.0})
    with pytest.raises(ValueError, match='a second \\(US_a\\) in one period'): parse_design('5A(US_a)(US_a)', dialect='calmr')
    d = parse_design('4A(US_a)>B(US_b)/2(US_b)', dialect='calmr')
    assert str(d) == 'group: 4A(US_a)>B(US_b)/2(US_b)' and str(parse_design(str(d), dialect='calmr')) == str(d)
    assert [t.outcomes for t in d.groups[0].trial_types] == [('US_a', 'US_b'), ('US_b',), ('US_b',)]
    one = simulate('10A(US)/10B | 1#A', dialect='calmr', beta=0.2)            # a plain (US): one value dimension, as before
    assert one.outcomes == () and one.cues == ('A', 'B') and 'outcome' not in one.probes['group'][0]
    assert parse_design('10(US_a)+').cues == ('US_a',)                        # the native grammar: US_a is a cue

# --- the one compiler (issue 45): compile_group's tables are the ones simulate built before; the probe rule ------------

def _tables_before(d, g, cues, kd, names, lams, rates, gamma, normalize, assoc, reps):
    "The trial-type tables as simulate built them before `compile_group` (its code, kept here): keys, US, rates, decays, cue indicators, key scales, probe flags."
    from pavlovattn.design.designs import _stimulus_steps, _present
    def step_values(tt, us, lam, r):                                       # the old `_step_values`: a probe's rate 0 here
        if not _present(tt, us): return 0., 0. if tt.probe else r['-']
        return (lam if tt.lam is None else tt.lam) * tt.magnitude, (r['+'] if tt.beta is None else tt.beta) * tt.rate
    Kc64 = torch.stack([kd[c] for c in cues])
    present = [_stimulus_steps(g)[i][0] for i in reps] if assoc == 'all' else [g.trial_types[i].cues for i in reps]
    Ks = torch.stack([sum((kd[c] for c in P), torch.zeros_like(Kc64[0])) for P in present])
    sc = torch.ones(len(Ks), dtype=torch.float64)
    if normalize: nrm = Ks.norm(dim=-1); sc = torch.where(nrm > 0, 1 / nrm.clamp_min(1e-300), sc); Ks = Ks * sc[:, None]
    if assoc == 'all': Ks = torch.stack([torch.stack([Ks[n] - (kd[j] * sc[n] if j in P else 0) for j in names]) for n, P in enumerate(present)])
    tts, f = [g.trial_types[i] for i in reps], lambda vals: torch.tensor(vals, dtype=torch.float64)
    if assoc == 'all':
        tgt = [set(_stimulus_steps(g)[i][1]) for i in reps]
        lam_tt = f([[0. if t.probe or u not in U else l for u, l in zip(names, lams)] for t, U in zip(tts, tgt)])
        b_tt = f([[0. if t.probe else r['+' if u in U else '-'] for u, r in zip(names, rates)] for t, U in zip(tts, tgt)])
    else:
        lb = [[step_values(t, u, l, r) for u, l, r in zip(names, lams, rates)] for t in tts]
        lam_tt, b_tt = f([[x[0] for x in row] for row in lb]), f([[x[1] for x in row] for row in lb])
    g_tt = f([[1. if t.probe else gamma] * len(names) for t in tts])
    return Ks, lam_tt, b_tt, g_tt, f([[float(c in t.cues) for c in cues] for t in tts]), sc, torch.tensor([t.probe for t in tts])

@pytest.mark.parametrize('design,kw', [
    ('exp: !8A+/8AB+/4B- | !6AC-/6C+ | #A/#AC ; ctrl: 8D+ | #B', dict(beta={'+': 0.2, '-': 0.05})),
    ('a: !6A+/6AB+/2#B | !5B-/5AC+ | 3#C ; b: 8B+ | !4AB-/4(ctx)+/#A(ctx)', dict(keys='random', dk=6, overlap=0.2, salience={'A': 0.7, 'ctx': 0.4}, seed=1, normalize=True)),
    ('10A+ | lam=0.5/beta=0.05/5A+/5B- | 4A++ | 5{A 0-3, B 2-4, US 3*0.5} | #A/#B', dict(lam=1.5)),
    ('two: 10A(US_a)/10B(US_b) | 5AB(US_a)(US_b) | 1#A/1#B', dict(dialect='calmr', lam={'US_a': 1.0, 'US_b': 0.5}, beta=0.2)),
    ('SPC: 10A>B | 10B>(US) | 1#A/1#B', dict(dialect='calmr', associations='all', beta=0.2))])
@pytest.mark.parametrize('rule', ['delta', 'gated-delta', 'trace', 'vhw'])
def test_compile_group_builds_the_tables_simulate_built_before(design, kw, rule):
    "Bit for bit: every group's keys, US, rates, decays, cue indicators, key scales and probe flags, for the distinct steps and for every step (per_subject), and the run's results over them unchanged (the oracles above)."
    from pavlovattn.design.designs import compile_group, cue_keys, _heads, _distinct_steps, _design_stimuli, _associations
    fam = FAMILIES[rule]; d = parse_design(design, kw.get('dialect', 'native')); assoc = _associations(d, kw.get('associations'))
    if assoc == 'all' and fam.history: return                               # refused: a history family reads trial-type tables only for 'us'
    cues = _design_stimuli(d) if assoc == 'all' else d.cues
    names, lams, rates = _heads(d, kw.get('lam', 1.0), kw.get('beta', 0.1), cues if assoc == 'all' else None)
    gamma = float(fam.gamma_or_default(0.3 if 'gamma' in fam.params else None))
    kd = cue_keys(cues, keys=kw.get('keys', 'onehot'), dk=kw.get('dk'), overlap=kw.get('overlap', 0.), salience=kw.get('salience'), seed=kw.get('seed', 0))
    for g in d.groups:
        for reps in (_distinct_steps(g, assoc)[0], list(range(len(g.trial_types)))):
            inp = compile_group(g, cues, kd, rule, lams, rates, gamma, names, kw.get('normalize', False), assoc, reps)
            K, lam_tt, b_tt, g_tt, X, sc, pr = _tables_before(d, g, cues, kd, names, lams, rates, gamma, kw.get('normalize', False), assoc, reps)
            if fam.probe_is_query: assert torch.equal(inp.q, K); K = torch.where(pr[:, None], torch.zeros_like(K), K)   # before: per step, as the run gathered them
            else: assert inp.q is None
            for got, want in ((inp.k, K), (inp.v, lam_tt), (inp.beta, b_tt), (inp.gamma, g_tt), (inp.scale, sc), (inp.probe, pr)) + (((inp.X, X),) if assoc == 'us' else ()):
                assert got.dtype == want.dtype and torch.equal(got, want), (design, rule, g.name)
    if not (assoc == 'all' and fam.history):
        simulate(design, rule=rule, subjects=3, **({'gamma': gamma} if 'gamma' in fam.params else {}), **kw)   # runs on them

def test_a_probe_step_writes_nothing_in_any_family():
    "The probe rule on per-step tensors: the state after a probe is the state before it, bit for bit (an exemplar memory keeps the probe at weight 0: reads after it equal to 1e-12); the probe reads its key from that state."
    from pavlovattn.model.core import probe_readouts
    from pavlovattn.model.families import BUILTIN
    from pavlovattn.design.designs import probe_rule, probe_read
    gen = torch.Generator().manual_seed(1)
    T, t0, dk = 11, 6, 4
    k, v = torch.rand(3, T, 2, dk, generator=gen, dtype=torch.float64), torch.rand(3, T, 2, 1, generator=gen, dtype=torch.float64)
    b, g = 0.3 * torch.rand(3, T, 2, generator=gen, dtype=torch.float64), 0.4 + 0.6 * torch.rand(3, T, 2, generator=gen, dtype=torch.float64)
    probe = torch.zeros(3, T, dtype=torch.bool); probe[:, t0] = True; keep = [t for t in range(T) if t != t0]
    for name in BUILTIN:
        fam = FAMILIES[name]; gm = fam.per_feature(g, dk) if 'gamma' in fam.params else None
        opt = lambda x, sl: {} if x is None else {'gamma': x[:, sl]}
        r = probe_rule(fam, probe, k, v, b, gm)
        assert torch.equal(r['beta'][probe], torch.zeros_like(r['beta'][probe])) and torch.equal(r['v'][probe], torch.zeros_like(r['v'][probe]))
        run = recur(r['k'], r['v'], r['q'], rule=name, beta=r['beta'], **opt(r['gamma'], slice(None)))
        skip = recur(k[:, keep], v[:, keep], rule=name, beta=b[:, keep], **opt(gm, keep))
        read = probe_readouts(k[:, :t0], v[:, :t0], k[:, t0, :, None], rule=name, beta=b[:, :t0], **opt(gm, slice(0, t0))).probes[:, -1, :, 0]
        assert float((probe_read(fam, run, probe)[:, t0] - read).abs().max()) < 1e-12, name
        assert float((run.pred[:, keep] - skip.pred).abs().max()) < 1e-12, name
        if not fam.grows: assert torch.equal(run.state, skip.state), name
        else: assert torch.equal(run.state.weights[:, t0], torch.zeros_like(run.state.weights[:, t0]))
