"""`make test`'s notebook step: nbdev_test's own runner (`nbdev.test.test_nb` in a pool of one process per core, the
same flags, the same failure report), with the longest notebooks started first.

Why not `nbdev_test` itself: it starts the notebooks in name order, so a long page late in that order (the animal-data
page, 14) runs alone at the end while the other core idles; in a fresh-clone run on 2 cores (6 December 2026) one core
idled for 1,000 of the step's 2,264 s. Starting the long pages first (longest-processing-time order) keeps both cores busy.

    python tools/nbtest.py [--flags "gpu"] [PATH ...]
"""
import argparse, sys
from pathlib import Path
from fastcore.xtras import working_directory
from fastcore.parallel import parallel, num_cpus
from nbdev.config import get_config
from nbdev.doclinks import nbglob
from nbdev.test import test_nb, _keep_file

# the pages that take longest under `nbdev_test` (fresh-clone runs, empty caches), longest first; the rest follow in name order
LONG_FIRST = ('14_animal_data', '07_capacity', '18_pretrained', '13_trained_probes', '12_models', '09_error_propagation',
              '06b_after_rescorla_wagner', '11_report', '10_cli', '05a_time', '15_interop', '08_heads')

def ordered(files:list) -> list:
    "The notebooks, those of `LONG_FIRST` first in its order, the others after them in name order."
    rank = {n: i for i, n in enumerate(LONG_FIRST)}
    return sorted(sorted(files), key=lambda f: rank.get(Path(f).stem, len(rank)))

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--flags', default='', help="space-separated test flags to run that are normally skipped (as nbdev_test's)")
    p.add_argument('paths', nargs='*', help='notebooks (default: every notebook nbdev_test would test)')
    a = p.parse_args(argv)
    cfg = get_config()
    files = [Path(f).absolute() for f in a.paths] if a.paths else nbglob(None, as_path=True)
    files = ordered([f.absolute() for f in files if _keep_file(f, '.notest')])
    if not files: print('No files were eligible for testing'); return 0
    n = 0 if len(files) == 1 else min(num_cpus(), 8)
    with working_directory(cfg.nbs_path):
        results = parallel(test_nb, files, skip_flags=cfg.tst_flags.split(), force_flags=a.flags.split(), n_workers=n,
                           basepath=cfg.config_path, pause=0.01, do_print=True)
    passed, times = zip(*results)
    for i in sorted(range(len(files)), key=lambda i: times[i], reverse=True): print(f'{files[i].name}: {int(times[i])} secs')
    if all(passed): print('Success.'); return 0
    failed = '\n\t'.join(f.name for ok, f in zip(passed, files) if not ok)
    sys.stderr.write(f"\nnbdev Tests Failed On The Following Notebooks:\n{'=' * 50}\n\t{failed}\n")
    return 1

if __name__ == '__main__': sys.exit(main())
