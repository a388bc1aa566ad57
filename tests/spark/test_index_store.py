"""The index store: what Spark writes the pyarrow reader reads, the lock, the commit, recovery."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from shingling import config as config_module
from shingling.index import (
    DOCUMENT_COLUMNS,
    Manifest,
    SegmentInfo,
    open_index,
    segment_path,
    version_path,
)
from shingling.spark.index.errors import ConcurrentCommitError, IndexBusyError
from shingling.spark.index.store import IndexStore
from shingling.spark.jobs import nightly

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "sample" / "corpus.parquet"


def test_reader_reads_what_spark_wrote(spark, tmp_path):
    # small row groups, so that a look-up has groups to skip
    cfg = config_module.load(None, ["index.row_group_bytes=65536"])
    nightly.run(
        spark, cfg, batch_path=str(CORPUS), index_path=str(tmp_path / "index"),
        pairs_path=str(tmp_path / "pairs"), run_date="2026-12-01",
    )  # fmt: skip
    docs = spark.read.parquet(str(tmp_path / "index" / "segments" / "*" / "documents"))
    ids = [r.doc_id for r in docs.select("doc_id").orderBy("doc_id").limit(600).collect()][::37]
    expected = {r.doc_id: r.asDict() for r in docs.where(F.col("doc_id").isin(ids)).collect()}

    reader = open_index(str(tmp_path / "index"))
    got = {r["doc_id"]: r for r in reader.documents(ids + ["not-an-id"]).to_pylist()}
    assert set(got) == set(ids)
    for doc_id, row in got.items():
        # the reader's columns (not the segment, nor the checksum only dedup and builds read)
        assert row == {k: v for k, v in expected[doc_id].items() if k in DOCUMENT_COLUMNS}

    hashes = sorted({h for r in expected.values() if r["sketch"] for h in r["sketch"][:3]})
    exploded = docs.select(F.explode("sketch").alias("hash"), "doc_id").where(
        F.col("hash").isin(hashes)
    )
    want = sorted((r.hash, r.doc_id) for r in exploded.collect())
    reader = open_index(str(tmp_path / "index"))
    postings = reader.postings(hashes)
    assert (
        sorted(zip(postings["hash"].to_pylist(), postings["doc_id"].to_pylist(), strict=True))
        == want
    )
    # the postings are sorted by hash into row groups: a handful of hashes reads a few of them
    assert 0 < reader.stats.row_groups_read < reader.stats.row_groups_total
    one = open_index(str(tmp_path / "index"))
    one.postings(hashes[:1])
    assert one.stats.row_groups_read <= 2


def test_lock_is_exclusive_and_dies_with_its_holder(tmp_path):
    store = IndexStore(None, str(tmp_path / "index"), None)  # type: ignore[arg-type]  # local: no Spark
    with store.locked("first"):
        with pytest.raises(IndexBusyError, match="first"):
            with IndexStore(None, str(tmp_path / "index"), None).locked("second"):  # type: ignore[arg-type]
                pass
    with store.locked("again"):
        pass
    # a process that dies holding the lock does not keep it
    holder = textwrap.dedent(f"""
        import os
        from shingling.spark.index.store import IndexStore
        with IndexStore(None, {str(tmp_path / "index")!r}, None).locked("doomed"):
            os._exit(9)
    """)
    assert subprocess.run([sys.executable, "-c", holder], cwd=REPO).returncode == 9
    with store.locked("after"):
        pass


def _segment_info(seg_id: str) -> SegmentInfo:
    return SegmentInfo(seg_id, "2026-12-01", documents=0, postings=0, superseded=0)


def test_only_one_of_two_runs_from_the_same_version_commits(tmp_path):
    # both start from version 0 (as two runs would without a lock); the second must not commit
    store = IndexStore(None, str(tmp_path / "index"), str(tmp_path / "pairs"))  # type: ignore[arg-type]
    base = Manifest.empty("string", {"k": 20})
    first = store.begin(base, "2026-12-01", "aaaaaaaaaaaa")
    second = store.begin(base, "2026-12-02", "bbbbbbbbbbbb")
    first.info, second.info = _segment_info(first.segment_id), _segment_info(second.segment_id)
    committed = first.commit({"k": 20}, "string", {})
    with pytest.raises(ConcurrentCommitError):
        second.commit({"k": 20}, "string", {})
    assert store.manifest() == committed
    assert list(store.manifest().runs) == ["2026-12-01"]  # type: ignore[union-attr]


def test_recovery_publishes_committed_pairs_and_deletes_leftovers(tmp_path):
    store = IndexStore(None, str(tmp_path / "index"), str(tmp_path / "pairs"))  # type: ignore[arg-type]
    store.check_owned()
    store.claim()  # the index's identity, and the pair table marked as its
    tx = store.begin(Manifest.empty("string", {"k": 20}), "2026-12-01", "aaaaaaaaaaaa")
    assert tx.staged_pairs and tx.final_pairs
    store.mark_staging(tx.run_id)
    Path(tx.staged_pairs).mkdir(parents=True)
    pq.write_table(
        pq.read_table(CORPUS, columns=["doc_id"]).slice(0, 3), f"{tx.staged_pairs}/part-0.parquet"
    )
    Path(tx.segment).mkdir(parents=True)
    tx.info = _segment_info(tx.segment_id)
    manifest = tx.commit({"k": 20}, "string", {})  # killed here: pairs staged, not published
    # a killed run's leftovers: a segment, staged pairs, a version file above the manifest's
    Path(segment_path(store.root, "000002-cccccccccccc"), "documents").mkdir(parents=True)
    store.mark_staging("cccccccccccc")  # as a run does before it stages its pairs
    Path(tmp_path / "pairs" / "_staging" / "cccccccccccc" / "run_date=2026-12-02").mkdir(
        parents=True
    )
    Path(version_path(store.root, 2)).write_text("{}")

    done = store.recover(store.manifest())
    assert done == {"pair_partitions_published": 1, "leftovers_deleted": 3}
    assert pq.read_table(tmp_path / "pairs" / "run_date=2026-12-01").num_rows == 3
    assert sorted(p.name for p in (tmp_path / "index" / "segments").iterdir()) == [tx.segment_id]
    assert not Path(version_path(store.root, 2)).exists()
    assert store.manifest() == manifest
