"""The keep policy's key, the tables of a decision, and the corpus left.

    corpus                -> keys (doc_id, keep_key): what the priority order sorts on
    decisions             -> removed (doc_id, kept_id, relation, jaccard, containment,
                                      exact_duplicate), clusters (doc_id, cluster_id, cluster_size)
    corpus + removed      -> the corpus without the removed documents, same columns

Pure DataFrame -> DataFrame steps; the policy arrives as plain values. The decision itself is
shingling/spark/decide.py (the rule: shingling/decision.py).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    MapType,
    StructType,
)

from shingling.decision import KEPT
from shingling.errors import BadInputError
from shingling.schema import DOC_ID, EXACT, JACCARD
from shingling.spark.connected_components import CLUSTER_ID, CLUSTER_SIZE
from shingling.spark.decide import CONTAINMENT, DECISION_RELATION, KEPT_ID
from shingling.spark.read import quoted

KEEP_KEY = "keep_key"

LONGEST = "longest"
SMALLEST_ID = "smallest_id"
COLUMN_PREFIX = "column:"


def keep_key(corpus: DataFrame, *, keep: str, text_column: str) -> Column | None:
    """The column a keep policy ranks documents by; None for smallest_id (the id decides alone).

    Raises:
        BadInputError: a ``column:<name>`` policy names a column the corpus lacks or cannot order.
    """
    if keep == SMALLEST_ID:
        return None
    if keep == LONGEST:
        return F.length(corpus[quoted(text_column)])
    name = keep.removeprefix(COLUMN_PREFIX)
    if name not in corpus.columns:
        raise BadInputError(
            f"dedup.keep names the column {name!r}, which is not in the corpus;"
            f" columns present: {', '.join(corpus.columns)}"
        )
    if isinstance(corpus.schema[name].dataType, ArrayType | MapType | StructType | BinaryType):
        raise BadInputError(
            f"dedup.keep column {name!r} is {corpus.schema[name].dataType.simpleString()};"
            " it must be a number, a string, a date or a timestamp"
        )
    return corpus[quoted(name)]


def keep_keys(corpus: DataFrame, *, id_column: str, key: Column) -> DataFrame:
    """Raw corpus -> (doc_id, keep_key)."""
    return corpus.select(corpus[quoted(id_column)].alias(DOC_ID), key.alias(KEEP_KEY))


def removed_documents(decisions: DataFrame) -> DataFrame:
    """Decisions -> one row per removed document: the kept document it was removed in favour of,
    what it is of it (near_duplicate or excerpt), and their pair's exact figures."""
    return decisions.where(F.col(DECISION_RELATION) != F.lit(KEPT)).select(
        DOC_ID, KEPT_ID, DECISION_RELATION, JACCARD, CONTAINMENT, EXACT
    )


def kept_clusters(decisions: DataFrame) -> DataFrame:
    """Decisions -> (doc_id, cluster_id, cluster_size): each kept document that documents were
    removed in favour of, and those documents; cluster_id is the kept id. A document kept with
    nothing removed in its favour is not listed (a singleton)."""
    sized = decisions.withColumn(CLUSTER_SIZE, F.count(F.lit(1)).over(Window.partitionBy(KEPT_ID)))
    return sized.where(F.col(CLUSTER_SIZE) > 1).select(
        DOC_ID, F.col(KEPT_ID).alias(CLUSTER_ID), CLUSTER_SIZE
    )


def deduplicated_corpus(
    corpus: DataFrame, removed: DataFrame, *, id_column: str, broadcast: bool = False
) -> DataFrame:
    """Raw corpus + removed table -> the corpus rows not removed, with the corpus's own columns.

    ``broadcast``: send the removed ids to every task, so that the corpus keeps its partitions
    and its order (no shuffle of its texts); for a removed table that fits in a task's memory.
    """
    ids = removed.select(F.col(DOC_ID).alias("_removed_id"))
    if broadcast:
        ids = F.broadcast(ids)
    return corpus.join(ids, corpus[quoted(id_column)] == ids["_removed_id"], "left_anti")
