"""The ``gpu`` backend: generated CUDA, compiled with NVRTC or nvcc, launched on CuPy's stream.

Its stages (see ``stencilkit.stages``): ``generate`` (codegen.py), ``build`` (a cubin in the build
cache), ``load`` (a CUDA module on the fields' GPU), ``tune`` (block shapes and z-chunk variants,
timed on large domains by tuning.py on scratch outputs, before the first call; for a kernel that
gathers through a scattered neighbour table, also the natural against a locality order of its
points, order.py).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import field
from typing import Any

import numpy as np

from ...core.device import DeviceType
from ...core.errors import InternalError, StencilValueError
from ...core.log import get_logger
from ...core.records import record
from ...stages.artefacts import Built, KernelLaunch, Launches, Planned, Source
from ...stages.binding import Bound
from ...stages.pipeline import argument_block, with_scratch_outputs
from ...toolchain.cache import cache_key, get_or_build, is_cached
from ...toolchain.config import require
from ...toolchain.cuda import compile_cubin, find_cuda_compiler
from . import grid
from .codegen import (
    PLAIN,
    Variant,
    chunk_variants,
    codegen_digest,
    generate_cuda,
    kernel_name,
    ordered_dim,
)
from .order import ORDER_MIN_POINTS, LocalityOrder, host_order_job, is_scattered, order_for
from .runtime import Launcher, Module, cupy, device_arch, device_name, mapped_host_words
from .tuning import (
    choose_blocks,
    default_block,
    stored_choice,
    table_fingerprint,
    worth_searching,
)

BINARY = "program.cubin"


@record
class LoadedCuda:
    """A cubin loaded on one GPU; the z-chunked variants are built and loaded only when a block
    search needs them (``variant_module``), with the locality-ordered ones where a search
    offers an order."""

    built: Built
    module: Module
    target: CudaTarget
    # the variant modules once built, by whether they hold the ordered variants too
    _variants: dict[bool, Module] = field(default_factory=dict)
    # background builds of the variant modules (STENCILKIT_TUNE=background), by ``ordered``,
    # and the locality orders computed after them ("orders")
    _builds: dict[bool | str, Future[Built]] = field(default_factory=dict)

    @property
    def device_id(self) -> int:
        return self.module.device_id

    def variant_module(self, ordered: bool = False) -> Module:
        if True in self._variants:  # holds every variant
            return self._variants[True]
        if ordered not in self._variants:
            pending = self._builds.get(ordered)
            built = (
                pending.result()
                if pending is not None
                else self.target.build_variants(self.built, ordered)
            )
            self._variants[ordered] = self.target.load_module(built, ordered)
        return self._variants[ordered]

    def variants_at_hand(self, ordered: bool) -> bool:
        """Whether the variant module is loaded or built (in this process or the build cache):
        using it costs no compilation. Generates nothing: the variants' cache key is derived
        from the plain module's (``CudaTarget.variant_key``)."""
        if True in self._variants or ordered in self._variants:
            return True
        pending = self._builds.get(ordered)
        if pending is not None:
            return pending.done()
        return is_cached(self.target.variant_key(self.built, ordered))

    def build_variants_in_background(self, ordered: bool) -> None:
        """Generate and compile the variant module on a worker thread (NVRTC and nvcc release
        the GIL): the caller's kernels keep running while it builds."""
        if ordered not in self._builds and not self.variants_at_hand(ordered):
            self._builds[ordered] = _in_background(
                lambda: self.target.build_variants(self.built, ordered)
            )
            _PENDING.append(self._builds[ordered])

    def prepare_orders_in_background(self, jobs: list[Callable[[], None]]) -> None:
        """Run ``jobs`` (``order.host_order_job``: locality orders computed in NumPy and stored)
        on the worker thread after the variant build, so that the call which searches once
        the variants are built (``ready_to_retune`` waits for these too) reads the orders. A
        job that fails only leaves its order to that search."""
        if not jobs or "orders" in self._builds:
            return

        def work() -> Built:
            for job in jobs:
                try:
                    job()
                except Exception as err:  # the search computes the order itself
                    _log.warning("a locality order in the background failed: %s", err)
            return self.built

        self._builds["orders"] = _in_background(work)
        _PENDING.append(self._builds["orders"])

    def function(self, name: str, ordered: bool = False) -> Any:
        """The kernel ``name``; ``ordered``: a variant module is built with the ordered
        variants (one module for the whole search, not two)."""
        found = self.module.functions.get(name)
        if found is not None:
            return found
        return self.variant_module(ordered or name.endswith("_ord")).functions[name]

    def bind(self, launches: Launches, block: np.ndarray) -> Callable[[], None]:
        return CudaCall(
            self.built.source.planned.sprog.name,
            self.device_id,
            tuple(
                (
                    Launcher(self.function(kl.name), block, _order_args(kl.order)),
                    kl.grid,
                    kl.block,
                )
                for kl in launches.kernels
            ),
        )


