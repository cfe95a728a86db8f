"""``DecomposedField``: one rank's part of a global field, in global indices, with its halo.

The local :class:`~stencilkit.Field` covers the rank's owned points plus ``halo`` points on each
side of every decomposed dimension, indexed by their *global* indices (a ``Domain`` starting at
the rank's offset), so a program's explicit domains and a user's selections mean the same on
one process and on N ranks. The field remembers whether its halo holds current values: a
program that writes it makes the halo stale, an exchange makes it fresh again.
"""

from __future__ import annotations

from typing import Any

from ..core.dims import Dimension
from ..core.domain import Domain
from ..fields.field import Field


class DecomposedField:
    """A rank's part of a decomposed field: ``.field`` (owned + halo), ``.owned`` (a view of the
    owned points), ``.halo`` per decomposed dimension, ``.name`` for error messages.

    Pass ``.field`` (or the decomposed field itself, to a :func:`distribute`-d program) where a
    program reads with offsets, ``.owned`` where it should write only the owned points.
    """

    __slots__ = ("_fresh", "decomposition", "field", "halo", "name")

    def __init__(
        self, field: Field, decomposition: Any, halo: dict[Dimension, int], name: str
    ) -> None:
        self.field = field
        self.decomposition = decomposition
        self.halo = dict(halo)
        self.name = name
        self._fresh = False

    # -- views ----------------------------------------------------------------------------
    @property
    def owned_domain(self) -> Domain:
        """The owned points, the local domain without its halo."""
        dom: Domain = self.decomposition.owned_domain(self)
        return dom

    @property
    def owned(self) -> Field:
        """The owned points as a field sharing memory with ``.field`` (global indices)."""
        return self.field[self.owned_domain]

    @property
    def domain(self) -> Domain:
        """The local field's domain, the owned points and the halo."""
        return self.field.domain

    @property
    def dims(self) -> tuple[Dimension, ...]:
        """The local field's dimensions."""
        return self.field.dims

    @property
    def ndarray(self) -> Any:
        """The local buffer, owned points and halo (NumPy or CuPy)."""
        return self.field.ndarray

    @property
    def dtype(self) -> Any:
        """The element type."""
        return self.field.dtype

    def asnumpy(self) -> Any:
        """The local values (owned and halo) as a NumPy array."""
        return self.field.asnumpy()

    # -- halo state -----------------------------------------------------------------------
    @property
    def halo_fresh(self) -> bool:
        """Whether the halo holds the neighbours' current values (exchanged since the last write)."""
        return self._fresh

    def mark_written(self) -> None:
        """Say that the owned values changed (the halo is stale until the next exchange).
        Programs run through :func:`distribute` call this for every field they write; call
        it after changing ``.ndarray`` yourself."""
        self._fresh = False

    def mark_exchanged(self) -> None:
        """Say that the halo holds the neighbours' current values (an exchange does this)."""
        self._fresh = True

    def __repr__(self) -> str:
        widths = ", ".join(f"{d.value}: {w}" for d, w in self.halo.items())
        state = "fresh" if self._fresh else "stale"
        return f"DecomposedField({self.name!r}, {self.field.domain}, halo {{{widths}}} {state})"
