"""The failures a job tells apart, and the exit code of each."""

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


class ShinglingError(Exception):
    """A failure with a message meant for the user and an exit code."""

    exit_code = ExitCode.FAILED


class ConfigError(ShinglingError):
    exit_code = ExitCode.USAGE


class BadInputError(ShinglingError):
    exit_code = ExitCode.BAD_INPUT


class OutputExistsError(ShinglingError):
    exit_code = ExitCode.OUTPUT_EXISTS
