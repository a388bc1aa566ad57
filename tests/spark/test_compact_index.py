"""Compaction of the sketch index: the same live rows in one segment, the same next night, and the
commit protocol of a night (killed before the commit: nothing changed; after it: committed).

Real text only: the sample corpus (669 Debian copyright files) cut into nights, some documents
arriving again with another text.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual
from test_nightly import (
    CFG,
    CORPUS,
    REPO,
    kill_group,
    run_night,
    visible_state,
    wait_for_hook,
    write_batch,
)

from shingling.errors import BadInputError
from shingling.index import open_index
from shingling.spark.hooks import TEST_HOOK_ENV
from shingling.spark.index.compaction import Compaction
from shingling.spark.index.errors import ForeignPathError, IndexCountsError
from shingling.spark.jobs import compact_index, nightly
from shingling.summaries import CompactSummary


@pytest.fixture(scope="module")
def corpus() -> pa.Table:
    return pq.read_table(CORPUS, columns=["doc_id", "text"])


def three_nights(corpus: pa.Table, tmp: Path, spark: SparkSession) -> np.ndarray:
    """Nights 1 to 3 into ``tmp``/index: 250 documents, then 40 of them again with other texts
    and 150 new, then 100 new; returns the order the rows were sent in (500 sent, 169 not)."""
    ids, texts = corpus["doc_id"].to_pylist(), corpus["text"].to_pylist()
    perm = np.random.default_rng(7).permutation(len(ids))
    run_night(spark, tmp, write_batch(corpus, perm[:250], tmp / "b1.parquet"), "2026-12-01")
    again, donors = perm[:40], perm[600:640]
    second = pa.table({
        "doc_id": [ids[i] for i in again] + [ids[i] for i in perm[250:400]],
        "text": [texts[d] for d in donors] + [texts[i] for i in perm[250:400]],
    })  # fmt: skip
    pq.write_table(second, tmp / "b2.parquet")
    run_night(spark, tmp, str(tmp / "b2.parquet"), "2026-12-02")
    run_night(spark, tmp, write_batch(corpus, perm[400:500], tmp / "b3.parquet"), "2026-12-03")
    return perm


@pytest.fixture(scope="module")
def nights(spark, corpus, tmp_path_factory) -> tuple[Path, np.ndarray]:
    """The three nights, run once for the module: (their directory, the order of the rows)."""
    base = tmp_path_factory.mktemp("three-nights")
    return base, three_nights(corpus, base, spark)


def copy_nights(nights: tuple[Path, np.ndarray], tmp: Path) -> np.ndarray:
    """A copy of the three nights' index, pair table and batches in ``tmp``; the rows' order."""
    base, perm = nights
    for name in ("index", "pairs"):
        shutil.copytree(base / name, tmp / name)
    for batch in base.glob("b*.parquet"):
        shutil.copy(batch, tmp / batch.name)
    return perm


def live_rows(spark: SparkSession, index: Path) -> DataFrame:
    """The live documents rows, read by hand from the files of the manifest's segments."""
    segments = [str(index / "segments" / s.id) for s in open_index(str(index)).manifest.segments]
    docs = spark.read.parquet(*[f"{s}/documents" for s in segments])
    dead = spark.read.parquet(*[f"{s}/superseded" for s in segments])
    return docs.join(dead, ["doc_id", "segment"], "left_anti")


def live_texts(spark: SparkSession, index: Path) -> DataFrame:
    """(doc_id, text) of the live rows, read by hand: each segment's texts of its live ids."""
    rows = live_rows(spark, index).select("doc_id", "segment")
    segments = open_index(str(index)).manifest.segments
    parts = [
        spark.read.parquet(str(index / "segments" / s.id / "texts")).withColumn(
            "segment", F.lit(s.id)
        )
        for s in segments
    ]
    texts = parts[0]
    for part in parts[1:]:
        texts = texts.unionByName(part)
    return texts.join(rows, ["doc_id", "segment"], "left_semi").select("doc_id", "text")


