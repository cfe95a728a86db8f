"""gt4py.next's experimental builtins (``from gt4py.next.ffront.experimental import concat_where``).

>>> from stencilkit.experimental import concat_where
>>> @gtx.field_operator
... def bottom(a: Field[Dims[I, K], float64]) -> Field[Dims[I, K], float64]:
...     return concat_where(K == 0, a, a(K - 1))
"""

from .frontend.builtins import concat_where

__all__ = ["concat_where"]
