"""Whether a call passes the very arrays of an earlier call, unchanged: one C call.

A bound call (``cartesian/arguments.py``) may reuse what it made for a set of arrays only if
each is the same object with the same data address, shape, strides, dtype and flags (NumPy
changes all of these in place: ``a.shape = ...``, ``a.strides = ...``, ``a.dtype = ...``,
``a.flags.writeable = False``). Reading that from Python costs three to four attribute reads
per array, each making a tuple or an object: 3-4 µs for 25 arrays, more than the rest of a
``run()``. A :class:`Snapshot` keeps the words of each array's ``PyArrayObject`` (NumPy's
public struct: ``data, nd, dimensions, strides, base, descr, flags``) and a small C function
compares a tuple of arrays with it, reading those fields directly.

A tuple of exactly ``cupy.ndarray`` has a C function of its own: of a CuPy array only the
shape (and with it the strides) can change in place, and CuPy's ``shape`` property builds a
tuple from the array's C++ vector on each read (8.3 µs for 25 arrays on the H200, 2026-12-03,
the larger part of a ``run()``'s Python). The function reads the two vectors (``_shape``,
``_strides`` of CuPy's ``_ndarray_base``, declared in its ``core.pxd``) at an offset found when
it loads, from what CuPy says of a few probe arrays (``_cupy_layout``).

The functions are built once per cache (a few lines of C++, through the build cache) and loaded
once per process; their struct offsets are checked against NumPy's and CuPy's own answers when
they load. If there is no compiler, a check fails, or the arrays are neither all exactly
``numpy.ndarray`` nor all exactly ``cupy.ndarray`` (a mix, subclasses), :meth:`Snapshot.same`
compares in Python (identity, ``shape``, ``strides``, ``dtype``, and ``flags.writeable`` of
NumPy arrays; identity and ``shape`` only for a tuple of ``cupy.ndarray``, whose other
attributes cannot change): slower, the same answer.
"""

from __future__ import annotations

import ctypes
import operator
import os
import shutil
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..core.log import get_logger
from .cache import cache_key, get_or_build
from .config import require

_log = get_logger("toolchain")

#: what of an array the Python comparison reads besides its identity
GEOMETRY = operator.attrgetter("shape", "strides", "dtype")
#: what of a CuPy array can change in place: its shape (setting ``strides`` or ``dtype`` raises
#: AttributeError on CuPy 14.2, checked on the H200; ``data`` is read-only in CuPy's class).
#: Comparing shape, strides and dtype took 25 µs for 25 CuPy arrays there (2026-12-02).
CUPY_GEOMETRY = operator.attrgetter("shape")

# The snapshot: n, then per array its address, data address, nd, descr address, flags, the
# nd sizes and the nd strides. The tuple and array structs are CPython's and NumPy's public
# layouts (PyTupleObject: ob_refcnt, ob_type, ob_size, ob_item[]; PyArrayObject_fields).
_SOURCE = r"""
#include <cstdint>
struct Tuple { intptr_t refcnt; void* type; intptr_t size; const void* item[1]; };
struct Array {
    intptr_t refcnt; void* type; char* data; int nd; const intptr_t* dims;
    const intptr_t* strides; void* base; void* descr; int flags;
};
extern "C" int64_t sk_same_arrays(const Tuple* t, const int64_t* s) {
    const int64_t n = *s++;
    if (t->size != n) return 0;
    for (int64_t i = 0; i < n; ++i) {
        const Array* a = static_cast<const Array*>(t->item[i]);
        // the identity first: only then is the object known to be the array read below
        if (reinterpret_cast<int64_t>(a) != s[0]) return 0;
        if (reinterpret_cast<int64_t>(a->data) != s[1] || a->nd != s[2]
            || reinterpret_cast<int64_t>(a->descr) != s[3] || a->flags != s[4]) return 0;
        const int nd = a->nd;
        s += 5;
        for (int d = 0; d < nd; ++d)
            if (a->dims[d] != s[d] || a->strides[d] != s[nd + d]) return 0;
        s += 2 * nd;
    }
    return 1;
}

// CuPy's ndarray (cupy/_core/core.pxd, a Cython class): ... Py_ssize_t size; vector _shape;
// vector _strides; ... The offset of _shape is found and checked when the function loads
// (``_cupy_layout``); a vector is its begin, end and capacity pointers.
struct Vec { const int64_t* begin; const int64_t* end; const int64_t* cap; };
extern "C" int64_t sk_same_cupy_arrays(const Tuple* t, const int64_t* s) {
    const int64_t n = *s++;
    const int64_t shape_at = *s++;
    if (t->size != n) return 0;
    for (int64_t i = 0; i < n; ++i) {
        const char* a = static_cast<const char*>(t->item[i]);
        if (reinterpret_cast<int64_t>(a) != s[0]) return 0;  // the identity first, as above
        const int64_t nd = s[1];
        const Vec* shape = reinterpret_cast<const Vec*>(a + shape_at);
        const Vec* strides = shape + 1;
        if (shape->end - shape->begin != nd || strides->end - strides->begin != nd) return 0;
        s += 2;
        for (int64_t d = 0; d < nd; ++d)
            if (shape->begin[d] != s[d] || strides->begin[d] != s[nd + d]) return 0;
        s += 2 * nd;
    }
    return 1;
}
"""
_ENTRY = "sk_same_arrays"
_CUPY_ENTRY = "sk_same_cupy_arrays"
_FLAGS = ("-O2", "-fPIC", "-shared", "-std=c++17")

