"""A batch of texts as the compiled loops read it: UTF-8 bytes, words, and their shingle hashes.

The reference is :mod:`shingling.normalize` (what a word is), :mod:`shingling.shingles` (the
windows of words) and :mod:`shingling.hashing` (their hashes). After Arrow's kernels have folded a
batch (NFKC, lowercase: :func:`shingling.normalize.fold_array`), a text is a run of UTF-8 bytes;
:func:`token_hashes` cuts it into words (runs of code points that are letters, marks or numbers,
looked up in :func:`word_code_points`, a table that the normalizer's own regular expression built,
so the two cannot disagree) or characters, and hashes each; :func:`shingle_hashes` turns those
into the hashes of every window. Both are inlined into the loops of :mod:`shingling.fast.sketch`
and :mod:`shingling.fast.exact`. Parquet readers do not check that strings are UTF-8, and Arrow's
text kernels fail a whole batch on one bad text: :func:`invalid_utf8` finds those first.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from shingling.fast.compiled import Compiled
from shingling.fast.xxh64 import xxh64_bytes, xxh64_lanes
from shingling.normalize import NON_WORD_RUN, fold_array, normalize_array
from shingling.sketch import UNITS

#: Texts of up to half this many shingles find their distinct ones with a hash set of this size
#: (in cache: 16 bytes a slot), longer ones by sorting.
SET_SIZE = 1 << 14


@functools.cache
def word_code_points() -> np.ndarray:
    """A boolean per Unicode code point: True where it is part of a word (see normalize.py).

    Built once per process by running the normalizer's own pattern over every code point.
    """
    cps = np.arange(0x110000, dtype=np.int64)
    cps = cps[(cps < 0xD800) | (cps > 0xDFFF)]  # surrogates cannot occur in UTF-8
    sizes = np.select([cps < 0x80, cps < 0x800, cps < 0x10000], [1, 2, 3], 4)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    data = "".join(map(chr, cps.tolist())).encode("utf-8")
    chars = pa.Array.from_buffers(
        pa.large_string(), len(cps), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    separator = pc.match_substring_regex(chars, pattern=f"^{NON_WORD_RUN}$")
    table = np.zeros(0x110000, dtype=bool)
    table[cps] = ~separator.to_numpy(zero_copy_only=False)
    return table


def string_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The int64 value offsets (from 0) and the UTF-8 bytes of a string array's values."""
    arr = arr.cast(pa.large_string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[
        arr.offset : arr.offset + len(arr) + 1
    ]
    data = arr.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    return offsets - offsets[0], raw[offsets[0] : offsets[-1]]


@dataclass(frozen=True)
class Folded:
    """A batch of texts as the compiled loops read them: folded (:func:`shingling.normalize.fold_array`,
    or normalized when the tokens are characters), then its UTF-8 bytes, the int64 offsets of
    each text in them (one more than there are texts), which texts are not null, and the
    arguments the loops take to cut tokens."""

    data: np.ndarray
    offsets: np.ndarray
    valid: np.ndarray
    word_table: np.ndarray
    chars: bool

    @classmethod
    def of(cls, texts: pa.Array, unit: str) -> Folded:
        if unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
        chars = unit == "chars"
        folded = normalize_array(texts) if chars else fold_array(texts)
        offsets, data = string_buffers(folded)
        valid = pc.is_valid(folded).to_numpy(zero_copy_only=False)
        return cls(data, offsets, valid, word_code_points(), chars)

    def loop_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
        """The batch as the compiled loops take it, in their order (data, offsets, valid,
        word table, chars)."""
        return self.data, self.offsets, self.valid, self.word_table, self.chars


def invalid_utf8(texts: pa.Array | pa.ChunkedArray) -> pa.BooleanArray:
    """Which texts of an Arrow string array hold bytes that are not well-formed UTF-8 (false for
    a null). Parquet readers do not check string columns, and Arrow's text kernels fail a whole
    batch on such a text; mask these out before :func:`sketch_batch`. One compiled pass over the
    bytes (Spark's own check, ``is_valid_utf8`` in the JVM, cost more than all of it).

    >>> texts = pa.array([b"caf\\xc3\\xa9", b"caf\\xe9", None]).view(pa.string())
    >>> invalid_utf8(texts).to_pylist()
    [False, True, False]
    """
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    offsets, data = string_buffers(texts)
    valid = np.ones(len(texts), dtype=bool)
    valid_utf8(data, offsets, valid)
    return pa.array(~valid & pc.is_valid(texts).to_numpy(zero_copy_only=False))


def _valid_utf8(data: Any, offsets: Any, out: Any) -> None:
    """Whether each text ``data[offsets[i]:offsets[i + 1]]`` is well-formed UTF-8 (the Unicode
    standard's table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF, no cut
    sequence), what Arrow's text kernels require and Python's strict decoder accepts."""
    for i in range(len(offsets) - 1):
        p = offsets[i]
        end = offsets[i + 1]
        ok = True
        while p < end:
            b = data[p]
            if b < 0x80:
                p += 1
                continue
            lo, hi = 0x80, 0xBF  # the allowed range of the first continuation byte
            if 0xC2 <= b <= 0xDF:
                n = 1
            elif b == 0xE0:
                n, lo = 2, 0xA0
            elif b == 0xED:
                n, hi = 2, 0x9F
            elif 0xE1 <= b <= 0xEF:
                n = 2
            elif b == 0xF0:
                n, lo = 3, 0x90
            elif b == 0xF4:
                n, hi = 3, 0x8F
            elif 0xF1 <= b <= 0xF3:
                n = 3
            else:
                ok = False
                break
            if p + n >= end or not lo <= data[p + 1] <= hi:
                ok = False
                break
            for q in range(p + 2, p + n + 1):
                if data[q] & 0xC0 != 0x80:
                    ok = False
            if not ok:
                break
            p += n + 1
        out[i] = ok


valid_utf8 = Compiled(_valid_utf8, writes=("out",))


@njit(inline="always")
def code_point(data: Any, p: int, end: int) -> tuple[Any, int]:
    """The code point starting at ``data[p]`` (a lead byte) and its size in bytes.

    A stray continuation byte reads as code point 0x80 (not part of a word), size 1; bytes past the
    text's end read as its last byte, so malformed UTF-8 cannot read out of bounds.
    """
    b = np.int64(data[p])
    if b < 0x80:
        return b, 1
    if b < 0xC0:
        return 0x80, 1
    last = end - 1
    c1 = np.int64(data[min(p + 1, last)]) & 0x3F
    if b < 0xE0:
        return ((b & 0x1F) << 6) | c1, 2
    c2 = np.int64(data[min(p + 2, last)]) & 0x3F
    if b < 0xF0:
        return ((b & 0x0F) << 12) | (c1 << 6) | c2, 3
    c3 = np.int64(data[min(p + 3, last)]) & 0x3F
    return min(((b & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3, 0x10FFFF), 4


@njit(inline="always")
def token_hashes(
    data: Any, start: int, end: int, word_table: Any, chars: bool, seed: Any, out: Any
) -> int:
    """Hash every token of ``data[start:end]`` into ``out``; the number of tokens."""
    n = 0
    p = start
    if chars:
        while p < end:
            q = p + 1
            while q < end and (data[q] & 0xC0) == 0x80:
                q += 1
            out[n] = xxh64_bytes(data, p, q, seed)
            n += 1
            p = q
        return n
    word_start = -1
    while p < end:
        cp, size = code_point(data, p, end)
        if word_table[cp]:
            if word_start < 0:
                word_start = p
        elif word_start >= 0:
            out[n] = xxh64_bytes(data, word_start, p, seed)
            n += 1
            word_start = -1
        p += size
    if word_start >= 0:
        out[n] = xxh64_bytes(data, word_start, min(p, end), seed)
        n += 1
    return n


@njit(inline="always")
def token_buffer(offsets: Any, chars: bool) -> Any:
    """Room for the token hashes of the longest text of a batch: a text of b bytes has at most b
    characters, and at most b // 2 + 1 words."""
    longest = 0
    for t in range(len(offsets) - 1):
        longest = max(longest, offsets[t + 1] - offsets[t])
    return np.empty(longest + 1 if chars else longest // 2 + 1, dtype=np.uint64)


@njit(inline="always")
def shingle_hashes(buf: Any, n: int, width: int, seed: Any) -> int:
    """Replace the ``n`` token hashes in ``buf`` by the hashes of every window of ``width`` of them
    (one window of all ``n`` when there are fewer: :func:`shingling.shingles.shingles`); how many.
    Shingle i is written over token hash i, which no later shingle reads."""
    m = n - width + 1 if n >= width else 1
    w = width if n >= width else n
    for i in range(m):
        buf[i] = xxh64_lanes(buf, i, w, seed)
    return m
