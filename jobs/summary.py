"""What the entry points report: the documents read, sketched and skipped, by reason, and how far
verification found the estimates off."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.schemas import JACCARD, SKIP_REASON, SKIP_REASONS
from jobs.verify import EXACT_JACCARD
from shingling.schema import DocumentCounts


def count_documents(documents: DataFrame) -> DocumentCounts:
    """Documents read, sketched and skipped by reason: one aggregate over the written table."""
    by_reason = {
        r[SKIP_REASON]: r["n"]
        for r in documents.groupBy(SKIP_REASON).agg(F.count(F.lit(1)).alias("n")).collect()
    }
    skipped = {reason: int(by_reason.get(reason, 0)) for reason in SKIP_REASONS}
    sketched = int(by_reason.get(None, 0))
    return DocumentCounts(read=sketched + sum(skipped.values()), sketched=sketched, skipped=skipped)


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
