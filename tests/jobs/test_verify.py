"""Verification: exact Jaccard from the texts by the library's definitions, and its decisions."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from jobs.schemas import DOC_A, DOC_B, DOC_ID, EXACT, JACCARD, TEXT
from jobs.stages import candidate_id_bitmap
from jobs.summary import verification_summary
from jobs.verify import (
    EXACT_JACCARD,
    EXACT_SHARED,
    VERIFIED,
    decided_pairs,
    exact_overlap,
    exact_scores,
    id_bitmap_bits,
    id_position,
    in_bitmap,
    near_cut,
    with_texts,
)
from shingling.sketch import sketch

SAMPLE = "data/sample/corpus.parquet"


def shingle_set(text: str, width: int, unit: str = "words") -> set[int]:
    """Every shingle hash of a text, by the pure-Python library (a sketch with room for all)."""
    return set(sketch(text, width=width, k=10**9, unit=unit).hashes)


def library_jaccard(a: str, b: str, width: int, unit: str = "words") -> tuple[float, int]:
    """Exact Jaccard and shared count of two texts' shingle-hash sets, by the library."""
    sa, sb = shingle_set(a, width, unit), shingle_set(b, width, unit)
    return len(sa & sb) / len(sa | sb), len(sa & sb)


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    table = pq.read_table(SAMPLE, columns=[DOC_ID, TEXT])
    return dict(zip(table.column(DOC_ID).to_pylist(), table.column(TEXT).to_pylist(), strict=True))


@pytest.fixture(scope="module")
def text_pairs(texts: dict[str, str]) -> list[tuple[str, str]]:
    """Real pairs of every kind: the sample's neighbours in id order, plus edited copies."""
    ids = sorted(texts)[:120]
    pairs = [(a, b) for a, b in zip(ids, ids[1:], strict=False)]
    # an edited copy: a paragraph dropped, so the exact Jaccard lies strictly between 0 and 1
    pairs += [(a, a + "/edited") for a in ids[:20]]
    return pairs


def edited(text: str) -> str:
    paragraphs = text.split("\n\n")
    return (
        "\n\n".join(paragraphs[: max(1, len(paragraphs) - 1)]) + "\nExtra line for the edited copy."
    )


def lookup(texts: dict[str, str], doc: str) -> str:
    return edited(texts[doc.removesuffix("/edited")]) if doc.endswith("/edited") else texts[doc]


@pytest.mark.parametrize(
    ("width", "unit"), [(1, "words"), (4, "words"), (7, "words"), (5, "chars")]
)
def test_exact_jaccard_equals_the_library_on_real_text(
    texts: dict[str, str], text_pairs: list[tuple[str, str]], width: int, unit: str
) -> None:
    pairs = text_pairs if unit == "words" else text_pairs[::4]  # character sets are large in Python
    a = [lookup(texts, x) for x, _ in pairs]
    b = [lookup(texts, y) for _, y in pairs]
    overlap = exact_overlap(pa.array(a), pa.array(b), width=width, unit=unit)
    jaccard = overlap.jaccard
    expected = [library_jaccard(x, y, width, unit) for x, y in zip(a, b, strict=True)]
    assert jaccard.tolist() == pytest.approx([j for j, _ in expected], abs=1e-12)
    assert overlap.shared.tolist() == [s for _, s in expected]
    assert overlap.size_a.tolist() == [len(shingle_set(x, width, unit)) for x in a]
    assert any(0.0 < j < 1.0 for j in jaccard)  # the pairs are neither all equal nor all disjoint


def test_a_text_with_no_words_has_no_exact_jaccard() -> None:
    overlap = exact_overlap(
        pa.array(["...", "same words here"]), pa.array(["a b", "Same words, here!"]), width=4
    )
    assert overlap.jaccard[0] != overlap.jaccard[0] and overlap.jaccard[1] == 1.0  # NaN, then equal
    assert overlap.shared.tolist() == [0, 1]


