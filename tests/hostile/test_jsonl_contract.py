"""Issue 34 §2: one input contract for JSON Lines and Parquet.

A JSON Lines text that is a number, a boolean, an object or an array (mixed with strings, so that
Spark's inference widens the column to string) is refused with exit 3 naming its type, as Parquet
input with a non-string text column is, instead of being sketched as its JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import shingling.spark.jobs.near_duplicates as job
from shingling.errors import ExitCode
from shingling.spark.read import read_corpus

TEXTS = ["a plain text of several words to sketch", "another plain text of a few words"]


@pytest.mark.parametrize(
    ("odd", "kind"), [(42, "BIGINT"), (True, "BOOLEAN"), ({"a": 1}, "OBJECT"), ([1, 2], "ARRAY")]
)
def test_a_text_that_is_not_a_json_string_is_refused(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture, odd: object, kind: str
) -> None:
    lines = [{"doc_id": i, "text": t} for i, t in enumerate([*TEXTS, odd])]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    out = tmp_path / "out"
    args = ["--input", str(path), "--output", str(out), "--set", "input.format=jsonl"]
    assert job.main(args) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert f"the text column 'text' of {path} holds a JSON {kind}" in err, err
    assert "Traceback" not in err and not out.exists()


def test_strings_and_nulls_read_as_before(spark, tmp_path: Path) -> None:
    lines = [{"doc_id": 1, "text": TEXTS[0]}, {"doc_id": 2, "text": None}, {"doc_id": 3}]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    rows = read_corpus(
        spark, str(path), id_column="doc_id", text_column="text", input_format="jsonl"
    ).collect()
    assert sorted((r["doc_id"], r["text"]) for r in rows) == [(1, TEXTS[0]), (2, None), (3, None)]
