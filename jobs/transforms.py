"""Pure DataFrame -> DataFrame steps of the near-duplicate job. No session, paths or config here.

Chain them with ``df.transform(fn, **kw)``; each docstring names the columns in and out.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from jobs.schemas import (
    DOC_A,
    DOC_B,
    DOC_ID,
    EXACT,
    JACCARD,
    MATCHES,
    N_SHINGLES,
    N_WORDS,
    SHINGLES_A,
    SHINGLES_B,
    SKETCH,
    SKIP_NO_WORDS,
    SKIP_NULL_ID,
    SKIP_NULL_TEXT,
    SKIP_REASON,
    TEXT,
    TEXT_HASH,
    documents_schema,
)
from shingling.batch import sketch_batch

HASH = "hash"
GROUP = "group_rep"
GROUP_SIZE = "group_size"


def sketch_documents(docs: DataFrame, *, width: int, k: int) -> DataFrame:
    """(doc_id, text) -> (doc_id, n_words, n_shingles, sketch, text_hash, skip_reason).

    One row per input row: its bottom-k sketch, or a null sketch and the reason it has none. Runs
    :func:`shingling.batch.sketch_batch` on the executors, one Arrow batch at a time.
    """
    schema = documents_schema(docs.schema[DOC_ID].dataType)

    def sketch_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ids, texts = batch.column(DOC_ID), batch.column(TEXT)
            null_id = pc.is_null(ids)
            out = sketch_batch(pc.if_else(null_id, None, texts), width=width, k=k)
            reason = pc.if_else(
                null_id,
                SKIP_NULL_ID,
                pc.if_else(
                    pc.is_null(texts),
                    SKIP_NULL_TEXT,
                    pc.if_else(pc.is_null(out.sketch), SKIP_NO_WORDS, None),
                ),
            )
            yield pa.RecordBatch.from_arrays(
                [ids, pa.array(out.n_words), pa.array(out.n_shingles), out.sketch, out.text_hash, reason],
                names=schema.fieldNames(),
            )

    return docs.mapInArrow(sketch_batches, schema)


def sketched_only(documents: DataFrame) -> DataFrame:
    """documents table -> its rows that have a sketch."""
    return documents.where(F.col(SKIP_REASON).isNull())


def exact_groups(documents: DataFrame) -> DataFrame:
    """Sketched documents -> the same rows plus group_rep and group_size.

    Documents with the same normalized text (same text hash and word count) form a group; its
    representative is its smallest id.
    """
    same_text = Window.partitionBy(TEXT_HASH, N_WORDS)
    return documents.withColumn(GROUP, F.min(DOC_ID).over(same_text)).withColumn(
        GROUP_SIZE, F.count(F.lit(1)).over(same_text)
    )


def representatives(grouped: DataFrame) -> DataFrame:
    """Grouped documents -> one row per group, its representative's (doc_id, n_shingles, sketch)."""
    return grouped.where(F.col(DOC_ID) == F.col(GROUP)).select(DOC_ID, N_SHINGLES, SKETCH)


def _min_shared(size: Column, threshold: float) -> Column:
    # The fewest shared hashes a pair with this sketch size can have and still reach the threshold,
    # rounded down (a hair below the exact product) so that float error can only lengthen prefixes.
    return F.greatest(F.ceil(size * F.lit(threshold) - F.lit(1e-9)), F.lit(1))


def prefix_rows(reps: DataFrame, *, threshold: float) -> DataFrame:
    """(doc_id, sketch) -> (doc_id, hash): each sketch's prefix, rarest hashes first.

    Prefix filtering (Bayardo et al. 2007) is lossless: a pair whose estimate reaches the threshold
    shares at least t = ceil(threshold * n) of the n hashes of either sketch, so under any global
    order of hashes their first n - t + 1 hashes meet. Ordering by document frequency keeps the hot
    hashes (boilerplate, templates) out of the join unless a sketch holds nothing rarer.
    """
    exploded = reps.select(DOC_ID, F.explode(SKETCH).alias(HASH), F.size(SKETCH).alias("n"))
    with_freq = exploded.withColumn("df", F.count(F.lit(1)).over(Window.partitionBy(HASH)))
    ranked = with_freq.withColumn(
        "rank", F.row_number().over(Window.partitionBy(DOC_ID).orderBy("df", HASH))
    )
    prefix_len = F.col("n") - _min_shared(F.col("n"), threshold) + 1
    return ranked.where(F.col("rank") <= prefix_len).select(DOC_ID, HASH)


def candidate_pairs(prefixes: DataFrame) -> DataFrame:
    """(doc_id, hash) -> distinct (doc_a, doc_b), doc_a < doc_b, for documents sharing a hash."""
    a, b = prefixes.alias("a"), prefixes.alias("b")
    joined = a.join(b, on=F.col(f"a.{HASH}") == F.col(f"b.{HASH}"))
    return (
        joined.where(F.col(f"a.{DOC_ID}") < F.col(f"b.{DOC_ID}"))
        .select(F.col(f"a.{DOC_ID}").alias(DOC_A), F.col(f"b.{DOC_ID}").alias(DOC_B))
        .distinct()
    )


