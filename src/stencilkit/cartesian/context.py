"""What every part of one GTScript definition shares while it is parsed: externals, dtypes,
the literal precision, the fields and scalars in scope."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import nodes as cn


@dataclass
class Context:
    """What every part of one definition shares."""

    externals: dict[str, Any]
    int_dtype: str  # the literal precision: "int64" or "int32"
    float_dtype: str
    fields: dict[str, tuple[str, ...]]  # parameter fields (and temporaries) -> axes
    scalars: set[str]
    dtypes: dict[Any, Any] = field(default_factory=dict)
    functions: list[str] = field(default_factory=list)  # the inlining stack (recursion check)
    data_dims: dict[str, tuple[int, ...]] = field(default_factory=dict)  # fields with data dims
    #: element field -> (parameter, data index), in order of first use
    components: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    loops: int = 0  # while loops so far: their variables are named after their number

    def is_table(self, name: str) -> bool:
        """``name`` is a ``GlobalTable`` parameter (data dimensions and no spatial axis)."""
        return name in self.data_dims and self.fields.get(name) == ()

    def loop_var(self, name: str) -> str:
        """A fresh name for the variable ``name`` of a new while loop (numbered per definition,
        so that the IR, and the build's cache key, do not depend on what was parsed before)."""
        self.loops += 1
        return f"sk_w{self.loops}_{name}"

    def component(self, name: str, index: tuple[int, ...]) -> str:
        """The element field of data-dimension field ``name`` at the constant ``index``."""
        comp = f"{name}__ddim_{'_'.join(str(i) for i in index)}"
        if comp not in self.components:
            self.components[comp] = (name, index)
            self.fields[comp] = self.fields[name]
        return comp

    def literal(self, v: Any) -> cn.Lit:
        if isinstance(v, bool | np.bool_):
            return cn.Lit(bool(v), "bool")
        if isinstance(v, np.generic):
            return cn.Lit(v.item(), v.dtype.name)
        if isinstance(v, int):
            return cn.Lit(int(v), self.int_dtype)
        return cn.Lit(float(v), self.float_dtype)

    def cast_dtype(self, t: Any) -> str | None:
        """The dtype a cast or annotation ``t`` names (``int``, ``np.float32``, a dtypes key)."""
        if t in self.dtypes:
            t = self.dtypes[t]
            if t is int or t is float:
                return self.int_dtype if t is int else self.float_dtype
        if t is int:
            return self.int_dtype
        if t is float:
            return self.float_dtype
        if t is bool:
            return "bool"
        try:
            dt = np.dtype(t) if isinstance(t, type) and issubclass(t, np.generic) else None
        except TypeError:
            dt = None
        return None if dt is None else dt.name
