"""Verification: the exact Jaccard of reported pairs, recomputed from the two texts.

    pairs near the cut + texts -> (doc_a, doc_b, jaccard, exact_jaccard, exact_shared,
                                   exact_containment_a, exact_containment_b)

A pair's ``jaccard`` is a bottom-k estimate, with standard error about sqrt(J (1 - J) / k); near the
cut, that error decides which side a pair falls. Verification recomputes the Jaccard of the two
documents' whole shingle sets, with the library's own definitions (normalization, words or
characters, shingles, 64-bit shingle hashes, as :func:`shingling.sketch.sketch` makes them), and the
pair is then decided on that. The exact containments |A ∩ B| / |A| and / |B| come with it.
Pairs of exact duplicates (same normalized text) are not verified: their
Jaccard is 1.0 by construction.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import Broadcast
from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import BooleanType, DoubleType, LongType, StructField, StructType

from shingling.errors import ExitCode, ShinglingError
from shingling.fast.exact import BatchOverlap, overlap_batch
from shingling.schema import (
    CONTAINMENT_A,
    CONTAINMENT_B,
    DOC_A,
    DOC_B,
    DOC_ID,
    JACCARD,
    JACCARD_ESTIMATE,
    RELATION,
    SHINGLES_A,
    SHINGLES_B,
    TEXT,
)
from shingling.spark.rules import relation, sizes_may_reach
from shingling.spark_settings import size_bytes

EXACT_JACCARD = "exact_jaccard"
EXACT_SHARED = "exact_shared"
EXACT_CONTAINMENT_A = "exact_containment_a"
EXACT_CONTAINMENT_B = "exact_containment_b"
VERIFIED = "verified"
TEXT_A = "text_a"
TEXT_B = "text_b"


def exact_overlap(
    texts_a: pa.Array,
    texts_b: pa.Array,
    *,
    width: int,
    unit: str = "words",
    ids_a: pa.Array | None = None,
    ids_b: pa.Array | None = None,
) -> BatchOverlap:
    """The exact shingle-set overlap of each (a, b) pair of texts (:func:`overlap_batch`; with
    ids, a document in several pairs of the batch has its set computed once).

    >>> o = exact_overlap(pa.array(["A b c d e", "x"]), pa.array(["a b c d f", None]), width=4)
    >>> o.jaccard.round(4).tolist(), o.shared.tolist(), o.size_a.tolist()
    ([0.3333, 0.0], [1, 0], [2, 1])
    """
    return overlap_batch(texts_a, texts_b, width=width, unit=unit, ids_a=ids_a, ids_b=ids_b)


#: Pairs scored by one call of the exact-overlap kernel at most (their bytes at most the session's
#: spark.sql.execution.arrow.maxBytesPerBatch, which bounds one batch already): Spark hands the
#: function batches of ``spark.sql.execution.arrow.maxRecordsPerBatch`` rows (2,000, sized for
#: sketching), and a larger call computes each document's set once for more of its pairs (the rows
#: arrive sorted by ``doc_b``; ``doc_a`` repeats too). Measured on 1M candidates of the hostile
#: recipe in one process: 9.2 us a pair by 2,000, 4.7 by 20,000, 8.0 by 100,000 (the sets no longer
#: fit the caches). docs/scaling.md, "Where verification's time goes".
SCORE_ROWS = 20_000


def regrouped(
    batches: Iterator[pa.RecordBatch], *, rows: int, nbytes: int
) -> Iterator[pa.RecordBatch]:
    """Consecutive ``batches`` joined into batches of up to ``rows`` rows and ``nbytes`` bytes (a
    batch larger than that on its own passes alone, as Spark sized it). Rows keep their order.

    >>> b = pa.record_batch({"x": list(range(5))})
    >>> [r.num_rows for r in regrouped(iter([b] * 5), rows=12, nbytes=1 << 20)]
    [10, 10, 5]
    >>> [r.num_rows for r in regrouped(iter([b] * 3), rows=100, nbytes=2 * b.nbytes)]
    [10, 5]
    >>> [r.num_rows for r in regrouped(iter([b, b.slice(0, 0)]), rows=12, nbytes=1 << 20)]
    [5]
    """
    pending: list[pa.RecordBatch] = []
    count = size = 0
    for batch in batches:
        if pending and (count + batch.num_rows > rows or size + batch.nbytes > nbytes):
            yield from _combined(pending)
            pending, count, size = [], 0, 0
        pending.append(batch)
        count += batch.num_rows
        size += batch.nbytes
    if pending:
        yield from _combined(pending)


def _combined(batches: list[pa.RecordBatch]) -> list[pa.RecordBatch]:
    if len(batches) == 1:
        return batches
    return pa.Table.from_batches(batches).combine_chunks().to_batches()


#: The marker of a missing text in the error an executor raises (the driver sees it in a string).
MISSING_TEXT = "SHINGLING_MISSING_TEXT"


class MissingTextError(ShinglingError):
    """A candidate pair's document has no text to verify it with: never written unverified."""

    exit_code = ExitCode.BAD_INPUT


