"""The keep policy's order, the tables of a decision, and the corpus left."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from shingling.decision import priority_order
from shingling.errors import BadInputError
from shingling.schema import DOC_ID, EXACT, JACCARD
from shingling.spark.connected_components import CLUSTER_ID, CLUSTER_SIZE
from shingling.spark.decide import CONTAINMENT, DECISION_RELATION, KEPT_ID, RANK, ranked
from shingling.spark.keep import (
    deduplicated_corpus,
    keep_key,
    keep_keys,
    kept_clusters,
    removed_documents,
)

CORPUS = [
    ("a", "short text", 5.0),
    ("b", "the longest text of the first cluster", None),
    ("c", "a mid-sized text here", 9.0),
    ("x", "same length", 1.0),
    ("y", "same length", 1.0),
    ("z", "a document in no cluster", 7.0),
]


@pytest.fixture
def frames(spark: SparkSession):  # noqa: ANN201
    corpus = spark.createDataFrame(CORPUS, "id string, body string, score double")
    return None, corpus


@pytest.mark.parametrize(
    ("keep", "order", "expected"),
    [
        ("longest", "desc", ["b", "z", "c", "x", "y", "a"]),  # x and y tie: the smaller id
        ("smallest_id", "desc", ["a", "b", "c", "x", "y", "z"]),
        ("column:score", "desc", ["c", "z", "a", "x", "y", "b"]),  # a null comes last
        ("column:score", "asc", ["x", "y", "a", "z", "c", "b"]),
    ],
)
def test_each_policy_ranks_as_the_reference_order(
    spark: SparkSession,
    frames,
    keep: str,
    order: str,
    expected: list[str],  # noqa: ANN001
) -> None:
    _, corpus = frames
    key = keep_key(corpus, keep=keep, text_column="body")
    keys = None if key is None else keep_keys(corpus, id_column="id", key=key)
    ids = corpus.select(corpus["id"].alias(DOC_ID))
    got = [r[DOC_ID] for r in ranked(ids, keys, descending=order == "desc").orderBy(RANK).collect()]
    assert got == expected
    values = {
        "longest": {r[0]: len(r[1]) for r in CORPUS},
        "smallest_id": None,
        "column:score": {r[0]: r[2] for r in CORPUS},
    }[keep]
    reference = priority_order(
        [r[0] for r in CORPUS] if values is None else values, descending=order == "desc"
    )
    assert got == reference


def test_a_missing_or_unorderable_keep_column_is_bad_input(spark: SparkSession, frames) -> None:  # noqa: ANN001
    _, corpus = frames
    with pytest.raises(BadInputError, match="'date'.*columns present: id, body, score"):
        keep_key(corpus, keep="column:date", text_column="body")
    with pytest.raises(BadInputError, match="must be a number"):
        keep_key(corpus.selectExpr("*", "array(1) AS tags"), keep="column:tags", text_column="body")


def test_removed_and_clusters_come_from_the_decisions(spark: SparkSession) -> None:
    schema = (
        f"{DOC_ID} string, {KEPT_ID} string, {DECISION_RELATION} string, {JACCARD} double,"
        f" {CONTAINMENT} double, {EXACT} boolean"
    )
    decisions = spark.createDataFrame(
        [
            ("a", "a", "kept", 1.0, 1.0, False),
            ("b", "a", "near_duplicate", 0.7, 0.8, False),
            ("c", "a", "near_duplicate", 1.0, 1.0, True),
            ("d", "d", "kept", 1.0, 1.0, False),  # kept, nothing removed for it: no cluster
            ("e", "f", "excerpt", 0.2, 0.9, False),
            ("f", "f", "kept", 1.0, 1.0, False),
        ],
        schema,
    )
    removed = spark.createDataFrame(
        [
            ("b", "a", "near_duplicate", 0.7, 0.8, False),
            ("c", "a", "near_duplicate", 1.0, 1.0, True),
            ("e", "f", "excerpt", 0.2, 0.9, False),
        ],
        schema,
    )
    assertDataFrameEqual(removed_documents(decisions), removed)
    clusters = spark.createDataFrame(
        [("a", "a", 3), ("b", "a", 3), ("c", "a", 3), ("e", "f", 2), ("f", "f", 2)],
        f"{DOC_ID} string, {CLUSTER_ID} string, {CLUSTER_SIZE} bigint",
    )
    assertDataFrameEqual(kept_clusters(decisions), clusters)


def test_the_corpus_loses_exactly_the_removed_documents(spark: SparkSession, frames) -> None:  # noqa: ANN001
    _, corpus = frames
    removed = spark.createDataFrame([("a",), ("c",), ("y",)], f"{DOC_ID} string")
    expected = corpus.where("id NOT IN ('a', 'c', 'y')")
    result = deduplicated_corpus(corpus, removed, id_column="id")
    assert result.columns == corpus.columns
    assertDataFrameEqual(result, expected)
