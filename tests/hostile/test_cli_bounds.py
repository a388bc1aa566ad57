"""Issue 34 §4: the ``shingling`` commands answer a hostile input with one line and its code.

``query`` refuses a document above ``--max-mb`` after reading only that much (a 100 MB document
took 4 minutes and 4 GB); ``report`` names the file it cannot parse and leaves no partial page when
the disk fills. No JVM.
"""

from __future__ import annotations

import errno
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shingling import cli
from shingling.schema import DOC_A, DOC_B, EXACT, JACCARD, MATCHES


def write_run(out: Path) -> Path:
    """A run's output as the report and the query read it: summary, config, documents, pairs."""
    (out / "documents").mkdir(parents=True)
    documents = pa.table(
        {
            "doc_id": [1, 2],
            "n_words": [9, 9],
            "n_shingles": [6, 6],
            "sketch": pa.array([[1, 2, 3], [1, 2, 4]], pa.list_(pa.int64())),
            "text_hash": [11, 12],
            "skip_reason": pa.nulls(2, pa.string()),
        }
    )
    pq.write_table(documents, out / "documents" / "part-00000.parquet")
    (out / "pairs").mkdir()
    pairs = pa.table({DOC_A: [1], DOC_B: [2], JACCARD: [0.5], EXACT: [False], MATCHES: [2]})
    pq.write_table(pairs, out / "pairs" / "part-00000.parquet")
    (out / "config.toml").write_text("[sketch]\nwidth = 4\nk = 20\n\n[pairs]\nthreshold = 0.5\n")
    summary = {
        "job": "near_duplicates",
        "input": str(out / "no-corpus.parquet"),
        "documents": {"read": 2, "sketched": 2, "skipped": {}},
        "pairs": {"written": 1, "exact_duplicates": 0},
        "stage_seconds": {"total": 1.0},
        "status": "succeeded",
    }
    (out / "summary.json").write_text(json.dumps(summary))
    return out


def test_query_refuses_a_document_above_the_bound_before_holding_it(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = write_run(tmp_path / "run")
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:  # sparse: 16 MiB and one byte, the default bound plus one
        f.truncate((16 << 20) + 1)
    assert cli.main(["query", str(run), str(big)]) == 3
    err = capsys.readouterr().err
    assert f"{big} is larger than 16 MiB (--max-mb)" in err
    small = tmp_path / "small.txt"
    small.write_text("word " * 300_000)  # 1.4 MiB
    assert cli.main(["query", str(run), str(small), "--max-mb", "1"]) == 3
    assert "larger than 1 MiB" in capsys.readouterr().err
    assert cli.main(["query", str(run), str(small), "--max-mb", "2"]) == 0


def test_query_bounds_standard_input_too(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = write_run(tmp_path / "run")
    stream = io.BytesIO(b"x " * (1 << 20))  # 2 MiB
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(stream))
    assert cli.main(["query", str(run), "-", "--max-mb", "1"]) == 3
    assert stream.tell() <= (1 << 20) + 1 + 65536  # read no further than the bound (and a buffer)


def test_report_names_a_summary_it_cannot_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = write_run(tmp_path / "run")
    summary = run / "summary.json"
    summary.write_text(summary.read_text()[:25])  # truncated
    assert cli.main(["report", str(run)]) == 3
    err = capsys.readouterr().err
    assert f"{summary}: not JSON" in err and "Traceback" not in err
    assert not list(run.glob("*report.html*"))


def test_report_names_a_pair_file_it_cannot_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = write_run(tmp_path / "run")
    part = run / "pairs" / "part-00000.parquet"
    part.write_bytes(part.read_bytes()[:40])  # truncated
    assert cli.main(["report", str(run)]) == 3
    assert f"cannot read {run / 'pairs'}" in capsys.readouterr().err
    assert not list(run.glob("*report.html*"))


def test_a_full_disk_leaves_no_partial_report(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = write_run(tmp_path / "run")
    target = tmp_path / "site" / "report.html"
    target.parent.mkdir()
    real = Path.write_text

    def full(self: Path, data: str, *args: object, **kwargs: object) -> int:
        real(self, data[:100], encoding="utf-8")  # some bytes land, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    assert cli.main(["report", str(run), "--to", str(target)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "No space left on device" in err
    assert "report.html.partial" in err
    assert list(target.parent.iterdir()) == []
