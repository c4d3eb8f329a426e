"""Generate `pavlovattn/data/ccnlab_timesteps.json.gz` from CCNLab itself (github.com/nikhilxb/ccnlab, MIT licence).

Run:  .venv/bin/python tests/ccnlab_fixtures.py [CCNLAB_CHECKOUT]
(default: a work tree exported from the mirror at /work/.mirror/nikhilxb+ccnlab/repo). CCNLab is imported, not copied: its
plotting library (seaborn) is replaced by an empty module, since no plot is drawn. For every registered experiment, with
`random.seed(0)` before it is built (its `sample` nodes draw the trial order then), the fixture holds:

- `kinds`: every distinct trial, as its time steps `[[CS names], context, US magnitude]` (CCNLab's CS magnitudes, all 1, are checked);
- per group: the trials in order (indices into `kinds`), their phase names, and CCNLab's own Rescorla-Wagner baseline
  (`RescorlaWagner(alpha=0.3)`, one subject: it is deterministic) at every time step of every trial: the value before its update;
- CCNLab's empirical results, and its read-out of the RW responses (`simulated_results`) with the score CCNLab's baseline
  script computes (Pearson r; the ratio of ratios for two points);
- CCNLab's Kalman filter and temporal-difference baselines at their defaults, through the same read-out and score (`baselines`;
  TD only where every trial of the experiment has the same length, since CCNLab's TD is sized for one trial length);
- for every family of `pavlovattn.model.core.RULES` at its defaults (beta 0.3), our per-step values on our own reading of the schedule
  (`pavlovattn.apps.animal.ccnlab_design` and `timestep_values`) put through CCNLab's read-out and score: the timestep protocol;
- `paired`: the empirical values and every family's and baseline's read-out values, paired as CCNLab's scores pair them
  (its `evaluation._dfs_to_values`, in the empirical order), so that a two-point experiment can also be scored by the sign of its
  difference, which CCNLab's ratio of ratios does not give (as its code reads, `values2[1] / values1[0]`, it compares the
  second read-out value with the empirical ones and never uses the first).

`tests/test_animal.py` checks our reading of the schedules and delta against the RW values at 1e-12.
"""
import gzip, io, json, random, subprocess, sys, tarfile, tempfile, types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / 'pavlovattn' / 'data' / 'ccnlab_timesteps.json.gz'
MIRROR = Path('/work/.mirror/nikhilxb+ccnlab/repo')


def _checkout() -> tuple:
    if len(sys.argv) > 1: return Path(sys.argv[1]), subprocess.run(['git', '-C', sys.argv[1], 'rev-parse', 'HEAD'], capture_output=True, text=True).stdout.strip()
    tmp = Path(tempfile.mkdtemp())
    tar = subprocess.run(['git', f'--git-dir={MIRROR}', 'archive', 'HEAD'], capture_output=True, check=True).stdout
    tarfile.open(fileobj=io.BytesIO(tar)).extractall(tmp)
    commit = subprocess.run(['git', f'--git-dir={MIRROR}', 'rev-parse', 'HEAD'], capture_output=True, text=True, check=True).stdout.strip()
    return tmp, commit


def _records(df) -> list:
    return [{k: (v.item() if hasattr(v, 'item') else v) for k, v in r.items()} for r in df.to_dict('records')]


