"""Writing the persistent sketch index with Spark, and the commit protocol that keeps it whole.

The layout is documented in :mod:`shingling.index` (the reader). A run that adds documents to the
index (``jobs/nightly.py`` each night, ``jobs/build_index.py`` once) goes through these steps:

1. **Lock.** It takes ``index/_lock``. On a local or NFS-less POSIX disk this is an ``flock`` on the
   file, which the kernel releases when the process dies, so a killed run never leaves a stale
   lock. On other filesystems (HDFS) it is an exclusive create of ``_lock``, removed at the end; a
   killed run leaves it behind and the next run refuses (exit 6) until an operator passes
   ``--break-lock``. On an object store (S3) exclusive create is not atomic: let the scheduler run
   one job per index at a time (Airflow ``max_active_runs=1``). A run that cannot take the lock
   exits with code 6 and changes nothing.
2. **Recover.** Under the lock it finishes what a committed run may have left undone (moving its
   staged pair partition into place, see 6) and deletes what killed runs left: segment directories
   the manifest does not name, version files above the manifest's version, and
   ``pairs/_staging/``.
3. **Write aside.** The new segment is written under ``index/segments/<seq>-<run id>/`` and the
   run's pair partition under ``pairs/_staging/<run id>/run_date=<date>/``. Neither is visible:
   readers of the index only follow ``_manifest.json``, and readers of the pair table (Spark,
   pyarrow) skip directories whose names start with ``_``.
4. **Check.** It re-reads ``_manifest.json``: if its version is no longer the one the run started
   from, another writer committed meanwhile (possible only without a working lock) and this run
   aborts.
5. **Commit** (the one atomic step). It writes the new manifest to ``_versions/<version>.json``
   (exclusive create: of two runs committing the same version, only one can), then writes it aside
   and renames it over ``_manifest.json``. Before this rename the index is exactly as before; after
   it, the run is committed.
6. **Publish.** It renames the staged pair partition to ``pairs/run_date=<date>/``. The manifest
   already records both paths, so if the run dies between 5 and 6 the next run (step 2) does the
   rename: the pair table can lag a committed index by one rename, never hold an uncommitted run.

A compaction (``jobs/compact_index.py``, :class:`Compaction`) follows the same steps with no pair
partition: under the lock, after recovery, it writes the live rows of every segment as one new
segment aside, checks the base version, and commits a manifest that names that segment alone;
then it deletes the replaced segments (if it dies first, step 2 of the next run deletes them).

Test hook: when the environment variable ``SHINGLING_TEST_HOOK`` is ``<point>=exit`` the process
exits at once (``os._exit(97)``, no clean-up) on reaching ``<point>``; ``<point>=sleep:<seconds>``
makes it sleep there (the tests kill it meanwhile, or start a second run). The points are named in
jobs/nightly.py (``sketched``, ``pairs_staged``, ``index_written``, ``versioned``, ``committed``).
Never set it in production.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import logging
import os
import posixpath
import re
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from shingling import config as config_module
from shingling.errors import BadInputError, ConfigError, ExitCode, ShinglingError
from shingling.index import (
    ADDED,
    DECISIONS,
    DOCUMENTS,
    FORMAT,
    HASH,
    IDENTITY,
    LOCK,
    MANIFEST,
    POSTINGS,
    SEGMENT,
    SEGMENTS,
    SUPERSEDED,
    TEXTS,
    VERSIONS,
    IndexFormatError,
    Manifest,
    SegmentInfo,
    segment_path,
    version_path,
)
from shingling.schema import DOC_ID, SKETCH, TEXT
from shingling.spark.hooks import hook
from shingling.spark.paths import check_output_name, check_paths, is_local, local_part
from shingling.spark.storage import Files, qualified

log = logging.getLogger("shingling")

STAGING = "_staging"
# in a pair table, and in each run's staging directory in it: the index it belongs to
OWNER = "_owner.json"
PAIRS_FORMAT = "shingling-pairs"
DECISIONS_FORMAT = "shingling-decisions"
#: The tables of a decisions table (--decisions): each a partition per night, like the pairs.
KEPT_TABLE = "kept"
REMOVED_TABLE = "removed"
_RUN_ID = re.compile(r"^[0-9a-f]{12}$")
_ISO_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


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


@dataclass(frozen=True)
class WriteOptions:
    """How segment files are cut: rows per file, and Parquet row-group size (bytes) that bounds
    what a look-up by hash or id has to read."""

    rows_per_file: int = 2_000_000
    row_group_bytes: int = 1 << 20


def _file_count(rows: int, options: WriteOptions) -> int:
    """Files for a table of ``rows`` rows.

    >>> _file_count(0, WriteOptions()), _file_count(4_000_001, WriteOptions())
    (1, 3)
    """
    return max(1, -(-rows // options.rows_per_file))


def _write_sorted(df: DataFrame, path: str, column: str, rows: int, options: WriteOptions) -> None:
    # range-partitioned and sorted: each file covers one range of the column, and each row group
    # a narrower one, so min/max statistics let a reader skip nearly everything
    (
        df.repartitionByRange(_file_count(rows, options), column)
        .sortWithinPartitions(column)
        .write.option("parquet.block.size", str(options.row_group_bytes))
        .parquet(path)
    )


def _write_texts(texts: DataFrame, path: str, options: WriteOptions) -> None:
    """(doc_id, text) as a segment's texts: zstd-compressed, sorted by id within each file."""
    texts.sortWithinPartitions(DOC_ID).write.option("compression", "zstd").option(
        "parquet.block.size", str(options.row_group_bytes)
    ).parquet(path)


def _write_postings(documents: DataFrame, path: str, postings: int, options: WriteOptions) -> None:
    """A segment's postings: (hash, doc_id) of every sketch hash of ``documents``, sorted by hash."""
    hashes = documents.where(F.col(SKETCH).isNotNull()).select(
        F.explode(SKETCH).alias(HASH), DOC_ID
    )
    _write_sorted(hashes, path, HASH, postings, options)


