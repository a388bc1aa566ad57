"""Issue 34 §4: a disk full (or a read-only filesystem) during a run is one line naming the path,
exit 1, nothing committed; not a traceback.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from shingling.spark.jobs import nightly
from shingling.spark.session import run_job

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "sample" / "corpus.parquet"


def test_a_storage_error_in_the_driver_is_one_line(spark, capsys: pytest.CaptureFixture) -> None:
    def full(_spark: object) -> dict:
        raise OSError(
            errno.ENOSPC, "No space left on device", "/data/index/_versions/00000002.json"
        )

    assert run_job("x", {}, full, failed="nothing was committed") == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: /data/index/_versions/00000002.json: No space left on device; nothing was committed"
    )


def test_a_storage_error_in_spark_is_one_line(spark, capsys: pytest.CaptureFixture) -> None:
    def full(_spark: object) -> dict:
        raise RuntimeError(
            "An error occurred while calling o812.parquet.\n"
            ": java.io.IOException: No space left on device\n\tat java.base/java.io.FileOutputStream"
        )

    assert run_job("x", {}, full, failed="nothing was committed") == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "java.io.IOException: No space left on device" in err


def test_a_full_disk_at_the_commit_leaves_the_index_as_it_was(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shingling.spark.storage import Files

    pq.write_table(
        pq.read_table(CORPUS, columns=["doc_id", "text"]).slice(0, 20), tmp_path / "b.parquet"
    )

    create_exclusive = Files.create_exclusive

    def full(self: Files, path: str, text: str) -> bool:
        if "_versions/" not in path:  # the index's identity, written when the index is claimed
            return create_exclusive(self, path, text)
        raise OSError(errno.ENOSPC, "No space left on device", path)

    monkeypatch.setattr(Files, "create_exclusive", full)  # the version file of the commit
    code = nightly.main(
        ["--batch", str(tmp_path / "b.parquet"), "--index", str(tmp_path / "index")]
        + ["--output", str(tmp_path / "pairs"), "--run-date", "2026-12-01"]
    )
    err = capsys.readouterr().err
    assert code == 1, err[-2000:]
    assert "_versions/00000001.json: No space left on device; the run failed" in err
    assert "Traceback" not in err
    assert not (tmp_path / "index" / "_manifest.json").exists()
    assert not list((tmp_path / "index").glob("segments/*"))
