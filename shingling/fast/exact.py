"""Exact overlaps of text pairs, a batch at once: the vectorized form of :mod:`shingling.exact`.

Verification (:mod:`shingling.spark.verify`) and the benchmarks' truth use it: each text's whole
set of distinct shingle hashes (:func:`shingle_sets`, the words and shingles of
:mod:`shingling.fast.text`), then per pair the smaller set in a hash table probed by the other
(:func:`overlaps`), compiled. Equal to :func:`shingling.exact.overlap` pair by pair, with its
convention for empty sets (tests/shingling/test_exact.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shingling.fast.compiled import U64, Compiled
from shingling.fast.estimators import count_shared
from shingling.fast.text import (
    SET_SIZE,
    Folded,
    shingle_hashes,
    token_buffer,
    token_hashes,
)
from shingling.hashing import SEED


@dataclass(frozen=True)
class BatchOverlap:
    """Exact overlaps of a batch of text pairs (see :func:`overlap_batch`), one row per pair."""

    shared: np.ndarray
    size_a: np.ndarray
    size_b: np.ndarray

    @property
    def jaccard(self) -> np.ndarray:
        """:attr:`shingling.exact.Overlap.jaccard` of each pair: |A ∩ B| / |A ∪ B|, 0.0 when both
        sets are empty (a text without words, or null, has the empty set)."""
        return _ratio(self.shared, self.size_a + self.size_b - self.shared)

    @property
    def containment_a(self) -> np.ndarray:
        """:attr:`shingling.exact.Overlap.containment_a`: |A ∩ B| / |A|, 0.0 when A is empty."""
        return _ratio(self.shared, self.size_a)

    @property
    def containment_b(self) -> np.ndarray:
        """:attr:`shingling.exact.Overlap.containment_b`: |A ∩ B| / |B|, 0.0 when B is empty."""
        return _ratio(self.shared, self.size_b)


def _ratio(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    """part / whole, 0.0 where whole is 0 (the library's convention for an empty set)."""
    return np.divide(
        part, whole, out=np.zeros(len(whole), dtype=np.float64), where=whole > 0, casting="unsafe"
    )


def overlap_batch(
    texts_a: pa.Array | pa.ChunkedArray,
    texts_b: pa.Array | pa.ChunkedArray,
    *,
    width: int,
    unit: str = "words",
    ids_a: pa.Array | pa.ChunkedArray | None = None,
    ids_b: pa.Array | pa.ChunkedArray | None = None,
) -> BatchOverlap:
    """The exact shingle-set overlap of each pair (texts_a[i], texts_b[i]), vectorized: the whole
    set of each text's distinct shingle hashes (:func:`shingle_sets`), then
    per pair the smaller set in a hash table probed by the other (two very long texts: sorted and
    merged), compiled. Equal to :func:`shingling.exact.overlap` pair by pair (tested).

    ``ids_a`` and ``ids_b``, if given, name each text (equal ids: equal texts): a document found in
    several pairs of the batch, on either side, has its set computed once.

    >>> o = overlap_batch(pa.array(["A b c d e", "x"]), pa.array(["a b c d f", None]), width=4)
    >>> o.shared.tolist(), o.size_a.tolist(), o.jaccard.round(4).tolist()
    ([1, 0], [2, 1], [0.3333, 0.0])
    >>> o = overlap_batch(pa.array(["a b c d e"] * 2), pa.array(["a b c d f", "a b c d e"]), width=4,
    ...                   ids_a=pa.array([1, 1]), ids_b=pa.array([2, 1]))
    >>> o.shared.tolist(), o.size_b.tolist()
    ([1, 2], [2, 2])
    """
    if width < 1:
        raise ValueError(f"width must be at least 1, got width={width}")
    texts = pa.concat_arrays([_whole(texts_a), _whole(texts_b)])
    if ids_a is None or ids_b is None:
        unique, side = texts, np.arange(len(texts), dtype=np.int64)
    else:
        # each distinct id once: its first text, its set computed once, then counted per pair
        encoded = pc.dictionary_encode(pa.concat_arrays([_whole(ids_a), _whole(ids_b)]))
        side = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        first = np.empty(len(encoded.dictionary), dtype=np.int64)
        first[side[::-1]] = np.arange(len(side) - 1, -1, -1)  # the last write wins: the first
        unique = texts.take(pa.array(first))
    batch = Folded.of(unique, unit)
    starts, ordered, values = shingle_sets(*batch.loop_args(), width, np.uint64(SEED))
    sizes = np.diff(starts)
    side_a, side_b = side[: len(texts_a)], side[len(texts_a) :]
    shared = overlaps(starts, ordered, values, side_a, side_b)
    size_a, size_b = sizes[side_a], sizes[side_b]
    return BatchOverlap(shared, size_a.astype(np.int64), size_b.astype(np.int64))


def _whole(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _shingle_sets(
    data: Any,
    offsets: Any,
    valid: Any,
    word_table: Any,
    chars: bool,
    width: int,
    seed: Any,
) -> tuple[Any, Any, Any]:
    """The whole set of distinct shingle hashes of every text of a batch (the arguments are
    those of :func:`shingling.fast.sketch.sketch_texts`), for exact overlaps.

    Returns per text the start of its set in the values (one more than there are texts) and
    whether its set is sorted, then the values. A text of up to ``SET_SIZE // 2`` shingles finds
    its distinct ones with a hash set and keeps them in the order first seen (no sort: the pairs
    are counted by probing, :func:`_overlaps`); a longer one is sorted.
    """
    n_texts = len(offsets) - 1
    starts = np.zeros(n_texts + 1, dtype=np.int64)
    ordered = np.zeros(n_texts, dtype=np.bool_)
    buf = token_buffer(offsets, chars)
    signed = buf.view(np.int64)
    # a text of b bytes has at most b characters and b // 2 + 1 words: room for every shingle
    values = np.empty((offsets[n_texts] - offsets[0]) // (1 if chars else 2) + n_texts, np.int64)
    slots = np.empty(SET_SIZE, dtype=np.int64)
    stamps = np.zeros(SET_SIZE, dtype=np.int64)
    mask = SET_SIZE - 1
    kept = 0
    for t in range(n_texts):
        starts[t] = kept
        if not valid[t]:
            continue
        n = token_hashes(data, offsets[t], offsets[t + 1], word_table, chars, seed, buf)
        if n == 0:
            continue
        m = shingle_hashes(buf, n, width, seed)
        if m <= SET_SIZE // 2:
            stamp = t + 1
            for i in range(m):
                h = np.int64(buf[i])
                slot = np.int64(buf[i] >> U64(40)) & mask
                while stamps[slot] == stamp and slots[slot] != h:
                    slot = (slot + 1) & mask
                if stamps[slot] != stamp:
                    stamps[slot] = stamp
                    slots[slot] = h
                    values[kept] = h
                    kept += 1
        else:
            run = signed[:m]
            run.sort()
            for i in range(m):
                if i == 0 or run[i] != run[i - 1]:
                    values[kept] = run[i]
                    kept += 1
            ordered[t] = True
    starts[n_texts] = kept
    return starts, ordered, values[:kept]


def _overlaps(starts: Any, ordered: Any, values: Any, side_a: Any, side_b: Any) -> Any:
    """Per pair i, how many values the sets ``side_a[i]`` and ``side_b[i]`` of
    :func:`_shingle_sets` share: the smaller set is put in a hash table and the other probes it;
    two sets too large for the table are sorted (each once, in place) and merged."""
    n = len(side_a)
    out = np.zeros(n, dtype=np.int64)
    slots = np.empty(SET_SIZE, dtype=np.int64)
    stamps = np.zeros(SET_SIZE, dtype=np.int64)
    mask = SET_SIZE - 1
    for i in range(n):
        a, b = side_a[i], side_b[i]
        if starts[a + 1] - starts[a] > starts[b + 1] - starts[b]:
            a, b = b, a  # a: the smaller set
        a0, a1, b0, b1 = starts[a], starts[a + 1], starts[b], starts[b + 1]
        if a1 == a0:
            continue
        if a1 - a0 > SET_SIZE // 2:
            for t in (a, b):
                if not ordered[t]:
                    values[starts[t] : starts[t + 1]].sort()
                    ordered[t] = True
            out[i] = count_shared(values, a0, a1, values, b0, b1)
            continue
        stamp = i + 1
        for p in range(a0, a1):
            h = values[p]
            slot = (h >> 40) & mask
            while stamps[slot] == stamp:
                slot = (slot + 1) & mask
            stamps[slot] = stamp
            slots[slot] = h
        shared = 0
        for q in range(b0, b1):
            h = values[q]
            slot = (h >> 40) & mask
            while stamps[slot] == stamp:
                if slots[slot] == h:
                    shared += 1
                    break
                slot = (slot + 1) & mask
        out[i] = shared
    return out


shingle_sets = Compiled(_shingle_sets)
overlaps = Compiled(_overlaps, writes=("ordered", "values"))
