"""Which document of each cluster to keep, what each removed one duplicated, and the corpus left.

    clusters + corpus keys -> kept (doc_id, cluster_id, cluster_size, kept_id)
    kept + linking pairs   -> removed (doc_id, cluster_id, kept_id, linked_id, jaccard,
                                       exact_duplicate, verified)
    corpus + removed       -> the corpus without the removed documents, same columns

Pure DataFrame -> DataFrame steps; the policy arrives as plain values.
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

from jobs.clusters import CLUSTER_ID
from jobs.errors import BadInputError
from jobs.io import quoted
from jobs.schemas import DOC_A, DOC_B, DOC_ID, EXACT, JACCARD
from jobs.verify import VERIFIED

KEPT_ID = "kept_id"
LINKED_ID = "linked_id"
KEEP_KEY = "keep_key"
_OTHER = "other"

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


def choose_kept(clusters: DataFrame, keys: DataFrame | None, *, descending: bool) -> DataFrame:
    """(doc_id, cluster_id, cluster_size) + (doc_id, keep_key) -> the same rows plus kept_id.

    The kept document of a cluster has the largest key (``descending``) or the smallest; a null
    key never wins, and ties go to the smallest id. Without keys it is the smallest id, which is
    the cluster id.
    """
    if keys is None:
        return clusters.withColumn(KEPT_ID, F.col(CLUSTER_ID))
    order = F.col(KEEP_KEY).desc_nulls_last() if descending else F.col(KEEP_KEY).asc_nulls_last()
    best_first = Window.partitionBy(CLUSTER_ID).orderBy(order, F.col(DOC_ID).asc())
    return (
        clusters.join(keys, DOC_ID, "left")
        .withColumn(KEPT_ID, F.first(DOC_ID).over(best_first))
        .drop(KEEP_KEY)
    )


def incident_pairs(pairs: DataFrame) -> DataFrame:
    """Linking pairs -> (doc_id, other, jaccard, exact_duplicate, verified), from both ends."""
    scores = (JACCARD, EXACT, VERIFIED)
    return pairs.select(
        F.col(DOC_A).alias(DOC_ID), F.col(DOC_B).alias(_OTHER), *scores
    ).unionByName(pairs.select(F.col(DOC_B).alias(DOC_ID), F.col(DOC_A).alias(_OTHER), *scores))


def removed_documents(kept: DataFrame, pairs: DataFrame) -> DataFrame:
    """Kept table + the linking pairs (with ``verified``) -> one row per removed document.

    ``linked_id`` and ``jaccard`` name the pair that put the document in its cluster: its pair with
    the kept document when the table has one, else its best-scoring pair (ties: smallest id).
    """
    removed = kept.where(F.col(DOC_ID) != F.col(KEPT_ID)).select(DOC_ID, CLUSTER_ID, KEPT_ID)
    best_link = Window.partitionBy(DOC_ID).orderBy(
        (F.col(_OTHER) == F.col(KEPT_ID)).desc(), F.col(JACCARD).desc(), F.col(_OTHER).asc()
    )
    return (
        removed.join(incident_pairs(pairs), DOC_ID)
        .withColumn("rank", F.row_number().over(best_link))
        .where(F.col("rank") == 1)
        .select(
            DOC_ID, CLUSTER_ID, KEPT_ID, F.col(_OTHER).alias(LINKED_ID), JACCARD, EXACT, VERIFIED
        )
    )


def deduplicated_corpus(corpus: DataFrame, removed: DataFrame, *, id_column: str) -> DataFrame:
    """Raw corpus + removed table -> the corpus rows not removed, with the corpus's own columns."""
    ids = removed.select(F.col(DOC_ID).alias("_removed_id"))
    return corpus.join(ids, corpus[quoted(id_column)] == ids["_removed_id"], "left_anti")
