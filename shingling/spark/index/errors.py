"""The errors of the index writer, each with its exit code (shingling.errors.ExitCode)."""

from __future__ import annotations

from shingling.errors import ConfigError, ExitCode, ShinglingError


class ForeignPathError(ConfigError):
    """--index or --output holds something that is not this index's: never written into nor
    cleaned (exit 2)."""


class MissingTextsError(ShinglingError):
    """The index keeps no texts for a segment whose documents a verified pair needs."""

    exit_code = ExitCode.BAD_INPUT


class IndexCountsError(ShinglingError):
    """The index's segments hold other live counts than its manifest records."""

    exit_code = ExitCode.BAD_INPUT


class AlreadyCommittedError(ShinglingError):
    """The index already holds a run for this date: nothing to do (the pairs are written)."""

    exit_code = ExitCode.ALREADY_COMMITTED


class IndexBusyError(ShinglingError):
    """Another run holds the index lock (or a killed run's lock on a filesystem without flock)."""

    exit_code = ExitCode.INDEX_BUSY


class ConcurrentCommitError(ShinglingError):
    """Another run committed a version of the index while this one was running."""

    exit_code = ExitCode.INDEX_BUSY


class CommittedError(ShinglingError):
    """A failure after the commit point: the run is committed, something after it is unfinished."""

    exit_code = ExitCode.FAILED


class UndoRefusedError(ConfigError):
    """The run date asked to be undone is not the index's last commit (exit 2)."""


class IndexMismatchError(ShinglingError):
    """The run's settings or id type differ from those the index was built with."""

    exit_code = ExitCode.USAGE


class ManifestError(ShinglingError):
    """The index's manifest cannot be read (truncated or edited)."""

    exit_code = ExitCode.BAD_INPUT
