"""Verification: exact Jaccard from the texts by the library's definitions, and its decisions."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from shingling.schema import DOC_A, DOC_B, DOC_ID, TEXT
from shingling.sketch import sketch
from shingling.spark.stages import candidate_id_bitmap
from shingling.spark.verify import (
    exact_overlap,
    id_bitmap_bits,
    id_position,
    in_bitmap,
)

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
    ids = sorted(texts)[:60]
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
    # (4 words, the default, on the sample's neighbours: tests/shingling/test_exact.py)
    ("width", "unit"),
    [(1, "words"), (7, "words"), (5, "chars")],
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


def test_a_text_with_no_words_has_the_library_s_jaccard_of_an_empty_set() -> None:
    overlap = exact_overlap(
        pa.array(["...", "same words here"]), pa.array(["a b", "Same words, here!"]), width=4
    )
    assert overlap.jaccard.tolist() == [0.0, 1.0]  # the library's 0.0 for an empty set, then equal
    assert overlap.shared.tolist() == [0, 1]


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
