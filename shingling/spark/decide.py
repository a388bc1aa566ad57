"""The dedup decision in Spark: :func:`shingling.decision.decide`, computed in parallel rounds.

    pairs (doc_a, doc_b, jaccard, exact_duplicate, containment_a, containment_b)
      + ranks (doc_id, rank: the priority order, 0 first)
      -> decisions (doc_id, kept_id, relation, jaccard, containment, exact_duplicate)

The rule is the library's (shingling/decision.py): exact-copy groups become one node ranked by their
best member, a usable link becomes an edge from the earlier node to the later one, and the kept
nodes are the sequential greedy's. Here it is computed without the driver holding the graph:

1. **Groups**: the connected components of the exact pairs (shingling/spark/connected_components.py), each node named
   by its member of best rank.
2. **Edges**: every link between two nodes that lets the earlier remove the later one
   (:func:`shingling.decision.removes`), kept once per (earlier, later) with its closest figures.
3. **Rounds** (Blelloch, Fineman and Shun, SPAA 2012): an undecided node that no undecided node
   has an edge to is kept, and the nodes it has edges to are removed; both leave the graph. The
   result is the greedy's on every graph. Each round ends with a local checkpoint, so the plan
   stays one round long. A random order needs O(log² n) rounds; an order along a chain of
   documents (each a little longer than the last) needs one round for every two documents, so
   once the undecided graph has at most ``finish_edges`` edges, one task on an executor finishes
   it with :func:`shingling.decision.greedy_kept` itself (the graph's state after any number of
   rounds is a prefix of the greedy's walk).
4. **Kept ids**: each removed node takes, among the kept nodes with an edge to it, the closest
   (near-duplicate before excerpt, then Jaccard, containment, rank); each group member follows
   its node.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import pyarrow as pa
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from shingling.decision import EXCERPT, KEPT, NEAR_DUPLICATE, Link, decide, greedy_kept
from shingling.errors import ShinglingError
from shingling.schema import CONTAINMENT_A, CONTAINMENT_B, DOC_A, DOC_B, DOC_ID, EXACT, JACCARD
from shingling.spark.connected_components import CLUSTER_ID, connected_components

RANK = "rank"
KEPT_ID = "kept_id"
DECISION_RELATION = "relation"  # kept, near_duplicate or excerpt (shingling.decision)
CONTAINMENT = "containment"  # of the removed document in its kept one

# working columns
_NODE = "node"
_FIRST = "first"
_SECOND = "second"
_FIRST_RANK = "first_rank"
_SECOND_RANK = "second_rank"
_GROUP_RANK = "group_rank"
_IS_KEPT = "is_kept"


class NotDecidedError(ShinglingError):
    """The rounds did not decide every document within the allowed number."""


class Decisions(NamedTuple):
    """The decision table and how it was computed."""

    decisions: DataFrame
    rounds: int
    finished_edges: int  # undecided edges left to the one-task finish (0: none)
    one_task: bool = False  # the whole graph was decided in one task (no rounds)


def usable_links(pairs: DataFrame, *, cut: float, containment_cut: float | None) -> DataFrame:
    """Pair table -> the pairs that can remove a document: at the cut, or (containment mode) one
    document's containment in the other at the containment cut."""
    usable = F.col(EXACT) | (F.col(JACCARD) >= F.lit(cut))
    if containment_cut is not None:
        usable = usable | (F.greatest(CONTAINMENT_A, CONTAINMENT_B) >= F.lit(containment_cut))
    return pairs.where(usable).select(DOC_A, DOC_B, JACCARD, EXACT, CONTAINMENT_A, CONTAINMENT_B)


def linked_ids(links: DataFrame) -> DataFrame:
    """Links -> (doc_id) of every document in one."""
    return (
        links.select(F.col(DOC_A).alias(DOC_ID))
        .unionByName(links.select(F.col(DOC_B).alias(DOC_ID)))
        .distinct()
    )


