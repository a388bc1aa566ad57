"""Point 4 (inputs) and point 5's schema variants: each odd input is read or refused by name.

In process with the session fixture; every case checks the exit code, the message, and that the
input's bytes are untouched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_helpers import snapshot

TEXTS = [
    "the quick brown fox jumps over the lazy dog near the river bank",
    "a completely different sentence about parquet files and their footers",
    "the quick brown fox jumps over the lazy dog near the river shore",
]


def run(args: list[str]) -> int:
    from shingling.spark.jobs.near_duplicates import main

    return main(args)


def test_schema_variants_are_read(spark, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    # narrow integer ids first: Spark takes the first file's schema, the wider ones must still read
    pq.write_table(
        pa.table({"doc_id": pa.array([1], pa.int32()), "text": [TEXTS[0]]}), corpus / "a.parquet"
    )
    pq.write_table(
        pa.table(
            {"doc_id": pa.array([2], pa.int64()), "text": pa.array([TEXTS[1]], pa.large_string())}
        ),
        corpus / "b.parquet",
    )
    # dictionary-encoded text, extra and reordered columns, a 16-bit id
    pq.write_table(
        pa.table(
            {
                "extra": [1.5],
                "text": pa.array([TEXTS[2]]).dictionary_encode(),
                "doc_id": pa.array([3], pa.int16()),
            }
        ),
        corpus / "c.parquet",
    )
    (corpus / "d.parquet").write_bytes(b"")  # an empty file: skipped, as Spark does
    (corpus / "_SUCCESS").write_bytes(b"")
    (corpus / ".part.crc").write_bytes(b"junk")  # Spark's checksums: skipped
    before = snapshot(corpus)
    out = tmp_path / "out"
    code = run(["--input", str(corpus), "--output", str(out)])
    assert code == 0, capsys.readouterr().err[-3000:]
    documents = pq.read_table(out / "documents")
    assert documents.schema.field("doc_id").type == pa.int64()
    assert sorted(documents["doc_id"].to_pylist()) == [1, 2, 3]
    assert json.loads((out / "summary.json").read_text())["documents"]["read"] == 3
    assert snapshot(corpus) == before


@pytest.mark.parametrize("junk", [b"not parquet at all", b"PAR1", b"PAR1 truncated"])
def test_a_junk_file_is_named(junk: bytes, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    pq.write_table(pa.table({"doc_id": [1], "text": [TEXTS[0]]}), corpus / "a.parquet")
    (corpus / "notes.txt").write_bytes(junk)
    before = snapshot(corpus)
    assert run(["--input", str(corpus), "--output", str(tmp_path / "out")]) == 3  # before Spark
    assert f"{corpus / 'notes.txt'} in the input {corpus} is not a Parquet file" in (
        capsys.readouterr().err
    )
    assert snapshot(corpus) == before and not (tmp_path / "out").exists()


def test_json_lines_given_as_parquet_gets_the_setting_named(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"doc_id": 1, "text": TEXTS[0]}) + "\n")
    assert run(["--input", str(corpus), "--output", str(tmp_path / "out")]) == 3  # before Spark
    err = capsys.readouterr().err
    assert f"the input {corpus} is not a Parquet file; for JSON Lines, pass" in err
    assert "--set input.format=jsonl" in err


def test_a_glob_input_and_a_dotted_id_column(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, text in enumerate(TEXTS):
        pq.write_table(pa.table({"my.id": [f"d{i}"], "text": [text]}), corpus / f"p-{i}.parquet")
    (corpus / "README").write_text("not matched by the glob")
    before = snapshot(corpus)
    out = tmp_path / "out"
    args = [
        "--input",
        f"{corpus}/p-*.parquet",
        "--output",
        str(out),
        "--set",
        "input.id_column=my.id",
    ]
    code = run(args)
    assert code == 0, capsys.readouterr().err[-3000:]
    assert sorted(pq.read_table(out / "documents")["doc_id"].to_pylist()) == ["d0", "d1", "d2"]
    # dedup reads the same corpus: its output is beside the run's tables, not over them
    from shingling.spark.jobs.dedup import main as dedup

    args = ["--input", f"{corpus}/p-*.parquet", "--run", str(out), "--output", str(out / "dedup")]
    code = dedup([*args, "--set", "input.id_column=my.id", "--set", "dedup.keep=smallest_id"])
    assert code == 0, capsys.readouterr().err[-3000:]
    kept = pq.read_table(out / "dedup" / "corpus")
    assert set(kept["my.id"].to_pylist()) <= {"d0", "d1", "d2"} and kept.num_rows >= 2
    assert snapshot(corpus) == before
    # a glob that matches nothing is a missing input
    assert run(["--input", f"{corpus}/q-*.parquet", "--output", str(tmp_path / "o2")]) == 3
    assert "input path does not exist" in capsys.readouterr().err


def test_an_invalid_utf8_id_is_refused(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    ids = pa.array([b"fine", b"b\xffad"], pa.binary()).view(pa.string())
    corpus = tmp_path / "corpus.parquet"
    pq.write_table(pa.table({"doc_id": ids, "text": TEXTS[:2]}), corpus)
    before = snapshot(corpus)
    assert run(["--input", str(corpus), "--output", str(tmp_path / "out")]) == 3
    err = capsys.readouterr().err
    assert "a string id is not valid UTF-8" in err and "62FF6164" in err, err[-2000:]
    assert "'doc_id'" in err
    assert snapshot(corpus) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.parquet"]  # staging removed
