"""gt4py.next's experimental builtins (``from gt4py.next.ffront.experimental import concat_where``).

>>> from stencilkit.experimental import as_offset, concat_where
>>> @gtx.field_operator
... def bottom(a: Field[Dims[I, K], float64]) -> Field[Dims[I, K], float64]:
...     return concat_where(K == 0, a, a(K - 1))
>>> @gtx.field_operator
... def gather(a: Field[Dims[I, K], float64], k: Field[Dims[I, K], int32]) -> Field[Dims[I, K], float64]:
...     return a(as_offset(Koff, k))  # a[i, k + k_field[i, k]]
"""

from ...next.builtins import as_offset, concat_where

__all__ = ["as_offset", "concat_where"]
