__version__ = "0.1.0"

# The package lives on five floors (base, model, design, pages, apps): see the architecture page. Every module kept the
# path it had before the floors (`pavlovattn.designs`, `pavlovattn.cli`, ...) as an alias of the same module object, so
# code, pickles and checkpoints written against those paths keep working. The table below is that alias list only.
import importlib as _il, importlib.abc as _ila, importlib.util as _ilu, sys as _sys

MOVED = {'registry': 'base', 'cache': 'base', 'sweep': 'base', 'machine': 'base',
         'families': 'model', 'kernels': 'model', 'core': 'model', 'layers': 'model',
         'language': 'design', 'orders': 'design', 'designs': 'design', 'results': 'design', 'phenomena': 'design',
         'acquisition': 'pages', 'blocking': 'pages', 'competition': 'pages', 'random_orders': 'pages', 'dissociation': 'pages',
         'recovery': 'pages', 'timing': 'pages', 'beyond': 'pages', 'capacity': 'pages', 'heads': 'pages', 'propagation': 'pages',
         'battery': 'apps', 'animal': 'apps', 'interop': 'apps', 'models': 'apps', 'probes': 'apps', 'pretrained': 'apps', 'cli': 'apps'}

class _Alias(_ila.MetaPathFinder, _ila.Loader):
    "Finds `pavlovattn.<old name>` as the module `pavlovattn.<floor>.<old name>` (one object under both names)."
    def find_spec(self, name, path=None, target=None):
        pkg, _, mod = name.partition('.')
        if pkg == __name__ and mod in MOVED: return _ilu.spec_from_loader(name, self)
    def create_module(self, spec): return _il.import_module(f'{__name__}.{MOVED[spec.name.partition(".")[2]]}.{spec.name.partition(".")[2]}')
    def exec_module(self, module): pass

if not any(isinstance(f, _Alias) for f in _sys.meta_path): _sys.meta_path.append(_Alias())
