"""``Field``: a buffer (NumPy or CuPy array) tagged with a domain, i.e. named, indexed axes."""

from __future__ import annotations

import itertools
import operator
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from ..core.device import Device, DeviceType
from ..core.dims import Dimension, Dims, NamedIndex, dims_of_annotation, is_dimension_class
from ..core.domain import Domain, NamedRange
from ..core.domain import domain as make_domain
from ..core.dtypes import dtype_name
from ..core.errors import StencilTypeError, StencilValueError
from ..storage.namespaces import array_namespace, device_of, to_host
from .broadcast import absolute_index, result_domain, view_on
from .interop import FieldInterop
from .signature import FieldSignature

_SCALARS = (int, float, bool, np.generic)


def _is_relative(key: Any) -> bool:
    """``f[1:]``, ``f[3]``, ``f[1:-1, ...]``: slices, integers and ``...`` address buffer positions."""

    def one(k: Any) -> bool:
        return (
            k is Ellipsis
            or isinstance(k, slice)
            or (isinstance(k, int | np.integer) and not isinstance(k, bool))
        )

    return one(key) or (isinstance(key, tuple) and all(one(k) for k in key))


_LAZY = frozenset({"signature", "signature_key", "address", "_device"})


#: A small integer per distinct field signature (see ``Field.signature_key``): one per layout in use.
_SIGNATURES: dict[FieldSignature, int] = {}
_TOKENS = itertools.count()


