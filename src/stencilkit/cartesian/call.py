"""The arguments of a stencil call: origins and domain normalised (gt4py's rules), every
array checked against the stencil before anything runs, and the arrays bound as stencilkit
fields whose index 0 is the compute domain's origin (no copy)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import numpy as np

from .definitions import AccessKind, FieldInfo, GTScriptCallError, GTScriptCallTypeError

_AXES = ("I", "J", "K")


def field_origin(name: str, info: FieldInfo, origin: Any, array: Any) -> tuple[int, ...]:
    """The origin of field ``name`` inside its array: its dict entry, else ``_all_``, else the
    array's ``__gt_origin__``, else zeros; a 3-tuple for all fields is cut to the field's axes."""
    full: Any = None
    if isinstance(origin, Mapping):
        full = origin.get(name, origin.get("_all_"))
    elif origin is not None:
        full = origin
    if full is None:
        full = getattr(array, "__gt_origin__", None)
    if full is None:
        return (0,) * len(info.axes)
    if isinstance(full, int | np.integer):
        return tuple(int(full) if a == "K" else 0 for a in info.axes)
    full = tuple(int(x) for x in full)
    assert isinstance(full, tuple)
    if len(full) == 3 and len(info.axes) < 3:
        return tuple(full[_AXES.index(a)] for a in info.axes)
    if len(full) < len(info.axes):
        raise GTScriptCallError(
            f"origin {full} of field '{name}' has fewer entries than its axes {info.axes}"
        )
    return tuple(full[: len(info.axes)])


def needs_unwrap(arrays: tuple[Any, ...]) -> bool:
    """Whether an argument is an array-like object rather than an array, or names its
    dimensions (``__gt_dims__``)."""
    return any(
        a is not None and (not hasattr(a, "shape") or hasattr(a, "__gt_dims__")) for a in arrays
    )


def unwrap_arrays(
    field_info: Mapping[str, FieldInfo], values: Mapping[str, Any], origin: Any
) -> tuple[dict[str, Any], Any]:
    """gt4py's array-like arguments as arrays: an object exposing ``__array_interface__`` or
    ``__cuda_array_interface__`` is viewed as a NumPy or CuPy array (no copy); its
    ``__gt_origin__`` is its origin unless ``origin`` gives one for it (a tuple or ``_all_``
    for every field, or its own entry); its ``__gt_dims__`` (e.g. ``"KJI"``) must be the
    field's axes in some order, and the view is transposed to the stencil's order."""
    out = dict(values)
    found: dict[str, tuple[int, ...]] = {}
    for name, info in field_info.items():
        v = out.get(name)
        if v is None or (hasattr(v, "shape") and not hasattr(v, "__gt_dims__")):
            continue
        a = v if hasattr(v, "shape") else _as_array(name, v)
        gt_origin = getattr(v, "__gt_origin__", None)
        dims = getattr(v, "__gt_dims__", None)
        if dims is not None:
            dims = tuple(str(d) for d in dims)
            spatial = [d for d in dims if d in _AXES]
            if sorted(spatial) != sorted(info.axes):
                raise GTScriptCallError(
                    f"Storage for '{name}' has dimensions '{list(dims)}' but the API signature"
                    f" expects '[{', '.join(info.axes)}]'",
                    hint="pass an array with the stencil's axes (in any order)",
                )
            order = [dims.index(ax) for ax in info.axes]
            order += [j for j, d in enumerate(dims) if d not in _AXES]
            if order != sorted(order):
                a = a.transpose(order)
                if gt_origin is not None and len(gt_origin) == len(order):
                    gt_origin = tuple(gt_origin[j] for j in order)
        out[name] = a
        if gt_origin is not None:
            found[name] = tuple(int(x) for x in gt_origin)
    if found:
        if origin is None:
            origin = found
        elif isinstance(origin, Mapping) and "_all_" not in origin:
            origin = {**found, **origin}
    return out, origin


def _as_array(name: str, v: Any) -> Any:
    if hasattr(v, "__array_interface__"):
        return np.asarray(v)
    if hasattr(v, "__cuda_array_interface__"):
        from ..storage.namespaces import import_cupy

        return import_cupy().asarray(v)
    return v  # refused by validate_fields, naming the field


def field_origins(
    field_info: Mapping[str, FieldInfo], arrays: Mapping[str, Any], origin: Any
) -> dict[str, tuple[int, ...]]:
    """``field_origin`` of every field given in ``arrays``. An origin that is not a mapping
    (one tuple or int for all fields) is normalised once per distinct set of axes, not once
    per field: the call of a 25-field stencil spent half its time here."""
    if origin is None or isinstance(origin, Mapping):
        return {
            n: field_origin(n, info, origin, arrays.get(n))
            for n, info in field_info.items()
            if n in arrays
        }
    by_axes: dict[tuple[str, ...], tuple[int, ...]] = {}
    found = {}
    for n, info in field_info.items():
        if n in arrays:
            o = by_axes.get(info.axes)
            if o is None:
                o = by_axes[info.axes] = field_origin(n, info, origin, arrays[n])
            found[n] = o
    return found


def default_domain(
    field_info: Mapping[str, FieldInfo],
    arrays: Mapping[str, Any],
    origins: Mapping[str, tuple[int, ...]],
) -> tuple[int, int, int]:
    """The largest domain that fits every accessed field: shape - origin - upper halo."""
    size: list[int | None] = [None, None, None]
    for name, info in field_info.items():
        if info.access == AccessKind.NONE or arrays.get(name) is None:
            continue  # None for a used field: refused by validate_fields, naming it
        shape = np.shape(arrays[name]) if not hasattr(arrays[name], "shape") else arrays[name].shape
        for j, a in enumerate(info.axes):
            d = _AXES.index(a)
            n = shape[j] - origins[name][j] - info.boundary[j][1]
            size[d] = n if size[d] is None else min(size[d], n)  # type: ignore[type-var]
    dom = tuple(1 if s is None else s for s in size)
    if any(s <= 0 for s in dom):
        raise GTScriptCallError(
            f"the domain computed from the arrays' shapes and origins is empty: {dom}",
            hint="pass larger arrays, smaller origins, or domain=(ni, nj, nk)",
        )
    return dom  # type: ignore[return-value]


#: what is checked of one field: name, dtype, number of dimensions, axes, per axis its
#: position in the domain, the halo read below and above the origin and the reads that need
#: them (" (q[-2, 0, 0] at f.py:12)" or ""), the sizes of its data dimensions, and whether
#: the stencil accesses it
FieldCheck = tuple[
    str,
    np.dtype[Any],
    int,
    tuple[str, ...],
    tuple[tuple[int, str, int, int, int, str, str], ...],
    tuple[int, ...],
    bool,
]


def field_checks(
    field_info: Mapping[str, FieldInfo], reads: Mapping[str, tuple[str, ...]] | None = None
) -> tuple[FieldCheck, ...]:
    """The per-field facts ``validate_fields`` checks arrays against, derived once per stencil;
    ``reads``: per field and side (I-, I+, J-, J+, K-, K+) the read that needs the halo."""

    def by(name: str, d: int, side: int) -> str:
        text = (reads or {}).get(name, ("",) * 6)[2 * d + side]
        return f" ({text})" if text else ""

    return tuple(
        (
            name,
            info.dtype,
            info.ndim,
            info.axes,
            tuple(
                (j, ax, d, *info.boundary[j], by(name, d, 0), by(name, d, 1))
                for j, ax in enumerate(info.axes)
                for d in (_AXES.index(ax),)
            ),
            tuple(info.data_dims),
            info.access != AccessKind.NONE,
        )
        for name, info in field_info.items()
    )


def validate_fields(
    stencil: str,
    checks: tuple[FieldCheck, ...],
    arrays: Mapping[str, Any],
    origins: Mapping[str, tuple[int, ...]],
    domain: tuple[int, ...],
    min_k: int,
    on_gpu: bool,
) -> None:
    """Refuse a domain or an array that does not fit the stencil, naming the field and what
    to change (before anything runs)."""
    if len(domain) != 3 or any(not isinstance(d, int | np.integer) for d in domain):
        raise GTScriptCallError(f"{stencil}: domain must be three integers, got {domain!r}")
    if any(d <= 0 for d in domain):
        raise GTScriptCallError(
            f"{stencil}: domain {tuple(domain)} is empty", hint="every entry must be > 0"
        )
    if domain[2] < min_k:
        raise GTScriptCallError(
            f"{stencil}: the K domain ({domain[2]}) is smaller than the {min_k} levels its intervals need"
            " (domain_info.min_sequential_axis_size)",
        )
    for name, dtype, ndim, axes, per_axis, data_dims, used in checks:
        if name not in arrays:
            raise GTScriptCallError(f"{stencil}: field '{name}' is missing")
        a = arrays[name]
        if not hasattr(a, "shape") or not hasattr(a, "dtype"):
            raise GTScriptCallError(
                f"{stencil}: field '{name}' must be an array, got {type(a).__name__}"
            )
        gpu = hasattr(a, "__cuda_array_interface__")
        if gpu != on_gpu:
            where = "a GPU" if gpu else "a host"
            raise GTScriptCallError(
                f"{stencil}: field '{name}' is {where} array, but the backend runs on the"
                f" {'GPU' if on_gpu else 'host'}",
                hint="allocate it with gt4py.storage (backend=...) of this stencil's backend",
            )
        if a.dtype != dtype:
            raise GTScriptCallError(
                f"{stencil}: field '{name}' has dtype {a.dtype}, the stencil declares {dtype}",
                hint="pass an array of the declared dtype (no conversion is made)",
            )
        shape = a.shape
        if not used and len(shape) > ndim and not data_dims:
            # as gt4py, whose checks skip a field the stencil never accesses (pruned by its
            # externals): pyFV3's remap_profile gets a 3-D quantity for its IJ ``qs`` there
            continue
        if len(shape) != ndim:  # gt4py's words first: users match on them
            raise GTScriptCallError(
                f"{stencil}: Storage for '{name}' has {len(shape)} dimensions but the API"
                f" signature expects {ndim} ({''.join(axes)}{' + data dims' if data_dims else ''})",
            )
        if tuple(shape[len(axes) :]) != data_dims:
            raise GTScriptCallError(
                f"{stencil}: Field '{name}' expects data dimensions {data_dims} but got"
                f" {tuple(shape[len(axes) :])}",
            )
        o = origins[name]
        for j, ax, d, lo, hi, lo_read, hi_read in per_axis:
            # a negative origin is fine where every access is shifted into the array (gt4py's
            # input_field[1, 0, 0] at origin -1): the engine checks each read and write at its
            # exact offset before anything runs (the halo here is only the part below 0)
            if lo and o[j] - lo < 0:
                raise GTScriptCallError(
                    f"{stencil}: field '{name}' is read {lo} point(s) before its origin along"
                    f" {ax}{lo_read}, but its origin there is {o[j]}",
                    hint=f"give '{name}' an origin of at least {lo} along {ax} (a halo)",
                )
            if o[j] + domain[d] + hi > shape[j]:
                raise GTScriptCallError(
                    f"{stencil}: field '{name}' of shape {tuple(shape)} is too small along {ax}:"
                    f" origin {o[j]} + domain {domain[d]} + halo {hi}{hi_read}"
                    f" = {o[j] + domain[d] + hi} > {shape[j]}",
                    hint="pass a smaller domain or origin, or a larger array",
                )


def validate_scalars(
    stencil: str, param_dtypes: Mapping[str, np.dtype[Any]], scalars: Mapping[str, Any]
) -> None:
    """Refuse a scalar argument missing, given as an array, or of the wrong kind."""
    for name, dt in param_dtypes.items():
        if name not in scalars:
            raise GTScriptCallError(f"{stencil}: scalar parameter '{name}' is missing")
        v = scalars[name]
        if hasattr(v, "shape") and getattr(v, "shape", ()) != ():
            raise GTScriptCallError(f"{stencil}: parameter '{name}' must be a scalar, got an array")
        if isinstance(v, enum.Enum):
            v = v.value
        kind = np.dtype(dt).kind
        given = np.asarray(v).dtype.kind if isinstance(v, int | float | bool | np.generic) else None
        if given is None:
            raise GTScriptCallTypeError(
                f"{stencil}: parameter '{name}' must be a {dt} scalar, got {type(v).__name__}"
            )
        if (kind in "iu" and given not in "iub") or (kind == "b" and given != "b"):
            raise GTScriptCallTypeError(
                f"{stencil}: parameter '{name}' is {dt}, got {v!r} ({type(v).__name__})",
                hint="pass a value of the declared type (no conversion is made)",
            )
