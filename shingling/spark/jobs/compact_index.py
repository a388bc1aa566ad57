"""Rewrite the sketch index's segments as one, so that reading it stays as cheap as nights add up.

    spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip \\
        jobs/compact_index.py --index index/ [--min-segments 8] [--set index.rows_per_file=...]

Each night adds a segment, and a document that arrives again leaves a dead row in an older one; a
night reads every segment, so its time grows with their number (docs/scaling.md: after 30 nights
the next night took 1.61 times as long as against one segment). Compaction writes the live rows of
every segment (documents, postings and, in a verifying index, texts) as one new segment and commits
it as a new version of the manifest, with the protocol of a night (shingling/spark/index/: lock,
recovery, written aside, checked, one atomic manifest swap); then it deletes the replaced segments.
The pairs do not change: the pair table is not touched, and a night against the compacted index
finds what it would have found against the segments (tests/spark/test_compact_index.py).

Run it between nights (it takes the index's lock, so a night waits or exits 6), for instance
weekly or when the summary's ``segments`` passes ``--min-segments``. A look-up (``shingling
query``) that opened the index before the compaction committed may fail to read a deleted segment:
run it again.

Exit codes: 0 compacted, or nothing to do (fewer segments than --min-segments and no replaced
rows); 1 internal failure (nothing committed); 2 bad arguments or config; 3 no index at the path,
or its files disagree with its manifest; 6 another run holds the index (or committed meanwhile).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import SparkSession

from shingling import config as config_module
from shingling.errors import BadInputError, ConfigError
from shingling.spark.hooks import hook
from shingling.spark.index.arguments import add_lock_argument
from shingling.spark.index.segments import write_options
from shingling.spark.index.store import IndexStore, check_index_owned
from shingling.spark.jobs.options import job_parser
from shingling.spark.paths import check_output_name
from shingling.spark.run_checks import check_writable_dir, local_manifest
from shingling.spark.session import Steps, Work, run_main
from shingling.summaries import CompactSummary, Recovered, SegmentsAfter, SegmentsBefore

log = logging.getLogger("shingling")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = job_parser("compact-index", "Rewrite the sketch index's live rows as one segment.")
    parser.add_argument("--index", required=True, help="the index directory")
    parser.add_argument(
        "--min-segments",
        type=int,
        default=2,
        help="compact only an index of at least this many segments, or one with replaced rows"
        " (default 2)",
    )
    config_module.add_config_arguments(parser, overwrite=False)
    add_lock_argument(parser)
    return parser.parse_args(argv)


def compact(
    spark: SparkSession,
    cfg: config_module.Config,
    *,
    index_path: str,
    min_segments: int = 2,
    break_lock: bool = False,
) -> dict[str, Any]:
    """Compact the index at ``index_path``; returns the run's summary."""
    started = time.monotonic()
    run_id = uuid.uuid4().hex[:12]
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    store = IndexStore(spark, index_path, None)
    # before the lock and the recovery: a directory that is not an index of ours is refused (exit
    # 2), and at a path that holds no manifest (a typo, or an index whose manifest was lost)
    # nothing is created, and nothing is deleted as a leftover
    if store.check_owned() is None:
        raise BadInputError(f"{index_path} holds no committed index: nothing to compact")
    with store.locked(run_id, break_lock=break_lock):
        store.claim()
        base = store.manifest()
        if base is None or not base.segments:
            raise BadInputError(f"{index_path} holds no committed index: nothing to compact")
        recovered = Recovered(**store.recover(base))
        replaced_rows = sum(s.superseded for s in base.segments)
        before = SegmentsBefore(
            version=base.version,
            segments=len(base.segments),
            live_documents=base.live_documents,
            live_postings=base.live_postings,
            replaced_rows=replaced_rows,
        )

        def summary(**figures: Any) -> dict[str, Any]:
            return CompactSummary(
                index=index_path,
                run_id=run_id,
                started_at=started_at,
                recovered=recovered,
                before=before,
                **figures,
            ).to_dict()

        if len(base.segments) < max(2, min_segments) and not replaced_rows:
            log.info(
                "%d segment(s) and no replaced rows (--min-segments %d): nothing to compact",
                len(base.segments),
                min_segments,
            )
            return summary(status="nothing to do", seconds=round(time.monotonic() - started, 2))
        job = store.begin_compaction(base, run_id)
        try:
            steps = Steps(spark, 2)
            steps.start(
                "writing the compacted segment",
                f"{base.live_documents} live documents of {len(base.segments)} segments",
            )
            info = job.write(write_options(cfg))
            steps.done(f"{info.documents} documents, {info.postings} postings")
            hook("index_written")
            steps.start("committing", f"version {base.version + 1}")
            new = job.commit()
        except BaseException:
            job.abort()
            raise
        hook("committed")
        try:
            deleted = job.delete_replaced()
        except Exception as e:  # noqa: BLE001 - committed: the next run's recovery deletes them
            log.warning(
                "the compaction IS COMMITTED (version %d), but the replaced segments were not all"
                " deleted (%s): the next run on this index deletes them",
                new.version,
                e,
            )
            deleted = 0
        steps.done(f"index version {new.version}, {deleted} segments deleted")
    return summary(
        after=SegmentsAfter(
            version=new.version,
            segments=len(new.segments),
            segment=info.id,
            live_documents=new.live_documents,
            live_postings=new.live_postings,
            segments_deleted=deleted,
        ),
        status="committed",
        seconds=round(time.monotonic() - started, 2),
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def main(argv: list[str] | None = None) -> int:
    def prepare(args: argparse.Namespace) -> tuple[dict[str, str], Work]:
        cfg = config_module.load(args.config, args.set)
        check_output_name("--index", args.index)
        check_writable_dir("--index", args.index)
        local_manifest(args.index)  # a truncated one is named before Spark starts
        check_index_owned(args.index, None)
        if args.min_segments < 1:
            raise ConfigError(f"--min-segments {args.min_segments}: expected 1 or more")
        return cfg.spark, lambda spark: compact(
            spark,
            cfg,
            index_path=args.index,
            min_segments=args.min_segments,
            break_lock=args.break_lock,
        )

    return run_main(
        "shingling compact_index",
        argv,
        parse_args,
        prepare,
        failed="the compaction failed; the index is unchanged",
    )


if __name__ == "__main__":
    sys.exit(main())
