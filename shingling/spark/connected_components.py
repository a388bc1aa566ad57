"""Duplicate clusters: the connected components of the pair graph, computed in Spark.

    pairs (doc_a, doc_b, jaccard, ...) -> (doc_id, cluster_id, cluster_size)

A cluster is a set of documents linked by pairs at or above a similarity cut, directly or through
other documents; its id is its smallest doc_id, so the same input gives the same ids on every run.
Only documents that have at least one such pair appear: a document absent from the table is unique
at that cut (a singleton), which keeps the table the size of the duplicates, not of the corpus.

The algorithm is large-star/small-star (Kiveris, Lattanzi, Mirrokni, Rastogi, Vassilvitskii,
"Connected Components in MapReduce and Beyond", SoCC 2014). Edges point from a larger id to a
smaller one; each round

- **large-star** links every node's larger neighbours to the smallest id of its neighbourhood;
- **small-star** links every node and its smaller neighbours to the smallest of those.

Both keep the components unchanged and the edge count bounded, and the graph becomes a forest of
stars, each centred on its component's smallest id, in O(log^2 n) rounds; a chain of a million
documents takes a few dozen rounds where min-label propagation would take a million. Each round
ends with a local checkpoint, so the query plan (lineage) stays one round long, and a check that
the graph is a star forest (one small aggregate). These are the only actions here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import NamedTuple

import pyarrow as pa
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from shingling.decision import Link, components
from shingling.errors import ShinglingError
from shingling.schema import DOC_A, DOC_B, DOC_ID

CLUSTER_ID = "cluster_id"
CLUSTER_SIZE = "cluster_size"

# An edge of the working graph, always src > dst.
SRC = "src"
DST = "dst"
_NODE = "node"
_NEIGHBOUR = "neighbour"
_LOW = "low"


class NotConvergedError(ShinglingError):
    """The components did not settle within the allowed rounds."""


class Components(NamedTuple):
    """The cluster table and the number of rounds it took."""

    clusters: DataFrame
    rounds: int


def oriented_edges(pairs: DataFrame) -> DataFrame:
    """(doc_a, doc_b) -> distinct (src, dst) with src > dst, whichever way round the pair was."""
    return (
        pairs.select(F.greatest(DOC_A, DOC_B).alias(SRC), F.least(DOC_A, DOC_B).alias(DST))
        .where(F.col(SRC) != F.col(DST))
        .distinct()
    )


def large_star(edges: DataFrame) -> DataFrame:
    """(src, dst) -> (src, dst): each node's larger neighbours linked to its neighbourhood's min."""
    both_ways = edges.select(F.col(SRC).alias(_NODE), F.col(DST).alias(_NEIGHBOUR)).unionByName(
        edges.select(F.col(DST).alias(_NODE), F.col(SRC).alias(_NEIGHBOUR))
    )
    low = F.least(F.col(_NODE), F.min(_NEIGHBOUR).over(Window.partitionBy(_NODE)))
    return (
        both_ways.withColumn(_LOW, low)
        .where(F.col(_NEIGHBOUR) > F.col(_NODE))
        .select(F.col(_NEIGHBOUR).alias(SRC), F.col(_LOW).alias(DST))
        .distinct()
    )


def small_star(edges: DataFrame) -> DataFrame:
    """(src, dst) -> (src, dst): a node and its smaller neighbours linked to the least of them."""
    with_low = edges.withColumn(_LOW, F.min(DST).over(Window.partitionBy(SRC)))
    neighbours = with_low.select(F.col(DST).alias(SRC), F.col(_LOW).alias(DST)).where(
        F.col(SRC) != F.col(DST)
    )
    return neighbours.unionByName(with_low.select(SRC, F.col(_LOW).alias(DST))).distinct()


def is_star_forest(edges: DataFrame) -> bool:
    """Whether every src has one dst and no dst is a src: then each star is a whole component.

    Both steps keep the components, so once the edges form disjoint stars the stars are the
    components, and each centre is its component's minimum (every edge points to a smaller id).
    """
    several = edges.groupBy(SRC).agg(F.count(F.lit(1)).alias("n")).where(F.col("n") > 1).select(SRC)
    centres_linked = edges.join(
        edges.select(F.col(SRC).alias(DST)), on=DST, how="left_semi"
    ).select(SRC)
    return several.unionByName(centres_linked).isEmpty()


def star_members(edges: DataFrame) -> DataFrame:
    """A star forest (src, dst) -> (doc_id, cluster_id, cluster_size), centres included."""
    leaves = edges.select(F.col(SRC).alias(DOC_ID), F.col(DST).alias(CLUSTER_ID))
    centres = edges.select(F.col(DST).alias(DOC_ID), F.col(DST).alias(CLUSTER_ID)).distinct()
    members = leaves.unionByName(centres)
    return members.withColumn(CLUSTER_SIZE, F.count(F.lit(1)).over(Window.partitionBy(CLUSTER_ID)))


def connected_components(pairs: DataFrame, *, max_rounds: int) -> Components:
    """(doc_a, doc_b) -> (doc_id, cluster_id, cluster_size) for every document in a pair.

    Raises:
        NotConvergedError: the graph is not a star forest after ``max_rounds`` rounds.
    """
    edges = oriented_edges(pairs).localCheckpoint(eager=True)
    rounds = 0
    while not is_star_forest(edges):
        if rounds == max_rounds:
            raise NotConvergedError(
                f"duplicate clusters did not converge in {max_rounds} rounds"
                " of large-star/small-star;"
                " raise clusters.max_rounds"
            )
        # a local checkpoint cuts the lineage each round, so round 30 plans like round 1
        edges = small_star(large_star(edges)).localCheckpoint(eager=True)
        rounds += 1
    return Components(star_members(edges), rounds)


def figures_in_one_task(pairs: DataFrame) -> dict[str, int]:
    """(doc_a, doc_b) -> the figures of their connected components (components,
    documents_in_components, largest_component), by :func:`shingling.decision.components` in one
    task: for a graph one executor holds (``dedup.finish_edges`` links), when only the figures
    are wanted (the summary's comparison), not the table."""
    schema = StructType(
        [StructField(name, LongType()) for name in ("components", "documents", "largest")]
    )

    def walk(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        links = [
            Link(a, b, 0.0)
            for batch in batches
            for a, b in zip(
                batch.column(DOC_A).to_pylist(), batch.column(DOC_B).to_pylist(), strict=True
            )
        ]
        sizes = Counter(components(links).values())
        yield pa.RecordBatch.from_pydict(
            {
                "components": [len(sizes)],
                "documents": [sum(sizes.values())],
                "largest": [max(sizes.values(), default=0)],
            },
            schema=pa.schema([(f.name, pa.int64()) for f in schema.fields]),
        )

    row = pairs.select(DOC_A, DOC_B).coalesce(1).mapInArrow(walk, schema).first()
    if row is None:  # no pairs (no partition to run on)
        return {
            "components": 0,
            "documents_in_components": 0,
            "largest_component": 0,
            "would_remove": 0,
        }
    return {
        "components": int(row["components"]),
        "documents_in_components": int(row["documents"]),
        "largest_component": int(row["largest"]),
        "would_remove": int(row["documents"]) - int(row["components"]),
    }
