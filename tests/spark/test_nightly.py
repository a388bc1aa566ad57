"""The nightly job: equivalence with a full run, replaced documents, re-runs, kills and a race.

Real text only: the sample corpus (669 Debian copyright files, many of them exact or near copies)
cut into nightly batches.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from shingling import config as config_module
from shingling.index import open_index
from shingling.spark.hooks import TEST_HOOK_ENV
from shingling.spark.incremental import current_pairs
from shingling.spark.index.errors import AlreadyCommittedError
from shingling.spark.jobs import build_index, nightly
from shingling.spark.stages import Verification, near_duplicate_pairs
from shingling.spark.transforms import sketch_documents
from shingling.summaries import BuildSummary, NightSummary

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "sample" / "corpus.parquet"
CFG = config_module.load(None, [])


@pytest.fixture(scope="module")
def corpus() -> pa.Table:
    return pq.read_table(CORPUS, columns=["doc_id", "text"])


def full_pairs(spark: SparkSession, table: pa.Table) -> DataFrame:
    """The pair table of one full run over ``table`` (no posting cap: the nightly has none),
    every pair verified against the texts as the default job does."""
    texts = spark.createDataFrame(table.to_pandas())
    docs = texts.transform(sketch_documents, width=CFG.sketch.width, k=CFG.sketch.k)
    return near_duplicate_pairs(
        docs,
        threshold=CFG.pairs.threshold,
        k=CFG.sketch.k,
        max_exact_group=CFG.pairs.max_exact_group,
        verify=Verification(texts, CFG.sketch.width, CFG.sketch.unit, CFG.pairs.candidate_margin),
    )


@pytest.fixture(scope="module")
def corpus_pairs(spark: SparkSession, corpus: pa.Table) -> DataFrame:
    """:func:`full_pairs` of the whole corpus, computed once for the module (its rows and schema
    kept in a local table)."""
    pairs = full_pairs(spark, corpus)
    return spark.createDataFrame(pairs.collect(), pairs.schema)


def write_batch(table: pa.Table, rows: np.ndarray, path: Path) -> str:
    pq.write_table(table.take(pa.array(np.sort(rows))), path)
    return str(path)


def run_night(
    spark: SparkSession, tmp: Path, batch: str, date: str, cfg: config_module.Config = CFG
) -> dict:
    return nightly.run(
        spark,
        cfg,
        batch_path=batch,
        index_path=str(tmp / "index"),
        pairs_path=str(tmp / "pairs"),
        run_date=date,
    )


def live_rows(spark: SparkSession, tmp: Path) -> DataFrame:
    """The index's documents rows that no later segment replaced, read by hand from its files."""
    segments = tmp / "index" / "segments" / "*"
    return spark.read.parquet(str(segments / "documents")).join(
        spark.read.parquet(str(segments / "superseded")), ["doc_id", "segment"], "left_anti"
    )


def pair_table(spark: SparkSession, tmp: Path) -> DataFrame:
    return spark.read.parquet(str(tmp / "pairs"))


@pytest.mark.history
@pytest.mark.parametrize("probe_documents", [None, 120], ids=["one-scan", "sliced"])
def test_nightly_union_equals_full_run_descending_ids(
    spark, corpus, corpus_pairs, tmp_path, probe_documents
):
    # ids arrive largest first, so each night brings smaller ids: exact-duplicate groups change
    # their representative, and copies of one text are split across nights; "sliced": the
    # batch's texts are held 120 at a time, each slice one scan of the index
    order = np.argsort(np.array(corpus["doc_id"].to_pylist(), dtype=object))[::-1]
    nights = [order[:1], order[1:300], order[300:]]
    overrides = [f"index.probe_documents={probe_documents}"] if probe_documents else []
    cfg = config_module.load(None, overrides)
    for i, rows in enumerate(nights):
        batch = write_batch(corpus, rows, tmp_path / f"b{i}.parquet")
        summary = run_night(spark, tmp_path, batch, f"2026-12-0{i + 1}", cfg)
        assert summary["batch_documents"]["read"] == len(rows)
        assert summary["index"]["documents_after"] == sum(len(r) for r in nights[: i + 1])
        assert NightSummary.from_dict(summary).to_dict() == summary  # typed, as printed
    union = pair_table(spark, tmp_path)
    assertDataFrameEqual(union.drop("run_date"), corpus_pairs)
    # the test is not vacuous: pairs of both kinds cross nights
    assert union.where(F.col("exact_duplicate")).select("run_date").distinct().count() >= 2
    assert union.where(~F.col("exact_duplicate")).select("run_date").distinct().count() >= 2

    # re-running a committed date changes nothing
    before = union.drop("run_date").collect()
    with pytest.raises(AlreadyCommittedError):
        run_night(spark, tmp_path, str(tmp_path / "b2.parquet"), "2026-12-03")
    assert sorted(pair_table(spark, tmp_path).drop("run_date").collect()) == sorted(before)
    assert nightly.main([
        "--batch", str(tmp_path / "b2.parquet"), "--index", str(tmp_path / "index"),
        "--output", str(tmp_path / "pairs"), "--run-date", "2026-12-03",
    ]) == 5  # fmt: skip


