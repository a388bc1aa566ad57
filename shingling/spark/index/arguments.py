"""The options of the jobs that write an index: the run date, the lock, and their checks."""

from __future__ import annotations

import argparse
from datetime import UTC, date, datetime

from shingling.errors import ConfigError

# how far after today (UTC) a run date may lie without --allow-future-date: a scheduler a time zone
# ahead, or a batch named for tomorrow, is a day ahead; a typo (2027 for 2026) is far more, and a
# committed date blocks every earlier one
MAX_DAYS_AHEAD = 2


def check_run_date(value: str, *, allow_future: bool = False, today: date | None = None) -> str:
    """The run date, refused unless it is a calendar date written YYYY-MM-DD and, without
    ``allow_future``, at most :data:`MAX_DAYS_AHEAD` days after ``today`` (UTC by default).

    >>> check_run_date("2026-12-01", today=date(2026, 12, 4))
    '2026-12-01'
    >>> check_run_date("2027-12-01", today=date(2026, 12, 4))
    Traceback (most recent call last):
    ...
    shingling.errors.ConfigError: --run-date 2027-12-01 is 362 days after today (2026-12-04, UTC): ...
    """
    try:
        parsed = date.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed.isoformat() != value:
        raise ConfigError(f"--run-date {value!r}: expected a date written YYYY-MM-DD")
    today = today or datetime.now(UTC).date()
    ahead = (parsed - today).days
    if ahead > MAX_DAYS_AHEAD and not allow_future:
        raise ConfigError(
            f"--run-date {value} is {ahead} days after today ({today.isoformat()}, UTC): a"
            " committed date blocks every earlier one, so nothing was run; fix the date, or pass"
            " --allow-future-date if it is right (a night committed by mistake is undone with"
            " `shingling run undo-night`)"
        )
    return value


def add_future_date_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--allow-future-date`` option of the jobs that commit a run date."""
    parser.add_argument(
        "--allow-future-date",
        action="store_true",
        help=f"accept a --run-date more than {MAX_DAYS_AHEAD} days after today (UTC)",
    )


def add_lock_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--break-lock`` option of the jobs that write an index."""
    parser.add_argument(
        "--break-lock",
        action="store_true",
        help="remove a dead run's lock first (only needed on filesystems without flock, e.g. HDFS)",
    )
