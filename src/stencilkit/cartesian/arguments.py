"""The engine's arguments of a GTScript call, made once per set of arrays.

A call passes arrays, an origin per field and a domain; the engine takes a flat list: each
array as a stencilkit field whose index 0 is its origin, the scalars, the domain's sizes, the
temporaries. Making that list (a field per array, the views of data-dimension elements and of
2-D columns) is the slow part of a call, and in a time loop it is the same every step. So it is
made once per set of arrays and kept as a :class:`Bound`: later calls check that they pass the
very same arrays (by identity, with the same data address, shape, strides, dtype and flags: NumPy
can change those in place; one C call, ``toolchain/same_arrays.py``), the same origins and
domain, and fill in only their scalars. The last call's binding is tried first (a time loop
repeats identical arguments), before the dictionary of earlier ones.

Temporaries come from a pool per domain: each call takes a set no other call is using, so that
two threads calling one stencil never share one.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..core.domain import Domain, UnitRange
from ..core.errors import StencilValueError
from ..fields import Field
from ..fields.constructors import as_field, share_input
from ..storage.namespaces import array_namespace
from ..toolchain.same_arrays import GEOMETRY, Snapshot
from .axes import DIMS, table_dims
from .emit import Lowered
from .nodes import Definition

#: bound calls (and fields of arrays) kept per stencil: a time loop's few sets of arrays
KEEP = 64
#: bound arguments kept per set of arrays (over other domains or origins)
PER_ARRAYS = 4
#: spare sets of temporaries kept per domain (one per thread calling at the same time)
SPARE_TEMPORARIES = 4


class Bound:
    """The engine's arguments for one set of arrays, origins and domain (see the module
    docstring): ``flat`` without the temporaries, scalars left ``None`` at ``scalars``'
    positions."""

    __slots__ = (
        "arrays", "dom", "fixed", "flat", "go", "ids", "launch", "origins", "run_origin", "same", "scalars",
        "temps_key", "xp",
    )  # fmt: skip

    def __init__(
        self, arrays: tuple[Any, ...], dom: tuple[int, ...], origins: dict[str, tuple[int, ...]],
        run_origin: Mapping[str, Any] | None, flat: list[Any],
        scalars: tuple[tuple[int, str, Callable[[Any], Any]], ...], xp: Any,
    ) -> None:  # fmt: skip
        self.arrays = arrays  # held: no other array takes their ids while this is kept
        self.ids = tuple(map(id, arrays))
        #: whether a call's arrays are these, unchanged (``Snapshot.same``)
        self.same: Callable[[tuple[Any, ...]], bool] = Snapshot(arrays).same
        self.dom = dom
        self.origins = origins
        # the origins run() was given, when a later call's can be compared with them (tuples of
        # ints: nothing in them can change in place); None otherwise (never equal)
        self.run_origin = run_origin
        self.flat = flat
        self.scalars = scalars
        #: the positions of ``flat`` that every call bound by this has the same (all but scalars)
        self.fixed = frozenset(range(len(flat))) - {pos for pos, _, _ in scalars}
        self.xp = xp
        #: the temporaries' pool: by domain, array module and the fields' memory order
        self.temps_key = (dom, xp.__name__, _memory_order(flat))
        #: the runner's launch bound to these fields and one set of temporaries (compiled
        #: backends: ``bound_launch``), made after the first call
        self.launch: tuple[Callable[[list[Any]], None], list[Any] | None] | None = None
        #: that launch where it needs no temporaries: a call runs ``go(flat)`` and nothing else
        self.go: Callable[[list[Any]], None] | None = None


class Checked:
    """A ``__call__``'s normalised origins and domain for one set of arrays and one
    ``origin``/``domain`` argument (:func:`spec_key`), bound as ``bound``; ``validated`` once
    the arrays were checked against the stencil with them (the scalars are checked each call)."""

    __slots__ = ("bound", "validated")

    def __init__(self, bound: Bound, validated: bool) -> None:
        self.bound = bound
        self.validated = validated


def _frozen_origins(origin: Any) -> dict[str, Any] | None:
    if type(origin) is not dict:
        return None
    for v in origin.values():
        if type(v) is not tuple or not all(type(x) in INTS for x in v):
            return None
    return dict(origin)


#: integer types whose values are what they hash to (the entries of a cacheable origin/domain)
INTS = frozenset(
    {int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64}
)


def spec_key(spec: Any) -> Any:
    """A hashable key of a call's ``origin`` or ``domain`` argument that determines its
    normalised value: None, an int, a tuple or list of ints, a dict of those; ``NotImplemented``
    for anything else (a call with it is normalised and checked every time)."""
    t = type(spec)
    if spec is None or t in INTS:
        return (t, spec)
    if t is tuple or t is list:
        for x in spec:
            if type(x) not in INTS:
                return NotImplemented
        return (tuple, tuple(spec))
    if t is dict:
        for v in spec.values():
            tv = type(v)
            if tv is tuple:
                for x in v:
                    if type(x) not in INTS:
                        return NotImplemented
            elif tv not in INTS:
                return NotImplemented
        return (dict, tuple(spec.items()))
    return NotImplemented


class Arguments:
    """The argument binder of one stencil (its caches; safe to use from several threads)."""

    def __init__(self, definition: Definition, lowered: Lowered) -> None:
        self.definition = definition
        self.lowered = lowered
        self.field_names = tuple(p.name for p in definition.params if p.axes is not None)
        names = self.field_names
        # a tuple of the arrays of a mapping of arguments (KeyError names a missing one)
        get = operator.itemgetter(*names) if names else (lambda m: ())
        self.arrays_of: Callable[[Mapping[str, Any]], tuple[Any, ...]] = (
            (lambda m: (get(m),)) if len(names) == 1 else get
        )
        # per set of arrays (by id), its bound arguments over the last few domains/origins
        self.bound: dict[tuple[int, ...], list[Bound]] = {}
        self.calls: dict[Any, Checked] = {}
        self.fields: dict[Any, tuple[Any, tuple[int, ...], Any, Any]] = {}
        self.temps: dict[Any, list[list[Any]]] = {}
        # the last run()'s binding and the last __call__'s (its origin and domain keys and
        # what they were normalised to), tried before the dictionaries; each one store, so
        # another thread reads the old entry or the new one, never half of one
        self.last_run: Bound | None = None
        self.last_call: tuple[Any, Any, Checked] | None = None

    def clear(self) -> None:
        self.bound.clear()
        self.calls.clear()
        self.fields.clear()
        self.last_run = self.last_call = None

    # ------------------------------------------------------------ look-ups
    def for_run(self, dom: Any, origin: Mapping[str, Any], values: Mapping[str, Any]) -> Bound:
        """The bound arguments of ``run(_domain_=dom, _origin_=origin, **values)``."""
        arrays = self.arrays_of(values)
        if type(dom) is tuple:
            try:
                b = self.last_run
                if b is not None and b.dom == dom and b.run_origin == origin and b.same(arrays):
                    return b
                kept = self.bound.get(tuple(map(id, arrays)))
                if kept is not None:
                    for b in kept:  # the same arrays over a few domains or origins (sub-domains)
                        if b.dom == dom and b.run_origin == origin:
                            if b.same(arrays):
                                self.last_run = b
                                return b
                            break
            except ValueError:  # an origin given as a NumPy array (no truth value): the slow way
                pass
        d = tuple(int(x) for x in dom)
        origins = {n: tuple(int(x) for x in origin[n]) for n in self.field_names}
        b = self.make(arrays, d, origins, values, _frozen_origins(origin))
        if b.run_origin is not None:
            self.last_run = b
        return b

    def checked(self, okey: Any, dkey: Any, arrays: tuple[Any, ...]) -> Checked | None:
        """What a ``__call__`` with these very arrays (unchanged) and the same ``origin`` and
        ``domain`` arguments (their :func:`spec_key`) normalised and bound before."""
        last = self.last_call
        if last is not None and last[0] == okey and last[1] == dkey and last[2].bound.same(arrays):
            return last[2]
        c = self.calls.get((tuple(map(id, arrays)), okey, dkey))
        if c is not None and c.bound.same(arrays):
            self.last_call = (okey, dkey, c)
            return c
        return None

    def keep_checked(self, okey: Any, dkey: Any, c: Checked) -> None:
        if len(self.calls) >= KEEP:
            self.calls.clear()
        self.calls[(c.bound.ids, okey, dkey)] = c
        self.last_call = (okey, dkey, c)

    # ------------------------------------------------------------ the engine's list
    def flat(self, b: Bound, values: Mapping[str, Any]) -> list[Any]:
        """The engine's arguments of a call with ``values`` (its scalars) bound by ``b``,
        temporaries not included."""
        if not b.scalars:
            return b.flat
        flat = list(b.flat)
        for pos, name, convert in b.scalars:
            v = values[name]
            flat[pos] = convert(v.value if isinstance(v, enum.Enum) else v)
        return flat

    def take_temporaries(self, b: Bound) -> list[Any]:
        """A set of temporaries for ``b``'s domain that no other call is using."""
        pool = self.temps.get(b.temps_key)
        if pool:
            try:
                return pool.pop()
            except IndexError:  # taken by another thread meanwhile
                pass
        return self._new_temporaries(b.dom, b.xp, b.temps_key[2])

    def give_back(self, b: Bound, temps: list[Any]) -> None:
        key = b.temps_key
        pool = self.temps.get(key)
        if pool is None:
            if len(self.temps) >= 8:  # other domains' spares: dropped
                self.temps.clear()
            pool = self.temps.setdefault(key, [])
        if len(pool) < SPARE_TEMPORARIES:
            pool.append(temps)

    # ------------------------------------------------------------ making them
    def make(
        self, arrays: tuple[Any, ...], dom: tuple[int, ...], origins: dict[str, tuple[int, ...]],
        values: Mapping[str, Any], run_origin: Mapping[str, Any] | None = None,
    ) -> Bound:  # fmt: skip
        """Bind ``arrays`` (the fields' arrays in parameter order) at ``origins`` over ``dom``,
        and keep it for the calls that follow."""
        flat: list[Any] = []
        scalars = []
        promoted = self.lowered.promoted
        for p in self.definition.params:
            if p.axes is None:
                scalars.append((len(flat), p.name, np.dtype(p.dtype).type))
                flat.append(None)
                continue
            v = values[p.name]
            if p.axes == ():  # a GlobalTable
                flat.append(self._table(p, v))
                continue
            o = origins[p.name]
            if p.data_dims:
                flat.extend(self._elements(p, v, o, dom[2]))
            elif p.name in promoted:
                flat.append(self._column_view(p.name, v, o, dom[2]))
            elif self._unused_with_more_axes(p, v):
                # never accessed (pruned by externals), an array of more axes than declared:
                # gt4py does not look at it; its first plane stands in for the engine
                view = v[(slice(None),) * len(p.axes) + (0,) * (v.ndim - len(p.axes))]
                flat.append(self._field(p, view, o, view, (id(v), "plane")))
            else:
                flat.append(self._field(p, v, o, v, id(v)))
        flat.extend(dom)
        first = next((f for f in flat if hasattr(f, "ndarray")), None)
        xp = array_namespace(first.ndarray) if first is not None else np
        b = Bound(arrays, dom, origins, run_origin, flat, tuple(scalars), xp)
        ids = b.ids
        kept = self.bound.get(ids)
        if kept is None:
            if len(self.bound) >= KEEP:
                self.bound.clear()
            self.bound[ids] = [b]
        else:  # a new list: another thread may be reading the old one
            self.bound[ids] = [b, *kept[: PER_ARRAYS - 1]]
        return b

    def _unused_with_more_axes(self, p: Any, v: Any) -> bool:
        name = p.name
        used = name in self.lowered.read or name in self.lowered.written
        return not used and getattr(v, "ndim", len(p.axes)) > len(p.axes)

    def _field(self, p: Any, v: Any, o: tuple[int, ...], data: Any, key: Any) -> Any:
        """``data`` (``v`` or a view of it) as a field with index 0 at ``o``; the field of an
        array is kept (the same object again when the array comes back: the engine's plans are
        found by the fields' signatures, and the embedded backend binds by field identity)."""
        kept = self.fields.get(key)
        geometry = _geometry(v)
        if kept is not None and kept[0] is v and kept[1] == o and kept[2] == geometry:
            return kept[3]
        dims = [DIMS[a] for a in p.axes]
        origin = {DIMS[a]: int(o[j]) for j, a in enumerate(p.axes)}
        if p.name not in self.lowered.written:
            # only read: read-only memory and zero strides (numpy.broadcast_to) are fine
            field = share_input(dims, data, origin, p.name)
        elif isinstance(data, np.ndarray) and not data.flags.writeable:
            raise StencilValueError(
                f"{self.definition.name}(): argument '{p.name}' is written by the stencil,"
                " but its array is read-only",
                hint="pass a writable array (e.g. a copy: numpy.array(a)); nothing was written",
            )
        elif any(st == 0 and n > 1 for st, n in zip(data.strides, data.shape, strict=False)):
            raise StencilValueError(
                f"{self.definition.name}(): argument '{p.name}' is written by the stencil, but"
                f" its array has a zero stride (strides {tuple(data.strides)}): its points share"
                " memory and would overwrite each other",
                hint="pass an array of its own (e.g. a copy: numpy.array(a)); nothing was written",
            )
        else:
            field = as_field(dims, data, origin=origin, copy=False)
        if len(self.fields) >= 4 * KEEP:
            self.fields.clear()
        self.fields[key] = (v, o, geometry, field)
        return field

    def _table(self, p: Any, v: Any) -> Any:
        """A ``GlobalTable`` array as a field over its own dimensions (no copy); kept like
        the fields of arrays."""
        key = (id(v), p.name)
        kept = self.fields.get(key)
        geometry = _geometry(v)
        if kept is not None and kept[0] is v and kept[2] == geometry:
            return kept[3]
        field = as_field(list(table_dims(p.name, len(p.data_dims))), v, copy=False)
        if len(self.fields) >= 4 * KEEP:
            self.fields.clear()
        self.fields[key] = (v, (), geometry, field)
        return field

    def _elements(self, p: Any, v: Any, o: tuple[int, ...], nk: int) -> list[Any]:
        """The fields of the elements a data-dimension field's readers use: views of the
        array at each constant data index (no copy); an element of a 2-D field written level
        by level as ``_column_view``."""
        promoted = self.lowered.promoted
        return [
            self._column_view(comp, v[(Ellipsis, *index)], o, nk)
            if comp in promoted
            else self._field(p, v, o, v[(Ellipsis, *index)], (id(v), comp))
            for comp, base, index in self.definition.components
            if base == p.name
        ]

    def _column_view(self, name: str, v: Any, o: tuple[int, ...], nk: int) -> Any:
        """A 2-D array written level by level, as the 3-D field the engine writes: a view with
        K stride 0 over the K domain and the levels read around it (no copy)."""
        lo, hi = self.lowered.promoted[name]
        xp = array_namespace(v)
        view = xp.lib.stride_tricks.as_strided(
            v, shape=(*v.shape[:2], nk + lo + hi), strides=(*v.strides[:2], 0)
        )
        ranges = [
            UnitRange(-int(o[0]), v.shape[0] - int(o[0])),
            UnitRange(-int(o[1]), v.shape[1] - int(o[1])),
            UnitRange(-lo, nk + hi),
        ]
        return Field._wrap(Domain(dims=[DIMS["I"], DIMS["J"], DIMS["K"]], ranges=ranges), view, xp)

    def _new_temporaries(
        self, dom: tuple[int, ...], xp: Any, order: tuple[int, ...] = (0, 1, 2)
    ) -> list[Any]:
        """Zeroed temporaries over ``dom`` and their halos, their axes laid out in memory in
        ``order`` (outermost first): the fields' own order, so that the threads of a GPU warp
        (and a CPU's vector lanes) that walk the fields' unit-stride axis walk the temporaries'
        too (a K-contiguous temporary beside I-contiguous fields made a GTScript Thomas solve
        on gt:gpu 9x slower than gt4py's)."""
        out = []
        for t in self.lowered.program.temps:
            e = self.lowered.temp_extents[t.name]
            shape = (dom[0] + e[0] + e[1], dom[1] + e[2] + e[3], dom[2] + e[4] + e[5])
            if t.name in self.lowered.flat_temps:
                out.append(_flat_temporary(xp, shape, t.type.dtype, e))  # type: ignore[union-attr]
                continue
            laid = xp.zeros(tuple(shape[a] for a in order), dtype=t.type.dtype)  # type: ignore[union-attr]
            arr = laid.transpose(tuple(order.index(a) for a in range(3)))
            origin = {DIMS["I"]: e[0], DIMS["J"]: e[2], DIMS["K"]: e[4]}
            out.append(as_field([DIMS[a] for a in "IJK"], arr, origin=origin, copy=False))
        return out


