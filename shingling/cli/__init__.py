"""The ``shingling`` command: ask about one document, and see what a run found, without Spark.

    shingling query INDEX [FILE|-] [--json]       near-duplicates of one document in an index or run
    shingling explain A B [--corpus CORPUS]       two sketches side by side, and the scores
    shingling top OUT [--corpus CORPUS] [-n 5]    the most similar pairs of a run, side by side
    shingling report OUT                          write OUT/report.html, the run report

Exit codes: 0 done, 2 bad arguments, 3 missing or unreadable input (shingling.exit_codes).

One module per command (:mod:`.query`, :mod:`.explain`, :mod:`.top`, :mod:`.report`: its
arguments and its handler), what they share in :mod:`.common`; ``shingling run`` hands over to
:mod:`shingling.spark.launch`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from importlib import metadata

import pyarrow as pa

from shingling.cli import explain, query, report, top
from shingling.cli.common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, InputError, UsageError, shown
from shingling.exit_codes import EXIT_CODES_HELP, ExitCode


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shingling",
        description="Near-duplicate documents: run a job, or look at a run without Spark.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"shingling {version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser(
        "run",
        help="run a job (near-duplicates, dedup, nightly, build-index, compact-index,"
        " undo-night) with the bundled Spark:"
        " shingling run JOB [job options] [-- spark-submit options]",
        add_help=False,
    )
    for command in (query, explain, top, report):
        command.add_parser(sub)
    return parser


def version() -> str:
    """The installed package's version."""
    try:
        return metadata.version("shingling")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def missing_spark() -> str | None:
    """The first module of the ``spark`` extra this Python lacks (pandas: pyspark's Arrow
    functions need it), or None."""
    from importlib.util import find_spec

    return next((name for name in ("pyspark", "pandas") if find_spec(name) is None), None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["run"]:  # the job's own parser reads the rest (and answers --help)
        missing = missing_spark()
        if missing:
            print(
                f"error: `shingling run` needs Spark, and {missing} is not installed:"
                " pip install 'shingling[spark]'",
                file=sys.stderr,
            )
            return int(ExitCode.FAILED)
        from shingling.spark import launch

        if len(argv) < 2 or argv[1] in ("-h", "--help"):
            print((launch.__doc__ or "").replace("``", ""))
            print("jobs: " + ", ".join(launch.JOBS))
            return EXIT_OK if len(argv) >= 2 else EXIT_USAGE
        return launch.run(argv[1], argv[2:])
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except InputError as e:
        print(f"error: {shown(e)}", file=sys.stderr)
        return EXIT_INPUT
    except UsageError as e:
        print(f"error: {shown(e)}", file=sys.stderr)
        return EXIT_USAGE
    except (
        pa.ArrowException,
        UnicodeDecodeError,
        tomllib.TOMLDecodeError,
        json.JSONDecodeError,
    ) as e:
        # an output or index whose files are not what the job writes (edited, truncated, foreign)
        print(f"error: cannot read the input: {shown(e)}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        # the reader went away (shingling explain A B | head): not a failure of ours; point stdout
        # at /dev/null so that the interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