@dataclass(frozen=True)
class VerifyMetrics:
    """What verification found, gathered while the pair table is written (a Spark observation)."""

    observed: Observation = field(default_factory=lambda: Observation("verified"))

    def as_dict(self, *, threshold: float) -> dict[str, Any]:
        try:
            row = dict(self.observed.get)
        except Exception:  # noqa: BLE001 - no rows reached the observation: nothing was verified
            row = {}
        verified = int(row.get("verified") or 0)

        def rounded(value: Any) -> float | None:
            return None if value is None or not verified else round(float(value), 4)

        return {
            "candidates_verified": verified,
            "kept": int(row.get("kept") or 0),
            "threshold": threshold,
            # pairs the estimate alone would have decided the other way at the threshold
            "estimate_above_exact_below": int(row.get("estimate_above") or 0),
            "estimate_below_exact_above": int(row.get("estimate_below") or 0),
            "estimate_error": {
                "mean": rounded((row.get("error_sum") or 0) / verified if verified else None),
                "mean_abs": rounded(
                    (row.get("abs_error_sum") or 0) / verified if verified else None
                ),
                "max_abs": rounded(row.get("max_abs_error")),
                "off_by_more_than_0.1": int(row.get("off_0.1") or 0),
                "off_by_more_than_0.2": int(row.get("off_0.2") or 0),
            },
        }


# The candidates' ids, as a bitmap that filters the texts before they are shuffled. Spark's bitmap
# functions build it on the executors, one bucket of BITMAP_BUCKET_BITS bits per row.
BITMAP_BUCKET_BITS = 32768
ID_BITMAP_MIN_BITS = 1 << 20
ID_BITMAP_MAX_BITS = 1 << 28  # 32 MiB: beyond that the filter lets more texts through, never fewer


def id_bitmap_bits(documents: int) -> int:
    """Bits of the candidate-id bitmap for a corpus of ``documents``: 16 a document (a power of
    two), so that even when every document is a candidate about 6% of the others pass the filter;
    at least 128 KiB, at most 32 MiB.

    >>> id_bitmap_bits(0), id_bitmap_bits(1_000_000), id_bitmap_bits(10**10) == ID_BITMAP_MAX_BITS
    (1048576, 16777216, True)
    """
    wanted = 1 << max(0, 16 * documents - 1).bit_length()
    return min(ID_BITMAP_MAX_BITS, max(ID_BITMAP_MIN_BITS, wanted))


def id_position(ids: Column, bits: int) -> Column:
    """A document id's bit in a bitmap of ``bits`` bits (Spark's xxhash64 of the id, modulo)."""
    return F.pmod(F.xxhash64(ids), F.lit(bits))


def in_bitmap(bitmap: Any, bits: int) -> Any:
    """An Arrow UDF: whether each id's bit is set in the broadcast ``bitmap``."""

    @F.arrow_udf(BooleanType())  # type: ignore[call-overload]
    def member(ids_hashed: pa.Array) -> pa.Array:
        table = np.frombuffer(bitmap.value, dtype=np.uint8)
        p = ids_hashed.to_numpy(zero_copy_only=False)
        return pa.array(((table[p >> 3] >> (p & 7)) & 1).astype(bool))

    return lambda ids: member(id_position(ids, bits))


