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
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, LongType, StructField, StructType

from jobs.schemas import DOC_A, DOC_B, DOC_ID, EXACT, JACCARD, TEXT
from shingling.batch import sketch_batch

EXACT_JACCARD = "exact_jaccard"
EXACT_SHARED = "exact_shared"
EXACT_CONTAINMENT_A = "exact_containment_a"
EXACT_CONTAINMENT_B = "exact_containment_b"
VERIFIED = "verified"
TEXT_A = "text_a"
TEXT_B = "text_b"

# A bottom-k "sketch" with k this large is the whole set of a document's shingle hashes.
ALL_SHINGLES = 2**31 - 1
# Estimates are ratios of small integers; this keeps a pair exactly at cut +- margin inside.
_EPSILON = 1e-9


class Overlap(NamedTuple):
    """Exact set sizes of each (a, b) pair of texts: shared shingles, |A|, |B| and the Jaccard."""

    shared: np.ndarray
    size_a: np.ndarray
    size_b: np.ndarray
    jaccard: np.ndarray  # NaN where a text is missing or has no words


def exact_overlap(
    texts_a: pa.Array, texts_b: pa.Array, *, width: int, unit: str = "words"
) -> Overlap:
    """The exact shingle-set overlap of each (a, b) pair of texts, with the library's definitions.

    >>> o = exact_overlap(pa.array(["A b c d e", "x"]), pa.array(["a b c d f", None]), width=4)
    >>> o.jaccard.round(4).tolist(), o.shared.tolist(), o.size_a.tolist()
    ([0.3333, nan], [1, 0], [2, 1])
    """
    a = sketch_batch(texts_a, width=width, k=ALL_SHINGLES, unit=unit)
    b = sketch_batch(texts_b, width=width, k=ALL_SHINGLES, unit=unit)
    n = len(texts_a)
    # each document's hashes are distinct, so a (pair, hash) seen twice is a shared shingle
    pair = np.concatenate(
        [np.repeat(np.arange(n), a.n_shingles), np.repeat(np.arange(n), b.n_shingles)]
    )
    hashes = np.concatenate(
        [
            a.sketch.flatten().to_numpy(zero_copy_only=False),
            b.sketch.flatten().to_numpy(zero_copy_only=False),
        ]
    )
    order = np.lexsort((hashes, pair))
    pair, hashes = pair[order], hashes[order]
    twice = (pair[1:] == pair[:-1]) & (hashes[1:] == hashes[:-1])
    shared = np.bincount(pair[1:][twice], minlength=n).astype(np.int64)
    union = a.n_shingles + b.n_shingles - shared
    comparable = (a.n_shingles > 0) & (b.n_shingles > 0)
    jaccard = np.full(n, np.nan)
    jaccard[comparable] = shared[comparable] / union[comparable]
    return Overlap(shared, a.n_shingles, b.n_shingles, jaccard)


def _share(part: np.ndarray, whole: np.ndarray) -> pa.Array:
    """part / whole as a double array, null where whole is 0."""
    return pa.array(part / np.maximum(whole, 1), mask=whole == 0)


def verified_schema(id_type: Any) -> StructType:
    """Schema of the verified-pairs table for an id column of ``id_type``."""
    return StructType(
        [
            StructField(DOC_A, id_type, False),
            StructField(DOC_B, id_type, False),
            StructField(JACCARD, DoubleType(), False),
            StructField(EXACT_JACCARD, DoubleType(), True),
            StructField(EXACT_SHARED, LongType(), False),
            StructField(EXACT_CONTAINMENT_A, DoubleType(), True),
            StructField(EXACT_CONTAINMENT_B, DoubleType(), True),
        ]
    )


def near_cut(pairs: DataFrame, *, cut: float, margin: float) -> DataFrame:
    """Pair table -> the pairs to verify: estimate within ``margin`` of ``cut``, no exact copies."""
    return pairs.where(
        ~F.col(EXACT) & (F.abs(F.col(JACCARD) - F.lit(cut)) <= F.lit(margin + _EPSILON))
    )


