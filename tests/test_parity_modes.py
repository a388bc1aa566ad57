"""Every mode of the job agrees with the library: words or chars, bottom-k or mod-m sketches.

The Spark path (shingling.spark.transforms.sketch_documents) must give the library's sketch() bit for bit in
every mode, and the pair table in containment mode must be the one computed in pure Python from
library sketches with shingling.estimators, comparing every pair.
"""

from __future__ import annotations

import random
from pathlib import Path

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
from pyspark.sql import SparkSession
from pyspark.sql.types import LongType, StringType
from pyspark.testing import assertDataFrameEqual
from testdata import DOCUMENT, library_row, licence_texts, licence_words, light_edits, sample_corpus

from shingling.schema import A_IN_B, B_IN_A, NEAR_DUPLICATE
from shingling.spark.schemas import pairs_schema

THRESHOLD, CONTAINMENT = DEFAULTS.pairs.threshold, DEFAULTS.pairs.containment_threshold
CJK_SAMPLES = Path(__file__).resolve().parent / "data" / "cjk"  # CPython's, bundled: README there
# (unit, width, sample_mod): both units, with and without the mod-m sample
MODES = [("words", WIDTH, 0), ("words", WIDTH, 8), ("chars", 5, 0), ("chars", 5, 8)]


# --- sketches ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("unit", "width", "m"), MODES)
def test_spark_sketches_equal_library_sketches_on_random_unicode(
    spark: SparkSession, unit: str, width: int, m: int
) -> None:
    docs = [(f"doc-{i}", t) for i, t in enumerate(random_texts(random.Random(width + m), 300))]
    mode = {"width": width, "k": K, "unit": unit, "sample_mod": m}
    assertDataFrameEqual(
        spark_documents(spark, docs, StringType(), **mode),
        expected_documents(spark, docs, StringType(), **mode),
    )


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.lists(DOCUMENT, min_size=1, max_size=60),
    st.sampled_from(["words", "chars"]),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=1, max_value=30),
    st.sampled_from([0, 1, 2, 5]),
)
def test_spark_sketches_equal_library_sketches_on_hypothesis_texts(
    spark: SparkSession, texts: list[str | None], unit: str, width: int, k: int, m: int
) -> None:
    docs = [(None if i % 13 == 12 else i, t) for i, t in enumerate(texts)]
    mode = {"width": width, "k": k, "unit": unit, "sample_mod": m}
    assertDataFrameEqual(
        spark_documents(spark, docs, LongType(), **mode),
        expected_documents(spark, docs, LongType(), **mode),
    )


