"""Building the SparkSession: spark-submit's settings win, conf [spark] fills in the rest."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from shingling.errors import ExitCode, ShinglingError
from shingling.spark.read import unreadable_input

log = logging.getLogger("shingling")

Work = Callable[[SparkSession], dict[str, Any]]

# Set by the launcher (shingling/spark/launch.py): run_main checks arguments, config and paths, and stops
# there, before any session starts.
CHECK_ONLY = False


def step(spark: SparkSession, n: int, total: int, name: str, detail: str = "") -> None:
    """Announce step ``n`` of ``total``: one log line, and the name of the Spark jobs that follow
    (the console and the Spark UI show "step 2 of 3: pairing" instead of a stage number)."""
    spark.sparkContext.setJobDescription(f"step {n} of {total}: {name}")
    log.info("step %d of %d: %s%s", n, total, name, f" ({detail})" if detail else "")


def done(n: int, total: int, name: str, seconds: float, result: str = "") -> None:
    """One log line when step ``n`` is over: what it produced and how long it took."""
    log.info(
        "step %d of %d: %s done in %.1f s%s",
        n,
        total,
        name,
        seconds,
        f": {result}" if result else "",
    )


class Steps:
    """A job's numbered steps: :meth:`start` announces the next one (:func:`step`), :meth:`done`
    closes it with what it produced (:func:`done`) and returns how long it took.

    In between, every ``progress_every`` seconds, a line says how far the step's Spark stages are
    (tasks done of tasks, from Spark's status tracker: no job of its own), so that a step of
    several minutes is not silent between its start and end lines.
    """

    def __init__(self, spark: SparkSession, total: int, *, progress_every: float = 30.0) -> None:
        self.spark, self.total = spark, total
        self.n, self.name, self.started = 0, "", 0.0
        self.progress_every = progress_every
        self._progress: _Progress | None = None

    def start(self, name: str, detail: str = "") -> None:
        self._stop_progress()  # the previous step's, if it was not closed
        self.n, self.name, self.started = self.n + 1, name, time.monotonic()
        step(self.spark, self.n, self.total, name, detail)
        if self.progress_every > 0:
            label = f"step {self.n} of {self.total}: {name}"
            self._progress = _Progress(self.spark, label, self.started, self.progress_every)

    def done(self, result: str = "") -> float:
        self._stop_progress()
        seconds = time.monotonic() - self.started
        done(self.n, self.total, self.name, seconds, result)
        return seconds

    def _stop_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __del__(self) -> None:
        self._stop_progress()


class _Progress:
    """A thread logging the active stages' tasks every ``every`` seconds until :meth:`stop`; no
    line once :meth:`stop` has returned (a line is written under the lock that stop takes)."""

    def __init__(self, spark: SparkSession, label: str, started: float, every: float) -> None:
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._args = (spark, label, started, every)
        threading.Thread(target=self._run, daemon=True).start()

    def stop(self) -> None:
        with self._lock:
            self._stopped.set()

    def _run(self) -> None:
        spark, label, started, every = self._args
        tracker = spark.sparkContext.statusTracker()
        while not self._stopped.wait(every):
            try:
                stages = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
            except Exception:  # noqa: BLE001 - the context stopped: nothing to report
                return
            running = [s for s in stages if s is not None and s.numTasks]
            if not running:
                continue
            tasks = sum(s.numTasks for s in running)
            finished = sum(s.numCompletedTasks for s in running)
            with self._lock:
                if self._stopped.is_set():
                    return
                log.info(
                    "%s: %d of %d tasks done in %d running stage%s (%.0f%%), %.0f s so far",
                    label,
                    finished,
                    tasks,
                    len(running),
                    "" if len(running) == 1 else "s",
                    100 * finished / tasks,
                    time.monotonic() - started,
                )


def get_session(app_name: str, settings: dict[str, str]) -> tuple[SparkSession, bool]:
    """The active session if there is one, else a new one; and whether it was created here.

    Settings from config apply only where spark-submit (or spark-defaults.conf) set nothing, and
    local[2] is the embedded default master when none is given.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    SparkContext._ensure_initialized()  # connect to spark-submit's JVM, so SparkConf sees its settings
    conf = SparkConf()
    for key, value in settings.items():
        if not conf.contains(key):
            conf.set(key, value)
    if not conf.contains("spark.master"):
        conf.setMaster("local[2]")
    spark = SparkSession.builder.appName(app_name).config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark, True


#: What a storage failure says in a Java error (Hadoop's local filesystem, HDFS).
_STORAGE_WORDS = (
    "No space left on device",
    "Disk quota exceeded",
    "Read-only file system",
    "Permission denied",
    "AccessControlException",
)


def storage_failure(error: BaseException) -> str | None:
    """One line for an operation the storage refused (disk full, read-only, permission), naming
    the path where the error does; None for any other failure.

    >>> import errno
    >>> storage_failure(OSError(errno.ENOSPC, "No space left on device", "/idx/_manifest.json"))
    '/idx/_manifest.json: No space left on device'
    >>> storage_failure(RuntimeError("calling o9.parquet: java.io.IOException: No space left on device"))
    'storage failure: calling o9.parquet: java.io.IOException: No space left on device'
    """
    if isinstance(error, OSError) and error.errno is not None:
        where = error.filename or "a file"
        return f"{where}: {error.strerror}"
    for line in str(error).splitlines():
        if any(word in line for word in _STORAGE_WORDS):
            return f"storage failure: {line.strip()}"
    return None


def run_job(
    app_name: str,
    settings: dict[str, str],
    work: Work,
    *,
    failed: str,
) -> int:
    """Run ``work`` in a session and print its summary; every failure becomes its exit code.

    A :class:`~shingling.errors.ShinglingError` prints its message and returns its code; anything else
    is logged with ``failed`` (what the user can count on, e.g. "the output was not written") and
    returns 1. A session created here is stopped whatever happens.
    """
    spark, created = get_session(app_name, settings)
    try:
        summary = work(spark)
    except ShinglingError as e:
        print(f"error: {e}", file=sys.stderr)
        return int(e.exit_code)
    except Exception as e:
        bad_input = unreadable_input(e)  # a file or an id of the input, named by Spark's error
        if bad_input is not None:
            print(f"error: {bad_input}", file=sys.stderr)
            return int(bad_input.exit_code)
        storage = storage_failure(e)
        if storage is not None:  # the disk, not a bug: one line, not a traceback
            print(f"error: {storage}; {failed}", file=sys.stderr)
            return int(ExitCode.FAILED)
        log.exception(failed)
        return int(ExitCode.FAILED)
    finally:
        if created:
            spark.stop()
    print(json.dumps({k: v for k, v in summary.items() if k != "config"}, indent=2))
    return int(ExitCode.OK)


def run_main(
    app_name: str,
    argv: list[str] | None,
    parse_args: Callable[[list[str] | None], argparse.Namespace],
    prepare: Callable[[argparse.Namespace], tuple[dict[str, str], Work]],
    *,
    failed: str,
) -> int:
    """A job's ``main()``: logging, arguments, then ``prepare`` and :func:`run_job`.

    ``prepare`` checks what can be checked before Spark starts (config, dates) and returns the
    session settings and the work; a :class:`~shingling.errors.ShinglingError` it raises is printed and
    its exit code returned, with no session started.
    """
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s shingling %(levelname)s %(message)s"
    )
    args = parse_args(argv)
    try:
        settings, work = prepare(args)
    except ShinglingError as e:
        print(f"error: {e}", file=sys.stderr)
        return int(e.exit_code)
    if CHECK_ONLY:
        return int(ExitCode.OK)
    return run_job(app_name, settings, work, failed=failed)
