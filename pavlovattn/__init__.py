__version__ = "0.1.0"
from .cache import numba_cache as _numba_cache
_numba_cache()   # numba's compiled kernels under the package's one cache folder, set before any of its modules imports numba
