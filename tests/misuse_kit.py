"""The bad-input catalogue's machinery: a registry of misuses and a kit that watches user data.

A misuse is a function ``(kit) -> None`` that does what a user gets wrong; it is registered with
the exception type it must raise and a pattern the message must contain (naming the problem).
The kit makes the user's arrays and fields (random, never zero) on the case's device and checks,
after the refusal, that not one of them changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import stencilkit as gtx


@dataclass(frozen=True)
class Misuse:
    name: str
    fn: Callable[[Kit], None]
    exc: type[BaseException]
    pattern: str
    marks: tuple[Any, ...] = ()


@dataclass
class Catalogue:
    entries: list[Misuse] = field(default_factory=list)

    def __call__(
        self, exc: type[BaseException], pattern: str, *marks: Any
    ) -> Callable[[Callable[[Kit], None]], Callable[[Kit], None]]:
        def register(fn: Callable[[Kit], None]) -> Callable[[Kit], None]:
            self.entries.append(Misuse(fn.__name__, fn, exc, pattern, marks))
            return fn

        return register

    def params(self) -> list[Any]:
        return [pytest.param(m, id=m.name, marks=m.marks) for m in self.entries]


class Kit:
    """The user's data for one misuse on one backend case, watched for changes."""

    def __init__(self, case: Any, seed: int = 0) -> None:
        self.case = case
        self.backend = case.backend
        self.rng = np.random.default_rng(seed)
        self.watched: list[tuple[str, Any, np.ndarray]] = []
        self._programs: dict[Any, Any] = {}

    @property
    def xp(self) -> Any:
        if self.case.on_gpu:
            import cupy

            return cupy
        return np

    def _host(self, obj: Any) -> np.ndarray:
        if isinstance(obj, gtx.Field):
            return np.array(obj.asnumpy(), copy=True)
        if hasattr(obj, "get"):
            return np.asarray(obj.get())
        return np.array(obj, copy=True)

    def watch(self, obj: Any, label: str = "") -> Any:
        self.watched.append((label or type(obj).__name__, obj, self._host(obj)))
        return obj

    def data(self, shape: tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            values = self.rng.choice([-1.0, 1.0], shape) * self.rng.uniform(0.5, 2.0, shape)
        elif dtype.kind == "b":
            values = self.rng.random(shape) < 0.5
        else:
            values = self.rng.integers(1, 9, shape)
        return values.astype(dtype)

    def arr(self, shape: tuple[int, ...], dtype: Any = np.float64) -> Any:
        """A raw array of the case's device (NumPy or CuPy), watched."""
        return self.watch(self.xp.asarray(self.data(shape, dtype)), f"array{shape}")

    def fld(
        self, dims: list[Any], shape: tuple[int, ...], dtype: Any = np.float64, **kw: Any
    ) -> Any:
        """A field on the case's device, watched."""
        return self.watch(
            gtx.as_field(dims, self.data(shape, dtype), allocator=self.case.allocator, **kw),
            f"field{shape}",
        )

    def table(self, dims: list[Any], codomain: Any, data: np.ndarray, **kw: Any) -> Any:
        self.watch(data, "table")
        return gtx.as_connectivity(dims, codomain, data, allocator=self.case.allocator, **kw)

    def prog(self, program: Any) -> Any:
        """``program`` on the case's backend (built once per kit)."""
        if program not in self._programs:
            self._programs[program] = program.with_backend(self.backend)
        return self._programs[program]

    def assert_unchanged(self) -> None:
        for label, obj, before in self.watched:
            after = self._host(obj)
            assert after.shape == before.shape and np.array_equal(after, before, equal_nan=True), (
                f"{label} was changed by a refused call"
            )


misuse = Catalogue()
"""The one catalogue: test_bad_inputs.py and bad_inputs_dsl.py register into it."""