def with_texts(pairs: DataFrame, texts: DataFrame) -> DataFrame:
    """(doc_a, doc_b, jaccard) + (doc_id, text) -> (doc_a, doc_b, jaccard, text_a, text_b)."""
    text_a = texts.select(F.col(DOC_ID).alias(DOC_A), F.col(TEXT).alias(TEXT_A))
    text_b = texts.select(F.col(DOC_ID).alias(DOC_B), F.col(TEXT).alias(TEXT_B))
    return pairs.select(DOC_A, DOC_B, JACCARD).join(text_a, DOC_A).join(text_b, DOC_B)


def exact_scores(pairs: DataFrame, *, width: int, unit: str = "words") -> DataFrame:
    """(doc_a, doc_b, jaccard, text_a, text_b) -> the verified pairs (:func:`verified_schema`).

    One vectorized Arrow function on the executors; the exact scores are null where a text is
    missing or has no words.
    """
    schema = verified_schema(pairs.schema[DOC_A].dataType)

    def score_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            o = exact_overlap(batch.column(TEXT_A), batch.column(TEXT_B), width=width, unit=unit)
            yield pa.RecordBatch.from_arrays(
                [
                    batch.column(DOC_A),
                    batch.column(DOC_B),
                    batch.column(JACCARD),
                    pa.array(o.jaccard, mask=np.isnan(o.jaccard)),
                    pa.array(o.shared),
                    _share(o.shared, o.size_a),
                    _share(o.shared, o.size_b),
                ],
                names=schema.fieldNames(),
            )

    return pairs.select(DOC_A, DOC_B, JACCARD, TEXT_A, TEXT_B).mapInArrow(score_batches, schema)


def decided_pairs(pairs: DataFrame, verified: DataFrame | None, *, cut: float) -> DataFrame:
    """Pair table + verified pairs -> the pairs that link documents, plus ``verified``.

    A verified pair is decided on its exact Jaccard, which replaces the estimate in ``jaccard``;
    every other pair on its estimate.
    """
    if verified is None:
        decided = pairs.withColumn(VERIFIED, F.lit(False))
    else:
        exact = verified.select(DOC_A, DOC_B, EXACT_JACCARD)
        decided = (
            pairs.join(exact, [DOC_A, DOC_B], "left")
            .withColumn(VERIFIED, F.col(EXACT_JACCARD).isNotNull())
            .withColumn(JACCARD, F.coalesce(EXACT_JACCARD, JACCARD))
            .drop(EXACT_JACCARD)
        )
    return decided.where(F.col(JACCARD) >= F.lit(cut))


def verification_summary(verified: DataFrame, *, cut: float) -> dict[str, Any]:
    """How many estimates were off and by how much: one aggregate over the verified pairs."""
    error = F.col(JACCARD) - F.col(EXACT_JACCARD)
    above, truly_above = F.col(JACCARD) >= F.lit(cut), F.col(EXACT_JACCARD) >= F.lit(cut)
    row = (
        verified.where(F.col(EXACT_JACCARD).isNotNull())
        .agg(
            F.count(F.lit(1)).alias("verified"),
            F.sum((above & ~truly_above).cast("long")).alias("false_positives"),
            F.sum((~above & truly_above).cast("long")).alias("false_negatives"),
            F.avg(error).alias("mean_error"),
            F.avg(F.abs(error)).alias("mean_abs_error"),
            F.max(F.abs(error)).alias("max_abs_error"),
            F.percentile(F.abs(error), [0.5, 0.9, 0.99]).alias("quantiles"),
            *(
                F.sum((F.abs(error) > F.lit(d)).cast("long")).alias(f"off_{d}")
                for d in (0.05, 0.1, 0.2)
            ),
        )
        .first()
    )
    assert row is not None
    quantiles = row["quantiles"] or [None, None, None]

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(float(value), 4)

    return {
        "pairs_verified": int(row["verified"]),
        "dropped_estimate_above_cut": int(row["false_positives"] or 0),
        "added_estimate_below_cut": int(row["false_negatives"] or 0),
        "error_mean": rounded(row["mean_error"]),
        "abs_error": {
            "mean": rounded(row["mean_abs_error"]),
            "p50": rounded(quantiles[0]),
            "p90": rounded(quantiles[1]),
            "p99": rounded(quantiles[2]),
            "max": rounded(row["max_abs_error"]),
        },
        "off_by_more_than": {str(d): int(row[f"off_{d}"] or 0) for d in (0.05, 0.1, 0.2)},
    }
