"""The stages of the near-duplicate job: where Spark runs before a plan is complete.

The steps of :mod:`shingling.spark.transforms` and :mod:`shingling.spark.verify` build plans and run nothing. Some
plans need figures first: how many groups of exact copies there are (broadcast or shuffled), the
frequency sketch that orders the join prefixes (counted on the executors, broadcast), the bitmap
of the candidates' ids that filters the texts. This module computes them, owns the broadcasts and
the caches (a :class:`Cache` records what is persisted, for the caller to release once the result
is written), and chains the steps: :func:`near_duplicate_pairs` is the pair stage of
``jobs/near_duplicates.py``, of ``shingling.spark.api.near_duplicates`` and of the tests' reference runs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from shingling.config import Config
from shingling.fast.frequency import FrequencySketch, add_counts
from shingling.fast.postings import sketch_arrays
from shingling.pairs import candidate_threshold
from shingling.schema import DOC_A, DOC_B, DOC_ID, RELATION, SKETCH
from shingling.spark.transforms import (
    CappedDocuments,
    JoinWorkCounter,
    SharedFrequencies,
    containment_candidates,
    copy_groups,
    exact_groups,
    expand_groups,
    prefix_rows,
    representatives,
    score_pairs,
    scored_prefix_pairs,
    sketched_only,
)
from shingling.spark.verify import (
    BITMAP_BUCKET_BITS,
    VerifyMetrics,
    id_bitmap_bits,
    id_position,
    verify_candidates,
)

# the frequency sketch is summed in blocks, one group each: at least this many, of at most 1 MiB
# (a group holds one block per counting task)
FREQUENCY_BLOCKS = 64
BROADCAST_GROUPS = 1_000_000  # groups of exact copies sent to every task at most (about 40 MB)
CROWDED = 0.9  # a frequency sketch filled above this: warn
log = logging.getLogger("shingling")


class Cache:
    """The DataFrames a stage persisted, to unpersist once its result is written (rather than
    clearing every cache of the session, which may hold the caller's own)."""

    def __init__(self) -> None:
        self.frames: list[DataFrame] = []

    def persist(self, df: DataFrame) -> DataFrame:
        self.frames.append(df.persist())
        return df

    def release(self) -> None:
        for df in self.frames:
            df.unpersist()
        self.frames.clear()


def share_frequencies(spark: SparkSession, sketch: FrequencySketch) -> SharedFrequencies:
    """A frequency sketch broadcast to the tasks (read by :func:`shingling.spark.transforms.prefix_rows`)."""
    return SharedFrequencies(
        spark.sparkContext.broadcast(sketch.to_bytes()), sketch.width, sketch.depth
    )


def hash_frequencies(reps: DataFrame, *, k: int, sketch: FrequencySketch) -> FrequencySketch:
    """(sketch) -> a frequency sketch of ``sketch``'s shape (an empty one, of the size wanted)
    counting how many sketches' bottom-k parts hold each hash.

    One task per core (the session's default parallelism) counts the hashes of its sketches into a
    table of that size; the tables are summed block by block on the executors, a shuffle of
    cores x the table, and only the sum comes to the driver, which broadcasts it (see
    :func:`prefix_rows`). A table too small for the corpus costs join work, not pairs
    (:mod:`shingling.fast.frequency`).
    """
    spark = reps.sparkSession
    width, depth = sketch.width, sketch.depth
    n = max(FREQUENCY_BLOCKS, -(-sketch.nbytes // (1 << 20)))
    blocks = "block int, counts binary"

    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = FrequencySketch(width, depth)
        for batch in batches:
            table.add(sketch_arrays(batch.column(0))[1])
        for block, counts in table.blocks(n):
            yield pa.RecordBatch.from_pydict(
                {"block": pa.array([block], pa.int32()), "counts": pa.array([counts], pa.binary())}
            )

    def add(parts: pa.Table) -> pa.Table:
        summed = add_counts(parts.column("counts").to_pylist())
        return pa.table(
            {"block": parts.column("block").slice(0, 1), "counts": pa.array([summed.tobytes()])}
        )

    part = F.slice(SKETCH, 1, k).alias(SKETCH)
    tasks = max(1, spark.sparkContext.defaultParallelism)
    counted = reps.select(part).coalesce(tasks).mapInArrow(count, blocks)
    summed = counted.groupBy("block").applyInArrow(add, blocks).toArrow()
    found = zip(
        summed.column("block").to_pylist(), summed.column("counts").to_pylist(), strict=True
    )
    return FrequencySketch.from_blocks(width, depth, dict(found), n)


def candidate_id_bitmap(candidates: DataFrame, *, bits: int) -> bytes:
    """The bitmap (``bits`` bits, bit p at byte p // 8, bit p % 8) of every id of ``candidates``.

    A Spark job: each row of an aggregate is one bucket's bitmap (Spark's
    ``bitmap_construct_agg``), built on the executors; only the buckets (at most ``bits`` / 8
    bytes) come to the driver.
    """
    # both ids of a row from one read of it: two reads (a union of the two columns) may meet two
    # computations of a row that differ in orientation, when two executors each compute a cached
    # partition, and then miss one of its ids
    ids = candidates.select(F.explode(F.array(F.col(DOC_A), F.col(DOC_B))).alias(DOC_ID))
    at = id_position(F.col(DOC_ID), bits) + 1  # the bitmap functions count from 1
    buckets = (
        ids.select(
            F.bitmap_bucket_number(at).alias("bucket"), F.bitmap_bit_position(at).alias("bit")
        )
        .groupBy("bucket")
        .agg(F.bitmap_construct_agg("bit").alias("bitmap"))
        .toArrow()
    )
    bitmap = np.zeros(bits // 8, dtype=np.uint8)
    size = BITMAP_BUCKET_BITS // 8
    for bucket, part in zip(
        buckets.column("bucket").to_pylist(), buckets.column("bitmap").to_pylist(), strict=True
    ):
        start = (bucket - 1) * size
        bitmap[start : start + size] = np.frombuffer(part, dtype=np.uint8)  # bits: whole buckets
    return bitmap.tobytes()


@dataclass(frozen=True)
class Verification:
    """How :func:`near_duplicate_pairs` verifies its candidates: the texts (doc_id, text), the
    shingle definition to compute exact scores with, and the margin below each threshold down to
    which the sketch estimates choose candidates (see shingling/default.toml, pairs.candidate_margin)."""

    texts: DataFrame
    width: int
    unit: str
    margin: float
    metrics: VerifyMetrics | None = None

    @classmethod
    def configured(
        cls, cfg: Config, texts: DataFrame, *, metrics: VerifyMetrics | None = None
    ) -> Verification | None:
        """The verification ``cfg`` asks for (``pairs.verify``), None in the estimate-only mode."""
        if not cfg.pairs.verify:
            return None
        return cls(texts, cfg.sketch.width, cfg.sketch.unit, cfg.pairs.candidate_margin, metrics)

    def candidate(self, threshold: float) -> float:
        """The estimate a candidate needs for a cut at ``threshold`` (:func:`candidate_threshold`)."""
        return candidate_threshold(threshold, self.margin)

    def decide(
        self,
        candidates: DataFrame,
        *,
        threshold: float,
        containment_threshold: float | None = None,
        documents: int = 0,
        cache: Cache | None = None,
        planned: bool = False,
    ) -> DataFrame:
        """Candidates -> the pairs whose exact scores pass (:func:`shingling.spark.verify.verify_candidates`).

        A Spark job runs here: the candidates are persisted (in ``cache``) and their ids gathered
        into a bitmap (:func:`candidate_id_bitmap`, sized for a corpus of ``documents``) that is
        broadcast to filter the texts. ``planned``: no job; the texts are kept by a semi-join
        with the candidates' ids within the plan.
        """
        candidates = (cache or Cache()).persist(candidates)
        texts_of: dict[str, Any]
        if planned:
            ids = candidates.select(F.explode(F.array(DOC_A, DOC_B)).alias(DOC_ID)).distinct()
            texts_of = {"wanted": ids}
        else:
            bits = id_bitmap_bits(documents)
            bitmap = candidate_id_bitmap(candidates, bits=bits)
            texts_of = {"bitmap": candidates.sparkSession.sparkContext.broadcast(bitmap)}
            texts_of["bits"] = bits
        return verify_candidates(
            candidates,
            self.texts,
            width=self.width,
            unit=self.unit,
            threshold=threshold,
            containment_threshold=containment_threshold,
            metrics=self.metrics,
            **texts_of,
        )


@dataclass(frozen=True)
class PairMetrics:
    """Counts gathered while the pair table is written (Spark observations, no extra pass), and
    the frequency sketch's size and fill.

    ``scored``: the excerpt candidates scored (mod-m sketches), which with the pairs the prefix
    join's loop scores (``work``: those it met that passed :func:`shingling.pairs.may_reach`, a
    pair in the posting of the first prefix hash it shares, and in each posting the cap can star)
    are the summary's ``candidate_pairs``; ``candidates``: the distinct pairs of representatives
    that passed;
    ``capped``: the documents paired by star because a hash's prefix posting exceeded the cap,
    each once (at most the corpus's documents); ``work``: the pairs the postings met and tested
    (``pairs_tested``) and those the signatures passed (``signature_passes``);
    ``frequencies``: the size and fill of the frequency sketch that ordered the prefixes, set when
    it is built (before the pair table is computed).
    """

    candidates: Observation = field(default_factory=lambda: Observation("candidates"))
    capped: CappedDocuments = field(default_factory=CappedDocuments)
    scored: Observation = field(default_factory=lambda: Observation("scored"))
    work: JoinWorkCounter = field(default_factory=JoinWorkCounter)
    frequencies: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "candidate_pairs": 0,
            "representative_pairs": 0,
            "capped_documents": 0,
        }
        for observation in (self.scored, self.candidates):
            try:
                found.update({name: int(value or 0) for name, value in observation.get.items()})
            except Exception:  # noqa: BLE001 - Spark pruned the observed plan (no rows): counts stay 0
                continue
        found["capped_documents"] = self.capped.count()
        work = self.work.total()
        found["candidate_pairs"] += work.scored  # the loop's; the excerpts' are observed
        found["pairs_tested"] = work.tested
        found["signature_passes"] = work.signature_passes
        if self.frequencies:
            found["frequency_sketch"] = dict(self.frequencies)
        return found


def distinct_pairs(scored: DataFrame) -> DataFrame:
    """Scored pairs -> one row per pair with a relation (a pair can be scored in several postings
    the cap stars). Shuffled by ``doc_a`` only, which keeps the rows of a pair together: the
    join to the first document's text (:func:`shingling.spark.verify.verify_candidates`, on the same
    key and number of partitions) then reads them where they are, without a shuffle of its own,
    through the cache (Spark keeps a cached plan's partitioning:
    spark.sql.optimizer.canChangeCachedPlanOutputPartitioning is false by default)."""
    return (
        scored.where(F.col(RELATION).isNotNull()).repartition(DOC_A).dropDuplicates([DOC_A, DOC_B])
    )


def near_duplicate_pairs(
    documents: DataFrame,
    *,
    threshold: float,
    k: int,
    max_exact_group: int,
    max_posting: int = 0,
    containment_threshold: float | None = None,
    frequency_mb: float = 24,
    sketched: int | None = None,
    metrics: PairMetrics | None = None,
    verify: Verification | None = None,
    cache: Cache | None = None,
    planned: bool = False,
) -> DataFrame:
    """documents table -> pair table: every pair whose Jaccard reaches ``threshold``, and (with
    ``containment_threshold``, for mod-m sketches) every pair where one document's containment in
    the other reaches it.

    With ``verify`` (the default of the job), the sketches only choose candidates, down to
    ``verify.margin`` below each threshold, and each candidate pair of distinct texts is decided
    on its exact scores computed from the two texts (:func:`shingling.spark.verify.verify_candidates`);
    exact copies keep 1.0 without their texts being read. Without it, pairs are decided on the
    sketch estimates, and ``jaccard_estimate`` equals ``jaccard``.

    ``max_posting`` caps prefix postings (0: no cap; see :func:`scored_prefix_pairs`);
    ``frequency_mb`` bounds the sketch that orders the prefixes (:func:`hash_frequencies`: a
    Spark job runs here, when the plan is built), sized for k hashes of each of the ``sketched``
    documents (counted here if None); ``metrics``, if given, is filled when the result is
    computed. Spark jobs run here, before the plan is returned: the copy groups are counted, the
    frequency sketch is built, the verification's candidate bitmap too. What they persist is
    recorded in ``cache``: release it once the result is written.

    ``planned``: no Spark job runs here (the DataFrame API's lazy plan); the copy groups are
    joined as Spark's adaptive execution chooses, the prefixes ordered by exact frequencies
    counted within the plan (:func:`shingling.spark.transforms.with_frequencies`) and the texts
    chosen by a semi-join; the same pairs, at the cost of two more shuffles of the sketch hashes.
    Not with mod-m sketches (``containment_threshold``).
    """
    cache = cache if cache is not None else Cache()
    if planned:
        if containment_threshold is not None:
            raise ValueError("a planned pair stage takes bottom-k sketches only")
        return _planned_pairs(
            documents,
            threshold=threshold,
            k=k,
            max_exact_group=max_exact_group,
            max_posting=max_posting,
            verify=verify,
            cache=cache,
        )
    # the groups of copies are few (one row each): found by a narrow aggregate and broadcast to
    # the documents where they are, rather than shuffling every sketch to a window (2.5 s of the
    # pair stage at 1M documents); a corpus of more copies than BROADCAST_GROUPS groups is joined
    # by shuffling instead
    sketched_docs = sketched_only(documents)
    copies = cache.persist(copy_groups(sketched_docs))
    many = copies.count() > BROADCAST_GROUPS
    # read three times, by the frequency count, the prefix join (representatives) and the
    # expansion: persisted, the join runs once
    grouped = cache.persist(exact_groups(sketched_docs, copies if many else F.broadcast(copies)))
    if sketched is None:
        sketched = grouped.count()
    reps = representatives(grouped)
    cap = max_posting or None
    scoring: dict[str, Any] = {
        "k": k,
        "threshold": threshold if verify is None else verify.candidate(threshold),
        "containment_threshold": containment_threshold
        if verify is None or containment_threshold is None
        else verify.candidate(containment_threshold),
    }
    empty = FrequencySketch.for_hashes(sketched * k, max_megabytes=frequency_mb)
    frequencies = hash_frequencies(reps, k=k, sketch=empty)
    shared = share_frequencies(reps.sparkSession, frequencies)
    if frequencies.filled > CROWDED:  # said before the join, whose work it multiplies
        log.warning(
            "the frequency sketch is %.0f%% filled: raise pairs.frequency_sketch_mb (now %s, for"
            " %d documents); the pairs will be the same, but the join does more work than it needs",
            100 * frequencies.filled,
            frequency_mb,
            sketched,
        )
    if metrics is not None:
        metrics.frequencies.update(
            megabytes=round(frequencies.nbytes / (1 << 20), 1), filled=round(frequencies.filled, 3)
        )
    scored = scored_prefix_pairs(
        prefix_rows(
            reps,
            threshold=scoring["threshold"],
            k=k,
            frequencies=shared,
            max_posting=cap,
        ),
        **scoring,
        max_posting=cap,
        capped=metrics.capped if metrics else None,
        work=metrics.work if metrics else None,
        # verification refuses a pair whose sizes keep its Jaccard under the cut: never scored
        size_floor=threshold if verify is not None and containment_threshold is None else 0.0,
    )
    if containment_threshold is not None:
        excerpts = containment_candidates(
            reps, threshold=scoring["containment_threshold"], max_posting=cap
        )
        excerpts_scored = score_pairs(excerpts, reps, **scoring)
        if metrics is not None:
            excerpts_scored = excerpts_scored.observe(
                metrics.scored, F.count(F.lit(1)).alias("candidate_pairs")
            )
        scored = scored.unionByName(excerpts_scored)
    rep_pairs = distinct_pairs(scored)
    if metrics is not None:
        rep_pairs = rep_pairs.observe(
            metrics.candidates, F.count(F.lit(1)).alias("representative_pairs")
        )
    if verify is not None:
        rep_pairs = verify.decide(
            rep_pairs,
            threshold=threshold,
            containment_threshold=containment_threshold,
            documents=sketched,
            cache=cache,
        )
    return expand_groups(rep_pairs, grouped, max_exact_group=max_exact_group, k=k)


def _planned_pairs(
    documents: DataFrame,
    *,
    threshold: float,
    k: int,
    max_exact_group: int,
    max_posting: int,
    verify: Verification | None,
    cache: Cache,
) -> DataFrame:
    """:func:`near_duplicate_pairs` as one plan, nothing run (``planned``)."""
    sketched_docs = sketched_only(documents)
    grouped = cache.persist(exact_groups(sketched_docs, copy_groups(sketched_docs)))
    reps = representatives(grouped)
    cap = max_posting or None
    wanted = threshold if verify is None else verify.candidate(threshold)
    scored = scored_prefix_pairs(
        prefix_rows(reps, threshold=wanted, k=k, frequencies=None, max_posting=cap),
        k=k,
        threshold=wanted,
        max_posting=cap,
        size_floor=threshold if verify is not None else 0.0,
    )
    rep_pairs = distinct_pairs(scored)
    if verify is not None:
        rep_pairs = verify.decide(rep_pairs, threshold=threshold, cache=cache, planned=True)
    return expand_groups(rep_pairs, grouped, max_exact_group=max_exact_group, k=k)


def configured_pairs(
    documents: DataFrame,
    cfg: Config,
    *,
    verify: Verification | None,
    cache: Cache,
    sketched: int | None = None,
    metrics: PairMetrics | None = None,
    planned: bool = False,
) -> DataFrame:
    """:func:`near_duplicate_pairs` with the settings of ``cfg`` (``[pairs]``, ``sketch.k``, and
    the containment threshold when the sketches are mod-m samples): the pair stage of the job and
    (``planned``) of ``shingling.spark.api.near_duplicates``."""
    return near_duplicate_pairs(
        documents,
        threshold=cfg.pairs.threshold,
        k=cfg.sketch.k,
        max_exact_group=cfg.pairs.max_exact_group,
        max_posting=cfg.pairs.max_posting,
        containment_threshold=cfg.pairs.containment_threshold if cfg.sketch.sample_mod else None,
        frequency_mb=cfg.pairs.frequency_sketch_mb,
        sketched=sketched,
        metrics=metrics,
        verify=verify,
        cache=cache,
        planned=planned,
    )
