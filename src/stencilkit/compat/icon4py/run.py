"""Run one stencil (a stencilkit ``Program`` or ``FieldOperator``) on random inputs, on several
backends, and compare the results with the embedded backend's.

The steps and what each records in a :class:`Outcome` (``status[stage]`` is ``"ok"``,
``"fail"`` or ``"skip"``; ``reasons[stage]`` says why for the others):

``parse``    the stencil's IR exists (``ir_text()`` forced where stencilkit parses lazily);
``feed``     random arguments can be built from the parameter types;
``embedded`` it runs on the embedded backend (vertical ranges tried in turn, see ``inputs``);
``<b>``      it runs on backend ``b`` (``cpu``, ``gpu``) with the same inputs;
``agree_<b>`` every written field equals embedded's: NaN where embedded has NaN, else within
             ``rtol * |x| + rtol * max|x|`` (exact for integer and bool fields).
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core.dims import Dimension
from ...core.types import FieldType, ScalarType, TupleType, TypeSpec
from ...ir import nodes as ir
from ...stages.interface import written_params
from .inputs import (
    VERTICAL_RANGES,
    domain_roles,
    horizontal_domain,
    make_args,
)
from .mesh import IconMesh
from .scalar import column_wrapper, is_scalar_type

__all__ = ["Outcome", "StageTimeout", "describe", "run_stencil", "time_limit"]


class StageTimeout(BaseException):
    """A stage ran past its time limit (a BaseException so that no ``except Exception``
    inside the library swallows it)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`StageTimeout` in the main thread after ``seconds`` (0: no limit)."""
    if seconds <= 0:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise StageTimeout(f"timed out after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_SITE = re.compile(r"(?<![\w/])/\S*?/(site-packages|dist-packages|site)/")


def describe(err: BaseException, limit: int = 400, where: str = "") -> str:
    """``Type: message`` on one line, shortened; keeps stencilkit's ``file:line`` location.
    With ``where`` (a path fragment such as ``"icon4py/"``), the innermost traceback frame in
    such a file is added: ``(at icon4py/model/common/field_type_aliases.py:21)``."""
    text = _SITE.sub("", " ".join(str(err).split()))
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    out = f"{type(err).__name__}: {text}" if text else type(err).__name__
    if where:
        tb, at = err.__traceback__, ""
        while tb is not None:
            fname = tb.tb_frame.f_code.co_filename
            if where in fname:
                at = f"{where}{fname.split(where, 1)[1]}:{tb.tb_lineno}"
            tb = tb.tb_next
        if at:
            out += f" (at {at})"
    return out


@dataclass
class Outcome:
    status: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    attempt: int | None = None
    max_error: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    def fail(self, stage: str, reason: str) -> None:
        self.status[stage] = "fail"
        self.reasons[stage] = reason

    def skip(self, stage: str, reason: str) -> None:
        self.status[stage] = "skip"
        self.reasons[stage] = reason


def _parse(obj: Any) -> ir.Node:
    """Force parsing; the IR node (``ir.Program`` or ``ir.FieldOperator``)."""
    text = getattr(obj, "ir_text", None)
    if callable(text):
        text()
    defn = getattr(obj, "__stencilkit_operator__", None)
    if defn is None:
        defn = obj.definition
    if not isinstance(defn, ir.Program | ir.FieldOperator):
        raise TypeError(f"{obj!r} has no stencilkit IR (definition is {type(defn).__name__})")
    return defn


def _scalar_operator(obj: Any, defn: ir.Node) -> bool:
    return (
        isinstance(defn, ir.FieldOperator)
        and not getattr(obj, "__stencilkit_scan__", None)
        and is_scalar_type(defn.body.type)
        and all(is_scalar_type(p.type) for p in defn.params)
    )


def _leaves(t: TypeSpec) -> list[TypeSpec]:
    return [x for s in t.types for x in _leaves(s)] if isinstance(t, TupleType) else [t]


def _values(v: Any) -> list[Any]:
    if isinstance(v, tuple | list):
        return [x for s in v for x in _values(s)]
    return [v]


class _Call:
    """How to run one stencil with fresh fields on a backend; returns the written fields."""

    def __init__(self, obj: Any, defn: ir.Node, mesh: IconMesh, seed: int, attempt: int) -> None:
        self.obj, self.mesh = obj, mesh
        self.out_type: TypeSpec | None = None
        if isinstance(defn, ir.Program):
            written = written_params(defn)
            self.args = make_args(defn.params, mesh, seed, attempt, domain_roles(defn), written)
            flat = [q for p in defn.params for q in _flat_names(p.name, p.type)]
            self.compared = [i for i, name in enumerate(flat) if name in written]
            self.domain: dict[Any, tuple[int, int]] | None = None
            return
        assert isinstance(defn, ir.FieldOperator)
        scan = getattr(obj, "__stencilkit_scan__", None)
        params = defn.params
        out_type = defn.body.type
        if scan:  # a scan's scalar parameters are fed columns over (Cell, axis)
            cols = (Dimension("Cell"), scan[0])
            params = tuple(ir.Param(p.name, _columns(p.type, cols)) for p in defn.params[1:])
            out_type = _columns(out_type, cols)
        self.args = make_args(params, mesh, seed, attempt)
        leaves = _leaves(out_type)
        if not all(isinstance(t, FieldType) for t in leaves):
            raise _NotFed(f"returns {out_type}: only field results can be written to out=")
        self.out_type = out_type
        self.out = make_args(
            (ir.Param("__out", out_type),),
            mesh,
            seed + 1,
            attempt,
            None,
            {n for n in _flat_names("__out", out_type)},
        )
        dims = {t.dims for t in leaves if isinstance(t, FieldType)}
        self.domain = horizontal_domain(mesh, next(iter(dims)), attempt) if len(dims) == 1 else None
        self.compared = list(range(len(leaves)))

    def run(self, backend: Any, allocator: Any = None) -> list[Any]:
        provider = self.mesh.offset_provider(allocator)
        runner = self.obj.with_backend(backend)
        fields = self.args.fields(allocator)
        if self.out_type is None:
            runner(*fields, offset_provider=provider)
            flat = _values(fields)
        else:
            out = self.out.fields(allocator)[0]
            kw: dict[str, Any] = {"out": out, "offset_provider": provider}
            if self.domain is not None:
                kw["domain"] = self.domain
            runner(*fields, **kw)
            flat = _values(out)
        return [_numpy(flat[i]) for i in self.compared]


class _NotFed(Exception):
    pass


def _columns(t: TypeSpec, dims: tuple[Dimension, ...]) -> TypeSpec:
    """Every scalar of ``t`` as a field over ``dims``."""
    if isinstance(t, TupleType):
        return TupleType(tuple(_columns(s, dims) for s in t.types))
    return FieldType(dims, t.dtype) if isinstance(t, ScalarType) else t


def _flat_names(name: str, t: TypeSpec) -> list[str]:
    if isinstance(t, TupleType):
        return [q for i, s in enumerate(t.types) for q in _flat_names(f"{name}__{i}", s)]
    return [name]


def _numpy(v: Any) -> Any:
    return v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v)


def compare(ref: list[Any], got: list[Any], rtol: float) -> tuple[bool, float]:
    """All arrays equal within tolerance (NaN-aware); the largest absolute difference."""
    worst = 0.0
    ok = True
    for a, b in zip(ref, got):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False, float("inf")
        if a.dtype.kind in "biu":
            bad = int(np.count_nonzero(a != b))
            ok &= bad == 0
            worst = max(worst, float(bad))
            continue
        nan = np.isnan(a)
        if not np.array_equal(nan, np.isnan(b)):
            return False, float("nan")
        fa, fb = a[~nan].astype(np.float64), b[~nan].astype(np.float64)
        if fa.size == 0:
            continue
        finite = np.isfinite(fa)
        scale = float(np.max(np.abs(fa[finite]))) if finite.any() else 1.0
        same_inf = np.array_equal(fa[~finite], fb[~finite])
        diff = np.abs(fa[finite] - fb[finite])
        worst = max(worst, float(diff.max()) if diff.size else 0.0)
        ok &= same_inf and bool(np.all(diff <= rtol * np.abs(fa[finite]) + rtol * scale))
    return ok, worst


def run_stencil(
    obj: Any,
    mesh: IconMesh,
    backends: dict[str, tuple[Any, Any]],
    *,
    seed: int = 0,
    rtol: float = 1e-12,
    timeout: float = 0.0,
) -> Outcome:
    """Parse, feed and run ``obj`` on embedded and on each of ``backends`` (name -> (backend,
    allocator)), comparing with embedded."""
    out = Outcome()
    t0 = time.perf_counter()
    try:
        with time_limit(timeout):
            _run(obj, mesh, backends, seed, rtol, out)
    except StageTimeout as err:
        stage = next(
            (s for s in ("parse", "feed", "embedded", *backends) if s not in out.status), "embedded"
        )
        out.fail(stage, describe(err))
    out.seconds = time.perf_counter() - t0
    return out


def _run(
    obj: Any,
    mesh: IconMesh,
    backends: dict[str, tuple[Any, Any]],
    seed: int,
    rtol: float,
    out: Outcome,
) -> None:
    try:
        defn = _parse(obj)
    except Exception as err:
        out.fail("parse", describe(err))
        return
    out.status["parse"] = "ok"
    if isinstance(defn, ir.FieldOperator) and _scalar_operator(obj, defn):
        try:  # a helper of scalars: run as icon4py does, inside a scan over K
            obj = column_wrapper(obj, defn)
            defn = _parse(obj)
        except Exception as err:
            out.fail("feed", f"as a column (in a scan operator): {describe(err)}")
            return
    ref: list[Any] | None = None
    call: _Call | None = None
    first_error = ""
    for attempt in range(len(VERTICAL_RANGES)):
        try:
            call = _Call(obj, defn, mesh, seed, attempt)
        except _NotFed as err:
            out.skip("feed", str(err))
            return
        except Exception as err:
            out.fail("feed", describe(err))
            return
        out.status["feed"] = "ok"
        try:
            ref = call.run(None)
        except Exception as err:
            first_error = first_error or describe(err)
            continue
        out.attempt = attempt
        break
    if ref is None or call is None:
        out.fail("embedded", first_error)
        return
    out.status["embedded"] = "ok"
    for name, (backend, allocator) in backends.items():
        try:
            got = call.run(backend, allocator)
        except Exception as err:
            out.fail(name, describe(err))
            continue
        out.status[name] = "ok"
        ok, worst = compare(ref, got, rtol)
        out.max_error[name] = worst
        if ok:
            out.status[f"agree_{name}"] = "ok"
        else:
            out.fail(
                f"agree_{name}", f"results differ from embedded (largest difference {worst:.3g})"
            )