def verify_candidates(
    candidates: DataFrame,
    texts: DataFrame,
    *,
    width: int,
    unit: str,
    threshold: float,
    containment_threshold: float | None = None,
    metrics: VerifyMetrics | None = None,
    bitmap: Broadcast[bytes] | None = None,
    bits: int = 0,
    wanted: DataFrame | None = None,
) -> DataFrame:
    """Candidate pairs (the pair table's columns, scored from the sketches) + (doc_id, text) ->
    the pairs whose **exact** scores pass, with ``jaccard`` and the containments exact and
    ``jaccard_estimate`` the sketch's figure.

    Only the texts of the candidates' documents travel: with ``bitmap``, a broadcast of ``bits``
    bits holding the candidates' ids (:func:`shingling.spark.stages.candidate_id_bitmap` builds it), the texts
    whose id it holds (and a few others, which meet no pair) are shuffled once by id; each pair
    meets its two texts by two joins on that one shuffle, and one Arrow function per batch
    computes every pair's exact overlap (:func:`shingling.fast.exact.overlap_batch`, compiled), on
    up to :data:`SCORE_ROWS` pairs at once (:func:`regrouped`). Batches and calls are bounded in
    bytes by ``spark.sql.execution.arrow.maxBytesPerBatch``, so two very long texts travel alone.
    A candidate whose text is missing fails the job (:class:`MissingTextError`): a pair is never
    written unverified. ``wanted`` (doc_id), instead of a bitmap: the ids whose
    texts to keep, by a semi-join within the plan (Spark broadcasts it when it is small).

    Building the plan runs nothing; the caller persists ``candidates`` when they are also read to
    build the bitmap (:meth:`shingling.spark.stages.Verification.decide`).
    """
    if containment_threshold is None:
        # a pair whose shingle-set sizes alone keep its Jaccard under the threshold is decided
        # without its texts: exactly, since J <= min(|A|, |B|) / max(|A|, |B|)
        candidates = candidates.where(
            sizes_may_reach(F.col(SHINGLES_A), F.col(SHINGLES_B), threshold)
        )
    needed = texts.select(DOC_ID, TEXT)
    if bitmap is not None:  # filtered where they are read
        needed = needed.where(in_bitmap(bitmap, bits)(F.col(DOC_ID)))
    if wanted is not None:
        needed = needed.join(wanted.select(DOC_ID), DOC_ID, "left_semi")
    # shuffled once by id: both joins below read that shuffle
    needed = needed.repartition(DOC_ID)
    # texts are never broadcast (a left join may only broadcast its right side, here the texts,
    # and a size estimate can be far off): sort-merge joins keep them partitioned
    text_a = needed.select(F.col(DOC_ID).alias(DOC_A), F.col(TEXT).alias(TEXT_A)).hint("merge")
    text_b = needed.select(F.col(DOC_ID).alias(DOC_B), F.col(TEXT).alias(TEXT_B)).hint("merge")
    carried = [c for c in candidates.columns if c not in (CONTAINMENT_A, CONTAINMENT_B)]
    joined = (
        candidates.select(*carried)
        .join(text_a, DOC_A, "left")
        .join(text_b, DOC_B, "left")
        .select(*carried, TEXT_A, TEXT_B)
    )
    passed = [f for f in joined.schema.fields if f.name not in (TEXT_A, TEXT_B)]
    schema = StructType(
        [
            *passed,
            StructField(EXACT_SHARED, LongType(), False),
            StructField(EXACT_JACCARD, DoubleType(), False),
            StructField(EXACT_CONTAINMENT_A, DoubleType(), False),
            StructField(EXACT_CONTAINMENT_B, DoubleType(), False),
        ]
    )
    names = [f.name for f in passed]
    # each call's bytes: as many as Spark puts in one batch (Spark's default when unset: 2 GiB)
    setting = candidates.sparkSession.conf.get("spark.sql.execution.arrow.maxBytesPerBatch")
    nbytes = size_bytes(setting or "2147483647")

    def score(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in regrouped(batches, rows=SCORE_ROWS, nbytes=nbytes):
            ta, tb = batch.column(TEXT_A), batch.column(TEXT_B)
            missing = pc.or_(pc.is_null(ta), pc.is_null(tb))
            if pc.any(missing).as_py():
                row = pc.index(missing, True).as_py()
                raise MissingTextError(
                    f"{MISSING_TEXT} no text for pair ({batch.column(DOC_A)[row]},"
                    f" {batch.column(DOC_B)[row]}): its documents must be readable to verify it"
                )
            o = exact_overlap(
                ta,
                tb,
                width=width,
                unit=unit,
                ids_a=batch.column(DOC_A),
                ids_b=batch.column(DOC_B),
            )
            yield pa.RecordBatch.from_arrays(
                [
                    *(batch.column(n) for n in names),
                    pa.array(o.shared),
                    pa.array(o.jaccard),
                    pa.array(o.containment_a),
                    pa.array(o.containment_b),
                ],
                schema=to_arrow_schema(schema),
            )

    scored = joined.mapInArrow(score, schema)
    estimate, exact = F.col(JACCARD), F.col(EXACT_JACCARD)
    error = estimate - exact
    if metrics is not None:
        rel = relation(
            exact,
            F.col(EXACT_CONTAINMENT_A),
            F.col(EXACT_CONTAINMENT_B),
            threshold=threshold,
            containment_threshold=containment_threshold,
        )
        scored = scored.observe(
            metrics.observed,
            F.count(F.lit(1)).alias("verified"),
            F.count_if(rel.isNotNull()).alias("kept"),
            F.count_if((estimate >= threshold) & (exact < threshold)).alias("estimate_above"),
            F.count_if((estimate < threshold) & (exact >= threshold)).alias("estimate_below"),
            F.sum(error).alias("error_sum"),
            F.sum(F.abs(error)).alias("abs_error_sum"),
            F.max(F.abs(error)).alias("max_abs_error"),
            F.count_if(F.abs(error) > 0.1).alias("off_0.1"),
            F.count_if(F.abs(error) > 0.2).alias("off_0.2"),
        )
    verified = scored.select(
        *(
            F.col(c)
            for c in candidates.columns
            if c not in (JACCARD, CONTAINMENT_A, CONTAINMENT_B, RELATION)
        ),
        exact.alias(JACCARD),
        estimate.alias(JACCARD_ESTIMATE),
        F.col(EXACT_CONTAINMENT_A).alias(CONTAINMENT_A),
        F.col(EXACT_CONTAINMENT_B).alias(CONTAINMENT_B),
    )
    return verified.withColumn(
        RELATION,
        relation(
            F.col(JACCARD),
            F.col(CONTAINMENT_A),
            F.col(CONTAINMENT_B),
            threshold=threshold,
            containment_threshold=containment_threshold,
        ),
    ).where(F.col(RELATION).isNotNull())
