#!/usr/bin/env bash
# The one short check run on a lent GPU machine (`make gpu-check`). That machine reaches no package registry: its
# image's python3 holds torch and triton, and the rest comes as wheels fetched here beforehand (`make gpu-wheels`,
# into .whl/, which the device call carries). Steps run in order of importance, each cut off by its own limit and
# by the overall budget (GPU_CHECK_BUDGET seconds, default 500), so that the whole check fits one 600-second call:
#   1. tests/test_families.py: chunked = loop on CUDA, fla's kernels against chunked, fla_call; then the CUDA cases of
#      tests/test_layers.py (issue 29): split = whole, padded = each alone, packed = each alone, gradients included, float64
#      1e-10, every family, and CUDA = CPU (written without a lent device: it has not run on one yet)
#   2. the CUDA cases of tests/test_animal.py (scoring and fitting on CUDA = CPU)
#   3. benchmarks/bench_chunked.py --quick on CUDA, with fla's chunk kernels (the 5x target)
#   4. pavlovattn reproduce --exact --strict --device cuda
#   5. nbdev_test --flags gpu on the notebooks that have GPU cells
#   6. pavlovattn reproduce --full --device cuda, with whatever time is left
# Outputs land in $OUT (the device call brings them back). GPU_CHECK_DEVICE=cpu runs the same steps on the CPU: a dry
# run of the offline install and of every command, for any machine without a GPU (there step 6 runs out of budget).
# From a session with a lent machine, after `make gpu-wheels`: run(command='bash tools/gpu_check.sh', carry=['.whl'],
# timeout_s=600), once.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check-out}; mkdir -p "$OUT"
DEV=${GPU_CHECK_DEVICE:-cuda}; BUDGET=${GPU_CHECK_BUDGET:-500}; START=$SECONDS
PY=${PYTHON:-python3}; export PYTHONUNBUFFERED=1 MPLBACKEND=Agg
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then              # offline install of the carried wheels
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}" PATH="/tmp/site/bin:$PATH"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" - "$DEV" <<'PYEOF' || exit 1
import sys, torch, importlib
print('python', sys.version.split()[0], '| torch', torch.__version__, '| cuda', torch.version.cuda, '| device:',
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none')
for m in ('pavlovattn', 'nbdev', 'fla', 'triton'):
    try: print(f'  {m}', getattr(importlib.import_module(m), '__version__', '?'))
    except Exception as e: print(f'  {m}: not importable ({type(e).__name__}: {e})')
assert sys.argv[1] == 'cpu' or torch.cuda.is_available(), 'no CUDA device visible to torch'
PYEOF
rc=0
step() {                                                            # step NAME LIMIT CMD...: run within its limit and the budget
  local name=$1 lim=$2; shift 2
  local left=$((BUDGET - (SECONDS - START))); [ "$lim" -gt "$left" ] && lim=$left
  if [ "$lim" -lt 15 ]; then echo "== $name: not run (budget spent)"; rc=1; return; fi
  echo "== $name (limit ${lim}s)"; local t=$SECONDS
  timeout "$lim" "$@" > "$OUT/$name.log" 2>&1; local r=$?
  tail -n 25 "$OUT/$name.log"; echo "== $name: exit $r in $((SECONDS - t))s"; [ $r -eq 0 ] || rc=1
}
PT=("$PY" -m pytest -q -rs -p no:cacheprovider)
step families 120 "${PT[@]}" tests/test_families.py
step layers 90 "${PT[@]}" tests/test_layers.py -k cuda
step animal 60 "${PT[@]}" tests/test_animal.py -k cuda
step bench 120 "$PY" benchmarks/bench_chunked.py --quick --repeats 3
step exact 60 "$PY" -m pavlovattn.apps.cli reproduce --exact --strict --device "$DEV" --quiet --json "$OUT/exact.json"
gpu_nbs=$(grep -l '#| gpu' nbs/*.ipynb | xargs -n1 basename | sed 's/\.ipynb$//' | paste -sd'|')
step notebooks 240 nbdev_test --timing --flags gpu --file_re "^(${gpu_nbs})\.ipynb$"
step full 600 "$PY" -m pavlovattn.apps.cli reproduce --full --device "$DEV" --json "$OUT/full.json"   # progress in full.log
echo "gpu-check: rc=$rc in $((SECONDS - START))s (budget ${BUDGET}s); logs in $OUT"; exit $rc