def main():
    path, commit = _checkout()
    sys.modules.setdefault('seaborn', types.ModuleType('seaborn'))         # plotting only
    sys.path.insert(0, str(path))
    import ccnlab.benchmarks.classical as classical
    import ccnlab.evaluation as evaluation
    from ccnlab.baselines.basic import RescorlaWagner, KalmanFilter, TemporalDifference
    sys.path.insert(0, str(ROOT))
    from pavlovattn.apps.animal import ccnlab_design, timestep_values
    from pavlovattn.model.core import RULES

    def ccnlab_score(exp, responses) -> tuple:
        "CCNLab's read-out and score of per-step responses {group: [[value per step] per trial]} (one subject)."
        exp.reset()
        for g, trials in responses.items():
            for i, vs in enumerate(trials):
                for t, v in enumerate(vs): exp.data[g][i][t]['response'].append(float(v))
        sim = exp.simulated_results()
        two = len(list(exp.empirical_results.value)) == 2
        s = (evaluation.ratio_of_ratios if two else evaluation.correlation)(exp.empirical_results, sim)
        return _records(sim), (None if s != s else float(s)), 'ratio of ratios' if two else 'pearson r'

    def paired(exp, records) -> list:
        "The read-out's values paired with the empirical ones, as CCNLab's scores pair them (`evaluation._dfs_to_values`), in the empirical order."
        import pandas as pd
        emp, sim = evaluation._dfs_to_values(exp.empirical_results, pd.DataFrame(records))
        return [float(x) for x in emp], [float(x) for x in sim]

    out = dict(source='github.com/nikhilxb/ccnlab', commit=commit, seed=0, rw_alpha=0.3, experiments={})
    for name in sorted(classical.registry.items):
        random.seed(0)
        exp = classical.registry.items[name]()
        kinds, index, groups = [], {}, {}
        for g, trials in exp.stimuli.items():
            seq = []
            for trial in trials:
                for cs, ctx, us in trial: assert all(m == 1 for _, m in cs), (name, cs)       # CS magnitudes: all 1
                key = json.dumps([[sorted(s for s, _ in cs), ctx, us] for cs, ctx, us in trial])
                if key not in index: index[key] = len(kinds); kinds.append(json.loads(key))
                seq.append(index[key])
            rw, model = [], RescorlaWagner(cs_dim=len(exp.cs_space), ctx_dim=len(exp.ctx_space))
            for i, trial in enumerate(trials):
                vals = []
                for t in range(len(trial)):
                    cs, ctx, us = exp.stimulus(g, i, t, vector=True)
                    vals.append(float(model.act(cs, ctx, us, t)))
                rw.append(vals)
            groups[g] = dict(trials=seq, phases=[exp.phase(g, i) for i in range(len(trials))], rw=rw)
        e = dict(kinds=kinds, groups=groups, empirical=_records(exp.empirical_results), citation=exp.meta.get('citation'))
        e['rw_simulated'], e['rw_score'], e['score_kind'] = ccnlab_score(exp, {g: v['rw'] for g, v in groups.items()})
        def run(make):                                                   # CCNLab's own baseline, one subject (deterministic), every step
            per = {}
            for g, trials in exp.stimuli.items():
                model = make()
                per[g] = [[float(model.act(*exp.stimulus(g, i, t, vector=True), t)) for t in range(len(trial))] for i, trial in enumerate(trials)]
            return per
        lengths = {len(trial) for trials in exp.stimuli.values() for trial in trials}
        dims = dict(cs_dim=len(exp.cs_space), ctx_dim=len(exp.ctx_space))
        base = {'Kalman filter': ccnlab_score(exp, run(lambda: KalmanFilter(**dims))),    # CCNLab's defaults
                'temporal difference': ccnlab_score(exp, run(lambda: TemporalDifference(**dims, num_timesteps=min(lengths))))
                if len(lengths) == 1 else None}   # TD is sized for one trial length: with trials of different lengths it is not run
        e['baselines'] = {k: None if v is None else v[1] for k, v in base.items()}
        e['paired'] = dict(empirical=paired(exp, e['rw_simulated'])[0], families={}, baselines={k: None if v is None else paired(exp, v[0])[1] for k, v in base.items()})
        design, names = ccnlab_design({g: [kinds[k] for k in v['trials']] for g, v in groups.items()})
        e['families'] = {}
        for rule in RULES:
            vals = timestep_values(design, rule, beta=0.3)
            per_trial = {}
            for g, v in groups.items():
                it, rows = iter(vals[names[g]].tolist()), []
                for k in v['trials']: rows.append([next(it) for _ in kinds[k]])
                per_trial[g] = rows
            sim, s, _ = ccnlab_score(exp, per_trial)
            e['families'][rule] = s
            e['paired']['families'][rule] = paired(exp, sim)[1]
        out['experiments'][name] = e
        print(f"{name}: RW {e['score_kind']} {e['rw_score']}; " + ', '.join(f'{r} {s if s is None else round(s, 3)}' for r, s in (e['families'] | e['baselines']).items()))
    OUT.write_bytes(gzip.compress(json.dumps(out, separators=(',', ':')).encode(), mtime=0))
    print(f'{OUT}: {OUT.stat().st_size:,} bytes, {len(out["experiments"])} experiments')


if __name__ == '__main__':
    main()
