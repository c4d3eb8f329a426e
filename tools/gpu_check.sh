#!/usr/bin/env bash
# The short check run once on a lent GPU machine (`make gpu-check`): GPU-flagged notebook cells,
# the exact claims on cuda, and a float64 CPU-vs-GPU parity of the core recurrences.
set -uo pipefail
cd "$(dirname "$0")/.."
python -c "import torch; assert torch.cuda.is_available(), 'no CUDA device visible to torch'; print(torch.cuda.get_device_name(0))" || exit 1
rc=0
nbdev_test --flags gpu || rc=1                      # every notebook, GPU cells included
python -m pytest -q -rs -p no:cacheprovider tests/test_families.py tests/test_layers.py || rc=1   # chunked = loop on CUDA; fla kernels when installed
python -m pytest -q -rs -p no:cacheprovider tests/test_animal.py -k cuda || rc=1   # scoring and fitting on CUDA = CPU
python benchmarks/bench_chunked.py --quick --repeats 3 | tee "${OUT:-.}/bench-chunked-gpu.txt" || rc=1
pavlovattn reproduce --exact --strict --device cuda --quiet --json "${OUT:-.}/gpu-exact.json" || rc=1
timeout 500 pavlovattn reproduce --full --device cuda --quiet --json "${OUT:-.}/gpu-full.json" || rc=1
echo "gpu-check: rc=$rc"; exit $rc
