"""shingling.spark.transforms: the pure DataFrame steps of the pair stage, on literal frames and real text."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType
from pyspark.testing import assertDataFrameEqual
from testdata import sample_corpus

from shingling.estimators import jaccard, matches
from shingling.fast.frequency import FrequencySketch
from shingling.fast.postings import FREQUENCY
from shingling.schema import (
    A_IN_B,
    B_IN_A,
    CONTAINMENT_A,
    CONTAINMENT_B,
    DOC_A,
    DOC_B,
    DOC_ID,
    EXACT,
    JACCARD,
    JACCARD_ESTIMATE,
    MATCHES,
    N_SHINGLES,
    NEAR_DUPLICATE,
    RELATION,
    SHINGLES_A,
    SHINGLES_B,
    SKETCH,
    SKIP_DUPLICATE_ID,
    SKIP_REASON,
    TEXT,
)
from shingling.sketch import Sketch
from shingling.spark.schemas import documents_schema
from shingling.spark.stages import (
    PairMetrics,
    hash_frequencies,
    near_duplicate_pairs,
    share_frequencies,
)
from shingling.spark.transforms import (
    GROUP,
    GROUP_SIZE,
    HASH,
    REPEATED_ID,
    CappedDocuments,
    copy_groups,
    exact_groups,
    expand_groups,
    prefix_rows,
    representatives,
    score_pairs,
    scored_prefix_pairs,
    sketch_documents,
    sketched_only,
    skip_repeated_ids,
    with_frequencies,
)

K = 20


def documents(spark: SparkSession, rows: list[tuple]) -> DataFrame:
    """A documents table of sketched (doc_id, n_words, n_shingles, sketch, text_hash) rows."""
    return spark.createDataFrame([(*r, None, None) for r in rows], documents_schema(StringType()))


@pytest.fixture(scope="module")
def sample_reps(spark: SparkSession) -> DataFrame:
    """The representatives of the sample corpus' exact-duplicate groups, bottom-k part."""
    corpus = spark.createDataFrame(list(sample_corpus()), f"{DOC_ID} string, {TEXT} string")
    docs = corpus.transform(sketch_documents, width=4, k=K)
    reps = docs.transform(sketched_only).transform(exact_groups).transform(representatives)
    return reps.withColumn(SKETCH, F.slice(SKETCH, 1, K)).cache()


def test_skip_repeated_ids_equals_flagging_the_rows_before_sketching(spark: SparkSession) -> None:
    # real text; four ids repeated, one of them with a null text and one with no words in a row
    rows = list(sample_corpus()[:40])
    rows += [(rows[3][0], rows[7][1]), (rows[3][0], rows[9][1]), (rows[5][0], None)]
    rows += [
        (rows[11][0], " ... "),
        (None, rows[12][1]),
        (None, rows[13][1]),
        (rows[20][0], rows[20][1]),
    ]
    counts: dict[str | None, int] = {}
    for doc_id, _ in rows:
        counts[doc_id] = counts.get(doc_id, 0) + 1
    corpus = spark.createDataFrame(rows, f"{DOC_ID} string, {TEXT} string")
    flags = spark.createDataFrame(
        [(d, t, d is not None and counts[d] > 1) for d, t in rows],
        f"{DOC_ID} string, {TEXT} string, {REPEATED_ID} boolean",
    )
    after = corpus.transform(sketch_documents, width=4, k=K).transform(skip_repeated_ids)
    before = flags.transform(sketch_documents, width=4, k=K)
    assert after.schema == before.schema
    assertDataFrameEqual(after, before)
    skipped = after.where(F.col(SKIP_REASON) == SKIP_DUPLICATE_ID).count()
    assert skipped == sum(n for d, n in counts.items() if d is not None and n > 1) == 9


