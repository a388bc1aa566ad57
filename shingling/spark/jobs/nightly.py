"""Test a batch of new documents against the persistent sketch index, then add it to the index.

    spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip \\
        jobs/nightly.py --batch new.parquet --index index/ --output pairs/ --run-date 2026-12-01 \\
        [--config conf/x.toml] [--set pairs.threshold=0.7] [--break-lock]

Sketches the batch, finds the pairs within the batch and between the batch and the index, writes
them to the pair table as the partition ``pairs/run_date=<date>/``, and adds the batch to the index
as a new segment, all committed at once (see shingling/spark/index/ for the protocol). An index that
does not exist yet is created by the first run. Documents whose id is already in the index replace
their old version; the pairs made with the old version stay in their run's partition (see
:func:`shingling.spark.incremental.current_pairs` and docs/nightly.md). As in the full run, every row of an id
found twice or more in the batch is skipped as ``duplicate_id`` and counted in the summary; such
rows are not added to the index and make no pairs (an indexed version of the id stays as it was).

A run date can be committed once: re-running it changes nothing and exits 5, so a scheduler may
retry freely. Run dates must increase.

Exit codes: 0 committed; 1 internal failure (nothing committed); 2 bad arguments or config, a run
date before the index's last one, or settings that differ from the index's; 3 bad input (batch
missing, unreadable, wrong columns, or an id type other than the index's); 4 the pair table holds a
partition for this date that the index does not know; 5 this run date is already committed;
6 another run holds the index (or committed meanwhile).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import uuid
from dataclasses import asdict, replace
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import DataFrame, Observation, SparkSession, Window
from pyspark.sql import functions as F

from shingling import config as config_module
from shingling.decision import KEPT
from shingling.errors import BadInputError, ConfigError, OutputExistsError
from shingling.fast import probe
from shingling.index import SEGMENT, Manifest
from shingling.schema import (
    DOC_ID,
    EXACT,
    SKETCH,
    SKIP_DUPLICATE_ID,
    SKIP_NULL_ID,
    SKIP_REASON,
    TEXT,
)
from shingling.spark.decide import DECISION_RELATION, Decisions, night_decisions
from shingling.spark.hooks import hook
from shingling.spark.incremental import nightly_pairs
from shingling.spark.index.arguments import (
    add_future_date_argument,
    add_lock_argument,
    check_run_date,
)
from shingling.spark.index.errors import AlreadyCommittedError
from shingling.spark.index.segments import index_settings, write_options
from shingling.spark.index.store import IndexStore, check_index_owned
from shingling.spark.jobs.options import add_input_argument, job_parser
from shingling.spark.keep import keep_key, keep_keys
from shingling.spark.read import read_corpus, read_input
from shingling.spark.run_checks import (
    check_index_settings,
    check_nights_can_honour,
    check_writable_dir,
    local_manifest,
    missing_stored_text,
)
from shingling.spark.session import Steps, Work, run_main
from shingling.spark.stages import Cache, Verification
from shingling.spark.storage import check_job_paths
from shingling.spark.summary import count_documents
from shingling.spark.transforms import REPEATED_ID, sketch_documents
from shingling.spark.verify import VerifyMetrics
from shingling.summaries import (
    BatchCounts,
    IndexVersions,
    NightDecisions,
    NightPairs,
    NightSummary,
    Recovered,
)

log = logging.getLogger("shingling")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = job_parser("nightly", "Test a batch of new documents against the sketch index.")
    add_input_argument(parser, "--batch", "the night's new documents")
    parser.add_argument(
        "--index", required=True, help="the index directory (created by the first run)"
    )
    parser.add_argument("--output", required=True, help="the pair table, partitioned by run_date")
    parser.add_argument("--run-date", required=True, help="this run's date, YYYY-MM-DD")
    parser.add_argument(
        "--decisions",
        help="also publish the night's kept and removed documents to this directory:"
        " kept/run_date=<date>/ and removed/run_date=<date>/ (needs pairs.verify, the default)",
    )
    config_module.add_config_arguments(parser, overwrite=False)
    add_lock_argument(parser)
    add_future_date_argument(parser)
    return parser.parse_args(argv)


def check_decisions_wanted(cfg: config_module.Config, decisions_path: str | None) -> None:
    """Refuse --decisions for a night that decides nothing (pairs.verify = false)."""
    if decisions_path and not cfg.pairs.verify:
        raise ConfigError(
            "--decisions: a night decides which documents to keep only on exact Jaccard"
            " (pairs.verify = true, the default); this run has pairs.verify = false"
        )


def check_base(base: Manifest, run_date: str, settings: dict[str, Any]) -> None:
    """Refuse a date already committed or out of order, and settings other than the index's."""
    if run_date in base.runs:
        raise AlreadyCommittedError(
            f"run date {run_date} is already committed (version {base.version}); nothing to do"
        )
    last = base.last_run_date
    if last is not None and run_date < last:
        raise ConfigError(
            f"run date {run_date} is before the index's last run ({last}); run dates must increase"
        )
    if base.version:
        check_index_settings(base.settings, settings)