class Field(FieldInterop):
    """Values on a domain: ``.domain`` names and indexes the axes of the buffer ``.ndarray``.

    Fields combine by dimension *names*: ``a + b`` with ``a`` on ``[I, K]`` and ``b`` on
    ``[K]`` is a field on ``[I, K]`` covering the intersection of both domains. Selecting
    ``f[{I: (1, 5)}]`` uses absolute domain indices and shares memory with ``f``.

    >>> f = as_field([I, K], np.arange(6.0).reshape(2, 3))
    >>> (f + 1.0).asnumpy()[1, 2]
    6.0

    As an annotation, ``Field[Dims[I, J], float64]`` (or ``Field[[I, J], float64]``) is a
    typing generic alias: ``Field[Dims[I, K], T]`` with a ``TypeVar`` ``T`` can be
    subscripted later (``IKField[float64]``).
    """

    __stencilkit_field_annotation__ = True

    __slots__ = ("_device", "_domain", "_ndarray", "address", "signature", "signature_key", "xp")

    _domain: Domain
    _ndarray: Any
    xp: ModuleType
    #: What the engine reads of a field (docs/storage.md, "the field protocol"), each computed
    #: on first access: the layout compiled code is specialized on (fields/signature.py) ...
    signature: FieldSignature
    #: ... a small integer equal for fields of equal signatures (the per-call plan key) ...
    signature_key: int
    #: ... and the address of ``buffer[0, ..., 0]`` (a host or device pointer).
    address: int
    _device: Device

    def __init__(self, domain: Any, ndarray: Any) -> None:
        dom = make_domain(domain)
        xp = array_namespace(ndarray)
        if tuple(ndarray.shape) != dom.shape:
            raise StencilValueError(
                f"buffer of shape {tuple(ndarray.shape)} does not match the domain {dom}"
                f" of shape {dom.shape}"
            )
        try:
            dtype_name(ndarray.dtype)
        except TypeError as err:
            raise StencilTypeError(str(err)) from None
        self._domain = dom
        self._ndarray = ndarray
        self.xp = xp

    @classmethod
    def _wrap(cls, domain: Domain, ndarray: Any, xp: ModuleType) -> Field:
        """Fast, unchecked construction for internal use: shapes are known to agree."""
        field = object.__new__(Field)
        field._domain = domain
        field._ndarray = ndarray
        field.xp = xp
        return field

    def _like(self, domain: Domain, ndarray: Any) -> Field:
        """A field of the same kind as ``self`` on another view of its memory."""
        return Field._wrap(domain, ndarray, self.xp)

    # -- fast-path attributes for compiled backends, computed on first access ---------------
    def __getattr__(self, name: str) -> Any:
        if name not in _LAZY:
            if name == "__cuda_array_interface__":
                raise AttributeError("a CPU field has no __cuda_array_interface__")
            if name == "__array_interface__":
                raise AttributeError("a GPU field has no __array_interface__; use .asnumpy()")
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        buf = self._ndarray
        if name == "_device":
            value: Any = device_of(buf)
        elif name == "address":
            value = int(buf.__array_interface__["data"][0]) if self.xp is np else int(buf.data.ptr)
        elif name == "signature_key":
            # next() on a counter is atomic: threads never give two signatures one key
            value = _SIGNATURES.setdefault(self.signature, next(_TOKENS))
        else:
            itemsize = buf.dtype.itemsize
            dev = self.device
            value = FieldSignature(
                tuple(d.value for d in self._domain.dims),
                buf.dtype.name,
                tuple(buf.shape),
                tuple(s // itemsize for s in buf.strides),
                self._domain.origin,
                DeviceType(int(dev.device_type)),
                dev.device_id,
            )
        setattr(self, name, value)
        return value

    # -- basic properties ------------------------------------------------------------------
    @property
    def domain(self) -> Domain:
        """The field's domain, its dimensions and their index ranges."""
        return self._domain

    @property
    def dims(self) -> tuple[Dimension, ...]:
        """The field's dimensions, in order."""
        dims: tuple[Dimension, ...] = self._domain.dims
        return dims

    @property
    def __gt_domain__(self) -> Domain:
        return self._domain

    @property
    def __gt_dims__(self) -> tuple[Dimension, ...]:
        return self.dims

    @property
    def __gt_origin__(self) -> tuple[int, ...]:
        """The buffer position of index 0 along each dimension (gt4py's ``__gt_origin__``)."""
        return tuple(-r.start for r in self._domain.ranges)

    @property
    def ndarray(self) -> Any:
        """The buffer, a ``numpy.ndarray`` or ``cupy.ndarray`` whose axes follow ``domain.dims``."""
        return self._ndarray

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type (a NumPy dtype)."""
        dtype: np.dtype[Any] = self._ndarray.dtype
        return dtype

    @property
    def array_ns(self) -> ModuleType:
        """The array namespace of the buffer (``numpy`` or ``cupy``), gt4py's ``array_ns``:
        ``f.array_ns.sum(f.ndarray)`` works on either device."""
        return self.xp

    def as_scalar(self) -> Any:
        """The value of a 0-d field as a NumPy scalar of its dtype (copied to the host from a
        GPU); gt4py's ``as_scalar``. ``ValueError`` for a field with dimensions.

        >>> as_field([], np.array(2.5)).as_scalar()
        np.float64(2.5)
        """
        if self.ndim != 0:
            raise StencilValueError(
                f"'as_scalar' is only valid on 0-dimensional 'Field's, got a"
                f" {self.ndim}-dimensional 'Field'.",
                hint="select one point first, e.g. f["
                + ", ".join(f"{d}(0)" for d in self._domain.dims)
                + "].as_scalar(), or take all values with f.asnumpy()",
            )
        return self.asnumpy()[()]

    @property
    def device(self) -> Device:
        """Where the buffer lives, ``Device(CPU, 0)`` or ``Device(CUDA, n)``."""
        return self._device

    @property
    def shape(self) -> tuple[int, ...]:
        """The buffer's shape."""
        return tuple(self._ndarray.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._domain.dims)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._domain}, {self.dtype.name}, {self.device})"

    def __class_getitem__(cls, item: Any) -> Any:
        """``Field[Dims[I, J], float64]``: a typing generic alias, as in gt4py.next, so type
        variables substitute later (``Field[Dims[I, K], T][float64]``) and ``| None`` works.
        The frontend turns it into a :class:`~stencilkit.core.types.FieldType`."""
        if not isinstance(item, tuple) or len(item) != 2:
            raise StencilTypeError(
                f"Field[{item!r}] is not a field type",
                hint="write Field[Dims[I, J], float64] or Field[[I, J], float64]",
            )
        dims, dtype = item
        generic = typing.get_origin(dims) is Dims or isinstance(dims, typing.TypeVar)  # type: ignore[comparison-overlap]  # dims is an annotation object; mypy reads the name as the ParamSpec of Dims
        for d in () if generic else dims_of_annotation(dims):
            if not (isinstance(d, Dimension | typing.TypeVar) or is_dimension_class(d)):
                raise StencilTypeError(
                    f"Field[...] dimensions must be Dimension objects, got {d!r}",
                    hint="write Field[Dims[I, J], float64]",
                )
            if dims.count(d) > 1:
                raise StencilTypeError(
                    f"Field[...] lists dimension {d} twice; a field has each dimension once"
                )
        if not generic:
            dims = Dims[dims_of_annotation(dims)]  # type: ignore[misc]  # Dims is variadic at run time (__class_getitem__); mypy sees a plain class
        if isinstance(dtype, typing.TypeVar):
            pass
        elif _is_union(
            dtype
        ):  # Field[..., float64 | int32]: gt4py accepts it in Python annotations
            for member in typing.get_args(dtype):
                _scalar_or_typevar(member)
        else:
            try:
                dtype = np.dtype(dtype_name(dtype)).type
            except TypeError as err:
                raise StencilTypeError(str(err), hint="e.g. Field[Dims[I], float64]") from None
        return types.GenericAlias(cls, (dims, dtype))

    # -- interchange -------------------------------------------------------------------------
    def asnumpy(self) -> np.ndarray[Any, Any]:
        """The values as a NumPy array: a view on the CPU, a copy to the host from a GPU."""
        if self.xp is np:
            return np.asarray(self._ndarray)
        return to_host(self._ndarray, max_spread=2.0)  # no CuPy kernel for a dense view

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        if self.xp is not np:
            raise StencilTypeError(
                f"this field lives on {self.device}; NumPy cannot read GPU memory",
                hint="use field.asnumpy() to copy it to the host",
            )
        if copy:
            return np.array(self._ndarray, dtype=dtype, copy=True)
        return np.asarray(self._ndarray, dtype=dtype)

    @property
    def __array_interface__(self) -> dict[str, Any]:
        if self.xp is not np:
            raise AttributeError("a GPU field has no __array_interface__; use .asnumpy()")
        interface: dict[str, Any] = self._ndarray.__array_interface__
        return interface

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if self.xp is np:
            raise AttributeError("a CPU field has no __cuda_array_interface__")
        interface: dict[str, Any] = self._ndarray.__cuda_array_interface__
        return interface

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._ndarray.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        dev_type, dev_id = self._ndarray.__dlpack_device__()
        return int(dev_type), int(dev_id)

    def to(self, device: Device | tuple[DeviceType | int, int] | Any) -> Field:
        """This field on another device (a copy), or ``self`` if it is there already.

        ``device`` is a :class:`Device`, a ``(DeviceType, id)`` pair, or an allocator such as
        ``numpy``, ``cupy`` or a backend.

        >>> g = f.to(Device(DeviceType.CUDA, 0))   # host -> GPU 0
        """
        from .constructors import as_field, resolve_target

        target, _ = (
            resolve_target(None, device, None)
            if isinstance(device, Device | tuple)
            else resolve_target(device, None, None)
        )
        if target == self.device:
            return self
        return as_field(self._domain, self, device=target)

    # -- selection ---------------------------------------------------------------------------
    def _selection(self, key: Any) -> tuple[tuple[slice | int, ...], Domain]:
        """Absolute selections (a Domain, ``{I: (1, 5)}``, ``X(5)``, NamedRanges) or relative
        ones (``f[1:]``, ``f[3]``, ``f[1:-1, :]``, ``...``) -> buffer index and result domain."""
        if isinstance(key, Domain):
            key = dict(key.items())
        elif isinstance(key, NamedIndex | NamedRange):
            key = self._absolute((key,))
        elif _is_relative(key):
            key = self._relative(key if isinstance(key, tuple) else (key,))
        elif (
            isinstance(key, tuple)
            and key
            and all(isinstance(k, NamedIndex | NamedRange) for k in key)
        ):
            key = self._absolute(key)
        elif isinstance(key, Sequence) and all(
            isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], Dimension) for p in key
        ):
            key = dict(key)
        if not isinstance(key, Mapping):
            raise StencilTypeError(
                f"cannot index a field with {key!r}",
                hint="relative positions f[1:, 2], absolute indices f[I(3)], f[{I: (1, 5)}] or f[domain]",
            )
        return absolute_index(self._domain, dict(key))

    def _absolute(self, keys: tuple[Any, ...]) -> dict[Dimension, Any]:
        return {k.dim: (k.value if isinstance(k, NamedIndex) else k.unit_range) for k in keys}

    def _relative(self, keys: tuple[Any, ...]) -> dict[Dimension, Any]:
        """Relative positions along the dimensions in order (as NumPy indexes the buffer)."""
        if sum(k is Ellipsis for k in keys) > 1:
            raise StencilTypeError("a field index can hold one '...' only")
        if Ellipsis in keys:
            i = keys.index(Ellipsis)
            keys = keys[:i] + (slice(None),) * (self.ndim - len(keys) + 1) + keys[i + 1 :]
        if len(keys) > self.ndim:
            raise StencilValueError(
                f"{len(keys)} indices for a field over {self.ndim} dimension(s) {self._domain}"
            )
        result: dict[Dimension, Any] = {}
        for dim, rng, k in zip(self._domain.dims, self._domain.ranges, keys):
            if isinstance(k, slice):
                if k.step not in (None, 1):
                    raise StencilValueError("fields can only be sliced with step 1")
                result[dim] = rng[k]
            else:
                if not -len(rng) <= int(k) < len(rng):
                    raise StencilValueError(
                        f"index {int(k)} is out of range for {dim}: {rng} (relative positions)"
                    )
                result[dim] = rng[int(k)]
        return result

    def __getitem__(self, key: Any) -> Field:
        index, dom = self._selection(key)
        return self._like(dom, self._ndarray[index])

    def __setitem__(self, key: Any, value: Any) -> None:
        index, dom = self._selection(key)
        if isinstance(value, Field):
            self._check_device(value)
            if not set(value.dims) <= set(dom.dims) or any(
                dom.range_of(d) not in r for d, r in value.domain.items()
            ):
                raise StencilValueError(
                    f"cannot assign a field on {value.domain} to the region {dom}",
                    hint="the value must cover the region, on a subset of its dimensions",
                )
            value = view_on(value.ndarray, value.domain, result_domain([dom, value.domain]))
        self._ndarray[index] = value

    # -- element-wise operations, broadcasting by dimension names ----------------------------
    def _check_device(self, other: Field) -> None:
        if other.xp is not self.xp or other.device != self.device:
            raise StencilValueError(
                f"cannot combine a field on {self.device} with a field on {other.device}",
                hint="move one of them first, e.g. b.to(a.device)",
            )

    def _apply(self, fn: Callable[..., Any], *args: Any) -> Field:
        fields = [a for a in args if isinstance(a, Field)]
        if any(isinstance(a, np.ndarray) and a.ndim > 0 for a in args):
            # ``field == array``: arrays, as gt4py's fields give (NumPy reads them as arrays)
            return fn(*(a.asnumpy() if isinstance(a, Field) else a for a in args))  # type: ignore[no-any-return]
        for a in args:
            if not isinstance(a, (Field, *_SCALARS)) and not (
                getattr(a, "ndim", None) == 0 and hasattr(a, "dtype")
            ):
                raise StencilTypeError(
                    f"cannot combine a field with a {type(a).__name__}",
                    hint="wrap arrays as fields first: as_field([I, J], array)",
                )
        if len(fields) == 1:
            dom = fields[0]._domain
            raw = [a._ndarray if isinstance(a, Field) else a for a in args]
        else:
            for f in fields:
                self._check_device(f)
            dom = result_domain([f._domain for f in fields])
            raw = [view_on(a._ndarray, a._domain, dom) if isinstance(a, Field) else a for a in args]
        out = fn(*raw)
        if getattr(out, "ndim", -1) != dom.ndim:
            out = self.xp.asarray(out)
            if out.shape != dom.shape:
                out = self.xp.broadcast_to(out, dom.shape).copy()
        return Field._wrap(dom, out, self.xp)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        # Lets NumPy ufuncs (np.sin(f), np.float64(2) * f) return fields instead of arrays.
        if method != "__call__" or "out" in kwargs:
            return NotImplemented
        if any(isinstance(a, np.ndarray) and a.ndim > 0 for a in inputs):
            # an array with a field (``array == field``): arrays, as NumPy makes of gt4py's fields
            # (their __array__); the field's values in its own index order
            return ufunc(*(a.asnumpy() if isinstance(a, Field) else a for a in inputs), **kwargs)
        return self._apply(lambda *a: ufunc(*a, **kwargs), *inputs)

    def __bool__(self) -> bool:
        if self._domain.ndim == 0:  # a point selection f[I(3)] > 0: one value, not ambiguous
            return bool(self._ndarray.item())
        raise StencilTypeError(
            "the truth value of a field is ambiguous",
            hint="reduce it explicitly: bool(f.any()) or bool(f.all())",
        )

    # Python operators, each broadcasting by dimension names.
    def __add__(self, other: Any) -> Field:
        return self._apply(operator.add, self, other)

    def __radd__(self, other: Any) -> Field:
        return self._apply(operator.add, other, self)

    def __sub__(self, other: Any) -> Field:
        return self._apply(operator.sub, self, other)

    def __rsub__(self, other: Any) -> Field:
        return self._apply(operator.sub, other, self)

    def __mul__(self, other: Any) -> Field:
        return self._apply(operator.mul, self, other)

    def __rmul__(self, other: Any) -> Field:
        return self._apply(operator.mul, other, self)

    def __truediv__(self, other: Any) -> Field:
        return self._apply(operator.truediv, self, other)

    def __rtruediv__(self, other: Any) -> Field:
        return self._apply(operator.truediv, other, self)

    def __floordiv__(self, other: Any) -> Field:
        return self._apply(operator.floordiv, self, other)

    def __rfloordiv__(self, other: Any) -> Field:
        return self._apply(operator.floordiv, other, self)

    def __mod__(self, other: Any) -> Field:
        return self._apply(operator.mod, self, other)

    def __rmod__(self, other: Any) -> Field:
        return self._apply(operator.mod, other, self)

    def __pow__(self, other: Any) -> Field:
        return self._apply(operator.pow, self, other)

    def __rpow__(self, other: Any) -> Field:
        return self._apply(operator.pow, other, self)

    def __and__(self, other: Any) -> Field:
        return self._apply(operator.and_, self, other)

    def __rand__(self, other: Any) -> Field:
        return self._apply(operator.and_, other, self)

    def __or__(self, other: Any) -> Field:
        return self._apply(operator.or_, self, other)

    def __ror__(self, other: Any) -> Field:
        return self._apply(operator.or_, other, self)

    def __xor__(self, other: Any) -> Field:
        return self._apply(operator.xor, self, other)

    def __rxor__(self, other: Any) -> Field:
        return self._apply(operator.xor, other, self)

    def __lt__(self, other: Any) -> Field:
        return self._apply(operator.lt, self, other)

    def __le__(self, other: Any) -> Field:
        return self._apply(operator.le, self, other)

    def __ge__(self, other: Any) -> Field:
        return self._apply(operator.ge, self, other)

    def __gt__(self, other: Any) -> Field:
        return self._apply(operator.gt, self, other)

    def __eq__(self, other: Any) -> Field:  # type: ignore[override]  # element-wise, as NumPy's: a field of bools
        return self._apply(operator.eq, self, other)

    def __ne__(self, other: Any) -> Field:  # type: ignore[override]  # element-wise, as NumPy's: a field of bools
        return self._apply(operator.ne, self, other)

    def __neg__(self) -> Field:
        return self._apply(operator.neg, self)

    def __pos__(self) -> Field:
        return self._apply(operator.pos, self)

    def __invert__(self) -> Field:
        return self._apply(operator.invert, self)

    def __abs__(self) -> Field:
        return self._apply(operator.abs, self)

    __hash__ = None  # type: ignore[assignment]  # unhashable, as NumPy arrays: == is element-wise


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _scalar_or_typevar(member: Any) -> None:
    """A member of a dtype union in ``Field[..., a | b]``: a scalar type (Python's float, int,
    bool included) or a type variable, else a located refusal."""
    if isinstance(member, typing.TypeVar) or member in (float, int, bool):
        return
    if _is_union(member):
        for m in typing.get_args(member):
            _scalar_or_typevar(m)
        return
    try:
        dtype_name(member)
    except TypeError as err:
        raise StencilTypeError(str(err), hint="e.g. Field[Dims[I], float64 | int32]") from None
