"""Pairs within postings: every two documents that share a prefix hash, tested and scored at once.

The Spark job sends the prefix rows (hash, doc_id, n_shingles, sketch) to the executors grouped by
hash and sorted within each partition, and :func:`score_sorted_batches` turns each run of rows with
one hash (a posting) into scored pairs with the compiled loop
:func:`shingling.fast.kernels.score_postings`. A prefix row's sketch is packed into one binary value
(:func:`pack`, the int64 hashes little-endian): Spark moves and copies a binary value whole, where
an array of longs costs it a write per element at every conversion between Arrow and its rows.

A Spark self-join did this before: it materialized every candidate pair with both sketches (29
million at 1M documents of the benchmark corpus) and tested each with interpreted array functions;
here a candidate costs a merge of two short sorted arrays and is never a row unless it passes.

The scores are those of :mod:`shingling.estimators` (matches, the bottom-k Jaccard estimate,
containment both ways), which the tests check pair by pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shingling import pairs
from shingling.fast.frequency import FrequencySketch
from shingling.fast.kernels import score_postings, score_rows
from shingling.schema import (
    DOC_A,
    DOC_B,
    DOC_ID,
    EARLIER,
    HASH,
    N_SHINGLES,
    SCORED_COLUMNS,
    SHINGLES_A,
    SHINGLES_B,
    SKETCH,
    arrow_fields,
)

STAR = "star"  # the column that marks a capped posting's star pairs

#: The relation codes of the kernel, as the pair table spells them (0: none, a null).
RELATIONS = pa.array(pairs.RELATIONS, type=pa.string())


def output_schema(id_type: pa.DataType) -> pa.Schema:
    """The columns of the scored pairs (:data:`shingling.schema.SCORED_COLUMNS`), and whether the
    pair is one of a capped posting's star."""
    return pa.schema([*arrow_fields(SCORED_COLUMNS, id_type), pa.field(STAR, pa.bool_())])


def prefix_rows(
    batch: pa.RecordBatch,
    frequencies: FrequencySketch,
    *,
    k: int,
    threshold: float,
    max_posting: int = 0,
) -> pa.RecordBatch:
    """Documents (doc_id, sketch, ...) -> their prefix rows: (hash, doc_id, sketch, ..., earlier),
    one per hash of each sketch's join prefix (:meth:`FrequencySketch.select_prefixes`), carrying
    the document's columns, the sketch packed (:func:`pack`), and ``earlier``: the positions of the
    prefix hashes before this one, by which a pair is scored in the posting of the first prefix
    hash it shares only (:func:`score_table`). A document whose prefix is empty has no row.

    >>> f = FrequencySketch(width=256)
    >>> docs = pa.record_batch({"doc_id": ["a", "b", "c"], "sketch": [[1, 2], [1, 2], [3, 4]]})
    >>> for d in docs.column("sketch").to_pylist(): f.add(np.array(d))
    >>> rows = prefix_rows(docs, f, k=20, threshold=0.6)
    >>> rows.select(["hash", "doc_id", "earlier"]).to_pydict()
    {'hash': [1, 1], 'doc_id': ['a', 'b'], 'earlier': [0, 0]}
    >>> sketch_arrays(rows.column("sketch"))
    (array([0, 2, 4]), array([1, 2, 1, 2]))
    """
    offsets, values = sketch_arrays(batch.column(SKETCH))
    rows, hashes, earlier = frequencies.select_prefixes(
        offsets, values, k=k, threshold=threshold, max_posting=max_posting
    )
    taken = batch.take(pa.array(rows))
    columns = [
        pack(c) if name == SKETCH else c
        for name, c in zip(batch.schema.names, taken.columns, strict=True)
    ]
    return pa.RecordBatch.from_arrays(
        [pa.array(hashes, type=pa.int64()), *columns, pa.array(earlier, type=pa.int64())],
        names=[HASH, *batch.schema.names, EARLIER],
    )


