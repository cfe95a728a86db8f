"""``StencilTestSuite``: a class that pytest turns into build and run tests of one stencil.

Each subclass is read when it is created (its metaclass): its ``symbols``, ``dtypes`` and
``backends`` give the cases (one per backend, dtype combination and value of each
``global_name(one_of=...)``), and two parametrized tests are added to the class:

- ``test_generation[<case>]`` builds the stencil for the case (``rebuild=True``) and checks that
  the halo it reads covers every field's declared ``boundary`` in I and J;
- ``test_implementation[<case>]`` draws a domain in ``domain_range`` and random data (the
  fields' values uniformly in their ``in_range``, with a seed Hypothesis chooses, so a failure
  replays), calls the stencil with the halo's lower corner as origin, runs ``validation`` on
  NumPy copies cut to each field's own boundary, and compares every field **whole** (its halo
  and the points nothing writes included) with ``numpy.testing.assert_allclose``.

The case ids are gt4py's: ``<backend>[_<global>_<value>...][_<symbol>_<dtype>...]``.
"""

from __future__ import annotations

import inspect
import itertools
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest

from .. import gtscript
from ..backend import from_name
from ..definitions import AccessKind
from ..storage import from_array
from ..storage_utils import cpu_copy
from .symbols import Symbol, SymbolKind, random_array, scalar_strategy

__all__ = ["RTOL", "ATOL", "StencilTestSuite"]

RTOL = 1e-05
ATOL = 1e-08
_REQUIRED = ("backends", "definition", "domain_range", "dtypes", "symbols", "validation")
_AXES = "IJK"


def _dtype_groups(dtypes: Any, names: Sequence[str]) -> dict[tuple[str, ...], list[np.dtype[Any]]]:
    """``dtypes`` as {(names...): [dtype, ...]}: a bare sequence applies to every symbol."""
    if isinstance(dtypes, Mapping):
        items = list(dtypes.items())
    elif isinstance(dtypes, Sequence) and not isinstance(dtypes, str):
        items = [(tuple(names), dtypes)]
    else:
        raise TypeError(f"'dtypes' must be a sequence or a mapping of dtypes, got {dtypes!r}")
    groups: dict[tuple[str, ...], list[np.dtype[Any]]] = {}
    for key, value in items:
        key = (key,) if isinstance(key, str) else tuple(key)
        if not all(isinstance(k, str) for k in key):
            raise TypeError(f"'dtypes': a key is a symbol name or a tuple of them, got {key!r}")
        if isinstance(value, type | np.dtype | str):
            value = (value,)
        groups[key] = [np.dtype(v) for v in value]
    flat = [k for key in groups for k in key]
    if len(flat) != len(set(flat)):
        raise ValueError("'dtypes': a symbol can be in only one group")
    return groups


def _dtype_combinations(groups: dict[tuple[str, ...], list[np.dtype[Any]]]) -> list[dict[str, Any]]:
    combos = []
    for choice in itertools.product(*groups.values()):
        combos.append({n: dt for key, dt in zip(groups, choice) for n in key})
    return combos


def _backend_name(b: Any) -> str:
    name = b if isinstance(b, str) else getattr(b, "values", (None,))[0]
    if not isinstance(name, str):
        raise TypeError(f"'backends' must be backend names (or pytest.param(name)), got {b!r}")
    return name


def _check_signatures(cls_name: str, definition: Any, validation: Any) -> tuple[list[str], ...]:
    """The definition's inputs and keyword-only parameters; the validation must start with
    the same names, of the same kinds."""
    if not isinstance(definition, types.FunctionType):
        raise TypeError(f"{cls_name}.definition must be a stencil definition function")
    if not isinstance(validation, types.FunctionType):
        raise TypeError(f"{cls_name}.validation must be a function (the NumPy reference)")
    inputs: list[str] = []
    params: list[str] = []
    d_sig = inspect.signature(definition).parameters.values()
    v_sig = inspect.signature(validation).parameters.values()
    for d, v in zip(d_sig, v_sig):
        if d.name != v.name or d.kind != v.kind:
            raise ValueError(
                f"{cls_name}: 'definition' and 'validation' disagree at parameter '{d.name}'"
                f" (validation has '{v.name}'): the validation takes the definition's"
                " parameters, then domain and origin"
            )
        (params if d.kind == inspect.Parameter.KEYWORD_ONLY else inputs).append(d.name)
    return inputs, params


