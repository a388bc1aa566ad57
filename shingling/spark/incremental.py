"""Pure DataFrame steps of the nightly run: a batch of new documents against the index.

The pairs of one nightly run are the pairs of the whole corpus (index and batch together) that hold
at least one batch document, with the full run's scores, exact-duplicate groups and expansion of
groups into pairs (:mod:`shingling.spark.transforms`). So the union of the nightly pair tables equals the pair
table of one full run over everything (tested in tests/spark/test_nightly.py), with two documented
exceptions: an exact-duplicate group that grows past ``pairs.max_exact_group`` keeps the pairs its
members got while it was smaller, and the nightly join does not cap hot postings
(``pairs.max_posting``), so it finds pairs a capped full run links only through a star.

How: the batch's distinct texts, with a prefix of each sketch, go to every task as a broadcast, and
the index's live documents stream through them (:mod:`shingling.fast.probe`): each indexed sketch meets
the batch texts whose prefix holds one of its hashes, and each such pair is tested and scored by a
compiled loop. One scan of the index documents, no shuffle of anything index-sized, and no
candidate pair is ever a row. Why it is lossless: see :mod:`shingling.fast.probe`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pyarrow as pa
from pyspark import Broadcast
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_type

from shingling.fast import probe
from shingling.fast.probe import IN_BATCH, PROBE
from shingling.schema import (
    CONTAINMENT_A,
    CONTAINMENT_B,
    DOC_A,
    DOC_B,
    DOC_ID,
    JACCARD,
    MATCHES,
    N_SHINGLES,
    N_WORDS,
    NEAR_DUPLICATE,
    RELATION,
    SHINGLES_A,
    SHINGLES_B,
    SKETCH,
    TEXT_HASH,
)
from shingling.spark.stages import Cache, Verification
from shingling.spark.transforms import GROUP, exact_groups, expand_groups, sketched_only

KEY = (TEXT_HASH, N_WORDS)  # what makes two documents exact copies (see exact_groups)
RUN_DATE = "run_date"
ADDED = "added"


def probe_index(
    reps: DataFrame, probing: DataFrame, *, k: int, threshold: float, slices: int = 1
) -> DataFrame:
    """Batch texts + probing documents -> :func:`shingling.fast.probe.output_schema` rows: the pairs
    (batch text, probing document) reaching ``threshold``, and each probing document that is an
    exact copy of a batch text, listed without a pair.

    ``reps``: one row per distinct text of the batch (doc_id, n_shingles, sketch, text_hash,
    n_words). ``probing``: the same columns and ``in_batch`` (the batch's own rows, which find the
    pairs within the batch). The batch texts go to every task as a broadcast, ``slices`` of them
    at a time (each slice one scan of ``probing``): they pass through the driver, as the batch side
    of a Spark broadcast join does, and ``index.probe_documents`` bounds them. The probing rows
    are scanned where they are, never shuffled.
    """
    spark = reps.sparkSession
    columns = (DOC_ID, N_SHINGLES, SKETCH, TEXT_HASH, N_WORDS)
    id_type = probing.schema[DOC_ID].dataType
    schema = from_arrow_schema(probe.output_schema(to_arrow_type(id_type)))
    # every slice knows all the batch's texts: an indexed copy of one is a copy for all (16 bytes
    # a text), else another slice would score it as a document and its pairs would come twice
    texts = _broadcast(spark, reps.select(TEXT_HASH, N_WORDS)) if slices > 1 else None
    found = None
    for part in range(slices):
        mine = (
            reps if slices == 1 else reps.where(F.pmod(F.xxhash64(DOC_ID), F.lit(slices)) == part)
        )
        table = _broadcast(spark, mine.select(*columns))
        scan = _prober(table, texts, uuid.uuid4().hex, k=k, threshold=threshold)
        scanned = probing.select(*columns, IN_BATCH).mapInArrow(scan, schema)
        found = scanned if found is None else found.unionByName(scanned)
    assert found is not None
    return found


def _broadcast(spark: SparkSession, rows: DataFrame) -> Broadcast[bytes]:
    """A small DataFrame to every task, as Arrow IPC bytes (through the driver)."""
    sink = pa.BufferOutputStream()
    table = rows.toArrow()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return spark.sparkContext.broadcast(sink.getvalue().to_pybytes())


def _prober(
    table: Broadcast[bytes],
    texts: Broadcast[bytes] | None,
    name: str,
    *,
    k: int,
    threshold: float,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function of each task: the probe table (built once per Python worker, see
    :func:`shingling.fast.probe.shared_table`), and the task's rows streamed through it."""

    def build() -> probe.ProbeTable:
        def read(shared: Broadcast[bytes]) -> pa.Table:
            return pa.ipc.open_stream(shared.value).read_all()

        return probe.ProbeTable(
            read(table), k=k, threshold=threshold, texts=read(texts) if texts else None
        )

    def scan(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        prober = probe.shared_table(name, build)
        for batch in batches:
            yield prober.probe(batch)

    return scan


def nightly_pairs(
    batch: DataFrame,
    index_documents: DataFrame | None,
    *,
    threshold: float,
    k: int,
    max_exact_group: int,
    slices: int = 1,
    verify: Verification | None = None,
    cache: Cache | None = None,
) -> DataFrame:
    """Batch documents + live index -> the pair table rows that hold at least one batch document.

    The nightly's pair stage: Spark jobs run here (the probe tables are collected and broadcast,
    the pairs found are persisted and counted); what is persisted is recorded in ``cache``, to
    release once the result is written.

    With ``verify`` (texts of the batch and of the live index), pairs are found down to the
    candidate estimate and decided on their exact scores, as in the full run
    (:func:`shingling.spark.stages.near_duplicate_pairs`).

    ``batch``: the batch's documents table (ids unique). ``index_documents``: the index's live rows
    (documents table columns), without the batch's ids (a document that arrives again is replaced).
    The index is scanned once per slice of the batch (:func:`probe_index`), never shuffled; what
    follows is batch-sized.
    """
    cache = cache if cache is not None else Cache()
    cols = (DOC_ID, N_WORDS, N_SHINGLES, SKETCH, TEXT_HASH)
    new = sketched_only(batch).select(*cols)

    # one sketch per distinct text of the batch; copies carry the same sketch
    grouped_new = exact_groups(new)
    b_reps = grouped_new.where(F.col(DOC_ID) == F.col(GROUP)).select(
        DOC_ID, N_SHINGLES, SKETCH, *KEY
    )
    probing = b_reps.withColumn(IN_BATCH, F.lit(True))
    if index_documents is not None:
        old = sketched_only(index_documents).select(*cols).withColumn(IN_BATCH, F.lit(False))
        probing = old.unionByName(probing, allowMissingColumns=False)
    found = probe_index(
        b_reps,
        probing,
        k=k,
        threshold=threshold if verify is None else verify.candidate(threshold),
        slices=slices,
    )
    found = cache.persist(found)
    # computed here, once: the steps below read it several times, and two of them may start at
    # once (broadcasts), each scanning the index again while the cache is still empty
    found.count()

    scores = (MATCHES, JACCARD, CONTAINMENT_A, CONTAINMENT_B, SHINGLES_A)
    pair_rows = found.where(F.col(PROBE).isNotNull())
    # batch against index: scored once per distinct indexed text (its smallest id stands for it)
    against_index = (
        pair_rows.where(~F.col(IN_BATCH))
        .groupBy(PROBE, *KEY)
        .agg(
            F.min(DOC_ID).alias(DOC_B),
            *(F.first(c).alias(c) for c in scores),
            F.first(N_SHINGLES).alias(SHINGLES_B),
        )
        .withColumnRenamed(PROBE, DOC_A)
        .drop(*KEY)
    )
    # within the batch: found from one side or both, kept once, as the same row at every
    # computation (the row whose doc_a is the smaller id, when there are two)
    oriented = pair_rows.where(F.col(IN_BATCH)).select(
        F.col(PROBE).alias(DOC_A),
        F.col(DOC_ID).alias(DOC_B),
        *scores,
        F.col(N_SHINGLES).alias(SHINGLES_B),
    )
    within_batch = (
        oriented.groupBy(F.least(DOC_A, DOC_B), F.greatest(DOC_A, DOC_B))
        .agg(F.min_by(F.struct(*oriented.columns), F.col(DOC_A)).alias("row"))
        .select("row.*")
    )
    passed = against_index.unionByName(within_batch).withColumn(RELATION, F.lit(NEAR_DUPLICATE))
    if verify is not None:
        passed = verify.decide(passed, threshold=threshold, cache=cache)
    passed = cache.persist(passed)

    # every member, in index and batch, of the texts involved, grouped as the full run groups them:
    # the indexed copies of a scored text met the same batch texts, and those of a batch text were
    # listed
    members = found.where(~F.col(IN_BATCH)).select(*cols).dropDuplicates([DOC_ID]).unionByName(new)
    grouped = cache.persist(exact_groups(members))
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
