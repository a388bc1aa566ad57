"""The decision in Spark equals the library's reference, on random graphs and on shaped ones.

Many independent graphs are laid side by side (ids offset) in one pair table, so one Spark run
tests them all: the decision of a union of disjoint graphs is the union of their decisions.
"""

from __future__ import annotations

import random

import pytest
from pyspark.sql import DataFrame, SparkSession

from shingling.decision import Link, decide, priority_order
from shingling.schema import CONTAINMENT_A, CONTAINMENT_B, DOC_A, DOC_B, EXACT, JACCARD
from shingling.spark.decide import NotDecidedError, decisions, exact_copy_groups

CUT = 0.5
CONTAINMENT = 0.6
SPAN = 1000  # ids of graph g are g * SPAN + 0..n-1


def random_graph(rng: random.Random, n: int) -> list[Link]:
    """Scored links as the pair job writes them: exact groups as cliques or stars on their
    smallest id, other links at, below and above the cut, some only containment."""
    links: dict[tuple[int, int], Link] = {}
    grouped: set[int] = set()
    for _ in range(rng.randint(0, 2)):
        start = rng.randrange(n)
        group = [d for d in range(start, min(n, start + rng.randint(2, 5))) if d not in grouped]
        if len(group) < 2:
            continue
        grouped.update(group)
        pairs = (
            [(a, b) for i, a in enumerate(group) for b in group[i + 1 :]]
            if rng.random() < 0.5
            else [(group[0], b) for b in group[1:]]
        )
        for a, b in pairs:
            links[(a, b)] = Link(a, b, 1.0, True, 1.0, 1.0)
    for _ in range(rng.randint(0, 3 * n)):
        a, b = sorted(rng.sample(range(n), 2))
        if (a, b) in links or (a in grouped and b in grouped):
            continue
        j = rng.choice([0.2, 0.5, 0.55, 0.7, 0.9, 0.7])
        links[(a, b)] = Link(
            a, b, j, False, max(j, rng.choice([0.3, 0.6, 0.95])), max(j, rng.choice([0.3, 0.6]))
        )
    return list(links.values())


def shaped_graphs(rng: random.Random) -> list[list[Link]]:
    """A sorted chain, a shuffled chain, a star, a clique, a clique of exact copies."""
    chain = [Link(d, d + 1, 0.6) for d in range(40)]
    ids = list(range(41))
    rng.shuffle(ids)
    shuffled = [Link(min(ids[d], ids[d + 1]), max(ids[d], ids[d + 1]), 0.7) for d in range(40)]
    star = [Link(0, d, 0.8) for d in range(1, 30)]
    clique = [Link(a, b, 0.6) for a in range(8) for b in range(a + 1, 8)]
    copies = [Link(a, b, 1.0, True, 1.0, 1.0) for a in range(6) for b in range(a + 1, 6)]
    return [chain, shuffled, star, clique, copies + [Link(5, 6, 0.9), Link(0, 7, 0.55)]]


def laid_out(graphs: list[list[Link]]) -> list[Link]:
    return [
        Link(g * SPAN + x.a, g * SPAN + x.b, x.jaccard, x.exact, x.containment_a, x.containment_b)
        for g, links in enumerate(graphs)
        for x in links
    ]


def pair_table(spark: SparkSession, links: list[Link]) -> DataFrame:
    rows = [(x.a, x.b, x.jaccard, x.exact, x.containment_a, x.containment_b) for x in links]
    schema = (
        f"{DOC_A} bigint, {DOC_B} bigint, {JACCARD} double, {EXACT} boolean,"
        f" {CONTAINMENT_A} double, {CONTAINMENT_B} double"
    )
    return spark.createDataFrame(rows, schema)


def in_spark(
    spark: SparkSession,
    links: list[Link],
    keys: dict[int, int | None] | None,
    *,
    containment: bool,
    descending: bool = True,
    finish_edges: int = 0,
    max_rounds: int = 1000,
) -> tuple[dict[int, tuple], int, int]:
    key_frame = (
        None
        if keys is None
        else spark.createDataFrame(list(keys.items()), "doc_id bigint, keep_key bigint")
    )
    result = decisions(
        pair_table(spark, links),
        key_frame,
        cut=CUT,
        containment_cut=CONTAINMENT if containment else None,
        descending=descending,
        max_rounds=max_rounds,
        finish_edges=finish_edges,
        component_rounds=30,
    )
    rows = {
        r["doc_id"]: (
            r["kept_id"],
            r["relation"],
            r["jaccard"],
            r["containment"],
            r["exact_duplicate"],
        )
        for r in result.decisions.collect()
    }
    return rows, result.rounds, result.finished_edges


