"""Execute notebooks in place with the same skip rules as nbdev_test (tst_flags, eval: false, skip_exec), saving outputs.
Each notebook runs in a process of its own, as under nbdev_test: module state set by one page (pandas display options,
claims registered from a page, matplotlib settings) must not reach the next page's outputs."""
import subprocess, sys, time
from pathlib import Path
from fastcore.script import call_parse
from fastcore.xtras import working_directory
from execnb.nbio import read_nb, write_nb
from execnb.shell import CaptureShell
from nbdev.config import get_config
from nbdev.process import NBProcessor
from nbdev.frontmatter import FrontmatterProc

@call_parse
def main(paths:str='', flags:str=''):
    cfg = get_config()
    skip = set(cfg.tst_flags.split()) - set(flags.split())
    files = [Path(p) for p in paths.split()] if paths else sorted(cfg.nbs_path.glob('[!_.]*.ipynb'))
    if len(files) > 1:
        for fn in files:
            r = subprocess.run([sys.executable, __file__, '--paths', str(fn), '--flags', flags])
            if r.returncode: sys.exit(r.returncode)
        return
    sys.path.insert(0, str(cfg.config_path))
    for fn in files:
        t = time.time(); nb = read_nb(fn)
        proc = NBProcessor(fn, procs=FrontmatterProc, process=True).nb          # parses `#|` directives and frontmatter
        fm = getattr(proc, 'frontmatter_', None) or {}
        if str(fm.get('skip_exec', '')).lower() == 'true': print(f'{fn.name}: skip_exec'); continue
        dirs = {c.idx_: (getattr(c, 'directives_', {}) or {}) for c in proc.cells}
        def _skip(cell):
            if cell.cell_type != 'code' or 'nbdev_export(' in cell.source: return True
            d = dirs.get(cell.idx_, {})
            return d.get('eval:', [''])[0].lower() == 'false' or bool(skip & d.keys())
        k = CaptureShell(fn)
        for c in nb.cells:                                   # a cell that now prints nothing must not keep its old output
            if not _skip(c): c.outputs = []
        with working_directory(fn.parent): k.run_all(nb, exc_stop=True, preproc=_skip)
        write_nb(nb, fn); print(f'{fn.name}: executed in {time.time()-t:.1f}s')
