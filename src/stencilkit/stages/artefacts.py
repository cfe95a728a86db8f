"""The artefacts the pipeline stages hand to each other: frozen, typed, printable (``as_text()``).

``Bound`` (checked arguments, in ``stages/binding.py``) -> ``Lowered`` (stencil IR, before
and after fusion) -> ``Planned`` (kernels with concrete domains, the argument block's layout and
constant slots) -> ``Source`` (generated C++ or CUDA) -> ``Built`` (the build cache entry) ->
a target's loaded program -> ``Launches`` (the launch configuration ``tune`` chose).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..core.device import DeviceType
from ..core.domain import UnitRange
from ..core.records import record
from ..ir import nodes as ir
from .abi import ArgLayout, Specialization
from .binding import Bound


@record
class Lowered:
    """The ``lower`` stage's artefact: the program as kernels over index spaces (``stencil``),
    and the same after fusing consecutive kernels over one domain (``fused``, what the compiled
    targets generate code for; the embedded backend evaluates ``stencil``)."""

    stencil: ir.StencilProgram
    fused: ir.StencilProgram

    def as_text(self) -> str:
        if self.fused == self.stencil:
            return str(self.stencil)
        return f"{self.stencil}\n-- after fusion --\n{self.fused}"


@record
class Planned:
    """The ``plan`` stage's artefact: what is fixed for one argument signature on one target.

    ``sprog``: the kernels that run; ``domains``: each kernel's index ranges (reads and writes
    checked against the arguments); on compiled targets ``layout`` (the slots of the argument
    block), ``spec`` (what the code is specialized on) and ``block`` (the block's constant slots:
    strides, origins, domain bounds; addresses and scalars are written on each call)."""

    target: str
    sprog: ir.StencilProgram
    domains: tuple[tuple[UnitRange, ...], ...]
    layout: ArgLayout | None = None
    spec: Specialization | None = None
    block: tuple[int, ...] = ()

    def kernels(self) -> list[tuple[ir.Kernel, tuple[UnitRange, ...]]]:
        return list(zip(self.sprog.kernels, self.domains))

    def new_block(self) -> np.ndarray:
        """A fresh argument block holding the constant slots (the per-call path fills the rest)."""
        return np.array(self.block, dtype=np.int64)

    def as_text(self) -> str:
        lines = [f"plan of {self.sprog.name} for {self.target}"]
        for k, dom in self.kernels():
            ranges = ", ".join(f"{d}: [{r.start}, {r.stop})" for d, r in zip(k.dims, dom))
            lines.append(f"  kernel {k.name} over {{{ranges}}} writes {', '.join(k.outs)}")
        if self.layout is not None and self.spec is not None:
            lines.append(f"  argument block: {self.layout.size} slots of 8 bytes")
            for f in self.layout.fields:
                order = ", ".join(str(f.dims[a]) for a in f.order)
                unit = f.dims[f.unit_dim] if f.unit_dim is not None else "none"
                what = "table" if f.is_table else "field"
                lines.append(
                    f"    {what} {f.name}: {f.dtype}, address in slot {f.ptr},"
                    f" memory order [{order}], unit stride {unit}"
                )
            for s in self.layout.scalars:
                lines.append(f"    scalar {s.name}: {s.dtype} in slot {s.slot}")
            lines.append(
                f"  indices {'fit' if self.spec.narrow_index else 'exceed'} 32 bits,"
                f" device {self.spec.device_id}"
            )
        return "\n".join(lines)


@record
class Source:
    """The ``generate`` stage's artefact: generated code for one plan."""

    planned: Planned
    language: str  # "c++" or "cuda"
    text: str
    variants: bool = False  # CUDA: also the z-chunked kernel variants (for a block search)

    def as_text(self) -> str:
        return self.text


@record
class Built:
    """The ``build`` stage's artefact: the build cache entry holding the binary, beside the
    source and the IR it was built from."""

    source: Source
    key: str  # SHA-256 of the IR, the source and the compiler (toolchain/cache.py)
    path: Path
    built: bool  # True: compiled now; False: found in the cache
    binary: str  # the file name of the binary inside ``path``

    def as_text(self) -> str:
        how = "compiled now" if self.built else "found in the cache"
        return f"{self.path / self.binary} ({how}; key {self.key[:16]}...)"


@record
class KernelLaunch:
    """One kernel's launch configuration (CUDA): the kernel (variant) and its grid and block."""

    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    #: the locality order an ordered variant (name ending ``_ord``) visits its points in
    order: Any = field(default=None, compare=False)


@record
class Launches:
    """The ``tune`` stage's artefact: how each kernel is launched. Empty on the CPU (one call of
    the library runs every kernel); on the GPU the block shapes chosen, timed where worthwhile."""

    target: str
    kernels: tuple[KernelLaunch, ...] = ()
    #: the choice of the plain variants only, while the others build in the background: a later
    #: call searches again once they are built (STENCILKIT_TUNE=background)
    provisional: bool = False

    def as_text(self) -> str:
        if not self.kernels:
            return f"{self.target}: one call runs every kernel (nothing to tune)"
        lines = [f"{kl.name}<<<grid {kl.grid}, block {kl.block}>>>" for kl in self.kernels]
        if self.provisional:
            lines.append(
                "(provisional: the z-chunk variants are building; searched again once built)"
            )
        return "\n".join(lines)


class Loaded(Protocol):
    """The ``load`` stage's artefact: a program loaded into this process."""

    @property
    def built(self) -> Built: ...

    def bind(self, launches: Launches, block: np.ndarray) -> Callable[[], None]:
        """The per-call launch: runs every kernel of the plan on the argument ``block``."""
        ...


class Target(Protocol):
    """What a compiled backend provides, one method per stage after ``plan``."""

    name: str
    device_type: DeviceType

    def generate(self, planned: Planned) -> Source: ...

    def build(self, source: Source) -> Built: ...

    def load(self, built: Built) -> Loaded: ...

    def tune(
        self, loaded: Any, planned: Planned, bound: Bound, final: bool = False
    ) -> Launches: ...

    def ready_to_retune(self, loaded: Any) -> bool:
        """Whether a plan whose ``tune`` was provisional can make its final choice now."""
        ...

    def error_word(self) -> np.ndarray:
        """Two int64 the kernels can write and the host read (as_offset read guards)."""
        ...

    def scratch(self, nbytes: int) -> tuple[Any, int]:
        """Zeroed memory on the target's device and its address."""
        ...

    def copy_memory(self, dst: int, src: int, nbytes: int) -> None:
        """Copy ``nbytes`` from device address ``src`` to ``dst`` (a probe's copied outputs)."""
        ...

    def synchronize(self) -> None:
        """Wait until the kernels launched so far are done."""
        ...