@pytest.mark.history
def test_compaction_keeps_the_live_rows_and_the_next_night_is_unchanged(
    spark, corpus, nights, tmp_path
) -> None:
    perm = copy_nights(nights, tmp_path)
    twin = tmp_path / "twin"  # the same index and pair table, never compacted
    twin.mkdir()
    shutil.copytree(tmp_path / "index", twin / "index")
    shutil.copytree(tmp_path / "pairs", twin / "pairs")
    index = tmp_path / "index"
    before = open_index(str(index)).manifest
    assert len(before.segments) == 3 and sum(s.superseded for s in before.segments) == 40
    # read now (checkpointed): the compaction deletes the files these are read from
    rows_before = live_rows(spark, index).drop("segment").localCheckpoint()
    texts_before = live_texts(spark, index).localCheckpoint()

    summary = compact_index.compact(spark, CFG, index_path=str(index))

    assert summary["status"] == "committed"
    assert CompactSummary.from_dict(summary).to_dict() == summary
    after = open_index(str(index)).manifest
    assert after.version == before.version + 1
    assert len(after.segments) == 1 and after.segments[0].superseded == 0
    assert (after.live_documents, after.live_postings) == (
        before.live_documents,
        before.live_postings,
    )
    assert after.runs == before.runs and after.settings == before.settings
    # the replaced segments are gone from the disk, the new one is all there is
    assert {p.name for p in (index / "segments").iterdir()} == {after.segments[0].id}
    assertDataFrameEqual(live_rows(spark, index).drop("segment"), rows_before)
    assertDataFrameEqual(live_texts(spark, index), texts_before)
    # the documents' columns in the layout's order (shingling/index.py), as a night writes them
    compacted = index / "segments" / after.segments[0].id / "documents"
    night = twin / "index" / "segments" / before.segments[-1].id / "documents"
    assert pq.read_schema(next(compacted.glob("*.parquet"))).names == (
        pq.read_schema(next(night.glob("*.parquet"))).names
    )
    postings = spark.read.parquet(str(index / "segments" / after.segments[0].id / "postings"))
    exploded = rows_before.select(F.explode("sketch").alias("hash"), "doc_id")
    assertDataFrameEqual(postings, exploded)
    # the reader finds the same documents by id and by hash as in the twin
    ids = corpus["doc_id"].to_pylist()[:80]  # sent or not, replaced or not
    reader, twin_reader = open_index(str(index)), open_index(str(twin / "index"))
    columns = ["doc_id", "sketch", "added", "text_hash"]
    assert sorted(reader.documents(ids, columns=columns).to_pylist(), key=str) == sorted(
        twin_reader.documents(ids, columns=columns).to_pylist(), key=str
    )
    some = [h for row in twin_reader.documents(ids[:5]).to_pylist() for h in row["sketch"] or []]
    assert sorted(reader.postings(some).to_pylist(), key=str) == sorted(
        twin_reader.postings(some).to_pylist(), key=str
    )

    # night 4: the 169 documents not sent yet, and 20 indexed ones again with other texts
    ids, texts = corpus["doc_id"].to_pylist(), corpus["text"].to_pylist()
    fourth = pa.table({
        "doc_id": [ids[i] for i in perm[500:]] + [ids[i] for i in perm[100:120]],
        "text": [texts[i] for i in perm[500:]] + [texts[i] for i in perm[300:320]],
    })  # fmt: skip
    pq.write_table(fourth, tmp_path / "b4.parquet")
    got = run_night(spark, tmp_path, str(tmp_path / "b4.parquet"), "2026-12-04")
    want = run_night(spark, twin, str(tmp_path / "b4.parquet"), "2026-12-04")
    assert got["pairs"]["written"] == want["pairs"]["written"] > 0
    night4 = F.col("run_date") == F.lit("2026-12-04").cast("date")
    assertDataFrameEqual(
        spark.read.parquet(str(tmp_path / "pairs")).where(night4),
        spark.read.parquet(str(twin / "pairs")).where(night4),
    )
    # below --min-segments, an index is compacted only when it holds replaced rows (night 4's)
    assert len(open_index(str(index)).manifest.segments) == 2
    again = compact_index.compact(spark, CFG, index_path=str(index), min_segments=3)
    assert again["status"] == "committed" and again["before"]["replaced_rows"] == 20
    skipped = compact_index.compact(spark, CFG, index_path=str(index), min_segments=3)
    assert skipped["status"] == "nothing to do"
    assert open_index(str(index)).manifest.version == after.version + 2


