"""Field constructors with gt4py.next 1.2.3 signatures: ``empty``, ``zeros``, ``ones``, ``full``,
``as_field`` and ``as_connectivity``.

``allocator=`` is an array namespace (``numpy``, ``cupy``), a backend, or an allocator object;
``device=`` a :class:`Device`. New buffers get the layout :func:`~stencilkit.storage.layout_for`
gives for the device and the dimension kinds, or the one ``layout=`` names (a scheme name such
as ``"vertical-contiguous"``, a ``LayoutScheme`` or a ``Layout``). ``as_field`` copies the data, as gt4py.next's
does; ``as_field(..., copy=None)`` shares the caller's memory when it already sits on the target
device with the target dtype (see ``docs/storage.md``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..core.dims import Dimension
from ..core.domain import Domain, UnitRange
from ..core.domain import domain as make_domain
from ..core.dtypes import dtype_name
from ..core.errors import StencilTypeError, StencilValueError
from ..core.tracebacks import api_boundary
from ..storage.namespaces import array_namespace
from .connectivity import Connectivity
from .field import Field
from .partials import with_fluid_partial
from .placement import (
    buffer_index,
    fill_from,
    ingest,
    layout_mismatch,
    new_buffer,
    resolve_target,
    why_copied,
)

__all__ = [
    "FieldConstructor",
    "as_connectivity",
    "as_field",
    "empty",
    "full",
    "ones",
    "resolve_target",
    "zeros",
]

#: gt4py.next's default skip value: missing neighbours in a table are marked -1.
DEFAULT_SKIP_VALUE: Final = -1


class _Detect:
    """``skip_value`` default: -1 if the table contains -1, else None (gt4py.next's rule)."""

    def __repr__(self) -> str:
        return "<detect>"


_DETECT: Final = _Detect()


def _dtype(dtype: Any) -> np.dtype[Any]:
    try:
        result: np.dtype[Any] = np.dtype(dtype_name(dtype))
        return result
    except TypeError as err:
        raise StencilTypeError(
            str(err), hint="use a stencilkit dtype, e.g. float64, float32, int32, bool"
        ) from None


def _domain(spec: Any) -> Domain:
    try:
        dom = make_domain(spec)
        dom.check_staggered()
        return dom
    except TypeError as err:
        raise StencilTypeError(str(err), hint="e.g. {I: 10, K: (0, 80)}") from None
    except ValueError as err:
        raise StencilValueError(str(err)) from None


def _new(
    domain: Any,
    dtype: Any,
    fill: Any,
    aligned_index: Any,
    allocator: Any,
    device: Any,
    layout: Any = None,
) -> Field:
    dom = _domain(domain)
    dt = _dtype(dtype)
    dev, custom = resolve_target(allocator, device, None)
    aligned = buffer_index(dom, aligned_index)
    buf = new_buffer(dom, dt, dev, custom, aligned, layout)
    if fill is not None:
        buf[...] = fill
    return Field._wrap(dom, buf, array_namespace(buf))


@with_fluid_partial
@api_boundary
def empty(
    domain: Any,
    dtype: npt.DTypeLike = np.float64,
    *,
    aligned_index: Any = None,
    allocator: Any = None,
    device: Any = None,
    layout: Any = None,
) -> Field:
    """A field of uninitialised values.

    ``domain`` is a Domain, a ``{Dim: size | (start, stop) | range}`` dict or ``(dim, range)``
    pairs. ``aligned_index`` (``{Dim: index}`` in absolute domain indices, default: the
    domain's first point) is the point whose address is aligned. ``allocator``/``device``
    choose where the buffer lives (default: CPU); ``layout`` its memory layout (default: the
    device's, see docs/storage.md), e.g. ``layout="vertical-contiguous"``.

    >>> empty({I: 10, K: 5}, np.float32).shape
    (10, 5)
    """
    return _new(domain, dtype, None, aligned_index, allocator, device, layout)


@with_fluid_partial
@api_boundary
def zeros(
    domain: Any,
    dtype: npt.DTypeLike = np.float64,
    *,
    aligned_index: Any = None,
    allocator: Any = None,
    device: Any = None,
    layout: Any = None,
) -> Field:
    """A field of zeros; arguments as for :func:`empty`."""
    return _new(domain, dtype, 0, aligned_index, allocator, device, layout)


@with_fluid_partial
@api_boundary
def ones(
    domain: Any,
    dtype: npt.DTypeLike = np.float64,
    *,
    aligned_index: Any = None,
    allocator: Any = None,
    device: Any = None,
    layout: Any = None,
) -> Field:
    """A field of ones; arguments as for :func:`empty`."""
    return _new(domain, dtype, 1, aligned_index, allocator, device, layout)


@with_fluid_partial
@api_boundary
def full(
    domain: Any,
    fill_value: Any,
    dtype: npt.DTypeLike | None = None,
    *,
    aligned_index: Any = None,
    allocator: Any = None,
    device: Any = None,
    layout: Any = None,
) -> Field:
    """A field with every point set to ``fill_value``; ``dtype`` defaults to its type.

    >>> full({I: 3}, 5).asnumpy()
    array([5, 5, 5])
    """
    if dtype is None:
        dtype = fill_value.dtype if isinstance(fill_value, np.generic) else type(fill_value)
    return _new(domain, dtype, fill_value, aligned_index, allocator, device, layout)


def _domain_for(domain_or_dims: Any, shape: tuple[int, ...], origin: Any) -> Domain:
    if isinstance(domain_or_dims, Sequence) and all(
        isinstance(d, Dimension) for d in domain_or_dims
    ):
        dims = tuple(domain_or_dims)
        if len(dims) != len(shape):
            raise StencilValueError(
                f"{len(dims)} dimensions [{', '.join(map(str, dims))}] given for data with"
                f" {len(shape)} axes (shape {shape})",
                hint="name one dimension per axis of the data",
            )
        if origin is None:
            origin = {}
        if not isinstance(origin, Mapping) or any(d not in dims for d in origin):
            raise StencilValueError(
                f"origin {origin!r} must map some of the dimensions"
                f" [{', '.join(map(str, dims))}] to indices",
                hint="e.g. origin={I: 2}: element 2 of the data gets index 0",
            )
        offsets = [int(origin.get(d, 0)) for d in dims]
        return Domain(
            dims, tuple(UnitRange(-o, n - o) for o, n in zip(offsets, shape, strict=True))
        )
    if origin:
        raise StencilValueError(
            f"origin= is only allowed with a list of dimensions, not with the domain"
            f" {domain_or_dims!r}",
            hint="give the ranges in the domain instead, e.g. {I: (-2, 8)}",
        )
    return _domain(domain_or_dims)


_NOT_GIVEN: Final = object()


@with_fluid_partial
@api_boundary
def as_field(
    domain: Any = _NOT_GIVEN,
    data: Any = _NOT_GIVEN,
    dtype: npt.DTypeLike | None = None,
    *,
    origin: Mapping[Dimension, int] | None = None,
    aligned_index: Any = None,
    allocator: Any = None,
    device: Any = None,
    copy: bool | None = True,
    domain_or_dims: Any = _NOT_GIVEN,
    layout: Any = None,
) -> Field:
    """A field holding ``data``: a NumPy/CuPy array, anything with ``__dlpack__`` or
    ``__cuda_array_interface__`` (PyTorch, JAX, ...), a nested list or a scalar.

    ``domain`` is a domain, or a list of dimensions whose ranges start at 0 (or at
    ``-origin[dim]``). Without ``allocator``/``device`` the field stays on the data's device.
    ``aligned_index`` is ``[I(1), K(0)]`` (gt4py), ``{I: 1, K: 0}`` or ``[(I, 1), (K, 0)]``.

    **Copies** the data by default, as gt4py.next does, so later changes to ``data`` do not show
    in the field. ``copy=None`` shares the memory when the data already sits on the target device
    with the target dtype and has positive element strides (and no ``aligned_index`` or
    allocator object of your own was given, and its strides are those of ``layout`` if given),
    and copies otherwise; ``copy=False`` shares it or raises. Raw arrays passed to a program are
    always used in place. ``layout``: as for :func:`empty`, for the copy.

    >>> a = np.arange(5.0)
    >>> f = as_field([I], a, origin={I: 2})                  # domain I: -2..3, a copy
    >>> g = as_field([I], a, copy=None)                       # shares a's memory
    """
    if domain is _NOT_GIVEN:
        domain = domain_or_dims  # the name stencilkit used before gt4py's ``domain``
    if domain is _NOT_GIVEN or data is _NOT_GIVEN:
        raise TypeError("as_field() needs a domain (or list of dimensions) and the data")
    dev_given, custom = resolve_target(allocator, device, None)
    source = ingest(data)
    dt = _dtype(source.dtype if dtype is None else dtype)
    dom = _domain_for(domain, tuple(source.shape), origin)
    if dom.shape != tuple(source.shape):
        raise StencilValueError(
            f"data of shape {tuple(source.shape)} does not match the domain {dom}"
            f" of shape {dom.shape}",
            hint="pass data with one element per domain point, or fix the domain",
        )
    aligned = buffer_index(dom, aligned_index)
    explicit = allocator is not None or device is not None
    target = dev_given if explicit else resolve_target(None, None, _device_of(source))[0]
    if copy is not True:
        why = (
            "an aligned_index was given"
            if aligned is not None
            else (
                "an allocator object was given"
                if custom is not None
                else why_copied(source, dt, target)
            )
        )
        if not why and layout is not None:
            why = layout_mismatch(source, dom, dt, layout)
        if not why:
            return Field._wrap(dom, source, array_namespace(source))
        if copy is False:
            raise StencilValueError(
                f"as_field(copy=False) cannot share the data's memory: {why}",
                hint="pass copy=None to copy when needed",
            )
    buf = new_buffer(dom, dt, target, custom, aligned, layout)
    fill_from(buf, source)
    return Field._wrap(dom, buf, array_namespace(buf))


def _in_place(
    dims: Sequence[Dimension], data: Any, origin: Mapping[Dimension, int] | None, writable: bool
) -> tuple[Field | None, str, Any]:
    """``data`` as a field over ``dims`` with index 0 at ``origin``, sharing its memory (read-only
    memory too unless ``writable``); or None and why it cannot be shared. Also the ingested
    array."""
    source = ingest(data)
    dom = _domain_for(list(dims), tuple(source.shape), origin)
    why = why_copied(source, source.dtype, _device_of(source), writable=writable)
    if why:
        return None, why, source
    return Field._wrap(dom, source, array_namespace(source)), "", source


def wrap_argument(dims: Sequence[Dimension], data: Any, written: bool, name: str) -> Field:
    """A raw array passed for a program's field parameter, as a field over ``dims`` from index 0,
    always sharing the array's memory: an input may be read-only (a JAX array), an output must
    be writable in place. Whatever would need a copy is refused for an output (the results
    would land in the copy) and copied for an input."""
    field, why, source = _in_place(dims, data, None, written)
    if field is not None:
        return field
    if written:
        raise StencilValueError(
            f"argument '{name}' is written by the program, but the array given for it cannot be"
            f" written in place: {why}",
            hint="pass a writable array with positive strides (e.g. numpy/cupy.ascontiguousarray)"
            " and copy the result back, or allocate the output with gtx.empty(...)",
        )
    return as_field(list(dims), source)  # a copy: the array cannot be used as it is


def share_input(
    dims: Sequence[Dimension], data: Any, origin: Mapping[Dimension, int], name: str
) -> Field:
    """An array that a stencil only reads, as a field with index 0 at ``origin``, sharing its
    memory, which may be read-only (GTScript's inputs; ``as_field(copy=False)`` would refuse
    read-only memory, since a field may be written). Never a copy: a caller that keeps the
    field for later calls must see the array's later contents."""
    field, why, _ = _in_place(dims, data, origin, False)
    if field is None:
        raise StencilValueError(
            f"argument '{name}' cannot be used in place: {why}",
            hint="pass an array with aligned elements and positive strides"
            " (e.g. numpy.ascontiguousarray(a))",
        )
    return field


def _device_of(array: Any) -> Any:
    from ..storage.namespaces import device_of

    array_namespace(array)
    return device_of(array)


@with_fluid_partial
@api_boundary
def as_connectivity(
    domain: Any = _NOT_GIVEN,
    codomain: Dimension | Any = _NOT_GIVEN,
    data: Any = _NOT_GIVEN,
    dtype: npt.DTypeLike | None = None,
    *,
    origin: Mapping[Dimension, int] | None = None,
    aligned_index: Any = None,
    allocator: Any = None,
    device: Any = None,
    skip_value: int | _Detect | None = _DETECT,
    copy: bool | None = True,
    domain_or_dims: Any = _NOT_GIVEN,
) -> Connectivity:
    """A neighbour table: ``data[e, k]`` is the ``codomain`` index of neighbour ``k`` of ``e``.

    ``skip_value`` marks missing neighbours; by default it is -1 if the table contains -1,
    else None. Other arguments as for :func:`as_field` (a copy unless ``copy=None``/``False``).

    >>> e2c = as_connectivity([Edge, E2CDim], Cell, np.array([[0, 1], [1, -1]]))
    >>> e2c.skip_value
    -1
    """
    if domain is _NOT_GIVEN:
        domain = domain_or_dims
    if domain is _NOT_GIVEN or data is _NOT_GIVEN or codomain is _NOT_GIVEN:
        raise TypeError("as_connectivity() needs a domain (or dimensions), a codomain and the data")
    if not isinstance(codomain, Dimension):
        raise StencilTypeError(
            f"the codomain of a connectivity must be a Dimension, got {codomain!r}",
            hint="e.g. as_connectivity([Edge, E2CDim], Cell, table)",
        )
    field = as_field(
        domain,
        data,
        dtype,
        origin=origin,
        aligned_index=aligned_index,
        allocator=allocator,
        device=device,
        copy=copy,
    )
    if field.dtype.kind not in "iu":
        raise StencilTypeError(
            f"a connectivity holds integer indices, got dtype {field.dtype.name}",
            hint="pass an integer table or dtype=np.int32",
        )
    if isinstance(skip_value, _Detect):
        found = bool((field.ndarray == DEFAULT_SKIP_VALUE).any())
        skip_value = DEFAULT_SKIP_VALUE if found else None
    return Connectivity(field.domain, field.ndarray, codomain, skip_value)


class FieldConstructor:
    """Constructors bound to an allocator, device, aligned index and layout (gt4py.next's
    ``FieldConstructor``): ``FieldConstructor(allocator=gtx.gpu).zeros({I: 10})``."""

    def __init__(
        self,
        allocator: Any = None,
        aligned_index: Any = None,
        device: Any = None,
        layout: Any = None,
    ) -> None:
        self.allocator = allocator
        self.aligned_index = aligned_index
        self.device = device
        self.layout = layout

    def _kw(self) -> dict[str, Any]:
        return {
            "allocator": self.allocator,
            "aligned_index": self.aligned_index,
            "device": self.device,
            "layout": self.layout,
        }

    def empty(self, domain: Any, dtype: npt.DTypeLike = np.float64) -> Field:
        """``stencilkit.empty`` with this constructor's allocator and device."""
        return empty(domain, dtype, **self._kw())

    def zeros(self, domain: Any, dtype: npt.DTypeLike = np.float64) -> Field:
        """``stencilkit.zeros`` with this constructor's allocator and device."""
        return zeros(domain, dtype, **self._kw())

    def ones(self, domain: Any, dtype: npt.DTypeLike = np.float64) -> Field:
        """``stencilkit.ones`` with this constructor's allocator and device."""
        return ones(domain, dtype, **self._kw())

    def full(self, domain: Any, fill_value: Any, dtype: npt.DTypeLike | None = None) -> Field:
        """``stencilkit.full`` with this constructor's allocator and device."""
        return full(domain, fill_value, dtype, **self._kw())

    def as_field(
        self,
        domain: Any,
        data: Any,
        dtype: npt.DTypeLike | None = None,
        origin: Mapping[Dimension, int] | None = None,
    ) -> Field:
        """``stencilkit.as_field`` with this constructor's allocator and device."""
        return as_field(domain, data, dtype, origin=origin, **self._kw())
