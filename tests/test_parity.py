"""The Spark job agrees with the library: sketches bit for bit, and the pair table pair for pair."""

from __future__ import annotations

import itertools
import random
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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

from jobs import config as config_module
from jobs.schemas import (
    DOC_A,
    DOC_B,
    DOC_ID,
    EXACT,
    JACCARD,
    MATCHES,
    SHINGLES_A,
    SHINGLES_B,
    SKIP_NO_WORDS,
    SKIP_NULL_ID,
    SKIP_NULL_TEXT,
    TEXT,
    documents_schema,
)
from jobs.transforms import near_duplicate_pairs, sketch_documents
from shingling.estimators import jaccard, matches
from shingling.normalize import words
from shingling.sketch import Sketch

DEFAULTS = config_module.load()
WIDTH, K = DEFAULTS.sketch.width, DEFAULTS.sketch.k
PAIR_COLUMNS = [DOC_A, DOC_B, MATCHES, JACCARD, SHINGLES_A, SHINGLES_B, EXACT]


# --- sketches ------------------------------------------------------------------------------------


def expected_documents(
    spark: SparkSession, docs: list[tuple], id_type, width: int = WIDTH, k: int = K
) -> DataFrame:
    """The documents table the job must write, from the per-document library functions."""
    rows = []
    for doc_id, text in docs:
        row = library_row(None if doc_id is None else text, width, k)
        if doc_id is None:
            reason = SKIP_NULL_ID
        elif text is None:
            reason = SKIP_NULL_TEXT
        else:
            reason = SKIP_NO_WORDS if row["sketch"] is None else None
        rows.append(
            (doc_id, row["n_words"], row["n_shingles"], row["sketch"], row["text_hash"], reason)
        )
    return spark.createDataFrame(rows, documents_schema(id_type))


def spark_documents(
    spark: SparkSession, docs: list[tuple], id_type, width: int = WIDTH, k: int = K
) -> DataFrame:
    frame = spark.createDataFrame(docs, f"{DOC_ID} {id_type.simpleString()}, {TEXT} string")
    return frame.transform(sketch_documents, width=width, k=k)


def random_texts(rng: random.Random, n: int) -> list[str | None]:
    """n texts of random code points (any plane, no surrogates), real words and separators."""
    vocabulary = licence_words()[:300]

    def code_point() -> str:
        while True:
            cp = rng.randrange(0x110000) if rng.random() < 0.3 else rng.randrange(0x3000)
            if not 0xD800 <= cp <= 0xDFFF:
                return chr(cp)

    def token() -> str:
        if rng.random() < 0.6:
            return rng.choice(vocabulary)
        return "".join(code_point() for _ in range(rng.randrange(1, 8)))

    texts: list[str | None] = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.03:
            texts.append(None)
        elif kind < 0.06:
            texts.append(rng.choice(["", " ", "...", "—!?\n", "\u3000«»"]))
        else:
            n_tokens = rng.choice([1, 2, 3, 4, 5, rng.randrange(6, 200)])
            seps = [rng.choice([" ", ", ", ".\n", " - ", "\t", "/"]) for _ in range(n_tokens)]
            texts.append("".join(token() + sep for sep in seps))
    return texts


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
        spark_documents(spark, docs, LongType(), width, k),
        expected_documents(spark, docs, LongType(), width, k),
    )


def test_spark_sketches_equal_library_sketches_on_the_sample_corpus(spark: SparkSession) -> None:
    docs = list(sample_corpus())
    expected = sample_corpus_rows(WIDTH, K)
    rows = [
        (i, e["n_words"], e["n_shingles"], e["sketch"], e["text_hash"], None)
        for i, e in expected.items()
    ]
    assertDataFrameEqual(
        spark_documents(spark, docs, StringType()),
        spark.createDataFrame(rows, documents_schema(StringType())),
    )


# --- the pair table ------------------------------------------------------------------------------


def reference_pairs(rows: dict, *, threshold: float, k: int, max_exact_group: int) -> list[tuple]:
    """The pair table computed in pure Python from library sketches, comparing every pair.

    As documented in jobs/transforms.py::expand_groups: documents with the same normalized text form
    a group whose representative is its smallest id; a pair of representatives reaching
    the threshold stands for every pair of their members; a group of at most ``max_exact_group``
    members adds every pair of its members (exact duplicates, jaccard 1), a larger one only each
    member with its representative, and only its representative is paired with other documents.
    """
    groups: dict[tuple, list] = defaultdict(list)
    for doc_id, row in rows.items():
        if row["sketch"] is not None:
            groups[(row["text_hash"], row["n_words"])].append(doc_id)
    members = {min(g): sorted(g) for g in groups.values()}
    standing = {rep: (m if len(m) <= max_exact_group else [rep]) for rep, m in members.items()}

    def sk(doc_id) -> Sketch:
        return Sketch(
            tuple(rows[doc_id]["sketch"]), n_shingles=rows[doc_id]["n_shingles"], width=WIDTH, k=k
        )

    def shingles(doc_id) -> int:
        return rows[doc_id]["n_shingles"]

    out = []
    for ra, rb in itertools.combinations(sorted(members), 2):
        sa, sb = sk(ra), sk(rb)
        estimate = jaccard(sa, sb)
        if estimate < threshold:
            continue
        shared = matches(sa, sb)
        for ma, mb in itertools.product(standing[ra], standing[rb]):
            a, b = min(ma, mb), max(ma, mb)
            out.append((a, b, shared, estimate, shingles(a), shingles(b), False))
    for rep, m in members.items():
        exact = (
            itertools.combinations(m, 2) if len(m) <= max_exact_group else ((rep, x) for x in m[1:])
        )
        for a, b in exact:
            out.append((a, b, len(rows[a]["sketch"]), 1.0, shingles(a), shingles(b), True))
    return out


def spark_pairs(
    documents: DataFrame, *, threshold: float, k: int, max_exact_group: int
) -> DataFrame:
    pairs = documents.transform(
        near_duplicate_pairs,
        threshold=threshold,
        k=k,
        max_exact_group=max_exact_group,
        max_posting=DEFAULTS.pairs.max_posting,
    )
    return pairs.select(*PAIR_COLUMNS)


def pair_frame(spark: SparkSession, rows: list[tuple], id_type: str) -> DataFrame:
    schema = (
        f"{DOC_A} {id_type}, {DOC_B} {id_type}, {MATCHES} int, {JACCARD} double, "
        f"{SHINGLES_A} long, {SHINGLES_B} long, {EXACT} boolean"
    )
    return spark.createDataFrame(rows, schema)


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
        sample_corpus_rows(WIDTH, K), threshold=threshold, k=K, max_exact_group=max_exact_group
    )
    assert any(e[-1] for e in expected) and any(not e[-1] for e in expected)  # both kinds present
    got = spark_pairs(sample_documents, threshold=threshold, k=K, max_exact_group=max_exact_group)
    assertDataFrameEqual(got, pair_frame(spark, expected, "string"))


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
        expected = reference_pairs(rows, threshold=threshold, k=K, max_exact_group=max_exact_group)
        assert sum(1 for e in expected if not e[-1]) >= 20 and any(e[-1] for e in expected)
        got = spark_pairs(documents, threshold=threshold, k=K, max_exact_group=max_exact_group)
        assertDataFrameEqual(got, pair_frame(spark, expected, "bigint"))