@pytest.mark.parametrize("how", ["window", "broadcast copies", "joined copies"])
def test_exact_groups_are_same_text_hash_and_word_count(spark: SparkSession, how: str) -> None:
    docs = documents(
        spark,
        [
            ("b", 3, 1, [5], 100),
            ("a", 3, 1, [5], 100),
            ("c", 3, 1, [5], 100),
            ("d", 4, 1, [6], 100),  # same text hash, other word count: another text
            ("e", 2, 1, [7], 200),
        ],
    )
    copies = None if how == "window" else copy_groups(docs)
    if how == "broadcast copies":
        copies = F.broadcast(copies)
    grouped = exact_groups(docs, copies)
    assert grouped.columns == exact_groups(docs).columns
    assert grouped.schema == exact_groups(docs).schema
    got = grouped.select(DOC_ID, GROUP, GROUP_SIZE)
    expected = spark.createDataFrame(
        [("a", "a", 3), ("b", "a", 3), ("c", "a", 3), ("d", "d", 1), ("e", "e", 1)],
        f"{DOC_ID} string, {GROUP} string, {GROUP_SIZE} long",
    )
    assertDataFrameEqual(got, expected, checkRowOrder=False)
    reps = grouped.transform(representatives).select(DOC_ID)
    assertDataFrameEqual(reps, spark.createDataFrame([("a",), ("d",), ("e",)], f"{DOC_ID} string"))


def pairs_sharing_a_hash(rows: DataFrame) -> DataFrame:
    """(doc_id, hash) -> distinct (doc_a, doc_b), doc_a < doc_b: the documents sharing a hash."""
    a = rows.select(F.col(DOC_ID).alias(DOC_A), HASH)
    b = rows.select(F.col(DOC_ID).alias(DOC_B), HASH)
    return a.join(b, HASH).where(F.col(DOC_A) < F.col(DOC_B)).select(DOC_A, DOC_B).distinct()


def naive_candidates(reps: DataFrame) -> DataFrame:
    """Every pair of representatives sharing any sketch hash: the join prefix filtering avoids."""
    return pairs_sharing_a_hash(reps.select(DOC_ID, F.explode(SKETCH).alias(HASH)))


def test_scored_prefix_pairs_star_a_hot_posting_and_count_it(spark: SparkSession) -> None:
    # hash 1 is in 4 prefixes, over max_posting = 3: its documents pair with the smallest only
    rows = [("p", 1), ("q", 1), ("r", 1), ("s", 1), ("r", 2), ("s", 2)]
    prefixes = spark.createDataFrame(
        [(h, d, 2, [1, 2]) for d, h in rows],
        f"{HASH} long, {DOC_ID} string, {N_SHINGLES} long, {SKETCH} array<bigint>",
    )
    capped = CappedDocuments()
    scored = scored_prefix_pairs(prefixes, k=K, threshold=0.6, max_posting=3, capped=capped)
    expected = spark.createDataFrame(
        [("p", "q"), ("p", "r"), ("p", "s"), ("r", "s")], f"{DOC_A} string, {DOC_B} string"
    )
    assertDataFrameEqual(scored.select(DOC_A, DOC_B), expected)
    assert capped.count() == 4  # the star's centre p and its members q, r, s


def test_scored_prefix_pairs_equal_the_sql_scores_of_every_candidate(
    spark: SparkSession, sample_reps: DataFrame
) -> None:
    # with a containment threshold nothing is dropped unscored: every pair sharing a prefix hash,
    # once (in the posting of the first prefix hash it shares), scored by the compiled loop as
    # score_pairs scores it in Spark SQL; those with a relation leave the Python workers
    frequencies = hash_frequencies(sample_reps, k=K, sketch=FrequencySketch(1 << 16))
    prefixes = prefix_rows(
        sample_reps, threshold=0.3, k=K, frequencies=share_frequencies(spark, frequencies)
    )
    scoring = {"k": K, "threshold": 0.6, "containment_threshold": 0.5}
    got = scored_prefix_pairs(prefixes, **scoring)
    shared = prefixes.alias("a").join(prefixes.alias("b"), HASH)
    met = shared.where(F.col(f"a.{DOC_ID}") < F.col(f"b.{DOC_ID}")).select(
        F.col(f"a.{DOC_ID}").alias(DOC_A), F.col(f"b.{DOC_ID}").alias(DOC_B)
    )
    once = met.distinct()
    assert met.count() > 2 * once.count()  # most pairs meet in several postings
    expected = score_pairs(once, sample_reps, **scoring)
    related = expected.where(F.col(RELATION).isNotNull())
    assert 10 <= related.count() < expected.count()
    assertDataFrameEqual(got, related)


