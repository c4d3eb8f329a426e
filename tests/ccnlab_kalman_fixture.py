"""Generate `tests/fixtures/ccnlab_kalman.json.gz`: CCNLab's own Kalman-filter baseline (github.com/nikhilxb/ccnlab, MIT;
`ccnlab/baselines/basic.py`, `KalmanFilter` at its defaults tau2 0.01, sigma_r2 1, sigma_w2 1), one subject, at every time
step of every group of the 30 experiments of `pavlovattn/data/ccnlab_timesteps.json.gz` (the schedules CCNLab built with
seed 0): the value before each step's update, as CCNLab's `_value` returns it. CCNLab is imported, not copied.

Run:  .venv/bin/python tests/ccnlab_kalman_fixture.py [CCNLAB_CHECKOUT]   (default: the mirror at /work/.mirror/nikhilxb+ccnlab/repo)
Each step's input is CCNLab's: its CSs (magnitude 1) then its context, one-hot over the experiment's CS and context names
(sorted: the filter's prior and drift are isotropic, so the order of the features does not change its values).
`tests/test_animal_kalman.py` checks the Kalman family (`pavlovattn.model.classical`) against it.
"""
import gzip, io, json, subprocess, sys, tarfile, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / 'pavlovattn' / 'data' / 'ccnlab_timesteps.json.gz'
OUT = ROOT / 'tests' / 'fixtures' / 'ccnlab_kalman.json.gz'
MIRROR = Path('/work/.mirror/nikhilxb+ccnlab/repo')

def main():
    if len(sys.argv) > 1: path = Path(sys.argv[1])
    else:
        path = Path(tempfile.mkdtemp())
        tar = subprocess.run(['git', f'--git-dir={MIRROR}', 'archive', 'HEAD'], capture_output=True, check=True).stdout
        tarfile.open(fileobj=io.BytesIO(tar)).extractall(path)
    commit = subprocess.run(['git', f'--git-dir={MIRROR}' if len(sys.argv) == 1 else f'--git-dir={path}/.git', 'rev-parse', 'HEAD'], capture_output=True, text=True).stdout.strip()
    sys.path.insert(0, str(path))
    from ccnlab.baselines.basic import KalmanFilter
    fx = json.loads(gzip.decompress(SRC.read_bytes()))
    out = dict(source='github.com/nikhilxb/ccnlab', commit=commit, schedules=fx['commit'], params=dict(tau2=0.01, sigma_r2=1, sigma_w2=1), experiments={})
    for name, e in fx['experiments'].items():
        cs = sorted({c for k in e['kinds'] for step in k for c in step[0]}); ctx = sorted({step[1] for k in e['kinds'] for step in k})
        vals = {}
        for g, v in e['groups'].items():
            m = KalmanFilter(cs_dim=len(cs), ctx_dim=len(ctx)); row = []
            for k in v['trials']:
                for t, (c, x, us) in enumerate(e['kinds'][k]):
                    row.append(float(m.act([float(s in c) for s in cs], [float(s == x) for s in ctx], us, t)))
            vals[g] = row
        out['experiments'][name] = vals
    OUT.write_bytes(gzip.compress(json.dumps(out, separators=(',', ':')).encode(), mtime=0))
    print(f'{OUT}: {OUT.stat().st_size:,} bytes, {len(out["experiments"])} experiments')

if __name__ == '__main__':
    main()
