"""What an exit code of a job or of the ``shingling`` command means: defined once, shown by every
--help and in docs/reliability.md."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a job's exit code means; the README lists the same table."""

    OK = 0
    FAILED = 1  # an internal failure: a bug, or the cluster failed; the output is untouched
    USAGE = 2  # bad arguments or config
    BAD_INPUT = 3  # the corpus is missing, unreadable or breaks the input contract
    OUTPUT_EXISTS = 4  # the output exists and --overwrite was not given
    ALREADY_COMMITTED = 5  # nightly: a run for this date is already committed
    INDEX_BUSY = 6  # nightly: another run holds the index lock


MEANINGS = {
    ExitCode.OK: "done",
    ExitCode.FAILED: "internal failure (a bug, or the cluster failed); the output is untouched",
    ExitCode.USAGE: "bad arguments or config, or output paths that overlap what the job reads",
    ExitCode.BAD_INPUT: "bad input: missing, unreadable, or breaking the input contract",
    ExitCode.OUTPUT_EXISTS: "the output exists and --overwrite was not given",
    ExitCode.ALREADY_COMMITTED: "(nightly) a run for this date is already committed",
    ExitCode.INDEX_BUSY: "(nightly) another run holds the index lock",
}

#: The exit codes, as every --help shows them.
EXIT_CODES_HELP = "exit codes:\n" + "\n".join(
    f"  {int(code)}  {meaning}" for code, meaning in MEANINGS.items()
)