@pytest.mark.history
def test_index_built_from_a_full_run_continues_nightly(spark, corpus, corpus_pairs, tmp_path):
    rng = np.random.default_rng(7)
    perm = rng.permutation(corpus.num_rows)
    first, rest = np.sort(perm[:400]), perm[400:]
    # the full run's output, as jobs/near_duplicates.py writes it
    run_dir = tmp_path / "full"
    part = corpus.take(pa.array(first))
    pq.write_table(part, tmp_path / "first.parquet")
    texts = spark.createDataFrame(part.to_pandas())
    docs = texts.transform(sketch_documents, width=CFG.sketch.width, k=CFG.sketch.k)
    docs.write.parquet(str(run_dir / "documents"))
    documents = spark.read.parquet(str(run_dir / "documents"))
    near_duplicate_pairs(
        documents,
        threshold=CFG.pairs.threshold,
        k=CFG.sketch.k,
        max_exact_group=CFG.pairs.max_exact_group,
        verify=Verification(texts, CFG.sketch.width, CFG.sketch.unit, CFG.pairs.candidate_margin),
    ).write.parquet(str(run_dir / "pairs"))
    (run_dir / "config.toml").write_text(config_module.to_toml(CFG))
    (run_dir / "summary.json").write_text(json.dumps({"input": str(tmp_path / "first.parquet")}))

    built = build_index.build(
        spark, run_path=str(run_dir), index_path=str(tmp_path / "index"), run_date="2026-11-30",
        pairs_path=str(tmp_path / "pairs"),
    )  # fmt: skip
    assert built["documents"] == 400
    assert BuildSummary.from_dict(built).to_dict() == built
    run_night(spark, tmp_path, write_batch(corpus, rest, tmp_path / "b.parquet"), "2026-12-01")
    assertDataFrameEqual(pair_table(spark, tmp_path).drop("run_date"), corpus_pairs)
    # the pure-pyarrow reader sees every document once, at its latest version
    reader = open_index(str(tmp_path / "index"))
    assert reader.manifest.live_documents == corpus.num_rows
    got = reader.documents(corpus["doc_id"].to_pylist(), columns=["doc_id", "added"])
    assert sorted(got["doc_id"].to_pylist()) == sorted(corpus["doc_id"].to_pylist())


@pytest.mark.history
def test_document_arriving_again_replaces_its_sketch(spark, corpus, tmp_path):
    # night 1: 400 documents; night 2: 60 of them again, each with the text of another document
    # (so they move between groups of near copies), and the other 269 documents; night 3 (below)
    # brings the old texts of replaced documents, which the index's files still hold
    ids = corpus["doc_id"].to_pylist()
    texts = corpus["text"].to_pylist()
    rng = np.random.default_rng(3)
    perm = rng.permutation(len(ids))
    first, rest = perm[:400], perm[400:]
    again = first[:60]
    donors = rng.permutation(len(ids))[:60]
    run_night(spark, tmp_path, write_batch(corpus, first, tmp_path / "b1.parquet"), "2026-12-01")
    second = pa.table({
        "doc_id": [ids[i] for i in again] + [ids[i] for i in rest],
        "text": [texts[d] for d in donors] + [texts[i] for i in rest],
    })  # fmt: skip
    pq.write_table(second, tmp_path / "b2.parquet")
    summary = run_night(spark, tmp_path, str(tmp_path / "b2.parquet"), "2026-12-02")
    assert summary["batch_documents"]["replaced"] == 60
    assert summary["index"]["documents_after"] == len(ids)

    final_texts = list(texts)
    for i, d in zip(again, donors, strict=True):
        final_texts[i] = texts[d]
    final = pa.table({"doc_id": ids, "text": final_texts})
    live = live_rows(spark, tmp_path)
    pairs = pair_table(spark, tmp_path)
    assertDataFrameEqual(current_pairs(pairs, live).drop("run_date"), full_pairs(spark, final))
    # the pairs made with an old version stay in night 1's partition, and only those are dropped
    stale = pairs.subtract(current_pairs(pairs, live))
    replaced = [ids[i] for i in again]
    assert stale.count() > 0
    assert (
        stale.where(~(F.col("doc_a").isin(replaced) | F.col("doc_b").isin(replaced))).count() == 0
    )
    assert stale.where(F.col("run_date") != F.lit("2026-12-01").cast("date")).count() == 0
    # the reader returns the new sketch
    reader = open_index(str(tmp_path / "index"))
    row = reader.documents([replaced[0]]).to_pylist()
    assert len(row) == 1 and row[0]["added"] == "2026-12-02"

    # night 3: new documents with the old texts of 20 replaced ones, which the index's files still
    # hold: they must pair with the live documents only
    third = pa.table({
        "doc_id": [f"night-3-{n}" for n in range(20)],
        "text": [texts[i] for i in again[:20]],
    })  # fmt: skip
    pq.write_table(third, tmp_path / "b3.parquet")
    run_night(spark, tmp_path, str(tmp_path / "b3.parquet"), "2026-12-03")
    live = live_rows(spark, tmp_path)
    everything = pa.concat_tables([final, third])
    night3 = pair_table(spark, tmp_path).where(F.col("run_date") == F.lit("2026-12-03"))
    assert night3.count() > 0
    assertDataFrameEqual(
        current_pairs(pair_table(spark, tmp_path), live).drop("run_date"),
        full_pairs(spark, everything),
    )