_lock = threading.Lock()
_loaded: list[Any] = []  # [the C function, or None where it could not be had]
_loaded_cupy: list[Any] = []  # [(the C function, the offset of _shape), or None]
_library: list[Any] = []  # [the loaded library, or None]
_library_lock = threading.Lock()  # not _lock: _function() loads the library while holding that


def _words(a: np.ndarray) -> list[int]:
    """``a``'s entry of a snapshot, from what NumPy says of it (not from its struct)."""
    return [
        id(a), a.__array_interface__["data"][0], a.ndim, id(a.dtype), a.flags.num,
        *a.shape, *a.strides,
    ]  # fmt: skip


def _compiler() -> str:
    """``$CXX``, else the first of g++, clang++, c++ on the PATH (not ``find_cxx``: its OpenMP
    probe and warnings concern the cpu backend, and this serves the embedded backend too)."""
    for name in (require("STENCILKIT_CACHE_DIR").cxx, "g++", "clang++", "c++"):
        path = shutil.which(name) if name else None
        if path is not None:
            return path
    raise FileNotFoundError("no C++ compiler")


def _build(out: Path, cxx: str) -> None:
    src = out / "same_arrays.cpp"
    src.write_text(_SOURCE)
    cmd = [cxx, *_FLAGS, str(src), "-o", str(out / "same_arrays.so")]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr[-2000:]}")


def _library_of_process() -> Any:
    """The comparisons' library, built or found in the cache, loaded once; None where it cannot
    be had (no compiler, a cache that cannot be written)."""
    if not _library:
        with _library_lock:
            if not _library:
                try:
                    cxx = _compiler()
                    st = os.stat(cxx)
                    key = cache_key([("same_arrays", _SOURCE), ("cxx", cxx), ("flags", " ".join(_FLAGS)),
                                     ("cxx-file", f"{st.st_size} {st.st_mtime_ns}")])  # fmt: skip
                    entry = get_or_build(
                        key, lambda d: _build(d, cxx), {"program": "same_arrays", "target": "cpu"}
                    )
                    # PyDLL: the GIL stays held during a call
                    _library.append(ctypes.PyDLL(str(entry.path / "same_arrays.so")))
                except Exception as e:  # any failure: the Python comparison serves
                    _log.debug("no C comparison of arrays (%s): comparing in Python", e)
                    _library.append(None)
    return _library[0]


def _entry(name: str) -> Any:
    lib = _library_of_process()
    if lib is None:
        return None
    fn = getattr(lib, name)
    fn.argtypes = [ctypes.py_object, ctypes.c_void_p]
    fn.restype = ctypes.c_int64
    return fn


