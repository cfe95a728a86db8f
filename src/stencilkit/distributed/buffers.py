"""Pack buffers and device memory for the halo exchange: where each field's part lies in a
packed message, and the moves between GPU and (pinned) host memory of the staged transport.
On NumPy arrays the same functions run with host buffers, so the staging is tested without a
GPU."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .halo import Message, Region

ALIGN = 16  # bytes: each field's segment in a packed message starts aligned


def segments(parts: Sequence[tuple[int, Region]], arrays: Sequence[Any]) -> tuple[list[int], int]:
    offsets, total = [], 0
    for i, region in parts:
        offsets.append(total)
        n = int(np.prod(region.shape)) * arrays[i].dtype.itemsize
        total += -(-n // ALIGN) * ALIGN
    return offsets, total


def views(
    buf: Any, parts: Sequence[tuple[int, Region]], arrays: Sequence[Any], offsets: list[int]
) -> list[Any]:
    out = []
    for (i, region), off in zip(parts, offsets):
        dt = arrays[i].dtype
        n = int(np.prod(region.shape)) * dt.itemsize
        out.append(buf[off : off + n].view(dt).reshape(region.shape))
    return out


def on_device(xp: Any, m: Message) -> Message:
    """``m`` with its index lists on the device of the fields (``xp``: CuPy)."""
    from .halo import Message, Region

    def move(parts: tuple[tuple[int, Region], ...]) -> tuple[tuple[int, Region], ...]:
        return tuple(
            (
                i,
                r
                if isinstance(r.index[0], slice)
                else Region((r.index[0], xp.asarray(r.index[1])), r.shape),
            )
            for i, r in parts
        )

    return Message(m.rank, m.tag_out, m.tag_in, move(m.send), move(m.recv))


def namespace(arr: Any) -> Any:
    if isinstance(arr, np.ndarray):
        return np
    import cupy

    return cupy


def pinned(xp: Any, nbytes: int) -> Any:
    if xp is np:
        return np.empty(nbytes, np.uint8)  # the host-side emulation of a pinned buffer
    import cupyx

    return cupyx.empty_pinned((nbytes,), np.uint8)


def to_host(xp: Any, dev: Any, host: Any) -> None:
    if xp is np:
        np.copyto(host, dev)
    else:
        dev.get(out=host)


def from_host(xp: Any, host: Any, dev: Any) -> None:
    if xp is np:
        np.copyto(dev, host)
    else:
        dev.set(host)


def synchronize(xp: Any) -> None:
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


__all__ = [
    "ALIGN",
    "from_host",
    "namespace",
    "on_device",
    "pinned",
    "segments",
    "synchronize",
    "to_host",
    "views",
]