def _order_args(order: LocalityOrder | None) -> tuple[int, ...]:
    """The extra kernel arguments of an ordered variant: the order's pointer."""
    return () if order is None else (order.pointer,)


class CudaCall:
    """The per-call launch of a tuned plan: every kernel on the current stream of the current
    device (which must be the GPU the program was loaded on: checked, about 0.1 us)."""

    __slots__ = ("device_id", "get_device", "get_stream", "launches", "name")

    def __init__(
        self,
        name: str,
        device_id: int,
        launches: tuple[tuple[Launcher, tuple[int, int, int], tuple[int, int, int]], ...],
    ) -> None:
        cp = cupy()
        self.name = name
        self.device_id = device_id
        self.launches = launches
        self.get_device = cp.cuda.runtime.getDevice
        self.get_stream = cp.cuda.get_current_stream

    def __call__(self) -> None:
        if self.get_device() != self.device_id:
            self._wrong_device()
        stream = self.get_stream().ptr
        for launcher, grid_, block in self.launches:
            launcher.launch(grid_, block, stream)

    def _wrong_device(self) -> None:
        """A plan loaded on one GPU called while another is current: refused before launch."""
        here, there = self.get_device(), self.device_id
        raise StencilValueError(
            f"{self.name}(): the fields of this call live on GPU {there}, but the current CUDA"
            f" device is GPU {here}; the gpu backend runs a program on the current device, as CuPy does",
            hint=f"call it under `with cupy.cuda.Device({there}):` (or after cupy.cuda.Device({there}).use())",
        )


def refuse_during_capture(name: str) -> None:
    """Loading a module or timing kernels is not allowed while the current stream is being
    captured into a CUDA graph (graphs.py): a program's first call with new arguments must
    happen before the capture."""
    if cupy().cuda.get_current_stream().is_capturing():
        raise StencilValueError(
            f"{name}() is called for the first time with these arguments inside a CUDA graph capture;"
            " its first call compiles and tunes kernels, which a capture cannot record",
            hint="call the program once with the same arguments before capturing (or program.compile(...) it)",
        )


