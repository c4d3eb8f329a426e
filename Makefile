# pavlovattn: the two README commands are `make reproduce` and `make test`.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export MPLBACKEND := Agg

.PHONY: reproduce test venv export clean-nbs docs site-check chromium katex bench gpu-check help

help:
	@echo "make reproduce   venv + every claim of the paper (reproduce-report.json) + the website in _docs/"
	@echo "make test        venv + notebook tests + pytest + sync check + website in headless Chromium"
	@echo "make docs        build the website into _docs/ (real quarto if on PATH, else the offline fallback)"
	@echo "make bench       speed benchmarks (ratios against baselines, one run)"
	@echo "make gpu-check   the short script run on a lent GPU machine"

venv: $(VENV)/.installed
$(VENV)/.installed: settings.ini setup.py
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q "torch==2.13.0"     # first: the CPU wheel, so nothing pulls a multi-GB CUDA build
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

export: venv
	$(BIN)/nbdev_export && $(BIN)/nbdev_clean

katex: tools/katex/katex.min.js
tools/katex/katex.min.js:
	tmp=$$(mktemp -d) && (cd $$tmp && npm pack -q katex@0.16.11 >/dev/null && tar xzf katex-0.16.11.tgz) && \
	  mkdir -p tools/katex && cp -r $$tmp/package/dist/{katex.min.css,katex.min.js,fonts,contrib} tools/katex/

docs: venv
	@if ! command -v quarto >/dev/null; then $(MAKE) -s katex; fi
	$(BIN)/python tools/sidebar.py
	PATH="$$PWD/tools:$$PWD/$(BIN):$$PATH" $(BIN)/nbdev_docs
	@echo "site: $$PWD/_docs/index.html"

chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

site-check: chromium
	$(BIN)/python tools/check_site.py _docs

reproduce: venv
	$(BIN)/pavlovattn reproduce --json reproduce-report.json
	$(MAKE) -s docs
	@echo "report: $$PWD/reproduce-report.json"
	@echo "site:   $$PWD/_docs/index.html"

test: venv
	PATH="$$PWD/$(BIN):$$PATH" bash tools/test_all.sh

bench: venv
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

gpu-check: venv
	PATH="$$PWD/$(BIN):$$PATH" bash tools/gpu_check.sh