class _SuiteMeta(type):
    """Reads a suite's class body and adds its parametrized tests."""

    def __new__(mcs, cls_name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if ns.get("_skip_", False):
            return super().__new__(mcs, cls_name, bases, ns)
        for key in _REQUIRED:  # inherited members count
            if key not in ns:
                for base in bases:
                    if hasattr(base, key):
                        ns[key] = base.__dict__.get(key, getattr(base, key))
                        break
        missing = [k for k in _REQUIRED if k not in ns]
        if missing:
            raise TypeError(f"test suite {cls_name} lacks {', '.join(missing)}")
        definition = ns["definition"]
        if isinstance(definition, staticmethod):
            definition = definition.__func__
        validation = ns["validation"]
        if isinstance(validation, staticmethod):
            validation = validation.__func__
        ns["definition"], ns["validation"] = staticmethod(definition), staticmethod(validation)
        symbols: Mapping[str, Symbol] = ns["symbols"]
        if not isinstance(symbols, Mapping) or not all(
            isinstance(s, Symbol) for s in symbols.values()
        ):
            raise TypeError(f"{cls_name}.symbols maps names to field(), parameter(), ... values")
        domain_range = [tuple(r) for r in ns["domain_range"]]
        if not 1 <= len(domain_range) <= 3 or any(len(r) != 2 or r[0] > r[1] for r in domain_range):
            raise ValueError(
                f"{cls_name}.domain_range is up to 3 pairs (min, max), got {domain_range}"
            )
        ns["domain_range"] = domain_range + [(1, 1)] * (3 - len(domain_range))
        ns["ndims"] = len(domain_range)
        inputs, params = _check_signatures(cls_name, definition, validation)
        runtime = {n for n, s in symbols.items() if s.kind in _RUNTIME}
        if set(inputs + params) != runtime:
            raise ValueError(
                f"{cls_name}: the definition's parameters {sorted(inputs + params)} must be the"
                f" field/parameter/none symbols {sorted(runtime)}"
            )
        ns["_groups"] = groups = _dtype_groups(ns["dtypes"], list(symbols))
        typed = {n for key in groups for n in key}
        untyped = [n for n, s in symbols.items() if s.kind in _TYPED and n not in typed]
        if untyped:
            raise ValueError(f"{cls_name}.dtypes gives no dtype to {', '.join(untyped)}")
        backends = list(ns["backends"])
        for b in backends:
            from_name(_backend_name(b))  # an unknown name raises, listing the known ones
        bounds = [s.boundary for s in symbols.values() if s.kind is SymbolKind.FIELD]
        ns["max_boundary"] = tuple(
            (
                max((b[d][0] for b in bounds if b), default=0),
                max((b[d][1] for b in bounds if b), default=0),
            )
            for d in range(3)
        )
        ns["origin"] = tuple(lo for lo, _ in ns["max_boundary"])
        cls = super().__new__(mcs, cls_name, bases, ns)
        cls.tests = tests = _cases(cls, backends)  # type: ignore[attr-defined]
        gen = [pytest.param(t, marks=t["marks"], id=t["id"]) for t in tests]

        # fresh functions per class: pytest keeps the parametrization on the function object
        def test_generation(self: Any, test: dict[str, Any]) -> None:
            _build(type(self), test)

        def test_implementation(self: Any, test: dict[str, Any]) -> None:
            _implementation(type(self), test)

        cls.test_generation = pytest.mark.parametrize("test", gen)(test_generation)  # type: ignore[attr-defined]
        cls.test_implementation = pytest.mark.parametrize("test", gen)(test_implementation)  # type: ignore[attr-defined]
        return cls


_RUNTIME = (SymbolKind.FIELD, SymbolKind.PARAMETER, SymbolKind.NONE)
_TYPED = (SymbolKind.FIELD, SymbolKind.PARAMETER, SymbolKind.GLOBAL_SET, SymbolKind.GLOBAL_STRATEGY)


def _cases(cls: Any, backends: list[Any]) -> list[dict[str, Any]]:
    """One case per backend, dtype combination and combination of the ``one_of`` externals."""
    sets = {n: s.values for n, s in cls.symbols.items() if s.kind is SymbolKind.GLOBAL_SET}
    tests: list[dict[str, Any]] = []
    for b in backends:
        name = _backend_name(b)
        marks = list(getattr(b, "marks", ()))
        if from_name(name).storage_info["device"] == "gpu":
            marks.append(pytest.mark.requires_gpu)
        for dtypes in _dtype_combinations(cls._groups):
            for values in itertools.product(*sets.values()):
                constants = {n: dtypes[n].type(v) for n, v in zip(sets, values)}
                case_id = name + "".join(f"_{k}_{v}" for k, v in constants.items())
                case_id += "".join(f"_{k}_{dt.name}" for k, dt in dtypes.items())
                tests.append({
                    "backend": name, "suite": cls.__name__, "constants": constants,
                    "dtypes": dtypes, "id": case_id, "test_id": len(tests), "implementation": None,
                    "marks": [*marks, pytest.mark.xdist_group(name=f"{cls.__name__}_{case_id}")],
                    "definition": _annotated(cls, dtypes),
                })  # fmt: skip
    return tests


def _annotated(cls: Any, dtypes: dict[str, np.dtype[Any]]) -> Callable[..., Any]:
    """A copy of the definition whose parameters are annotated with this case's dtypes."""
    fn = cls.definition
    copy = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    annotations = dict(getattr(fn, "__annotations__", {}))
    for name in inspect.signature(fn).parameters:
        sym = cls.symbols[name]
        if sym.kind is SymbolKind.FIELD:
            axes = getattr(gtscript, sym.field_axes)
            annotations[name] = gtscript.Field[axes, (dtypes[name].type, sym.data_dims)]
        elif sym.kind is SymbolKind.PARAMETER or name not in annotations:
            annotations[name] = dtypes[name].type
    copy.__annotations__ = annotations
    return copy


def _externals(cls: Any, test: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    externals = dict(test["constants"])
    for name, sym in cls.symbols.items():
        if sym.kind is SymbolKind.SINGLETON:
            externals[name] = sym.values[0]
        elif sym.kind is SymbolKind.GLOBAL_STRATEGY:
            dt = test["dtypes"][name]
            externals[name] = random_array(rng, dt, (), *sym.in_range)[()]
    return externals


def _build(cls: Any, test: dict[str, Any]) -> Any:
    """Build the case's stencil (always afresh) and check the halo it reads."""
    rng = np.random.default_rng(test["test_id"])
    externals = _externals(cls, test, rng)
    slug = "".join(c for c in test["backend"] if c.isalnum())
    impl = gtscript.stencil(
        backend=test["backend"], definition=test["definition"], rebuild=True, externals=externals,
        name=f"{cls.__module__}.{test['suite']}_{slug}_{test['test_id']}",
    )  # fmt: skip
    assert impl.backend == test["backend"]
    for name, info in impl.field_info.items():
        if info is None or info.access == AccessKind.NONE:
            continue
        declared = cls.symbols[name].boundary
        for pos, ax in enumerate(info.axes):
            if ax == "K":
                continue
            have, want = info.boundary[pos], declared[_AXES.index(ax)]
            assert have[0] >= want[0] and have[1] >= want[1], (
                f"field '{name}': the stencil reads a halo of {have} along {ax}, less than the"
                f" declared boundary {want}"
            )
    test["implementation"], test["externals"] = impl, externals
    return impl


def _implementation(cls: Any, test: dict[str, Any]) -> None:
    impl = test["implementation"] or _build(cls, test)
    scalars = {
        n: (scalar_strategy(test["dtypes"][n], *s.in_range) if s.in_range is not None
            else st.sampled_from(s.values).map(test["dtypes"][n].type))
        for n, s in cls.symbols.items() if s.kind is SymbolKind.PARAMETER
    }  # fmt: skip
    domain_st = st.tuples(*(st.integers(lo, hi) for lo, hi in cls.domain_range))
    inputs = st.tuples(domain_st, st.integers(0, 2**32 - 1), st.fixed_dictionaries(scalars))

    limit = {} if cls.max_examples is None else {"max_examples": cls.max_examples}

    # no deadline: a first call binds its arrays (and a compiled backend loads), later ones not
    @hypothesis.settings(deadline=None, **limit)
    @hypothesis.given(drawn=inputs)
    def check(drawn: tuple[tuple[int, ...], int, dict[str, Any]]) -> None:
        _run_case(cls, test, impl, *drawn)

    check()


def _run_case(
    cls: Any, test: dict[str, Any], impl: Any, domain: tuple[int, ...], seed: int,
    scalars: dict[str, Any],
) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    max_b, origin = cls.max_boundary, cls.origin
    stored: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    views: dict[str, Any] = {}
    for name, sym in cls.symbols.items():
        if sym.kind is SymbolKind.NONE:
            stored[name] = views[name] = None
        elif sym.kind is SymbolKind.PARAMETER:
            stored[name] = views[name] = scalars[name]
        elif sym.kind is SymbolKind.FIELD:
            dims = [_AXES.index(a) for a in _AXES if a in sym.field_axes]
            shape = tuple(domain[d] + max_b[d][0] + max_b[d][1] for d in dims)
            dt = test["dtypes"][name]
            data = random_array(rng, dt, shape + sym.data_dims, *sym.in_range)
            stored[name] = from_array(
                data, dtype=(dt, sym.data_dims) if sym.data_dims else dt, backend=impl.backend,
                dimensions=tuple(_AXES[d] for d in dims), aligned_index=tuple(origin[d] for d in dims),
            )  # fmt: skip
            expected[name] = data.copy()
            own = sym.boundary
            cut = tuple(
                slice(max_b[d][0] - own[d][0], shape[i] - (max_b[d][1] - own[d][1]))
                for i, d in enumerate(dims)
            )
            views[name] = expected[name][cut]
    impl(**stored, origin=origin, domain=domain, exec_info={})
    fn = cls.validation
    scope = {**fn.__globals__, **test.get("externals", {})}
    reference = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    reference.__kwdefaults__ = fn.__kwdefaults__
    origins = {n: i.boundary.lower_indices for n, i in impl.field_info.items() if i is not None}
    reference(**views, domain=domain, origin=origins)
    for name, want in expected.items():
        np.testing.assert_allclose(
            cpu_copy(stored[name]), want, rtol=RTOL, atol=ATOL, equal_nan=False,
            err_msg=f"Wrong data in output field '{name}'",
        )  # fmt: skip


class StencilTestSuite(metaclass=_SuiteMeta):
    """Base of every suite: derive a class named ``Test...`` and give it ``dtypes``,
    ``domain_range``, ``backends``, ``symbols``, ``definition`` and ``validation`` (see the
    module's docstring); pytest collects its ``test_generation`` and ``test_implementation``."""

    _skip_ = True
    tests: ClassVar[list[dict[str, Any]]]
    #: how many random inputs ``test_implementation`` tries (None: Hypothesis's setting)
    max_examples: ClassVar[int | None] = None