class CudaTarget:
    """Builds programs for NVIDIA GPUs and loads them on the GPU that holds a call's fields,
    which must be the current CUDA device (as for a CuPy kernel)."""

    name = "gpu"
    device_type = DeviceType.CUDA

    def __init__(self, device_id: int = 0, arch: str | None = None) -> None:
        self.device_id = device_id  # the device whose architecture ``build`` targets without a plan
        self.arch = arch  # None: the device's own compute capability
        self._loaded: dict[tuple[str, int], LoadedCuda] = {}

    def current_device(self) -> int:
        """The current CUDA device (CuPy's): where a call runs."""
        return int(cupy().cuda.runtime.getDevice())

    def generate(self, planned: Planned, variants: bool = False, ordered: bool = False) -> Source:
        """CUDA source; ``variants``: also the z-chunked kernels (several times slower to compile,
        so built only when a block search on a large domain needs them); ``ordered``: and the
        locality-ordered variants of the kernels that gather."""
        assert planned.layout is not None and planned.spec is not None
        text = generate_cuda(
            planned.sprog,
            planned.layout,
            variants,
            planned.spec.narrow_index,
            ordered,
            require("STENCILKIT_CUDA_LOADS_FIRST").cuda_loads_first,
        )
        return Source(planned, "cuda", text, variants)

    def build(self, source: Source) -> Built:
        """Compile (through the cache); no GPU needed when ``arch`` is given."""
        sprog = source.planned.sprog
        spec = source.planned.spec
        if self.arch is None:  # building for the device: refuse before compiling inside a capture
            refuse_during_capture(sprog.name)
        arch = self.arch or device_arch(spec.device_id if spec is not None else self.device_id)
        compiler = find_cuda_compiler()
        key = cache_key([("ir", str(sprog)), ("source", source.text), *compiler.key_parts(arch)])

        def build(d: Any) -> None:
            (d / "program.ir").write_text(str(sprog))
            compile_cubin(source.text, arch, d, "program", compiler)

        entry = get_or_build(key, build, {"program": sprog.name, "target": f"cuda sm_{arch}"})
        return Built(source, key, entry.path, entry.built, BINARY)

    def load_module(self, built: Built, ordered: bool = False) -> Module:
        planned = built.source.planned
        assert planned.layout is not None
        names = [
            kernel_name(planned.sprog, i, v)
            for i, k in enumerate(planned.sprog.kernels)
            for v in (
                chunk_variants(k, planned.layout, ordered) if built.source.variants else (PLAIN,)
            )
        ]
        device = planned.spec.device_id if planned.spec is not None else self.device_id
        return Module((built.path / BINARY).read_bytes(), names, device)

    def load(self, built: Built) -> LoadedCuda:
        planned = built.source.planned
        refuse_during_capture(
            planned.sprog.name
        )  # loading a module is not allowed during a capture
        device = planned.spec.device_id if planned.spec is not None else self.device_id
        hit = self._loaded.get((built.key, device))
        if hit is not None:
            return hit
        loaded = self._loaded[built.key, device] = LoadedCuda(built, self.load_module(built), self)
        return loaded

    def scratch(self, nbytes: int) -> tuple[Any, int]:
        """Zeroed GPU memory and its address, for a probe run's outputs (compiled.py)."""
        return _scratch(nbytes)

    def copy_memory(self, dst: int, src: int, nbytes: int) -> None:
        """GPU memory to GPU memory on the current stream (a probe run's copied outputs)."""
        rt = cupy().cuda.runtime
        rt.memcpyAsync(
            dst, src, nbytes, rt.memcpyDeviceToDevice, cupy().cuda.get_current_stream().ptr
        )

    def synchronize(self) -> None:
        """Wait for the current stream (a probe run's guards are read after it)."""
        cupy().cuda.get_current_stream().synchronize()

    def error_word(self) -> np.ndarray:
        """The guards' error word (backends/cprelude.py ``sk_guard``) in pinned host memory
        mapped into the GPU's address space: kernels write it, the host reads it without a copy
        or a synchronisation (at the next call of the program, see compiled.py)."""
        return mapped_host_words(2)

    def variant_key(self, built: Built, ordered: bool) -> str:
        """The build-cache key of the variant module of the plain module ``built``: derived from
        its key (which covers the IR, the plain source, the compiler, its flags and the
        architecture), the generator's own code and its one setting that changes only variants
        (``STENCILKIT_CUDA_LOADS_FIRST``), so that it is known without generating the
        variants' source (thousands of lines for a large program: a second or more of Python)."""
        loads_first = require("STENCILKIT_CUDA_LOADS_FIRST").cuda_loads_first
        return cache_key(
            [
                ("variants-of", built.key),
                ("ordered", str(ordered)),
                ("loads-first", str(loads_first)),
                ("codegen", codegen_digest()),
            ]
        )

    def build_variants(self, built: Built, ordered: bool) -> Built:
        """The variant module of ``built`` (``generate(..., variants=True)``), through the build
        cache under ``variant_key``: generated and compiled only when not in the cache."""
        planned = built.source.planned
        sprog, spec = planned.sprog, planned.spec
        arch = self.arch or device_arch(spec.device_id if spec is not None else self.device_id)
        compiler = find_cuda_compiler()
        made: list[Source] = []

        def build(d: Any) -> None:
            made.append(self.generate(planned, True, ordered))
            (d / "program.ir").write_text(str(sprog))
            compile_cubin(made[0].text, arch, d, "program", compiler)

        key = self.variant_key(built, ordered)
        meta = {"program": sprog.name, "target": f"cuda sm_{arch} (variants)"}
        entry = get_or_build(key, build, meta)
        source = (
            made[0]
            if made
            else Source(planned, "cuda", (entry.path / "program.cu").read_text(), True)
        )
        return Built(source, key, entry.path, entry.built, BINARY)

    def ready_to_retune(self, loaded: LoadedCuda) -> bool:
        """Whether a provisional plan's variants are built (its search can run now, outside a
        CUDA graph capture)."""
        return all(f.done() for f in loaded._builds.values()) and not (
            cupy().cuda.get_current_stream().is_capturing()
        )

    def tune(
        self, loaded: LoadedCuda, planned: Planned, bound: Bound, final: bool = False
    ) -> Launches:
        """Block shape and z-chunk variant per kernel: a timed search on large domains (on scratch
        outputs: the caller's fields are only read), else a default (tuning.py). A searched
        kernel that gathers through a scattered table is also timed visiting its points in a
        locality order (order.py); the faster one is kept."""
        sprog, layout = planned.sprog, planned.layout
        assert layout is not None
        refuse_during_capture(sprog.name)
        stream = cupy().cuda.get_current_stream().ptr
        extents_of = [_extents(planned, ki) for ki in range(len(sprog.kernels))]
        searched = [worth_searching(k, e) for k, e in zip(sprog.kernels, extents_of)]
        offers = [
            _offered_order(planned, bound, ki, loaded.built.path) if search else None
            for ki, search in enumerate(searched)
        ]
        any_ordered = any(o is not None for o in offers)
        timing: list[Any] = []  # [block, scratch arrays]: made when a kernel is searched
        tables = ""  # a digest of the tables' first rows: part of each searched kernel's key
        if any(searched):
            tables = table_fingerprint(
                argument_block(planned, bound),
                [(f.ptr, bound.signature(f.name)) for f in layout.fields if f.is_table],
            )
        # STENCILKIT_TUNE=background: where a search would first have to compile the variants,
        # they build on a worker thread and this call runs the plain kernels with their default
        # (or stored) blocks, untimed: a provisional choice, not stored. A later call searches
        # once they are built. (A timed search of the plain kernels alone cost the first call
        # of ICON's largest programs up to half a second, for a choice kept a few calls.)
        # A stored choice spares the search but, unless it is the plain kernel, not the build:
        # after an upgrade or another STENCILKIT_CUDA_LOADS_FIRST the plain module (and its
        # stored choices) may be found while the variant module is not (ICON's largest program
        # on the H200: a 54 s first call building it before running).
        provisional = (
            not final
            and any(searched)
            and require("STENCILKIT_TUNE").tune == "background"
            and not loaded.variants_at_hand(any_ordered)
            and not all(
                _plain_choice(self._stored(loaded, planned, ki, tables))
                for ki, search in enumerate(searched)
                if search
            )
        )
        if provisional:
            loaded.build_variants_in_background(any_ordered)
            made = (
                host_order_job(o.table, o.dim, o.start, o.stop, o.cache_dir)
                for o in offers
                if o is not None
            )
            jobs = [j for j in made if j is not None]
            if jobs:
                loaded.prepare_orders_in_background(jobs)
        elif any(searched):
            timing.extend(_timing_block(planned, bound))
        result = []
        for ki, k in enumerate(sprog.kernels):
            extents, search, offer = extents_of[ki], searched[ki], offers[ki]
            if search and provisional:
                stored = self._stored(loaded, planned, ki, tables)
                shape = stored[1] if stored is not None and stored[0] == PLAIN else None
                shape = shape or default_block(extents)
                limits = grid.device_limits(loaded.device_id)
                result.append(
                    KernelLaunch(
                        kernel_name(sprog, ki, PLAIN),
                        grid.grid_for(extents, shape, PLAIN.chunk, limits),
                        shape,
                        None,
                    )
                )
                continue
            # choose_blocks times block shapes whenever worth_searching says so, also for a kernel
            # compiled in one variant only (a scan, a 1-D kernel): its launches must then have the
            # timing block, every pointer set (a block of constants only holds null pointers)
            variants = chunk_variants(k, layout, offer is not None) if search else (PLAIN,)
            block = timing[0] if timing else planned.new_block()
            if search:
                _refuse_null_pointers(block, planned, bound, kernel_name(sprog, ki))
            launchers = {
                v: (_OrderedLauncher if v.ordered else _launcher)(
                    loaded.function(kernel_name(sprog, ki, v), any_ordered), block, offer
                )
                for v in variants
            }
            limits = grid.device_limits(loaded.device_id)
            variant, shape = choose_blocks(
                k,
                extents,
                launchers,
                stream,
                loaded.built.path,
                device_name(loaded.device_id),
                tables if search else "",
                grid.slowest_bounds(k, layout, ki),
                limits,
            )
            result.append(
                KernelLaunch(
                    kernel_name(sprog, ki, variant),
                    grid.grid_for(extents, shape, variant.chunk, limits),
                    shape,
                    offer.order() if variant.ordered and offer is not None else None,
                )
            )
        return Launches(self.name, tuple(result), provisional)

    def _stored(self, loaded: LoadedCuda, planned: Planned, ki: int, tables: str) -> Any:
        """The choice stored for kernel ``ki`` (this process, or beside its binary), if any."""
        return stored_choice(
            planned.sprog.kernels[ki],
            _extents(planned, ki),
            loaded.built.path,
            device_name(loaded.device_id),
            tables,
        )