def check_index_owned(
    index_path: str,
    pairs_path: str | None,
    reads: dict[str, str | None] | None = None,
    decisions_path: str | None = None,
) -> None:
    """Before Spark starts: refuse a local --index, --output or --decisions that is not this
    index's (:meth:`IndexStore.check_owned`, exit 2). Other filesystems are checked by the run
    itself, once its session is there, still before anything is written."""
    if all(is_local(p) for p in (index_path, pairs_path, decisions_path) if p is not None):
        # local paths need no session (shingling.spark.storage.Files works with os alone)
        IndexStore(
            None,  # type: ignore[arg-type]
            index_path,
            pairs_path,
            reads=reads,
            decisions_path=decisions_path,
        ).check_owned()


def add_lock_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--break-lock`` option of the jobs that write an index."""
    parser.add_argument(
        "--break-lock",
        action="store_true",
        help="remove a dead run's lock first (only needed on filesystems without flock, e.g. HDFS)",
    )


class PublishedTable:
    """A table the index's runs publish a partition into, ``run_date=<date>/``, owned by one index:
    the pair table (``--output``) and a nightly's decisions (``--decisions``: ``kept/`` and
    ``removed/``, each partitioned by run date).

    A run stages its partitions under ``<table>/_staging/<run id>/`` (marked as this index's),
    the commit makes them due, and :meth:`publish` renames them into place; a killed run's
    committed partitions are published by the next run's recovery, its uncommitted ones deleted.
    Nothing outside the table is ever moved or deleted, whatever a manifest says.
    """

    def __init__(
        self,
        store: IndexStore,
        path: str,
        *,
        role: str,
        noun: str,
        marker: str,
        parts: tuple[str, ...] = ("",),
    ) -> None:
        self.store, self.path, self.role, self.noun = store, path, role, noun
        self.marker, self.parts = marker, parts

    def staging_dir(self, run_id: str) -> str:
        """A run's staging directory in this table."""
        assert _RUN_ID.match(run_id), run_id
        return f"{self.path}/{STAGING}/{run_id}"

    @staticmethod
    def _partition(run_date: str, part: str) -> str:
        return f"{part}/run_date={run_date}" if part else f"run_date={run_date}"

    def staged(self, run_id: str, run_date: str, part: str = "") -> str:
        """Where a run stages a partition: in this run's table, whatever the manifest recorded."""
        return f"{self.staging_dir(run_id)}/{self._partition(run_date, part)}"

    def final(self, run_date: str, part: str = "") -> str:
        return f"{self.path}/{self._partition(run_date, part)}"

    def owner(self) -> dict[str, Any] | None:
        """The table's owner marker, None if it has none."""
        found = self.store._read_json(f"{self.path}/{OWNER}")
        if found is not None and found.get("format") != self.marker:
            raise ForeignPathError(
                f"{self.role} {self.path}: its {OWNER} is not a shingling {self.noun}'s; nothing"
                " was written or deleted"
            )
        return found

    def check_owned(self, index_id: str | None, runs: set[str]) -> None:
        """Refuse a table that is not this index's (:meth:`IndexStore.check_owned`)."""
        files = self.store.files
        if files.exists(self.path) and not self.store._is_directory(self.path):
            raise ForeignPathError(
                f"{self.role} {self.path} exists and is not a directory; nothing was written"
            )
        owner = self.owner()
        if owner is not None:
            if index_id is None or owner.get("index_id") != index_id:
                raise ForeignPathError(
                    f"{self.role} {self.path} is the {self.noun} of another index"
                    f" ({owner.get('index')}): a {self.noun} belongs to one index, and this one is"
                    f" {self.store.root}; nothing was written or deleted; choose another"
                    f" {self.role}"
                )
            return
        # a pair table made before owner markers holds only partitions of this index's runs
        others = [
            n
            for n in files.list_names(self.path)
            if n != STAGING
            and not (self.parts == ("",) and n.startswith("run_date=") and n[9:] in runs)
        ]
        if others:
            raise ForeignPathError(
                f"{self.role} {self.path} exists and is not the {self.noun} of index"
                f" {self.store.root} (no {OWNER}, and it holds {', '.join(others[:4])}"
                f"{', ...' if len(others) > 4 else ''}): it is never written into nor cleaned;"
                " choose a new or empty directory"
            )

    def claim(self, index_id: str) -> None:
        """Mark the table as this index's (an exclusive create: of two runs racing, one wins)."""
        marker = json.dumps({"format": self.marker, "index_id": index_id, "index": self.store.root})
        if not self.store.files.create_exclusive(f"{self.path}/{OWNER}", marker + "\n"):
            owner = self.owner()
            if owner is None or owner.get("index_id") != index_id:
                raise ForeignPathError(
                    f"{self.role} {self.path} became the {self.noun} of another index"
                    f" ({owner.get('index') if owner else '?'}) during this run; nothing committed"
                )

    def mark_staging(self, index_id: str | None, run_id: str) -> None:
        """Mark a run's staging directory as this index's, before anything is staged in it:
        recovery deletes only staging so marked (or a committed run's, once published)."""
        marker = json.dumps({"format": self.marker, "index_id": index_id, "run_id": run_id})
        self.store.files.write_text(f"{self.staging_dir(run_id)}/{OWNER}", marker + "\n")

    def owns_staging(self, index_id: str | None, name: str) -> bool:
        """Whether ``_staging/<name>`` is a staging directory this index marked."""
        if index_id is None or not _RUN_ID.match(name):
            return False
        path = self.staging_dir(name)
        if not self.store._inside(path, self.path):
            return False
        try:
            owner = self.store._read_json(f"{path}/{OWNER}")
        except BadInputError:
            return False
        return owner is not None and owner.get("index_id") == index_id

    def delete_staging(self, run_id: str) -> bool:
        """Delete a run's staging directory once it holds no partition; True if done."""
        files = self.store.files
        path = self.staging_dir(run_id)
        if not files.exists(path):
            return True
        left = [
            n
            for n in files.list_names(path)
            if n != OWNER and not (n in self.parts and not files.list_names(f"{path}/{n}"))
        ]
        if left or not self.store._inside(path, self.path):
            return False
        files.delete(path)
        return True

    def publish(self, run_id: str, run_date: str) -> int:
        """Move a run's staged partitions into place (those not yet there); how many moved."""
        moved = 0
        for part in self.parts:
            staged, final = self.staged(run_id, run_date, part), self.final(run_date, part)
            if self.store.files.is_dir(staged) and not self.store.files.exists(final):
                self.store.files.rename_dir(staged, final)
                moved += 1
        self.delete_staging(run_id)
        return moved

    def unpublish(self, run_id: str, run_date: str) -> bool:
        """Move a run's published partitions back to its staging; whether any was there."""
        moved = False
        self.mark_staging(self.store.index_id, run_id)  # so that recovery may delete it once undone
        for part in self.parts:
            staged, final = self.staged(run_id, run_date, part), self.final(run_date, part)
            if self.store.files.exists(final):
                self.store.files.rename_dir(final, staged)
                moved = True
        return moved

    def recover(self, index_id: str | None) -> int:
        """Delete the staging directories this index marked (after committed runs' partitions were
        published); returns how many."""
        deleted = 0
        for name in self.store.files.list_names(f"{self.path}/{STAGING}"):
            if self.owns_staging(index_id, name):
                self.store.files.delete(self.staging_dir(name))
                deleted += 1
            else:
                log.warning(
                    "left %s/%s/%s in place: no run of this index staged it",
                    self.path,
                    STAGING,
                    name,
                )
        return deleted


class IndexStore:
    """One index directory and the pair table its runs write (see the module docstring)."""

    def __init__(
        self,
        spark: SparkSession,
        index_path: str,
        pairs_path: str | None,
        *,
        reads: dict[str, str | None] | None = None,
        decisions_path: str | None = None,
    ) -> None:
        """``reads``: the other paths the run reads (role -> path); the index, the pair table and
        the decisions table must be apart from them and from each other (shingling/spark/paths.py,
        exit 2)."""
        check_output_name("--index", index_path)
        check_output_name("--output", pairs_path)
        check_output_name("--decisions", decisions_path)
        check_paths(
            {"--index": index_path, "--output": pairs_path, "--decisions": decisions_path},
            dict(reads or {}),
            lambda p: qualified(spark, p),
        )
        self.spark = spark
        self.root = self._qualified(index_path)
        self.pairs = self._qualified(pairs_path) if pairs_path else None
        self.files = Files(spark, is_local(self.root))
        self.index_id: str | None = None  # read by check_owned, written by claim
        self.pair_table = (
            PublishedTable(
                self, self.pairs, role="--output", noun="pair table", marker=PAIRS_FORMAT
            )
            if self.pairs
            else None
        )
        self.decision_table = (
            PublishedTable(
                self,
                self._qualified(decisions_path),
                role="--decisions",
                noun="decisions table",
                marker=DECISIONS_FORMAT,
                parts=(KEPT_TABLE, REMOVED_TABLE),
            )
            if decisions_path
            else None
        )
        self.tables = [t for t in (self.pair_table, self.decision_table) if t is not None]

    def _qualified(self, path: str) -> str:
        path = path.rstrip("/")
        return os.path.abspath(local_part(path)) if is_local(path) else path

    # -- ownership ----------------------------------------------------------------------------
    def _is_directory(self, path: str) -> bool:
        """Whether ``path`` is a directory (a symbolic link to one counts: /data/index -> disk)."""
        if self.files.local:
            return os.path.isdir(local_part(path))
        return self.files.is_dir(path)

    def _inside(self, path: str, root: str) -> bool:
        """Whether ``path`` lies strictly inside ``root``, ``..`` and symbolic links resolved up
        to its last component (a link there is itself inside: deleting it unlinks it).

        Recovery moves and deletes only such paths: whatever a manifest or a listing says, it
        never reaches outside this run's --index and --output, nor a parent of either.
        """
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if name in ("", ".", ".."):
            return False
        if self.files.local:
            top = os.path.realpath(local_part(root))
            parent = os.path.realpath(os.path.dirname(local_part(path).rstrip("/")))
            return os.path.join(parent, name).startswith(top.rstrip("/") + "/")
        top = posixpath.normpath(root)
        return posixpath.normpath(path).startswith(top.rstrip("/") + "/")

    def _read_json(self, path: str) -> dict[str, Any] | None:
        """A small JSON file of ours: None if absent, BadInputError (exit 3) if unreadable."""
        text = self.files.read_text(path)
        if text is None:
            return None
        try:
            value = json.loads(text)
        except ValueError as e:
            raise BadInputError(f"cannot read {path}: {e}; nothing was changed") from e
        if not isinstance(value, dict):
            raise BadInputError(f"cannot read {path}: not a JSON object; nothing was changed")
        return value

    def _identity(self) -> str | None:
        """The index's id from ``_identity.json``, None if there is none."""
        found = self._read_json(f"{self.root}/{IDENTITY}")
        if found is None:
            return None
        if found.get("format") != FORMAT or not str(found.get("index_id", "")).isalnum():
            raise ForeignPathError(
                f"--index {self.root}: its {IDENTITY} is not a shingling index's; nothing was"
                " written or deleted"
            )
        return str(found["index_id"])

    def check_owned(self) -> Manifest | None:
        """Refuse, before anything is written or deleted, an --index that is not an index of
        ours and a pair table that is not this index's (:class:`ForeignPathError`, exit 2).

        An index of ours holds ``_identity.json`` or a ``_manifest.json`` of our format (an index
        made before identities); a new index is a path that does not exist or an empty directory.
        A pair table is this index's when its ``_owner.json`` names the index; one without it is
        new (absent or empty) or, made before owner markers, holds only partitions of this index's
        runs. Returns the committed manifest (None if there is none).
        """
        if self.files.exists(self.root) and not self._is_directory(self.root):
            raise ForeignPathError(
                f"--index {self.root} exists and is not a directory; nothing was written"
            )
        names = [n for n in self.files.list_names(self.root) if n != LOCK]
        self.index_id = self._identity()
        manifest = None
        if MANIFEST in names:
            try:
                manifest = self.manifest()
            except IndexFormatError as e:
                raise ForeignPathError(
                    f"--index {self.root} is not an index of ours ({e}): it is never written into"
                    " nor cleaned; choose a new or empty directory"
                ) from e
            except (ValueError, KeyError, TypeError) as e:
                raise BadInputError(
                    f"cannot read {self.root}/{MANIFEST} ({e!r}); nothing was changed"
                ) from e
        if names and self.index_id is None and manifest is None:
            raise ForeignPathError(
                f"--index {self.root} is a directory that holds no index of ours (no {MANIFEST}"
                f" nor {IDENTITY}; it holds {', '.join(names[:4])}"
                f"{', ...' if len(names) > 4 else ''}): it is never written into nor cleaned;"
                " choose a new or empty directory"
            )
        runs = set(manifest.runs) if manifest else set()
        for table in self.tables:
            table.check_owned(self.index_id, runs)
        return manifest

    def claim(self) -> None:
        """Under the lock, before anything else is written: give a new index its identity and
        mark the pair table as this index's (exclusive creates: of two runs racing, one wins, and
        the other sees the winner's and checks it)."""
        if self.index_id is None:
            created = json.dumps(
                {
                    "format": FORMAT,
                    "index_id": uuid.uuid4().hex,
                    "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                }
            )
            self.files.create_exclusive(f"{self.root}/{IDENTITY}", created + "\n")
            self.index_id = self._identity()
        assert self.index_id is not None
        for table in self.tables:
            table.claim(self.index_id)

    def segment_dir(self, segment_id: str) -> str:
        """Where a segment the manifest names lives; BadInputError (exit 3) for an id that is not
        a plain name inside ``segments/``, so that an edited manifest never makes a run delete
        elsewhere."""
        path = segment_path(self.root, segment_id)
        if "/" in segment_id or not self._inside(path, f"{self.root}/{SEGMENTS}"):
            raise BadInputError(
                f"index {self.root}: its manifest names segment {segment_id!r}, which is not a"
                " directory inside its segments/; nothing was changed"
            )
        return path

    def staging_dir(self, run_id: str) -> str:
        """A run's staging directory in the pair table."""
        assert self.pair_table is not None
        return self.pair_table.staging_dir(run_id)

    def staged_pairs(self, run_id: str, run_date: str) -> str:
        """Where a run stages its pair partition: in this run's --output, whatever the manifest
        recorded (an index or pair table moved since keeps working, and an edited manifest cannot
        name a path elsewhere)."""
        assert self.pair_table is not None
        return self.pair_table.staged(run_id, run_date)

    def final_pairs(self, run_date: str) -> str:
        assert self.pair_table is not None
        return self.pair_table.final(run_date)

    def mark_staging(self, run_id: str) -> None:
        """Mark a run's staging directory in each published table as this index's, before
        anything is staged in it."""
        for table in self.tables:
            table.mark_staging(self.index_id, run_id)

    def _delete_staging(self, run_id: str) -> bool:
        """Delete a run's staging directories that hold no partition; True if all are gone."""
        return all([table.delete_staging(run_id) for table in self.tables])

    # -- lock ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, run_id: str, *, break_lock: bool = False) -> Iterator[None]:
        """Hold the index lock for the block; IndexBusyError if another run holds it."""
        lock = f"{self.root}/{LOCK}"
        owner = json.dumps(
            {
                "run_id": run_id,
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "since": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )
        if self.files.local:
            os.makedirs(self.root, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError as e:
                    holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
                    raise IndexBusyError(
                        f"index {self.root} is locked by another run: {holder}"
                    ) from e
                os.ftruncate(fd, 0)
                os.pwrite(fd, owner.encode("utf-8"), 0)
                yield
            finally:
                os.close(fd)  # releases the flock
            return
        if break_lock:
            log.warning("breaking the lock of %s: %s", self.root, self.files.read_text(lock))
            self.files.delete(lock)
        if not self.files.create_exclusive(lock, owner):
            raise IndexBusyError(
                f"index {self.root} is locked: {self.files.read_text(lock)}; if that run is dead,"
                " pass --break-lock"
            )
        try:
            yield
        finally:
            self.files.delete(lock)

    # -- state --------------------------------------------------------------------------------
    def manifest(self) -> Manifest | None:
        """The committed manifest, or None if nothing was ever committed."""
        path = f"{self.root}/{MANIFEST}"
        text = self.files.read_text(path)
        return parse_manifest(path, text) if text is not None else None

    def recover(self, manifest: Manifest | None) -> dict[str, int]:
        """Publish committed runs' staged pairs, delete killed runs' leftovers (under the lock).

        Only what this index owns: segments and version files inside this --index that the
        manifest does not name, and the staging directories in this --output that this index
        marked (:meth:`mark_staging`). The paths come from this run's --index and --output and
        the runs' ids, never from paths a manifest records.
        """
        done = {"pair_partitions_published": 0, "leftovers_deleted": 0}
        if self.decision_table is not None:
            done["decision_partitions_published"] = 0
        listed = {s.id for s in manifest.segments} if manifest else set()
        for run_date, run in manifest.runs.items() if manifest else ():
            run_id = str(run.get("run_id", ""))
            if not (_RUN_ID.match(run_id) and _ISO_DATE.match(run_date)):
                continue
            if self.pair_table is not None:
                moved = self.pair_table.publish(run_id, run_date)
                done["pair_partitions_published"] += moved
            if self.decision_table is not None:
                moved = self.decision_table.publish(run_id, run_date)
                done["decision_partitions_published"] += min(moved, 1)
        segments = f"{self.root}/{SEGMENTS}"
        for name in self.files.list_names(segments):
            path = segment_path(self.root, name)
            if name not in listed and self._inside(path, segments):
                self.files.delete(path)
                done["leftovers_deleted"] += 1
        current = manifest.version if manifest else 0
        for name in self.files.list_names(f"{self.root}/{VERSIONS}"):
            # a run killed between writing its version file and swapping the manifest
            path = f"{self.root}/{VERSIONS}/{name}"
            stale = name.endswith(".json") and name[:-5].isdigit() and int(name[:-5]) > current
            if stale and self._inside(path, self.root):
                self.files.delete(path)
                done["leftovers_deleted"] += 1
        for name in self.files.list_names(self.root):
            if re.match(rf"^{re.escape(MANIFEST)}\.tmp-[0-9a-f]{{12}}$", name):
                self.files.delete(f"{self.root}/{name}")
        for table in self.tables:
            done["leftovers_deleted"] += table.recover(self.index_id)
        return done

    def live_documents(self, manifest: Manifest) -> DataFrame | None:
        """The index's live document rows (with their segment), or None for an empty index."""
        if not manifest.segments:
            return None
        docs = self.spark.read.parquet(
            *[f"{segment_path(self.root, s.id)}/{DOCUMENTS}" for s in manifest.segments]
        )
        replaced = [s for s in manifest.segments if s.superseded]
        if replaced:
            dead = self.spark.read.parquet(
                *[f"{segment_path(self.root, s.id)}/{SUPERSEDED}" for s in replaced]
            )
            # the join puts its keys first: the columns keep the documents' order
            docs = docs.join(dead, [DOC_ID, SEGMENT], "left_anti").select(*docs.columns)
        return docs

    def removed_ids(self, manifest: Manifest) -> DataFrame | None:
        """(doc_id) of the live documents a night's dedup decision removed, or None when no
        segment holds decisions. A live document without a decision counts as kept."""
        decided = self.live_decisions(manifest)
        if decided is None:
            return None
        return decided.where(F.col("relation") != F.lit("kept")).select(DOC_ID)

    def live_decisions(self, manifest: Manifest) -> DataFrame | None:
        """Every segment's decisions of its live documents, or None when none holds any."""
        parts = []
        for s in manifest.segments:
            path = f"{segment_path(self.root, s.id)}/{DECISIONS}"
            if self.files.exists(path):
                parts.append(self.spark.read.parquet(path).withColumn(SEGMENT, F.lit(s.id)))
        if not parts:
            return None
        decided = parts[0]
        for part in parts[1:]:
            decided = decided.unionByName(part)
        live = self.live_documents(manifest)
        assert live is not None
        return decided.join(live.select(DOC_ID, SEGMENT), [DOC_ID, SEGMENT], "left_semi").drop(
            SEGMENT
        )

    def live_texts(self, manifest: Manifest) -> DataFrame | None:
        """(doc_id, segment, text) of every segment's documents (join on both to the live rows),
        or None for an empty index.

        Raises:
            MissingTextsError: a segment has no texts (it was written with pairs.verify = false).
        """
        if not manifest.segments:
            return None
        parts = []
        for s in manifest.segments:
            path = f"{segment_path(self.root, s.id)}/{TEXTS}"
            if not self.files.exists(path):
                raise MissingTextsError(
                    f"index segment {s.id} (run {s.run_date}) keeps no texts (it was written with"
                    " pairs.verify = false, or its texts/ was removed), so the pairs its documents"
                    " make cannot be verified: restore its texts/ from a backup of the index, or"
                    " build a new index (a night's pairs.verify must be the index's)"
                )
            parts.append(self.spark.read.parquet(path).withColumn(SEGMENT, F.lit(s.id)))
        texts = parts[0]
        for part in parts[1:]:
            texts = texts.unionByName(part)
        return texts

    def begin(self, base: Manifest, run_date: str, run_id: str) -> Transaction:
        return Transaction(self, base, run_date, run_id)

    def begin_compaction(self, base: Manifest, run_id: str) -> Compaction:
        return Compaction(self, base, run_id)

    def begin_rollback(self, base: Manifest, run_date: str, run_id: str) -> Rollback:
        return Rollback(self, base, run_date, run_id)

    def check_current(self, base: Manifest) -> None:
        """Protocol step 4: ConcurrentCommitError unless ``base`` is still the committed version."""
        current = self.manifest()
        if (current.version if current else 0) != base.version:
            raise ConcurrentCommitError(
                f"index {self.root} moved from version {base.version} to"
                f" {current.version if current else 0} during this run; nothing committed"
            )

    def swap_manifest(self, new: Manifest) -> None:
        """Protocol step 5, the commit point: the version file (exclusive create), then the
        manifest replaced by a rename."""
        text = new.to_json()
        if not self.files.create_exclusive(version_path(self.root, new.version), text):
            raise ConcurrentCommitError(
                f"version {new.version} of {self.root} was committed by another run"
            )
        hook("versioned")
        self.files.replace_file(f"{self.root}/{MANIFEST}", text)


class Transaction:
    """One run's additions: a segment and a pair partition, written aside, committed at once."""

    def __init__(self, store: IndexStore, base: Manifest, run_date: str, run_id: str) -> None:
        self.store = store
        self.base = base
        self.run_date = run_date
        self.run_id = run_id
        self.segment_id = f"{base.version + 1:06d}-{run_id}"
        self.segment = segment_path(store.root, self.segment_id)
        self.documents_path = f"{self.segment}/{DOCUMENTS}"
        self.texts_path = f"{self.segment}/{TEXTS}"
        self.decisions_path = f"{self.segment}/{DECISIONS}"
        self.staged_pairs = store.staged_pairs(run_id, run_date) if store.pairs else None
        self.final_pairs = store.final_pairs(run_date) if store.pairs else None
        self.info: SegmentInfo | None = None
        self.committed = False

    def write_documents(self, documents: DataFrame, options: WriteOptions) -> DataFrame:
        """Write the run's documents table as the segment's documents; returns it read back.

        ``documents`` must come range-partitioned and sorted by id (the caller orders the corpus
        before sketching, so that the sketching is not run twice to sample the range bounds).
        """
        tagged = documents.withColumn(ADDED, F.lit(self.run_date)).withColumn(
            SEGMENT, F.lit(self.segment_id)
        )
        tagged.write.option("parquet.block.size", str(options.row_group_bytes)).parquet(
            self.documents_path
        )
        return self.store.spark.read.parquet(self.documents_path)

    def write_texts(self, texts: DataFrame, options: WriteOptions) -> None:
        """Write the run's (doc_id, text) as the segment's texts, zstd-compressed, sorted by id."""
        _write_texts(texts, self.texts_path, options)

    def write_decisions(self, decisions: DataFrame) -> None:
        """Write the night's dedup decision of each of its documents into the segment."""
        decisions.coalesce(1).sortWithinPartitions(DOC_ID).write.parquet(self.decisions_path)

    def stage_pairs(self, pairs: DataFrame) -> None:
        """Write the run's pair partition aside, in a staging directory marked as this index's."""
        assert self.staged_pairs is not None
        self.store.mark_staging(self.run_id)
        pairs.write.parquet(self.staged_pairs)

    def stage_decisions(self, decisions: DataFrame) -> None:
        """Write the night's kept and removed documents aside in the decisions table (--decisions),
        from its decisions (doc_id, kept_id, relation, jaccard, containment, exact_duplicate)."""
        table = self.store.decision_table
        if table is None:
            return
        table.mark_staging(self.store.index_id, self.run_id)
        kept = decisions.where(F.col("relation") == F.lit("kept")).select(DOC_ID)
        removed = decisions.where(F.col("relation") != F.lit("kept"))
        for part, rows in ((KEPT_TABLE, kept), (REMOVED_TABLE, removed)):
            rows.coalesce(1).sortWithinPartitions(DOC_ID).write.parquet(
                table.staged(self.run_id, self.run_date, part)
            )

    def write_index(
        self, live: DataFrame | None, documents: int, options: WriteOptions
    ) -> SegmentInfo:
        """Write the segment's postings and the rows it replaces (``live``: the index before)."""
        spark = self.store.spark
        written = spark.read.parquet(self.documents_path)
        n_postings = int(written.agg(F.sum(F.coalesce(F.size(SKETCH), F.lit(0)))).first()[0] or 0)  # type: ignore[index]
        _write_postings(written, f"{self.segment}/{POSTINGS}", n_postings, options)
        ids = written.select(DOC_ID)
        if live is not None:
            superseded = live.select(DOC_ID, SEGMENT).join(F.broadcast(ids), DOC_ID, "left_semi")
        else:
            superseded = spark.createDataFrame([], written.select(DOC_ID, SEGMENT).schema)
        superseded.coalesce(1).write.parquet(f"{self.segment}/{SUPERSEDED}")
        n_superseded = spark.read.parquet(f"{self.segment}/{SUPERSEDED}").count()
        self.info = SegmentInfo(self.segment_id, self.run_date, documents, n_postings, n_superseded)
        return self.info

    def replaced_postings(self) -> int:
        """Postings of the rows this segment replaces (to keep the manifest's live count)."""
        spark = self.store.spark
        assert self.info is not None
        if not self.info.superseded:
            return 0
        dead = spark.read.parquet(f"{self.segment}/{SUPERSEDED}")
        docs = self.store.live_documents(self.base)
        assert docs is not None
        row = (
            docs.join(dead, [DOC_ID, SEGMENT], "left_semi")
            .agg(F.sum(F.coalesce(F.size(SKETCH), F.lit(0))))
            .first()
        )
        return int(row[0] or 0) if row else 0

    def commit(self, settings: dict[str, Any], id_type: str, run: dict[str, Any]) -> Manifest:
        """Protocol steps 4 and 5: check the base is still current, then swap the manifest."""
        assert self.info is not None
        self.store.check_current(self.base)
        live_docs = self.base.live_documents - self.info.superseded + self.info.documents
        live_postings = self.base.live_postings - self.replaced_postings() + self.info.postings
        entry = {"segment": self.segment_id, "run_id": self.run_id, **run}
        if self.staged_pairs:
            entry.update(staged_pairs=self.staged_pairs, final_pairs=self.final_pairs)
        table = self.store.decision_table
        if table is not None and self.store.files.exists(table.staging_dir(self.run_id)):
            entry.update(decisions=table.path)
        new = replace(
            self.base,
            version=self.base.version + 1,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            id_type=id_type,
            settings=settings,
            segments=(*self.base.segments, self.info),
            runs={**self.base.runs, self.run_date: entry},
            live_documents=live_docs,
            live_postings=live_postings,
        )
        self.store.swap_manifest(new)
        self.committed = True
        return new

    def abort(self) -> None:
        """Delete what this run wrote aside, unless it committed (then the next run publishes)."""
        if self.committed:
            return
        self.store.files.delete(self.segment)
        for table in self.store.tables:
            self.store.files.delete(table.staging_dir(self.run_id))

    def publish(self) -> None:
        """Step 6: move the staged partitions into the pair table (and the decisions table).

        A failure here comes after the commit point: it raises :class:`CommittedError`, which says
        the run is committed and how to finish (the next run on this index publishes the partition).
        """
        for table in self.store.tables:
            try:
                table.publish(self.run_id, self.run_date)
            except Exception as e:
                raise CommittedError(
                    f"run {self.run_date} IS COMMITTED as version {self.base.version + 1} of index"
                    f" {self.store.root}, but its {table.noun} partition was not published ({e}):"
                    f" it is staged at {table.staged(self.run_id, self.run_date, table.parts[0])};"
                    f" the next run on this index moves it to"
                    f" {table.final(self.run_date, table.parts[0])}, or move it there yourself"
                ) from e


class Compaction:
    """One index's live rows rewritten as one segment, committed like a night.

    The live rows of every segment (those no later segment supersedes) are written aside as a new
    segment (documents sorted by id, postings sorted by hash, texts when the index keeps them, no
    superseded rows); the commit replaces the manifest's segment list by that one segment, with
    the same live documents and postings (checked before the commit) and the same runs. The
    replaced segments are deleted after the commit; if the process dies first, the next run's
    recovery deletes them (they are no longer named by the manifest).
    """

    def __init__(self, store: IndexStore, base: Manifest, run_id: str) -> None:
        self.store = store
        self.base = base
        self.run_id = run_id
        self.segment_id = f"{base.version + 1:06d}-compact-{run_id}"
        self.segment = segment_path(store.root, self.segment_id)
        self.info: SegmentInfo | None = None
        self.committed = False

    def write(self, options: WriteOptions) -> SegmentInfo:
        """Write the new segment aside (nothing visible changes); returns what it holds.

        Raises:
            IndexCountsError: the rows written differ from the manifest's live counts.
            MissingTextsError: the index keeps texts, but a segment has none.
        """
        store, base = self.store, self.base
        spark = store.spark
        live = store.live_documents(base)
        assert live is not None
        documents_path = f"{self.segment}/{DOCUMENTS}"
        _write_sorted(
            live.withColumn(SEGMENT, F.lit(self.segment_id)),
            documents_path,
            DOC_ID,
            base.live_documents,
            options,
        )
        written = spark.read.parquet(documents_path)
        row = written.agg(
            F.count(F.lit(1)).alias("documents"),
            F.sum(F.coalesce(F.size(SKETCH), F.lit(0))).alias("postings"),
        ).first()
        assert row is not None
        documents, postings = int(row["documents"]), int(row["postings"] or 0)
        if (documents, postings) != (base.live_documents, base.live_postings):
            raise IndexCountsError(
                f"index {store.root} version {base.version}: its segments hold {documents} live"
                f" documents and {postings} postings, its manifest says {base.live_documents} and"
                f" {base.live_postings}; nothing was compacted"
            )
        _write_postings(written, f"{self.segment}/{POSTINGS}", postings, options)
        spark.createDataFrame([], written.select(DOC_ID, SEGMENT).schema).coalesce(1).write.parquet(
            f"{self.segment}/{SUPERSEDED}"
        )
        if base.settings.get("verify"):
            texts = store.live_texts(base)
            assert texts is not None
            kept = texts.join(live.select(DOC_ID, SEGMENT), [DOC_ID, SEGMENT], "left_semi")
            _write_texts(
                kept.select(DOC_ID, TEXT).repartitionByRange(
                    _file_count(documents, options), DOC_ID
                ),
                f"{self.segment}/{TEXTS}",
                options,
            )
        decided = store.live_decisions(base)
        if decided is not None:  # the nights' decisions of the live rows, kept with them
            decided.coalesce(1).sortWithinPartitions(DOC_ID).write.parquet(
                f"{self.segment}/{DECISIONS}"
            )
        run_date = base.last_run_date or (base.segments[-1].run_date if base.segments else "")
        self.info = SegmentInfo(self.segment_id, run_date, documents, postings, 0)
        return self.info

    def commit(self) -> Manifest:
        """Protocol steps 4 and 5: the manifest now names the one new segment."""
        assert self.info is not None
        self.store.check_current(self.base)
        new = replace(
            self.base,
            version=self.base.version + 1,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            segments=(self.info,),
        )
        self.store.swap_manifest(new)
        self.committed = True
        return new

    def abort(self) -> None:
        """Delete the new segment, unless the compaction committed."""
        if not self.committed:
            self.store.files.delete(self.segment)

    def delete_replaced(self) -> int:
        """After the commit: delete the segments the compacted one replaced; returns how many."""
        assert self.committed
        for s in self.base.segments:
            self.store.files.delete(self.store.segment_dir(s.id))
        return len(self.base.segments)


# how far after today (UTC) a run date may lie without --allow-future-date: a scheduler a time zone
# ahead, or a batch named for tomorrow, is a day ahead; a typo (2027 for 2026) is far more, and a
# committed date blocks every earlier one
MAX_DAYS_AHEAD = 2


class Rollback:
    """The index's last night taken back: the index and the pair table as they were before it,
    with the commit protocol of a night (``jobs/undo_night.py``).

    The version before the night is its history copy, ``_versions/<version - 1>.json``, checked
    to be the night's base (the same segments and runs but the night's): a night followed by a
    compaction, or any run but the last, is refused. The steps, under the lock and after recovery:

    1. **Unpublish**: the night's pair partition is moved back to its staging directory, the path
       a committed night's partition is published from. Killed here, the index still holds the
       night, and the next run's recovery publishes the partition again: nothing changed.
    2. **Commit**: the version before the night is committed again, as a new version (version
       numbers only grow, so every history file stays), by the manifest swap of a night.
    3. **Delete** the night's segment and staged partition. Killed before, the next run's recovery
       deletes them (the manifest no longer names them).
    """

    def __init__(self, store: IndexStore, base: Manifest, run_date: str, run_id: str) -> None:
        self.store = store
        self.base = base
        self.run_date = run_date
        self.run_id = run_id
        self.previous = self._previous()
        run = base.runs[run_date]
        self.night_run_id = str(run.get("run_id", ""))
        if not _RUN_ID.match(self.night_run_id):
            raise BadInputError(
                f"index {store.root}: run {run_date} has no run id its manifest can be trusted"
                f" with ({self.night_run_id!r}); nothing was changed"
            )
        self.segment = store.segment_dir(str(run["segment"]))
        if store.pairs is None and (run.get("final_pairs") or run.get("staged_pairs")):
            raise ConfigError(
                f"run {run_date} wrote a pair partition ({run.get('final_pairs')}): pass its pair"
                " table as --output, so that it is taken back with the index; nothing was changed"
            )
        if store.decision_table is None and run.get("decisions"):
            raise ConfigError(
                f"run {run_date} wrote its kept and removed documents to {run.get('decisions')}:"
                " pass that table as --decisions, so that they are taken back with the index;"
                " nothing was changed"
            )
        self.moved: list[PublishedTable] = []
        self.committed = False

    def _previous(self) -> Manifest:
        """The committed version before the night, checked to be the night's base."""
        store, base, night_date = self.store, self.base, self.run_date
        last = base.last_run_date
        if night_date not in base.runs:
            raise UndoRefusedError(
                f"index {store.root} holds no run {night_date} (its last run is {last});"
                " nothing to undo"
            )
        if night_date != last:
            raise UndoRefusedError(
                f"run {night_date} is not the last of index {store.root} ({last}): only the last"
                f" night can be undone; undo {last} first if it must go too"
            )
        night = base.runs[night_date].get("segment")
        if base.version == 1:
            previous = Manifest.empty(base.id_type, base.settings)
        else:
            text = store.files.read_text(version_path(store.root, base.version - 1))
            if text is None:
                raise BadInputError(
                    f"index {store.root}: {version_path(store.root, base.version - 1)}, the version"
                    f" before the night, is missing; nothing was changed"
                )
            try:
                previous = Manifest.from_json(text)
            except (ValueError, KeyError, TypeError) as e:
                raise BadInputError(
                    f"cannot read {version_path(store.root, base.version - 1)} ({e!r}); nothing"
                    " was changed"
                ) from e
        others = {d: r for d, r in base.runs.items() if d != night_date}
        if (
            not base.segments
            or base.segments[-1].id != night
            or previous.segments != base.segments[:-1]
            or previous.runs != others
            or previous.version != base.version - 1
        ):
            raise UndoRefusedError(
                f"version {base.version} of index {store.root} is not the night of {night_date}"
                " alone"
                " (the index was compacted since, or rebuilt): that night cannot be undone, since"
                " its documents are now part of other segments; build a new index, or keep it"
            )
        return previous

    def unpublish(self) -> None:
        """Step 1: move the night's pair partition back to the path it is published from."""
        for table in self.store.tables:
            if table.unpublish(self.night_run_id, self.run_date):
                self.moved.append(table)
            elif not self.store.files.exists(table.staging_dir(self.night_run_id)):
                log.warning(
                    "%s holds no partition run_date=%s: only the index is taken back",
                    table.path,
                    self.run_date,
                )

    def commit(self) -> Manifest:
        """Step 2: the version before the night, committed again as the next version."""
        self.store.check_current(self.base)
        new = replace(
            self.previous,
            version=self.base.version + 1,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        self.store.swap_manifest(new)
        self.committed = True
        return new

    def abort(self) -> None:
        """Before the commit: put the pair partition back in the pair table."""
        if self.committed:
            return
        for table in self.moved:
            table.publish(self.night_run_id, self.run_date)
        self.store._delete_staging(self.night_run_id)

    def delete_night(self) -> None:
        """Step 3, after the commit: the night's segment and staged pair partition."""
        assert self.committed
        self.store.files.delete(self.segment)
        for table in self.store.tables:
            self.store.files.delete(table.staging_dir(self.night_run_id))


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


def parse_manifest(path: str, text: str) -> Manifest:
    """The manifest at ``path`` from its text.

    Raises:
        ManifestError: the file is not a manifest (truncated, edited, foreign), naming it.
    """
    try:
        return Manifest.from_json(text)
    except (ValueError, KeyError, TypeError, AttributeError) as e:  # JSON, format, fields
        raise ManifestError(
            f"{path} is not a readable index manifest ({type(e).__name__}: {e}); nothing was"
            f" changed: restore it from the newest file of {VERSIONS}/ beside it (each committed"
            " version is kept there), or build a new index"
        ) from e


class ManifestError(ShinglingError):
    """The index's manifest cannot be read (truncated or edited)."""

    exit_code = ExitCode.BAD_INPUT


def index_settings(cfg: config_module.Config) -> dict[str, Any]:
    """The settings an index and its pair table are made with; every run must use the same."""
    return {
        "width": cfg.sketch.width,
        "k": cfg.sketch.k,
        "unit": cfg.sketch.unit,
        "sample_mod": cfg.sketch.sample_mod,
        "threshold": cfg.pairs.threshold,
        "max_exact_group": cfg.pairs.max_exact_group,
        # a verified index keeps its texts, and its pairs hold exact scores
        "verify": cfg.pairs.verify,
        **({"candidate_margin": cfg.pairs.candidate_margin} if cfg.pairs.verify else {}),
    }


def write_options(cfg: config_module.Config) -> WriteOptions:
    """How the run cuts the segment's files ([index] in the config)."""
    return WriteOptions(
        rows_per_file=cfg.index.rows_per_file, row_group_bytes=cfg.index.row_group_bytes
    )
