"""shingling.spark: the DataFrame API gives the job's tables, in the caller's session."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from test_stages import jobs_while
from testdata import SAMPLE_CORPUS

import shingling.spark.jobs.dedup as dedup_job
import shingling.spark.jobs.near_duplicates as job
from shingling.errors import ConfigError, ExitCode
from shingling.spark import (
    Cache,
    clusters,
    components,
    deduplicate,
    near_duplicates,
    nightly,
    sketches,
)

DOCS = 300


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("api") / "corpus.parquet"
    table = pq.read_table(SAMPLE_CORPUS, columns=["doc_id", "text"]).slice(0, DOCS)
    pq.write_table(table.rename_columns(["url", "body"]), path)
    return path


def rows(frame) -> list[tuple]:
    return sorted(tuple(r) for r in frame.collect())


@pytest.mark.parametrize(("verify", "lazy"), [(True, True), (False, True), (True, False)])
def test_the_api_gives_the_pair_table_of_the_job(
    spark: SparkSession, corpus: Path, tmp_path: Path, verify: bool, lazy: bool
) -> None:
    out = tmp_path / "out"
    sets = ["--set", "input.id_column=url", "--set", "input.text_column=body"]
    sets += ["--set", f"pairs.verify={str(verify).lower()}", "--set", "pairs.threshold=0.6"]
    assert job.main(["--input", str(corpus), "--output", str(out), *sets]) == ExitCode.OK
    expected = spark.read.parquet(str(out / "pairs"))
    got = near_duplicates(
        spark.read.parquet(str(corpus)),
        id_col="url",
        text_col="body",
        threshold=0.6,
        verify=verify,
        lazy=lazy,
    )
    assert got.columns == expected.columns
    assert rows(got) == rows(expected) and rows(got)
    spark.catalog.clearCache()


def test_the_api_returns_a_plan_and_runs_no_spark_job_until_rows_are_asked_for(
    spark: SparkSession, corpus: Path
) -> None:
    df = spark.read.parquet(str(corpus))
    cache = Cache()
    got, started = jobs_while(
        spark, lambda: near_duplicates(df, id_col="url", text_col="body", cache=cache)
    )
    assert started == []
    assert got.count() > 0  # the plan is whole: it runs when asked
    cache.release()


def test_sketches_are_the_documents_table(spark: SparkSession, corpus: Path) -> None:
    table = sketches(spark.read.parquet(str(corpus)), id_col="url", text_col="body")
    assert table.count() == DOCS
    assert {"doc_id", "sketch", "skip_reason"} <= set(table.columns)


def test_a_bad_setting_is_refused_as_the_job_refuses_it(spark: SparkSession, corpus: Path) -> None:
    with pytest.raises(ConfigError, match="pairs.threshold"):
        near_duplicates(spark.read.parquet(str(corpus)), id_col="url", text_col="body", threshold=2)


def test_the_api_decision_clusters_and_components_are_those_dedup_writes(
    spark: SparkSession, corpus: Path, tmp_path: Path
) -> None:
    sets = ["--set", "input.id_column=url", "--set", "input.text_column=body"]
    run, deduped = tmp_path / "run", tmp_path / "dedup"
    assert job.main(["--input", str(corpus), "--output", str(run), *sets]) == ExitCode.OK
    assert (
        dedup_job.main(
            ["--input", str(corpus), "--run", str(run), "--output", str(deduped)]
            + ["--set", "clusters.components=true"]
        )
        == ExitCode.OK
    )
    pairs = spark.read.parquet(str(run / "pairs"))
    table = spark.read.parquet(str(corpus))
    decided = deduplicate(pairs, table, id_col="url", text_col="body")
    removed = spark.read.parquet(str(deduped / "removed"))
    got_removed = decided.where("relation != 'kept'").select(*removed.columns)
    assert rows(got_removed) == rows(removed) and rows(removed)
    got = clusters(decided)
    expected = spark.read.parquet(str(deduped / "clusters"))
    assert rows(got.select(*expected.columns)) == rows(expected) and rows(expected)
    found = components(pairs)
    expected = spark.read.parquet(str(deduped / "components"))
    assert rows(found.select(*expected.columns)) == rows(expected) and rows(expected)
    # another policy decides otherwise, and smallest_id needs no corpus
    by_id = deduplicate(pairs, keep="smallest_id")
    assert rows(by_id.where("relation != 'kept'").select(*removed.columns)) != rows(removed)
    with pytest.raises(ConfigError, match="give corpus"):
        deduplicate(pairs)


@pytest.mark.history
def test_the_api_nightly_step_commits_a_batch_as_the_job_does(
    spark: SparkSession, corpus: Path, tmp_path: Path
) -> None:
    table = pq.read_table(corpus).rename_columns(["doc_id", "text"])
    first, second = tmp_path / "first.parquet", tmp_path / "second.parquet"
    pq.write_table(table.slice(0, 200), first)
    pq.write_table(table.slice(200), second)
    index, out = str(tmp_path / "index"), str(tmp_path / "pairs")
    one = nightly(spark, batch=str(first), index=index, output=out, run_date="2026-12-01")
    two = nightly(spark, batch=str(second), index=index, output=out, run_date="2026-12-02")
    assert one["status"] == two["status"] == "committed"
    assert two["index"]["documents_after"] == DOCS
    # the union of the nights is the pair table of a full run over the same documents
    full = near_duplicates(spark.read.parquet(str(corpus)), id_col="url", text_col="body")
    nights = spark.read.parquet(out).select(*full.columns)
    assert rows(nights) == rows(full) and rows(full)
    spark.catalog.clearCache()
