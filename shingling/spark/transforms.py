"""Pure DataFrame -> DataFrame steps of the near-duplicate job. No session, paths or config here,
and no Spark job: building a plan here runs nothing (tests/spark/test_stages.py checks). What must
run before a plan can be built (a count, the frequency sketch, a broadcast, a cache) is in
:mod:`shingling.spark.stages`, which chains these steps.

Chain them with ``df.transform(fn, **kw)``; each docstring names the columns in and out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import Accumulator, AccumulatorParam, Broadcast, SparkContext, TaskContext
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema, to_arrow_type
from pyspark.sql.types import BinaryType, LongType, StructField, StructType

from shingling.fast.frequency import FrequencySketch
from shingling.fast.postings import (
    FREQUENCY,
    SKETCH_A,
    SKETCH_B,
    STAR,
    JoinWork,
    output_schema,
    score_pair_batch,
    score_sorted_batches,
)
from shingling.fast.postings import prefix_rows as prefix_batch
from shingling.fast.sketch import sketch_batch
from shingling.fast.text import invalid_utf8
from shingling.pairs import DERIVED, derived_columns, pair_table
from shingling.schema import (
    CONTAINMENT_A,
    CONTAINMENT_B,
    DOC_A,
    DOC_B,
    DOC_ID,
    EARLIER,
    EXACT,
    HASH,
    JACCARD,
    JACCARD_ESTIMATE,
    MATCHES,
    MEASURED_PAIR_COLUMNS,
    N_SHINGLES,
    N_WORDS,
    NEAR_DUPLICATE,
    RELATION,
    SCORED_COLUMNS,
    SHINGLES_A,
    SHINGLES_B,
    SKETCH,
    SKIP_DUPLICATE_ID,
    SKIP_INVALID_UTF8,
    SKIP_NO_WORDS,
    SKIP_NULL_ID,
    SKIP_NULL_TEXT,
    SKIP_REASON,
    TEXT,
    TEXT_CHECKSUM,
    TEXT_HASH,
    arrow_fields,
)
from shingling.spark.rules import flipped, prefix_length
from shingling.spark.schemas import documents_schema

GROUP = "group_rep"
GROUP_SIZE = "group_size"
REPEATED_ID = "repeated_id"


def sketch_documents(
    docs: DataFrame, *, width: int, k: int, unit: str = "words", sample_mod: int = 0
) -> DataFrame:
    """(doc_id, text[, repeated_id]) -> (doc_id, n_words, n_shingles, sketch, text_hash, skip_reason,
    text_checksum).

    One row per input row: its sketch, or a null sketch and the reason it has none (rows whose
    ``repeated_id`` is true are skipped as ``duplicate_id``; see also :func:`skip_repeated_ids`). Runs
    :func:`shingling.fast.sketch.sketch_batch` on the executors, one Arrow batch at a time; ``n_words``
    counts the tokens shingles are made of (characters when ``unit`` is "chars").

    Parquet readers do not check that a string column holds UTF-8; Arrow's text kernels refuse
    bytes that are not, and would fail the whole batch. Such a text is found on the executors
    (:func:`shingling.fast.text.invalid_utf8`) and skipped as ``invalid_utf8`` instead.
    """
    schema = documents_schema(docs.schema[DOC_ID].dataType)
    repeated = F.col(REPEATED_ID) if REPEATED_ID in docs.columns else F.lit(False)
    checked = docs.select(
        DOC_ID,
        F.when(~repeated, F.col(TEXT)).alias(TEXT),
        repeated.alias(REPEATED_ID),
        # in the JVM (shingling.hashing.text_checksum); kept for the documents that have a sketch
        F.when(~repeated & F.col(TEXT).isNotNull(), F.xxhash64(TEXT)).alias(TEXT_CHECKSUM),
    )

    def sketch_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ids, texts = batch.column(DOC_ID), batch.column(TEXT)
            null_id = pc.is_null(ids)
            invalid = invalid_utf8(texts)
            repeated = batch.column(REPEATED_ID)
            out = sketch_batch(
                pc.if_else(pc.or_(null_id, invalid), None, texts),
                width=width,
                k=k,
                unit=unit,
                sample_mod=sample_mod,
            )
            reason = pc.if_else(
                null_id,
                SKIP_NULL_ID,
                pc.if_else(
                    repeated,
                    SKIP_DUPLICATE_ID,
                    pc.if_else(
                        invalid,
                        SKIP_INVALID_UTF8,
                        pc.if_else(
                            pc.is_null(texts),
                            SKIP_NULL_TEXT,
                            pc.if_else(pc.is_null(out.sketch), SKIP_NO_WORDS, None),
                        ),
                    ),
                ),
            )
            yield pa.RecordBatch.from_arrays(
                [
                    ids,
                    pa.array(out.n_words),
                    pa.array(out.n_shingles),
                    out.sketch,
                    out.text_hash,
                    reason,
                    pc.if_else(pc.is_null(reason), batch.column(TEXT_CHECKSUM), None),
                ],
                names=schema.fieldNames(),
            )

    return checked.mapInArrow(sketch_batches, schema)


def skip_repeated_ids(documents: DataFrame) -> DataFrame:
    """documents table -> the same rows, with every row of an id found twice or more skipped as
    ``duplicate_id`` (no sketch): which of them is the document cannot be known.

    Runs on the documents table after sketching, not on the corpus before: a window over the ids
    shuffles ids and sketches, never texts, and :func:`shingling.spark.summary.count_documents` over
    this finds the repeated rows in the pass that counts the documents anyway. The same as flagging
    the rows before sketching (``repeated_id``, see :func:`sketch_documents`): a null id stays
    ``null_id``, any other reason gives way to ``duplicate_id``.
    """
    # null ids are never repeated ids, and would all meet in one partition of the window
    counted = documents.where(F.col(DOC_ID).isNotNull()).withColumn(
        REPEATED_ID, F.count(F.lit(1)).over(Window.partitionBy(DOC_ID)) > 1
    )
    nulls = documents.where(F.col(DOC_ID).isNull()).withColumn(REPEATED_ID, F.lit(False))
    return counted.unionByName(nulls).select(
        DOC_ID,
        *(
            F.when(F.col(REPEATED_ID), F.lit(0).cast("long")).otherwise(F.col(c)).alias(c)
            for c in (N_WORDS, N_SHINGLES)
        ),
        *(F.when(~F.col(REPEATED_ID), F.col(c)).alias(c) for c in (SKETCH, TEXT_HASH)),
        F.when(F.col(REPEATED_ID), F.lit(SKIP_DUPLICATE_ID))
        .otherwise(F.col(SKIP_REASON))
        .alias(SKIP_REASON),
        *(
            [F.when(~F.col(REPEATED_ID), F.col(TEXT_CHECKSUM)).alias(TEXT_CHECKSUM)]
            if TEXT_CHECKSUM in documents.columns
            else []
        ),
    )


def sketched_only(documents: DataFrame) -> DataFrame:
    """documents table -> its rows that have a sketch."""
    return documents.where(F.col(SKIP_REASON).isNull())


def exact_groups(documents: DataFrame, copies: DataFrame | None = None) -> DataFrame:
    """Sketched documents -> the same rows plus group_rep and group_size.

    Documents with the same normalized text (same text hash and token count) form a group; its
    representative is its smallest id. ``copies``: the groups of two or more, if already found
    (:func:`copy_groups`), joined to the documents (mark it for broadcast when it is small, and
    the documents stay where they are); else a window over the documents, which shuffles them.
    """
    if copies is None:
        same_text = Window.partitionBy(TEXT_HASH, N_WORDS)
        return documents.withColumn(GROUP, F.min(DOC_ID).over(same_text)).withColumn(
            GROUP_SIZE, F.count(F.lit(1)).over(same_text)
        )
    return documents.join(copies, [TEXT_HASH, N_WORDS], "left").select(
        *documents.columns,
        F.coalesce(F.col(GROUP), F.col(DOC_ID)).alias(GROUP),
        F.coalesce(F.col(GROUP_SIZE), F.lit(1).cast("long")).alias(GROUP_SIZE),
    )


def copy_groups(documents: DataFrame) -> DataFrame:
    """Sketched documents -> (text_hash, n_words, group_rep, group_size) of each group of two or
    more exact copies: an aggregate that reads three narrow columns, not the sketches."""
    return (
        documents.groupBy(TEXT_HASH, N_WORDS)
        .agg(F.min(DOC_ID).alias(GROUP), F.count(F.lit(1)).alias(GROUP_SIZE))
        .where(F.col(GROUP_SIZE) > 1)
    )


def representatives(grouped: DataFrame) -> DataFrame:
    """Grouped documents -> one row per group, its representative's (doc_id, n_shingles, sketch)."""
    return grouped.where(F.col(DOC_ID) == F.col(GROUP)).select(DOC_ID, N_SHINGLES, SKETCH)