def _plain_choice(stored: tuple[Variant, tuple[int, int, int]] | None) -> bool:
    """Whether a stored choice launches the plain kernel (needs no variant module)."""
    return stored is not None and stored[0] == PLAIN


#: Variant builds in flight (STENCILKIT_TUNE=background), one at a time: a build uses one core,
#: and the caller's own work keeps the others.
_PENDING: list[Future[Built]] = []
_ONE_AT_A_TIME = threading.Lock()


def _in_background(build: Callable[[], Built]) -> Future[Built]:
    """``build()`` on a daemon thread; a process ending while a build is in flight waits for it
    at exit (``_builds_done_at_exit``). A build cut short leaves no cache entry: entries are
    written to a temporary directory and renamed when whole."""
    global _AT_EXIT, _PENDING_PID
    if not _AT_EXIT:
        atexit.register(_builds_done_at_exit)
        _AT_EXIT = True
    _PENDING_PID = os.getpid()
    future: Future[Built] = Future()

    def work() -> None:
        with _ONE_AT_A_TIME:
            try:
                future.set_result(build())
            except BaseException as err:  # handed to the caller that waits for the build
                future.set_exception(err)

    threading.Thread(target=work, name="stencilkit-variants", daemon=True).start()
    return future


_AT_EXIT = False
_PENDING_PID = 0  # the process whose threads run the builds in _PENDING
if hasattr(os, "register_at_fork"):  # a forked child has none of the parent's build threads
    os.register_at_fork(after_in_child=_PENDING.clear)