def sketch_batch_documents(
    corpus: DataFrame,
    *,
    width: int,
    k: int,
    files: int,
    unusable: tuple[Observation, Observation] | None = None,
) -> DataFrame:
    """(doc_id, text) -> documents table rows of the ids found once, range-partitioned by id.

    As in the full run, every row of an id found twice or more is skipped as ``duplicate_id``;
    those rows are then left out, as null ids are, since the index holds one row per id and which
    row would be the document cannot be known. The corpus is partitioned and sorted by id before
    sketching, so the segment is written in id order without sampling (and so re-running) the
    sketching for the range bounds, and the ids are counted on rows already clustered by id (a
    window, no shuffle of its own). ``unusable``, if given, counts the rows left out (null ids,
    repeated ids) when the result is computed; see :func:`unusable_counts`.
    """
    if unusable is not None:
        corpus = corpus.observe(unusable[0], F.count_if(F.col(DOC_ID).isNull()).alias(SKIP_NULL_ID))
    ordered = (
        corpus.where(F.col(DOC_ID).isNotNull())
        .repartitionByRange(files, DOC_ID)
        .sortWithinPartitions(DOC_ID)
    )
    flagged = ordered.select(
        DOC_ID,
        TEXT,
        (F.count(F.lit(1)).over(Window.partitionBy(DOC_ID)) > 1).alias(REPEATED_ID),
    )
    if unusable is not None:
        flagged = flagged.observe(
            unusable[1], F.count_if(F.col(REPEATED_ID)).alias(SKIP_DUPLICATE_ID)
        )
    sketched = flagged.transform(sketch_documents, width=width, k=k)
    return sketched.where(~F.col(SKIP_REASON).eqNullSafe(SKIP_DUPLICATE_ID))


def unusable_counts(unusable: tuple[Observation, Observation]) -> dict[str, int]:
    """The rows :func:`sketch_batch_documents` left out, by skip reason (0 for an empty batch,
    whose observed plan Spark may prune)."""
    found: dict[str, Any] = {}
    for observation in unusable:
        try:
            found.update(observation.get)
        except Exception:  # noqa: BLE001 - no rows: nothing was observed
            continue
    return {reason: int(found.get(reason) or 0) for reason in (SKIP_NULL_ID, SKIP_DUPLICATE_ID)}