def ranked(ids: DataFrame, keys: DataFrame | None, *, descending: bool) -> DataFrame:
    """(doc_id) + (doc_id, keep_key) -> (doc_id, rank): :func:`shingling.decision.priority_order`.

    The rank is a number that increases along a global sort (range-partitioned, each partition
    sorted, partition index in the high bits): only its order is used, and that order is the
    policy's (key, then id), a total order, so every run ranks alike.
    """
    if keys is None:
        order: list[Column] = [F.col(DOC_ID).asc()]
        frame = ids
    else:
        key = F.col("keep_key")
        first = key.desc_nulls_last() if descending else key.asc_nulls_last()
        order = [first, F.col(DOC_ID).asc()]
        frame = ids.join(keys, DOC_ID, "left")
    return frame.orderBy(*order).select(DOC_ID, F.monotonically_increasing_id().alias(RANK))


def exact_copy_groups(exact: DataFrame, *, max_rounds: int) -> DataFrame:
    """Exact pairs -> (doc_id, cluster_id): each document's group, named by its smallest id.

    The pair job writes a group as every pair of its members or as each member paired with the
    smallest id; either way a document's smallest neighbour (or itself) names its group, in one
    aggregate. That is checked (every exact pair within one group) and, were the pairs of another
    shape, the groups are the connected components instead.
    """
    both = exact.select(F.col(DOC_A).alias(DOC_ID), F.col(DOC_B).alias("_other")).unionByName(
        exact.select(F.col(DOC_B).alias(DOC_ID), F.col(DOC_A).alias("_other"))
    )
    labels = (
        both.groupBy(DOC_ID)
        .agg(F.least(F.min("_other"), F.first(DOC_ID)).alias(CLUSTER_ID))
        .localCheckpoint(eager=True)
    )
    a = labels.select(F.col(DOC_ID).alias(DOC_A), F.col(CLUSTER_ID).alias("_ga"))
    b = labels.select(F.col(DOC_ID).alias(DOC_B), F.col(CLUSTER_ID).alias("_gb"))
    split = exact.join(a, DOC_A).join(b, DOC_B).where(F.col("_ga") != F.col("_gb"))
    if split.isEmpty():
        return labels
    return connected_components(exact, max_rounds=max_rounds).clusters.select(DOC_ID, CLUSTER_ID)


def group_heads(links: DataFrame, ranks: DataFrame, *, max_rounds: int) -> DataFrame:
    """Links + ranks -> (doc_id, node, rank of the node) for every linked document: the member of
    best rank of its exact-copy group, or the document itself."""
    exact = links.where(F.col(EXACT))
    groups = exact_copy_groups(exact, max_rounds=max_rounds)
    best = Window.partitionBy(CLUSTER_ID)
    heads = (
        groups.join(ranks, DOC_ID)
        .withColumn(_GROUP_RANK, F.min(RANK).over(best))
        .withColumn(_NODE, F.min_by(DOC_ID, F.col(RANK)).over(best))
        .select(DOC_ID, _NODE, _GROUP_RANK)
    )
    alone = ranks.join(heads, DOC_ID, "left_anti").select(
        DOC_ID, F.col(DOC_ID).alias(_NODE), F.col(RANK).alias(_GROUP_RANK)
    )
    return heads.unionByName(alone)


def node_edges(
    links: DataFrame, heads: DataFrame, *, cut: float, containment_cut: float | None
) -> DataFrame:
    """Links + heads -> (first, second, first_rank, second_rank, relation, jaccard, containment):
    one edge per pair of nodes whose link lets the earlier remove the later, the closest kept."""
    a = heads.select(
        F.col(DOC_ID).alias(DOC_A), F.col(_NODE).alias("na"), F.col(_GROUP_RANK).alias("ra")
    )
    b = heads.select(
        F.col(DOC_ID).alias(DOC_B), F.col(_NODE).alias("nb"), F.col(_GROUP_RANK).alias("rb")
    )
    a_first = F.col("ra") < F.col("rb")
    # the containment of the later node's document in the earlier one's
    inside = F.when(a_first, F.col(CONTAINMENT_B)).otherwise(F.col(CONTAINMENT_A))
    near = F.col(JACCARD) >= F.lit(cut)
    relation = F.when(near, F.lit(NEAR_DUPLICATE))
    if containment_cut is not None:
        relation = relation.when(inside >= F.lit(containment_cut), F.lit(EXCERPT))
    edges = (
        links.where(~F.col(EXACT))
        .join(a, DOC_A)
        .join(b, DOC_B)
        .where(F.col("na") != F.col("nb"))
        .select(
            F.when(a_first, F.col("na")).otherwise(F.col("nb")).alias(_FIRST),
            F.when(a_first, F.col("nb")).otherwise(F.col("na")).alias(_SECOND),
            F.least("ra", "rb").alias(_FIRST_RANK),
            F.greatest("ra", "rb").alias(_SECOND_RANK),
            relation.alias(DECISION_RELATION),
            F.col(JACCARD),
            inside.alias(CONTAINMENT),
        )
        .where(F.col(DECISION_RELATION).isNotNull())
    )
    closest = Window.partitionBy(_FIRST, _SECOND).orderBy(*_closeness())
    return edges.withColumn("_n", F.row_number().over(closest)).where(F.col("_n") == 1).drop("_n")