def test_exact_scores_in_spark_match_the_library(
    spark: SparkSession, texts: dict[str, str], text_pairs: list[tuple[str, str]]
) -> None:
    docs = {d for pair in text_pairs for d in pair}
    corpus = spark.createDataFrame(
        [(d, lookup(texts, d)) for d in sorted(docs)], f"{DOC_ID} string, {TEXT} string"
    )
    pairs = spark.createDataFrame(
        [(a, b, 0.5) for a, b in text_pairs], f"{DOC_A} string, {DOC_B} string, {JACCARD} double"
    )
    scored = pairs.transform(with_texts, corpus).transform(exact_scores, width=4)
    rows = []
    for a, b in text_pairs:
        ta, tb = lookup(texts, a), lookup(texts, b)
        jaccard, shared = library_jaccard(ta, tb, 4)
        size_a, size_b = (len(shingle_set(t, 4)) for t in (ta, tb))
        rows.append((a, b, 0.5, jaccard, shared, shared / size_a, shared / size_b))
    expected = spark.createDataFrame(rows, scored.schema)
    assertDataFrameEqual(scored, expected, rtol=1e-12)


def pair_table(spark: SparkSession, rows: list[tuple]) -> DataFrame:
    return spark.createDataFrame(
        rows, f"{DOC_A} bigint, {DOC_B} bigint, {JACCARD} double, {EXACT} boolean"
    )


def test_only_pairs_near_the_cut_are_verified_and_never_exact_copies(spark: SparkSession) -> None:
    pairs = pair_table(
        spark,
        [
            (1, 2, 0.5, False),
            (1, 3, 0.6, False),
            (1, 4, 0.7, False),
            (1, 5, 0.75, False),
            (1, 6, 1.0, True),
            (2, 3, 0.65, True),
        ],
    )
    expected = pair_table(spark, [(1, 2, 0.5, False), (1, 3, 0.6, False), (1, 4, 0.7, False)])
    assertDataFrameEqual(near_cut(pairs, cut=0.6, margin=0.1), expected)
    assert near_cut(pairs, cut=0.6, margin=1.0).count() == 4  # margin 1.0: every estimated pair


def verified_table(spark: SparkSession, rows: list[tuple]) -> DataFrame:
    return spark.createDataFrame(
        [(*r, None, None) for r in rows],
        f"{DOC_A} bigint, {DOC_B} bigint, {JACCARD} double, {EXACT_JACCARD} double,"
        f" {EXACT_SHARED} bigint,"
        " exact_containment_a double, exact_containment_b double",
    )


def test_verified_pairs_are_decided_on_their_exact_jaccard(spark: SparkSession) -> None:
    pairs = pair_table(
        spark, [(1, 2, 0.55, False), (1, 3, 0.65, False), (1, 4, 0.9, False), (5, 6, 0.62, False)]
    )
    verified = verified_table(spark, [(1, 2, 0.55, 0.61, 30), (1, 3, 0.65, 0.41, 20)])
    expected = spark.createDataFrame(
        [(1, 2, 0.61, False, True), (1, 4, 0.9, False, False), (5, 6, 0.62, False, False)],
        f"{DOC_A} bigint, {DOC_B} bigint, {JACCARD} double, {EXACT} boolean, {VERIFIED} boolean",
    )
    assertDataFrameEqual(decided_pairs(pairs, verified, cut=0.6), expected)
    without = decided_pairs(pairs, None, cut=0.6)
    assert sorted((r[DOC_A], r[DOC_B], r[VERIFIED]) for r in without.collect()) == [
        (1, 3, False),
        (1, 4, False),
        (5, 6, False),
    ]


