"""Execute notebooks in place with the same skip rules as nbdev_test (tst_flags, eval: false, skip_exec), saving outputs.
Run the report page (11_report) on its own: claims registered by pages run earlier in the same process would show up in it."""
import sys, time
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
