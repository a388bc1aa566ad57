"""Undo the index's last night: the index and the pair table back to the version before it.

    spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip \\
        jobs/undo_night.py --index index/ --output pairs/ --run-date 2027-12-01 [--break-lock]

For a night committed by mistake (a run date typed far ahead, which then blocks every real date;
the wrong batch): the index's segment of that night, its pair partition ``run_date=<date>/`` and
the kept and removed partitions it published with ``--decisions`` are taken back, and the
version of the index before the night is committed again, by the protocol of a night
(:class:`shingling.spark.index.rollback.Rollback`: the lock, recovery, the one manifest swap; a kill at any step leaves either the night or its undoing, never a mix). Only the
index's last run can be undone, and only while no compaction has merged its segment since. A
build_index run (the index's first version) is undone the same way; ``--output`` is then needed
only if it wrote a pair table.

Exit codes: 0 undone; 1 internal failure (nothing changed, unless the message says the undo IS
COMMITTED); 2 bad arguments, a run date that is not the index's last run, an index compacted since
that night, an --index or --output that is not this index's; 3 no index at the path, or its
history file of the version before the night is missing or unreadable; 6 another run holds the
index lock.
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
from shingling.errors import BadInputError
from shingling.spark.hooks import hook
from shingling.spark.index.arguments import add_lock_argument, check_run_date
from shingling.spark.index.store import IndexStore, check_index_owned
from shingling.spark.jobs.options import job_parser
from shingling.spark.paths import check_output_name, check_paths
from shingling.spark.session import Work, run_main
from shingling.summaries import IndexAfterUndo, Recovered, UndoneNight, UndoSummary

log = logging.getLogger("shingling")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = job_parser(
        "undo-night", "Undo the sketch index's last night (its segment and its pair partition)."
    )
    parser.add_argument("--index", required=True, help="the index directory")
    parser.add_argument("--output", help="the pair table the night wrote its partition to")
    parser.add_argument(
        "--decisions", help="the decisions table the night wrote its kept and removed documents to"
    )
    parser.add_argument(
        "--run-date", required=True, help="the night to undo: the index's last run date"
    )
    add_lock_argument(parser)
    return parser.parse_args(argv)


def undo(
    spark: SparkSession | None,
    *,
    index_path: str,
    pairs_path: str | None,
    run_date: str,
    break_lock: bool = False,
    decisions_path: str | None = None,
) -> dict[str, Any]:
    """Take back the night ``run_date`` (the index's last); returns the run's summary.

    ``spark`` may be None when both paths are local: a rollback only moves and deletes files.
    """
    started = time.monotonic()
    run_id = uuid.uuid4().hex[:12]
    # local paths need no session (shingling.spark.storage.Files works with os alone)
    store = IndexStore(
        spark,  # type: ignore[arg-type]
        index_path,
        pairs_path,
        decisions_path=decisions_path,
    )
    if store.check_owned() is None:
        raise BadInputError(f"{index_path} holds no committed index: nothing to undo")
    with store.locked(run_id, break_lock=break_lock):
        store.claim()
        base = store.manifest()
        if base is None:
            raise BadInputError(f"{index_path} holds no committed index: nothing to undo")
        recovered = store.recover(base)
        rollback = store.begin_rollback(base, run_date, run_id)
        try:
            rollback.unpublish()
            hook("unpublished")
            new = rollback.commit()
        except BaseException:
            rollback.abort()
            raise
        hook("committed")
        try:
            rollback.delete_night()
        except Exception as e:  # noqa: BLE001 - committed: the next run's recovery deletes them
            log.warning(
                "the undo of %s IS COMMITTED (version %d), but the night's segment or staged"
                " pairs were not all deleted (%s): the next run on this index deletes them",
                run_date,
                new.version,
                e,
            )
    night = base.runs[run_date]
    return UndoSummary(
        index=index_path,
        output=pairs_path,
        run_date=run_date,
        run_id=run_id,
        recovered=Recovered(**recovered),
        undone=UndoneNight(
            segment=night.get("segment"),
            batch=night.get("batch"),
            batch_documents=night.get("batch_documents"),
            pairs_written=night.get("pairs_written"),
        ),
        index_after=IndexAfterUndo(
            version_before=base.version,
            version_after=new.version,
            documents_before=base.live_documents,
            documents_after=new.live_documents,
            last_run_date=new.last_run_date,
        ),
        seconds=round(time.monotonic() - started, 2),
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        status="undone",
    ).to_dict()


def main(argv: list[str] | None = None) -> int:
    def prepare(args: argparse.Namespace) -> tuple[dict[str, str], Work]:
        # a date far ahead is what this job is for: only its form is checked
        run_date = check_run_date(args.run_date, allow_future=True)
        check_output_name("--index", args.index)
        check_output_name("--output", args.output)
        check_output_name("--decisions", args.decisions)
        writes = {"--index": args.index, "--output": args.output, "--decisions": args.decisions}
        check_paths(writes, {})
        check_index_owned(args.index, args.output, decisions_path=args.decisions)
        defaults = config_module.load(None, [])
        return defaults.spark, lambda spark: undo(
            spark,
            index_path=args.index,
            pairs_path=args.output,
            run_date=run_date,
            break_lock=args.break_lock,
            decisions_path=args.decisions,
        )

    return run_main(
        "shingling undo_night",
        argv,
        parse_args,
        prepare,
        failed="undoing the night failed; the index and the pair table are unchanged",
    )


if __name__ == "__main__":
    sys.exit(main())
