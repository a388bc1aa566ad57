"""The stages own every Spark job, broadcast and cache; the transforms only build plans."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from testdata import SAMPLE_CORPUS

from shingling.fast.frequency import FrequencySketch
from shingling.schema import DOC_A, DOC_B, DOC_ID, TEXT
from shingling.spark.stages import (
    Cache,
    candidate_id_bitmap,
    hash_frequencies,
    near_duplicate_pairs,
    share_frequencies,
)
from shingling.spark.transforms import (
    exact_groups,
    expand_groups,
    prefix_rows,
    representatives,
    scored_prefix_pairs,
    sketch_documents,
    sketched_only,
)
from shingling.spark.verify import id_bitmap_bits, verify_candidates

SPARK = Path(__file__).resolve().parents[2] / "shingling" / "spark"
PURE = ["transforms.py", "verify.py", "rules.py", "keep.py"]
# DataFrame methods that run a Spark job or hold data (persist), and the SparkContext's broadcast
ACTIONS = {
    "collect",
    "count",
    "first",
    "head",
    "take",
    "toArrow",
    "toPandas",
    "toLocalIterator",
    "show",
    "foreach",
    "foreachPartition",
    "persist",
    "cache",
    "unpersist",
    "checkpoint",
    "localCheckpoint",
    "write",
    "writeTo",
}


def actions_in(source: str) -> list[str]:
    """Calls of DataFrame actions (``x.count()``, not ``F.count(...)``) and broadcasts by the
    SparkContext (``...sparkContext.broadcast``; ``F.broadcast`` is a join hint)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            receiver = node.value.id if isinstance(node.value, ast.Name) else None
            if node.attr in ACTIONS and receiver != "F":
                found.append(f"{node.attr} (line {node.lineno})")
            if node.attr == "broadcast" and receiver != "F":
                found.append(f"broadcast (line {node.lineno})")
    return found


def test_the_pure_modules_call_no_action_and_broadcast_nothing() -> None:
    assert actions_in("df.count(); F.count('x'); F.broadcast(df); sc.broadcast(b)") == [
        "count (line 1)",
        "broadcast (line 1)",
    ]
    for name in PURE:
        assert actions_in((SPARK / name).read_text()) == [], f"shingling/spark/{name} runs Spark"


def jobs_while(spark: SparkSession, build) -> tuple[object, list[int]]:  # type: ignore[no-untyped-def]
    """What ``build()`` returns, and the Spark jobs it started."""
    group = "building-plans"
    spark.sparkContext.setJobGroup(group, "plans only")
    try:
        result = build()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    return result, list(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def test_building_the_pair_stage_plans_runs_no_spark_job(spark: SparkSession) -> None:
    corpus = spark.read.parquet(str(SAMPLE_CORPUS))
    # what a stage computes first: a frequency sketch, the candidates' bitmap
    documents = sketch_documents(corpus, width=4, k=20)
    reps = representatives(exact_groups(sketched_only(documents)))
    frequencies = share_frequencies(
        spark, hash_frequencies(reps, k=20, sketch=FrequencySketch(1 << 12))
    )
    every_id = corpus.select(F.col(DOC_ID).alias(DOC_A), F.col(DOC_ID).alias(DOC_B))
    bits = id_bitmap_bits(669)
    bitmap = spark.sparkContext.broadcast(candidate_id_bitmap(every_id, bits=bits))

    def plans() -> DataFrame:
        docs = sketch_documents(corpus, width=4, k=20)
        grouped = exact_groups(sketched_only(docs))
        scored = scored_prefix_pairs(
            prefix_rows(representatives(grouped), threshold=0.3, k=20, frequencies=frequencies),
            k=20,
            threshold=0.3,
        )
        verified = verify_candidates(
            scored,
            corpus.select(DOC_ID, TEXT),
            width=4,
            unit="words",
            threshold=0.5,
            bitmap=bitmap,
            bits=bits,
        )
        return expand_groups(verified, grouped, max_exact_group=100, k=20)

    result, started = jobs_while(spark, plans)
    assert started == []
    # and the plan is whole: it runs when asked
    assert isinstance(result, DataFrame) and result.count() > 0


def test_a_cache_releases_what_it_persisted_and_nothing_else(spark: SparkSession) -> None:
    mine = spark.range(10).persist()
    mine.count()
    cache = Cache()
    theirs = cache.persist(spark.range(20))
    theirs.count()
    assert theirs.is_cached
    cache.release()
    assert not theirs.is_cached and mine.is_cached
    mine.unpersist()


def test_a_crowded_frequency_sketch_is_said_before_the_join_runs(
    spark: SparkSession, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="shingling")
    documents = sketch_documents(spark.read.parquet(str(SAMPLE_CORPUS)), width=4, k=20)
    pairs, started = jobs_while(
        spark,
        lambda: near_duplicate_pairs(
            documents, threshold=0.5, k=20, max_exact_group=100, frequency_mb=0.001
        ),
    )
    assert started  # the stage ran its jobs (the frequency sketch) ...
    assert any("frequency sketch is" in m and "filled" in m for m in caplog.messages)
    assert isinstance(pairs, DataFrame)  # ... and the join itself has not run yet
    spark.catalog.clearCache()
