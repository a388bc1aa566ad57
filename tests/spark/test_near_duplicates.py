"""The job end to end through main(argv): outputs, summary, atomic writes, bad input, exit codes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from testdata import SAMPLE_CORPUS, licence_texts, sample_corpus

import shingling.spark.jobs.near_duplicates as job
from bench.join_work import join_work
from shingling import config as config_module
from shingling.errors import ExitCode
from shingling.pairs import candidate_threshold
from shingling.schema import (
    DOC_A,
    DOC_B,
    EXACT,
    SKIP_REASONS,
)
from shingling.spark.schemas import pairs_schema
from shingling.summaries import RunSummary


@pytest.fixture(autouse=True)
def active_session(spark: SparkSession) -> SparkSession:
    """main() reuses the test session (and leaves it running) instead of starting its own."""
    return spark


def run(*argv: str | Path) -> int:
    return job.main([str(a) for a in argv])


def leftovers(parent: Path) -> list[str]:
    """Staging or moved-aside directories that a run left behind."""
    return sorted(p.name for p in parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


def paragraphs(n: int) -> list[str]:
    """n real paragraphs of the machine's licences, each of at least 30 words."""
    found = [p for t in licence_texts().values() for p in t.split("\n\n") if len(p.split()) >= 30]
    return found[:n]


def write_corpus(path: Path, columns: dict[str, pa.Array | list]) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> Path:
    out = tmp_path_factory.mktemp("sample") / "out"
    assert run("--input", SAMPLE_CORPUS, "--output", out) == ExitCode.OK
    return out

    expected = {"documents", "pairs", "summary.json", "config.toml"}
    assert {p.name for p in sample_run.iterdir()} >= expected


def test_outputs_exist_and_nothing_is_left_aside(sample_run: Path) -> None:
    assert {p.name for p in sample_run.iterdir()} >= {
        "documents",
        "pairs",
        "summary.json",
        "config.toml",
    }
    assert (sample_run / "pairs" / "_SUCCESS").exists()
    assert leftovers(sample_run.parent) == []


def test_summary_accounts_for_every_input_document(sample_run: Path) -> None:
    summary = json.loads((sample_run / "summary.json").read_text())
    n_corpus = len(sample_corpus())
    docs = summary["documents"]
    assert docs["read"] == n_corpus == pq.read_table(sample_run / "documents").num_rows
    assert docs["sketched"] + sum(docs["skipped"].values()) == n_corpus
    assert set(docs["skipped"]) == set(SKIP_REASONS)
    pairs = pq.read_table(sample_run / "pairs")
    assert summary["pairs"]["written"] == pairs.num_rows > 0
    assert summary["pairs"]["exact_duplicates"] == sum(pairs[EXACT].to_pylist())
    assert "candidate_pairs" in summary["pairs"]
    assert set(summary["stage_seconds"]) >= {"sketch", "pairs", "total"}
    assert summary["status"] == "succeeded"
    assert summary["config"] == config_module.load().to_dict()


def test_the_summary_counts_the_joins_work_as_join_work_counts_it(sample_run: Path) -> None:
    # the job's counters (from its posting loop, on the executors) against bench.join_work's
    # offline count over the documents table the run wrote, at the run's candidate threshold
    cfg = config_module.load()
    assert candidate_threshold(cfg.pairs.threshold, cfg.pairs.candidate_margin) == 0.3
    offline = join_work(
        sample_run,
        k=cfg.sketch.k,
        max_posting=cfg.pairs.max_posting,
        frequency_mb=cfg.pairs.frequency_sketch_mb,
    )["defaults (candidates from 0.3)"]
    pairs = json.loads((sample_run / "summary.json").read_text())["pairs"]
    assert pairs["pairs_tested"] == offline["pair_tests"] > 0
    assert pairs["signature_passes"] == offline["signature_passes"]
    assert pairs["candidate_pairs"] <= pairs["signature_passes"] < pairs["pairs_tested"]
    # the scored pairs without a relation count, though they never leave the Python workers
    assert pairs["representative_pairs"] < pairs["candidate_pairs"]


def test_pairs_name_the_users_ids_in_order(sample_run: Path) -> None:
    pairs = pq.read_table(sample_run / "pairs")
    ids = {doc_id for doc_id, _ in sample_corpus()}
    a, b = pairs[DOC_A].to_pylist(), pairs[DOC_B].to_pylist()
    assert all(x < y for x, y in zip(a, b, strict=True))
    assert set(a) | set(b) <= ids
    assert len(set(zip(a, b, strict=True))) == len(a)  # no pair twice


def test_saved_config_loads_back_to_the_run_config(sample_run: Path) -> None:
    assert config_module.load(sample_run / "config.toml") == config_module.load()


