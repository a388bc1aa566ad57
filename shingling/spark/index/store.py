"""One index directory and the tables its runs publish into: ownership, the lock, recovery, the
live rows, and the manifest swap that commits (the protocol: :mod:`shingling.spark.index`)."""

from __future__ import annotations

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
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from shingling.errors import BadInputError
from shingling.index import (
    DECISIONS,
    DOCUMENTS,
    FORMAT,
    IDENTITY,
    LOCK,
    MANIFEST,
    SEGMENT,
    SEGMENTS,
    SUPERSEDED,
    TEXTS,
    VERSIONS,
    IndexFormatError,
    Manifest,
    segment_path,
    version_path,
)
from shingling.schema import DOC_ID
from shingling.spark.hooks import hook
from shingling.spark.index.compaction import Compaction
from shingling.spark.index.errors import (
    ConcurrentCommitError,
    ForeignPathError,
    IndexBusyError,
    ManifestError,
    MissingTextsError,
)
from shingling.spark.index.published import (
    DECISIONS_FORMAT,
    KEPT_TABLE,
    PAIRS_FORMAT,
    REMOVED_TABLE,
    RUN_ID,
    PublishedTable,
)
from shingling.spark.index.rollback import Rollback
from shingling.spark.index.transaction import Transaction
from shingling.spark.paths import check_output_name, check_paths, is_local, local_part
from shingling.spark.storage import Files, qualified

log = logging.getLogger("shingling")

ISO_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


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
            if not (RUN_ID.match(run_id) and ISO_DATE.match(run_date)):
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

    def commit_next(self, base: Manifest, new: Manifest) -> Manifest:
        """Protocol steps 4 and 5: unless another run committed since ``base``, commit ``new`` as
        the version after it, stamped now; returns what was committed."""
        self.check_current(base)
        committed = replace(
            new,
            version=base.version + 1,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        self.swap_manifest(committed)
        return committed

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
