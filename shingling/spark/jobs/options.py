"""What every job's command line shares: its parser (``shingling run <job>``, the exit codes in
its help) and the corpus option."""

from __future__ import annotations

import argparse

from shingling.exit_codes import EXIT_CODES_HELP

#: What a corpus option takes (shingling.spark.read: the input contract).
CORPUS_FORMS = "a Parquet file, a directory or a glob (JSON Lines with --set input.format=jsonl)"


def job_parser(command: str, description: str) -> argparse.ArgumentParser:
    """The parser of ``shingling run <command>``, its help ending with the exit codes."""
    return argparse.ArgumentParser(
        prog=f"shingling run {command}",
        description=description,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_input_argument(
    parser: argparse.ArgumentParser, option: str = "--input", what: str = "the corpus"
) -> None:
    """The corpus a job reads (``--input``; the nightly's ``--batch``)."""
    parser.add_argument(option, required=True, help=f"{what}: {CORPUS_FORMS}")
