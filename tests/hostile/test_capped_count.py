"""Issue 34 §2: ``pairs.capped_documents`` counts documents, each once, never more than the corpus
holds (it counted star rows: one per member in every capped posting, so a family of near copies
whose hashes are all hot counted each document once per hash). ``OUT/capped/`` was promised by
default.toml and never written: the promise is gone, the summary's count is what there is.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from shingling.schema import DOC_ID, TEXT
from shingling.spark.stages import PairMetrics, near_duplicate_pairs
from shingling.spark.transforms import sketch_documents

WORDS = (
    "the committee met on tuesday to review the budget for the coming year and agreed that the"
    " library would stay open late on weekdays while the pool closes for repairs in the spring"
).split()
COPIES = 60


def test_capped_documents_never_exceed_the_corpus(spark: SparkSession) -> None:
    rows = []
    for i in range(COPIES):  # near copies: one word changed each, every shared hash is hot
        words = list(WORDS)
        words[i % len(words)] = f"variant{i}"
        rows.append((f"doc-{i:03d}", " ".join(words)))
    corpus = spark.createDataFrame(rows, f"{DOC_ID} string, {TEXT} string")
    docs = corpus.transform(sketch_documents, width=4, k=20).cache()
    metrics = PairMetrics()
    pairs = near_duplicate_pairs(
        docs, threshold=0.5, k=20, max_exact_group=100, max_posting=2, metrics=metrics
    )
    assert pairs.count() > 0
    capped = metrics.as_dict()["capped_documents"]
    assert 0 < capped <= COPIES, capped
    docs.unpersist()


def test_no_capped_table_is_promised() -> None:
    defaults = Path(__file__).resolve().parents[2] / "shingling" / "default.toml"
    assert "OUT/capped/" not in defaults.read_text()
