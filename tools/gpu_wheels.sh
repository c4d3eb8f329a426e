#!/usr/bin/env bash
# Fetch, here (where the package registry is reachable), the wheels that `make gpu-check` installs on the lent GPU
# machine, which reaches no registry. Its image already holds torch, numpy, pandas, matplotlib, tqdm, numba, pytest,
# hypothesis, einops, triton, PyYAML, packaging, setuptools, pygments and psutil; what our notebooks and tests need
# beyond those is below, pinned to the versions this project is tested with (settings.ini: nbdev==2.4.14, fastcore<2,
# execnb<0.2), plus fla-core for algorithm='kernel'. Pure-Python wheels (two are manylinux x86-64), about 11 MB in all.
# Usage: bash tools/gpu_wheels.sh   (or make gpu-wheels); the machine's Python is 3.12.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
mkdir -p .whl
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
  nbdev==2.4.14 fastcore==1.14.5 execnb==0.1.18 ghapi==2.0.3 fastgit==0.1.4 fastspec==0.1.0 astunparse==1.6.3 \
  watchdog==7.1.0 asttokens==3.0.2 ipython==9.18.1 ipython_pygments_lexers==1.1.1 jedi==0.20.1 parso==0.8.7 \
  prompt_toolkit==3.0.53 pexpect==4.9.0 ptyprocess==0.7.0 wcwidth==0.9.4 stack_data==0.6.3 executing==2.3.0 \
  pure_eval==0.2.4 traitlets==5.16.1 matplotlib-inline==0.2.2 ipywidgets==8.1.9 widgetsnbextension==4.0.16 \
  jupyterlab_widgets==3.0.17 comm==0.2.3 fla-core==0.6.0 2> >(grep -v "^WARNING: Location" >&2)
ls .whl | wc -l | xargs echo "gpu-wheels: wheels in .whl/:"; du -sh .whl