@pytest.mark.history
def test_repeated_ids_in_a_batch_are_skipped_and_the_rest_is_processed(
    spark, corpus, corpus_pairs, tmp_path
):
    # night 2 sends an indexed id twice and a new id twice; the new id's rows copy texts of other
    # batch documents, so they would make exact-duplicate pairs if either row were sketched
    ids = corpus["doc_id"].to_pylist()
    texts = corpus["text"].to_pylist()
    perm = np.random.default_rng(5).permutation(len(ids))
    first, rest = perm[:300], perm[300:]
    indexed_id, new_id = ids[first[0]], "repeated-in-the-batch"
    run_night(spark, tmp_path, write_batch(corpus, first, tmp_path / "b1.parquet"), "2026-12-01")
    second = pa.table({
        "doc_id": [ids[i] for i in rest] + [indexed_id, indexed_id, new_id, new_id],
        "text": [texts[i] for i in rest] + [texts[rest[0]], texts[rest[1]]] * 2,
    })  # fmt: skip
    pq.write_table(second, tmp_path / "b2.parquet")

    summary = run_night(spark, tmp_path, str(tmp_path / "b2.parquet"), "2026-12-02")
    batch = summary["batch_documents"]
    assert summary["status"] == "committed"
    assert batch["skipped"]["duplicate_id"] == 4
    assert batch["read"] == second.num_rows
    assert batch["sketched"] + sum(batch["skipped"].values()) == batch["read"]
    assert batch["replaced"] == 0  # the indexed id keeps its version
    assert summary["index"]["documents_after"] == len(ids)

    reader = open_index(str(tmp_path / "index"))
    assert reader.documents([new_id]).num_rows == 0
    assert reader.documents([indexed_id], columns=["doc_id", "added"]).to_pylist() == [
        {"doc_id": indexed_id, "added": "2026-12-01"}
    ]
    pairs = pair_table(spark, tmp_path)
    assert pairs.where((F.col("doc_a") == new_id) | (F.col("doc_b") == new_id)).count() == 0
    # the other batch documents are paired as always: the pairs of one full run over the corpus
    assertDataFrameEqual(pairs.drop("run_date"), corpus_pairs)


# -- kills and races: the job as spark-submit runs it ---------------------------------------------