def score_pairs(candidates: DataFrame, reps: DataFrame, *, k: int) -> DataFrame:
    """(doc_a, doc_b) -> + matches, jaccard, shingles_a, shingles_b, from both sketches.

    ``matches`` is |S(A) ∩ S(B)|; ``jaccard`` is the share of the k smallest hashes of S(A) ∪ S(B)
    that lie in both sketches, as in :func:`shingling.estimators.jaccard`.
    """
    a = reps.select(F.col(DOC_ID).alias(DOC_A), F.col(SKETCH).alias("sa"), F.col(N_SHINGLES).alias(SHINGLES_A))
    b = reps.select(F.col(DOC_ID).alias(DOC_B), F.col(SKETCH).alias("sb"), F.col(N_SHINGLES).alias(SHINGLES_B))
    both = F.array_intersect("sa", "sb")
    sample = F.slice(F.array_sort(F.array_union("sa", "sb")), 1, k)
    return (
        candidates.join(a, DOC_A)
        .join(b, DOC_B)
        .select(
            DOC_A,
            DOC_B,
            F.size(both).alias(MATCHES),
            (F.size(F.array_intersect(sample, both)) / F.size(sample)).alias(JACCARD),
            SHINGLES_A,
            SHINGLES_B,
        )
    )


def expand_groups(rep_pairs: DataFrame, grouped: DataFrame, *, max_exact_group: int) -> DataFrame:
    """Pairs of representatives + grouped documents -> pairs of documents (the pair table).

    A pair of representatives stands for every pair of their groups' members; a group of at most
    ``max_exact_group`` members adds every pair of its members, a larger one each member paired with
    its representative (and only the representative stands for it in other pairs).
    """
    small = F.col(GROUP_SIZE) <= max_exact_group
    standing = grouped.where(small | (F.col(DOC_ID) == F.col(GROUP))).select(GROUP, DOC_ID)
    ea = standing.select(F.col(GROUP).alias(DOC_A), F.col(DOC_ID).alias("ma"))
    eb = standing.select(F.col(GROUP).alias(DOC_B), F.col(DOC_ID).alias("mb"))
    across = (
        rep_pairs.join(ea, DOC_A)
        .join(eb, DOC_B)
        .select(
            F.least("ma", "mb").alias(DOC_A),
            F.greatest("ma", "mb").alias(DOC_B),
            MATCHES,
            JACCARD,
            # the shingle counts follow the members, which may have swapped sides
            F.when(F.col("ma") < F.col("mb"), F.col(SHINGLES_A)).otherwise(F.col(SHINGLES_B)).alias(SHINGLES_A),
            F.when(F.col("ma") < F.col("mb"), F.col(SHINGLES_B)).otherwise(F.col(SHINGLES_A)).alias(SHINGLES_B),
            F.lit(False).alias(EXACT),
        )
    )
    copies = grouped.where(F.col(GROUP_SIZE) > 1).select(
        GROUP, DOC_ID, GROUP_SIZE, N_SHINGLES, F.size(SKETCH).cast("int").alias(MATCHES)
    )
    # every pair within a small group; a large one only pairs its representative with each member,
    # so its cost stays linear in its size
    x = copies.where(small | (F.col(DOC_ID) == F.col(GROUP))).alias("x")
    y = copies.alias("y")
    within = x.join(
        y, (F.col(f"x.{GROUP}") == F.col(f"y.{GROUP}")) & (F.col(f"x.{DOC_ID}") < F.col(f"y.{DOC_ID}"))
    ).select(
        F.col(f"x.{DOC_ID}").alias(DOC_A),
        F.col(f"y.{DOC_ID}").alias(DOC_B),
        F.col(f"x.{MATCHES}"),
        F.lit(1.0).alias(JACCARD),
        F.col(f"x.{N_SHINGLES}").alias(SHINGLES_A),
        F.col(f"y.{N_SHINGLES}").alias(SHINGLES_B),
        F.lit(True).alias(EXACT),
    )
    return across.unionByName(within)


def near_duplicate_pairs(
    documents: DataFrame, *, threshold: float, k: int, max_exact_group: int
) -> DataFrame:
    """documents table -> pair table: every pair whose Jaccard estimate reaches ``threshold``."""
    grouped = exact_groups(sketched_only(documents))
    reps = representatives(grouped)
    scored = score_pairs(candidate_pairs(prefix_rows(reps, threshold=threshold)), reps, k=k)
    rep_pairs = scored.where(F.col(JACCARD) >= threshold)
    return expand_groups(rep_pairs, grouped, max_exact_group=max_exact_group)