def real_documents() -> list[tuple[str, str]]:
    """Every eighth document of the sample corpus, and each line of CPython's CJK codec samples."""
    docs = list(sample_corpus())[::8]
    for path in sorted(CJK_SAMPLES.glob("*-utf8.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        docs += [(f"{path.stem}-{i}", line) for i, line in enumerate(lines)]
    return docs


@pytest.mark.parametrize(("unit", "width", "m"), MODES[1:])  # test_parity.py checks the default
def test_spark_sketches_equal_library_sketches_on_real_text(
    spark: SparkSession, unit: str, width: int, m: int
) -> None:
    docs = real_documents()
    assert any("-utf8-" in doc_id for doc_id, _ in docs)
    mode = {"width": width, "k": K, "unit": unit, "sample_mod": m}
    assertDataFrameEqual(
        spark_documents(spark, docs, StringType(), **mode),
        expected_documents(spark, docs, StringType(), **mode),
    )


# --- the pair table in containment mode ----------------------------------------------------------


def excerpt_corpus(seed: int = 3) -> list[tuple[int, str]]:
    """The machine's licences, plus planted excerpts of them and exact copies.

    Excerpts are passages of 30 to 800 words with 0-5% of their words edited, standing alone,
    wrapped in up to as many words of another licence, or lifted into another licence (a host).
    Some documents get exact copies (case and punctuation changed), so that exact groups meet
    excerpts. Ids are integers in shuffled order, so doc_a is the excerpt as often as the source.
    """
    rng = random.Random(seed)
    sources = {
        name: text.split() for name, text in licence_texts().items() if len(text.split()) > 900
    }
    vocabulary = list(licence_words())
    texts = [" ".join(t) for t in sources.values()]
    names = sorted(sources)
    for i in range(45):
        source, other = (sources[n] for n in rng.sample(names, 2))
        length = rng.choice([30, 80, 150, 300, 800])
        start = rng.randrange(len(source) - length)
        passage = light_edits(source[start : start + length], rng.uniform(0, 0.05), vocabulary, rng)
        kind = i % 3
        if kind == 0:  # standing alone
            texts.append(" ".join(passage))
        elif kind == 1:  # wrapped in other text
            extra = rng.randrange(0, length + 1)
            cut = rng.randrange(len(other) - extra)
            texts.append(
                " ".join(
                    other[cut : cut + extra // 2] + passage + other[cut + extra // 2 : cut + extra]
                )
            )
        else:  # lifted into a host, and kept standing alone too
            at = rng.randrange(len(other))
            texts.append(" ".join(other[:at] + passage + other[at:]))
            texts.append(" ".join(passage))
    for text in rng.sample(texts, 12):
        texts.append(text.upper() + " !!")
    texts += [texts[-1].lower(), "« " + texts[-1] + " »"]  # a group of four: larger than 2
    ids = rng.sample(range(1_000, 9_999), len(texts))
    return list(zip(ids, texts, strict=True))


@pytest.fixture(scope="module")
def planted() -> list[tuple[int, str]]:
    return excerpt_corpus()


@pytest.mark.parametrize(
    ("unit", "width", "m", "max_exact_group", "max_words"),
    [("words", WIDTH, 8, 2, None), ("chars", 7, 16, 100, 400)],
)
def test_containment_pair_table_equals_pure_python_pairs_on_planted_excerpts(
    spark: SparkSession,
    planted: list[tuple[int, str]],
    unit: str,
    width: int,
    m: int,
    max_exact_group: int,
    max_words: int | None,
) -> None:
    docs = [(i, t) for i, t in planted if max_words is None or len(t.split()) <= max_words]
    mode = {"width": width, "k": K, "unit": unit, "sample_mod": m}
    rows = {doc_id: library_row(text, width, K, unit, m) for doc_id, text in docs}
    expected = reference_pairs(
        rows,
        threshold=THRESHOLD,
        containment_threshold=CONTAINMENT,
        max_exact_group=max_exact_group,
        **mode,
    )
    relations = {e[-1] for e in expected if not e[-2]}
    assert relations == {NEAR_DUPLICATE, A_IN_B, B_IN_A}, relations  # every kind is exercised
    assert any(e[-2] for e in expected)  # and exact duplicates
    got = spark_pairs(
        spark_documents(spark, docs, LongType(), **mode),
        threshold=THRESHOLD,
        containment_threshold=CONTAINMENT,
        max_exact_group=max_exact_group,
    )
    assertDataFrameEqual(got, spark.createDataFrame(expected, pairs_schema(LongType())))


def test_resemblance_pairs_are_the_same_in_both_modes(
    spark: SparkSession, planted: list[tuple[int, str]]
) -> None:
    # the near_duplicate rows of a containment run are the default run's pairs, column for column
    # but the containment estimates (which use the mod-m sample)
    columns = [
        "doc_a",
        "doc_b",
        "matches",
        "jaccard",
        "shingles_a",
        "shingles_b",
        "exact_duplicate",
    ]
    default_run = spark_pairs(
        spark_documents(spark, planted, LongType()), threshold=THRESHOLD, max_exact_group=100
    ).cache()
    containment_run = spark_pairs(
        spark_documents(spark, planted, LongType(), sample_mod=16),
        threshold=THRESHOLD,
        containment_threshold=CONTAINMENT,
        max_exact_group=100,
    )
    assert default_run.where(f"relation != '{NEAR_DUPLICATE}'").count() == 0
    assertDataFrameEqual(
        containment_run.where(f"relation = '{NEAR_DUPLICATE}'").select(*columns),
        default_run.select(*columns),
    )


def test_verified_containment_pair_table_equals_library_exact_pairs(
    spark: SparkSession, planted: list[tuple[int, str]]
) -> None:
    # containment mode with verification (the job's default): candidates from the estimates less
    # the margin, then every pair decided on its exact Jaccard and containments from the texts
    mode = {"width": WIDTH, "k": K, "unit": "words", "sample_mod": 8}
    rows = {doc_id: library_row(text, WIDTH, K, "words", 8) for doc_id, text in planted}
    margin = DEFAULTS.pairs.candidate_margin
    expected = reference_pairs(
        rows,
        threshold=THRESHOLD,
        containment_threshold=CONTAINMENT,
        max_exact_group=2,
        texts=dict(planted),
        margin=margin,
        **mode,
    )
    relations = {e[-1] for e in expected if not e[-2]}
    assert {A_IN_B, B_IN_A} <= relations, relations  # excerpts decided on exact containments
    assert all(max(e[5], e[6]) >= CONTAINMENT or e[3] >= THRESHOLD for e in expected)
    got = spark_pairs(
        spark_documents(spark, planted, LongType(), **mode),
        threshold=THRESHOLD,
        containment_threshold=CONTAINMENT,
        max_exact_group=2,
        texts=spark.createDataFrame(planted, "doc_id long, text string"),
        margin=margin,
    )
    assertDataFrameEqual(got, spark.createDataFrame(expected, pairs_schema(LongType())))