def _load() -> Any:
    """The C comparison of NumPy arrays, checked against NumPy; None where it cannot be had (no
    compiler, a cache that cannot be written, another struct layout)."""
    fn = _entry(_ENTRY)
    return fn if fn is not None and _works(fn) else None


def change_in_place(a: np.ndarray, attribute: str, value: Any) -> None:
    """``a.shape = value`` or ``a.dtype = value``, as a user may still do it: NumPy 2.5
    deprecates both assignments and keeps private ``ndarray._set_shape``/``_set_dtype`` for them
    (without the warning)."""
    setter = getattr(a, f"_set_{attribute}", None)
    if setter is not None:
        setter(value)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        setattr(a, attribute, value)


def _works(fn: Any) -> bool:
    """Whether ``fn`` reads the structs as NumPy describes them: equal to a snapshot, and
    unequal after each kind of in-place change."""
    # a strided view and an int32 array: each word read at the wrong place would differ
    equal = (np.zeros((3, 4, 5)), np.zeros((2, 6))[:, ::2], np.zeros(7, dtype=np.int32))
    snap = np.array([len(equal), *(w for a in equal for w in _words(a))], dtype=np.int64)
    if fn(equal, snap.ctypes.data) != 1:
        _log.debug("the C comparison disagrees with NumPy on equal arrays: comparing in Python")
        return False
    changes: list[Callable[[np.ndarray], None]] = [
        lambda a: change_in_place(a, "shape", (3, 20)),
        lambda a: change_in_place(a, "dtype", np.int64),
        lambda a: setattr(a.flags, "writeable", False),
    ]
    for change in changes:
        a = np.zeros((3, 4, 5))
        snap = np.array([1, *_words(a)], dtype=np.int64)
        change(a)
        if fn((a,), snap.ctypes.data) != 0:
            _log.debug("the C comparison misses an in-place change: comparing in Python")
            return False
    return True


def _function() -> Any:
    if not _loaded:
        with _lock:
            if not _loaded:
                _loaded.append(_load())
    return _loaded[0]


def _cupy_layout(cp: Any) -> int | None:
    """The byte offset of ``_shape`` in CuPy's ndarray, found from what CuPy says of a few
    arrays (their ``size``, ``ndim``, ``shape`` and ``strides``), read only within each array's
    own object: the word where ``size`` is, followed by two vectors of ``ndim`` elements that
    hold the shape and the strides, at the same offset in every one (1 to 4 dimensions, views
    included). None unless exactly one offset fits."""
    probes = (
        cp.empty(3),
        cp.empty((5, 7), np.float32),
        cp.empty((2, 3, 4))[:, ::2],
        cp.empty((2, 3, 1, 5), np.int32).transpose(3, 1, 0, 2),
    )
    words = []
    for a in probes:
        nbytes = type(a).__basicsize__ // 8 * 8
        words.append(np.frombuffer(ctypes.string_at(id(a), nbytes), dtype=np.int64))
    found = []
    for k in range(1, min(len(w) for w in words) - 5):
        fits = True
        for a, w in zip(probes, words):
            nd = 8 * a.ndim
            if not (w[k - 1] == a.size and w[k + 1] - w[k] == nd and w[k + 4] - w[k + 3] == nd):
                fits = False
                break
            if w[k] < 4096 or w[k] % 8 or w[k + 3] < 4096 or w[k + 3] % 8:
                fits = False
                break
        if not fits:
            continue
        # only now, the words being two vectors of the right lengths in every array: their data
        same = all(
            tuple(np.frombuffer(ctypes.string_at(int(w[k]), 8 * a.ndim), np.int64)) == a.shape
            and tuple(np.frombuffer(ctypes.string_at(int(w[k + 3]), 8 * a.ndim), np.int64))
            == a.strides
            for a, w in zip(probes, words)
        )
        if same:
            found.append(8 * k)
    return found[0] if len(found) == 1 else None


def _cupy_words(a: Any) -> list[int]:
    """``a``'s entry of a CuPy snapshot, from what CuPy says of it."""
    return [id(a), a.ndim, *a.shape, *a.strides]