@pytest.mark.history
def test_a_compaction_that_cannot_delete_the_replaced_segments_is_committed_all_the_same(
    spark, nights, tmp_path, monkeypatch
) -> None:
    copy_nights(nights, tmp_path)
    index = tmp_path / "index"
    before = open_index(str(index)).manifest
    rows_before = live_rows(spark, index).drop("segment").localCheckpoint()

    def fails(self: Compaction) -> int:
        raise OSError("the filesystem refused")

    monkeypatch.setattr(Compaction, "delete_replaced", fails)
    summary = compact_index.compact(spark, CFG, index_path=str(index))
    monkeypatch.undo()
    assert summary["status"] == "committed" and summary["after"]["segments_deleted"] == 0
    after = open_index(str(index)).manifest
    assert after.version == before.version + 1 and len(after.segments) == 1
    assertDataFrameEqual(live_rows(spark, index).drop("segment"), rows_before)
    # the old segments are still on disk, named by no manifest; the next run deletes them
    assert len(list((index / "segments").iterdir())) == 4
    summary = compact_index.compact(spark, CFG, index_path=str(index))
    assert summary["status"] == "nothing to do"
    assert CompactSummary.from_dict(summary).to_dict() == summary  # typed, as printed
    assert summary["recovered"]["leftovers_deleted"] == 3
    assert [p.name for p in (index / "segments").iterdir()] == [after.segments[0].id]


@pytest.mark.history
def test_an_index_whose_files_disagree_with_its_manifest_is_not_compacted(
    spark, nights, tmp_path
) -> None:
    copy_nights(nights, tmp_path)
    manifest = tmp_path / "index" / "_manifest.json"
    d = json.loads(manifest.read_text())
    d["live_documents"] += 1  # one document more than the segments hold
    manifest.write_text(json.dumps(d))
    before = visible_state(tmp_path)
    with pytest.raises(IndexCountsError, match="its manifest says"):
        compact_index.compact(spark, CFG, index_path=str(tmp_path / "index"))
    assert visible_state(tmp_path) == before
    assert len(list((tmp_path / "index" / "segments").iterdir())) == 3  # the new one deleted


@pytest.mark.e2e
def test_a_killed_compaction_changes_nothing_and_holds_the_lock(spark, nights, tmp_path) -> None:
    copy_nights(nights, tmp_path)
    before = visible_state(tmp_path)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    env[TEST_HOOK_ENV] = "index_written=sleep:600"
    log = tmp_path / "compact.log"
    cmd = [
        str(Path(sys.executable).parent / "spark-submit"),
        "--master", "local[2]", "--driver-memory", "1g",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false",
        "--conf", "spark.driver.extraJavaOptions=-Dlog4j2.configurationFile=conf/log4j2.properties",
        str(REPO / "jobs" / "compact_index.py"), "--index", str(tmp_path / "index"),
        "--set", "spark.spark.sql.shuffle.partitions=2",
    ]  # fmt: skip
    with open(log, "w") as out:
        proc = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    wait_for_hook(proc, log)
    # the compacted segment is written aside; a night meanwhile is refused (exit 6)
    assert len(list((tmp_path / "index" / "segments").iterdir())) == 4
    assert nightly.main([
        "--batch", str(tmp_path / "b3.parquet"), "--index", str(tmp_path / "index"),
        "--output", str(tmp_path / "pairs"), "--run-date", "2026-12-04",
    ]) == 6  # fmt: skip
    kill_group(proc)
    assert visible_state(tmp_path) == before
    # the next compaction deletes the killed one's segment and compacts
    summary = compact_index.compact(spark, CFG, index_path=str(tmp_path / "index"))
    assert summary["recovered"]["leftovers_deleted"] == 1
    assert summary["status"] == "committed"
    assert len(list((tmp_path / "index" / "segments").iterdir())) == 1


def test_bad_arguments_and_a_missing_index_are_refused(spark, tmp_path) -> None:
    assert compact_index.main(["--index", str(tmp_path / "index"), "--min-segments", "0"]) == 2
    with pytest.raises(BadInputError, match="holds no committed index"):
        compact_index.compact(spark, CFG, index_path=str(tmp_path / "index"))
    assert not (tmp_path / "index").exists()  # nothing created at a mistyped path
    # a directory that lost its manifest (or never was an index): refused as not an index of
    # ours (exit 2), its files left as they are
    (tmp_path / "lost" / "segments" / "000001-x").mkdir(parents=True)
    (tmp_path / "lost" / "_versions").mkdir()
    (tmp_path / "lost" / "_versions" / "00000001.json").write_text("{}")
    with pytest.raises(ForeignPathError, match="holds no index of ours"):
        compact_index.compact(spark, CFG, index_path=str(tmp_path / "lost"))
    assert compact_index.main(["--index", str(tmp_path / "lost")]) == 2
    assert sorted(p.name for p in (tmp_path / "lost").rglob("*")) == sorted(
        ["000001-x", "00000001.json", "_versions", "segments"]
    )
