"""The house: five floors as five folders; every import (deferred ones, `importlib.import_module('pavlovattn....')` and the
command line's `_mod('floor.module')` included) points down or along a floor, and the module graph has no circle."""
import ast, importlib, re, sys
from pathlib import Path
import pytest

PKG = Path(__file__).resolve().parents[1] / 'pavlovattn'
FLOORS = ('base', 'model', 'design', 'pages', 'apps')          # bottom to top


def _modules() -> dict:
    "'floor.module' -> its file, for every module on a floor."
    return {f'{p.parent.name}.{p.stem}': p for f in FLOORS for p in sorted((PKG / f).glob('*.py')) if p.stem != '__init__'}


def _alias() -> dict:
    sys.path.insert(0, str(PKG.parent))
    import pavlovattn
    return {old: f'{floor}.{old}' for old, floor in pavlovattn.MOVED.items()}


def _edges(name:str, path:Path, mods:dict, alias:dict) -> list:
    "(target module, line) for every reference of `name`'s source to another module of the package."
    floor = name.split('.')[0]
    def resolve(dotted:str):
        parts = dotted.split('.')
        for n in (2, 1):
            cand = '.'.join(parts[:n])
            if cand in mods: return cand
            if n == 1 and cand in alias: return alias[cand]
        return None
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name[len('pavlovattn.'):] for a in node.names if a.name.startswith('pavlovattn.')]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and (node.module == 'pavlovattn' or node.module.startswith('pavlovattn.')):
                base = node.module[len('pavlovattn'):].lstrip('.')
            elif node.level == 1: base = f'{floor}.{node.module}' if node.module else floor
            elif node.level == 2: base = node.module or ''
            else: continue
            targets = [f'{base}.{a.name}'.lstrip('.') for a in node.names] + ([base] if base else [])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            s = node.value
            m = re.fullmatch(r'pavlovattn\.([a-z_]+(?:\.[a-z_]+)?)(?::\w+)?', s) or re.fullmatch(rf"((?:{'|'.join(FLOORS)})\.[a-z_]+)", s)
            if m: targets = [m.group(1)]
        for t in targets:
            r = resolve(t)
            if r is not None and r != name: out.append((r, node.lineno))
    return sorted(set(out))


def _graph():
    mods, alias = _modules(), _alias()
    return mods, {n: _edges(n, p, mods, alias) for n, p in mods.items()}


def test_every_module_lives_on_a_floor_and_nothing_else_is_beside_the_floors():
    top = sorted(p.name for p in PKG.glob('*.py'))
    assert top == ['__init__.py', '_modidx.py'], top
    assert set(_alias().values()) <= set(_modules()), 'every old path is an alias of a module on a floor'


def test_no_import_points_up_a_floor():
    mods, g = _graph()
    up = [f'{mods[a].relative_to(PKG.parent)}:{line}: {a} ({a.split(".")[0]}) imports {b} ({b.split(".")[0]})'
          for a, es in g.items() for b, line in es if FLOORS.index(b.split('.')[0]) > FLOORS.index(a.split('.')[0])]
    assert not up, '\n'.join(up)


def test_the_module_graph_has_no_circle():
    _, g = _graph()
    nxt = {a: sorted({b for b, _ in es}) for a, es in g.items()}
    state, path = {}, []
    def visit(a):
        state[a] = 1; path.append(a)
        for b in nxt[a]:
            if state.get(b) == 1: raise AssertionError('circle: ' + ' -> '.join(path[path.index(b):] + [b]))
            if b not in state: visit(b)
        state[a] = 2; path.pop()
    for a in sorted(nxt):
        if a not in state: visit(a)


def test_the_check_sees_a_deferred_upward_import(tmp_path):
    "The walk is not blind: a deferred import, an `import_module` string and a `_mod` name pointing up are all found."
    mods, alias = _modules(), _alias()
    src = tmp_path / 'x.py'
    src.write_text("def f():\n    import pavlovattn.apps.models\n    importlib.import_module('pavlovattn.probes')\n    _mod('apps.sweep')\n    from ..apps import battery\n")
    found = {b for b, _ in _edges('base.cache', src, mods, alias)}
    assert {'apps.models', 'apps.probes', 'apps.battery'} <= found, found


def test_old_paths_are_the_same_module_objects():
    import pavlovattn
    for old, floor in pavlovattn.MOVED.items():
        if old == 'cli': continue
        assert importlib.import_module(f'pavlovattn.{old}') is importlib.import_module(f'pavlovattn.{floor}.{old}')
    from pavlovattn.designs import simulate
    from pavlovattn.design.designs import simulate as s2
    assert simulate is s2


def test_export_cells_are_small():
    "Sizes (issue 45): no export cell of any page over 80 lines (the pages are read as tutorials: a definition, prose, a small test)."
    import json
    big = [(p.name, n) for p in sorted((PKG.parent / 'nbs').glob('*.ipynb'))
           for c in json.loads(p.read_text())['cells'] if c['cell_type'] == 'code'
           for n in [len(''.join(c['source']).splitlines())] if ''.join(c['source']).startswith('#| export') and n > 80]
    assert not big, big