@pytest.mark.parametrize(("threshold", "width"), [(0.3, 1 << 16), (0.9, 1 << 16), (0.6, 100)])
def test_prefix_filtering_loses_no_pair_on_the_sample_corpus(
    spark: SparkSession, sample_reps: DataFrame, threshold: float, width: int
) -> None:
    # width 100: 100 counters a row for the sample's thousands of hashes, every estimate wrong
    def passing(candidates: DataFrame) -> DataFrame:
        scored = score_pairs(candidates, sample_reps, k=K, threshold=threshold)
        return scored.where(F.col(JACCARD) >= threshold).select(DOC_A, DOC_B, MATCHES, JACCARD)

    frequencies = hash_frequencies(sample_reps, k=K, sketch=FrequencySketch(width))
    prefixes = prefix_rows(
        sample_reps, threshold=threshold, k=K, frequencies=share_frequencies(spark, frequencies)
    )
    found = scored_prefix_pairs(prefixes, k=K, threshold=threshold)
    expected = passing(naive_candidates(sample_reps))
    assert expected.count() >= 10
    got = found.where(F.col(JACCARD) >= threshold).select(DOC_A, DOC_B, MATCHES, JACCARD)
    assertDataFrameEqual(got.distinct(), expected)
    # and it is a filter: fewer candidates than the naive join
    assert pairs_sharing_a_hash(prefixes).count() < naive_candidates(sample_reps).count()


def test_score_pairs_equals_the_library_estimators(
    spark: SparkSession, sample_reps: DataFrame
) -> None:
    scored = score_pairs(naive_candidates(sample_reps), sample_reps, k=K, threshold=0.6).collect()
    sketches = {
        r[DOC_ID]: Sketch(tuple(r[SKETCH]), n_shingles=r[N_SHINGLES], width=4, k=K)
        for r in sample_reps.collect()
    }
    assert len(scored) > 1000
    for row in scored:
        a, b = sketches[row[DOC_A]], sketches[row[DOC_B]]
        assert row[MATCHES] == matches(a, b)
        assert row[JACCARD] == jaccard(a, b)
        assert (row[SHINGLES_A], row[SHINGLES_B]) == (a.n_shingles, b.n_shingles)
        assert row[RELATION] == (NEAR_DUPLICATE if jaccard(a, b) >= 0.6 else None)


def test_score_pairs_of_short_documents(spark: SparkSession) -> None:
    reps = spark.createDataFrame(
        [("a", 3, [1, 2, 3]), ("b", 3, [2, 3, 4]), ("c", 30, list(range(-5, 15)))],
        f"{DOC_ID} string, {N_SHINGLES} long, {SKETCH} array<bigint>",
    )
    pairs = spark.createDataFrame([("a", "b"), ("a", "c")], f"{DOC_A} string, {DOC_B} string")
    got = {
        (r[DOC_A], r[DOC_B]): (r[MATCHES], r[JACCARD])
        for r in score_pairs(pairs, reps, k=K).collect()
    }
    sk = {
        "a": Sketch((1, 2, 3), 3, 4, K),
        "b": Sketch((2, 3, 4), 3, 4, K),
        "c": Sketch(tuple(range(-5, 15)), 30, 4, K),
    }
    assert got == {
        ("a", "b"): (2, jaccard(sk["a"], sk["b"])),
        ("a", "c"): (3, jaccard(sk["a"], sk["c"])),
    }
    assert got[("a", "b")][1] == 0.5  # two whole sets: exactly |{2, 3}| / |{1, 2, 3, 4}|