def _load_cupy() -> Any:
    """The C comparison of CuPy arrays and the offset it reads at, checked against CuPy: equal
    to a snapshot, unequal after an in-place change of the shape; None where it cannot be had."""
    cp: Any = sys.modules.get("cupy")
    fn = _entry(_CUPY_ENTRY) if cp is not None else None
    if fn is None:
        return None
    try:
        at = _cupy_layout(cp)
        if at is None:
            _log.debug("CuPy's ndarray layout not recognised: comparing CuPy arrays in Python")
            return None
        equal = (cp.empty((3, 4, 5)), cp.empty((2, 6))[:, ::2], cp.empty(7, np.int32))
        snap = np.array([len(equal), at, *(w for a in equal for w in _cupy_words(a))], np.int64)
        if fn(equal, snap.ctypes.data) != 1:
            return None
        a = cp.empty((3, 4, 5))
        snap = np.array([1, at, *_cupy_words(a)], np.int64)
        a.shape = (3, 20)
        if fn((a,), snap.ctypes.data) != 0 or fn((cp.empty((3, 4, 5)),), snap.ctypes.data) != 0:
            return None
    except Exception as e:  # the probe arrays could not be made (a CUDA graph capture, no free
        # memory): compared in Python this time, probed again for the next snapshot
        _log.debug("no C comparison of CuPy arrays yet (%s): comparing in Python", e)
        return _RETRY
    return fn, at


_RETRY = object()  # _load_cupy's answer where the probe failed for a reason that may pass


def _cupy_function() -> Any:
    if not _loaded_cupy:
        loaded = _load_cupy()  # two threads may both probe: the same answer
        if loaded is _RETRY:
            return None
        with _lock:
            if not _loaded_cupy:
                _loaded_cupy.append(loaded)
    return _loaded_cupy[0]


def _is_cupy(a: Any) -> bool:
    """Whether ``a`` is exactly a ``cupy.ndarray`` (not a subclass, which may add setters)."""
    cp = sys.modules.get("cupy")  # an array of it exists only where it is imported
    return cp is not None and type(a) is getattr(cp, "ndarray", None)


class Snapshot:
    """What :meth:`same` compares a later call's arrays with (it holds the arrays: no other
    object takes their addresses while it is kept)."""

    __slots__ = ("address", "arrays", "fn", "geometry", "ids", "key", "numpy", "words")

    def __init__(self, arrays: tuple[Any, ...]) -> None:
        self.arrays = arrays
        self.ids = tuple(map(id, arrays))
        self.key = CUPY_GEOMETRY if arrays and all(map(_is_cupy, arrays)) else GEOMETRY
        # also held by the C comparison: the dtypes it compares by address stay alive
        self.geometry = tuple(map(self.key, arrays))
        #: the NumPy arrays among them, whose writeability the Python comparison checks
        self.numpy = tuple(a for a in arrays if isinstance(a, np.ndarray))
        self.fn = None
        self.words: np.ndarray | None = None
        self.address = 0
        fn, head, words_of = None, [len(arrays)], _words
        if arrays and all(type(a) is np.ndarray for a in arrays):
            fn = _function()
        elif self.key is CUPY_GEOMETRY:  # every one exactly a cupy.ndarray
            found = _cupy_function()
            if found is not None:
                fn, head, words_of = found[0], [len(arrays), found[1]], _cupy_words
        if fn is not None:
            words = head + [w for a in arrays for w in words_of(a)]
            self.words = np.array(words, dtype=np.int64)  # held: its address is passed
            self.address = self.words.ctypes.data
            self.fn = fn

    def same(self, arrays: tuple[Any, ...]) -> bool:
        """Whether ``arrays`` are the snapshot's arrays (the same objects), unchanged."""
        fn = self.fn
        if fn is not None and type(arrays) is tuple:  # the C function reads a tuple's struct
            return fn(arrays, self.address) == 1  # type: ignore[no-any-return]
        return (
            tuple(map(id, arrays)) == self.ids
            and tuple(map(self.key, arrays)) == self.geometry
            and (not self.numpy or all(a.flags.writeable for a in self.numpy))
        )
