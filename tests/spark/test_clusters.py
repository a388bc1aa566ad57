"""Connected components: chains, stars, cliques, many components, against a union-find reference."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from shingling.decision import Link
from shingling.decision import components as reference
from shingling.schema import DOC_A, DOC_B, DOC_ID, JACCARD
from shingling.spark.connected_components import (
    CLUSTER_ID,
    CLUSTER_SIZE,
    NotConvergedError,
    connected_components,
    figures_in_one_task,
    is_star_forest,
    large_star,
    oriented_edges,
    small_star,
)


def reference_components(pairs: list[tuple]) -> list[tuple]:
    """(doc_id, cluster_id, cluster_size) by the library's union-find (shingling.decision)."""
    roots = reference([Link(a, b, 1.0) for a, b in pairs])
    sizes = Counter(roots.values())
    return [(x, r, sizes[r]) for x, r in roots.items()]


def pair_frame(spark: SparkSession, pairs: list[tuple], id_type: str = "bigint") -> DataFrame:
    rows = [(min(a, b), max(a, b), 1.0) for a, b in pairs]
    return spark.createDataFrame(rows, f"{DOC_A} {id_type}, {DOC_B} {id_type}, {JACCARD} double")


def components(
    spark: SparkSession, pairs: list[tuple], id_type: str = "bigint", max_rounds: int = 30
) -> DataFrame:
    return connected_components(pair_frame(spark, pairs, id_type), max_rounds=max_rounds).clusters


def expected(spark: SparkSession, pairs: list[tuple], id_type: str = "bigint") -> DataFrame:
    return spark.createDataFrame(
        reference_components(pairs),
        f"{DOC_ID} {id_type}, {CLUSTER_ID} {id_type}, {CLUSTER_SIZE} bigint",
    )


def test_chains_stars_cliques_and_noise_match_union_find(spark: SparkSession) -> None:
    rng = random.Random(7)
    ids = list(range(1000, 1300))
    rng.shuffle(ids)  # a chain whose ids zigzag, the hard case for star steps
    chain = list(zip(ids, ids[1:], strict=False))
    star = [(50, leaf) for leaf in (3, 70, 99, 51, 60)]
    clique = [(a, b) for a in range(10, 16) for b in range(a + 1, 16)]
    scattered = [tuple(rng.sample(range(200, 500), 2)) for _ in range(150)]
    graph = chain + star + clique + scattered
    # the same pairs again, reversed, with other scores: a set of pairs, whatever their order
    noisy = spark.createDataFrame(
        [(a, b, 1.0) for a, b in graph] + [(b, a, 0.7) for a, b in graph[::3]],
        f"{DOC_A} bigint, {DOC_B} bigint, {JACCARD} double",
    )
    result = connected_components(noisy, max_rounds=30)
    assertDataFrameEqual(result.clusters, expected(spark, graph))
    # large-star/small-star takes O(log^2 n) rounds; label propagation would take ~300 on the chain
    assert result.rounds <= 20


def test_string_ids_cluster_under_string_order(spark: SparkSession) -> None:
    rng = random.Random(11)
    names = [f"doc-{i}" for i in range(120)]  # "doc-10" < "doc-9": string order, not numeric
    pairs = [(a, b) for a, b in (rng.sample(names, 2) for _ in range(90))]
    assertDataFrameEqual(components(spark, pairs, "string"), expected(spark, pairs, "string"))


def test_no_pairs_gives_an_empty_table(spark: SparkSession) -> None:
    result = connected_components(pair_frame(spark, []), max_rounds=30)
    assert result.clusters.isEmpty() and result.rounds == 0


def test_too_few_rounds_is_a_clear_error(spark: SparkSession) -> None:
    chain = [(i, i + 1) for i in range(64)]
    with pytest.raises(NotConvergedError, match="clusters.max_rounds"):
        components(spark, chain, max_rounds=1)


def test_each_step_keeps_the_components(spark: SparkSession) -> None:
    rng = random.Random(5)
    pairs = [tuple(rng.sample(range(60), 2)) for _ in range(50)]
    reference = {x: r for x, r, _ in reference_components(pairs)}
    edges = oriented_edges(pair_frame(spark, pairs))
    for step in (large_star, small_star):
        edges = step(edges)
        rows = edges.collect()
        assert all(r.src > r.dst for r in rows)
        assert all(reference[r.src] == reference[r.dst] for r in rows)
        # every node keeps an edge, so no document leaves its cluster
        assert {x for r in rows for x in (r.src, r.dst)} == set(reference)


def test_a_star_forest_is_recognised(spark: SparkSession) -> None:
    stars = spark.createDataFrame([(2, 1), (3, 1), (9, 4)], "src bigint, dst bigint")
    chain = spark.createDataFrame([(2, 1), (3, 2)], "src bigint, dst bigint")
    two_centres = spark.createDataFrame([(3, 1), (3, 2)], "src bigint, dst bigint")
    assert is_star_forest(stars)
    assert not is_star_forest(chain)
    assert not is_star_forest(two_centres)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_figures_of_one_task_are_the_components_figures(spark: SparkSession, seed: int) -> None:
    """What the dedup summary compares with, computed in one task: the same counts as the table."""
    rng = random.Random(seed)
    pairs = [(rng.randrange(400), rng.randrange(400)) for _ in range(300)]
    pairs = [(a, b) for a, b in pairs if a != b] + [(1000 + i, 1001 + i) for i in range(50)]
    table = components(spark, pairs).collect()
    sizes = Counter(r[CLUSTER_ID] for r in table)
    assert figures_in_one_task(pair_frame(spark, pairs)) == {
        "components": len(sizes),
        "documents_in_components": len(table),
        "largest_component": max(sizes.values()),
        "would_remove": len(table) - len(sizes),
    }
    assert figures_in_one_task(pair_frame(spark, []))["components"] == 0