def test_score_pairs_of_two_whole_sets_is_exact(spark: SparkSession) -> None:
    # k = 3: both sketches hold every hash of their documents, the union has 4
    reps = spark.createDataFrame(
        [("a", 3, [1, 2, 3]), ("b", 3, [2, 3, 4])],
        f"{DOC_ID} string, {N_SHINGLES} long, {SKETCH} array<bigint>",
    )
    pairs = spark.createDataFrame([("a", "b")], f"{DOC_A} string, {DOC_B} string")
    assert score_pairs(pairs, reps, k=3).first()[JACCARD] == 0.5  # |{2, 3}| / |{1, 2, 3, 4}|


# --- expand_groups --------------------------------------------------------------------------------

GROUPED = (
    f"{DOC_ID} string, {N_SHINGLES} long, {SKETCH} array<bigint>, {GROUP} string, {GROUP_SIZE} long"
)
PAIRS = (
    f"{DOC_A} string, {DOC_B} string, {MATCHES} int, {JACCARD} double, {CONTAINMENT_A} double, "
    f"{CONTAINMENT_B} double, {SHINGLES_A} long, {SHINGLES_B} long, {RELATION} string"
)
OUT = PAIRS.replace(f", {RELATION} string", f", {EXACT} boolean, {RELATION} string")


def grouped_frame(spark: SparkSession) -> DataFrame:
    # group "a": a, c, e (same text); group "b": b, d; group "f": f alone
    rows = [
        ("a", 10, [1, 2], "a", 3),
        ("c", 10, [1, 2], "a", 3),
        ("e", 10, [1, 2], "a", 3),
        ("b", 12, [1, 3], "b", 2),
        ("d", 12, [1, 3], "b", 2),
        ("f", 7, [9], "f", 1),
    ]
    return spark.createDataFrame(rows, GROUPED)


