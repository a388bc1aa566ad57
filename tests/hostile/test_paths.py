"""Point 1: no job writes where it reads. Every entry point, every relation, table-driven.

Each case asserts the exit code, that the message names both paths, and that every byte the job
would have read is still there. The relations are refused before Spark starts (about a second);
the checks that need the existing output (a plain file, a directory that is no output of the job)
run in process with the session fixture, before anything is read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_helpers import snapshot

from shingling.spark.paths import PathConflictError, check_paths, relation, resolve_uri
from shingling.spark.storage import AtomicOutput


def corpus_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.table({"doc_id": ["a", "b"], "text": ["one two three four", "five six seven"]}), path
    )
    return path


def fake_run(root: Path) -> Path:
    """A finished run's directory, as far as the path checks look."""
    corpus_file(root / "documents" / "part-0.parquet")
    corpus_file(root / "pairs" / "part-0.parquet")
    (root / "config.toml").write_text("[sketch]\nwidth = 4\n")
    (root / "summary.json").write_text(json.dumps({"job": "near_duplicates"}))
    return root


@pytest.mark.parametrize(
    ("written", "read", "expected"),
    [
        ("file:/d/out", "file:/d/out", "is"),
        ("file:/d/out/", "file:/d/out", "is"),
        ("file:/d", "file:/d/in/x.parquet", "contains"),
        ("file:/", "file:/d", "contains"),
        ("file:/d/in/out", "file:/d/in", "is inside"),
        ("file:/d/output", "file:/d/out", None),
        ("file:/d/out", "file:/d/output", None),
        ("hdfs://nn:8020/a", "hdfs://nn:8020/a/b", "contains"),
        ("hdfs://nn:8020/a", "hdfs://other:8020/a/b", None),
        ("s3a://bucket/x", "s3a://bucket/x/", "is"),
    ],
)
def test_relation_table(written: str, read: str, expected: str | None) -> None:
    assert relation(written, read) == expected


def test_dot_dot_and_symlinks_are_resolved(tmp_path: Path) -> None:
    (tmp_path / "data" / "corpus").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "data")
    for written in (
        tmp_path / "data" / "corpus" / ".." / "corpus",
        tmp_path / "link" / "corpus",
        tmp_path / "link",
    ):
        with pytest.raises(PathConflictError):
            check_paths({"--output": str(written)}, {"--input": str(tmp_path / "data" / "corpus")})
    assert resolve_uri("hdfs://nn/a/b/../c") == "hdfs://nn/a/c"
    with pytest.raises(PathConflictError, match="--output hdfs://nn/a/x/../b contains"):
        check_paths({"--output": "hdfs://nn/a/x/../b"}, {"--input": "hdfs://nn/a/b/c.parquet"})


# (name, how the output is placed relative to what the job reads)
RELATIONS: list[tuple[str, Callable[[Path, Path], Path]]] = [
    ("equal", lambda read, tmp: read),
    ("parent", lambda read, tmp: read.parent),
    ("inside", lambda read, tmp: read / "out"),
    ("dot-dot", lambda read, tmp: read.parent / ".." / read.parent.name / read.name),
    ("symlink", lambda read, tmp: _link(tmp, read)),
]


def _link(tmp: Path, target: Path) -> Path:
    link = tmp / "via-link"
    if not link.exists():
        link.symlink_to(target)
    return link


ENTRY_POINTS = ["near_duplicates", "dedup-input", "dedup-run", "build_index", "nightly"]


def _case(entry: str, target: str, tmp: Path) -> tuple[Callable[[list[str]], int], list[str], Path]:
    """The job's main, its arguments with the output placed as ``target`` says, and what it reads."""
    place = dict(RELATIONS)[target]
    data = tmp / "data"
    corpus = corpus_file(data / "corpus" / "part-0.parquet").parent
    (data / "unrelated.txt").write_text("someone's notes beside the corpus")
    if entry == "near_duplicates":
        from shingling.spark.jobs.near_duplicates import main

        return (
            main,
            ["--input", str(corpus), "--output", str(place(corpus, tmp)), "--overwrite"],
            data,
        )
    if entry.startswith("dedup"):
        from shingling.spark.jobs.dedup import main

        run = fake_run(data / "run")
        read = corpus if entry == "dedup-input" else run / "pairs"
        args = ["--input", str(corpus), "--run", str(run), "--output", str(place(read, tmp))]
        return main, [*args, "--overwrite"], data
    if entry == "build_index":
        from shingling.spark.jobs.build_index import main

        run = fake_run(data / "run")
        args = ["--run", str(run), "--run-date", "2026-12-01"]
        return main, [*args, "--index", str(place(run / "documents", tmp))], data
    from shingling.spark.jobs.nightly import main

    args = ["--batch", str(corpus), "--run-date", "2026-12-01", "--index", str(tmp / "index")]
    return main, [*args, "--output", str(place(corpus, tmp))], data


