"""The pair rules, defined once: which pairs a join must find, and what a found pair is.

Every path imports these: the Spark transforms (``shingling/spark/transforms.py``, ``shingling/spark/verify.py``), the
compiled loops (``shingling/fast/``, through ``numba.njit`` of the same functions), the nightly
probe and the CLI's index search; ``tests/test_rules.py`` proves the Spark column expressions equal
to them.

>>> min_shared(20, 0.5), prefix_length(20, 0.5)
(10, 11)
>>> relation(0.4, 0.9, 0.2, threshold=0.5, containment_threshold=0.8)
'a_in_b'
>>> candidate_threshold(0.5, 0.2)
0.3
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from shingling import schema
from shingling.estimators import containment, jaccard, matches
from shingling.exact import Overlap, shingle_set
from shingling.schema import A_IN_B, B_IN_A, DOC_A, MEASURED_PAIR_COLUMNS, NEAR_DUPLICATE
from shingling.sketch import DEFAULT_K, DEFAULT_WIDTH, Sketch

# Scores are ratios of small integers, thresholds decimal fractions: a product like 20 * 0.7 is
# 14.000000000000002 in floating point. Every bound is taken this much on the generous side, so
# float error can only add a candidate, never lose one.
SLACK = 1e-9

# Candidates are never sought below this estimate (a bound of 0 would pair every document).
CANDIDATE_FLOOR = 0.05


def min_shared(size: int, threshold: float) -> int:
    """The fewest shared hashes among ``size`` that can reach ``threshold``: ceil(size * t), at
    least one (rounded down a hair, :data:`SLACK`)."""
    return max(math.ceil(size * threshold - SLACK), 1)


def prefix_length(size: int, threshold: float) -> int:
    """How many of a sketch's ``size`` hashes (in any fixed global order) a pair that shares
    :func:`min_shared` of them must meet in: two sketches sharing t hashes share one of their
    first size - t + 1 (the prefix filter of Bayardo et al., WWW 2007)."""
    return size - min_shared(size, threshold) + 1


def sizes_may_reach(size_a: int, size_b: int, threshold: float) -> bool:
    """Whether two sets of these sizes can have a Jaccard of ``threshold``: J(A, B) is at most
    min(|A|, |B|) / max(|A|, |B|), so a pair of very different sizes needs no texts to be refused.

    >>> sizes_may_reach(100, 50, 0.5), sizes_may_reach(100, 49, 0.5)
    (True, False)
    """
    return min(size_a, size_b) / max(size_a, size_b, 1) >= threshold - SLACK


def may_reach(sketch_a: Sequence[int], sketch_b: Sequence[int], k: int, threshold: float) -> bool:
    """Whether two sketches (ascending hashes) may have a Jaccard estimate of ``threshold``: a
    cheap, lossless test run on a posting's pairs before the estimate.

    The estimate's sample is the k smallest hashes of the union of the two bottom-k parts (all of
    it when both are whole sets), so it holds at least min(k, max(|Sa|, |Sb|)) hashes, and its
    shared ones are among the hashes both parts hold. A pair whose parts share fewer than the
    threshold's share of that size cannot reach it. Most pairs met through a prefix hash share
    that one hash and little else (two documents quoting one sentence).

    >>> may_reach([1, 2, 3, 4], [1, 2, 3, 5], 4, 0.6), may_reach([1, 2, 3, 4], [1, 6, 7, 8], 4, 0.6)
    (True, False)
    """
    part_a, part_b = sketch_a[:k], sketch_b[:k]
    sample = min(k, max(len(part_a), len(part_b)))
    return len(set(part_a) & set(part_b)) >= min_shared(sample, threshold)


#: What :func:`relation_code` returns, as the pair table spells it (code 0: not a pair).
RELATIONS: tuple[str | None, ...] = (None, NEAR_DUPLICATE, A_IN_B, B_IN_A)


def relation_code(
    jaccard: float,
    containment_a: float,
    containment_b: float,
    threshold: float,
    containment_threshold: float,
) -> int:
    """:func:`relation` as an index into :data:`RELATIONS`, with a negative
    ``containment_threshold`` for none (the form the compiled loops use, through ``numba.njit``)."""
    if jaccard >= threshold:
        return 1
    if containment_threshold >= 0:
        if containment_a >= containment_b and containment_a >= containment_threshold:
            return 2
        if containment_b >= containment_threshold:
            return 3
    return 0


def relation(
    jaccard: float,
    containment_a: float,
    containment_b: float,
    *,
    threshold: float,
    containment_threshold: float | None,
) -> str | None:
    """What a pair is: ``near_duplicate`` when ``jaccard`` reaches ``threshold``; else ``a_in_b``
    (or ``b_in_a``) when the larger containment reaches ``containment_threshold`` (None: never);
    else nothing (None), and the pair is not written."""
    within = -1.0 if containment_threshold is None else containment_threshold
    return RELATIONS[relation_code(jaccard, containment_a, containment_b, threshold, within)]


def flipped(rel: str | None) -> str | None:
    """The relation of (b, a) given that of (a, b)."""
    return {A_IN_B: B_IN_A, B_IN_A: A_IN_B}.get(rel, rel) if rel is not None else None


def candidate_threshold(threshold: float, margin: float) -> float:
    """The sketch estimate a verifying run seeks candidates from: ``margin`` below ``threshold``,
    never under :data:`CANDIDATE_FLOOR`."""
    return max(CANDIDATE_FLOOR, round(threshold - margin, 9))


# --- the pair table's columns computed from the measured ones ---------------------------------

#: The definition of each derived column of the pair table (those of
#: :data:`shingling.schema.PAIR_COLUMNS` beyond :data:`shingling.schema.MEASURED_PAIR_COLUMNS`):
#: a function of a batch of measured pairs (a ``pyarrow.RecordBatch``) giving the column, row for
#: row, in ``pyarrow.compute``. :func:`pair_table` applies them on every path that writes pairs
#: (the Spark stages through :func:`shingling.spark.transforms.pair_table_frame`, the reference
#: search below), so a column added here, in ``PAIR_COLUMNS`` and in ``COLUMN_TYPES`` is in every
#: pair table (tests/spark/test_pair_columns.py adds one). The table has none today.
DERIVED: dict[str, Callable[[pa.RecordBatch], pa.Array]] = {}


def derived_columns() -> tuple[str, ...]:
    """The pair table's derived columns, in its order (each must have a definition in
    :data:`DERIVED`)."""
    names = tuple(c for c in schema.PAIR_COLUMNS if c not in MEASURED_PAIR_COLUMNS)
    undefined = [c for c in names if c not in DERIVED]
    if undefined:
        raise KeyError(f"pair columns without a definition in shingling.pairs.DERIVED: {undefined}")
    return names


def pair_table(
    measured: pa.RecordBatch,
    *,
    definitions: dict[str, Callable[[pa.RecordBatch], pa.Array]] | None = None,
    out: pa.Schema | None = None,
) -> pa.RecordBatch:
    """A batch of measured pairs (the measured columns, in any order) -> the pair table's rows:
    the measured columns and the derived ones (``definitions``, default :data:`DERIVED`) in
    :data:`shingling.schema.PAIR_COLUMNS`' order, with the schema ``out`` (default the pair
    table's, :func:`shingling.schema.pairs_table_schema`).

    >>> import pyarrow as pa
    >>> batch = pa.RecordBatch.from_pydict({c: [1] for c in MEASURED_PAIR_COLUMNS})
    >>> pair_table(batch, out=batch.schema).num_columns == len(MEASURED_PAIR_COLUMNS)
    True
    """
    definitions = DERIVED if definitions is None else definitions
    if out is None:
        out = schema.pairs_table_schema(measured.schema.field(DOC_A).type)
    columns = [
        measured.column(f.name)
        if f.name in MEASURED_PAIR_COLUMNS
        else pa.array(definitions[f.name](measured), type=f.type)
        for f in out
    ]
    return pa.RecordBatch.from_arrays(columns, schema=out)


def _with_derived(rows: list[tuple]) -> list[tuple]:
    """Measured pair rows (tuples in :data:`MEASURED_PAIR_COLUMNS`' order) -> the pair table's
    rows, through :func:`pair_table`."""
    if not derived_columns() or not rows:
        return rows
    id_type = pa.array([r[0] for r in rows]).type
    fields = schema.arrow_fields(MEASURED_PAIR_COLUMNS, id_type)
    measured = pa.RecordBatch.from_arrays(
        [pa.array(list(c), f.type) for c, f in zip(zip(*rows, strict=True), fields, strict=True)],
        schema=pa.schema(fields),
    )
    table = pair_table(measured)
    return list(zip(*(table.column(i).to_pylist() for i in range(table.num_columns)), strict=True))


# --- the reference pair search -------------------------------------------------------------------


def relation_of(
    j: float, ca: float, cb: float, threshold: float, containment_threshold: float | None
) -> str | None:
    return relation(j, ca, cb, threshold=threshold, containment_threshold=containment_threshold)


def reference_pairs(
    rows: dict[Any, dict[str, Any]],
    *,
    threshold: float,
    max_exact_group: int,
    containment_threshold: float | None = None,
    width: int = DEFAULT_WIDTH,
    k: int = DEFAULT_K,
    unit: str = "words",
    sample_mod: int = 0,
    texts: dict[Any, str] | None = None,
    margin: float = 0.0,
) -> list[tuple]:
    """The pair table, in the pair table's column order (derived columns by :func:`pair_table`),
    from library sketches: every pair
    compared, in pure Python (the reference the Spark path and the nightly join are tested against).

    ``rows``: doc_id -> n_words, n_shingles, sketch (None: skipped) and text_hash of the documents
    table.

    With ``texts`` (doc_id -> text), the verified table: a pair of representatives is a candidate
    when its estimates reach the thresholds less ``margin`` (at least 0.05), and is then decided
    on its exact scores from the two texts (:func:`shingling.exact.overlap`), which fill
    ``jaccard`` and the containments; ``jaccard_estimate`` is the estimate either way.

    A pair is what :func:`relation` says of its estimates (of its exact scores, verified).
    Documents with the same normalized text form a group whose representative is its smallest id; a pair of
    representatives stands for every pair of their members; a group of at most ``max_exact_group``
    members adds every pair of its members (exact duplicates, 1.0 everywhere), a larger one only
    each member with its representative, and only its representative is paired with other
    documents. ``matches`` counts shared bottom-k hashes.
    """
    groups: dict[tuple, list] = defaultdict(list)
    for doc_id, row in rows.items():
        if row["sketch"] is not None:
            groups[(row["text_hash"], row["n_words"])].append(doc_id)
    members = {min(g): sorted(g) for g in groups.values()}
    standing = {rep: (m if len(m) <= max_exact_group else [rep]) for rep, m in members.items()}

    def sk(doc_id) -> Sketch:
        row = rows[doc_id]
        return Sketch(
            tuple(row["sketch"]),
            n_shingles=row["n_shingles"],
            width=width,
            k=k,
            unit=unit,
            sample_mod=sample_mod,
        )

    def n(doc_id) -> int:
        return rows[doc_id]["n_shingles"]

    @functools.cache
    def shingles(doc_id) -> frozenset[int]:  # each text's set once, not once per candidate
        assert texts is not None
        return shingle_set(texts[doc_id], width=width, unit=unit)

    def lowered(t: float | None) -> float | None:
        return None if t is None or texts is None else candidate_threshold(t, margin)

    out: list[tuple] = []
    for ra, rb in itertools.combinations(sorted(members), 2):
        sa, sb = sk(ra), sk(rb)
        estimate, ca, cb = jaccard(sa, sb), containment(sa, sb), containment(sb, sa)
        j = estimate
        if texts is None:
            rel = relation_of(j, ca, cb, threshold, containment_threshold)
        else:
            cand_t, cand_ct = lowered(threshold), lowered(containment_threshold)
            assert cand_t is not None
            if relation_of(j, ca, cb, cand_t, cand_ct) is None:
                continue
            o = Overlap.of(shingles(ra), shingles(rb))
            j, ca, cb = o.jaccard, o.containment_a, o.containment_b
            rel = relation_of(j, ca, cb, threshold, containment_threshold)
        if rel is None:
            continue
        shared = matches(sa, sb)
        for ma, mb in itertools.product(standing[ra], standing[rb]):
            if ma < mb:
                out.append((ma, mb, shared, j, estimate, ca, cb, n(ma), n(mb), False, rel))
            else:
                flip = flipped(rel)
                out.append((mb, ma, shared, j, estimate, cb, ca, n(mb), n(ma), False, flip))
    for rep, m in members.items():
        exact = (
            itertools.combinations(m, 2) if len(m) <= max_exact_group else ((rep, x) for x in m[1:])
        )
        for a, b in exact:
            bottom = min(len(rows[a]["sketch"]), k)
            out.append((a, b, bottom, 1.0, 1.0, 1.0, 1.0, n(a), n(b), True, NEAR_DUPLICATE))
    return _with_derived(out)