def shared_hashes(reps: DataFrame) -> DataFrame:
    """(doc_id, sketch) -> (hash, df): the hashes found in at least two sketches, with their count."""
    exploded = reps.select(F.explode(SKETCH).alias(HASH))
    return exploded.groupBy(HASH).agg(F.count(F.lit(1)).alias("df")).where(F.col("df") >= 2)


@dataclass(frozen=True)
class SharedFrequencies:
    """A frequency sketch as the tasks get it: its bytes in a broadcast (made by
    :func:`shingling.spark.stages.share_frequencies`), and its shape."""

    table: Broadcast[bytes]
    width: int
    depth: int


def prefix_rows(
    reps: DataFrame,
    *,
    threshold: float,
    k: int,
    frequencies: SharedFrequencies | None,
    max_posting: int | None = None,
) -> DataFrame:
    """(doc_id, sketch, ...) -> (hash, doc_id, sketch, ...): the part of each sketch's prefix that
    can meet another, with the document's columns (the sketch packed as binary).

    Prefix filtering (Bayardo et al. 2007) is lossless: a pair whose estimate reaches the threshold
    shares at least t = ceil(threshold * n) of the n hashes of either sketch's bottom-k part, so
    under any global order of hashes their first p = n - t + 1 hashes meet. The order is rarest
    first by ``frequencies`` (estimated document frequency, then hash; see
    :mod:`shingling.fast.frequency`), which keeps hot hashes (boilerplate, templates) out of the join
    unless a sketch holds nothing rarer. A hash estimated in one sketch at most comes first and can
    meet nothing, so it is never a row: a sketch with u such hashes keeps the p - u rarest of the
    others. Most documents of a corpus have no near-duplicate; their prefixes are empty.

    Each task selects the prefixes of its own documents (no shuffle): ``frequencies`` goes to the
    tasks as a broadcast. With None, the order is by exact document frequencies counted within
    the plan (:func:`with_frequencies`, two shuffles of the sketches' hashes): nothing needs to
    run before the plan is built.
    """
    source = reps if frequencies is not None else with_frequencies(reps, k=k)
    # the sketch packed into one binary value (shingling.fast.postings.pack): Spark copies it whole
    # where an array costs a write per element at each Arrow conversion
    fields = [
        StructField(f.name, BinaryType(), f.nullable) if f.name == SKETCH else f
        for f in source.schema.fields
        if f.name != FREQUENCY
    ]
    schema = StructType(
        [StructField(HASH, LongType(), False), *fields, StructField(EARLIER, LongType(), False)]
    )
    shared = frequencies

    def select(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = None
        if shared is not None:
            table = FrequencySketch.from_bytes(shared.table.value, shared.width, shared.depth)
        for batch in batches:
            yield prefix_batch(batch, table, k=k, threshold=threshold, max_posting=max_posting or 0)

    return source.mapInArrow(select, schema)


def with_frequencies(reps: DataFrame, *, k: int) -> DataFrame:
    """(doc_id, n_shingles, sketch) of bottom-k sketches -> the same and ``frequency``: the number
    of sketches holding each of its hashes, aligned with it.

    Counted by a window over the hashes (one shuffle of every sketch hash, by hash), then each
    document's hashes brought back together in their order (a shuffle by document): the exact
    counts of the broadcast count-min table's estimates, and no Spark job before the plan runs.
    """
    position = "position"
    hashes = reps.select(
        DOC_ID, N_SHINGLES, F.posexplode(F.slice(SKETCH, 1, k)).alias(position, HASH)
    )
    counted = hashes.withColumn(FREQUENCY, F.count(F.lit(1)).over(Window.partitionBy(HASH)))
    parts = F.sort_array(F.collect_list(F.struct(position, HASH, FREQUENCY)))
    return (
        counted.groupBy(DOC_ID, N_SHINGLES)
        .agg(parts.alias("parts"))
        .select(
            DOC_ID,
            N_SHINGLES,
            F.col(f"parts.{HASH}").alias(SKETCH),
            F.col(f"parts.{FREQUENCY}").alias(FREQUENCY),
        )
    )


def containment_candidates(
    reps: DataFrame, *, threshold: float, max_posting: int | None
) -> DataFrame:
    """(doc_id, sketch) -> distinct (doc_a, doc_b): the pairs where one may hold ``threshold`` of
    the other.

    A containment estimate reads A's first p hashes in value order (those both sketches know) and
    needs ceil(threshold * p) of them shared; so one shared hash is among A's first
    p - ceil(threshold * p) + 1, which never exceeds n - ceil(threshold * n) + 1 for A's n hashes.
    Those value-order heads are joined against every shared hash of the other sketches: lossless.
    Hashes in more than ``max_posting`` sketches are common text (Broder's "common shingles") and
    are not used to find excerpts, which bounds the join.
    """
    postings = reps.select(DOC_ID, F.explode(SKETCH).alias(HASH)).join(shared_hashes(reps), HASH)
    if max_posting is not None:
        postings = postings.where(F.col("df") <= max_posting)
    rows = postings.select(DOC_ID, HASH)
    n = F.size(SKETCH)
    head = reps.select(
        DOC_ID, F.explode(F.slice(SKETCH, 1, prefix_length(n, threshold))).alias(HASH)
    )
    heads = head.join(rows, [DOC_ID, HASH], "left_semi")
    a, b = heads.alias("a"), rows.alias("b")
    ida, idb = F.col(f"a.{DOC_ID}"), F.col(f"b.{DOC_ID}")
    pairs = a.join(b, F.col(f"a.{HASH}") == F.col(f"b.{HASH}")).where(ida != idb)
    return pairs.select(
        F.least(ida, idb).alias(DOC_A), F.greatest(ida, idb).alias(DOC_B)
    ).distinct()


def score_pairs(
    candidates: DataFrame,
    reps: DataFrame,
    *,
    k: int,
    threshold: float = 0.0,
    containment_threshold: float | None = None,
) -> DataFrame:
    """(doc_a, doc_b) -> the pair table's columns but exact_duplicate, from both sketches, scored
    by the compiled scorer (:func:`shingling.fast.postings.score_pair_batch`).

    ``matches`` is |S(A) ∩ S(B)| over the bottom-k parts; ``jaccard`` the share of the k smallest
    hashes of their union that lie in both (:func:`shingling.estimators.jaccard`); ``containment_a``
    and ``containment_b`` estimate |A ∩ B| / |A| and / |B| (:func:`shingling.estimators.containment`).
    ``relation`` is near_duplicate when jaccard reaches ``threshold``, else a_in_b or b_in_a when
    that containment reaches ``containment_threshold`` (None: never), else null.
    """
    a = reps.select(
        F.col(DOC_ID).alias(DOC_A),
        F.col(SKETCH).alias(SKETCH_A),
        F.col(N_SHINGLES).alias(SHINGLES_A),
    )
    b = reps.select(
        F.col(DOC_ID).alias(DOC_B),
        F.col(SKETCH).alias(SKETCH_B),
        F.col(N_SHINGLES).alias(SHINGLES_B),
    )
    pairs = candidates.join(a, DOC_A).join(b, DOC_B)
    id_type = to_arrow_type(pairs.schema[DOC_A].dataType)
    schema = from_arrow_schema(pa.schema(arrow_fields(SCORED_COLUMNS, id_type)))

    def score(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield score_pair_batch(
                batch, k=k, threshold=threshold, containment_threshold=containment_threshold
            )

    return pairs.select(DOC_A, DOC_B, SKETCH_A, SKETCH_B, SHINGLES_A, SHINGLES_B).mapInArrow(
        score, schema
    )


class _IdSet(AccumulatorParam):
    """An accumulator of a set of ids: the union of the tasks' sets. A union is idempotent, so a
    task run twice (a retry, a plan read twice) counts each id once."""

    def zero(self, value: set[Any]) -> set[Any]:
        return set()

    def addInPlace(self, value1: set[Any], value2: set[Any]) -> set[Any]:  # noqa: N802 - Spark's
        value1 |= value2
        return value1


class CappedDocuments:
    """The documents a capped posting paired by star (centre and members), each counted once
    however many capped postings hold it (``pairs.capped_documents`` in the summary).

    Gathered on the executors while the pairs are computed (an accumulator of the ids: the driver
    holds one id per capped document, none when nothing is capped), no extra pass.
    """

    def __init__(self) -> None:
        self.ids: Accumulator[set[Any]] | None = None

    def attach(self, sc: SparkContext) -> Accumulator[set[Any]]:
        if self.ids is None:
            self.ids = sc.accumulator(set(), _IdSet())
        return self.ids

    def count(self) -> int:
        return len(self.ids.value) if self.ids is not None else 0


class _ByTask(AccumulatorParam):
    """An accumulator of one value per task (its partition of the stage): a task run twice (a
    retry, a plan read twice) writes the same value under the same key, so it counts once."""

    def zero(self, value: dict[int, Any]) -> dict[int, Any]:
        return {}

    def addInPlace(  # noqa: N802 - Spark's
        self, value1: dict[int, Any], value2: dict[int, Any]
    ) -> dict[int, Any]:
        value1.update(value2)
        return value1


class JoinWorkCounter:
    """The posting loop's work over the whole join (:class:`shingling.fast.postings.JoinWork`:
    ``pairs.pairs_tested``, ``pairs.signature_passes`` and the loop's part of
    ``pairs.candidate_pairs`` in the summary), gathered on the executors as the pairs are computed
    (each task's count, once), no extra pass."""

    def __init__(self) -> None:
        self.tasks: Accumulator[dict[int, tuple[int, int, int]]] | None = None

    def attach(self, sc: SparkContext) -> Accumulator[dict[int, tuple[int, int, int]]]:
        if self.tasks is None:
            self.tasks = sc.accumulator({}, _ByTask())
        return self.tasks

    def total(self) -> JoinWork:
        work = JoinWork()
        for tested, passes, scored in (self.tasks.value if self.tasks is not None else {}).values():
            work.add(tested, passes, scored)
        return work


def scored_prefix_pairs(
    prefixes: DataFrame,
    *,
    k: int,
    threshold: float,
    containment_threshold: float | None = None,
    max_posting: int | None = None,
    capped: CappedDocuments | None = None,
    work: JoinWorkCounter | None = None,
    size_floor: float = 0.0,
) -> DataFrame:
    """(hash, doc_id, n_shingles, sketch) prefix rows -> scored pairs of documents sharing a hash.

    The rows are shuffled by hash once and sorted within each partition; on the executors
    :func:`shingling.fast.postings.score_sorted_batches` scores every pair of each posting with a
    compiled loop, dropping first those that cannot reach the threshold (:func:`shingling.pairs.may_reach`, most of
    them; with ``containment_threshold`` none are dropped, a pair may be an excerpt whatever its
    Jaccard estimate). The candidates (millions where documents quote common text) are never rows.
    A pair met through several hashes is scored once per hash; the caller keeps one row of the
    passing ones. Only pairs with a relation (the estimate reaches ``threshold``, or a containment
    ``containment_threshold``) leave the executors' Python workers: at 1M documents on the default
    recipe two thirds of the pairs the loop scores at the candidate threshold have none (``work``
    counts them all).

    A hash in the prefixes of more than ``max_posting`` documents (a family of thousands of near
    copies, whose every hash is hot) would add that many squared pairs; its documents are paired
    only with the smallest of them (a star, every such pair scored), which keeps them linked at
    linear cost; ``capped``, if given, gathers the documents paired that way (each once), and
    ``work`` the pairs the loop tested. ``size_floor``: a verifying run's cut, below which the
    shingle-set sizes alone keep a pair's exact Jaccard (such pairs are dropped untested; 0:
    none, and none with ``containment_threshold``).
    """
    # the columns score_sorted_batches writes, in Spark's types
    schema = from_arrow_schema(output_schema(to_arrow_type(prefixes.schema[DOC_ID].dataType)))
    sc = prefixes.sparkSession.sparkContext
    ids = capped.attach(sc) if capped is not None else None
    tasks = work.attach(sc) if work is not None else None

    def score(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        starred: set[Any] = set()
        done = JoinWork()
        for out in score_sorted_batches(
            batches,
            k=k,
            threshold=threshold,
            containment_threshold=containment_threshold,
            max_posting=max_posting or 0,
            work=done,
            size_floor=size_floor,
        ):
            if ids is not None and pc.any(out.column(STAR)).as_py():
                star = out.filter(out.column(STAR))
                starred.update(star.column(DOC_A).to_pylist(), star.column(DOC_B).to_pylist())
            related = out.filter(pc.is_valid(out.column(RELATION)))
            if related.num_rows:
                yield related
        if ids is not None and starred:
            ids.add(starred)
        if tasks is not None:
            task = TaskContext.get()
            key = task.partitionId() if task is not None else 0
            tasks.add({key: (done.tested, done.signature_passes, done.scored)})

    rows = prefixes.select(
        HASH, DOC_ID, N_SHINGLES, SKETCH, *([EARLIER] if EARLIER in prefixes.columns else [])
    )
    scored = rows.repartition(HASH).sortWithinPartitions(HASH).mapInArrow(score, schema)
    return scored.drop(STAR)


def expand_groups(
    rep_pairs: DataFrame, grouped: DataFrame, *, max_exact_group: int, k: int | None = None
) -> DataFrame:
    """Pairs of representatives + grouped documents -> pairs of documents (the pair table).

    A pair of representatives stands for every pair of their groups' members; a group of at most
    ``max_exact_group`` members adds every pair of its members, a larger one each member paired with
    its representative (and only the representative stands for it in other pairs). ``k`` is the
    bottom-k size, which bounds ``matches`` (None: the sketches are bottom-k sketches).
    """
    small = F.col(GROUP_SIZE) <= max_exact_group
    standing = grouped.where(small | (F.col(DOC_ID) == F.col(GROUP))).select(GROUP, DOC_ID)
    ea = standing.select(F.col(GROUP).alias(DOC_A), F.col(DOC_ID).alias("ma"))
    eb = standing.select(F.col(GROUP).alias(DOC_B), F.col(DOC_ID).alias("mb"))
    swap = F.col("ma") > F.col("mb")  # the members' order may differ from their representatives'
    # pairs decided on their estimates carry no separate estimate column
    estimate = F.col(JACCARD_ESTIMATE if JACCARD_ESTIMATE in rep_pairs.columns else JACCARD)

    def side(mine: str, theirs: str) -> Column:
        return F.when(swap, F.col(theirs)).otherwise(F.col(mine))

    across = (
        rep_pairs.join(ea, DOC_A)
        .join(eb, DOC_B)
        .select(
            F.least("ma", "mb").alias(DOC_A),
            F.greatest("ma", "mb").alias(DOC_B),
            MATCHES,
            JACCARD,
            estimate.alias(JACCARD_ESTIMATE),
            side(CONTAINMENT_A, CONTAINMENT_B).alias(CONTAINMENT_A),
            side(CONTAINMENT_B, CONTAINMENT_A).alias(CONTAINMENT_B),
            side(SHINGLES_A, SHINGLES_B).alias(SHINGLES_A),
            side(SHINGLES_B, SHINGLES_A).alias(SHINGLES_B),
            F.lit(False).alias(EXACT),
            F.when(swap, flipped(F.col(RELATION))).otherwise(F.col(RELATION)).alias(RELATION),
        )
    )
    copies = grouped.where(F.col(GROUP_SIZE) > 1).select(
        GROUP,
        DOC_ID,
        GROUP_SIZE,
        N_SHINGLES,
        F.size(F.slice(SKETCH, 1, k) if k else F.col(SKETCH)).alias("n"),
    )
    # every pair within a small group; a large one only pairs its representative with each member,
    # so its cost stays linear in its size
    x = copies.where(small | (F.col(DOC_ID) == F.col(GROUP))).alias("x")
    y = copies.alias("y")
    within = x.join(
        y,
        (F.col(f"x.{GROUP}") == F.col(f"y.{GROUP}"))
        & (F.col(f"x.{DOC_ID}") < F.col(f"y.{DOC_ID}")),
    ).select(
        F.col(f"x.{DOC_ID}").alias(DOC_A),
        F.col(f"y.{DOC_ID}").alias(DOC_B),
        F.least(F.col("x.n"), F.lit(2**31 - 1)).cast("int").alias(MATCHES),
        F.lit(1.0).alias(JACCARD),
        F.lit(1.0).alias(JACCARD_ESTIMATE),
        F.lit(1.0).alias(CONTAINMENT_A),
        F.lit(1.0).alias(CONTAINMENT_B),
        F.col(f"x.{N_SHINGLES}").alias(SHINGLES_A),
        F.col(f"y.{N_SHINGLES}").alias(SHINGLES_B),
        F.lit(True).alias(EXACT),
        F.lit(NEAR_DUPLICATE).alias(RELATION),
    )
    return across.unionByName(within).transform(pair_table_frame)


def pair_table_frame(measured: DataFrame) -> DataFrame:
    """Measured pairs (:data:`shingling.schema.MEASURED_PAIR_COLUMNS`) -> the pair table: the
    derived columns added by the reference's own :func:`shingling.pairs.pair_table`, batch by
    batch on the executors (with none defined, a projection: no Python pass).
    """
    kept = measured.select(*MEASURED_PAIR_COLUMNS)
    derived = derived_columns()
    if not derived:
        return kept
    id_type = to_arrow_type(kept.schema[DOC_A].dataType)
    extra = from_arrow_schema(pa.schema(arrow_fields(derived, id_type)))
    schema = StructType([*kept.schema.fields, *extra.fields])
    definitions = {c: DERIVED[c] for c in derived}  # shipped with the function
    out = to_arrow_schema(schema)

    def finish(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield pair_table(batch, definitions=definitions, out=out)

    return kept.mapInArrow(finish, schema)
