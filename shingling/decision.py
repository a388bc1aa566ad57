"""The dedup decision, defined once: which documents to keep, and for whom each other is removed.

The contract (docs/dedup.md). On the pairs of a run, at the cut τ (exact Jaccard), the kept
documents form a **maximal independent set** of the pair graph:

- every removed document has a pair at J ≥ τ with its ``kept_id``, a kept document;
- no two kept documents form a pair at J ≥ τ.

Connected components (what peers use) break the first promise through chains: A ~ B ~ C with A
and C unlike each other, one kept per component, and C is removed with nothing like it left.

Among the maximal independent sets, the keep policy picks one: documents are taken in a total
**priority order** (the policy's key, ties to the smallest id) and a document is kept unless a
kept document is its neighbour (the sequential greedy; its result is the lexicographically first
maximal independent set). Two refinements, both part of the rule:

- **Exact copies are one group, one kept.** The pair job writes a group of documents with the same
  normalized text as every pair of its members, or (a large group) as each member paired with its
  smallest id, which alone is paired with other documents. Groups are the connected components of
  the exact pairs; each group is one node of the graph, ranked by its best member, with the links
  of all its members. When the node is kept, its best member is kept and the others are removed in
  its favour (Jaccard 1.0); when it is removed, every member is removed in favour of the node's
  kept document, with the node's pair figures (the members' shingle sets are the same set).
- **Excerpts** (containment mode): a pair below the cut whose exact containment of one document in
  the other reaches ``containment_cut`` links them only one way: the contained document (the
  excerpt) may be removed in favour of the container, never the reverse. So it is an edge of the
  graph when the container comes first in the priority order, and no edge otherwise.

A removed document's ``kept_id`` is, among the kept documents that precede it and link to it, the
one with a near-duplicate link rather than an excerpt link, then the highest Jaccard, then the
earliest in the order: a choice independent of how the set was computed.

The Spark path (``shingling/spark/decide.py``) computes the same set in parallel rounds (an undecided node no
undecided neighbour precedes is kept, and the nodes it links to are removed: Blelloch, Fineman and
Shun, SPAA 2012) and is tested equal to :func:`decide` on random graphs and on real text.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: ``Decision.relation`` of a removed document: what it is of its kept document.
KEPT = "kept"
NEAR_DUPLICATE = "near_duplicate"
EXCERPT = "excerpt"  # the removed document is (mostly) inside the kept one


@dataclass(frozen=True)
class Link:
    """One pair of a run as the decision reads it: both containments exact, ``a`` in ``b`` first.

    ``containment_a`` is |A ∩ B| / |A|, the share of ``a``'s shingles found in ``b``.
    """

    a: Hashable
    b: Hashable
    jaccard: float
    exact: bool = False
    containment_a: float = 0.0
    containment_b: float = 0.0


@dataclass(frozen=True)
class Decision:
    """One document's fate: kept (``kept_id`` is itself) or removed in favour of ``kept_id``,
    with the figures of the pair that ties them (``jaccard``, ``containment``: of this document in
    the kept one) and what it is of it (``relation``)."""

    doc_id: Hashable
    kept_id: Hashable
    relation: str
    jaccard: float = 1.0
    containment: float = 1.0
    exact: bool = False

    @property
    def removed(self) -> bool:
        return self.relation != KEPT


def priority_order(
    keys: Mapping[Hashable, Any] | Iterable[Hashable], *, descending: bool = True
) -> list[Hashable]:
    """Documents in keep order: the policy's key (largest first when ``descending``; a None key
    last either way), ties to the smallest id. Given ids alone (the ``smallest_id`` policy), the
    smallest id first.

    >>> priority_order({"a": 3, "b": 9, "c": None, "d": 9})
    ['b', 'd', 'a', 'c']
    >>> priority_order({"a": 3, "b": 9, "c": None}, descending=False)
    ['a', 'b', 'c']
    >>> priority_order([5, 2, 7])
    [2, 5, 7]
    """
    if not isinstance(keys, Mapping):
        return sorted(keys)  # type: ignore[type-var]
    present = [d for d, key in keys.items() if key is not None]
    present.sort()
    present.sort(key=lambda d: keys[d], reverse=descending)  # stable: ties keep the id order
    missing = sorted(d for d, key in keys.items() if key is None)  # type: ignore[type-var]
    return present + missing


def removes(
    link: Link, first: Hashable, *, cut: float, containment_cut: float | None
) -> str | None:
    """Whether ``link`` lets ``first`` (its document earlier in the order) remove the other one,
    and as what: ``near_duplicate`` at J ≥ ``cut``; ``excerpt`` when the other one's containment
    in ``first`` reaches ``containment_cut`` (None: containment mode off); else None.

    >>> removes(Link("a", "b", 0.7), "a", cut=0.5, containment_cut=None)
    'near_duplicate'
    >>> excerpt = Link("a", "b", 0.2, containment_a=0.9, containment_b=0.2)
    >>> removes(excerpt, "b", cut=0.5, containment_cut=0.6), removes(excerpt, "a", cut=0.5, containment_cut=0.6)
    ('excerpt', None)
    """
    if link.exact or link.jaccard >= cut:
        return NEAR_DUPLICATE
    if containment_cut is None:
        return None
    other_inside = link.containment_b if first == link.a else link.containment_a
    return EXCERPT if other_inside >= containment_cut else None


def exact_groups(links: Iterable[Link]) -> dict[Hashable, Hashable]:
    """Each document of an exact pair -> its group's smallest id (components of the exact pairs).

    >>> exact_groups([Link(3, 1, 1.0, exact=True), Link(3, 7, 1.0, exact=True), Link(4, 5, 0.9)])
    {1: 1, 3: 1, 7: 1}
    """
    return components(link for link in links if link.exact)


def components(links: Iterable[Link]) -> dict[Hashable, Hashable]:
    """Each document of a link -> the smallest id of its connected component: the groups the
    component rule (one kept per component, what peers do) would keep one of. Not the decision;
    the dedup summary compares the two.

    >>> components([Link(1, 2, 0.6), Link(2, 3, 0.6), Link(5, 4, 0.9)])
    {1: 1, 2: 1, 3: 1, 4: 4, 5: 4}
    """
    parent: dict[Hashable, Hashable] = {}

    def root(x: Hashable) -> Hashable:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for link in links:
        for d in (link.a, link.b):
            parent.setdefault(d, d)
        ra, rb = root(link.a), root(link.b)
        if ra != rb:
            low, high = sorted((ra, rb))  # type: ignore[type-var]
            parent[high] = low
    return {d: root(d) for d in sorted(parent)}  # type: ignore[type-var]


def greedy_kept(order: Sequence[Any], preceded_by: Mapping[Any, Iterable[Any]]) -> set:
    """The sequential greedy: take ``order``; keep a node unless a kept node links to it.
    ``preceded_by[v]`` lists the nodes with an edge to ``v`` (each earlier than ``v`` in ``order``).

    >>> sorted(greedy_kept([1, 2, 3, 4], {2: [1], 3: [2], 4: [3]}))  # a chain: every other one
    [1, 3]
    """
    kept: set = set()
    for node in order:
        if not any(p in kept for p in preceded_by.get(node, ())):
            kept.add(node)
    return kept


def rounds_kept(order: Sequence[Any], preceded_by: Mapping[Any, Iterable[Any]]) -> tuple[set, int]:
    """:func:`greedy_kept` computed as the Spark path does, in rounds: each round keeps every
    undecided node that no undecided node links to, and removes the nodes they link to. Returns
    the kept set (the greedy's, on every graph) and the number of rounds.

    >>> rounds_kept([1, 2, 3, 4], {2: [1], 3: [2], 4: [3]})  # a sorted chain: one step a round
    ({1, 3}, 2)
    >>> rounds_kept([1, 2, 3, 4], {2: [1], 3: [1], 4: [1]})  # a star: one round
    ({1}, 1)
    """
    undecided = set(order)
    before = {n: set(preceded_by.get(n, ())) for n in order}
    after: dict[Hashable, set] = {n: set() for n in order}
    for n, ps in before.items():
        for p in ps:
            after[p].add(n)
    kept: set = set()
    rounds = 0
    while undecided:
        rounds += 1
        winners = {n for n in undecided if not before[n] & undecided}
        losers = {m for n in winners for m in after[n]} & undecided
        kept |= winners
        undecided -= winners | losers
    return kept, rounds


@dataclass(frozen=True)
class _Edge:
    """A link between two nodes, from the earlier one, as the decision weighs it."""

    relation: str
    jaccard: float
    containment: float  # of the later node's document in the earlier one's


def _better(x: _Edge, y: _Edge) -> bool:
    """Whether ``x`` ties a removed document to its kept one more closely than ``y``."""
    return (x.relation == NEAR_DUPLICATE, x.jaccard, x.containment) > (
        y.relation == NEAR_DUPLICATE,
        y.jaccard,
        y.containment,
    )


def decide(
    order: Sequence[Hashable],
    links: Iterable[Link],
    *,
    cut: float,
    containment_cut: float | None = None,
) -> dict[Hashable, Decision]:
    """Every document of ``links`` that reaches a cut -> its :class:`Decision` (module docstring).

    ``order`` is the priority order (:func:`priority_order`) and must hold every document of
    ``links``; links that reach neither cut are ignored, and so are documents left without one.
    An excerpt earlier in the order than its container removes neither: both are kept.

    >>> chain = [Link("a", "b", 0.6), Link("b", "c", 0.6)]  # a ~ b ~ c, a and c unlike
    >>> {d: x.kept_id for d, x in sorted(decide(["b", "a", "c"], chain, cut=0.5).items())}
    {'a': 'b', 'b': 'b', 'c': 'b'}
    >>> {d: x.kept_id for d, x in sorted(decide(["a", "b", "c"], chain, cut=0.5).items())}
    {'a': 'a', 'b': 'a', 'c': 'c'}
    """
    links = list(links)
    rank = {d: i for i, d in enumerate(order)}
    group = exact_groups(links)
    members: dict[Hashable, list[Hashable]] = {}
    for d, g in group.items():
        members.setdefault(g, []).append(d)
    # a group is its best member: the node of the graph
    best = {g: min(ds, key=rank.__getitem__) for g, ds in members.items()}

    def node(d: Hashable) -> Hashable:
        return best[group[d]] if d in group else d

    edges: dict[tuple[Hashable, Hashable], _Edge] = {}
    nodes: set[Hashable] = set(best.values())
    for link in links:
        if link.exact:
            continue
        na, nb = node(link.a), node(link.b)
        if na == nb:
            continue
        first, second = (na, nb) if rank[na] < rank[nb] else (nb, na)
        first_doc = link.a if first == na else link.b
        relation = removes(link, first_doc, cut=cut, containment_cut=containment_cut)
        if relation is None:
            # an excerpt earlier in the order than its container: both stay, both are decided
            if containment_cut is not None and max(link.containment_a, link.containment_b) >= (
                containment_cut
            ):
                nodes.update((first, second))
            continue
        inside = link.containment_b if first_doc == link.a else link.containment_a
        edge = _Edge(relation, link.jaccard, inside)
        old = edges.get((first, second))
        if old is None or _better(edge, old):
            edges[(first, second)] = edge
        nodes.update((first, second))

    preceded_by: dict[Hashable, list[Hashable]] = {}
    for first, second in edges:
        preceded_by.setdefault(second, []).append(first)
    ordered = sorted(nodes, key=rank.__getitem__)
    kept = greedy_kept(ordered, preceded_by)

    decisions: dict[Hashable, Decision] = {}
    for n in ordered:
        if n in kept:
            decisions[n] = Decision(n, n, KEPT)
            continue
        winner = None
        for p in preceded_by[n]:
            if p not in kept:
                continue
            e = edges[(p, n)]
            if (
                winner is None
                or _better(e, winner[1])
                or (not _better(winner[1], e) and rank[p] < rank[winner[0]])
            ):
                winner = (p, e)
        assert winner is not None, "a removed node has a kept node before it"
        p, e = winner
        decisions[n] = Decision(n, p, e.relation, e.jaccard, e.containment)
    for g, ds in members.items():
        n = best[g]
        for d in ds:
            if d == n:
                continue
            head = decisions[n]
            decisions[d] = (
                Decision(d, n, NEAR_DUPLICATE, exact=True)
                if not head.removed
                else Decision(d, head.kept_id, head.relation, head.jaccard, head.containment)
            )
    return decisions


@dataclass(frozen=True)
class Audit:
    """A decision checked against a truth (every pair at J ≥ the cut, by exact Jaccard):
    ``orphans`` are removed documents whose ``kept_id`` is not kept or not their near-duplicate
    (or container), ``surviving`` the pairs of kept documents that reach the cut."""

    removed: int
    orphans: int
    surviving: int


def audit(
    decisions: Mapping[Hashable, Decision],
    truth: Iterable[tuple[Hashable, Hashable]],
    *,
    excerpts: Iterable[tuple[Hashable, Hashable]] = (),
) -> Audit:
    """Check both promises of the contract against ``truth``: the unordered pairs of documents
    at J ≥ the cut (``excerpts``: (excerpt, container) pairs at the containment cut, which may
    also tie a removed document to its kept one).

    >>> d = decide([1, 2, 3], [Link(1, 2, 0.9), Link(2, 3, 0.9)], cut=0.8)
    >>> audit(d, [(1, 2), (2, 3)])
    Audit(removed=1, orphans=0, surviving=0)
    """
    near = {frozenset(p) for p in truth}
    inside = set(excerpts)
    removed = [x for x in decisions.values() if x.removed]
    orphans = sum(
        1
        for x in removed
        if decisions.get(x.kept_id, x).removed
        or (frozenset((x.doc_id, x.kept_id)) not in near and (x.doc_id, x.kept_id) not in inside)
    )
    gone = {x.doc_id for x in removed}  # every other document stays, unique ones included
    surviving = sum(1 for p in near if len(p) == 2 and not p & gone)
    return Audit(len(removed), orphans, surviving)
