"""The Spark column expressions of the pair rules equal shingling.pairs, on every input tried."""

from __future__ import annotations

import itertools

from pyspark.sql import functions as F

from shingling import pairs
from shingling.schema import A_IN_B, B_IN_A
from shingling.spark.rules import (
    flipped,
    min_shared,
    prefix_length,
    relation,
    sizes_may_reach,
)

THRESHOLDS = [0.0, 0.05, 0.1, 0.3, 0.35, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0]


def test_min_shared_and_prefix_length_columns_are_the_reference(spark) -> None:
    sizes = spark.range(0, 2049).withColumnRenamed("id", "size")
    for t in THRESHOLDS:
        got = {
            r["size"]: (r["m"], r["p"])
            for r in sizes.select(
                "size",
                min_shared(F.col("size"), t).alias("m"),
                prefix_length(F.col("size"), t).alias("p"),
            ).collect()
        }
        assert got == {
            n: (pairs.min_shared(n, t), pairs.prefix_length(n, t)) for n in range(2049)
        }, t


def test_relation_column_is_the_reference(spark) -> None:
    values = [0.0, 0.29, 0.3, 0.49, 0.5, 0.79, 0.8, 0.81, 1.0]
    rows = list(itertools.product(values, values, values))
    frame = spark.createDataFrame(rows, "j double, ca double, cb double")
    for t, ct in [(0.5, None), (0.5, 0.8), (0.8, 0.3), (0.3, 0.5)]:
        got = {
            (r["j"], r["ca"], r["cb"]): r["rel"]
            for r in frame.select(
                "j",
                "ca",
                "cb",
                relation(
                    F.col("j"), F.col("ca"), F.col("cb"), threshold=t, containment_threshold=ct
                ).alias("rel"),
            ).collect()
        }
        want = {
            (j, ca, cb): pairs.relation(j, ca, cb, threshold=t, containment_threshold=ct)
            for j, ca, cb in rows
        }
        assert got == want, (t, ct)


def test_sizes_may_reach_column_is_the_reference(spark) -> None:
    sizes = [1, 2, 3, 7, 10, 49, 50, 51, 99, 100, 101, 1000, 1999, 2000, 123457]
    rows = list(itertools.product(sizes, sizes))
    frame = spark.createDataFrame(rows, "a long, b long")
    for t in THRESHOLDS:
        got = {
            (r["a"], r["b"]): r["ok"]
            for r in frame.select(
                "a", "b", sizes_may_reach(F.col("a"), F.col("b"), t).alias("ok")
            ).collect()
        }
        assert got == {(a, b): pairs.sizes_may_reach(a, b, t) for a, b in rows}, t


def test_flipped_column_is_the_reference(spark) -> None:
    relations = [pairs.RELATIONS[i] for i in range(len(pairs.RELATIONS))]
    frame = spark.createDataFrame([(r,) for r in relations], "rel string")
    got = {
        r["rel"]: r["f"] for r in frame.select("rel", flipped(F.col("rel")).alias("f")).collect()
    }
    assert got == {r: pairs.flipped(r) for r in relations}
    assert got[A_IN_B] == B_IN_A