def test_rerun_is_refused_unless_overwrite(sample_run: Path, capsys: pytest.CaptureFixture) -> None:
    before = (sample_run / "summary.json").read_text()
    assert run("--input", SAMPLE_CORPUS, "--output", sample_run) == ExitCode.OUTPUT_EXISTS
    assert "--overwrite" in capsys.readouterr().err
    assert (sample_run / "summary.json").read_text() == before
    assert run("--input", SAMPLE_CORPUS, "--output", sample_run, "--overwrite") == ExitCode.OK
    after = json.loads((sample_run / "summary.json").read_text())
    assert after["started_at"] >= json.loads(before)["started_at"]
    assert leftovers(sample_run.parent) == []


# --- a failure mid-run ----------------------------------------------------------------------------


def failing_pairs(documents: DataFrame, *_: object, **__: object) -> DataFrame:
    """A pair stage that fails on the executors, after the documents table was written."""

    def boom(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for _batch in batches:
            raise RuntimeError("executor lost")
        yield from ()

    return documents.mapInArrow(boom, pairs_schema(documents.schema[0].dataType))


def test_failure_mid_run_leaves_no_output_and_no_staging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job, "configured_pairs", failing_pairs)
    out = tmp_path / "out"
    assert run("--input", SAMPLE_CORPUS, "--output", out) == ExitCode.FAILED
    assert not out.exists()
    assert leftovers(tmp_path) == []


def test_failed_overwrite_keeps_the_previous_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = write_corpus(tmp_path / "c.parquet", {"doc_id": ["x", "y"], "text": paragraphs(2)})
    out = tmp_path / "out"
    assert run("--input", corpus, "--output", out) == ExitCode.OK
    before = (out / "summary.json").read_text()
    monkeypatch.setattr(job, "configured_pairs", failing_pairs)
    assert run("--input", corpus, "--output", out, "--overwrite") == ExitCode.FAILED
    assert (out / "summary.json").read_text() == before
    assert leftovers(tmp_path) == []


# --- bad input: exit code 3, a message that says what is wrong ------------------------------------