def decide_night(
    spark: SparkSession,
    cfg: config_module.Config,
    store: IndexStore,
    base: Manifest,
    *,
    batch_path: str,
    staged_pairs: str | None,
    documents: DataFrame,
    others: DataFrame | None,
) -> Decisions:
    """The night's dedup decision (shingling/spark/decide.py :func:`night_decisions`): each batch document
    against the index's kept documents, then the rest among themselves by the keep policy."""
    assert staged_pairs is not None
    raw = read_input(spark, batch_path, cfg.input.format)
    key = keep_key(raw, keep=cfg.dedup.keep, text_column=cfg.input.text_column)
    keys = None if key is None else keep_keys(raw, id_column=cfg.input.id_column, key=key)
    removed = store.removed_ids(base)
    if others is None:
        indexed_kept = documents.select(DOC_ID).limit(0)
    elif removed is None:
        indexed_kept = others.select(DOC_ID)
    else:
        indexed_kept = others.select(DOC_ID).join(removed, DOC_ID, "left_anti")
    return night_decisions(
        spark.read.parquet(staged_pairs),
        documents.select(DOC_ID),
        indexed_kept,
        keys,
        cut=max(cfg.clusters.min_jaccard, cfg.pairs.threshold),
        descending=cfg.dedup.keep_order == "desc",
        max_rounds=cfg.dedup.max_rounds,
        finish_edges=cfg.dedup.finish_edges,
        component_rounds=cfg.clusters.max_rounds,
    )


def count_night_decisions(decided: DataFrame) -> dict[str, int]:
    """Kept and removed documents of the night: one aggregate."""
    row = decided.agg(
        F.count_if(F.col(DECISION_RELATION) == F.lit(KEPT)).alias("kept"),
        F.count_if(F.col(DECISION_RELATION) != F.lit(KEPT)).alias("removed"),
        F.count_if(F.col(EXACT)).alias("exact"),
    ).first()
    assert row is not None
    return {
        "kept": int(row["kept"]),
        "removed": int(row["removed"]),
        "removed_exact_duplicates": int(row["exact"]),
    }


