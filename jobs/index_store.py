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
import socket
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs import config as config_module
from jobs.errors import ConfigError, ExitCode, ShinglingError
from jobs.io import TEST_HOOK_ENV as TEST_HOOK_ENV  # re-exported: the tests set it from here
from jobs.io import Files, hook, qualified
from jobs.paths import check_output_name, check_paths, is_local, local_part
from jobs.schemas import DOC_ID, SKETCH, TEXT
from shingling.index import (
    ADDED,
    DOCUMENTS,
    HASH,
    LOCK,
    MANIFEST,
    POSTINGS,
    SEGMENT,
    SUPERSEDED,
    TEXTS,
    VERSIONS,
    Manifest,
    SegmentInfo,
    segment_path,
    version_path,
)

log = logging.getLogger("shingling")

STAGING = "_staging"


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


def add_lock_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--break-lock`` option of the jobs that write an index."""
    parser.add_argument(
        "--break-lock",
        action="store_true",
        help="remove a dead run's lock first (only needed on filesystems without flock, e.g. HDFS)",
    )


class IndexStore:
    """One index directory and the pair table its runs write (see the module docstring)."""

    def __init__(
        self,
        spark: SparkSession,
        index_path: str,
        pairs_path: str | None,
        *,
        reads: dict[str, str | None] | None = None,
    ) -> None:
        """``reads``: the other paths the run reads (role -> path); the index and the pair table
        must be apart from them and from each other (jobs/paths.py, exit 2)."""
        check_output_name("--index", index_path)
        check_output_name("--output", pairs_path)
        check_paths(
            {"--index": index_path, "--output": pairs_path},
            dict(reads or {}),
            lambda p: qualified(spark, p),
        )
        self.spark = spark
        self.root = self._qualified(index_path)
        self.pairs = self._qualified(pairs_path) if pairs_path else None
        self.files = Files(spark, is_local(self.root))

    def _qualified(self, path: str) -> str:
        path = path.rstrip("/")
        return os.path.abspath(local_part(path)) if is_local(path) else path

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
        """Publish committed runs' staged pairs, delete killed runs' leftovers (under the lock)."""
        done = {"pair_partitions_published": 0, "leftovers_deleted": 0}
        listed = {s.id for s in manifest.segments} if manifest else set()
        for run in manifest.runs.values() if manifest else ():
            staged, final = run.get("staged_pairs"), run.get("final_pairs")
            if staged and final and self.files.exists(staged) and not self.files.exists(final):
                self.files.rename_dir(staged, final)
                self.files.delete(staged.rsplit("/", 1)[0])  # the run's now empty staging directory
                done["pair_partitions_published"] += 1
        for name in self.files.list_names(f"{self.root}/segments"):
            if name not in listed:
                self.files.delete(segment_path(self.root, name))
                done["leftovers_deleted"] += 1
        current = manifest.version if manifest else 0
        for name in self.files.list_names(f"{self.root}/{VERSIONS}"):
            # a run killed between writing its version file and swapping the manifest
            if name.endswith(".json") and name[:-5].isdigit() and int(name[:-5]) > current:
                self.files.delete(f"{self.root}/{VERSIONS}/{name}")
                done["leftovers_deleted"] += 1
        for name in self.files.list_names(self.root):
            if name.startswith(f"{MANIFEST}.tmp-"):
                self.files.delete(f"{self.root}/{name}")
        if self.pairs:
            for name in self.files.list_names(f"{self.pairs}/{STAGING}"):
                self.files.delete(f"{self.pairs}/{STAGING}/{name}")
                done["leftovers_deleted"] += 1
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
        self.staged_pairs = (
            f"{store.pairs}/{STAGING}/{run_id}/run_date={run_date}" if store.pairs else None
        )
        self.final_pairs = f"{store.pairs}/run_date={run_date}" if store.pairs else None
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

    def stage_pairs(self, pairs: DataFrame) -> None:
        assert self.staged_pairs is not None
        pairs.write.parquet(self.staged_pairs)

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
        if self.store.pairs:
            self.store.files.delete(f"{self.store.pairs}/{STAGING}/{self.run_id}")

    def publish_pairs(self) -> None:
        """Step 6: move the staged pair partition into the pair table.

        A failure here comes after the commit point: it raises :class:`CommittedError`, which says
        the run is committed and how to finish (the next run on this index publishes the partition).
        """
        if not (self.staged_pairs and self.final_pairs):
            return
        try:
            self.store.files.rename_dir(self.staged_pairs, self.final_pairs)
            self.store.files.delete(f"{self.store.pairs}/{STAGING}/{self.run_id}")
        except Exception as e:
            raise CommittedError(
                f"run {self.run_date} IS COMMITTED as version {self.base.version + 1} of index"
                f" {self.store.root}, but its pair partition was not published ({e}): it is staged"
                f" at {self.staged_pairs}; the next run on this index moves it to"
                f" {self.final_pairs}, or move it there yourself"
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
            self.store.files.delete(segment_path(self.store.root, s.id))
        return len(self.base.segments)


def check_run_date(value: str) -> str:
    """The run date, refused unless it is a calendar date written YYYY-MM-DD.

    >>> check_run_date("2026-12-01")
    '2026-12-01'
    """
    try:
        parsed = date.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed.isoformat() != value:
        raise ConfigError(f"--run-date {value!r}: expected a date written YYYY-MM-DD")
    return value


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
