"""The gpu target's ``tune`` stage without a GPU: CuPy, the launcher and the timer are replaced
by fakes that record what a block search would launch.

Regression (H200, 2026-12-01): a kernel compiled in one variant only (a scan, a 1-D kernel) over
a large domain was still timed by ``choose_blocks``, but with an argument block holding only the
plan's constants — every field pointer null — and the first timing launch hit an illegal address.
Every launch a search makes must have every field and table pointer set.

Locality orders (issue 13): a kernel gathering through a scattered table is offered its ordered
variants, the search times both orders whatever its budget, and the choice is stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64
from stencilkit.backends.compiled import CompiledRunner
from stencilkit.backends.cuda import backend as cuda_backend
from stencilkit.backends.cuda import tuning
from stencilkit.backends.cuda.backend import CudaTarget
from stencilkit.backends.cuda.codegen import PLAIN, Variant
from stencilkit.backends.cuda.tuning import worth_searching
from stencilkit.meshes import (
    C2E,
    C2EDim,
    Cell,
    Edge,
    periodic_triangular_mesh,
    reorder_for_locality,
)
from stencilkit.stages.interface import interface_of

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
F1 = Field[Dims[I], float64]
F3 = Field[Dims[I, J, K], float64]


@gtx.field_operator
def _twice(a: F1) -> F1:
    return 2.0 * a


@gtx.program(backend=gtx.gpu)
def run_twice(a: F1, out: F1):
    _twice(a, out=out)


@gtx.scan_operator(axis=K, forward=True, init=0.0)
def _cumsum(carry: float, x: float) -> float:
    return carry + x


@gtx.program(backend=gtx.gpu)
def run_cumsum(a: F3, out: F3):
    _cumsum(a, out=out)


@gtx.field_operator
def _lap(a: F3) -> F3:
    return a(I + 1) + a(I - 1) - 2.0 * a


@gtx.program(backend=gtx.gpu)
def run_lap(a: F3, out: F3):
    _lap(a, out=out, domain={I: (1, 63), J: (0, 64), K: (0, 80)})


class _FakeLauncher:
    def __init__(self, function: Any, buf: np.ndarray, extra: tuple[int, ...] = ()) -> None:
        self.function, self.buf, self.extra = function, buf, extra

    def launch(self, *args: Any) -> None:
        pass


def _fake_cupy() -> Any:
    stream = SimpleNamespace(ptr=0, is_capturing=lambda: False)
    addresses = iter(range(1 << 40, 1 << 41, 1 << 30))

    def zeros(n: int, dtype: Any = None) -> Any:
        return SimpleNamespace(data=SimpleNamespace(ptr=next(addresses)), nbytes=n)

    return SimpleNamespace(
        cuda=SimpleNamespace(get_current_stream=lambda: stream), zeros=zeros, uint8=np.uint8
    )


def _fake_gpu(monkeypatch: pytest.MonkeyPatch, choose_blocks: Any, cupy: Any = None) -> None:
    """The backend's GPU access replaced: fake CuPy and launcher, ``choose_blocks`` recording."""
    fake = cupy or _fake_cupy()
    monkeypatch.setattr(cuda_backend, "cupy", lambda: fake)
    monkeypatch.setattr(cuda_backend, "Launcher", _FakeLauncher)
    monkeypatch.setattr(cuda_backend, "choose_blocks", choose_blocks)
    monkeypatch.setattr(cuda_backend, "table_fingerprint", lambda *args: "")
    monkeypatch.setattr(cuda_backend, "device_name", lambda device: "fake GPU")
    monkeypatch.setattr(
        cuda_backend.grid, "device_limits", lambda device: cuda_backend.grid.DEFAULT_LIMITS
    )


