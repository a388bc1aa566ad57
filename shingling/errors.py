"""The failures a job tells apart, and the exit code of each."""

from __future__ import annotations

from shingling.exit_codes import EXIT_CODES_HELP as EXIT_CODES_HELP
from shingling.exit_codes import ExitCode as ExitCode


class ShinglingError(Exception):
    """A failure with a message meant for the user and an exit code."""

    exit_code = ExitCode.FAILED


class ConfigError(ShinglingError):
    exit_code = ExitCode.USAGE


class BadInputError(ShinglingError):
    exit_code = ExitCode.BAD_INPUT


class OutputExistsError(ShinglingError):
    exit_code = ExitCode.OUTPUT_EXISTS
