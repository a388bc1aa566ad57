"""Choosing the kept document, naming what each removed one duplicated, and the corpus left."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from jobs.clusters import CLUSTER_ID, CLUSTER_SIZE
from jobs.errors import BadInputError
from jobs.keep import (
    KEPT_ID,
    LINKED_ID,
    choose_kept,
    deduplicated_corpus,
    keep_key,
    keep_keys,
    removed_documents,
)
from jobs.schemas import DOC_A, DOC_B, DOC_ID, EXACT, JACCARD
from jobs.verify import VERIFIED

CLUSTERS = [("a", "a", 3), ("b", "a", 3), ("c", "a", 3), ("x", "x", 2), ("y", "x", 2)]
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
    clusters = spark.createDataFrame(
        CLUSTERS, f"{DOC_ID} string, {CLUSTER_ID} string, {CLUSTER_SIZE} bigint"
    )
    corpus = spark.createDataFrame(CORPUS, "id string, body string, score double")
    return clusters, corpus


def kept_ids(spark: SparkSession, frames, keep: str, order: str = "desc") -> dict[str, str]:  # noqa: ANN001
    clusters, corpus = frames
    key = keep_key(corpus, keep=keep, text_column="body")
    keys = None if key is None else keep_keys(corpus, id_column="id", key=key)
    rows = choose_kept(clusters, keys, descending=order == "desc").collect()
    return {r[DOC_ID]: r[KEPT_ID] for r in rows}


@pytest.mark.parametrize(
    ("keep", "order", "first", "second"),
    [
        ("longest", "desc", "b", "x"),  # x and y tie on length: the smaller id
        ("smallest_id", "desc", "a", "x"),
        ("column:score", "desc", "c", "x"),  # b's null score never wins
        ("column:score", "asc", "a", "x"),
    ],
)
def test_each_policy_keeps_one_document_per_cluster(
    spark: SparkSession,
    frames,
    keep: str,
    order: str,
    first: str,
    second: str,  # noqa: ANN001
) -> None:
    kept = kept_ids(spark, frames, keep, order)
    assert kept == {"a": first, "b": first, "c": first, "x": second, "y": second}


def test_a_missing_or_unorderable_keep_column_is_bad_input(spark: SparkSession, frames) -> None:  # noqa: ANN001
    _, corpus = frames
    with pytest.raises(BadInputError, match="'date'.*columns present: id, body, score"):
        keep_key(corpus, keep="column:date", text_column="body")
    with pytest.raises(BadInputError, match="must be a number"):
        keep_key(corpus.selectExpr("*", "array(1) AS tags"), keep="column:tags", text_column="body")


def test_removed_documents_name_the_kept_one_and_the_linking_pair(spark: SparkSession) -> None:
    kept = spark.createDataFrame(
        [("a", "a", 3, "b"), ("b", "a", 3, "b"), ("c", "a", 3, "b")],
        f"{DOC_ID} string, {CLUSTER_ID} string, {CLUSTER_SIZE} bigint, {KEPT_ID} string",
    )
    # c reaches the kept b only through a: its best pair names a; a has a direct pair with b
    pairs = spark.createDataFrame(
        [("a", "b", 0.7, False, False), ("a", "c", 0.9, False, True)],
        f"{DOC_A} string, {DOC_B} string, {JACCARD} double, {EXACT} boolean, {VERIFIED} boolean",
    )
    expected = spark.createDataFrame(
        [("a", "a", "b", "b", 0.7, False, False), ("c", "a", "b", "a", 0.9, False, True)],
        f"{DOC_ID} string, {CLUSTER_ID} string, {KEPT_ID} string, {LINKED_ID} string,"
        f" {JACCARD} double,"
        f" {EXACT} boolean, {VERIFIED} boolean",
    )
    assertDataFrameEqual(removed_documents(kept, pairs), expected)


def test_the_corpus_loses_exactly_the_removed_documents(spark: SparkSession, frames) -> None:  # noqa: ANN001
    _, corpus = frames
    removed = spark.createDataFrame([("a",), ("c",), ("y",)], f"{DOC_ID} string")
    expected = corpus.where("id NOT IN ('a', 'c', 'y')")
    result = deduplicated_corpus(corpus, removed, id_column="id")
    assert result.columns == corpus.columns
    assertDataFrameEqual(result, expected)