_log = get_logger("cuda.backend")


def _builds_done_at_exit() -> None:
    """Wait for the variant builds still in flight when the interpreter exits. Exiting under a
    running NVRTC compilation crashed the process after its last line (a segmentation fault,
    exit 139, on the H200: 2026-12-03); the wait costs a short script the rest of a build (up
    to half a minute for icon4py's largest programs)."""
    if os.getpid() != _PENDING_PID:  # a forked child: the builds' threads are the parent's
        return
    pending = [f for f in _PENDING if not f.done()]
    if pending:
        _log.info("waiting at exit for %d GPU variant build(s) in flight", len(pending))
        wait(pending)


def wait_for_tuning(timeout: float | None = None) -> bool:
    """Wait until the GPU kernel variants building in the background are built (the next call
    of each program then makes its final choice). True if all are done.

    >>> stencilkit.wait_for_tuning()   # e.g. before timing a program's steady state
    """
    done, pending = wait(list(_PENDING), timeout=timeout)
    for f in done:
        _PENDING.remove(f)
    return not pending


def _extents(planned: Planned, ki: int) -> list[int]:
    """The points kernel ``ki`` walks along its grid dimensions, fastest first
    (``grid.kernel_extents``, which the test emulator runs too, with the plan's constants)."""
    assert planned.layout is not None
    k = planned.sprog.kernels[ki]
    return grid.kernel_extents(k, planned.layout, planned.domains[ki], planned.block)