@pytest.mark.parametrize("which", ["one-dimensional", "scan", "three-dimensional"])
def test_every_timed_launch_has_every_pointer(
    which: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rng = np.random.default_rng(3)
    if which == "one-dimensional":
        prog, shape, dims = run_twice, (1 << 19,), [I]
    elif which == "scan":
        prog, shape, dims = run_cumsum, (520, 520, 4), [I, J, K]  # 270,400 columns: searched
    else:
        prog, shape, dims = run_lap, (64, 64, 80), [I, J, K]
    a = gtx.as_field(dims, rng.random(shape))
    out = gtx.as_field(dims, rng.random(shape))
    fake = _fake_cupy()
    calls: list[tuple[Any, list[int], dict[Any, Any]]] = []

    def choose_blocks(k: Any, extents: list[int], launchers: dict[Any, Any], *rest: Any) -> Any:
        calls.append((k, extents, launchers))
        return PLAIN, (32, 4, 1)

    _fake_gpu(monkeypatch, choose_blocks, fake)

    target = CudaTarget(arch="90")
    runner = CompiledRunner(interface_of(prog.definition), target)
    st = runner.stages([a, out], {}, check_device=False, until="plan")
    planned, bound = st.planned, st.bound
    loaded = SimpleNamespace(
        function=lambda name, ordered=False: name, device_id=0, built=SimpleNamespace(path=tmp_path)
    )
    launches = target.tune(loaded, planned, bound)  # type: ignore[arg-type]

    assert len(launches.kernels) == len(planned.sprog.kernels) == len(calls)
    assert planned.layout is not None
    searched = 0
    for k, extents, launchers in calls:
        if not worth_searching(k, extents):
            continue
        searched += 1
        for launcher in launchers.values():
            null = [f.name for f in planned.layout.fields if int(launcher.buf[f.ptr]) == 0]
            assert not null, f"{k.name}: a timed launch with null pointers for {null}"
            # outputs are scratch memory: the search never writes the caller's fields
            for f in planned.layout.fields:
                if f.name in k.outs:
                    assert int(launcher.buf[f.ptr]) != bound.fields[f.name].address
    assert searched >= 1, [
        (k.name, e) for k, e, _ in calls
    ]  # every case is large enough to be searched


def test_a_search_without_pointers_is_an_internal_error_not_a_launch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The guard behind the fix: if a timing block ever lacks a pointer again, the stage stops
    with an InternalError before any launch (on a GPU: instead of an illegal address)."""
    from stencilkit.core.errors import InternalError

    a = gtx.as_field([I], np.random.default_rng(4).random(1 << 19))
    out = gtx.as_field([I], np.zeros(1 << 19))
    launched: list[Any] = []
    monkeypatch.setattr(cuda_backend, "cupy", _fake_cupy)
    monkeypatch.setattr(cuda_backend, "Launcher", _FakeLauncher)
    monkeypatch.setattr(cuda_backend, "choose_blocks", lambda *args: launched.append(args))
    monkeypatch.setattr(
        cuda_backend, "_timing_block", lambda planned, bound: (planned.new_block(), [])
    )
    target = CudaTarget(arch="90")
    runner = CompiledRunner(interface_of(run_twice.definition), target)
    st = runner.stages([a, out], {}, check_device=False, until="plan")
    loaded = SimpleNamespace(
        function=lambda name, ordered=False: name, device_id=0, built=SimpleNamespace(path=tmp_path)
    )
    with pytest.raises(InternalError, match=r"null pointers for \['a', 'out'\]"):
        target.tune(loaded, st.planned, st.bound)  # type: ignore[arg-type]
    assert not launched


# ----------------------------------------------------------------------------- locality orders

FC = Field[Dims[Cell, K], float64]
FE = Field[Dims[Edge, K], float64]


@gtx.field_operator
def _c2e_sum(e: FE) -> FC:
    return gtx.neighbor_sum(e(C2E), axis=C2EDim)


@gtx.program(backend=gtx.gpu)
def run_c2e_sum(e: FE, out: FC):
    _c2e_sum(e, out=out)


def _scrambled(table: np.ndarray, n_edges: int, seed: int = 8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows, new_edge = rng.permutation(len(table)), rng.permutation(n_edges)
    return new_edge[table[rows]].astype(np.int32)


def _tune(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, table: np.ndarray, chosen: Variant
) -> tuple[Any, list[tuple[Any, list[int], dict[Any, Any]]]]:
    mesh_cells, nk = len(table), 8  # 32,768 cells x 8 levels: searched
    n_edges = int(table.max()) + 1
    rng = np.random.default_rng(9)
    e = gtx.as_field([Edge, K], rng.random((n_edges, nk)))
    out = gtx.as_field([Cell, K], rng.random((mesh_cells, nk)))
    provider = {"C2E": gtx.as_connectivity([Cell, C2EDim], Edge, table)}
    calls: list[tuple[Any, list[int], dict[Any, Any]]] = []
    wanted: list[Any] = []

    def choose_blocks(k: Any, extents: list[int], launchers: dict[Any, Any], *rest: Any) -> Any:
        calls.append((k, extents, launchers))
        return (chosen if chosen in launchers else PLAIN), (16, 8, 1)

    _fake_gpu(monkeypatch, choose_blocks)
    target = CudaTarget(arch="90")
    runner = CompiledRunner(interface_of(run_c2e_sum.definition), target)
    st = runner.stages([e, out], provider, check_device=False, until="plan")

    def function(name: str, ordered: bool = False) -> str:
        wanted.append(ordered)
        return name

    loaded = SimpleNamespace(function=function, device_id=0, built=SimpleNamespace(path=tmp_path))
    launches = target.tune(loaded, st.planned, st.bound)  # type: ignore[arg-type]
    assert all(wanted) == (chosen in calls[0][2])  # one variant module, with the ordered ones
    return launches, calls


def test_the_search_is_offered_a_locality_order_for_a_scattered_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mesh = periodic_triangular_mesh(128, 128)
    table = _scrambled(mesh.c2e, mesh.n_edges)
    launches, calls = _tune(monkeypatch, tmp_path, table, Variant(4, False, True))
    ((_, extents, launchers),) = calls
    assert extents == [8, mesh.n_cells]
    ordered = [v for v in launchers if v.ordered]
    assert len(ordered) == len(launchers) // 2 == 10
    (kl,) = launches.kernels
    assert kl.name.endswith("_k0_z4_ord") and kl.order is not None
    assert np.array_equal(np.sort(kl.order.points), np.arange(mesh.n_cells))
    for v, launcher in launchers.items():  # the ordered variants get the order's pointer
        if v.ordered:
            assert launcher.launcher is None  # computed at the first timed launch only
            launcher.launch((1, 1, 1), (1, 1, 1), 0)
            assert launcher.launcher.extra == (kl.order.pointer,)
        else:
            assert launcher.extra == ()
    assert "_ord<<<grid" in launches.as_text()


def test_no_locality_order_for_a_local_numbering(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mesh = reorder_for_locality(periodic_triangular_mesh(128, 128))
    launches, calls = _tune(monkeypatch, tmp_path, mesh.c2e, Variant(4, False, True))
    ((_, _, launchers),) = calls
    assert not any(v.ordered for v in launchers) and len(launchers) == 10
    (kl,) = launches.kernels
    assert kl.order is None and not kl.name.endswith("_ord")


class _FakeTimer:
    """Timings of a kernel whose ordered variants are twice as fast; records what was timed."""

    timed: ClassVar[list[tuple[Variant, tuple[int, int, int]]]] = []
    scale = 1.0  # timed on the whole domain: no second timing

    def __init__(self, *args: Any) -> None:
        _FakeTimer.timed = []

    def time(self, launcher: Any, variant: Variant, block: Any, limits: Any) -> float:
        _FakeTimer.timed.append((variant, block))
        return (1.0 if variant.ordered else 2.0) / variant.chunk + block[1] * 1e-3

    def restore(self) -> None:
        pass


@pytest.mark.parametrize("budget", [0.0, 10.0])
def test_the_search_times_both_orders_and_keeps_the_choice(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, budget: float
) -> None:
    """Natural against ordered is measured even when the budget is spent after the first
    timing, and the choice is stored beside the binary like the block (a new process reuses
    it)."""
    monkeypatch.setattr(tuning, "_Timer", _FakeTimer)
    monkeypatch.setattr(tuning, "TUNING_BUDGET_S", budget)
    monkeypatch.setattr(tuning, "_CHOSEN", {})
    variants = [Variant(c, s, o) for o in (False, True) for s in (False, True) for c in (1, 4)]
    launchers = {v: object() for v in variants}
    kernel = SimpleNamespace(name="sk_c2e", outs=("out",), values=())
    extents = [8, 1 << 16]

    def choose() -> Any:
        return tuning.choose_blocks(kernel, extents, launchers, 0, tmp_path, "fake GPU", "tables")  # type: ignore[arg-type]

    variant, block = choose()
    assert any(v.ordered for v, _ in _FakeTimer.timed)
    assert any(not v.ordered for v, _ in _FakeTimer.timed)
    assert variant.ordered
    if budget:
        assert variant == Variant(4, False, True) or variant == Variant(4, True, True)
    stored = (tmp_path / tuning.TUNING_FILE).read_text()
    assert '"ordered": true' in stored
    monkeypatch.setattr(tuning, "_CHOSEN", {})
    _FakeTimer.timed = []
    assert choose() == (variant, block) and not _FakeTimer.timed


def test_a_stored_natural_choice_computes_no_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The order is computed only for a search that times it or an ordered choice: a natural
    choice (here: returned without timing) never pays for it."""
    from stencilkit.backends.cuda import order as order_module

    computed: list[Any] = []
    monkeypatch.setattr(order_module, "locality_order", lambda *a: computed.append(a))
    mesh = periodic_triangular_mesh(128, 128)
    launches, calls = _tune(monkeypatch, tmp_path, _scrambled(mesh.c2e, mesh.n_edges, 3), PLAIN)
    assert any(v.ordered for v in calls[0][2])  # offered
    assert launches.kernels[0].order is None and not computed


def test_the_order_is_prepared_before_the_search_budget(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Computing the order (a second, say) must not use up the search's budget: it happens in
    ``prepare``, before the deadline is set, and the chunk variants are still timed."""
    prepared: list[float] = []

    class Slow:
        buf = None

        def prepare(self) -> None:
            prepared.append(1.0)  # each takes 1000 s of the clock below

    clock = SimpleNamespace(perf_counter=lambda: 1000.0 * len(prepared))
    monkeypatch.setattr(tuning, "time", clock)
    monkeypatch.setattr(tuning, "_Timer", _FakeTimer)
    monkeypatch.setattr(tuning, "_CHOSEN", {})
    variants = [Variant(c, False, o) for o in (False, True) for c in (1, 4)]
    launchers: dict[Any, Any] = {v: (Slow() if v.ordered else object()) for v in variants}
    kernel = SimpleNamespace(name="sk_c2e", outs=("out",), values=())
    tuning.choose_blocks(kernel, [8, 1 << 16], launchers, 0)  # type: ignore[arg-type]
    assert len(prepared) == 2
    assert {v for v, _ in _FakeTimer.timed} == set(variants)


@contextmanager
def _background_tune(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    seed: int,
    choose_blocks: Any,
    stored: Any,
    function: Any = lambda name, ordered=False: name,
) -> Iterator[tuple[CudaTarget, Any, Any, list[bool]]]:
    """STENCILKIT_TUNE=background, the Laplacian planned on 64x64x80 random fields, a fake GPU
    whose tuning returns ``choose_blocks``'s choice, ``stored`` as the stored choice, and a
    loaded module whose variants are not built: (target, loaded, stages, builds started)."""
    from stencilkit.toolchain.config import reset_config

    monkeypatch.setenv("STENCILKIT_TUNE", "background")
    reset_config()
    rng = np.random.default_rng(seed)
    a = gtx.as_field([I, J, K], rng.random((64, 64, 80)))
    out = gtx.as_field([I, J, K], rng.random((64, 64, 80)))
    _fake_gpu(monkeypatch, choose_blocks)
    monkeypatch.setattr(cuda_backend, "stored_choice", lambda *args: stored)
    started: list[bool] = []
    loaded = SimpleNamespace(
        function=function,
        device_id=0,
        built=SimpleNamespace(path=tmp_path),
        variants_at_hand=lambda ordered: False,
        build_variants_in_background=started.append,
    )
    target = CudaTarget(arch="90")
    runner = CompiledRunner(interface_of(run_lap.definition), target)
    st = runner.stages([a, out], {}, check_device=False, until="plan")
    try:
        yield target, loaded, st, started
    finally:
        monkeypatch.delenv("STENCILKIT_TUNE")
        reset_config()


def test_variants_build_in_the_background_and_the_first_choice_is_provisional(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """STENCILKIT_TUNE=background (the default): a first call whose search would first compile
    the z-chunk variants times the plain kernel only, starts their build, and is marked
    provisional (not stored); ``final=True`` (a later call, once built) searches every variant."""
    calls: list[tuple[dict[Any, Any], dict[str, Any]]] = []

    def choose_blocks(
        k: Any, extents: list[int], launchers: dict[Any, Any], *rest: Any, **kw: Any
    ) -> Any:
        calls.append((launchers, kw))
        return PLAIN, (32, 4, 1)

    with _background_tune(monkeypatch, tmp_path, 4, choose_blocks, None) as (
        target,
        loaded,
        st,
        started,
    ):
        first = target.tune(loaded, st.planned, st.bound)
        assert first.provisional and started == [False]
        # nothing timed: the plain kernel with its default block, until the variants are built
        assert calls == []
        (launch,) = first.kernels
        assert launch.name.endswith("_k0")  # the plain variant
        assert launch.block == tuning.default_block(cuda_backend._extents(st.planned, 0))
        assert "provisional" in first.as_text()
        calls.clear()
        final = target.tune(loaded, st.planned, st.bound, final=True)
        assert not final.provisional
        assert len(calls[0][0]) > 1 and calls[0][1] == {}  # every variant, remembered


@pytest.mark.parametrize("stored", ["chunk", "plain"])
def test_a_stored_choice_without_its_variant_module_is_provisional(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, stored: str
) -> None:
    """A choice stored beside the plain module (an earlier process) that names a z-chunk
    variant, where the variant module is not built (another STENCILKIT_CUDA_LOADS_FIRST, an
    upgrade): the first call runs the plain kernel and builds the variants in the background,
    instead of building them before it runs. A stored plain choice needs no variant module."""
    choice = (Variant(4, True), (64, 2, 1)) if stored == "chunk" else (PLAIN, (64, 2, 1))
    asked: list[str] = []

    def choose_blocks(k: Any, extents: list[int], launchers: dict[Any, Any], *rest: Any) -> Any:
        return choice  # the stored choice, as tuning.choose_blocks returns it

    def function(name: str, ordered: bool = False) -> str:
        asked.append(name)
        return name

    with _background_tune(monkeypatch, tmp_path, 5, choose_blocks, choice, function) as (
        target,
        loaded,
        st,
        started,
    ):
        first = target.tune(loaded, st.planned, st.bound)
        (launch,) = first.kernels
        if stored == "chunk":
            assert first.provisional and started == [False]
            assert launch.name.endswith("_k0") and asked == []  # no variant's function asked for
            assert launch.block == tuning.default_block(cuda_backend._extents(st.planned, 0))
            final = target.tune(loaded, st.planned, st.bound, final=True)
            assert not final.provisional and final.kernels[0].name.endswith("_k0_z4s")
        else:
            assert not first.provisional and started == []
            assert launch.name.endswith("_k0") and launch.block == (64, 2, 1)


def test_background_builds_run_on_daemon_threads_and_report_errors() -> None:
    """A short script must not wait at exit for a variant build in flight (daemon thread), and a
    failed build is raised where the result is asked for."""
    import threading

    started: list[bool] = []

    def build(source: Any) -> Any:
        started.append(threading.current_thread().daemon)
        if source == "bad":
            raise RuntimeError("compiler said no")
        return f"built {source}"

    ok = cuda_backend._in_background(lambda: build("good"))
    bad = cuda_backend._in_background(lambda: build("bad"))
    assert ok.result(timeout=10) == "built good"
    with pytest.raises(RuntimeError, match="compiler said no"):
        bad.result(timeout=10)
    assert started == [True, True]
