"""JSON Lines input (input.format = "jsonl"): the same pairs as the same corpus in Parquet, plain or
gzip-compressed, and a malformed line refused by name (exit 3), never a row silently dropped."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from testdata import SAMPLE_CORPUS

import shingling.spark.jobs.near_duplicates as job
from shingling.errors import ExitCode

DOCS = 250


def pair_rows(spark: SparkSession, out: Path) -> list[tuple]:
    rows = spark.read.parquet(str(out / "pairs")).orderBy("doc_a", "doc_b").collect()
    return [tuple(r) for r in rows]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("jsonl")
    table = pq.read_table(SAMPLE_CORPUS, columns=["doc_id", "text"]).slice(0, DOCS)
    pq.write_table(table, root / "corpus.parquet")
    lines = [json.dumps(r, ensure_ascii=False) + "\n" for r in table.to_pylist()]
    (root / "plain").mkdir()
    (root / "plain" / "part-0.jsonl").write_text("".join(lines), encoding="utf-8")
    (root / "gz").mkdir()
    with gzip.open(root / "gz" / "part-0.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(lines)
    return {"parquet": root / "corpus.parquet", "plain": root / "plain", "gz": root / "gz"}


def test_json_lines_give_the_pairs_of_the_same_corpus_in_parquet(
    spark: SparkSession, corpora: dict[str, Path], tmp_path: Path
) -> None:
    outs = {}
    for name, path in corpora.items():
        out = tmp_path / name
        fmt = [] if name == "parquet" else ["--set", "input.format=jsonl"]
        assert job.main(["--input", str(path), "--output", str(out), *fmt]) == ExitCode.OK
        outs[name] = out
    expected = pair_rows(spark, outs["parquet"])
    assert expected, "the sample's first documents hold near-duplicates"
    assert pair_rows(spark, outs["plain"]) == expected
    assert pair_rows(spark, outs["gz"]) == expected
    summary = json.loads((outs["gz"] / "summary.json").read_text())
    assert summary["documents"]["read"] == DOCS


def test_a_malformed_line_is_refused_naming_the_input(
    spark: SparkSession, corpora: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    text = (corpora["plain"] / "part-0.jsonl").read_text(encoding="utf-8")
    (bad / "part-0.jsonl").write_text(text + '{"doc_id": "x", "text": "unterminated\n')
    out = tmp_path / "out"
    code = job.main(["--input", str(bad), "--output", str(out), "--set", "input.format=jsonl"])
    assert code == ExitCode.BAD_INPUT
    assert "JSON" in capsys.readouterr().err
    assert not out.exists()
