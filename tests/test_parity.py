"""The Spark job agrees with the library: sketches bit for bit, and the pair table pair for pair."""

from __future__ import annotations

import itertools
import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parity import (
    DEFAULTS,
    WIDTH,
    K,
    expected_documents,
    random_texts,
    reference_pairs,
    spark_documents,
    spark_pairs,
)
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StringType
from pyspark.testing import assertDataFrameEqual
from testdata import (
    DOCUMENT,
    library_row,
    licence_texts,
    licence_words,
    sample_corpus,
    sample_corpus_rows,
)

from shingling import pairs, schema
from shingling.hashing import text_checksum
from shingling.normalize import words
from shingling.schema import (
    CONTAINMENT_A,
    CONTAINMENT_B,
    DOC_A,
    DOC_B,
    EXACT,
    JACCARD,
    JACCARD_ESTIMATE,
    MATCHES,
    RELATION,
    SHINGLES_A,
    SHINGLES_B,
)
from shingling.spark.schemas import documents_schema, pairs_schema

PAIR_COLUMNS = [DOC_A, DOC_B, MATCHES, JACCARD, SHINGLES_A, SHINGLES_B, EXACT]


# --- sketches ------------------------------------------------------------------------------------


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=2**32))
def test_spark_sketches_equal_library_sketches_on_random_unicode(
    spark: SparkSession, seed: int
) -> None:
    texts = random_texts(random.Random(seed), 1000)
    docs = [(f"doc-{i}", t) for i, t in enumerate(texts)]
    assertDataFrameEqual(
        spark_documents(spark, docs, StringType()), expected_documents(spark, docs, StringType())
    )


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.lists(DOCUMENT, min_size=1, max_size=120),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=1, max_value=30),
)
def test_spark_sketches_equal_library_sketches_on_hypothesis_texts(
    spark: SparkSession, texts: list[str | None], width: int, k: int
) -> None:
    # integer ids, with a null id now and then
    docs = [(None if i % 17 == 16 else i, t) for i, t in enumerate(texts)]
    assertDataFrameEqual(
        spark_documents(spark, docs, LongType(), width=width, k=k),
        expected_documents(spark, docs, LongType(), width=width, k=k),
    )


def test_spark_sketches_equal_library_sketches_on_the_sample_corpus(spark: SparkSession) -> None:
    docs = list(sample_corpus())
    expected = sample_corpus_rows(WIDTH, K)
    texts = dict(docs)
    rows = [
        (
            i,
            e["n_words"],
            e["n_shingles"],
            e["sketch"],
            e["text_hash"],
            None,
            text_checksum(texts[i]),
        )
        for i, e in expected.items()
    ]
    assertDataFrameEqual(
        spark_documents(spark, docs, StringType()),
        spark.createDataFrame(rows, documents_schema(StringType())),
    )


# --- the pair table ------------------------------------------------------------------------------


def pair_frame(spark: SparkSession, rows: list[tuple], id_type) -> DataFrame:
    """The pair table's columns of the default mode (no containment), from reference rows."""
    return spark.createDataFrame(rows, pairs_schema(id_type)).select(*PAIR_COLUMNS)


@pytest.fixture(scope="module")
def sample_documents(spark: SparkSession) -> DataFrame:
    return spark_documents(spark, list(sample_corpus()), StringType()).cache()


@pytest.mark.parametrize(
    ("threshold", "max_exact_group"),
    [(DEFAULTS.pairs.threshold, DEFAULTS.pairs.max_exact_group), (0.3, 5)],
)
def test_pair_table_equals_pure_python_pairs_on_the_sample_corpus(
    spark: SparkSession, sample_documents: DataFrame, threshold: float, max_exact_group: int
) -> None:
    expected = reference_pairs(
        sample_corpus_rows(WIDTH, K), threshold=threshold, max_exact_group=max_exact_group
    )
    exact = [e[-2] for e in expected]
    assert any(exact) and not all(exact)  # both kinds present
    got = spark_pairs(sample_documents, threshold=threshold, max_exact_group=max_exact_group)
    assertDataFrameEqual(got.select(*PAIR_COLUMNS), pair_frame(spark, expected, StringType()))


