"""Pure DataFrame steps of the nightly run: a batch of new documents against the index.

The pairs of one nightly run are the pairs of the whole corpus (index and batch together) that hold
at least one batch document, computed with the full run's own steps (:mod:`jobs.transforms`):
the same exact-duplicate groups, the same scoring, the same expansion of groups into pairs. So the
union of the nightly pair tables equals the pair table of one full run over everything (tested in
tests/jobs/test_nightly.py), with two documented exceptions: an exact-duplicate group that grows
past ``pairs.max_exact_group`` keeps the pairs its members got while it was smaller, and the
nightly join does not cap hot postings (``pairs.max_posting``), so it finds pairs a capped full run
links only through a star.

Why it is lossless: prefix filtering needs a global order only when both sides of the join use
prefixes. Here the batch's prefixes (rarest first, by the document frequency of each hash in index
and batch together) are joined with the *full* postings of the index and of the batch: a pair that
reaches the threshold shares one of the first n - t + 1 hashes of the batch sketch, whatever their
order, and that hash is among the other sketch's postings.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from jobs.schemas import (
    DOC_A,
    DOC_B,
    DOC_ID,
    JACCARD,
    N_SHINGLES,
    N_WORDS,
    SHINGLES_A,
    SHINGLES_B,
    SKETCH,
    TEXT_HASH,
)
from jobs.transforms import (
    GROUP,
    HASH,
    exact_groups,
    expand_groups,
    may_reach,
    min_shared,
    score_pairs,
    score_sketch_pairs,
    sketched_only,
)

KEY = (TEXT_HASH, N_WORDS)  # what makes two documents exact copies (see exact_groups)
RUN_DATE = "run_date"
ADDED = "added"


def batch_prefixes(postings: DataFrame, frequency: DataFrame, *, threshold: float) -> DataFrame:
    """(doc_id, hash, n) + (hash, df) -> (doc_id, hash): each sketch's first n - t + 1 hashes,
    rarest first (then by hash)."""
    ranked = postings.join(frequency, HASH).withColumn(
        "rank", F.row_number().over(Window.partitionBy(DOC_ID).orderBy("df", HASH))
    )
    keep = F.col("n") - min_shared(F.col("n"), threshold) + 1
    return ranked.where(F.col("rank") <= keep).select(DOC_ID, HASH)


def nightly_pairs(
    batch: DataFrame,
    index_documents: DataFrame | None,
    index_postings: DataFrame | None,
    *,
    threshold: float,
    k: int,
    max_exact_group: int,
) -> DataFrame:
    """Batch documents + live index -> the pair table rows that hold at least one batch document.

    ``batch``: the batch's documents table (ids unique). ``index_documents``: the index's live rows
    (documents table columns), without the batch's ids (a document that arrives again is replaced).
    ``index_postings``: (hash, doc_id) of the index; rows of documents not in ``index_documents``
    only add candidates that scoring drops. Both are scanned, never shuffled: every join against
    them is a broadcast of something the size of the batch.
    """
    cols = (DOC_ID, N_WORDS, N_SHINGLES, SKETCH, TEXT_HASH)
    new = sketched_only(batch).select(*cols)
    if index_documents is None or index_postings is None:
        old = new.limit(0)
        postings = new.select(F.lit(0).cast("long").alias(HASH), DOC_ID).limit(0)
    else:
        old = sketched_only(index_documents).select(*cols)
        postings = index_postings.select(HASH, DOC_ID)
    batch_keys = new.select(*KEY).distinct()

    # one sketch per distinct text of the batch; copies carry the same sketch
    grouped_new = exact_groups(new)
    b_reps = grouped_new.where(F.col(DOC_ID) == F.col(GROUP)).select(
        DOC_ID, N_SHINGLES, SKETCH, *KEY
    )
    b_reps = b_reps.persist()
    b_post = b_reps.select(
        DOC_ID, F.explode(SKETCH).alias(HASH), F.size(SKETCH).alias("n")
    ).persist()

    # document frequencies of the batch's hashes in index and batch together: one scan of the
    # index postings, aggregated at once (the rows are not kept)
    b_hashes = F.broadcast(b_post.select(HASH).distinct())
    in_index = postings.join(b_hashes, HASH).groupBy(HASH).agg(F.count(F.lit(1)).alias("di"))
    frequency = (
        b_post.groupBy(HASH)
        .agg(F.count(F.lit(1)).alias("db"))
        .join(in_index, HASH, "left")
        .select(HASH, (F.col("db") + F.coalesce(F.col("di"), F.lit(0))).alias("df"))
    )
    prefixes = batch_prefixes(b_post, frequency, threshold=threshold).persist()

    # batch against index: the index documents holding a batch prefix hash (a second scan of the
    # postings, keeping only those rows), without the index copies of batch texts (those are
    # exact duplicates, and pairs of their text are found from the batch's side)
    hits = (
        postings.join(F.broadcast(prefixes.withColumnRenamed(DOC_ID, "b")), HASH)
        .select("b", F.col(DOC_ID).alias("y"))
        .distinct()
    )
    y_docs = old.join(
        F.broadcast(hits.select(F.col("y").alias(DOC_ID)).distinct()), DOC_ID, "left_semi"
    )
    y_docs = y_docs.join(F.broadcast(batch_keys), list(KEY), "left_anti").persist()
    # each candidate meets both sketches, is tested (may_reach) before it is scored, and is scored
    # once per distinct index text: copies of one text have one sketch
    b_side = b_reps.select(
        F.col(DOC_ID).alias("b"), F.col(SKETCH).alias("sa"), F.col(N_SHINGLES).alias(SHINGLES_A)
    )
    y_side = y_docs.select(
        F.col(DOC_ID).alias("y"),
        F.col(SKETCH).alias("sb"),
        F.col(N_SHINGLES).alias(SHINGLES_B),
        *KEY,
    )
    index_candidates = (
        hits.join(y_side, "y")
        .join(F.broadcast(b_side), "b")
        .where(may_reach(k, threshold))
        .groupBy("b", *KEY)
        .agg(
            F.min("y").alias(DOC_B),
            *(F.first(c).alias(c) for c in ("sa", "sb", SHINGLES_A, SHINGLES_B)),
        )
        .withColumnRenamed("b", DOC_A)
        .drop(*KEY)
    )
    # batch against batch: its prefixes against its full postings
    p, q = prefixes.alias("p"), b_post.alias("q")
    batch_candidates = (
        p.join(q, HASH)
        .where(F.col(f"p.{DOC_ID}") != F.col(f"q.{DOC_ID}"))
        .select(
            F.least(f"p.{DOC_ID}", f"q.{DOC_ID}").alias(DOC_A),
            F.greatest(f"p.{DOC_ID}", f"q.{DOC_ID}").alias(DOC_B),
        )
        .distinct()
    )
    scored = score_sketch_pairs(index_candidates, k=k).unionByName(
        score_pairs(batch_candidates, b_reps.select(DOC_ID, N_SHINGLES, SKETCH), k=k)
    )
    passed = scored.where(F.col(JACCARD) >= threshold).persist()

    # every member, in index and batch, of the texts involved, grouped as the full run groups them
    scoring_keys = b_reps.select(DOC_ID, *KEY).unionByName(y_docs.select(DOC_ID, *KEY))
    pass_ids = passed.select(F.col(DOC_A).alias(DOC_ID)).unionByName(
        passed.select(F.col(DOC_B).alias(DOC_ID))
    )
    keys = pass_ids.join(scoring_keys, DOC_ID).select(*KEY).unionByName(batch_keys).distinct()
    members = old.join(F.broadcast(keys), list(KEY), "left_semi").unionByName(new)
    grouped = exact_groups(members).persist()
    to_rep = grouped.select(DOC_ID, GROUP)
    # scoring used some member of each text; the pair table's groups speak of their representative
    rep_pairs = (
        passed.join(to_rep.withColumnRenamed(DOC_ID, DOC_A), DOC_A)
        .drop(DOC_A)
        .withColumnRenamed(GROUP, DOC_A)
        .join(to_rep.withColumnRenamed(DOC_ID, DOC_B), DOC_B)
        .drop(DOC_B)
        .withColumnRenamed(GROUP, DOC_B)
    )
    expanded = expand_groups(rep_pairs, grouped, max_exact_group=max_exact_group)
    fresh = new.select(DOC_ID, F.lit(True).alias("fresh"))
    return (
        expanded.join(
            F.broadcast(fresh.withColumnRenamed(DOC_ID, DOC_A).withColumnRenamed("fresh", "fa")),
            DOC_A,
            "left",
        )
        .join(
            F.broadcast(fresh.withColumnRenamed(DOC_ID, DOC_B).withColumnRenamed("fresh", "fb")),
            DOC_B,
            "left",
        )
        .where(F.col("fa").isNotNull() | F.col("fb").isNotNull())
        .select(*expanded.columns)
    )


def current_pairs(pairs: DataFrame, index_documents: DataFrame) -> DataFrame:
    """Pair table (with run_date) + the index's live documents -> the pairs still current.

    The pair table is append-only: when a document arrives again under its id, the pairs made with
    its old version stay in their run's partition. A pair is current when it was made on or after
    the run that added the present version of both its documents (``added``); this drops exactly
    the pairs made with replaced versions.
    """
    added = index_documents.select(DOC_ID, ADDED)
    a = added.select(F.col(DOC_ID).alias(DOC_A), F.col(ADDED).alias("added_a"))
    b = added.select(F.col(DOC_ID).alias(DOC_B), F.col(ADDED).alias("added_b"))
    run = F.col(RUN_DATE).cast("string")
    return (
        pairs.join(a, DOC_A)
        .join(b, DOC_B)
        .where((run >= F.col("added_a")) & (run >= F.col("added_b")))
        .select(*pairs.columns)
    )
