"""The dedup decision's reference: both promises of the contract and the greedy, on every graph."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from shingling.decision import (
    EXCERPT,
    KEPT,
    NEAR_DUPLICATE,
    Link,
    audit,
    decide,
    exact_groups,
    greedy_kept,
    priority_order,
    removes,
    rounds_kept,
)

CUT = 0.5
CONTAINMENT = 0.6


@st.composite
def graphs(draw: st.DrawFn, max_docs: int = 24) -> tuple[list[int], list[Link], dict[int, int]]:
    """Random pair graphs as the pair job writes them: scored links, some below the cut (only for
    containment), exact-copy groups written as cliques or as stars on their smallest id, and keys
    with many ties (so the id breaks them)."""
    n = draw(st.integers(2, max_docs))
    docs = list(range(n))
    keys = {d: draw(st.integers(0, 4)) for d in docs}
    links: dict[tuple[int, int], Link] = {}
    # exact groups: a few disjoint runs of ids
    grouped: set[int] = set()
    for _ in range(draw(st.integers(0, 3))):
        size = draw(st.integers(2, 5))
        start = draw(st.integers(0, n - 1))
        group = [d for d in range(start, min(n, start + size)) if d not in grouped]
        if len(group) < 2:
            continue
        grouped.update(group)
        if draw(st.booleans()):
            pairs = [(a, b) for i, a in enumerate(group) for b in group[i + 1 :]]
        else:
            pairs = [(group[0], b) for b in group[1:]]
        for a, b in pairs:
            links[(a, b)] = Link(a, b, 1.0, exact=True, containment_a=1.0, containment_b=1.0)
    for _ in range(draw(st.integers(0, 3 * n))):
        a, b = sorted(draw(st.lists(st.sampled_from(docs), min_size=2, max_size=2, unique=True)))
        if (a, b) in links or a in grouped and b in grouped:
            continue
        j = draw(st.sampled_from([0.2, 0.5, 0.55, 0.7, 0.9]))
        ca = draw(st.sampled_from([j, 0.3, 0.6, 0.95]))
        cb = draw(st.sampled_from([j, 0.3, 0.6]))
        links[(a, b)] = Link(a, b, j, containment_a=max(ca, j), containment_b=max(cb, j))
    # a member of a star-written group is paired with nothing but its group's smallest id
    return docs, list(links.values()), keys


def edges_at_cut(links: list[Link], groups: dict) -> list[tuple[int, int]]:
    """The truth the contract is stated on: pairs at J >= the cut, exact copies all pairwise."""
    truth = [(x.a, x.b) for x in links if x.jaccard >= CUT]
    by_group: dict = {}
    for d, g in groups.items():
        by_group.setdefault(g, []).append(d)
    for ds in by_group.values():
        truth += [(a, b) for i, a in enumerate(ds) for b in ds[i + 1 :]]
    # a star member shares its representative's Jaccard with every other document
    for x in links:
        if x.exact or x.jaccard < CUT:
            continue
        for d, other in ((x.a, x.b), (x.b, x.a)):
            if d in groups:
                truth += [(m, other) for m in by_group[groups[d]] if m != d]
    return truth


def excerpts_of(links: list[Link], groups: dict) -> list[tuple[int, int]]:
    """(excerpt, container) at the containment cut; an exact copy of an excerpt is one too."""
    inside = [(x.a, x.b) for x in links if x.containment_a >= CONTAINMENT] + [
        (x.b, x.a) for x in links if x.containment_b >= CONTAINMENT
    ]
    by_group: dict = {}
    for d, g in groups.items():
        by_group.setdefault(g, []).append(d)

    def copies(d: int) -> list[int]:
        return by_group[groups[d]] if d in groups else [d]

    return [
        (e, c) for excerpt, container in inside for e in copies(excerpt) for c in copies(container)
    ]


@settings(max_examples=200, deadline=None)
@given(graphs(), st.booleans(), st.booleans())
def test_every_removed_document_has_a_kept_near_duplicate_and_no_kept_pair_reaches_the_cut(
    graph: tuple, descending: bool, containment: bool
) -> None:
    docs, links, keys = graph
    order = priority_order(keys, descending=descending)
    decisions = decide(order, links, cut=CUT, containment_cut=CONTAINMENT if containment else None)
    groups = exact_groups(links)
    truth = edges_at_cut(links, groups)
    result = audit(decisions, truth, excerpts=excerpts_of(links, groups) if containment else ())
    assert result.orphans == 0
    assert result.surviving == 0
    for x in decisions.values():
        if x.relation == EXCERPT:
            assert containment and x.containment >= CONTAINMENT and x.jaccard < CUT
        if x.removed:
            assert not decisions[x.kept_id].removed


@settings(max_examples=200, deadline=None)
@given(graphs(), st.booleans())
def test_the_kept_set_is_the_sequential_greedy_and_the_rounds_compute_it(
    graph: tuple, containment: bool
) -> None:
    """Independently of :func:`decide`: contract the exact groups by hand, orient every usable link
    by the order, run the greedy and the rounds; the kept documents are the same."""
    docs, links, keys = graph
    order = priority_order(keys)
    rank = {d: i for i, d in enumerate(order)}
    groups = exact_groups(links)
    head: dict = {}
    for d, g in groups.items():
        if g not in head or rank[d] < rank[head[g]]:
            head[g] = d
    node = {d: head[groups[d]] if d in groups else d for d in docs}
    preceded: dict = {}
    nodes = set(head.values())
    for x in links:
        if x.exact or node[x.a] == node[x.b]:
            continue
        first, second = sorted((x.a, x.b), key=lambda d: rank[node[d]])
        inside = x.containment_b if first == x.a else x.containment_a
        if x.jaccard >= CUT or (containment and inside >= CONTAINMENT):
            preceded.setdefault(node[second], set()).add(node[first])
        if x.jaccard >= CUT or (
            containment and max(x.containment_a, x.containment_b) >= CONTAINMENT
        ):
            nodes.update((node[first], node[second]))
    walk = sorted(nodes, key=rank.__getitem__)
    kept = greedy_kept(walk, preceded)
    in_rounds, rounds = rounds_kept(walk, preceded)
    assert in_rounds == kept
    assert rounds <= len(walk)
    decisions = decide(order, links, cut=CUT, containment_cut=CONTAINMENT if containment else None)
    assert {d for d, x in decisions.items() if not x.removed} == kept


@settings(max_examples=100, deadline=None)
@given(graphs())
def test_each_exact_group_keeps_at_most_one_member_and_its_best(graph: tuple) -> None:
    docs, links, keys = graph
    order = priority_order(keys)
    decisions = decide(order, links, cut=CUT)
    by_group: dict = {}
    for d, g in exact_groups(links).items():
        by_group.setdefault(g, []).append(d)
    for members in by_group.values():
        kept = [d for d in members if not decisions[d].removed]
        assert len(kept) <= 1
        if kept:
            assert kept == [min(members, key=order.index)]
            assert all(
                decisions[d].exact and decisions[d].jaccard == 1.0 for d in members if d != kept[0]
            )


def test_a_chain_keeps_every_other_document_in_the_order_not_one_per_component() -> None:
    """A ~ B ~ C ~ D ~ E with only neighbours alike: components would keep one and remove four
    documents, three of them unlike the kept one; the contract keeps A, C, E."""
    chain = [Link(d, d + 1, 0.6) for d in range(4)]
    decisions = decide([0, 1, 2, 3, 4], chain, cut=CUT)
    assert [d for d in range(5) if not decisions[d].removed] == [0, 2, 4]
    assert {d: decisions[d].kept_id for d in (1, 3)} == {
        1: 0,
        3: 2,
    }  # the better Jaccard tie: earlier


def test_a_removed_document_names_its_closest_kept_neighbour() -> None:
    links = [Link(0, 5, 0.6), Link(1, 5, 0.9), Link(0, 1, 0.1)]
    decisions = decide([0, 1, 5], links, cut=CUT)
    assert decisions[5].kept_id == 1 and decisions[5].jaccard == 0.9
    assert decisions[5].relation == NEAR_DUPLICATE


def test_an_excerpt_is_removed_in_favour_of_its_container_never_the_reverse() -> None:
    inside = Link("short", "long", 0.2, containment_a=0.9, containment_b=0.2)
    container_first = decide(["long", "short"], [inside], cut=CUT, containment_cut=CONTAINMENT)
    assert container_first["short"] == container_first["short"].__class__(
        "short", "long", EXCERPT, 0.2, 0.9
    )
    assert container_first["long"].relation == KEPT
    excerpt_first = decide(["short", "long"], [inside], cut=CUT, containment_cut=CONTAINMENT)
    # the container is never removed for its excerpt: both stay
    assert {d: x.relation for d, x in excerpt_first.items()} == {"short": KEPT, "long": KEPT}
    assert decide(["long", "short"], [inside], cut=CUT) == {}  # containment mode off


def test_a_star_written_exact_group_whose_best_member_is_a_leaf_keeps_only_it() -> None:
    """Members 2 and 3 are paired only with 1 (a large group, star-written); 3 is longest. Without
    the groups, keeping 3 would remove 1 and then keep 2: two copies of one text."""
    links = [Link(1, 2, 1.0, exact=True), Link(1, 3, 1.0, exact=True), Link(1, 9, 0.7)]
    decisions = decide([3, 2, 1, 9], links, cut=CUT)
    assert {d for d, x in decisions.items() if not x.removed} == {3}
    assert decisions[9].kept_id == 3 and decisions[9].jaccard == 0.7
    assert decisions[2].kept_id == 3 and decisions[2].exact


def test_a_removed_group_removes_every_member_in_favour_of_the_kept_document() -> None:
    links = [Link(1, 2, 1.0, exact=True), Link(1, 0, 0.8)]
    decisions = decide([0, 1, 2], links, cut=CUT)
    assert decisions[1].kept_id == decisions[2].kept_id == 0
    assert decisions[2].jaccard == 0.8 and not decisions[2].exact


def test_links_below_the_cut_decide_nothing() -> None:
    assert decide([0, 1], [Link(0, 1, 0.49)], cut=CUT) == {}
    assert removes(Link(0, 1, 0.49, exact=True), 0, cut=0.9, containment_cut=None) == NEAR_DUPLICATE


def test_a_chain_sorted_by_the_order_takes_a_round_for_every_two_documents() -> None:
    """The worst case of the rounds: each document waits for the one before it."""
    n = 101
    kept, rounds = rounds_kept(list(range(n)), {d: [d - 1] for d in range(1, n)})
    assert kept == set(range(0, n, 2)) and rounds == 51
    shuffled = list(range(n))
    random.Random(7).shuffle(shuffled)
    rank = {d: i for i, d in enumerate(shuffled)}
    preceded: dict[int, list[int]] = {}
    for d in range(n - 1):
        first, second = sorted((d, d + 1), key=rank.__getitem__)
        preceded.setdefault(second, []).append(first)
    _, random_rounds = rounds_kept(sorted(range(n), key=rank.__getitem__), preceded)
    assert random_rounds < 15  # a random order: O(log n) rounds on a chain
