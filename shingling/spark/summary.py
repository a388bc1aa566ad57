"""What the entry points report: the documents read, sketched and skipped, by reason."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from shingling.schema import SKIP_REASON, SKIP_REASONS
from shingling.summaries import DocumentCounts


def count_documents(documents: DataFrame) -> DocumentCounts:
    """Documents read, sketched and skipped by reason: one aggregate over the written table."""
    by_reason = {
        r[SKIP_REASON]: r["n"]
        for r in documents.groupBy(SKIP_REASON).agg(F.count(F.lit(1)).alias("n")).collect()
    }
    skipped = {reason: int(by_reason.get(reason, 0)) for reason in SKIP_REASONS}
    sketched = int(by_reason.get(None, 0))
    return DocumentCounts(read=sketched + sum(skipped.values()), sketched=sketched, skipped=skipped)