def rep_pairs(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(
        [
            ("a", "b", 1, 0.7, 0.6, 0.5, 10, 12, A_IN_B),
            ("b", "f", 0, 0.65, 0.1, 0.2, 12, 7, NEAR_DUPLICATE),
        ],
        PAIRS,
    )


def test_expand_groups_below_max_exact_group_pairs_every_member(spark: SparkSession) -> None:
    got = expand_groups(rep_pairs(spark), grouped_frame(spark), max_exact_group=3)
    near = [
        # members of a x members of b; c > b swaps the sides, and the relation with them
        ("a", "b", 1, 0.7, 0.6, 0.5, 10, 12, False, A_IN_B),
        ("a", "d", 1, 0.7, 0.6, 0.5, 10, 12, False, A_IN_B),
        ("b", "c", 1, 0.7, 0.5, 0.6, 12, 10, False, B_IN_A),
        ("c", "d", 1, 0.7, 0.6, 0.5, 10, 12, False, A_IN_B),
        ("b", "e", 1, 0.7, 0.5, 0.6, 12, 10, False, B_IN_A),
        ("d", "e", 1, 0.7, 0.5, 0.6, 12, 10, False, B_IN_A),
        ("b", "f", 0, 0.65, 0.1, 0.2, 12, 7, False, NEAR_DUPLICATE),
        ("d", "f", 0, 0.65, 0.1, 0.2, 12, 7, False, NEAR_DUPLICATE),
    ]
    exact = [
        (x, y, 2, 1.0, 1.0, 1.0, n, n, True, NEAR_DUPLICATE)
        for x, y, n in [("a", "c", 10), ("a", "e", 10), ("c", "e", 10), ("b", "d", 12)]
    ]
    # pairs decided on their estimates: the estimate column repeats jaccard
    assert got.where(F.col(JACCARD_ESTIMATE) != F.col(JACCARD)).count() == 0
    assertDataFrameEqual(got.drop(JACCARD_ESTIMATE), spark.createDataFrame(near + exact, OUT))


def test_expand_groups_above_max_exact_group_pairs_members_with_their_representative(
    spark: SparkSession,
) -> None:
    # group a (3 members) is over max_exact_group = 2: only a stands for it; b (2) is not
    got = expand_groups(rep_pairs(spark), grouped_frame(spark), max_exact_group=2)
    near = [
        ("a", "b", 1, 0.7, 0.6, 0.5, 10, 12, False, A_IN_B),
        ("a", "d", 1, 0.7, 0.6, 0.5, 10, 12, False, A_IN_B),
        ("b", "f", 0, 0.65, 0.1, 0.2, 12, 7, False, NEAR_DUPLICATE),
        ("d", "f", 0, 0.65, 0.1, 0.2, 12, 7, False, NEAR_DUPLICATE),
    ]
    exact = [
        (x, y, 2, 1.0, 1.0, 1.0, n, n, True, NEAR_DUPLICATE)
        for x, y, n in [("a", "c", 10), ("a", "e", 10), ("b", "d", 12)]
    ]
    # pairs decided on their estimates: the estimate column repeats jaccard
    assert got.where(F.col(JACCARD_ESTIMATE) != F.col(JACCARD)).count() == 0
    assertDataFrameEqual(got.drop(JACCARD_ESTIMATE), spark.createDataFrame(near + exact, OUT))


# --- capped postings ------------------------------------------------------------------------------


def test_a_capped_run_scores_its_star_pairs_and_counts_them(spark: SparkSession) -> None:
    corpus = spark.createDataFrame(list(sample_corpus()), f"{DOC_ID} string, {TEXT} string")
    docs = corpus.transform(sketch_documents, width=4, k=K).cache()
    uncapped = near_duplicate_pairs(docs, threshold=0.6, k=K, max_exact_group=100)
    metrics = PairMetrics()
    capped = near_duplicate_pairs(
        docs, threshold=0.6, k=K, max_exact_group=100, max_posting=2, metrics=metrics
    )
    got = capped.where(~F.col(EXACT)).collect()
    assert metrics.as_dict()["capped_documents"] > 0
    # every pair a capped run reports is right: scored from the right sketches, in the full result
    sketches = {
        r[DOC_ID]: Sketch(tuple(r[SKETCH]), n_shingles=r[N_SHINGLES], width=4, k=K)
        for r in docs.collect()
    }
    for row in got:
        a, b = sketches[row[DOC_A]], sketches[row[DOC_B]]
        assert (row[MATCHES], row[JACCARD]) == (matches(a, b), jaccard(a, b))
        assert (row[SHINGLES_A], row[SHINGLES_B]) == (a.n_shingles, b.n_shingles)
    full = {(r[DOC_A], r[DOC_B]) for r in uncapped.collect()}
    assert {(r[DOC_A], r[DOC_B]) for r in got} <= full
    assert len(got) >= 10


def test_with_frequencies_counts_the_sketches_holding_each_hash(
    spark: SparkSession, sample_reps: DataFrame
) -> None:
    sketches = {r[DOC_ID]: list(r[SKETCH]) for r in sample_reps.collect()}
    counts = Counter(h for s in sketches.values() for h in s)
    assert max(counts.values()) > 2  # hashes shared by several sketches
    got = sample_reps.transform(with_frequencies, k=K).collect()
    assert {r[DOC_ID]: list(r[SKETCH]) for r in got} == sketches  # each in its order
    for r in got:
        assert list(r[FREQUENCY]) == [counts[h] for h in r[SKETCH]]


@pytest.mark.parametrize("threshold", [0.3, 0.8])
def test_prefix_rows_by_counted_frequencies_are_those_of_an_exact_table(
    spark: SparkSession, sample_reps: DataFrame, threshold: float
) -> None:
    # a table wide enough that every estimate is the count (checked): both orders are one
    table = hash_frequencies(sample_reps, k=K, sketch=FrequencySketch(1 << 22))
    counts = Counter(h for r in sample_reps.collect() for h in r[SKETCH])
    hashes = np.array(sorted(counts), dtype=np.int64)
    assert table.estimate(hashes).tolist() == [counts[h] for h in hashes.tolist()]
    counted = prefix_rows(sample_reps, threshold=threshold, k=K, frequencies=None)
    estimated = prefix_rows(
        sample_reps, threshold=threshold, k=K, frequencies=share_frequencies(spark, table)
    )
    assert counted.count() > 0
    assertDataFrameEqual(counted, estimated)
