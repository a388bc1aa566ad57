"""The nightly's dedup decisions: over any split into nights, both promises hold over the union.

Checked against the exact truth (every pair's exact Jaccard from the texts, not from the job):
every removed document's kept document is kept and its near-duplicate, and no two kept documents
are near-duplicates. The kept and removed tables a night publishes (--decisions) hold the same,
and a night killed at a step of its commit is recovered by the next run, whole or not at all.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from test_nightly import (  # tests/spark is on sys.path (rootdir mode)
    CFG,
    CORPUS,
    kill_group,
    run_night,
    spark_submit,
    wait_for_hook,
    write_batch,
)

from shingling.errors import ConfigError, ExitCode
from shingling.exact import shingle_set
from shingling.spark.index.errors import AlreadyCommittedError, CommittedError, ForeignPathError
from shingling.spark.index.published import PublishedTable
from shingling.spark.index.store import check_index_owned
from shingling.spark.jobs import compact_index, nightly, undo_night
from shingling.summaries import NightSummary, UndoSummary

DOCS = 260  # of the sample: its first ids, dense in copies and licence variants


@pytest.fixture(scope="module")
def corpus() -> pa.Table:
    table = pq.read_table(CORPUS, columns=["doc_id", "text"]).sort_by("doc_id").slice(0, DOCS)
    return table


@pytest.fixture(scope="module")
def truth(corpus: pa.Table) -> set[frozenset]:
    """Every pair of documents at exact Jaccard >= the cut."""
    cut = max(CFG.clusters.min_jaccard, CFG.pairs.threshold)
    ids = corpus["doc_id"].to_pylist()
    sets = [shingle_set(t) for t in corpus["text"].to_pylist()]
    near = set()
    for i in range(len(ids)):
        for j in range(i + 1, len(ids)):
            union = len(sets[i] | sets[j])
            if union and len(sets[i] & sets[j]) / union >= cut:
                near.add(frozenset((ids[i], ids[j])))
    return near


def decisions(tmp: Path) -> dict:
    """Every segment's decisions, as the index keeps them."""
    files = sorted((tmp / "index" / "segments").glob("*/decisions/*.parquet"))
    rows = ds.dataset([str(f) for f in files], format="parquet")
    return {r["doc_id"]: r for r in rows.to_table().to_pylist()}


def check_promises(decided: dict, ids: list, truth: set[frozenset]) -> int:
    assert sorted(decided) == sorted(ids)  # every document decided once
    removed = {d for d, r in decided.items() if r["relation"] != "kept"}
    for d in removed:
        kept_id = decided[d]["kept_id"]
        assert kept_id not in removed, (d, kept_id)
        assert frozenset((d, kept_id)) in truth, (d, kept_id)
    surviving = [p for p in truth if not p & removed]
    assert surviving == []
    return len(removed)


