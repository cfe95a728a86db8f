"""The origins of a call's fields (cartesian/call.py): one origin for all fields is normalised
once per set of axes and gives what the per-field rule gives, for 3-D, 2-D and 1-D fields."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stencilkit.cartesian.call import field_origin, field_origins
from stencilkit.cartesian.definitions import AccessKind, Boundary, FieldInfo


def _info(axes: tuple[str, ...]) -> FieldInfo:
    zero = tuple((0, 0) for _ in axes)
    return FieldInfo(AccessKind.READ, Boundary(zero), axes, (), np.dtype(np.float64))


INFOS = {
    "a": _info(("I", "J", "K")),
    "b": _info(("I", "J")),
    "c": _info(("K",)),
    "d": _info(("I", "J", "K")),
}


@pytest.mark.parametrize(
    "origin", [None, (1, 2, 3), [4, 5, 6], 2, np.int64(3), {"a": (1, 1, 1), "_all_": (2, 3, 4)}]
)
def test_every_field_gets_what_the_per_field_rule_gives(origin: Any) -> None:
    arrays = {n: np.zeros((5,) * len(i.axes)) for n, i in INFOS.items() if n != "d"}
    got = field_origins(INFOS, arrays, origin)
    assert set(got) == {"a", "b", "c"}  # only the fields given
    for n in got:
        assert got[n] == field_origin(n, INFOS[n], origin, arrays[n])


def test_a_short_origin_is_refused_naming_a_field() -> None:
    from stencilkit.cartesian.definitions import GTScriptCallError

    with pytest.raises(GTScriptCallError, match="fewer entries than its axes"):
        field_origins(INFOS, {"a": np.zeros((3, 3, 3))}, (1, 2))
