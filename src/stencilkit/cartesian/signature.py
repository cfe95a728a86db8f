"""A GTScript definition's signature: ``Field[...]`` and scalar annotations resolved (string
annotations and string dtypes through ``dtypes=``), defaults kept."""

from __future__ import annotations

import ast
import enum
import inspect
from typing import Any

import numpy as np

from . import nodes as cn
from .context import Context
from .language import _FieldDescriptor
from .source import Source


def parse_signature(src: Source, ctx: Context) -> tuple[cn.Param, ...]:
    sig = inspect.signature(src.fn)
    hints = dict(getattr(src.fn, "__annotations__", {}))
    out = []
    node_of = {a.arg: a for a in src.tree.args.args + src.tree.args.kwonlyargs}
    for p in sig.parameters.values():
        node = node_of.get(p.name)
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise src.syntax(node, "*args and **kwargs are not allowed in a stencil definition")
        ann = hints.get(p.name, inspect.Parameter.empty)
        if ann is inspect.Parameter.empty:
            raise src.syntax(
                node,
                f"parameter '{p.name}' has no annotation",
                hint="annotate it: Field[float] or float",
            )
        if isinstance(ann, str):
            ann = ctx.dtypes[ann] if ann in ctx.dtypes else _eval_annotation(src, node, ann)
        default = None if p.default is inspect.Parameter.empty else p.default
        if isinstance(ann, _FieldDescriptor):
            if ann.data_dims:
                ctx.data_dims[p.name] = tuple(int(n) for n in ann.data_dims)
            dtype = ann.dtype
            if isinstance(dtype, str):
                if dtype not in ctx.dtypes:
                    raise src.symbol(node, f"dtype '{dtype}' of field '{p.name}' is not in dtypes=")
                dtype = ctx.dtypes[dtype]
            name = (
                ctx.cast_dtype(dtype)
                if any(dtype is t for t in (int, float, bool))
                else np.dtype(dtype).name
            )
            ctx.fields[p.name] = ann.axes
            out.append(cn.Param(p.name, ann.axes, str(name), default, tuple(ann.data_dims)))
        else:
            dt = ctx.cast_dtype(ann)
            if dt is None and isinstance(ann, type) and issubclass(ann, enum.IntEnum):
                dt = ctx.int_dtype  # a gtscript.enum: its members are passed as integers
            if dt is None:
                raise src.syntax(
                    node,
                    f"parameter '{p.name}' has annotation {ann!r}, which is neither a Field[...]"
                    " nor a scalar type",
                    hint="use Field[np.float64], Field[IJ, float], float, int, np.float32, ...",
                )
            ctx.scalars.add(p.name)
            out.append(cn.Param(p.name, None, dt, default))
    return tuple(out)


def _eval_annotation(src: Source, node: ast.AST | None, text: str) -> Any:
    try:
        return eval(text, dict(src.names))  # a string annotation, in the definition's module
    except Exception as err:
        raise src.symbol(node, f"cannot resolve the annotation {text!r}: {err}") from None
