"""The persistent sketch index: its layout, and a reader that needs only pyarrow (no Spark).

The nightly job (``jobs/nightly.py``) tests each night's new documents against every document seen
before; this index is where "every document seen before" lives. ``shingling/spark/index/`` writes it
(with Spark); this module defines the layout and reads it.

Layout
------
::

    index/
      _manifest.json               the current committed version (see below); the only entry point
      _versions/00000003.json      every committed manifest, kept for history (never read to open)
      _lock                        the writers' lock (see shingling/spark/index/); readers ignore it
      _identity.json               {"format": "shingling-index", "index_id": ...}: written when the
                                   index is created, so that a directory is known to be an index
                                   (and its pair table known to be its) before anything is touched
      segments/
        000001-<run id>/           one segment per committed run (the build, then one per night);
                                   a compaction (jobs/compact_index.py) replaces them all by one,
                                   000031-compact-<run id>, holding their live rows
          documents/*.parquet      doc_id, n_words, n_shingles, sketch, text_hash, skip_reason,
                                   added,
                                   segment (this segment's id, so Spark can tell segments apart)
                                   one row per document of that run; range-partitioned and sorted by
                                   doc_id, so a look-up by id reads one row group per file at most
          postings/*.parquet       hash, doc_id: one row per hash of every sketch of that run;
                                   range-partitioned and sorted by hash (small row groups), so the
                                   row groups' min/max statistics bound the hashes each can hold
          superseded/*.parquet     doc_id, segment: the rows of earlier segments that this run's
                                   documents replace (a document that arrived again under its id)
          texts/*.parquet          doc_id, text: the run's texts (zstd), read back only to verify
                                   the pairs a later batch makes with these documents (an index
                                   made with pairs.verify = false has none)
          decisions/*.parquet      doc_id, kept_id, relation, jaccard, containment,
                                   exact_duplicate: the night's dedup decision for each of its
                                   documents (kept, or removed in favour of kept_id; docs/nightly.md);
                                   an index made with pairs.verify = false, or by build-index, has
                                   none, and its documents count as kept

Types: ``doc_id`` is the corpus' id type (integer or string); ``hash`` and ``sketch`` elements are
signed 64-bit integers (see shingling/hashing.py); ``added`` is the run date (``YYYY-MM-DD``) of the
run that added that version of the document. ``sketch`` is null (and ``skip_reason`` set) for a
document that has no words: it is kept so that it still replaces an older version, but it has no
postings.

A row of segment ``s`` is *live* unless ``(doc_id, s)`` is listed in a ``superseded`` table of a
later segment of the manifest. Every id has at most one live row. Files and segments not named by
``_manifest.json`` (a killed run's leftovers) do not exist as far as readers are concerned.

Manifest
--------
``_manifest.json`` is replaced atomically (written aside, then renamed into place) by the run that
commits; it holds::

    {"format": "shingling-index", "format_version": 1, "version": 3,
     "created_at": "2026-12-01T02:00:00+00:00",
     "id_type": "string",                          # Spark simpleString of doc_id
     "settings": {"width": 4, "k": 20, "threshold": 0.6, "max_exact_group": 100},
     "segments": [{"id": "000001-1a2b3c4d5e6f", "run_date": "2026-11-30",
                   "documents": 669, "postings": 12345, "superseded": 0}, ...],
     "runs": {"2026-11-30": {"segment": "000001-1a2b3c4d5e6f", "pairs": "/abs/pairs",
                             "staged_pairs": "/abs/pairs/_staging/1a2b3c4d5e6f/run_date=2026-11-30",
                             "pairs_written": 210}},
     "live_documents": 669, "live_postings": 12345}

Usage
-----
>>> reader = open_index("index/")                          # doctest: +SKIP
>>> reader.documents(["a.txt"]).to_pylist()[0]["sketch"]     # doctest: +SKIP
>>> reader.postings([-9214347791436478457]).to_pylist()     # doctest: +SKIP
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from shingling.schema import (
    ADDED,
    DOC_ID,
    HASH,
    N_SHINGLES,
    N_WORDS,
    SEGMENT,
    SKETCH,
    SKIP_REASON,
    TEXT_HASH,
    documents_table_schema,
)

FORMAT = "shingling-index"
FORMAT_VERSION = 1

MANIFEST = "_manifest.json"
VERSIONS = "_versions"
LOCK = "_lock"
IDENTITY = "_identity.json"
SEGMENTS = "segments"
DOCUMENTS = "documents"
POSTINGS = "postings"
SUPERSEDED = "superseded"
TEXTS = "texts"
DECISIONS = "decisions"

# Columns of the index tables: the documents table's, and when each document was added.
DOCUMENT_COLUMNS = (DOC_ID, N_WORDS, N_SHINGLES, SKETCH, TEXT_HASH, SKIP_REASON, ADDED)


class IndexNotFoundError(FileNotFoundError):
    """There is no committed index at the path (no _manifest.json)."""


class IndexFormatError(ValueError):
    """The manifest is not one this code can read."""


@dataclass(frozen=True)
class SegmentInfo:
    """One committed segment: the documents one run added."""

    id: str
    run_date: str
    documents: int
    postings: int
    superseded: int

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SegmentInfo:
        return cls(
            id=str(d["id"]),
            run_date=str(d["run_date"]),
            documents=int(d["documents"]),
            postings=int(d["postings"]),
            superseded=int(d["superseded"]),
        )


@dataclass(frozen=True)
class Manifest:
    """The content of ``_manifest.json``: one committed version of the index."""

    version: int
    created_at: str
    id_type: str
    settings: dict[str, Any]
    segments: tuple[SegmentInfo, ...]
    runs: dict[str, dict[str, Any]]
    live_documents: int
    live_postings: int

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """Parse a manifest, refusing another format or a newer format version.

        >>> Manifest.from_json(Manifest.empty("string", {"k": 20}).to_json()).version
        0
        """
        d = json.loads(text)
        if d.get("format") != FORMAT:
            raise IndexFormatError(f"not a shingling index manifest (format {d.get('format')!r})")
        if int(d.get("format_version", 0)) > FORMAT_VERSION:
            raise IndexFormatError(
                f"index format version {d['format_version']} is newer than this code's"
                f" ({FORMAT_VERSION})"
            )
        return cls(
            version=int(d["version"]),
            created_at=str(d["created_at"]),
            id_type=str(d["id_type"]),
            settings=dict(d["settings"]),
            segments=tuple(SegmentInfo.from_dict(s) for s in d["segments"]),
            runs={str(k): dict(v) for k, v in d["runs"].items()},
            live_documents=int(d["live_documents"]),
            live_postings=int(d["live_postings"]),
        )

    @classmethod
    def empty(cls, id_type: str, settings: dict[str, Any]) -> Manifest:
        """Version 0: an index with no segment, the base the first run commits over."""
        return cls(0, "", id_type, dict(settings), (), {}, 0, 0)

    def to_json(self) -> str:
        d = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "version": self.version,
            "created_at": self.created_at,
            "id_type": self.id_type,
            "settings": self.settings,
            "segments": [vars(s) for s in self.segments],
            "runs": self.runs,
            "live_documents": self.live_documents,
            "live_postings": self.live_postings,
        }
        return json.dumps(d, indent=2) + "\n"

    @property
    def last_run_date(self) -> str | None:
        return max(self.runs) if self.runs else None


def segment_path(root: str, segment_id: str) -> str:
    """Where a segment's tables live, under the index root.

    >>> segment_path("/data/index/", "000002-ab")
    '/data/index/segments/000002-ab'
    """
    return f"{root.rstrip('/')}/{SEGMENTS}/{segment_id}"


def version_path(root: str, version: int) -> str:
    """Where the history copy of a committed manifest lives.

    >>> version_path("index", 3)
    'index/_versions/00000003.json'
    """
    return f"{root.rstrip('/')}/{VERSIONS}/{version:08d}.json"


def _filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    if "://" in path:
        return pafs.FileSystem.from_uri(path)
    return pafs.LocalFileSystem(), path


def read_manifest(path: str) -> Manifest:
    """The committed manifest of the index at ``path``.

    Raises:
        IndexNotFoundError: nothing has been committed there.
    """
    fs, root = _filesystem(path)
    try:
        with fs.open_input_stream(f"{root.rstrip('/')}/{MANIFEST}") as f:
            return Manifest.from_json(f.read().decode("utf-8"))
    except FileNotFoundError as e:
        raise IndexNotFoundError(f"no index at {path} (no {MANIFEST})") from e


@dataclass
class _File:
    path: str
    segment: str
    metadata: pq.FileMetaData


@dataclass
class ReadStats:
    """What a reader touched: files opened and row groups read, out of those it considered."""

    row_groups_read: int = 0
    row_groups_total: int = 0


@dataclass
class IndexReader:
    """Read the committed version of an index, touching only the row groups a look-up needs.

    Open one with :func:`open_index`. A reader sees the version that was current when it was
    opened, even if a run commits a newer one meanwhile (segments are never rewritten in place).
    """

    root: str
    manifest: Manifest
    fs: pafs.FileSystem
    stats: ReadStats = field(default_factory=ReadStats)
    _files: dict[str, list[_File]] = field(default_factory=dict)
    _dead: set[tuple[str, Any]] | None = None

    def _table_files(self, table: str) -> list[_File]:
        if table not in self._files:
            files = []
            for seg in self.manifest.segments:
                base = f"{segment_path(self.root, seg.id)}/{table}"
                infos = self.fs.get_file_info(
                    pafs.FileSelector(base, allow_not_found=True, recursive=True)
                )
                for info in sorted(infos, key=lambda i: i.path):
                    # Spark's _SUCCESS and .crc files are not data
                    if info.type == pafs.FileType.File and not info.base_name.startswith(
                        ("_", ".")
                    ):
                        with self.fs.open_input_file(info.path) as f:
                            files.append(_File(info.path, seg.id, pq.ParquetFile(f).metadata))
            self._files[table] = files
        return self._files[table]

    def _dead_rows(self) -> set[tuple[str, Any]]:
        """(segment, doc_id) of every row that a later segment replaced."""
        if self._dead is None:
            dead: set[tuple[str, Any]] = set()
            for f in self._table_files(SUPERSEDED):
                with self.fs.open_input_file(f.path) as src:
                    t = pq.read_table(src, columns=[DOC_ID, SEGMENT])
                dead.update(zip(t[SEGMENT].to_pylist(), t[DOC_ID].to_pylist(), strict=True))
            self._dead = dead
        return self._dead

    def _lookup(
        self, table: str, column: str, keys: Iterable[Any], columns: Sequence[str]
    ) -> pa.Table:
        """Rows of ``table`` whose ``column`` is in ``keys``, live only, reading only row groups
        whose min/max statistics could hold one of the keys."""
        wanted = sorted(set(keys))
        parts: list[pa.Table] = []
        if wanted:
            value_set = pa.array(wanted)
            for f in self._table_files(table):
                col = f.metadata.schema.to_arrow_schema().get_field_index(column)
                groups = []
                for i in range(f.metadata.num_row_groups):
                    self.stats.row_groups_total += 1
                    st = f.metadata.row_group(i).column(col).statistics
                    if st is not None and st.has_min_max:
                        # the first wanted key >= min; the group can hold a key only if it is <= max
                        j = bisect.bisect_left(wanted, st.min)
                        if j == len(wanted) or wanted[j] > st.max:
                            continue
                    groups.append(i)
                if not groups:
                    continue
                self.stats.row_groups_read += len(groups)
                with self.fs.open_input_file(f.path) as src:
                    t = pq.ParquetFile(src).read_row_groups(groups, columns=list(columns))
                t = t.filter(
                    pc.is_in(t[column], value_set=value_set.cast(t.schema.field(column).type))
                )
                parts.append(
                    t.append_column(SEGMENT, pa.array([f.segment] * t.num_rows, pa.string()))
                )
        if not parts:
            return self._empty(table, columns)
        # segments written by different runs may differ in nullability (build_index copies a run's
        # table, nightly writes its own) or integer width: one schema for all of them
        found = pa.concat_tables(parts, promote_options="permissive")
        dead = self._dead_rows()
        if dead:
            live = [
                (s, d) not in dead
                for s, d in zip(found[SEGMENT].to_pylist(), found[DOC_ID].to_pylist(), strict=True)
            ]
            found = found.filter(pa.array(live))
        return found.drop_columns([SEGMENT])

    def _empty(self, table: str, columns: Sequence[str]) -> pa.Table:
        files = self._table_files(table)
        if files:
            return files[0].metadata.schema.to_arrow_schema().empty_table().select(list(columns))
        id_type = pa.string() if self.manifest.id_type == "string" else pa.int64()
        types = {f.name: f.type for f in documents_table_schema(id_type)}
        types |= {HASH: pa.int64(), ADDED: pa.string()}
        return pa.schema([(c, types[c]) for c in columns]).empty_table()

    def documents(self, ids: Iterable[Any], columns: Sequence[str] = DOCUMENT_COLUMNS) -> pa.Table:
        """The live rows of the documents with these ids (those the index holds; any order)."""
        return self._lookup(DOCUMENTS, DOC_ID, ids, columns)

    def postings(self, hashes: Iterable[int]) -> pa.Table:
        """The live (hash, doc_id) rows for these hashes: which documents' sketches hold each."""
        return self._lookup(POSTINGS, HASH, hashes, (HASH, DOC_ID))

    def posting_bounds(self, hashes: Sequence[int]) -> np.ndarray:
        """For each hash, an upper bound on its postings: the rows of the row groups that can
        hold it, from the postings files' footers only (min/max statistics), nothing read."""
        wanted = np.array(hashes, dtype=np.int64)
        bounds = np.zeros(len(wanted), dtype=np.int64)
        for f in self._table_files(POSTINGS):
            meta = f.metadata
            column = meta.schema.to_arrow_schema().get_field_index(HASH)
            for i in range(meta.num_row_groups):
                group = meta.row_group(i)
                stats = group.column(column).statistics
                if stats is None or not stats.has_min_max:
                    bounds += group.num_rows
                else:
                    bounds += np.where(
                        (wanted >= stats.min) & (wanted <= stats.max), group.num_rows, 0
                    )
        return bounds


def open_index(path: str) -> IndexReader:
    """A reader of the committed version of the index at ``path`` (a local path or a URI).

    Raises:
        IndexNotFoundError: nothing has been committed there.
    """
    fs, root = _filesystem(path)
    return IndexReader(root=root.rstrip("/"), manifest=read_manifest(path), fs=fs)