@pytest.mark.parametrize("target", [name for name, _ in RELATIONS])
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_no_job_writes_where_it_reads(
    entry: str, target: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    main, args, data = _case(entry, target, tmp_path)
    before = snapshot(data)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "a job never writes where it reads" in err, err
    written = args[args.index("--index" if entry == "build_index" else "--output") + 1]
    assert written in err
    assert snapshot(data) == before


def test_the_index_and_the_pair_table_are_apart(tmp_path: Path, capsys) -> None:
    from shingling.spark.jobs.nightly import main

    batch = corpus_file(tmp_path / "batch.parquet")
    index = tmp_path / "index"
    args = ["--batch", str(batch), "--run-date", "2026-12-01", "--index", str(index)]
    assert main([*args, "--output", str(index / "pairs")]) == 2
    assert f"--index {index} contains --output {index / 'pairs'}" in capsys.readouterr().err


@pytest.mark.parametrize("output", ["", " ", "out/[x]", "out/{a,b}", "out/*", "o\nut", "."])
def test_odd_output_names_exit_2_before_spark(
    output: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from shingling.spark.jobs.near_duplicates import main

    corpus = corpus_file(tmp_path / "corpus.parquet")
    assert main(["--input", str(corpus), "--output", output]) == 2
    assert "an output path must not be empty" in capsys.readouterr().err


def test_a_dedup_output_inside_the_run_is_allowed(tmp_path: Path) -> None:
    # docs/cli.md's report reads OUT/dedup/clusters: the run's pairs and config are not touched
    run = fake_run(tmp_path / "run")
    check_paths(
        {"--output": str(run / "dedup")},
        {"pairs": str(run / "pairs"), "config": str(run / "config.toml")},
    )


# -- existing outputs that are not this job's: never deleted, with or without --overwrite --------


@pytest.mark.parametrize(
    "kind", ["plain file", "directory without summary", "another job's output"]
)
@pytest.mark.parametrize("overwrite", [False, True])
def test_an_existing_foreign_output_is_never_deleted(
    spark, kind: str, overwrite: bool, tmp_path: Path
) -> None:
    from shingling.errors import ConfigError, OutputExistsError

    out = tmp_path / "out"
    if kind == "plain file":
        out.write_text("my thesis, no backup")
    else:
        out.mkdir()
        (out / "notes.txt").write_text("not an output")
        if kind == "another job's output":
            (out / "summary.json").write_text(json.dumps({"job": "dedup"}))
    before = snapshot(out)
    error = ConfigError if overwrite else OutputExistsError
    with pytest.raises(error) as caught:
        AtomicOutput(spark, str(out), overwrite=overwrite, job="near_duplicates")
    assert str(out) in str(caught.value)
    if overwrite:
        assert "never deleted" in str(caught.value)
    assert snapshot(out) == before


def test_a_previous_output_of_the_job_is_replaced(spark, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps({"job": "near_duplicates"}))
    staged = AtomicOutput(spark, str(out), overwrite=True, job="near_duplicates")
    staged.write_json("summary.json", {"job": "near_duplicates", "new": True})
    staged.commit()
    assert json.loads((out / "summary.json").read_text())["new"] is True
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_a_file_uri_and_a_relative_path_are_the_same_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    corpus_file(tmp_path / "corpus" / "part-0.parquet")
    for written in (f"file://{tmp_path}/corpus", f"file:{tmp_path}", f"{tmp_path}/./corpus/"):
        with pytest.raises(PathConflictError, match="corpus"):
            check_paths({"--output": written}, {"--input": "corpus"})
    with pytest.raises(PathConflictError):  # a glob reads everything under its literal prefix
        check_paths({"--output": f"{tmp_path}/corpus/x"}, {"--input": "corpus/*.parquet"})
    check_paths({"--output": "corpus-out"}, {"--input": "corpus"})  # a sibling, not inside
