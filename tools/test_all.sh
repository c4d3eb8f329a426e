#!/usr/bin/env bash
# Everything `make test` checks; the last line is "N passed, M failed" over all checks:
# library/notebook sync (1), each notebook (nbdev_test), each pytest test, each page of the built site, README.md as the
# docs build writes it (1).
set -uo pipefail
cd "$(dirname "$0")/.."
P=0; F=0
add() { P=$((P + $1)); F=$((F + $2)); }
# The checks start several hundred Python processes (nbdev_test's, pytest's workers, the command-line tests). Where the
# environment forbids bytecode caches (PYTHONDONTWRITEBYTECODE=1 on this machine), each of them compiled the package's
# 14,000 lines again (0.3-0.4 s a process): here they are compiled once and cached in __pycache__/ (ignored by git).
unset PYTHONDONTWRITEBYTECODE
# Parallelism comes from processes here (two nbdev_test workers beside the animal page's process, one pytest worker per
# core): each process computes on one thread, as torch would otherwise start a thread per core in every process, and
# OpenMP threads that outnumber the cores wait on each other (on 2 cores: the notebooks 183 -> 150 s, pytest 347 ->
# 264 s with a warm cache). Tests that check results across thread counts set the counts themselves.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
python -m compileall -q -j 0 pavlovattn >/dev/null 2>&1 || true

echo "== sync: nbdev_export && nbdev_clean leave the tree unchanged"
before=$(git status --porcelain 2>/dev/null)
nbdev_export && nbdev_clean
after=$(git status --porcelain 2>/dev/null)
if [[ "$before" == "$after" ]]; then add 1 0; echo "sync: ok"
else add 0 1; echo "sync: FAILED: nbdev_export/nbdev_clean changed files (commit the result):"; diff <(echo "$before") <(echo "$after") | head -20; fi

echo "== notebooks: nbdev_test (the animal-data page in a process of its own beside the others)"
# GPU cells run everywhere, as Jupyter's Run All runs them: without CUDA each prints one line and skips itself.
flags="gpu"
total=$(find nbs -name '*.ipynb' -not -path '*/.*' -not -path '*/_*' | wc -l)
# The animal-data page takes about 40% of the notebooks' time (182 of 416 s in a fresh-clone run, 6 December 2026): in
# name order it started late and ran alone at the end while the other core idled. It runs from the start, beside
# nbdev_test's pool for the others, which keeps its name order and so which pages share a process (a page can see what
# an earlier page in its process registered).
solo="14_animal_data.ipynb"
log=$(mktemp); slog=$(mktemp)
nbdev_test --path "nbs/$solo" --flags "$flags" --do_print --timing 2>"$slog" & spid=$!
nbf=0
if ! nbdev_test --flags "$flags" --do_print --timing --skip_file_re "^([_.]|${solo%.ipynb})" 2>"$log"; then
  n=$(sed -n '/Failed On The Following Notebooks/,$p' "$log" | grep -c $'^\t' || true); [[ "$n" -gt 0 ]] || n=1; nbf=$((nbf + n)); fi
if ! wait $spid; then nbf=$((nbf + 1)); fi
cat "$log" "$slog" >&2
echo "notebooks: $((total - nbf)) passed, $nbf failed"; add $((total - nbf)) $nbf

echo "== pytest tests/"
# pytest's own progress line by line as it runs (one dot per test, a percentage per line), kept for the count below
plog=$(mktemp)
# one worker process per core (at most 4), each test file in one worker (--dist loadfile: a file's tests share its fixtures)
# (the cores, not OMP_NUM_THREADS: GNU nproc answers that variable, set to 1 above, which ran pytest on one worker)
workers=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 1); (( workers > 4 )) && workers=4
python -m pytest -q -p no:cacheprovider -n "$workers" --dist loadfile tests 2>&1 | tee "$plog"; rc=${PIPESTATUS[0]}; out=$(tail -40 "$plog")
pp=$(echo "$out" | grep -Eo '[0-9]+ passed' | tail -1 | grep -Eo '[0-9]+' || echo 0)
pf=$(echo "$out" | grep -Eo '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
[[ -n "$pf" ]] || pf=0
if [[ $rc -ne 0 && $pf -eq 0 ]]; then pf=1; fi
echo "pytest: $pp passed, $pf failed"; add $pp $pf

echo "== website: build and open every page in headless Chromium"
make -s docs >/dev/null 2>"$log" || { cat "$log" >&2; echo "docs build FAILED"; }
make -s chromium
if [[ -d _docs ]] && out=$(python tools/check_site.py _docs); then :; fi
echo "$out" | grep -v '^ok ' 
sp=$(echo "$out" | tail -1 | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+' || echo 0)
sf=$(echo "$out" | tail -1 | grep -Eo '[0-9]+ failed' | grep -Eo '[0-9]+' || echo 1)
add $sp $sf
# The docs build writes README.md from nbs/index.ipynb (settings.ini's readme_nb): an edit made to README.md alone is undone
# there, and a `make reproduce` of the commit reports its tree changed.
if git diff --quiet -- README.md; then add 1 0; echo "readme: ok (README.md is what nbs/index.ipynb makes)"
else add 0 1; echo "readme: FAILED: the docs build changed README.md: edit nbs/index.ipynb, run make docs, commit both"; git diff --stat -- README.md; fi

echo "$P passed, $F failed"
[[ $F -eq 0 ]]