def reference(
    links: list[Link], keys: dict[int, int | None] | None, *, containment: bool, descending: bool
) -> dict[int, tuple]:
    ids = {d for x in links for d in (x.a, x.b)}
    order = priority_order(
        sorted(ids) if keys is None else {d: keys.get(d) for d in ids}, descending=descending
    )
    decided = decide(order, links, cut=CUT, containment_cut=CONTAINMENT if containment else None)
    return {
        d: (x.kept_id, x.relation, x.jaccard, x.containment, x.exact) for d, x in decided.items()
    }


@pytest.mark.parametrize(
    ("seed", "containment", "descending", "finish_edges"),
    [
        (1, False, True, 0),
        (2, True, True, 0),
        (3, False, False, 0),
        (4, True, True, 100),
        (5, True, False, 10**6),  # one task holds the whole graph: the library decides it there
        (6, False, True, 10**6),
    ],
)
def test_the_rounds_equal_the_reference_on_random_and_shaped_graphs(
    spark: SparkSession, seed: int, containment: bool, descending: bool, finish_edges: int
) -> None:
    rng = random.Random(seed)
    graphs = [random_graph(rng, rng.randint(2, 30)) for _ in range(60)] + shaped_graphs(rng)
    links = laid_out(graphs)
    ids = {d for x in links for d in (x.a, x.b)}
    keys: dict[int, int | None] = {
        d: (None if rng.random() < 0.1 else rng.randint(0, 5)) for d in ids
    }
    expected = reference(links, keys, containment=containment, descending=descending)
    got, rounds, finished = in_spark(
        spark,
        links,
        keys,
        containment=containment,
        descending=descending,
        finish_edges=finish_edges,
    )
    assert got == expected
    if finish_edges >= len(links):
        assert rounds == 0 and 0 < finished <= len(links)
    else:
        assert rounds >= 1
        assert (finished > 0) == (finish_edges > 0)


def test_smallest_id_policy_equals_the_reference(spark: SparkSession) -> None:
    rng = random.Random(5)
    links = laid_out([random_graph(rng, 20) for _ in range(30)] + shaped_graphs(rng))
    # the rounds run until 100 links are left, one task decides those: both paths, in fewer rounds
    got, rounds, finished = in_spark(spark, links, None, containment=False, finish_edges=100)
    assert got == reference(links, None, containment=False, descending=True)
    assert rounds >= 1 and 0 < finished <= 100


def test_a_sorted_chain_is_finished_by_one_task_and_fails_clearly_without_it(
    spark: SparkSession,
) -> None:
    """Each document of a chain ordered by the policy waits for the one before: 40 links take 20
    rounds; with finish_edges the rest goes to one task and the result is the same."""
    chain = [Link(d, d + 1, 0.6) for d in range(40)]
    keys = {d: 100 - d for d in range(41)}  # the longest first: along the chain
    expected = reference(chain, keys, containment=False, descending=True)
    finished, rounds, left = in_spark(spark, chain, keys, containment=False, finish_edges=1000)
    assert finished == expected and rounds == 0 and left == 40
    with pytest.raises(NotDecidedError, match="dedup.max_rounds"):
        in_spark(spark, chain, keys, containment=False, max_rounds=5)


def test_exact_groups_of_any_shape_are_their_components(spark: SparkSession) -> None:
    """A clique and a star on the smallest id take one aggregate; a chain of exact pairs (not a
    shape the pair job writes) falls back to the connected components: the same groups."""
    exact = [Link(1, 2, 1.0, True), Link(1, 3, 1.0, True), Link(2, 3, 1.0, True)]  # a clique
    exact += [Link(10, 11, 1.0, True), Link(10, 12, 1.0, True)]  # a star
    chain = [Link(20, 21, 1.0, True), Link(21, 22, 1.0, True)]
    for links, expected in [
        (exact, {1: 1, 2: 1, 3: 1, 10: 10, 11: 10, 12: 10}),
        (exact + chain, {1: 1, 2: 1, 3: 1, 10: 10, 11: 10, 12: 10, 20: 20, 21: 20, 22: 20}),
    ]:
        groups = exact_copy_groups(pair_table(spark, links), max_rounds=30).collect()
        assert {r["doc_id"]: r["cluster_id"] for r in groups} == expected
