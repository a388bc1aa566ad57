"""Pairs within postings: every two documents that share a prefix hash, tested and scored at once.

The Spark job sends the prefix rows (hash, doc_id, n_shingles, sketch) to the executors grouped by
hash and sorted within each partition, and :func:`score_sorted_batches` turns each run of rows with
one hash (a posting) into scored pairs with the compiled loop
:func:`score_postings`. A prefix row's sketch is packed into one binary value
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
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from shingling import pairs
from shingling.fast.compiled import U64, Compiled, grown
from shingling.fast.estimators import (
    may_reach,
    min_shared,
    score_pair,
    score_rows,
    sizes_may_reach,
)
from shingling.fast.frequency import FrequencySketch, select_prefixes
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
# each sketch hash's exact document frequency, aligned with the sketch (the lazy plan's join order)
FREQUENCY = "frequency"

#: The relation codes of the kernel, as the pair table spells them (0: none, a null).
RELATIONS = pa.array(pairs.RELATIONS, type=pa.string())


@dataclass
class JoinWork:
    """The work of the posting loop, counted as it runs: ``tested``, the pairs of documents its
    postings met (n (n - 1) / 2 in a posting of n, n - 1 in a capped one's star);
    ``signature_passes``, those of them the signatures' bound did not refuse, each then one
    intersection of two sketches (:func:`shingling.pairs.may_reach`); ``scored``, the pairs then
    scored (those the intersection passed; with a containment threshold every pair met). The
    join's cost grows with these, not with the pairs written."""

    tested: int = 0
    signature_passes: int = 0
    scored: int = 0

    def add(self, tested: int, signature_passes: int, scored: int = 0) -> None:
        self.tested += int(tested)
        self.signature_passes += int(signature_passes)
        self.scored += int(scored)


def output_schema(id_type: pa.DataType) -> pa.Schema:
    """The columns of the scored pairs (:data:`shingling.schema.SCORED_COLUMNS`), and whether the
    pair is one of a capped posting's star."""
    return pa.schema([*arrow_fields(SCORED_COLUMNS, id_type), pa.field(STAR, pa.bool_())])


def prefix_rows(
    batch: pa.RecordBatch,
    frequencies: FrequencySketch | None,
    *,
    k: int,
    threshold: float,
    max_posting: int = 0,
) -> pa.RecordBatch:
    """Documents (doc_id, sketch, ...) -> their prefix rows: (hash, doc_id, sketch, ..., earlier),
    one per hash of each sketch's join prefix (:func:`shingling.fast.frequency.select_prefixes`,
    ordered by ``frequencies``' estimates, or, with None, by the exact document frequencies the
    batch carries in a :data:`FREQUENCY` column aligned with its sketches, which is not passed
    on), carrying the document's columns, the sketch packed (:func:`pack`), and ``earlier``: the
    positions of the prefix hashes before this one, by which a pair is scored in the posting of
    the first prefix hash it shares only (:func:`score_table`). A document whose prefix is empty
    has no row.

    >>> f = FrequencySketch(width=256)
    >>> docs = pa.record_batch({"doc_id": ["a", "b", "c"], "sketch": [[1, 2], [1, 2], [3, 4]]})
    >>> for d in docs.column("sketch").to_pylist(): f.add(np.array(d))
    >>> rows = prefix_rows(docs, f, k=20, threshold=0.6)
    >>> rows.select(["hash", "doc_id", "earlier"]).to_pydict()
    {'hash': [1, 1], 'doc_id': ['a', 'b'], 'earlier': [0, 0]}
    >>> sketch_arrays(rows.column("sketch"))
    (array([0, 2, 4]), array([1, 2, 1, 2]))
    >>> counted = docs.append_column(FREQUENCY, pa.array([[2, 2], [2, 2], [1, 1]]))
    >>> prefix_rows(counted, None, k=20, threshold=0.6).equals(rows)
    True
    """
    offsets, values = sketch_arrays(batch.column(SKETCH))
    if frequencies is None:
        counted_at, frequency = sketch_arrays(batch.column(FREQUENCY))
        if not np.array_equal(counted_at, offsets):
            raise ValueError("each sketch needs one frequency per hash")
        batch = batch.drop_columns([FREQUENCY])
    else:
        frequency = frequencies.estimates(offsets, values, k=k)
    rows, hashes, earlier = select_prefixes(offsets, values, frequency, k, threshold, max_posting)
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
    work: JoinWork | None = None,
    size_floor: float = 0.0,
) -> pa.RecordBatch:
    """Prefix rows with every posting complete and adjacent -> the scored pairs of each posting
    (and, into ``work`` if given, the loop's pair tests and signature passes).

    A pair is scored in each posting it is met in, but where the rows carry ``earlier``
    (:func:`prefix_rows`) only in the first one, by the prefix order. Without ``containment_threshold`` the pairs
    that cannot reach ``threshold`` (:func:`shingling.pairs.may_reach`) are dropped unscored. A
    posting of more than ``max_posting`` rows (0: no cap) pairs each of its documents with its
    first in id order only (a star, at linear cost), every such pair scored. ``size_floor`` (a
    verifying run's cut, without ``containment_threshold``): the pairs of a posting whose
    shingle-set sizes keep their exact Jaccard under it are dropped untested (0: none).

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
    a, b, matches, jaccard, cont_a, cont_b, relation, star, done = score_postings(
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
        size_floor if containment_threshold is None else 0.0,
    )
    if work is not None:
        work.add(done[0], done[1], len(a))
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
    work: JoinWork | None = None,
    size_floor: float = 0.0,
) -> Iterator[pa.RecordBatch]:
    """Batches of prefix rows sorted by hash -> scored pairs (see :func:`score_table`; ``work``,
    if given, counts the loop's work).

    A posting may run across batches: the rows of the last hash of each batch wait for the next.
    """
    scoring: dict[str, Any] = {
        "k": k,
        "threshold": threshold,
        "containment_threshold": containment_threshold,
        "max_posting": max_posting,
        "work": work,
        "size_floor": size_floor,
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


#: The posting loop's signature of a prefix row: this many 64-bit words, one bit per bottom-k hash
#: (:func:`sign`), then one word counting the hashes whose bit was already set. Two rows' common
#: bits bound their shared hashes from above (:func:`signatures_may_reach`); the rest of the bound
#: is chance, about k * k / bits common bits for two unrelated sketches (k = 20: 1.6 in 256 bits,
#: 0.8 in 512). Measured on the 1M benchmark corpus at the defaults' candidate threshold
#: (``python -m bench.join_work``): 16.7M tests passed in 256 bits, 9.1M in 512, 7.1M in 1024, of
#: 139.6M; docs/scaling.md, "A wider signature".
SIGNATURE_WORDS = 8


@njit(inline="always")
def sign(values: Any, offsets: Any, row: int, k: int, out: Any) -> None:
    """A row's signature in ``out``: one bit per hash of its bottom-k part, the bit of its low
    bits (``h mod 64 * SIGNATURE_WORDS``: the low bits of a bottom-k hash are as uniform as the
    hash; its high ones are not), then in
    ``out[SIGNATURE_WORDS]`` how many of those hashes found their bit set already."""
    out[:] = 0
    collided = 0
    for p in range(offsets[row], min(offsets[row + 1], offsets[row] + k)):
        bit = values[p] & (64 * SIGNATURE_WORDS - 1)
        mask = U64(1) << U64(bit & 63)
        if out[bit >> 6] & mask:
            collided += 1
        out[bit >> 6] |= mask
    out[SIGNATURE_WORDS] = collided


@njit(inline="always")
def popcount(x: Any) -> int:
    x = x - ((x >> U64(1)) & U64(0x5555555555555555))
    x = (x & U64(0x3333333333333333)) + ((x >> U64(2)) & U64(0x3333333333333333))
    x = (x + (x >> U64(4))) & U64(0x0F0F0F0F0F0F0F0F)
    return int((x * U64(0x0101010101010101)) >> U64(56))


@njit(inline="always")
def signatures_may_reach(
    signatures: Any, offsets: Any, a: int, b: int, k: int, threshold: float
) -> bool:
    """A necessary condition of :func:`may_reach`, from the rows' signatures (:func:`sign`).

    The hashes two bottom-k parts share fall on bits both signatures set; on one bit, at most as
    many as the fewer of the two parts' hashes on it. Summed over the bits: the shared hashes are
    at most the common bits plus the lesser of the two counts of hashes that fell on a bit already
    set (nearly always 0 or 1). This refuses most pairs met through one shared hash in a few
    instructions, and never a pair the intersection would pass.
    """
    ka = min(offsets[a + 1] - offsets[a], k)
    kb = min(offsets[b + 1] - offsets[b], k)
    need = min_shared(min(k, max(ka, kb)), threshold)
    bound = int(min(signatures[a, SIGNATURE_WORDS], signatures[b, SIGNATURE_WORDS]))
    for w in range(SIGNATURE_WORDS):
        bound += popcount(signatures[a, w] & signatures[b, w])
    return bound >= need


def _score_postings(
    hashes: Any,
    order: Any,
    n_shingles: Any,
    offsets: Any,
    values: Any,
    k: int,
    threshold: float,
    containment_threshold: float,
    test_first: bool,
    max_posting: int,
    earlier: Any,
    size_floor: float,
) -> tuple[Any, Any, Any, Any, Any, Any, Any, Any, Any]:
    """Every pair of rows with the same hash (rows sorted by hash), tested and scored.

    The arithmetic of :func:`shingling.pairs.may_reach` (and of
    :mod:`shingling.estimators`), on sketches as sorted runs of ``values`` (row i's sketch is
    ``values[offsets[i]:offsets[i + 1]]``).

    Args:
        hashes: each row's prefix hash; rows of one hash are adjacent.
        order: each row's document in id order (a pair's doc_a is the one with the smaller).
        n_shingles: each row's document's distinct shingle count.
        offsets, values: the rows' sketches.
        k, threshold: the bottom-k size and the Jaccard threshold.
        containment_threshold: the excerpt threshold; negative: none.
        test_first: drop the pairs that cannot reach ``threshold`` (``may_reach``) unscored.
        max_posting: a posting of more rows (0: no cap) pairs each with its first document in id
            order only (a star), every such pair scored.
        earlier: per row, the positions of its prefix hashes before this one
            (:func:`shingling.fast.frequency.select_prefixes`): a pair that shares one of those is left to that hash's
            posting; 0 or -1 for none.
        size_floor: with ``test_first``, a pair whose shingle-set sizes alone keep its exact
            Jaccard under this (:func:`shingling.pairs.sizes_may_reach`) is dropped before any
            test (a verifying run's cut: verification would refuse it); 0: none.

    Returns:
        Per scored pair: row of doc_a, row of doc_b, matches, jaccard, containment_a,
        containment_b, relation (0: none, 1: near duplicate, 2: a in b, 3: b in a), and whether
        the pair is a star's. Then the work done (:class:`JoinWork`): the pairs tested and, of
        those tested first, the signature passes.
    """
    n = len(hashes)
    cap = 1024
    found = (
        np.empty(cap, dtype=np.int64),
        np.empty(cap, dtype=np.int64),
        np.empty(cap, dtype=np.int32),
        np.empty(cap, dtype=np.float64),
        np.empty(cap, dtype=np.float64),
        np.empty(cap, dtype=np.float64),
        np.empty(cap, dtype=np.int8),
        np.empty(cap, dtype=np.bool_),
    )
    out = 0
    start = 0
    tested = 0  # pairs of documents a posting met (a star's: each member with its centre)
    passes = 0  # of those tested first, the ones the signatures' bound did not refuse
    scoring = (values, offsets, n_shingles, k, threshold, containment_threshold)
    signatures = np.zeros((n if test_first else 0, SIGNATURE_WORDS + 1), dtype=np.uint64)
    while start < n:
        end = start + 1
        while end < n and hashes[end] == hashes[start]:
            end += 1
        if 0 < max_posting < end - start:  # a star around the first document in id order
            centre = start
            for i in range(start, end):
                if order[i] < order[centre]:
                    centre = i
            for i in range(start, end):
                if i != centre:
                    tested += 1
                    found, out = _consider(found, out, scoring, centre, i, False, True)
        else:
            if test_first:
                for i in range(start, end):
                    sign(values, offsets, i, k, signatures[i])
            for i in range(start, end):
                for j in range(i + 1, end):
                    if order[i] == order[j]:
                        continue
                    tested += 1
                    # tested here, before _consider: most pairs fail, and passing the arrays of
                    # found pairs in and out costs more than the test; the sizes, the signatures,
                    # then (for the few they cannot refuse) the intersection itself
                    if test_first:
                        if size_floor > 0 and not sizes_may_reach(
                            n_shingles[i], n_shingles[j], size_floor
                        ):
                            continue
                        if not signatures_may_reach(signatures, offsets, i, j, k, threshold):
                            continue
                        passes += 1
                        if not may_reach(values, offsets, i, values, offsets, j, k, threshold):
                            continue
                    if met_before(values, offsets, earlier, i, j):
                        continue
                    a, b = (i, j) if order[i] < order[j] else (j, i)
                    found, out = _consider(found, out, scoring, a, b, False, False)
        start = end
    work = np.zeros(2, dtype=np.int64)
    work[0], work[1] = tested, passes
    return (
        found[0][:out],
        found[1][:out],
        found[2][:out],
        found[3][:out],
        found[4][:out],
        found[5][:out],
        found[6][:out],
        found[7][:out],
        work,
    )


@njit(inline="always")
def _consider(
    found: Any, out: int, scoring: Any, a: int, b: int, test_first: bool, star: bool
) -> tuple[Any, int]:
    """Score the pair (a, b) and, unless the test drops it, append it to ``found``."""
    values, offsets, n_shingles, k, threshold, containment_threshold = scoring
    ok, both, jac, ca, cb, rel = score_pair(
        values,
        offsets,
        n_shingles,
        a,
        values,
        offsets,
        n_shingles,
        b,
        k,
        threshold,
        containment_threshold,
        test_first,
    )
    if not ok:
        return found, out
    if out == len(found[0]):
        size = 2 * out
        found = (
            grown(found[0], size),
            grown(found[1], size),
            grown(found[2], size),
            grown(found[3], size),
            grown(found[4], size),
            grown(found[5], size),
            grown(found[6], size),
            grown(found[7], size),
        )
    found[0][out] = a
    found[1][out] = b
    found[2][out] = both
    found[3][out] = jac
    found[4][out] = ca
    found[5][out] = cb
    found[6][out] = rel
    found[7][out] = star
    return found, out + 1


@njit(inline="always")
def met_before(values: Any, offsets: Any, earlier: Any, i: int, j: int) -> bool:
    """Whether rows i and j (of one posting) share a prefix hash before it (``earlier``'s
    positions, :func:`shingling.fast.frequency.select_prefixes`): their first shared prefix hash is another posting's,
    which scores them. Both sketches ascending: one merge of the marked positions."""
    mi, mj = earlier[i], earlier[j]
    if mi <= 0 or mj <= 0:  # nothing before, or positions unknown
        return False
    a0, a1, b0, b1 = offsets[i], offsets[i + 1], offsets[j], offsets[j + 1]
    p, q = a0, b0
    while p < a1 and q < b1:
        if not (mi >> (p - a0)) & 1:
            p += 1
        elif not (mj >> (q - b0)) & 1:
            q += 1
        elif values[p] == values[q]:
            return True
        elif values[p] < values[q]:
            p += 1
        else:
            q += 1
    return False


score_postings = Compiled(_score_postings)