@pytest.mark.parametrize(
    "split", ["two nights", pytest.param("three nights, shuffled", marks=pytest.mark.history)]
)
def test_the_union_of_the_nights_keeps_both_promises(
    spark: SparkSession, corpus: pa.Table, truth: set[frozenset], tmp_path: Path, split: str
) -> None:
    n = corpus.num_rows
    order = np.arange(n)
    if split == "two nights":
        nights = [order[: n // 2], order[n // 2 :]]
    else:
        shuffled = np.random.default_rng(11).permutation(n)
        nights = [shuffled[:40], shuffled[40:150], shuffled[150:]]
    for i, rows in enumerate(nights):
        batch = write_batch(corpus, rows, tmp_path / f"b{i}.parquet")
        summary = run_night(spark, tmp_path, batch, f"2026-12-0{i + 1}")
        assert summary["decisions"]["kept"] + summary["decisions"]["removed"] == len(rows)
        assert NightSummary.from_dict(summary).to_dict() == summary  # typed, as printed
    removed = check_promises(decisions(tmp_path), corpus["doc_id"].to_pylist(), truth)
    assert removed > 20  # not vacuous: the sample's copies and variants are removed
    # and some are removed in favour of a document of an earlier night
    decided = decisions(tmp_path)
    first = set(corpus.take(pa.array(nights[0]))["doc_id"].to_pylist())
    assert any(
        r["relation"] != "kept" and d not in first and r["kept_id"] in first
        for d, r in decided.items()
    )
    if len(nights) == 2:  # compaction keeps every live document's decision
        compact_index.compact(spark, CFG, index_path=str(tmp_path / "index"))
        segments = list((tmp_path / "index" / "segments").iterdir())
        assert len(segments) == 1
        assert decisions(tmp_path) == decided


@pytest.mark.e2e
@pytest.mark.parametrize("point", ["decided", "versioned", "committed"])
def test_a_night_killed_at_a_commit_step_keeps_the_promises_and_publishes_once(
    spark: SparkSession, corpus: pa.Table, truth: set[frozenset], tmp_path: Path, point: str
) -> None:
    """Killed after deciding (nothing committed), after its version file (not committed), or
    after the commit (not published): the next run recovers, and the index's decisions and the
    published kept and removed tables keep both promises, each night's documents once."""
    n = corpus.num_rows
    first = write_batch(corpus, np.arange(n // 2), tmp_path / "b0.parquet")
    run_decided_night(spark, tmp_path, first, "2026-12-01")
    second = write_batch(corpus, np.arange(n // 2, n), tmp_path / "b1.parquet")
    extra = ("--decisions", str(tmp_path / "decisions"))
    proc = spark_submit(tmp_path, second, "2026-12-02", f"{point}=exit", extra)
    wait_for_hook(proc, tmp_path / f"submit-{point}_exit.log")
    kill_group(proc)
    try:  # recovery, then the night again (exit 5 if the killed run had committed it)
        run_decided_night(spark, tmp_path, second, "2026-12-02")
    except AlreadyCommittedError:
        assert point == "committed"
    check_promises(decisions(tmp_path), corpus["doc_id"].to_pylist(), truth)
    kept, removed = published(tmp_path, "kept"), published(tmp_path, "removed")
    assert sorted(kept) == sorted(removed) == ["2026-12-01", "2026-12-02"]
    ids = [r["doc_id"] for rows in (*kept.values(), *removed.values()) for r in rows]
    assert sorted(ids) == sorted(corpus["doc_id"].to_pylist())


# -- the night's kept and removed tables (--decisions) -------------------------------------------


def published(tmp: Path, part: str) -> dict[str, list[dict]]:
    """A decisions table's partitions (``kept`` or ``removed``), by run date."""
    root = tmp / "decisions" / part
    return {
        p.name.removeprefix("run_date="): pq.read_table(p).to_pylist()
        for p in sorted(root.glob("run_date=*"))
    }


def run_decided_night(spark: SparkSession, tmp: Path, batch: str, date: str) -> dict:
    return nightly.run(
        spark,
        CFG,
        batch_path=batch,
        index_path=str(tmp / "index"),
        pairs_path=str(tmp / "pairs"),
        run_date=date,
        decisions_path=str(tmp / "decisions"),
    )


@pytest.mark.history
def test_each_night_publishes_its_kept_and_removed_documents_beside_its_pairs(
    spark: SparkSession, corpus: pa.Table, truth: set[frozenset], tmp_path: Path
) -> None:
    n = corpus.num_rows
    nights = [np.arange(n // 2), np.arange(n // 2, n)]
    dates = ["2026-12-01", "2026-12-02"]
    for i, rows in enumerate(nights):
        batch = write_batch(corpus, rows, tmp_path / f"b{i}.parquet")
        run_decided_night(spark, tmp_path, batch, dates[i])
    kept, removed = published(tmp_path, "kept"), published(tmp_path, "removed")
    assert sorted(kept) == sorted(removed) == dates
    for i, date in enumerate(dates):  # each night's partitions hold that night's documents
        night = set(corpus.take(pa.array(nights[i]))["doc_id"].to_pylist())
        ids = [r["doc_id"] for r in kept[date]] + [r["doc_id"] for r in removed[date]]
        assert sorted(ids) == sorted(night)
    # the tables are the index's decisions, and keep both promises over the nights
    decided = {r["doc_id"]: r for rows in removed.values() for r in rows}
    decided |= {r["doc_id"]: {"relation": "kept"} for rows in kept.values() for r in rows}
    assert {d: r["relation"] for d, r in decided.items()} == {
        d: r["relation"] for d, r in decisions(tmp_path).items()
    }
    assert check_promises(decided, corpus["doc_id"].to_pylist(), truth) > 20
    assert not list((tmp_path / "decisions" / "_staging").glob("*"))
    # undoing the last night takes its partitions back; without --decisions it is refused
    with pytest.raises(ConfigError, match="--decisions"):
        undo_night.undo(
            spark, index_path=str(tmp_path / "index"), pairs_path=str(tmp_path / "pairs"),
            run_date=dates[1],
        )  # fmt: skip
    undone = undo_night.undo(
        spark, index_path=str(tmp_path / "index"), pairs_path=str(tmp_path / "pairs"),
        run_date=dates[1], decisions_path=str(tmp_path / "decisions"),
    )  # fmt: skip
    assert UndoSummary.from_dict(undone).to_dict() == undone  # typed, as printed
    assert undone["recovered"]["decision_partitions_published"] == 0
    assert (
        sorted(published(tmp_path, "kept")) == sorted(published(tmp_path, "removed")) == dates[:1]
    )


@pytest.mark.history
def test_a_night_killed_before_publishing_its_decisions_is_published_by_the_next(
    spark: SparkSession, corpus: pa.Table, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the commit point, between its pairs and its decisions: the run says it IS
    COMMITTED, and the next run's recovery publishes the staged partitions."""
    first = write_batch(corpus, np.arange(100), tmp_path / "b0.parquet")
    real = PublishedTable.publish

    def dies_on_decisions(self: PublishedTable, run_id: str, run_date: str) -> int:
        if self.role == "--decisions":
            raise OSError("the process died here")
        return real(self, run_id, run_date)

    monkeypatch.setattr(PublishedTable, "publish", dies_on_decisions)
    with pytest.raises(CommittedError, match="IS COMMITTED"):
        run_decided_night(spark, tmp_path, first, "2026-12-01")
    monkeypatch.setattr(PublishedTable, "publish", real)
    assert (
        published(tmp_path, "kept") == {} and (tmp_path / "pairs" / "run_date=2026-12-01").is_dir()
    )
    second = write_batch(corpus, np.arange(100, 140), tmp_path / "b1.parquet")
    summary = run_decided_night(spark, tmp_path, second, "2026-12-02")
    assert summary["recovered"]["decision_partitions_published"] == 1
    assert sorted(published(tmp_path, "kept")) == ["2026-12-01", "2026-12-02"]
    assert sorted(published(tmp_path, "removed")) == ["2026-12-01", "2026-12-02"]
    assert not list((tmp_path / "decisions" / "_staging").glob("*"))


def test_decisions_are_refused_where_they_cannot_be_written(tmp_path: Path) -> None:
    """A --decisions directory that is not this index's, and --decisions for a night that decides
    nothing (pairs.verify = false), are refused before anything is written."""
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("mine")
    with pytest.raises(ForeignPathError, match="--decisions"):
        check_index_owned(
            str(tmp_path / "index"), str(tmp_path / "pairs"), decisions_path=str(user)
        )
    assert (user / "notes.txt").read_text() == "mine" and not (tmp_path / "index").exists()
    args = [
        "--batch", str(CORPUS), "--index", str(tmp_path / "index"), "--output",
        str(tmp_path / "pairs"), "--run-date", "2026-12-01", "--decisions",
        str(tmp_path / "d"), "--set", "pairs.verify=false",
    ]  # fmt: skip
    assert nightly.main(args) == ExitCode.USAGE
    assert not (tmp_path / "index").exists() and not (tmp_path / "d").exists()
