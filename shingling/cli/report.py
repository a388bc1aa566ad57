"""``shingling report``: the run report, one HTML file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from shingling.cli.common import (
    EXIT_OK,
    InputError,
    UsageError,
)
from shingling.exit_codes import ExitCode
from shingling.report import REPORT_NAME, OtherRunError, write_report
from shingling.report.load import CLUSTERS_PATH
from shingling.schema import (
    RUN_CONFIG,
    RUN_DOCUMENTS,
    RUN_PAIRS,
    RUN_SUMMARY,
)


def report_reads(output: Path, corpus: str | None, clusters: str | None) -> dict[str, str | None]:
    """What ``shingling report`` reads, by role: the report is never written over these, inside
    them, or as a directory holding them (the corpus: ``--corpus``, else the summary's input)."""
    if corpus is None:
        try:
            recorded = json.loads((output / RUN_SUMMARY).read_text(encoding="utf-8")).get("input")
            corpus = str(recorded) if recorded else None
        except (OSError, ValueError, AttributeError):
            corpus = None  # load_run says what is wrong with the summary
    return {
        "the run's summary": str(output / RUN_SUMMARY),
        "the run's config": str(output / RUN_CONFIG),
        "the run's documents": str(output / RUN_DOCUMENTS),
        "the run's pairs": str(output / RUN_PAIRS),
        "the clusters table": clusters or str(output / CLUSTERS_PATH),
        "the corpus": corpus,
    }


def check_report_target(output: Path, target: Path, reads: dict[str, str | None]) -> None:
    """The path guards of the jobs (shingling/spark/paths.py), for the report's one written file.

    Raises:
        UsageError: the target is, holds or lies inside something the report reads, has a name
            a job would refuse, or is an existing directory.
    """
    from shingling.errors import ConfigError  # the jobs' guards: one definition of the rule
    from shingling.spark.storage import check_job_paths

    try:
        check_job_paths({"--to": str(target)}, reads)
    except ConfigError as e:
        raise UsageError(f"{e}; nothing was written") from e
    if target.is_dir():
        raise UsageError(f"--to {target} is a directory; name the file to write")


def report(args: argparse.Namespace) -> int:
    output = Path(args.output)
    if not (output / RUN_SUMMARY).is_file():
        raise InputError(f"no run summary at {output / RUN_SUMMARY}")
    target = Path(args.to) if args.to is not None else output / REPORT_NAME
    check_report_target(output, target, report_reads(output, args.corpus, args.clusters))
    try:
        print(write_report(output, corpus=args.corpus, path=args.to, clusters=args.clusters))
    except OtherRunError as e:
        raise UsageError(str(e)) from e
    except (FileNotFoundError, ValueError) as e:  # ValueError: not a run summary, or a file
        raise InputError(str(e)) from e  # that cannot be parsed, named
    except OSError as e:  # writing the page: a full disk, a read-only directory
        print(
            f"error: cannot write the report to {e.filename or args.to}: {e.strerror}",
            file=sys.stderr,
        )
        return int(ExitCode.FAILED)
    return EXIT_OK


def add_parser(sub: Any) -> None:
    """``shingling report``: its arguments, handled by :func:`report`."""
    p = sub.add_parser("report", help="write the run report, OUT/report.html")
    p.add_argument("output", help="a run's output directory (holding summary.json)")
    p.add_argument("--corpus", help="the corpus, for excerpts (default: the run's input)")
    p.add_argument("--to", help="write here instead of OUT/report.html")
    p.add_argument(
        "--clusters", help="a clusters table, e.g. DEDUP_OUT/clusters (default: OUT/dedup/clusters)"
    )
    p.set_defaults(handler=report)
