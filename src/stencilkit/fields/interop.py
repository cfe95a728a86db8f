"""What a field offers the Python and NumPy ecosystems: pickling, copying, reductions, scalars.

``FieldInterop`` is a slot-less base class of :class:`stencilkit.Field`:

- **Pickling and ``copy``**: a field pickles as its domain, its values (a host copy) and the
  device it lived on; a GPU field restores on the same GPU (with CuPy), a connectivity keeps
  its codomain and skip value. ``copy.deepcopy`` copies the buffer on its own device (no host
  round trip); ``copy.copy`` gives a new field on the same memory.
- **Reductions**: ``f.sum()``, ``np.sum(f)``, ``f.max(axis=K)``, ... (NumPy's ``np.sum``,
  ``np.prod``, ``np.mean``, ``np.std``, ``np.var``, ``np.min``/``np.amin``, ``np.max``,
  ``np.any``, ``np.all`` call these methods). Over every dimension the
  result is a NumPy scalar for a CPU field and a 0-d CuPy array for a GPU field (as CuPy
  itself reduces: no device-to-host synchronisation until ``float()``); over some dimensions
  (``axis=`` an ``int``, a :class:`stencilkit.Dimension` or a tuple of them) it is a field on the
  remaining dimensions, their index ranges kept. Fields deliberately do not implement
  ``__array_function__``: other NumPy functions (``np.nansum``, ``np.allclose``, ...) read a
  CPU field through ``__array__`` as before, and xarray or dask do not mistake a field for a
  duck array of their own.
- **Scalars**: ``float(f)``, ``int(f)``, ``complex(f)`` of a 0-d field, e.g. a point
  selection ``f[I(3), K(0)]``; ``f.item()`` likewise.

>>> f = as_field([I, K], np.arange(6.0).reshape(2, 3))
>>> float(np.sum(f)), float(f.max()), float(f[I(1), K(2)])
(15.0, 5.0, 5.0)
>>> f.sum(axis=K).asnumpy()
array([ 3., 12.])
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from ..core.device import DeviceType
from ..core.dims import Dimension
from ..core.domain import Domain
from ..core.errors import BackendUnavailableError, StencilTypeError, StencilValueError
from ..core.install import install_hint


def _restore(
    domain: Domain, values: np.ndarray[Any, Any], device: tuple[int, int], extra: tuple[Any, ...]
) -> Any:
    """Rebuild a pickled field (see ``FieldInterop.__reduce__``) on the device it came from."""
    from .connectivity import Connectivity
    from .field import Field

    dev_type, dev_id = device
    if dev_type in (int(DeviceType.CPU), int(DeviceType.CPU_PINNED)):
        buffer: Any = values
    else:
        try:
            import cupy
        except ImportError:
            raise BackendUnavailableError(
                f"this field was pickled on GPU {dev_id}; restoring it needs CuPy and a GPU",
                hint=f"{install_hint('cuda')}; or pickle field.to(numpy) for a host copy",
            ) from None
        with cupy.cuda.Device(dev_id):
            buffer = cupy.asarray(values)
    if extra:
        codomain, skip_value = extra
        return Connectivity(domain, buffer, codomain, skip_value)
    return Field(domain, buffer)


class FieldInterop:
    """Pickling, copying, NumPy reductions and scalar conversion for fields (a mixin)."""

    __slots__ = ()

    _domain: Domain
    _ndarray: Any
    xp: ModuleType

    def _like(self, domain: Domain, ndarray: Any) -> Any:
        raise NotImplementedError  # Field and Connectivity define it

    # -- pickling and copying --------------------------------------------------------------
    def _reduce_extra(self) -> tuple[Any, ...]:
        """What a subclass adds to the pickled state (a connectivity: codomain, skip value)."""
        codomain = getattr(self, "_codomain", None)
        return () if codomain is None else (codomain, getattr(self, "_skip_value", None))

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        buf = self._ndarray
        if self.xp is np:
            values, device = np.asarray(buf), (int(DeviceType.CPU), 0)
        else:
            values, device = self.xp.asnumpy(buf), (int(DeviceType.CUDA), int(buf.device.id))
        return _restore, (self._domain, values, device, self._reduce_extra())

    def __copy__(self) -> Any:
        return self._like(self._domain, self._ndarray)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        # order="K": the copy keeps the buffer's layout (e.g. K-first strides), so compiled
        # programs see the same layout signature as for the original
        if self.xp is np:
            return self._like(self._domain, self._ndarray.copy(order="K"))
        with self.xp.cuda.Device(self._ndarray.device.id):
            return self._like(self._domain, self._ndarray.copy(order="K"))

    # -- reductions ----------------------------------------------------------------------------
    def _axes(self, axis: Any) -> tuple[int, ...] | None:
        """``axis=`` as buffer axes: None, an int, a Dimension, or a tuple of those."""
        if axis is None:
            return None
        dims = self._domain.dims
        result = []
        for a in axis if isinstance(axis, tuple | list) else (axis,):
            if isinstance(a, Dimension):
                if a not in dims:
                    raise StencilValueError(
                        f"cannot reduce over {a}: the field is on {self._domain}",
                        hint=f"reduce over one of {', '.join(d.value for d in dims)}",
                    )
                result.append(dims.index(a))
            elif isinstance(a, int | np.integer) and not isinstance(a, bool):
                if not -len(dims) <= int(a) < len(dims):
                    raise StencilValueError(
                        f"axis {int(a)} is out of range for a field on {self._domain}"
                    )
                result.append(int(a) % len(dims))
            else:
                raise StencilTypeError(
                    f"axis must be an int or a Dimension, got {a!r}", hint="e.g. f.sum(axis=K)"
                )
        return tuple(result)

    def _reduce(self, name: str, axis: Any = None, **kwargs: Any) -> Any:
        if kwargs.pop("out", None) is not None or kwargs.pop("keepdims", False):
            raise StencilTypeError(
                f"{name}() of a field takes no out= or keepdims=True",
                hint="reduce over the dimensions to drop; the result is a new field",
            )
        axes = self._axes(axis)
        result = getattr(self.xp, name)(self._ndarray, axis=axes, **kwargs)
        if axes is None or len(set(axes)) == self._domain.ndim:
            return result[()] if self.xp is np else result
        kept = [i for i in range(self._domain.ndim) if i not in axes]
        dom = Domain(
            dims=[self._domain.dims[i] for i in kept], ranges=[self._domain.ranges[i] for i in kept]
        )
        from .field import Field

        return Field._wrap(dom, result, self.xp)

    def sum(self, axis: Any = None, dtype: Any = None, **kwargs: Any) -> Any:
        """The sum over all dimensions, or over ``axis`` (int, Dimension or tuple).

        >>> f.sum(), f.sum(axis=K)     # a NumPy scalar (0-d CuPy array on a GPU); a field on [I]
        """
        return self._reduce("sum", axis, dtype=dtype, **kwargs)

    def prod(self, axis: Any = None, dtype: Any = None, **kwargs: Any) -> Any:
        """The product over all dimensions or over ``axis``."""
        return self._reduce("prod", axis, dtype=dtype, **kwargs)

    def mean(self, axis: Any = None, dtype: Any = None, **kwargs: Any) -> Any:
        """The mean over all dimensions or over ``axis``."""
        return self._reduce("mean", axis, dtype=dtype, **kwargs)

    def std(self, axis: Any = None, dtype: Any = None, ddof: int = 0, **kwargs: Any) -> Any:
        """The standard deviation over all dimensions or over ``axis``."""
        return self._reduce("std", axis, dtype=dtype, ddof=ddof, **kwargs)

    def var(self, axis: Any = None, dtype: Any = None, ddof: int = 0, **kwargs: Any) -> Any:
        """The variance over all dimensions or over ``axis``."""
        return self._reduce("var", axis, dtype=dtype, ddof=ddof, **kwargs)

    def min(self, axis: Any = None, **kwargs: Any) -> Any:
        """The minimum over all dimensions or over ``axis``."""
        return self._reduce("min", axis, **kwargs)

    def max(self, axis: Any = None, **kwargs: Any) -> Any:
        """The maximum over all dimensions or over ``axis``."""
        return self._reduce("max", axis, **kwargs)

    def any(self, axis: Any = None, **kwargs: Any) -> Any:
        """Whether any value is true, over all dimensions or over ``axis``."""
        return self._reduce("any", axis, **kwargs)

    def all(self, axis: Any = None, **kwargs: Any) -> Any:
        """Whether every value is true, over all dimensions or over ``axis``."""
        return self._reduce("all", axis, **kwargs)

    # -- scalars ---------------------------------------------------------------------------------
    def _scalar(self, kind: str) -> Any:
        if self._domain.ndim != 0:
            raise StencilTypeError(
                f"only a 0-d field converts to {kind}; this one is on {self._domain}",
                hint="select one point, e.g. f[I(3), K(0)], or reduce it, e.g. f.sum()",
            )
        return self._ndarray.item()

    def item(self) -> Any:
        """The value of a 0-d field (a point selection) as a Python scalar."""
        return self._scalar("a Python scalar")

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    # -- xarray ----------------------------------------------------------------------------------
    def to_xarray(
        self, name: str | None = None, *, host: bool | None = None, coords: Any = None
    ) -> Any:
        """This field as an ``xarray.DataArray`` (needs the ``xarray`` extra); see
        :func:`stencilkit.fields.xarray.to_xarray` for the dimensions, coordinates and GPU fields.

        >>> da = f.to_xarray("temperature")
        >>> da.dims, da.coords["I"].values[0]        # dimension names; index 0 of I's range
        """
        from .xarray import to_xarray

        return to_xarray(self, name, host=host, coords=coords)  # type: ignore[arg-type]

    @staticmethod
    def from_xarray(da: Any, dims: Any = None, **kwargs: Any) -> Any:
        """A field from an ``xarray.DataArray``: :func:`stencilkit.from_xarray`.

        >>> f = Field.from_xarray(da, dims=[I, K])
        """
        from .xarray import from_xarray

        return from_xarray(da, dims, **kwargs)