def spark_submit(
    tmp: Path, batch: str, date: str, hook: str, extra: tuple[str, ...] = ()
) -> subprocess.Popen:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    env[TEST_HOOK_ENV] = hook
    cmd = [
        str(Path(sys.executable).parent / "spark-submit"),
        "--master", "local[2]", "--driver-memory", "1g",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false",
        "--conf", "spark.driver.extraJavaOptions=-Dlog4j2.configurationFile=conf/log4j2.properties",
        str(REPO / "jobs" / "nightly.py"),
        "--batch", batch, "--index", str(tmp / "index"), "--output", str(tmp / "pairs"),
        "--run-date", date,
        "--set", "spark.spark.sql.shuffle.partitions=2",  # tiny batches: fewer tasks per stage
        *extra,
    ]  # fmt: skip
    log = open(tmp / f"submit-{hook.replace(':', '_').replace('=', '_')}.log", "w")  # noqa: SIM115
    return subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def wait_for_hook(proc: subprocess.Popen, log: Path, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if "test hook: reached" in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            pytest.fail(
                f"the run ended ({proc.returncode}) before its hook:\n{log.read_text()[-4000:]}"
            )
        time.sleep(0.5)
    pytest.fail("the run never reached its hook")


def kill_group(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # spark-submit, its JVM and the Python driver, no clean-up
    proc.wait()


def visible_state(tmp: Path) -> dict:
    """What readers see: the manifest's bytes, the committed segments' files, the pair table."""
    index = tmp / "index"
    manifest = (index / "_manifest.json").read_bytes()
    reader = open_index(str(index))
    files = {}
    for seg in reader.manifest.segments:
        for f in sorted((index / "segments" / seg.id).rglob("*")):
            if f.is_file():
                files[str(f.relative_to(index))] = hashlib.sha256(f.read_bytes()).hexdigest()
    pairs = ds.dataset(tmp / "pairs", format="parquet", partitioning="hive").to_table()
    rows = sorted(json.dumps(r, default=str, sort_keys=True) for r in pairs.to_pylist())
    return {"manifest": manifest, "files": files, "pairs": rows}


@pytest.mark.e2e
def test_killed_runs_change_nothing_and_the_next_run_succeeds(spark, corpus, tmp_path):
    # small nights: what is tested is where the process dies, not how much it has done
    rng = np.random.default_rng(11)
    perm = rng.permutation(corpus.num_rows)[:240]
    part = corpus.take(pa.array(np.sort(perm)))
    run_night(
        spark, tmp_path, write_batch(corpus, perm[:160], tmp_path / "b1.parquet"), "2026-12-01"
    )
    batch2 = write_batch(corpus, perm[160:], tmp_path / "b2.parquet")
    before = visible_state(tmp_path)

    # killed in the pair stage (pairs staged, index not written) and in the index update
    for point in ("pairs_staged", "index_written"):
        hook = f"{point}=sleep:600"
        proc = spark_submit(tmp_path, batch2, "2026-12-02", hook)
        wait_for_hook(proc, tmp_path / f"submit-{hook.replace(':', '_').replace('=', '_')}.log")
        if point == "index_written":
            # a second run while the first holds the index: refused, exit 6
            assert nightly.main([
                "--batch", batch2, "--index", str(tmp_path / "index"),
                "--output", str(tmp_path / "pairs"),
                "--run-date", "2026-12-03",
            ]) == 6  # fmt: skip
        kill_group(proc)
        assert visible_state(tmp_path) == before, f"killed at {point}"

    # (dead between writing its version file and swapping the manifest: see
    # test_index_store.py::test_recovery_publishes_committed_pairs_and_deletes_leftovers)

    # dead just after the commit: the index holds the run, its pairs are published by the next run
    proc = spark_submit(tmp_path, batch2, "2026-12-02", "committed=exit")
    assert proc.wait(timeout=900) != 0
    assert open_index(str(tmp_path / "index")).manifest.version == 2
    assert visible_state(tmp_path)["pairs"] == before["pairs"]
    with pytest.raises(AlreadyCommittedError):
        run_night(spark, tmp_path, batch2, "2026-12-02")
    assertDataFrameEqual(pair_table(spark, tmp_path).drop("run_date"), full_pairs(spark, part))
    # and the leftovers of the killed runs are gone
    assert not (tmp_path / "pairs" / "_staging").exists() or not any(
        (tmp_path / "pairs" / "_staging").iterdir()
    )
    listed = {s.id for s in open_index(str(tmp_path / "index")).manifest.segments}
    assert {p.name for p in (tmp_path / "index" / "segments").iterdir()} == listed


def test_a_segment_without_texts_is_refused_never_left_unverified(spark, corpus, tmp_path):
    # the texts of indexed documents verify the pairs a later batch makes with them: an index
    # whose segment lost them fails with a message naming the segment, and commits nothing
    from shingling.spark.index.errors import MissingTextsError

    first = write_batch(corpus, np.arange(0, 60), tmp_path / "b0.parquet")
    run_night(spark, tmp_path, first, "2026-12-01")
    (texts,) = (tmp_path / "index" / "segments").glob("*/texts")
    assert any(texts.glob("*.parquet"))  # the night kept its batch's texts
    for f in texts.iterdir():
        f.unlink()
    texts.rmdir()
    before = (tmp_path / "index" / "_manifest.json").read_text()
    second = write_batch(corpus, np.arange(60, 90), tmp_path / "b1.parquet")
    with pytest.raises(MissingTextsError, match="keeps no texts"):
        run_night(spark, tmp_path, second, "2026-12-02")
    assert (tmp_path / "index" / "_manifest.json").read_text() == before