@record(eq=False)
class _Offer:
    """A locality order the search may time a kernel with: computed on first use (a search
    timing an ordered variant, or an ordered choice to launch), not when a stored choice is
    the natural order."""

    table: Any
    dim: str
    start: int
    stop: int
    cache_dir: Any = None  # the build cache entry, where the order is stored

    def order(self) -> LocalityOrder:
        return order_for(self.table, self.dim, self.start, self.stop, self.cache_dir)


def _launcher(function: Any, block: np.ndarray, offer: _Offer | None) -> Any:
    return Launcher(function, block)


class _OrderedLauncher:
    """An ordered variant's launcher for the block search: the order is computed when a search
    starts (``prepare``, before its time budget) or at the first launch, so a stored natural
    choice never computes it."""

    def __init__(self, function: Any, buf: np.ndarray, offer: _Offer | None) -> None:
        assert offer is not None
        self.function, self.buf, self.offer = function, buf, offer
        self.launcher: Any = None

    def prepare(self) -> None:
        """Compute the order (the search calls this before its timed budget starts)."""
        if self.launcher is None:
            self.launcher = Launcher(self.function, self.buf, (self.offer.order().pointer,))

    def launch(self, grid_: tuple[int, int, int], block: tuple[int, int, int], stream: int) -> None:
        self.prepare()
        self.launcher.launch(grid_, block, stream)


def _offered_order(planned: Planned, bound: Bound, ki: int, cache_dir: Any) -> _Offer | None:
    """The locality order a searched kernel is also timed with: for a kernel that gathers at its
    own points (``ordered_dim``) through a table whose numbering is scattered, over enough points
    (``ORDER_MIN_POINTS``, int32 indices); None otherwise."""
    k, layout = planned.sprog.kernels[ki], planned.layout
    assert layout is not None
    found = ordered_dim(k, layout)
    if found is None or found[1] not in bound.tables:
        return None
    dim, table_name = found
    rng = planned.domains[ki][k.dims.index(dim)]
    start, stop = int(rng.start), int(rng.stop)
    if stop - start < ORDER_MIN_POINTS or stop > np.iinfo(np.int32).max:
        return None
    table = bound.tables[table_name]
    if not is_scattered(table, dim.value, start, stop):
        return None
    return _Offer(table, dim.value, start, stop, cache_dir)


def _refuse_null_pointers(block: np.ndarray, planned: Planned, bound: Bound, kernel: str) -> None:
    """A timed launch reads and writes through every pointer of the block: one left null (a
    block of constants only) would be an illegal address on the device, never a Python error."""
    assert planned.layout is not None
    null = [
        f.name
        for f in planned.layout.fields
        if int(block[f.ptr]) == 0 and bound.signature(f.name).span() != (0, 0)
    ]
    if null:
        raise InternalError(
            f"{kernel}: the block search would launch with null pointers for {null}"
        )


def _timing_block(planned: Planned, bound: Bound) -> tuple[np.ndarray, list[Any]]:
    """An argument block for timing kernels: the call's inputs, tables and scalars, and zeroed
    scratch memory of the same layout for every field a kernel writes."""
    block = argument_block(planned, bound)
    return block, with_scratch_outputs(planned, bound, block, _scratch)


def _scratch(nbytes: int) -> tuple[Any, int]:
    """Zeroed GPU memory and its address (a memset: no CuPy kernel)."""
    mem = cupy().zeros(nbytes, dtype=np.uint8)
    return mem, int(mem.data.ptr)
