"""Helpers of the hostile suite."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from shingling import config
from shingling.index import Manifest, SegmentInfo
from shingling.spark.index.segments import index_settings
from shingling.spark.index.store import IndexStore
from shingling.spark.index.transaction import Transaction


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (itself included) with the digest of its bytes."""
    if root.is_file():
        return {str(root): hashlib.sha256(root.read_bytes()).hexdigest()}
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def claimed(index: Path, pairs: Path) -> IndexStore:
    """A local index store whose index and pair table are ours (no session: local paths)."""
    store = IndexStore(None, str(index), str(pairs))  # type: ignore[arg-type]
    store.check_owned()
    with store.locked("test"):
        store.claim()
    return store


def committed(store: IndexStore, run_id: str = "aaaaaaaaaaaa", *, publish: bool) -> Transaction:
    """A night committed by hand, as the protocol does it: a segment and a pair partition of one
    row written aside, the manifest swapped, the partition published (or not: killed before)."""
    settings = index_settings(config.load())  # what a night with the defaults checks
    base = store.manifest() or Manifest.empty("string", settings)
    date = f"2026-12-{base.version + 1:02d}"
    tx = store.begin(base, date, run_id)
    assert tx.staged_pairs is not None
    store.mark_staging(run_id)
    Path(tx.staged_pairs).mkdir(parents=True)
    pq.write_table(pa.table({"doc_a": [run_id]}), f"{tx.staged_pairs}/part-0.parquet")
    Path(tx.segment, "documents").mkdir(parents=True)
    tx.info = SegmentInfo(tx.segment_id, date, documents=1, postings=0, superseded=0)
    tx.commit(settings, "string", {})
    if publish:
        tx.publish()
    return tx