def _geometry(v: Any) -> tuple[Any, ...]:
    """What a kept field of array ``v`` depends on besides its identity: shape, strides, dtype
    and, for NumPy, writeability (a read-only array is refused as a field)."""
    flags = getattr(v, "flags", None)
    return (*GEOMETRY(v), getattr(flags, "writeable", True))


def _memory_order(flat: list[Any]) -> tuple[int, ...]:
    """The axes (I, J, K as 0, 1, 2) of the first 3-D field among ``flat`` from the largest
    stride to the smallest; C order (0, 1, 2) where there is none."""
    for f in flat:
        a = getattr(f, "ndarray", None)
        if a is not None and getattr(a, "ndim", 0) == 3 and len(f.domain.dims) == 3:
            strides = a.strides
            if 0 in strides:  # a 2-D array seen as 3-D (K stride 0): says nothing of K
                continue
            return tuple(sorted(range(3), key=lambda j: (-abs(strides[j]), j)))
    return (0, 1, 2)


def _flat_temporary(xp: Any, shape: tuple[int, int, int], dtype: str, e: tuple[int, ...]) -> Any:
    """A 2-D temporary (``tmp: Field[IJ, float] = ...``) as the 3-D field the engine reads and
    writes: one value per column, every level the same memory (K stride 0), so a level's write
    is what any later read in the column sees."""
    arr = xp.zeros(shape[:2], dtype=dtype)
    view = xp.lib.stride_tricks.as_strided(arr, shape=shape, strides=(*arr.strides, 0))
    ranges = [UnitRange(-e[0], shape[0] - e[0]), UnitRange(-e[2], shape[1] - e[2])]
    ranges.append(UnitRange(-e[4], shape[2] - e[4]))
    return Field._wrap(Domain(dims=[DIMS[a] for a in "IJK"], ranges=ranges), view, xp)
