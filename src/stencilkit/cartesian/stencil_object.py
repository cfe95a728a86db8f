"""``StencilObject``: a built GTScript stencil. ``__call__`` normalises and checks the
arguments (gt4py's rules, before anything runs); ``run`` is the fast path NDSL uses
(keyword arguments, full origins, a domain, no checks); ``freeze`` fixes origin and domain."""

from __future__ import annotations

import inspect
import time
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.tracebacks import api_boundary
from .arguments import KEEP, Arguments, Bound, Checked, spec_key
from .backend_names import BACKENDS
from .call import (
    FieldCheck,
    default_domain,
    field_checks,
    field_origin,
    field_origins,
    needs_unwrap,
    unwrap_arrays,
    validate_fields,
    validate_scalars,
)
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
        "__name__",
        "__wrapped__",
        "_args",
        "_cpp",
        "_defaults",
        "_definition",
        "_domain_origin_cache",
        "_field_checks",
        "_frozen",
        "_has_temps",
        "_lowered",
        "_on_gpu",
        "_param_dtypes",
        "_param_names",
        "_param_set",
        "_runner",
        "_unused",
        "backend",
        "constants",
        "domain_info",
        "field_info",
        "options",
        "parameter_info",
        "source",
    )  # fmt: skip
    __name__: str
    __wrapped__: Any
    _args: Arguments
    _field_checks: tuple[FieldCheck, ...]
    _has_temps: bool
    _param_dtypes: dict[str, np.dtype[Any]]
    _param_set: frozenset[str]
    _defaults: dict[str, Any]
    _definition: Definition
    _frozen: bool
    _lowered: Lowered
    _on_gpu: bool
    _cpp: bool
    #: per call signature (shapes, dtypes, devices, origins, domain): the domain, the origins
    #: and whether the fields were checked
    _domain_origin_cache: dict[Any, tuple[tuple[int, ...], dict[str, tuple[int, ...]], bool]]
    _param_names: tuple[str, ...]
    _runner: Any
    _unused: tuple[str, ...]
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
        s(self, "_domain_origin_cache", {})
        s(self, "_cpp", backend in BACKENDS and BACKENDS[backend].language == "c++")
        s(self, "options", dict(options))
        s(self, "constants", {})
        s(self, "source", str(lowered.program))
        s(self, "__name__", definition.name)
        s(self, "__wrapped__", fn)
        s(self, "_param_names", tuple(p.name for p in definition.params))
        # the definition's defaults, None included (an optional field left out of the call)
        s(self, "_defaults", _defaults_of(fn, definition))
        s(self, "_param_set", frozenset(self._param_names))
        s(self, "_args", Arguments(definition, lowered))
        s(self, "_has_temps", bool(lowered.program.temps))
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
        # fields and scalars the stencil never reads or writes: gt4py lets a call pass None
        unused = [n for n, i in finfo.items() if not i.access]
        unused += [n for n, p in self.parameter_info.items() if not p.access]
        s(self, "_unused", tuple(unused))
        s(self, "domain_info", DomainInfo(min_sequential_axis_size=lowered.min_k))
        reads = {}
        for p in definition.params:  # a data-dimension field: the first of its elements' reads
            parts = [
                lowered.halo_reads[c] for c, base, _ in definition.components if base == p.name
            ]
            parts.append(lowered.halo_reads.get(p.name, ("",) * 6))
            reads[p.name] = tuple(next((x for x in side if x), "") for side in zip(*parts))
        s(self, "_field_checks", field_checks(finfo, reads))
        s(self, "_param_dtypes", {n: i.dtype for n, i in self.parameter_info.items()})
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
        """Forget the arrays of earlier calls (the caches of bound arguments hold them) and the
        origins and domains normalised for them."""
        self._args.clear()
        self._domain_origin_cache.clear()
        bound = getattr(self._runner, "bound", None)
        if isinstance(bound, dict):  # the embedded backend's calls bound to their fields
            bound.clear()

    # ------------------------------------------------------------ calls
    @api_boundary
    def __call__(
        self, *args: Any, origin: Any = None, domain: Any = None, validate_args: bool = True,
        exec_info: dict[str, Any] | None = None, **kwargs: Any,
    ) -> None:  # fmt: skip
        if exec_info is not None:
            exec_info["call_start_time"] = time.perf_counter()
        # all by keyword, none left to its default: the keywords are the values
        if args or kwargs.keys() != self._param_set:
            kwargs = self._bind_names(args, kwargs)
        if exec_info is not None:  # gt4py's call_run: normalising, checking and running
            exec_info["call_run_start_time"] = time.perf_counter()
        if self._unused and any(kwargs[n] is None for n in self._unused):
            kwargs = self._stand_ins(kwargs, origin, domain)
        binder = self._args
        arrays = binder.arrays_of(kwargs)
        okey, dkey = spec_key(origin), spec_key(domain)
        cacheable = okey is not NotImplemented and dkey is not NotImplemented
        if cacheable:
            c = binder.checked(okey, dkey, arrays)
            if c is not None:  # these arrays, origin and domain were normalised and bound before
                if validate_args:
                    if not c.validated:
                        self._validate_fields(kwargs, c.bound.origins, c.bound.dom)
                        c.validated = True
                    self._validate_scalars(kwargs)
                self._launch(c.bound, kwargs, exec_info, True)
                if exec_info is not None:
                    _all_origin(exec_info, origin)
                return
        if needs_unwrap(arrays):  # gt4py's array-likes (__array_interface__, __gt_dims__)
            kwargs, origin = unwrap_arrays(self.field_info, kwargs, origin)
            arrays = binder.arrays_of(kwargs)
            cacheable = False
        fields = {n: kwargs[n] for n in self.field_info}
        # as gt4py's _domain_origin_cache: the origins and domain normalised (and the fields
        # checked) once per set of shapes, dtypes, devices and origins given
        nkey = _normalised_key(fields, origin, dkey)
        hit = self._domain_origin_cache.get(nkey) if nkey is not None else None
        if hit is not None and (hit[2] or not validate_args):
            dom, origins = hit[0], dict(hit[1])
            if validate_args:
                self._validate_scalars(kwargs)
        else:
            origins = field_origins(self.field_info, fields, origin)
            dom = (
                tuple(int(d) for d in domain)
                if domain is not None
                else default_domain(self.field_info, fields, origins)
            )
            if validate_args:
                self._validate_fields(kwargs, origins, dom)
                self._validate_scalars(kwargs)
            if nkey is not None:
                if len(self._domain_origin_cache) >= 4 * KEEP:
                    self._domain_origin_cache.clear()
                self._domain_origin_cache[nkey] = (dom, dict(origins), validate_args)
        b = binder.make(arrays, dom, origins, kwargs)
        # origins taken from the arrays' __gt_origin__ (no origin given, or not for every field)
        # are looked up again on each call, unless no array can have one
        if cacheable and (
            (origin is not None and not isinstance(origin, Mapping))
            or not any(hasattr(a, "__gt_origin__") or hasattr(a, "__dict__") for a in arrays)
        ):
            binder.keep_checked(okey, dkey, Checked(b, validate_args))
        self._launch(b, kwargs, exec_info, True)
        if exec_info is not None:
            _all_origin(exec_info, origin)

    def _stand_ins(self, kwargs: dict[str, Any], origin: Any, domain: Any) -> dict[str, Any]:
        """``kwargs`` with each ``None`` given for a field the stencil never touches replaced by
        a read-only stand-in of zeros (no memory: zero strides) over the call's domain, and for
        a scalar it never reads by a zero."""
        given = {n: kwargs[n] for n in self.field_info if kwargs[n] is not None}
        origins = field_origins(self.field_info, given, origin)
        dom = (
            tuple(int(d) for d in domain)
            if domain is not None
            else default_domain(self.field_info, given, origins)
        )
        xp: Any = np
        if self._on_gpu:
            from ..storage.namespaces import import_cupy

            xp = import_cupy()
        out = dict(kwargs)
        for n in self._unused:
            if out[n] is None and n in self.parameter_info:
                out[n] = self.parameter_info[n].dtype.type(0)
            elif out[n] is None:
                info = self.field_info[n]
                o = field_origin(n, info, origin, None)
                shape = tuple(o[j] + dom["IJK".index(a)] for j, a in enumerate(info.axes))
                out[n] = xp.broadcast_to(xp.zeros((), info.dtype), shape + tuple(info.data_dims))
        return out

    def _validate_fields(
        self, values: Mapping[str, Any], origins: Mapping[str, Any], dom: tuple[int, ...]
    ) -> None:
        validate_fields(
            self.__name__, self._field_checks, values, origins, dom,
            self.domain_info.min_sequential_axis_size, self._on_gpu,
        )  # fmt: skip
        record = BACKENDS.get(self.backend)
        if record is None:
            return
        for name, info in self.field_info.items():
            if info.access == AccessKind.NONE:
                continue
            dims = (*info.axes, *(str(d) for d in range(len(info.data_dims))))
            if not record.is_optimal_layout(values[name], dims):
                warnings.warn(  # gt4py's words (its spacing too): its tests match on them
                    f"The layout of the field '{name}' is not recommended for this backend."
                    "This may lead to performance degradation. Please consider using the"
                    "provided allocators in `gt4py.storage`. (stencilkit: strides"
                    f" {tuple(values[name].strides)} of a {'x'.join(map(str, values[name].shape))}"
                    f" array; {self.backend} prefers the order of gt4py.storage's allocators)",
                    UserWarning,
                    stacklevel=4,
                )

    def _validate_scalars(self, values: Mapping[str, Any]) -> None:
        if self._param_dtypes:
            validate_scalars(self.__name__, self._param_dtypes, values)

    def _launch(
        self, b: Bound, values: Mapping[str, Any], exec_info: dict[str, Any] | None, called: bool
    ) -> None:
        """Run the engine on ``b``'s arguments with this call's scalars; ``called``: from
        ``__call__`` (whose ``exec_info`` also gets the call's times)."""
        go = b.go
        if go is not None and exec_info is None:  # bound, no temporaries: the launch alone
            go(self._args.flat(b, values) if b.scalars else b.flat)
            return
        if exec_info is not None:
            exec_info["run_start_time"] = time.perf_counter()
        flat = self._args.flat(b, values)
        if exec_info is not None and self._cpp:  # gt4py's times of the generated C++ alone
            exec_info["run_cpp_start_time"] = time.perf_counter()
        if self._has_temps:
            temps = self._args.take_temporaries(b)
            try:
                self._run_engine(b, [*flat, *temps], temps)
            finally:
                self._args.give_back(b, temps)
        else:
            self._run_engine(b, flat, None)
        if exec_info is not None:
            if self._cpp:
                exec_info["run_cpp_end_time"] = time.perf_counter()
            exec_info["run_end_time"] = time.perf_counter()
            exec_info["domain"] = b.dom
            exec_info["origin"] = dict(b.origins)
            if called:
                exec_info["call_run_end_time"] = exec_info["call_end_time"] = time.perf_counter()
                if exec_info.setdefault("__aggregate_data", False):
                    _aggregate(exec_info, type(self).__name__)

    def _run_engine(self, b: Bound, flat: list[Any], temps: list[Any] | None) -> None:
        """The engine's call on ``flat``: through the launch bound to ``b``'s fields (and these
        temporaries) where the runner offers one (compiled backends), else the runner's call."""
        launch = b.launch
        if launch is not None and launch[1] is temps:
            launch[0](flat)
            return
        self._runner(flat, None)
        bind = getattr(self._runner, "bound_launch", None)
        if launch is None and bind is not None:
            # every entry but the scalars is the same in each call bound by b (its domain too)
            fn = bind(flat, b.fixed)
            if fn is not None:
                b.launch = (fn, temps)  # one store: another thread sees both or neither
                if temps is None:
                    b.go = fn

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
        """The fast path (NDSL's): every field's full origin in ``_origin_``, the domain, the
        arguments by keyword; nothing is checked."""
        b = self._args.for_run(_domain_, _origin_, kwargs)
        go = b.go
        if go is not None and exec_info is None and not b.scalars:  # _launch's first branch
            go(b.flat)
            return
        self._launch(b, kwargs, exec_info, False)
        if exec_info is not None:
            exec_info["origin"] = dict(_origin_)

    def flat_args(
        self, dom: tuple[int, ...], origin: Mapping[str, Any], kwargs: Mapping[str, Any]
    ) -> list[Any]:
        """The engine's arguments: each array as a field whose index 0 is its origin, the
        scalars, the domain's sizes, the temporaries (a set of their own)."""
        b = self._args.for_run(tuple(dom), origin, kwargs)
        return [*self._args.flat(b, kwargs), *self._args.take_temporaries(b)]

    def freeze(self, *, origin: Mapping[str, Any], domain: Any) -> FrozenStencil:
        return FrozenStencil(self, origin, domain)