def test_the_summary_counts_flipped_decisions_and_errors(spark: SparkSession) -> None:
    rows = [
        (1, 2, 0.55, 0.61, 1),
        (1, 3, 0.65, 0.41, 1),
        (1, 4, 0.7, 0.66, 1),
        (1, 5, 0.6, None, 0),
    ]
    summary = verification_summary(verified_table(spark, rows), cut=0.6)
    errors = [0.55 - 0.61, 0.65 - 0.41, 0.7 - 0.66]
    assert summary["pairs_verified"] == 3
    assert summary["dropped_estimate_above_cut"] == 1
    assert summary["added_estimate_below_cut"] == 1
    assert summary["abs_error"]["max"] == round(max(map(abs, errors)), 4)
    assert summary["abs_error"]["mean"] == round(sum(map(abs, errors)) / 3, 4)
    assert summary["error_mean"] == round(sum(errors) / 3, 4)
    assert summary["off_by_more_than"] == {"0.05": 2, "0.1": 1, "0.2": 1}


@pytest.mark.parametrize("id_type", ["long", "string"])
def test_the_candidate_id_bitmap_holds_every_candidate_and_filters_the_rest(
    spark: SparkSession, id_type: str
) -> None:
    # the texts verification shuffles: every candidate's, and of the others about as many as the
    # bitmap's fill lets through
    ids = [i * 7919 for i in range(3000)]
    value = (lambda i: i) if id_type == "long" else (lambda i: f"doc-{i}")
    candidates = spark.createDataFrame(
        [(value(a), value(b)) for a, b in zip(ids[:200], ids[1:201], strict=True)],
        f"{DOC_A} {id_type}, {DOC_B} {id_type}",
    )
    bits = id_bitmap_bits(len(ids))
    bitmap = candidate_id_bitmap(candidates, bits=bits)
    assert len(bitmap) == bits // 8
    texts = spark.createDataFrame(
        [(value(i), "t") for i in ids], f"{DOC_ID} {id_type}, {TEXT} string"
    )
    # the bits set are exactly the candidates' positions, as Spark computes them
    positions = {
        r[0]
        for r in texts.where(F.col(DOC_ID).isin([value(i) for i in ids[:201]]))
        .select(id_position(F.col(DOC_ID), bits))
        .collect()
    }
    set_bits = {8 * i + b for i, byte in enumerate(bitmap) for b in range(8) if byte >> b & 1}
    assert set_bits == positions
    shared = spark.sparkContext.broadcast(bitmap)
    kept = {r[0] for r in texts.where(in_bitmap(shared, bits)(F.col(DOC_ID))).collect()}
    assert {value(i) for i in ids[:201]} <= kept
    assert len(kept) < 201 + 0.05 * len(ids)  # a filter: few of the others pass


def test_the_candidate_id_bitmap_holds_both_ids_when_a_recomputation_turns_the_rows(
    spark: SparkSession, tmp_path
) -> None:
    # on a cluster, two executors may each compute a partition of the cached candidates, and a
    # pair kept from either side (the nightly's pairs within the batch) may come out turned: the
    # bitmap must hold both ids of each row however often the candidates are computed. Here each
    # computation of the one partition turns every row the other way (a counter in a file, shared
    # by the Python workers)
    counter = tmp_path / "computations"
    counter.write_text("0")
    pairs = [(f"doc-{i}", f"doc-{i + 1000}") for i in range(50)]

    def turned(batches):
        n = int(counter.read_text())
        counter.write_text(str(n + 1))
        for batch in batches:
            a, b = batch.column(DOC_A), batch.column(DOC_B)
            yield pa.RecordBatch.from_arrays([b, a] if n % 2 else [a, b], [DOC_A, DOC_B])

    schema = f"{DOC_A} string, {DOC_B} string"
    candidates = spark.createDataFrame(pairs, schema).coalesce(1).mapInArrow(turned, schema)
    bits = id_bitmap_bits(100)
    bitmap = candidate_id_bitmap(candidates, bits=bits)
    texts = spark.createDataFrame(
        [(i, "t") for p in pairs for i in p], f"{DOC_ID} string, {TEXT} string"
    )
    shared = spark.sparkContext.broadcast(bitmap)
    kept = {r[0] for r in texts.where(in_bitmap(shared, bits)(F.col(DOC_ID))).collect()}
    assert kept == {i for p in pairs for i in p}
    assert int(counter.read_text()) >= 1