def planted_corpus(seed: int = 11) -> list[tuple[int, str]]:
    """Paragraphs of the machine's licences and of Python's stdlib docstrings, with planted copies.

    Each source paragraph may get edited copies (words replaced, deleted, inserted or swapped) and
    exact copies that differ only in case and punctuation; ids are integers in shuffled order.
    """
    import email
    import json
    import textwrap

    rng = random.Random(seed)
    paragraphs = [
        p for t in licence_texts().values() for p in t.split("\n\n") if len(p.split()) >= 30
    ]
    paragraphs += [m.__doc__ for m in (email, json, textwrap, itertools, random) if m.__doc__]
    paragraphs = rng.sample(paragraphs, 60)
    vocabulary = licence_words()
    texts = []
    for p in paragraphs:
        texts.append(p)
        tokens = p.split()
        for _ in range(rng.choice([0, 1, 2, 3])):
            edited = list(tokens)
            for _ in range(rng.randrange(1, max(2, len(tokens) // 8))):
                op, at = rng.choice("rdis"), rng.randrange(len(edited) - 1)
                if op == "r":
                    edited[at] = rng.choice(vocabulary)
                elif op == "d":
                    del edited[at]
                elif op == "i":
                    edited.insert(at, rng.choice(vocabulary))
                else:
                    edited[at], edited[at + 1] = edited[at + 1], edited[at]
            texts.append(" ".join(edited))
        for _ in range(rng.choice([0, 0, 1, 3])):
            texts.append(
                p.upper().replace(",", " ,, ") if words(p) == words(p.upper()) else p + " ..."
            )
    ids = rng.sample(range(10_000, 99_999), len(texts))
    return list(zip(ids, texts, strict=True))


def test_pair_table_equals_pure_python_pairs_on_planted_edits(spark: SparkSession) -> None:
    docs = planted_corpus()
    rows = {doc_id: library_row(text, WIDTH, K) for doc_id, text in docs}
    documents = spark_documents(spark, docs, LongType())
    for threshold, max_exact_group in (
        (DEFAULTS.pairs.threshold, DEFAULTS.pairs.max_exact_group),
        (0.4, 2),
    ):
        expected = reference_pairs(rows, threshold=threshold, max_exact_group=max_exact_group)
        assert sum(1 for e in expected if not e[-2]) >= 20 and any(e[-2] for e in expected)
        got = spark_pairs(documents, threshold=threshold, max_exact_group=max_exact_group)
        assertDataFrameEqual(got.select(*PAIR_COLUMNS), pair_frame(spark, expected, LongType()))


# --- the verified pair table (the job's default) -------------------------------------------------

VERIFIED_COLUMNS = [*PAIR_COLUMNS, JACCARD_ESTIMATE, CONTAINMENT_A, CONTAINMENT_B, RELATION]


def test_verified_pair_table_equals_library_exact_pairs_on_the_sample_corpus(
    spark: SparkSession, sample_documents: DataFrame
) -> None:
    # every written jaccard is the library's exact Jaccard of the two texts, and every candidate
    # whose exact Jaccard reaches the threshold is written: nothing below it, nothing dropped
    texts = dict(sample_corpus())
    threshold, margin = DEFAULTS.pairs.threshold, DEFAULTS.pairs.candidate_margin
    expected = reference_pairs(
        sample_corpus_rows(WIDTH, K),
        threshold=threshold,
        max_exact_group=DEFAULTS.pairs.max_exact_group,
        texts=texts,
        margin=margin,
    )
    near = [e for e in expected if not e[-2]]
    assert near and all(e[3] >= threshold for e in expected)
    assert any(e[4] < threshold for e in near)  # pairs the estimate alone would have lost
    assert any(e[3] != e[4] for e in near)  # exact scores differ from the estimates
    frame = spark.createDataFrame(list(texts.items()), "doc_id string, text string")
    got = spark_pairs(
        sample_documents,
        threshold=threshold,
        max_exact_group=DEFAULTS.pairs.max_exact_group,
        texts=frame,
        margin=margin,
    )
    assertDataFrameEqual(
        got.select(*VERIFIED_COLUMNS),
        spark.createDataFrame(expected, pairs_schema(StringType())).select(*VERIFIED_COLUMNS),
    )


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=2**32))
def test_verified_pair_table_equals_library_exact_pairs_on_random_unicode(
    spark: SparkSession, seed: int
) -> None:
    # random texts of every plane, each with an edited copy so that candidates exist at every level
    rng = random.Random(seed)
    texts = [t for t in random_texts(rng, 150) if t]
    docs = []
    for i, t in enumerate(texts):
        docs.append((2 * i, t))
        cut = rng.randrange(len(t) + 1)
        docs.append((2 * i + 1, t[:cut] + rng.choice(licence_words()) + " " + t[cut:]))
    rows = {doc_id: library_row(text, WIDTH, K) for doc_id, text in docs}
    expected = reference_pairs(rows, threshold=0.5, max_exact_group=3, texts=dict(docs), margin=0.3)
    frame = spark.createDataFrame(docs, "doc_id long, text string")
    got = spark_pairs(
        spark_documents(spark, docs, LongType()),
        threshold=0.5,
        max_exact_group=3,
        texts=frame,
        margin=0.3,
    )
    assertDataFrameEqual(
        got.select(*VERIFIED_COLUMNS),
        spark.createDataFrame(expected, pairs_schema(LongType())).select(*VERIFIED_COLUMNS),
    )


def test_a_column_added_to_the_schema_and_pairs_is_in_the_spark_pair_table(
    spark: SparkSession, sample_documents: DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a newcomer's column: its name and type in shingling.schema, its definition in
    # shingling.pairs.DERIVED; the Spark stages carry it with nothing else changed
    name = "size_ratio"

    def size_ratio(batch: pa.RecordBatch) -> pa.Array:  # shipped to the executors by value
        a, b = batch.column(SHINGLES_A), batch.column(SHINGLES_B)
        low = pc.cast(pc.min_element_wise(a, b), pa.float64())
        return pc.divide(low, pc.max_element_wise(a, b))

    monkeypatch.setattr(schema, "PAIR_COLUMNS", (*schema.MEASURED_PAIR_COLUMNS, name))
    monkeypatch.setitem(schema.COLUMN_TYPES, name, pa.float64())
    monkeypatch.setitem(pairs.DERIVED, name, size_ratio)
    texts = dict(sample_corpus())
    settings = {
        "threshold": DEFAULTS.pairs.threshold,
        "max_exact_group": DEFAULTS.pairs.max_exact_group,
        "margin": DEFAULTS.pairs.candidate_margin,
    }
    expected = reference_pairs(sample_corpus_rows(WIDTH, K), texts=texts, **settings)
    assert any(e[-1] < 1.0 for e in expected) and any(e[-1] == 1.0 for e in expected)
    frame = spark.createDataFrame(list(texts.items()), "doc_id string, text string")
    got = spark_pairs(sample_documents, texts=frame, **settings)
    assert tuple(got.columns) == schema.PAIR_COLUMNS
    assertDataFrameEqual(got, spark.createDataFrame(expected, pairs_schema(StringType())))