def _defaults_of(fn: Any, definition: Definition) -> dict[str, Any]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # no Python signature: the parsed defaults (never None)
        return {p.name: p.default for p in definition.params if p.default is not None}
    names = {p.name for p in definition.params}
    return {n: p.default for n, p in params.items() if n in names and p.default is not p.empty}


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
    agg["call_start_time"], agg["call_end_time"] = info["call_start_time"], info["call_end_time"]
    agg["call_time"] = call
    agg["total_call_time"] += call
    agg["run_time"] = run
    agg["total_run_time"] += run
    agg["ncalls"] += 1
    if "run_cpp_start_time" in info:
        cpp = info["run_cpp_end_time"] - info["run_cpp_start_time"]
        agg["run_cpp_time"] = cpp
        agg["total_run_cpp_time"] = agg.get("total_run_cpp_time", 0.0) + cpp


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

    @api_boundary
    def __call__(self, exec_info: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if exec_info is not None:
            exec_info["call_run_start_time"] = time.perf_counter()
        st = self.stencil_object  # run(), without passing the arguments on once more
        b = st._args.for_run(self.domain, self.origin, kwargs)
        go = b.go
        if go is not None and exec_info is None and not b.scalars:  # _launch's first branch
            go(b.flat)
            return
        st._launch(b, kwargs, exec_info, False)
        if exec_info is not None:
            exec_info["origin"] = dict(self.origin)
            exec_info["call_run_end_time"] = time.perf_counter()


def _normalised_key(fields: Mapping[str, Any], origin: Any, dkey: Any) -> Any:
    """What the normalised origins and domain of a call (and the checks of its fields) depend
    on: each field's shape, dtype, device and ``__gt_origin__``, the origin and domain given;
    None where one of them cannot be a key."""
    okey = spec_key(origin)
    if okey is NotImplemented or dkey is NotImplemented:
        return None
    per: list[Any] = []
    for a in fields.values():
        if a is None or not hasattr(a, "shape") or not hasattr(a, "dtype"):
            per.append(None if a is None else id(a))
            continue
        gt_origin = getattr(a, "__gt_origin__", None)
        if gt_origin is not None:
            gt_origin = tuple(int(x) for x in gt_origin)
        per.append((tuple(a.shape), a.dtype.str, hasattr(a, "__cuda_array_interface__"), gt_origin))
    return (okey, dkey, tuple(per))


def _all_origin(exec_info: dict[str, Any], origin: Any) -> None:
    """gt4py's ``exec_info["origin"]`` holds the call's ``_all_`` entry beside the fields': the
    origin given for all fields (a tuple, or an int for K), or the ``_all_`` of a dict."""
    if isinstance(origin, Mapping):
        if "_all_" in origin:
            exec_info["origin"]["_all_"] = tuple(int(x) for x in origin["_all_"])
    elif isinstance(origin, int | np.integer):
        exec_info["origin"]["_all_"] = (0, 0, int(origin))
    elif origin is not None:
        exec_info["origin"]["_all_"] = tuple(int(x) for x in origin)