def test_missing_id_column_is_named_with_the_columns_present(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    corpus = write_corpus(tmp_path / "c.parquet", {"url": ["x"], "text": paragraphs(1)})
    assert run("--input", corpus, "--output", tmp_path / "out") == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "'doc_id'" in err and "url, text" in err
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_missing_text_column_is_named_with_the_columns_present(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    corpus = write_corpus(tmp_path / "c.parquet", {"doc_id": ["x"], "body": paragraphs(1)})
    assert run("--input", corpus, "--output", tmp_path / "out") == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "'text'" in err and "doc_id, body" in err


def test_directory_input_configurable_columns_and_integer_ids_carried_through(
    tmp_path: Path,
) -> None:
    texts = paragraphs(3)
    corpus = tmp_path / "corpus"  # a directory of Parquet files, as Spark or a dataset writes it
    corpus.mkdir()
    write_corpus(
        corpus / "part-0.parquet", {"url": pa.array([30, 10], pa.int64()), "body": texts[:2]}
    )
    write_corpus(
        corpus / "part-1.parquet", {"url": pa.array([20], pa.int64()), "body": [texts[0].upper()]}
    )
    out = tmp_path / "out"
    argv = ["--set", "input.id_column=url", "--set", "input.text_column=body"]
    assert run("--input", corpus, "--output", out, *argv) == ExitCode.OK
    pairs = pq.read_table(out / "pairs")
    assert pairs.schema.field(DOC_A).type == pa.int64()
    found = zip(
        pairs[DOC_A].to_pylist(), pairs[DOC_B].to_pylist(), pairs[EXACT].to_pylist(), strict=True
    )
    assert list(found) == [(20, 30, True)]
    assert json.loads((out / "summary.json").read_text())["documents"]["read"] == 3


@pytest.mark.parametrize(
    ("text", "named"),
    [(pa.array([1, 2], pa.int64()), "bigint"), (pa.array([b"a b", b"c d"], pa.binary()), "binary")],
)
def test_text_column_that_is_not_a_string_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture, text: pa.Array, named: str
) -> None:
    corpus = write_corpus(tmp_path / "c.parquet", {"doc_id": ["x", "y"], "text": text})
    assert run("--input", corpus, "--output", tmp_path / "out") == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "'text'" in err and named in err and "string" in err


def test_id_column_of_another_type_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    corpus = write_corpus(tmp_path / "c.parquet", {"doc_id": [1.5, 2.5], "text": paragraphs(2)})
    assert run("--input", corpus, "--output", tmp_path / "out") == ExitCode.BAD_INPUT
    assert "'doc_id'" in capsys.readouterr().err


def test_null_and_empty_texts_and_null_ids_are_skipped_and_counted(tmp_path: Path) -> None:
    texts = paragraphs(3)
    corpus = write_corpus(
        tmp_path / "c.parquet",
        {
            "doc_id": ["a", "b", "c", None, "e", "f", "g", None],
            "text": [texts[0], texts[0], None, texts[1], "", " ... — ! ", texts[2], None],
        },
    )
    out = tmp_path / "out"
    assert run("--input", corpus, "--output", out) == ExitCode.OK
    summary = json.loads((out / "summary.json").read_text())
    assert summary["documents"] == {
        "read": 8,
        "sketched": 3,
        "skipped": {
            "null_id": 2,
            "duplicate_id": 0,
            "null_text": 1,
            "invalid_utf8": 0,
            "no_words": 2,
        },
    }
    reasons = pq.read_table(out / "documents").to_pydict()
    by_id = dict(zip(reasons["doc_id"], reasons["skip_reason"], strict=True))
    assert {k: by_id[k] for k in "abcefg"} == {
        "a": None,
        "b": None,
        "c": "null_text",
        "e": "no_words",
        "f": "no_words",
        "g": None,
    }
    pairs = pq.read_table(out / "pairs").to_pylist()
    assert [(p[DOC_A], p[DOC_B]) for p in pairs] == [("a", "b")]


def test_repeated_ids_are_skipped_and_counted(tmp_path: Path) -> None:
    texts = paragraphs(4)
    corpus = write_corpus(
        tmp_path / "c.parquet", {"doc_id": ["x", "dup-1", "dup-1", "y"], "text": texts}
    )
    out = tmp_path / "out"
    assert run("--input", corpus, "--output", out) == ExitCode.OK
    documents = pq.read_table(out / "documents").to_pylist()
    reasons = {(d["doc_id"], d["skip_reason"]) for d in documents}
    assert reasons == {("x", None), ("y", None), ("dup-1", "duplicate_id")}
    assert sum(d["doc_id"] == "dup-1" and d["sketch"] is None for d in documents) == 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["documents"]["skipped"]["duplicate_id"] == 2
    assert summary["documents"]["read"] == 4 and summary["documents"]["sketched"] == 2


def test_empty_corpus_gives_an_empty_pair_table_and_a_summary(tmp_path: Path) -> None:
    corpus = write_corpus(
        tmp_path / "c.parquet",
        {"doc_id": pa.array([], pa.string()), "text": pa.array([], pa.string())},
    )
    out = tmp_path / "out"
    assert run("--input", corpus, "--output", out) == ExitCode.OK
    pairs = pq.read_table(out / "pairs")
    assert pairs.num_rows == 0
    assert {DOC_A, DOC_B, "matches", "jaccard", EXACT} <= set(pairs.schema.names)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["documents"]["read"] == 0 and summary["pairs"]["written"] == 0


def test_missing_input_path_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    missing = tmp_path / "nope.parquet"
    assert run("--input", missing, "--output", tmp_path / "out") == ExitCode.BAD_INPUT
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["text file", "csv directory"])
def test_input_that_is_not_parquet_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture, kind: str
) -> None:
    if kind == "text file":
        corpus = tmp_path / "corpus.parquet"
        corpus.write_text(licence_texts()["BSD"])
    else:
        corpus = tmp_path / "corpus"
        corpus.mkdir()
        (corpus / "part-0.csv").write_text("doc_id,text\nx,hello world\n")
    assert run("--input", corpus, "--output", tmp_path / "out") == ExitCode.BAD_INPUT
    assert "Parquet" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


# --- bad arguments or config: exit code 2 ---------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--set", "sketch.k=0"], "sketch.k"),
        (["--set", "pairs.treshold=0.5"], "pairs.treshold"),
        (["--config", "/nonexistent/x.toml"], "/nonexistent/x.toml"),
    ],
)
def test_bad_config_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture, argv: list[str], named: str
) -> None:
    assert run("--input", SAMPLE_CORPUS, "--output", tmp_path / "out", *argv) == ExitCode.USAGE
    assert named in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_missing_arguments_are_exit_2(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as e:
        job.main(["--output", str(tmp_path / "out")])
    assert e.value.code == ExitCode.USAGE


def test_the_summary_is_a_run_summary_and_reads_back_whole(sample_run: Path) -> None:
    written = json.loads((sample_run / "summary.json").read_text())
    summary = RunSummary.load(sample_run)
    assert summary.to_dict() == written  # every field typed, none lost
    assert summary.documents.read == summary.documents.sketched + sum(
        summary.documents.skipped.values()
    )
    assert summary.pairs.scores == "exact" and summary.pairs.verification is not None