def _closeness() -> list[Column]:
    """The order of :func:`shingling.decision._better`: near-duplicate, Jaccard, containment."""
    return [
        (F.col(DECISION_RELATION) == F.lit(NEAR_DUPLICATE)).desc(),
        F.col(JACCARD).desc(),
        F.col(CONTAINMENT).desc(),
    ]


_FINISH_SCHEMA = StructType([StructField(_NODE, LongType()), StructField(_IS_KEPT, BooleanType())])


def _finish(nodes: DataFrame, edges: DataFrame) -> DataFrame:
    """The undecided graph's nodes (rank) and edges (first_rank -> second_rank) -> (node rank,
    kept?), by the library's greedy in one task: the graph is small by now (``finish_edges``)."""
    rows = nodes.select(
        F.col(RANK).alias(_SECOND_RANK), F.lit(None).cast("long").alias(_FIRST_RANK)
    ).unionByName(edges.select(_SECOND_RANK, _FIRST_RANK))

    def walk(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        order: list[int] = []
        preceded: dict[int, list[int]] = {}
        for batch in batches:
            later = batch.column(_SECOND_RANK).to_pylist()
            earlier = batch.column(_FIRST_RANK).to_pylist()
            for second, first in zip(later, earlier, strict=True):
                if first is None:
                    order.append(second)
                else:
                    preceded.setdefault(second, []).append(first)
        order.sort()
        kept = greedy_kept(order, preceded)
        yield pa.RecordBatch.from_pydict(
            {_NODE: order, _IS_KEPT: [n in kept for n in order]},
            schema=pa.schema([(_NODE, pa.int64()), (_IS_KEPT, pa.bool_())]),
        )

    return rows.coalesce(1).mapInArrow(walk, _FINISH_SCHEMA)


def decided_in_one_task(
    links: DataFrame, ranks: DataFrame, *, cut: float, containment_cut: float | None
) -> DataFrame:
    """Usable links + ranks -> the decisions, by :func:`shingling.decision.decide` in one task.

    For a graph of at most ``dedup.finish_edges`` links (the default holds a million): the links
    and the ranks go to one executor, which runs the library's rule on them, so the result is the
    reference's by construction, in one stage instead of the rounds' dozen.
    """
    id_type = links.schema[DOC_A].dataType
    nothing = F.lit(None)
    rows = links.select(
        DOC_A,
        DOC_B,
        JACCARD,
        EXACT,
        CONTAINMENT_A,
        CONTAINMENT_B,
        nothing.cast("long").alias(RANK),
    ).unionByName(
        ranks.select(
            F.col(DOC_ID).alias(DOC_A),
            nothing.cast(id_type).alias(DOC_B),
            nothing.cast("double").alias(JACCARD),
            nothing.cast("boolean").alias(EXACT),
            nothing.cast("double").alias(CONTAINMENT_A),
            nothing.cast("double").alias(CONTAINMENT_B),
            RANK,
        )
    )
    schema = StructType(
        [
            StructField(DOC_ID, id_type),
            StructField(KEPT_ID, id_type),
            StructField(DECISION_RELATION, StringType()),
            StructField(JACCARD, DoubleType()),
            StructField(CONTAINMENT, DoubleType()),
            StructField(EXACT, BooleanType()),
        ]
    )
    arrow_schema = to_arrow_schema(schema)

    def walk(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rank: dict = {}
        found: list[Link] = []
        for batch in batches:
            columns = batch.to_pydict()
            for a, b, j, e, ca, cb, r in zip(*columns.values(), strict=True):
                if r is not None:
                    rank[a] = r
                else:
                    found.append(Link(a, b, j, e, ca if ca is not None else 0.0, cb or 0.0))
        order = sorted(rank, key=rank.__getitem__)
        out = decide(order, found, cut=cut, containment_cut=containment_cut).values()
        yield pa.RecordBatch.from_pydict(
            {
                DOC_ID: [d.doc_id for d in out],
                KEPT_ID: [d.kept_id for d in out],
                DECISION_RELATION: [d.relation for d in out],
                JACCARD: [d.jaccard for d in out],
                CONTAINMENT: [d.containment for d in out],
                EXACT: [d.exact for d in out],
            },
            schema=arrow_schema,
        )

    return rows.coalesce(1).mapInArrow(walk, schema)


def kept_nodes(
    nodes: DataFrame, edges: DataFrame, *, max_rounds: int, finish_edges: int
) -> tuple[DataFrame, int, int]:
    """Nodes (rank) + edges (first_rank, second_rank) -> (rank, is_kept) for every node, the
    rounds taken and the edges left to the one-task finish.

    Raises:
        NotDecidedError: undecided nodes remain after ``max_rounds`` rounds.
    """
    undecided = nodes.select(RANK).localCheckpoint(eager=True)
    live = edges.select(_FIRST_RANK, _SECOND_RANK).distinct().localCheckpoint(eager=True)
    decided: list[DataFrame] = []
    rounds = 0
    finished = 0
    while not undecided.isEmpty():
        left = live.count()
        if left <= finish_edges:
            finished = left
            done = _finish(undecided, live).localCheckpoint(eager=True)
            decided.append(done.select(F.col(_NODE).alias(RANK), _IS_KEPT))
            break
        if rounds == max_rounds:
            raise NotDecidedError(
                f"the dedup decision left documents undecided after {max_rounds} rounds"
                f" ({left} links between them): raise dedup.max_rounds, or dedup.finish_edges"
                " so that one task finishes the rest"
            )
        rounds += 1
        blocked = live.select(F.col(_SECOND_RANK).alias(RANK)).distinct()
        winners = undecided.join(blocked, RANK, "left_anti").localCheckpoint(eager=True)
        losers = (
            live.join(winners.select(F.col(RANK).alias(_FIRST_RANK)), _FIRST_RANK, "left_semi")
            .select(F.col(_SECOND_RANK).alias(RANK))
            .distinct()
        )
        out = winners.unionByName(losers)
        decided.append(winners.withColumn(_IS_KEPT, F.lit(True)))
        decided.append(losers.withColumn(_IS_KEPT, F.lit(False)).localCheckpoint(eager=True))
        undecided = undecided.join(out, RANK, "left_anti").localCheckpoint(eager=True)
        gone = out.select(F.col(RANK).alias(_FIRST_RANK))
        live = (
            live.join(gone, _FIRST_RANK, "left_anti")
            .join(gone.select(F.col(_FIRST_RANK).alias(_SECOND_RANK)), _SECOND_RANK, "left_anti")
            .localCheckpoint(eager=True)
        )
    if not decided:
        return nodes.select(RANK, F.lit(True).alias(_IS_KEPT)).limit(0), rounds, finished
    result = decided[0]
    for part in decided[1:]:
        result = result.unionByName(part)
    return result, rounds, finished


def decisions(
    pairs: DataFrame,
    keys: DataFrame | None,
    *,
    cut: float,
    containment_cut: float | None,
    descending: bool,
    max_rounds: int,
    finish_edges: int,
    component_rounds: int,
) -> Decisions:
    """Pair table + keep keys -> (doc_id, kept_id, relation, jaccard, containment,
    exact_duplicate) for every document of a usable pair (module docstring); ``keys`` None is the
    ``smallest_id`` policy."""
    links = usable_links(pairs, cut=cut, containment_cut=containment_cut).localCheckpoint(
        eager=True
    )
    ranks = ranked(linked_ids(links), keys, descending=descending).localCheckpoint(eager=True)
    n_links = links.count()
    if n_links <= finish_edges:  # a graph one task holds: the library's rule itself decides it
        decided = decided_in_one_task(links, ranks, cut=cut, containment_cut=containment_cut)
        return Decisions(decided, 0, n_links, one_task=True)
    heads = group_heads(links, ranks, max_rounds=component_rounds).localCheckpoint(eager=True)
    edges = node_edges(links, heads, cut=cut, containment_cut=containment_cut).localCheckpoint(
        eager=True
    )
    nodes = heads.select(F.col(_GROUP_RANK).alias(RANK)).distinct()
    status, rounds, finished = kept_nodes(
        nodes, edges, max_rounds=max_rounds, finish_edges=finish_edges
    )
    status = status.localCheckpoint(eager=True)
    kept_ranks = status.where(F.col(_IS_KEPT)).select(F.col(RANK).alias(_FIRST_RANK))
    by_rank = heads.select(F.col(_NODE).alias("_head"), F.col(_GROUP_RANK).alias(RANK)).distinct()
    closest = Window.partitionBy(_SECOND_RANK).orderBy(*_closeness(), F.col(_FIRST_RANK).asc())
    # removed nodes: the closest kept node with an edge to them
    removed_nodes = (
        edges.join(kept_ranks, _FIRST_RANK, "left_semi")
        .join(
            status.where(~F.col(_IS_KEPT)).select(F.col(RANK).alias(_SECOND_RANK)),
            _SECOND_RANK,
            "left_semi",
        )
        .withColumn("_n", F.row_number().over(closest))
        .where(F.col("_n") == 1)
        .select(
            F.col(_SECOND_RANK).alias(_GROUP_RANK),
            F.col(_FIRST).alias(KEPT_ID),
            DECISION_RELATION,
            JACCARD,
            CONTAINMENT,
        )
    )
    kept_heads = (
        status.where(F.col(_IS_KEPT))
        .join(by_rank, RANK)
        .select(F.col(RANK).alias(_GROUP_RANK), F.col("_head").alias(KEPT_ID))
    )
    members = heads.select(DOC_ID, _NODE, _GROUP_RANK)
    kept_side = members.join(kept_heads, _GROUP_RANK).select(
        DOC_ID,
        KEPT_ID,
        F.when(F.col(DOC_ID) == F.col(_NODE), F.lit(KEPT))
        .otherwise(F.lit(NEAR_DUPLICATE))
        .alias(DECISION_RELATION),
        F.lit(1.0).alias(JACCARD),
        F.lit(1.0).alias(CONTAINMENT),
        (F.col(DOC_ID) != F.col(_NODE)).alias(EXACT),
    )
    removed_side = members.join(removed_nodes, _GROUP_RANK).select(
        DOC_ID,
        KEPT_ID,
        DECISION_RELATION,
        JACCARD,
        CONTAINMENT,
        F.lit(False).alias(EXACT),
    )
    return Decisions(kept_side.unionByName(removed_side), rounds, finished)


def night_decisions(
    pairs: DataFrame,
    batch_ids: DataFrame,
    indexed_kept: DataFrame,
    keys: DataFrame | None,
    *,
    cut: float,
    descending: bool,
    max_rounds: int,
    finish_edges: int,
    component_rounds: int,
) -> Decisions:
    """A night's pairs + its documents (doc_id) + the index's kept documents (doc_id) -> the
    decision of every document of the batch (the columns of :func:`decisions`).

    What was published stays published: a batch document with a pair at the cut with a kept
    indexed document is removed in favour of it (the closest: Jaccard, containment, then the
    smallest id), and so are the exact copies of it in the batch; the batch's other documents are
    decided among themselves by the policy, as a full run decides (:func:`decisions`). Over any
    split of a corpus into nights, the union of the nights' decisions keeps both promises of
    shingling/decision.py (not the same set as one full run: the order differs).
    """
    links = usable_links(pairs, cut=cut, containment_cut=None).localCheckpoint(eager=True)
    batch = batch_ids.select(DOC_ID)
    oriented = links.select(
        F.col(DOC_A).alias(DOC_ID),
        F.col(DOC_B).alias(KEPT_ID),
        JACCARD,
        EXACT,
        F.col(CONTAINMENT_A).alias(CONTAINMENT),
    ).unionByName(
        links.select(
            F.col(DOC_B).alias(DOC_ID),
            F.col(DOC_A).alias(KEPT_ID),
            JACCARD,
            EXACT,
            F.col(CONTAINMENT_B).alias(CONTAINMENT),
        )
    )
    kept = indexed_kept.select(F.col(DOC_ID).alias(KEPT_ID))
    closest = Window.partitionBy(DOC_ID).orderBy(
        F.col(JACCARD).desc(), F.col(CONTAINMENT).desc(), F.col(KEPT_ID).asc()
    )
    direct = (
        oriented.join(batch, DOC_ID, "left_semi")
        .join(kept, KEPT_ID, "left_semi")
        .withColumn("_n", F.row_number().over(closest))
        .where(F.col("_n") == 1)
        .select(DOC_ID, KEPT_ID, JACCARD, CONTAINMENT, EXACT)
    )
    # exact copies within the batch follow their copy: the pair job may pair only one of them
    # with the index (a group written as a star)
    inner_exact = (
        links.where(F.col(EXACT))
        .join(batch.select(F.col(DOC_ID).alias(DOC_A)), DOC_A, "left_semi")
        .join(batch.select(F.col(DOC_ID).alias(DOC_B)), DOC_B, "left_semi")
    )
    groups = exact_copy_groups(inner_exact, max_rounds=component_rounds)
    group_choice = Window.partitionBy(CLUSTER_ID).orderBy(
        F.col(JACCARD).desc(), F.col(CONTAINMENT).desc(), F.col(KEPT_ID).asc()
    )
    by_group = (
        direct.join(groups, DOC_ID)
        .withColumn("_n", F.row_number().over(group_choice))
        .where(F.col("_n") == 1)
        .select(CLUSTER_ID, KEPT_ID, JACCARD, CONTAINMENT, EXACT)
    )
    followers = (
        groups.join(by_group, CLUSTER_ID)
        .join(direct.select(DOC_ID), DOC_ID, "left_anti")
        .select(DOC_ID, KEPT_ID, JACCARD, CONTAINMENT, EXACT)
    )
    by_index = (
        direct.unionByName(followers)
        .withColumn(DECISION_RELATION, F.lit(NEAR_DUPLICATE))
        .select(DOC_ID, KEPT_ID, DECISION_RELATION, JACCARD, CONTAINMENT, EXACT)
        .localCheckpoint(eager=True)
    )
    remaining = batch.join(by_index, DOC_ID, "left_anti").localCheckpoint(eager=True)
    inner = links.join(remaining.select(F.col(DOC_ID).alias(DOC_A)), DOC_A, "left_semi").join(
        remaining.select(F.col(DOC_ID).alias(DOC_B)), DOC_B, "left_semi"
    )
    among = decisions(
        inner,
        None if keys is None else keys.join(remaining, DOC_ID, "left_semi"),
        cut=cut,
        containment_cut=None,
        descending=descending,
        max_rounds=max_rounds,
        finish_edges=finish_edges,
        component_rounds=component_rounds,
    )
    decided = among.decisions.localCheckpoint(eager=True)
    alone = remaining.join(decided, DOC_ID, "left_anti").select(
        DOC_ID,
        F.col(DOC_ID).alias(KEPT_ID),
        F.lit(KEPT).alias(DECISION_RELATION),
        F.lit(1.0).alias(JACCARD),
        F.lit(1.0).alias(CONTAINMENT),
        F.lit(False).alias(EXACT),
    )
    return Decisions(
        by_index.unionByName(decided).unionByName(alone), among.rounds, among.finished_edges
    )
