"""The nightly join: every indexed sketch probes the prefixes of a batch of new documents.

A nightly run pairs a batch of new documents with an index of every document seen so far, and the
index is far larger than the batch. :class:`ProbeTable` holds the batch's side in memory (its
distinct texts: ids, sketches, and the prefix of each sketch in a hash table), and
:meth:`ProbeTable.probe` streams the index's documents through it: each indexed sketch looks up its
bottom-k hashes, meets the batch documents whose prefix holds one of them, and every such pair is
tested and scored once by the compiled loop :func:`probe_sketches` (the
arithmetic of :mod:`shingling.estimators`). The batch's own documents are streamed the same way
for the pairs within the batch.

Why it is lossless: a pair whose Jaccard estimate reaches the threshold shares at least
t = min_shared(n) of the n hashes of the batch sketch's bottom-k part, so any n - t + 1 of them
hold one of the shared hashes, and the other sketch holds it. Prefix filtering needs one global
order of hashes only when both sides use prefixes; here the indexed side uses every hash, so each
batch sketch may order its own. The order is rarest first by the hash's count in the batch's
sketches: a hash common in the batch (boilerplate, templates) is as common in the corpus, and
leaving it out of the prefixes keeps the pairs tested near the pairs that matter.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shingling import pairs
from shingling.fast.compiled import Compiled, grown
from shingling.fast.estimators import score_pair
from shingling.fast.postings import int64s, single, sketch_arrays
from shingling.schema import (
    CONTAINMENT_A,
    CONTAINMENT_B,
    DOC_ID,
    JACCARD,
    MATCHES,
    N_SHINGLES,
    N_WORDS,
    SHINGLES_A,
    SKETCH,
    TEXT_HASH,
    arrow_fields,
)

IN_BATCH = "in_batch"  # a probing row that is one of the table's own documents
PROBE = "probe_id"  # the batch document of a pair (null: a row listed for its text only)


def output_schema(id_type: pa.DataType) -> pa.Schema:
    """The rows :meth:`ProbeTable.probe` returns: the probing document's columns, then the pair's.

    ``containment_a`` is the batch document's estimated containment in the probing one,
    ``containment_b`` the reverse; ``shingles_a`` is the batch document's shingle count.
    """
    return pa.schema(
        [
            *arrow_fields((DOC_ID, N_SHINGLES, SKETCH, TEXT_HASH, N_WORDS), id_type),
            pa.field(IN_BATCH, pa.bool_()),
            pa.field(PROBE, id_type),
            *arrow_fields((MATCHES, JACCARD, CONTAINMENT_A, CONTAINMENT_B, SHINGLES_A), id_type),
        ]
    )


def min_shared(n: np.ndarray, threshold: float) -> np.ndarray:
    """:func:`shingling.pairs.min_shared` of each size in ``n``."""
    return np.array([pairs.min_shared(int(size), threshold) for size in n], dtype=np.int64)


class ProbeTable:
    """The batch side of the nightly join: distinct texts with their sketches and prefixes.

    ``reps`` has one row per distinct text of the batch (or of a slice of it): doc_id, n_shingles,
    sketch (sorted ascending), text_hash, n_words. Indexed documents holding one of the batch's
    texts (same text hash and word count) are exact copies: :meth:`probe` lists them instead of
    scoring them. ``texts`` (text_hash, n_words) are the whole batch's texts when ``reps`` is a
    slice: a copy of a text of another slice is a copy here too (None: those of ``reps``).
    """

    def __init__(
        self,
        reps: pa.Table | pa.RecordBatch,
        *,
        k: int,
        threshold: float,
        texts: pa.Table | pa.RecordBatch | None = None,
    ) -> None:
        self.k = k
        self.threshold = threshold
        self.ids = single(reps.column(DOC_ID))
        self.n_shingles = int64s(reps.column(N_SHINGLES))
        self.offsets, self.values = sketch_arrays(reps.column(SKETCH))
        texts = reps if texts is None else texts
        text_hash, n_words = int64s(texts.column(TEXT_HASH)), int64s(texts.column(N_WORDS))
        by_text = np.lexsort((n_words, text_hash))
        self.text_hashes, self.text_words = text_hash[by_text], n_words[by_text]
        hashes, rows = self._prefixes()
        if len(rows) >= 2**31:  # the hash table's row ranges are int32
            raise ValueError(f"{len(rows)} prefix hashes: hold fewer texts at a time")
        self.probe_rows = rows
        self.slots = probe_slots(hashes)
        self.seen = np.full(len(self.n_shingles), -1, dtype=np.int64)
        self.stamp = 0

    def __len__(self) -> int:
        return len(self.n_shingles)

    def _prefixes(self) -> tuple[np.ndarray, np.ndarray]:
        """Each sketch's first n - min_shared(n) + 1 hashes of its bottom-k part, rarest first (by
        the hash's count in the table, then by value): (hashes sorted, the row of each)."""
        starts = self.offsets[:-1]
        n = np.minimum(np.diff(self.offsets), self.k)
        rows = np.repeat(np.arange(len(n), dtype=np.int64), n)
        first = np.repeat(np.cumsum(n) - n, n)
        hashes = self.values[np.repeat(starts, n) + np.arange(len(rows)) - first]
        distinct, index, counts = np.unique(hashes, return_inverse=True, return_counts=True)
        order = np.lexsort((hashes, counts[index], rows))  # by row, then rarest, then value
        rank = np.empty(len(rows), dtype=np.int64)
        rank[order] = np.arange(len(rows)) - first[order]
        keep = rank < (n - min_shared(n, self.threshold) + 1)[rows]
        hashes, rows = hashes[keep], rows[keep]
        by_hash = np.argsort(hashes, kind="stable")
        return hashes[by_hash], rows[by_hash]

    def _copies(self, text_hash: np.ndarray, n_words: np.ndarray) -> np.ndarray:
        """Whether each (text_hash, n_words) is one of the table's texts."""
        found = np.zeros(len(text_hash), dtype=bool)
        lo = np.searchsorted(self.text_hashes, text_hash, side="left")
        hi = np.searchsorted(self.text_hashes, text_hash, side="right")
        for y in np.flatnonzero(hi > lo):  # rare: a text hash of the batch
            found[y] = bool((self.text_words[lo[y] : hi[y]] == n_words[y]).any())
        return found

    def probe(self, docs: pa.RecordBatch | pa.Table) -> pa.RecordBatch:
        """Probing rows (doc_id, n_shingles, sketch, text_hash, n_words, in_batch) -> the pairs
        (batch document, probing row) whose Jaccard estimate reaches the threshold, and a row
        without a pair for each indexed row holding one of the table's texts.

        A row with ``in_batch`` is a batch document: never paired with itself, and not a copy
        (the batch may be held in slices, a table each). A pair of two batch documents is found
        from either side or both.
        """
        ids = single(docs.column(DOC_ID))
        n_shingles = int64s(docs.column(N_SHINGLES))
        offsets, values = sketch_arrays(docs.column(SKETCH))
        text_hash = int64s(docs.column(TEXT_HASH))
        n_words = int64s(docs.column(N_WORDS))
        in_batch = single(docs.column(IN_BATCH)).to_numpy(zero_copy_only=False).astype(bool)
        y_self = np.full(len(ids), -1, dtype=np.int64)
        if in_batch.any():  # the row of each batch document in the table, if it is there
            rows = pc.index_in(ids.filter(pa.array(in_batch)), value_set=self.ids.cast(ids.type))
            y_self[in_batch] = rows.fill_null(-1).to_numpy(zero_copy_only=False)
        copy = ~in_batch & self._copies(text_hash, n_words)
        bits, keys, starts, ends = self.slots
        b, y, matches, jaccard, cont_a, cont_b = probe_sketches(
            bits,
            keys,
            starts,
            ends,
            self.probe_rows,
            self.values,
            self.offsets,
            self.n_shingles,
            values,
            offsets,
            n_shingles,
            y_self,
            ~copy,
            self.seen,
            self.stamp,
            self.k,
            self.threshold,
        )
        self.stamp += len(ids)
        listed = np.flatnonzero(copy)
        rows = np.concatenate([y, listed])
        pad = len(listed)
        probe_ids = self.ids.take(pa.array(b)).cast(ids.type)
        probe_ids = pa.concat_arrays([probe_ids, pa.nulls(pad, ids.type)])
        take = pa.array(rows)
        sketch = single(docs.column(SKETCH)).take(take).cast(pa.list_(pa.int64()))
        return pa.RecordBatch.from_arrays(
            [
                ids.take(take),
                pa.array(n_shingles[rows]),
                sketch,
                pa.array(text_hash[rows]),
                pa.array(n_words[rows]),
                pa.array(in_batch[rows]),
                probe_ids,
                _padded(matches, pad, pa.int32()),
                _padded(jaccard, pad, pa.float64()),
                _padded(cont_a, pad, pa.float64()),
                _padded(cont_b, pad, pa.float64()),
                _padded(self.n_shingles[b], pad, pa.int64()),
            ],
            schema=output_schema(ids.type),
        )


