# pavlovattn: the two README commands are `make reproduce` and `make test`.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export MPLBACKEND := Agg

.PHONY: reproduce test venv venv-test export clean-nbs docs docs-prereqs serve site-check chromium katex bench gpu-check gpu-wheels help

help:
	@echo "make reproduce   venv (.[docs]) + the website in _docs/ + every claim that trains no model (reproduce-report.json); TIER=trained or TIER=full for more"
	@echo "make test        venv (.[docs,test,interop,fla]) + notebook tests + pytest + sync check + website in headless Chromium"
	@echo "make docs        build the website into _docs/ (real quarto if on PATH, else the offline fallback, which needs npm once)"
	@echo "make serve       serve _docs/ on http://localhost:8000/ (search works there, not from file://)"
	@echo "make bench       speed benchmarks (ratios against baselines, one run)"
	@echo "make gpu-wheels  fetch (here) the wheels gpu-check installs offline on a lent GPU machine, into .whl/"
	@echo "make gpu-check   the short check run there: the image's python3 plus the carried .whl/ (no venv, no registry)"

# What each command installs (settings.ini's extras, which setup.py reads): `make reproduce`, `make docs` and `make bench`
# the package with its runtime and the docs toolchain (.[docs]); `make test` also the test, interop and fla extras
# (.[docs,test,interop,fla]): the fla extra (flash-linear-attention and Triton, ~1 GB) because the tests compare the
# package's layers with fla's pure-torch references on the CPU (tests/test_fla_layers.py, tests/test_pretrained.py), a
# peer check that must run in CI; `make reproduce` never installs it. Each step says what it installs and how long it took
# the last time (on this machine, else as nbs/install_times.json measured it). tools/install.py installs: torch first (its
# CPU build where PyTorch's CPU index answers within 5 s; a plain `pip install torch` on Linux pulls several GB of NVIDIA
# wheels), then the package, with uv where pip can install it (parallel: about 25 s against 2 min with pip here), else pip;
# the installer's output goes to .venv/pip.log, named in one line if it fails.
# Bytecode: Python compiles each module the first time it is imported and keeps it in __pycache__/, unless
# PYTHONDONTWRITEBYTECODE is set, as on this machine, where every process then compiled torch again: the make commands
# lift it for what they run (compiling the whole environment up front instead took 40 s for 17,500 files, of which the
# checks import about 2,500).
unexport PYTHONDONTWRITEBYTECODE
TEST_EXTRAS := docs,test,interop,fla

venv: $(VENV)/.installed-docs
venv-test: $(VENV)/.installed-$(TEST_EXTRAS)
$(VENV)/.installed-%: settings.ini setup.py tools/install.py
	@$(PY) tools/time_install.py --note "$*" $(VENV)
	@$(PY) tools/install.py $(VENV) "$*"

export: venv
	$(BIN)/nbdev_export && $(BIN)/nbdev_clean

# Without quarto the docs build renders math with KaTeX, fetched once with npm into tools/katex/. A machine with neither
# quarto nor npm (nor that copy) is told so in one line before anything runs (`make reproduce` checks first, not after its run).
HAVE_KATEX = $(or $(shell command -v quarto),$(wildcard tools/katex/katex.min.js),$(shell command -v npm))
NEED_NPM = $(if $(HAVE_KATEX),,$(error the offline docs build needs npm (Node.js) once, to fetch KaTeX for the math: install it (Debian: apt-get install npm) or put quarto on PATH, then run make again))

docs-prereqs:
	@:$(NEED_NPM)

katex: tools/katex/katex.min.js
tools/katex/katex.min.js:
	@:$(NEED_NPM)
	@echo "== docs: fetching KaTeX 0.16.11 with npm into tools/katex/ (math on the offline site; once)"
	@tmp=$$(mktemp -d) && (cd $$tmp && npm pack -q katex@0.16.11 >/dev/null && tar xzf katex-0.16.11.tgz) && \
	  mkdir -p tools/katex && cp -r $$tmp/package/dist/{katex.min.css,katex.min.js,fonts,contrib} tools/katex/

docs: docs-prereqs venv
	@if ! command -v quarto >/dev/null; then $(MAKE) -s katex; fi
	@$(BIN)/python tools/sidebar.py
	@echo "== docs: building the website into _docs/ (executes the pages' import cells)"
	@PATH="$$PWD/tools:$$PWD/$(BIN):$$PATH" $(BIN)/nbdev_docs
	@echo "site: $$PWD/_docs/index.html  (make serve: http://localhost:8000/, where search works)"

serve:
	@:$(if $(wildcard _docs/index.html),,$(error no site in _docs/ yet: build it with make docs (or make reproduce), then make serve))
	@$(PY) tools/serve.py _docs

chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

site-check: chromium
	$(BIN)/python tools/check_site.py _docs

# Tiers: `make reproduce` runs every claim that trains no model (its measured cost is printed before it starts);
# TIER=trained adds the trained-model claims (233 small models from an empty cache, one worker process per core: the runs
# recorded in nbs/reproduce_times.json give the time on an idle 2-core machine), TIER=full runs everything at the
# GPU-sized settings. The site is built first (it does not depend on the run) and the report is rewritten after every
# claim, so a stopped run leaves the site and a partial report (its rows not run say so).
TIER ?= default
REPRODUCE_FLAGS = $(if $(filter trained,$(TIER)),--trained)$(if $(filter full,$(TIER)),--full)
reproduce: docs-prereqs venv
	@:$(if $(filter default trained full,$(TIER)),,$(error TIER must be default, trained or full; got $(TIER)))
	@echo "== reproduce 1/2: the website into _docs/ (15 s with the offline builder in the run recorded in nbs/reproduce_times.json)"
	@$(MAKE) -s docs
	@echo "== reproduce 2/2: the claims ($(TIER) tier; reproduce-report.json is rewritten after every claim)"
	$(BIN)/pavlovattn reproduce $(REPRODUCE_FLAGS) --json reproduce-report.json
	@echo "report: $$PWD/reproduce-report.json"
	@echo "site:   $$PWD/_docs/index.html  (make serve: http://localhost:8000/, where search works)"

test: venv-test
	PATH="$$PWD/$(BIN):$$PATH" bash tools/test_all.sh

bench: venv
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

gpu-wheels:
	bash tools/gpu_wheels.sh

gpu-check:
	bash tools/gpu_check.sh