def pack(sketches: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A list<int64> column -> one binary value per row: its hashes as little-endian int64 bytes
    (:func:`sketch_arrays` reads either form). Large binary (64-bit offsets) when the bytes
    exceed what 32-bit offsets address.

    >>> pack(pa.array([[1, 2], [], None], pa.list_(pa.int64()))).to_pylist()[1:]
    [b'', None]
    """
    lists = single(sketches)
    offsets, values = sketch_arrays(lists)
    data = pa.py_buffer(values.astype("<i8", copy=False).tobytes())
    nbytes = offsets * 8
    kind, width = (pa.binary(), np.int32) if nbytes[-1] < 2**31 else (pa.large_binary(), np.int64)
    validity = None
    if lists.null_count:
        validity = pc.is_valid(lists).buffers()[1]
    return pa.Array.from_buffers(
        kind,
        len(lists),
        [validity, pa.py_buffer(nbytes.astype(width)), data],
        null_count=lists.null_count,
    )


def score_table(
    rows: pa.Table | pa.RecordBatch,
    *,
    k: int,
    threshold: float,
    containment_threshold: float | None = None,
    max_posting: int = 0,
) -> pa.RecordBatch:
    """Prefix rows with every posting complete and adjacent -> the scored pairs of each posting.

    A pair is scored in each posting it is met in, but where the rows carry ``earlier``
    (:func:`prefix_rows`) only in the first one, by the prefix order. Without ``containment_threshold`` the pairs
    that cannot reach ``threshold`` (:func:`shingling.pairs.may_reach`) are dropped unscored. A
    posting of more than ``max_posting`` rows (0: no cap) pairs each of its documents with its
    first in id order only (a star, at linear cost), every such pair scored.

    >>> rows = pa.table({"hash": [7, 7, 9], "doc_id": ["b", "a", "c"], "n_shingles": [2, 2, 2],
    ...                  "sketch": [[1, 7], [1, 7], [2, 9]]})
    >>> score_table(rows, k=20, threshold=0.6).to_pylist()[0]["doc_a"]
    'a'
    """
    ids = single(rows.column(DOC_ID))
    order = np.empty(len(ids), dtype=np.int64)
    order[pc.sort_indices(ids).to_numpy()] = np.arange(len(ids))
    offsets, values = sketch_arrays(rows.column(SKETCH))
    n_shingles = int64s(rows.column(N_SHINGLES))
    earlier = (
        int64s(rows.column(EARLIER))
        if EARLIER in rows.schema.names
        else np.zeros(len(ids), dtype=np.int64)
    )
    a, b, matches, jaccard, cont_a, cont_b, relation, star = score_postings(
        int64s(rows.column(HASH)),
        order,
        n_shingles,
        offsets,
        values,
        k,
        threshold,
        -1.0 if containment_threshold is None else containment_threshold,
        containment_threshold is None,
        max_posting,
        earlier,
    )
    return pa.RecordBatch.from_arrays(
        [
            ids.take(a),
            ids.take(b),
            pa.array(matches),
            pa.array(jaccard),
            pa.array(cont_a),
            pa.array(cont_b),
            pa.array(n_shingles[a]),
            pa.array(n_shingles[b]),
            RELATIONS.take(pa.array(relation)),
            pa.array(star),
        ],
        schema=output_schema(ids.type),
    )


#: The sketch columns of a batch of pairs (:func:`score_pair_batch`).
SKETCH_A, SKETCH_B = "sketch_a", "sketch_b"


def score_pair_batch(
    batch: pa.RecordBatch | pa.Table,
    *,
    k: int,
    threshold: float,
    containment_threshold: float | None = None,
) -> pa.RecordBatch:
    """Pairs with both sketches (doc_a, doc_b, sketch_a, sketch_b, shingles_a, shingles_b) -> their
    scores (:data:`shingling.schema.SCORED_COLUMNS`), as :func:`score_table` scores the pairs it
    meets (:mod:`shingling.estimators`' arithmetic, compiled); ``relation`` null when neither
    threshold is reached.

    >>> pairs = pa.table({"doc_a": [1], "doc_b": [2], "sketch_a": [[1, 2, 3]], "sketch_b": [[2, 3, 4]],
    ...                   "shingles_a": [3], "shingles_b": [3]})
    >>> row = score_pair_batch(pairs, k=20, threshold=0.5).to_pylist()[0]
    >>> row["matches"], row["jaccard"], row["relation"]
    (2, 0.5, 'near_duplicate')
    """
    oa, va = sketch_arrays(batch.column(SKETCH_A))
    ob, vb = sketch_arrays(batch.column(SKETCH_B))
    na, nb = int64s(batch.column(SHINGLES_A)), int64s(batch.column(SHINGLES_B))
    matches, jaccard, cont_a, cont_b, relation = score_rows(
        va,
        oa,
        na,
        vb,
        ob,
        nb,
        k,
        threshold,
        -1.0 if containment_threshold is None else containment_threshold,
    )
    ids_a = single(batch.column(DOC_A))
    return pa.RecordBatch.from_arrays(
        [
            ids_a,
            single(batch.column(DOC_B)),
            pa.array(matches),
            pa.array(jaccard),
            pa.array(cont_a),
            pa.array(cont_b),
            pa.array(na),
            pa.array(nb),
            RELATIONS.take(pa.array(relation)),
        ],
        schema=pa.schema(arrow_fields(SCORED_COLUMNS, ids_a.type)),
    )


def score_sorted_batches(
    batches: Iterable[pa.RecordBatch],
    *,
    k: int,
    threshold: float,
    containment_threshold: float | None = None,
    max_posting: int = 0,
) -> Iterator[pa.RecordBatch]:
    """Batches of prefix rows sorted by hash -> scored pairs (see :func:`score_table`).

    A posting may run across batches: the rows of the last hash of each batch wait for the next.
    """
    scoring: dict[str, Any] = {
        "k": k,
        "threshold": threshold,
        "containment_threshold": containment_threshold,
        "max_posting": max_posting,
    }
    pending: list[pa.RecordBatch] = []
    for batch in batches:
        if batch.num_rows == 0:
            continue
        hashes = int64s(batch.column(HASH))
        last = int(np.searchsorted(hashes, hashes[-1]))  # where the last hash's rows start
        if last == 0:  # one posting so far
            pending.append(batch)
            continue
        done = pa.Table.from_batches([*pending, batch.slice(0, last)])
        pending = [batch.slice(last)]
        yield score_table(done, **scoring)
    if pending:
        rest = pa.Table.from_batches(pending)
        yield score_table(rest, **scoring)


def single(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column as one Arrow array."""
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def int64s(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An integer column as an int64 numpy array."""
    return single(column).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def sketch_arrays(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A list<int64> column, or one packed by :func:`pack` -> (offsets from 0, values): row i is
    ``values[offsets[i]:offsets[i + 1]]``, the layout the compiled loops read."""
    array = single(column)
    if pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type):
        if not len(array):
            return np.zeros(1, dtype=np.int64), np.empty(0, dtype=np.int64)
        width = np.int32 if pa.types.is_binary(array.type) else np.int64
        _, ends_buffer, data = array.buffers()
        ends = np.frombuffer(ends_buffer, dtype=width)[
            array.offset : array.offset + len(array) + 1
        ].astype(np.int64)
        raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.empty(0, np.uint8)
        values = raw[ends[0] : ends[-1]].view("<i8").astype(np.int64, copy=False)
        if not values.flags.aligned:  # Arrow aligns its buffers; a foreign one may not be
            values = values.copy()
        return (ends - ends[0]) // 8, values
    lists = array.cast(pa.large_list(pa.int64()))
    offsets = np.frombuffer(lists.buffers()[1], dtype=np.int64)[
        lists.offset : lists.offset + len(lists) + 1
    ]
    if not len(offsets):
        return np.zeros(1, dtype=np.int64), np.empty(0, dtype=np.int64)
    values = lists.values.to_numpy()[offsets[0] : offsets[-1]]
    return (offsets - offsets[0]).astype(np.int64), values.astype(np.int64, copy=False)
