"""``StencilObject``: a built GTScript stencil. ``__call__`` normalises and checks the
arguments (gt4py's rules, before anything runs); ``run`` is the fast path NDSL uses
(keyword arguments, full origins, a domain, no checks); ``freeze`` fixes origin and domain."""

from __future__ import annotations

import enum
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.domain import Domain, UnitRange
from ..fields import Field
from ..fields.constructors import as_field
from ..storage.namespaces import array_namespace
from .axes import DIMS, table_dims
from .call import default_domain, field_origin, field_origins, validate
from .definitions import (
    AccessKind,
    Boundary,
    DomainInfo,
    FieldInfo,
    GTScriptCallError,
    ParameterInfo,
)
from .emit import Lowered
from .nodes import Definition


class StencilObject:
    """A GTScript stencil built for one backend (read-only; ``copy.deepcopy`` returns it)."""

    __slots__ = (
        "__name__", "__wrapped__", "_arg_cache", "_defaults", "_definition", "_frozen", "_lowered",
        "_on_gpu", "_param_names", "_runner", "_temps_cache", "backend", "constants", "domain_info",
        "field_info", "options", "parameter_info", "source",
    )  # fmt: skip
    __name__: str
    __wrapped__: Any
    _arg_cache: dict[int, tuple[Any, tuple[int, ...], tuple[int, ...], Any]]
    _defaults: dict[str, Any]
    _definition: Definition
    _frozen: bool
    _lowered: Lowered
    _on_gpu: bool
    _param_names: tuple[str, ...]
    _runner: Any
    _temps_cache: dict[Any, list[Any]]
    backend: str
    constants: dict[str, Any]
    domain_info: DomainInfo
    field_info: dict[str, FieldInfo]
    options: dict[str, Any]
    parameter_info: dict[str, ParameterInfo]
    source: str

    def __init__(
        self, definition: Definition, lowered: Lowered, runner: Any, backend: str, on_gpu: bool,
        options: dict[str, Any], fn: Any,
    ) -> None:  # fmt: skip
        s = object.__setattr__
        s(self, "_frozen", False)
        s(self, "_definition", definition)
        s(self, "_lowered", lowered)
        s(self, "_runner", runner)
        s(self, "_on_gpu", on_gpu)
        s(self, "backend", backend)
        s(self, "options", dict(options))
        s(self, "constants", {})
        s(self, "source", str(lowered.program))
        s(self, "__name__", definition.name)
        s(self, "__wrapped__", fn)
        s(self, "_param_names", tuple(p.name for p in definition.params))
        s(
            self,
            "_defaults",
            {p.name: p.default for p in definition.params if p.default is not None},
        )
        s(self, "_temps_cache", {})
        s(self, "_arg_cache", {})
        finfo = {}
        for p in definition.params:
            if p.axes is None:
                continue
            # a data-dimension field: what its elements' fields are (read, halo)
            names = (
                [c for c, base, _ in definition.components if base == p.name]
                if p.data_dims and p.axes
                else [p.name]
            )
            access = AccessKind.NONE
            bnd = tuple((0, 0) for _ in p.axes)
            for n in names:
                if n in lowered.read:
                    access |= AccessKind.READ
                if n in lowered.written:
                    access |= AccessKind.WRITE
                if n in lowered.read or n in lowered.written:
                    bnd = tuple(
                        (max(a[0], b[0]), max(a[1], b[1])) for a, b in zip(bnd, lowered.boundary[n])
                    )
            finfo[p.name] = FieldInfo(
                AccessKind(access), Boundary(bnd), p.axes, p.data_dims, np.dtype(p.dtype)
            )
        s(self, "field_info", finfo)
        s(self, "parameter_info", {
            p.name: ParameterInfo(
                AccessKind.READ if p.name in lowered.scalars_read else AccessKind.NONE, np.dtype(p.dtype)
            )
            for p in definition.params if p.axes is None
        })  # fmt: skip
        s(self, "domain_info", DomainInfo(min_sequential_axis_size=lowered.min_k))
        s(self, "_frozen", True)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a StencilObject is read-only (tried to set '{name}')")

    def __deepcopy__(self, memo: dict[int, Any]) -> StencilObject:
        return self

    def __copy__(self) -> StencilObject:
        return self

    def __repr__(self) -> str:
        return f"<StencilObject {self.__name__} on {self.backend}>"

    def __sdfg__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"backend '{self.backend}' is not a DaCe backend: no SDFG")

    __sdfg_signature__ = __sdfg_closure__ = __sdfg__

    def clean_call_args_cache(self) -> None:
        self._arg_cache.clear()

    # ------------------------------------------------------------ calls
    def __call__(
        self, *args: Any, origin: Any = None, domain: Any = None, validate_args: bool = True,
        exec_info: dict[str, Any] | None = None, **kwargs: Any,
    ) -> None:  # fmt: skip
        if exec_info is not None:
            exec_info["call_start_time"] = time.perf_counter()
        values = self._bind_names(args, kwargs)
        arrays = {n: values[n] for n in self.field_info if n in values}
        scalars = {n: values[n] for n in self.parameter_info if n in values}
        origins = field_origins(self.field_info, arrays, origin)
        dom = (
            tuple(int(d) for d in domain)
            if domain is not None
            else default_domain(self.field_info, arrays, origins)
        )
        if validate_args:
            validate(
                self.__name__, self.field_info, {n: i.dtype for n, i in self.parameter_info.items()},
                arrays, scalars, origins, dom, self.domain_info.min_sequential_axis_size, self._on_gpu,
            )  # fmt: skip
        if exec_info is not None:
            exec_info["call_run_start_time"] = time.perf_counter()
        self.run(**arrays, **scalars, _domain_=dom, _origin_=origins, exec_info=exec_info)
        if exec_info is not None:
            exec_info["call_run_end_time"] = exec_info["call_end_time"] = time.perf_counter()
            if exec_info.get("__aggregate_data"):
                _aggregate(exec_info, type(self).__name__)

    def _bind_names(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if len(args) > len(self._param_names):
            raise GTScriptCallError(
                f"{self.__name__}() takes {len(self._param_names)} arguments, got {len(args)}"
            )
        values = dict(self._defaults)
        values.update(zip(self._param_names, args))
        for k, v in kwargs.items():
            if k not in self._param_names:
                raise GTScriptCallError(f"{self.__name__}() has no parameter '{k}'")
            values[k] = v
        missing = [n for n in self._param_names if n not in values]
        if missing:
            raise GTScriptCallError(f"{self.__name__}(): missing argument(s) {', '.join(missing)}")
        return values

    def run(
        self, _domain_: Any, _origin_: Mapping[str, Any], exec_info: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:  # fmt: skip
        if exec_info is not None:
            exec_info["run_start_time"] = time.perf_counter()
        dom = tuple(int(d) for d in _domain_)
        self._runner(self.flat_args(dom, _origin_, kwargs), None)
        if exec_info is not None:
            exec_info["run_end_time"] = time.perf_counter()
            exec_info["domain"] = dom
            exec_info["origin"] = dict(_origin_)

    def flat_args(
        self, dom: tuple[int, ...], origin: Mapping[str, Any], kwargs: Mapping[str, Any]
    ) -> list[Any]:
        """The engine's arguments: each array as a field whose index 0 is its origin, the
        scalars, the domain's sizes, the temporaries."""
        flat: list[Any] = []
        for p in self._definition.params:
            v = kwargs[p.name]
            if p.axes is None:
                flat.append(
                    np.dtype(p.dtype).type(
                        getattr(v, "value", v) if isinstance(v, enum.Enum) else v
                    )
                )
                continue
            o = origin[p.name]
            if p.axes == ():  # a GlobalTable
                flat.append(self._table(p, v))
                continue
            if p.data_dims:
                flat.extend(self._elements(p, v, o))
                continue
            if p.name in self._lowered.promoted:
                flat.append(self._column_view(p.name, v, o, dom[2]))
                continue
            hit = self._arg_cache.get(id(v))
            # the cached field holds the array: the same object (not a new one at a reused id),
            # with the same shape (NumPy arrays can be reshaped in place) and origin
            if hit is None or hit[0] is not v or hit[1] != o or hit[2] != v.shape:
                field = as_field(
                    [DIMS[a] for a in p.axes], v,
                    origin={DIMS[a]: int(o[j]) for j, a in enumerate(p.axes)}, copy=False,
                )  # fmt: skip
                if len(self._arg_cache) > 256:
                    self._arg_cache.clear()
                hit = (v, tuple(o), v.shape, field)
                self._arg_cache[id(v)] = hit
            flat.append(hit[3])
        flat.extend(dom)
        flat.extend(self._temporaries(dom, flat))
        return flat

    def _table(self, p: Any, v: Any) -> Any:
        """A ``GlobalTable`` array as a field over its own dimensions (no copy)."""
        key = (id(v), p.name)
        hit = self._arg_cache.get(key)  # type: ignore[call-overload]
        if hit is None or hit[0] is not v or hit[2] != v.shape:
            field = as_field(list(table_dims(p.name, len(p.data_dims))), v, copy=False)
            if len(self._arg_cache) > 256:
                self._arg_cache.clear()
            hit = (v, (), v.shape, field)
            self._arg_cache[key] = hit  # type: ignore[index]
        return hit[3]

    def _elements(self, p: Any, v: Any, o: Any) -> list[Any]:
        """The fields of the elements a data-dimension field's readers use: views of the
        array at each constant data index (no copy)."""
        out = []
        for comp, base, index in self._definition.components:
            if base != p.name:
                continue
            key = (id(v), comp)
            hit = self._arg_cache.get(key)  # type: ignore[call-overload]
            if hit is None or hit[0] is not v or hit[1] != tuple(o) or hit[2] != v.shape:
                field = as_field(
                    [DIMS[a] for a in p.axes], v[(Ellipsis, *index)],
                    origin={DIMS[a]: int(o[j]) for j, a in enumerate(p.axes)}, copy=False,
                )  # fmt: skip
                if len(self._arg_cache) > 256:
                    self._arg_cache.clear()
                hit = (v, tuple(o), v.shape, field)
                self._arg_cache[key] = hit  # type: ignore[index]
            out.append(hit[3])
        return out

    def _column_view(self, name: str, v: Any, o: Any, nk: int) -> Any:
        """A 2-D array written level by level, as the 3-D field the engine writes: a view with
        K stride 0 over the K domain and the levels read around it (no copy)."""
        lo, hi = self._lowered.promoted[name]
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

    def _temporaries(self, dom: tuple[int, ...], flat: list[Any]) -> list[Any]:
        temps = self._lowered.program.temps
        if not temps:
            return []
        first = next((f for f in flat if hasattr(f, "ndarray")), None)
        xp = array_namespace(first.ndarray) if first is not None else np
        hit = self._temps_cache.get((dom, xp.__name__))
        if hit is None:
            hit = []
            for t in temps:
                e = self._lowered.temp_extents[t.name]
                shape = (dom[0] + e[0] + e[1], dom[1] + e[2] + e[3], dom[2] + e[4] + e[5])
                if t.name in self._lowered.flat_temps:
                    hit.append(_flat_temporary(xp, shape, t.type.dtype, e))  # type: ignore[union-attr]
                    continue
                arr = xp.zeros(shape, dtype=t.type.dtype)  # type: ignore[union-attr]
                hit.append(
                    as_field(
                        [DIMS[a] for a in "IJK"],
                        arr,
                        origin={DIMS["I"]: e[0], DIMS["J"]: e[2], DIMS["K"]: e[4]},
                        copy=False,
                    )
                )
            self._temps_cache.clear()
            self._temps_cache[(dom, xp.__name__)] = hit
        return list(hit)

    def freeze(self, *, origin: Mapping[str, Any], domain: Any) -> FrozenStencil:
        return FrozenStencil(self, origin, domain)


def _flat_temporary(xp: Any, shape: tuple[int, int, int], dtype: str, e: tuple[int, ...]) -> Any:
    """A 2-D temporary (``tmp: Field[IJ, float] = ...``) as the 3-D field the engine reads and
    writes: one value per column, every level the same memory (K stride 0), so a level's write
    is what any later read in the column sees."""
    arr = xp.zeros(shape[:2], dtype=dtype)
    view = xp.lib.stride_tricks.as_strided(arr, shape=shape, strides=(*arr.strides, 0))
    ranges = [UnitRange(-e[0], shape[0] - e[0]), UnitRange(-e[2], shape[1] - e[2])]
    ranges.append(UnitRange(-e[4], shape[2] - e[4]))
    return Field._wrap(Domain(dims=[DIMS[a] for a in "IJK"], ranges=ranges), view, xp)


def _aggregate(info: dict[str, Any], key: str) -> None:
    agg = info.setdefault(
        key,
        {
            "call_time": 0.0,
            "total_call_time": 0.0,
            "ncalls": 0,
            "run_time": 0.0,
            "total_run_time": 0.0,
        },
    )
    call = info["call_end_time"] - info["call_start_time"]
    run = info["run_end_time"] - info["run_start_time"]
    agg["call_time"] = call
    agg["total_call_time"] += call
    agg["run_time"] = run
    agg["total_run_time"] += run
    agg["ncalls"] += 1


class FrozenStencil:
    """A stencil with origin and domain fixed: call it with keyword fields and scalars."""

    def __init__(
        self, stencil_object: StencilObject, origin: Mapping[str, Any], domain: Any
    ) -> None:
        self.stencil_object = stencil_object
        self.domain = tuple(domain)
        if not isinstance(origin, Mapping):
            origin = {"_all_": origin}
        self.origin = {
            n: field_origin(n, info, origin, None) for n, info in stencil_object.field_info.items()
        }

    def __call__(self, exec_info: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if exec_info is not None:
            exec_info["call_run_start_time"] = time.perf_counter()
        self.stencil_object.run(
            _domain_=self.domain, _origin_=self.origin, exec_info=exec_info, **kwargs
        )
        if exec_info is not None:
            exec_info["call_run_end_time"] = time.perf_counter()