def run(
    spark: SparkSession,
    cfg: config_module.Config,
    *,
    batch_path: str,
    index_path: str,
    pairs_path: str,
    run_date: str,
    break_lock: bool = False,
    decisions_path: str | None = None,
) -> dict[str, Any]:
    """Lock, check, sketch, pair, write aside, commit, publish; returns the run summary."""
    started = time.monotonic()
    run_id = uuid.uuid4().hex[:12]
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    decisions: NightDecisions | None = None
    settings = index_settings(cfg)
    options = write_options(cfg)
    seconds: dict[str, float] = {}
    check_decisions_wanted(cfg, decisions_path)
    store = IndexStore(
        spark,
        index_path,
        pairs_path,
        reads={"--batch": batch_path},
        decisions_path=decisions_path,
    )
    store.check_owned()  # before the lock: a foreign directory is not even given a lock file
    with store.locked(run_id, break_lock=break_lock):
        store.claim()
        current = store.manifest()
        recovered = Recovered(**store.recover(current))
        corpus = read_corpus(
            spark,
            batch_path,
            id_column=cfg.input.id_column,
            text_column=cfg.input.text_column,
            input_format=cfg.input.format,
        )
        id_type = corpus.schema[DOC_ID].dataType.simpleString()
        base = current or Manifest.empty(id_type, settings)
        check_base(base, run_date, settings)
        if base.version and id_type != base.id_type:
            raise BadInputError(f"the batch's ids are {id_type}; the index's are {base.id_type}")
        tx = store.begin(base, run_date, run_id)
        assert tx.final_pairs is not None
        if store.files.exists(tx.final_pairs):
            raise OutputExistsError(
                f"{tx.final_pairs} exists, but the index has no run {run_date}; move it away"
            )

        indexed_texts: DataFrame | None = None
        others: DataFrame | None = None
        try:
            stage = time.monotonic()
            steps = Steps(spark, 5 if cfg.pairs.verify else 4)
            steps.start("sketching the batch", f"width {cfg.sketch.width}, k {cfg.sketch.k}")
            observed = (Observation("null_ids"), Observation("repeated_ids"))
            rows = corpus.count()  # from the Parquet footers: sizes the segment's files
            sketched = sketch_batch_documents(
                corpus,
                width=cfg.sketch.width,
                k=cfg.sketch.k,
                files=max(1, -(-rows // options.rows_per_file)),
                unusable=observed,
            )
            documents = tx.write_documents(sketched, options)
            counted = count_documents(documents)
            segment_documents = counted.read
            unusable = unusable_counts(observed)
            counts = asdict(
                replace(
                    counted,
                    read=counted.read + sum(unusable.values()),
                    skipped={r: n + unusable.get(r, 0) for r, n in counted.skipped.items()},
                )
            )
            seconds["sketch"] = time.monotonic() - stage
            steps.done(json.dumps(counts))
            hook("sketched")

            stage = time.monotonic()
            live = store.live_documents(base)
            batch_ids = documents.select(DOC_ID)
            others = (
                live.join(F.broadcast(batch_ids), DOC_ID, "left_anti") if live is not None else None
            )
            steps.start(
                "pairing" + (" and verifying" if cfg.pairs.verify else ""),
                f"the batch with itself and with {base.live_documents} indexed documents",
            )
            verification = None
            if cfg.pairs.verify:
                # the batch's texts go into the segment, so that later nights can verify the
                # pairs they make with these documents
                batch_texts = corpus.join(
                    documents.where(F.col(SKETCH).isNotNull()).select(DOC_ID), DOC_ID, "left_semi"
                ).select(DOC_ID, TEXT)
                tx.write_texts(batch_texts, options)
                texts = spark.read.parquet(tx.texts_path)
                indexed = indexed_texts = store.live_texts(base)
                if indexed is not None and others is not None:
                    live_ids = others.select(DOC_ID, SEGMENT)
                    texts = texts.unionByName(
                        indexed.join(live_ids, [DOC_ID, SEGMENT], "left_semi").select(DOC_ID, TEXT)
                    )
                verification = Verification.configured(cfg, texts, metrics=VerifyMetrics())
            cache = Cache()
            pairs = nightly_pairs(
                documents,
                others,
                threshold=cfg.pairs.threshold,
                k=cfg.sketch.k,
                max_exact_group=cfg.pairs.max_exact_group,
                slices=probe.slices(counts["sketched"], cfg.index.probe_documents),
                verify=verification,
                cache=cache,
            )
            tx.stage_pairs(pairs)
            cache.release()  # the pair stage's persisted intermediates
            assert tx.staged_pairs is not None
            row = (
                spark.read.parquet(tx.staged_pairs)
                .agg(
                    F.count(F.lit(1)).alias("pairs"),
                    F.sum(F.col(EXACT).cast("long")).alias("exact"),
                )
                .first()
            )
            assert row is not None
            seconds["pairs"] = time.monotonic() - stage
            steps.done(f"{int(row['pairs'])} pairs staged")
            hook("pairs_staged")

            if cfg.pairs.verify:
                stage = time.monotonic()
                steps.start(
                    "deciding", f"the batch against the kept documents, keep {cfg.dedup.keep}"
                )
                decided = decide_night(
                    spark,
                    cfg,
                    store,
                    base,
                    batch_path=batch_path,
                    staged_pairs=tx.staged_pairs,
                    documents=documents,
                    others=others,
                )
                tx.write_decisions(decided.decisions)
                tx.stage_decisions(spark.read.parquet(tx.decisions_path))
                decisions = NightDecisions(
                    rounds=decided.rounds,
                    finished_in_one_task=decided.finished_edges,
                    **count_night_decisions(spark.read.parquet(tx.decisions_path)),
                )
                seconds["decide"] = time.monotonic() - stage
                steps.done(json.dumps(asdict(decisions)))
                hook("decided")

            stage = time.monotonic()
            steps.start("writing the index segment")
            info = tx.write_index(live, documents=segment_documents, options=options)
            seconds["index"] = time.monotonic() - stage
            steps.done(f"{info.documents} documents")
            hook("index_written")

            batch_counts = BatchCounts(**counts, replaced=info.superseded)
            night_pairs = NightPairs(
                written=int(row["pairs"]),
                exact_duplicates=int(row["exact"] or 0),
                scores="exact" if verification else "estimate",
                verification=(
                    verification.metrics.as_dict(threshold=cfg.pairs.threshold)
                    if verification and verification.metrics
                    else None
                ),
            )
            stage = time.monotonic()
            steps.start("committing", f"run date {run_date}")
            new = tx.commit(
                settings,
                id_type,
                {
                    "batch": batch_path,
                    "batch_documents": info.documents,
                    "pairs_written": night_pairs.written,
                    "committed_at": datetime.now(UTC).isoformat(timespec="seconds"),
                },
            )
        except BaseException as e:
            # an executor's traceback for an indexed text that is gone: one line naming the
            # segment (asked before the abort deletes this run's documents, which others reads)
            lost = missing_stored_text(e, store.root, indexed_texts, others)
            tx.abort()
            if lost is not None:
                raise lost from e
            raise
        hook("committed")
        tx.publish()
        seconds["commit"] = time.monotonic() - stage
        steps.done(f"index version {new.version}")
    seconds["total"] = time.monotonic() - started
    return NightSummary(
        run_date=run_date,
        run_id=run_id,
        batch=batch_path,
        index_path=index_path,
        output=pairs_path,
        decisions_path=decisions_path,
        started_at=started_at,
        recovered=recovered,
        batch_documents=batch_counts,
        pairs=night_pairs,
        decisions=decisions,
        index=IndexVersions(
            version_before=base.version,
            version_after=new.version,
            documents_before=base.live_documents,
            documents_after=new.live_documents,
            postings_before=base.live_postings,
            postings_after=new.live_postings,
            segments=len(new.segments),
            segment=info.id,
        ),
        stage_seconds={name: round(value, 2) for name, value in seconds.items()},
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        status="committed",
    ).to_dict()


def main(argv: list[str] | None = None) -> int:
    def prepare(args: argparse.Namespace) -> tuple[dict[str, str], Work]:
        cfg = config_module.load(args.config, args.set)
        run_date = check_run_date(args.run_date, allow_future=args.allow_future_date)
        check_decisions_wanted(cfg, args.decisions)
        check_job_paths(
            {"--index": args.index, "--output": args.output, "--decisions": args.decisions},
            {"--batch": args.batch},
            parquet=(args.batch,) if cfg.input.format == "parquet" else (),
            columns={"id": cfg.input.id_column, "text": cfg.input.text_column},
        )
        check_nights_can_honour(cfg.sketch.unit, cfg.sketch.sample_mod, where="nightly")
        check_writable_dir("--index", args.index)
        check_writable_dir("--output", args.output)
        check_writable_dir("--decisions", args.decisions)
        indexed = local_manifest(args.index)  # checked again under the lock
        if indexed is not None and indexed.version:
            # the settings only: a date already committed still goes through the lock, whose
            # recovery publishes a pair partition a killed run left staged, then exits 5
            check_index_settings(indexed.settings, index_settings(cfg))
        check_index_owned(
            args.index, args.output, {"--batch": args.batch}, decisions_path=args.decisions
        )
        log.info("%s", config_module.describe(cfg))
        return cfg.spark, lambda spark: run(
            spark,
            cfg,
            batch_path=args.batch,
            index_path=args.index,
            pairs_path=args.output,
            run_date=run_date,
            break_lock=args.break_lock,
            decisions_path=args.decisions,
        )

    return run_main(
        "shingling nightly",
        argv,
        parse_args,
        prepare,
        failed="the run failed; the index and the pair table are unchanged",
    )


if __name__ == "__main__":
    sys.exit(main())
