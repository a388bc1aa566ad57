"""Compiling the loops of :mod:`shingling.fast` with numba, once per machine where a cache can be kept.

Every loop of the compiled path is a plain Python function wrapped in :class:`Compiled` (the ones
that are called from Arrow code) or in ``njit(inline="always")`` (the small steps those loops are
made of, inlined by numba into each loop that calls them, across modules).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import inspect
import pkgutil
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

#: numba reads 64-bit unsigned arithmetic from values of this type.
U64 = np.uint64

#: The modules whose code numba inlines into the compiled loops: all of this package, and the
#: reference rules it compiles (:mod:`shingling.pairs`).
INLINED_FROM = ("shingling.pairs",)


@functools.cache
def source_stamp() -> str:
    """A digest of the source of every module a compiled loop may inline (this package's and
    :data:`INLINED_FROM`), read through their loaders (files or the zip ``--py-files`` ships).

    numba keys its cache on the source of the file that defines a loop only, so a change to a step
    inlined from another module would leave a stale loop in the cache; this stamp replaces numba's
    (:class:`Compiled`), so any change to any of these modules compiles every loop again.
    """
    package = __name__.rpartition(".")[0]
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations is not None
    names = sorted(
        f"{package}.{m.name}" for m in pkgutil.iter_modules(spec.submodule_search_locations)
    )
    digest = hashlib.sha256()
    for name in [package, *names, *INLINED_FROM]:
        found = importlib.util.find_spec(name)
        loader = found.loader if found is not None else None
        source = loader.get_source(name) if loader is not None else None  # type: ignore[attr-defined]
        digest.update(f"{name}\0{source}\0".encode())
    return digest.hexdigest()


class Compiled:
    """A function compiled by numba on first call, its machine code cached on disk when it can be.

    numba keeps the cache next to the source (``__pycache__``) or in the user's cache directory
    (``NUMBA_CACHE_DIR`` chooses another; code shipped in a zip with ``--py-files`` always uses
    it), stamped with :func:`source_stamp`. Where there is none, or saving fails (a read-only home
    on a cluster node), the function is compiled again without a cache: each process then compiles
    each loop it uses once (2 to 7 s each, measured).

    ``writes`` names the arguments the loop writes; every other array is passed as a read-only
    view (:func:`read_only`), so that each loop has one compiled version whether its caller's
    arrays come from Arrow (read-only) or from numpy (writable). A loop that writes an argument it
    does not name fails to compile ("Cannot modify readonly array").
    """

    def __init__(self, func: Callable[..., Any], *, writes: tuple[str, ...] = ()) -> None:
        self.__doc__ = func.__doc__
        self.__name__ = func.__name__
        self._func = func
        names = list(inspect.signature(func).parameters)
        unknown = set(writes) - set(names)
        if unknown:
            raise ValueError(f"{func.__name__} has no parameter {sorted(unknown)}")
        #: the arguments passed read-only: every one but those the loop writes (``writes``)
        self._read_only = tuple(name not in writes for name in names)
        self._compiled: Any = None
        self._cached: Any = None
        try:
            cached = njit(cache=True, nogil=True)(func)
            _stamp(cached)
        except RuntimeError:  # "no locator available" (nowhere to keep a cache), or no stamp
            pass
        else:
            self._cached = cached

    def __call__(self, *args: Any) -> Any:
        # numba types a read-only array apart from a writable one, so a loop given both (Arrow's
        # buffers are read-only, arrays made in numpy are not) would be compiled twice
        args = tuple(
            read_only(a) if kept else a for a, kept in zip(args, self._read_only, strict=False)
        )
        if self._cached is not None:
            try:
                return self._cached(*args)
            except OSError:  # the cache could not be written: compile without one
                self._cached = None
        if self._compiled is None:
            self._compiled = njit(cache=False, nogil=True)(self._func)
        return self._compiled(*args)


def read_only(value: Any) -> Any:
    """``value`` unchanged, unless it is a writable numpy array: then a read-only view of it.

    >>> a = np.zeros(3)
    >>> read_only(a).flags.writeable, a.flags.writeable, read_only(a).base is a
    (False, True, True)
    """
    if not isinstance(value, np.ndarray) or not value.flags.writeable:
        return value
    view = value.view()
    view.flags.writeable = False
    return view


def _stamp(dispatcher: Any) -> None:
    """Key the dispatcher's cache on :func:`source_stamp` as well as on its own file's source.

    numba has no public hook for this: the stamp is the attribute its cache index compares
    (``IndexDataCacheFile._source_stamp``, numba 0.61 to 0.68). Where a numba release moves it,
    RuntimeError: the loop is then compiled without a cache rather than cached unsafely (and
    tests/shingling/fast/test_compiled.py fails).
    """
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is None or not hasattr(cache_file, "_source_stamp"):
        raise RuntimeError("numba's cache has no source stamp to extend")
    cache_file._source_stamp = (cache_file._source_stamp, source_stamp())


@njit(inline="always")
def grown(array: Any, size: int) -> Any:
    """A copy of ``array`` with room for ``size`` values (those past its length undefined)."""
    out = np.empty(size, dtype=array.dtype)
    out[: len(array)] = array
    return out