_TABLES: dict[str, ProbeTable] = {}  # this process's table, by the name its job gave it


def shared_table(name: str, build: Callable[[], ProbeTable]) -> ProbeTable:
    """The table called ``name``, built once per process and kept for the next tasks.

    A Spark Python worker runs one task at a time and serves many; without this each task would
    build the table again (2 s for 200,000 texts). One table is kept: the slices of a batch are
    scanned in order, and the old table is dropped before the next is built, so a process never
    holds two.
    """
    table = _TABLES.get(name)
    if table is None:
        _TABLES.clear()
        table = _TABLES[name] = build()
    return table


def _padded(values: np.ndarray, nulls: int, type_: pa.DataType) -> pa.Array:
    return pa.concat_arrays([pa.array(values, type=type_), pa.nulls(nulls, type_)])


def slices(documents: int, per_slice: int) -> int:
    """How many slices a batch of ``documents`` distinct texts is probed in, at most ``per_slice``
    held in memory at once (each slice is one scan of the index)."""
    return max(1, math.ceil(documents / max(per_slice, 1)))


def _probe_slots(hashes: Any) -> tuple[Any, Any, Any, Any]:
    """Sorted hashes -> an open-addressing table of their distinct values: per slot the hash and
    the range ``[start, end)`` of its rows (start -1: an empty slot); and a bit array, 32 bits per
    value, one set for each (a filter small enough for the processor's cache: most hashes looked
    up are in no prefix, and one bit tells). Hashes are xxHash64 values: their low bits index the
    slots, bits 32 and up the filter."""
    n = len(hashes)
    distinct = 0
    for i in range(n):
        if i == 0 or hashes[i] != hashes[i - 1]:
            distinct += 1
    size = 16
    while size < 2 * distinct:
        size *= 2
    bits = np.zeros(max(size * 16 // 64, 1), dtype=np.int64)
    mask = size - 1
    keys = np.zeros(size, dtype=np.int64)
    starts = np.full(size, -1, dtype=np.int32)
    ends = np.zeros(size, dtype=np.int32)
    i = 0
    while i < n:
        j = i + 1
        while j < n and hashes[j] == hashes[i]:
            j += 1
        bit = (hashes[i] >> 32) & (size * 16 - 1)
        bits[bit >> 6] |= np.int64(1) << (bit & 63)
        slot = hashes[i] & mask
        while starts[slot] != -1:
            slot = (slot + 1) & mask
        keys[slot] = hashes[i]
        starts[slot] = i
        ends[slot] = j
        i = j
    return bits, keys, starts, ends


def _probe_sketches(
    bits: Any,
    keys: Any,
    starts: Any,
    ends: Any,
    probe_rows: Any,
    b_values: Any,
    b_offsets: Any,
    b_n: Any,
    y_values: Any,
    y_offsets: Any,
    y_n: Any,
    y_self: Any,
    y_probed: Any,
    seen: Any,
    stamp: int,
    k: int,
    threshold: float,
) -> tuple[Any, Any, Any, Any, Any, Any]:
    """Each probed row y against the probe table's rows b whose prefix holds a hash of y's
    bottom-k part: every such pair (b, y) tested and scored once; those reaching ``threshold``.

    The probe table (``bits``, ``keys``, ``starts``, ``ends`` from :func:`_probe_slots` over the sorted prefix
    hashes, ``probe_rows`` the b row of each) holds the prefix of every b; the b sketches are
    ``b_values``/``b_offsets``/``b_n``, the y sketches ``y_values``/``y_offsets``/``y_n``. A row
    y is skipped unless ``y_probed``, and never paired with b = ``y_self[y]``. ``seen`` (one slot
    per b) remembers the last y each b met, as ``stamp + y``; the caller passes a ``stamp`` above
    every one used before, so the array needs no clearing between calls.

    Returns per pair: b row, y row, matches, jaccard, containment of b in y, of y in b.
    """
    mask = len(keys) - 1
    bit_mask = len(bits) * 64 - 1
    cap = 1024
    found_b = np.empty(cap, dtype=np.int64)
    found_y = np.empty(cap, dtype=np.int64)
    found_m = np.empty(cap, dtype=np.int32)
    found_j = np.empty(cap, dtype=np.float64)
    found_ca = np.empty(cap, dtype=np.float64)
    found_cb = np.empty(cap, dtype=np.float64)
    out = 0
    for y in range(len(y_n)):
        if not y_probed[y]:
            continue
        y0 = y_offsets[y]
        y1 = min(y_offsets[y + 1], y0 + k)
        mark = stamp + y
        for p in range(y0, y1):
            h = y_values[p]
            bit = (h >> 32) & bit_mask
            if (bits[bit >> 6] >> (bit & 63)) & 1 == 0:
                continue
            slot = h & mask
            while starts[slot] != -1 and keys[slot] != h:
                slot = (slot + 1) & mask
            if starts[slot] == -1:
                continue
            for q in range(starts[slot], ends[slot]):
                b = probe_rows[q]
                if seen[b] == mark or b == y_self[y]:
                    continue
                seen[b] = mark
                ok, both, jac, ca, cb, rel = score_pair(
                    b_values,
                    b_offsets,
                    b_n,
                    b,
                    y_values,
                    y_offsets,
                    y_n,
                    y,
                    k,
                    threshold,
                    -1.0,
                    True,
                )
                if not ok or rel != 1:
                    continue
                if out == len(found_b):
                    found_b = grown(found_b, 2 * out)
                    found_y = grown(found_y, 2 * out)
                    found_m = grown(found_m, 2 * out)
                    found_j = grown(found_j, 2 * out)
                    found_ca = grown(found_ca, 2 * out)
                    found_cb = grown(found_cb, 2 * out)
                found_b[out] = b
                found_y[out] = y
                found_m[out] = both
                found_j[out] = jac
                found_ca[out] = ca
                found_cb[out] = cb
                out += 1
    return (
        found_b[:out],
        found_y[:out],
        found_m[:out],
        found_j[:out],
        found_ca[:out],
        found_cb[:out],
    )


probe_slots = Compiled(_probe_slots)
probe_sketches = Compiled(_probe_sketches, writes=("seen",))
