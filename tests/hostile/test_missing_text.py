"""Issue 34 §4: a night that needs an indexed document's stored text that is gone exits 3 with one
line naming the segment and what to do, not 1 with an executor's traceback; nothing is committed.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_helpers import snapshot

from shingling.spark.jobs import build_index, nightly

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "sample" / "corpus.parquet"


def test_a_missing_stored_text_names_the_segment(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from shingling.spark.jobs.near_duplicates import main

    corpus = pq.read_table(CORPUS, columns=["doc_id", "text"]).slice(0, 30)
    pq.write_table(corpus, tmp_path / "corpus.parquet")
    run, index, pairs = tmp_path / "full", tmp_path / "index", tmp_path / "pairs"
    assert main(["--input", str(tmp_path / "corpus.parquet"), "--output", str(run)]) == 0
    args = ["--run", str(run), "--index", str(index), "--run-date", "2026-11-30"]
    assert build_index.main([*args, "--output", str(pairs)]) == 0
    # the stored text of the longest indexed document goes missing
    lengths = pa.compute.utf8_length(corpus["text"]).to_pylist()
    victim = corpus["doc_id"][lengths.index(max(lengths))].as_py()
    (segment,) = (index / "segments").iterdir()
    for part in (segment / "texts").glob("*.parquet"):
        table = pq.read_table(part)
        pq.write_table(table.filter(pa.compute.not_equal(table["doc_id"], victim)), part)
        part.with_name(f".{part.name}.crc").unlink(missing_ok=True)  # Hadoop's checksum of it
    # a batch holding a near copy of it: verifying that pair needs the missing text
    text = corpus["text"][lengths.index(max(lengths))].as_py() + " and a few more words"
    pq.write_table(pa.table({"doc_id": ["near-copy"], "text": [text]}), tmp_path / "batch.parquet")
    capsys.readouterr()
    before = {k: v for k, v in snapshot(index).items() if not k.endswith("_lock")}
    code = nightly.main(
        ["--batch", str(tmp_path / "batch.parquet"), "--index", str(index)]
        + ["--output", str(pairs), "--run-date", "2026-12-01"]
    )
    err = capsys.readouterr().err
    assert code == 3, err[-3000:]
    assert f"missing or unreadable in segment {segment.name} (1 documents without text)" in err
    assert "Restore segments/<segment>/texts/" in err and "Traceback" not in err
    assert {k: v for k, v in snapshot(index).items() if not k.endswith("_lock")} == before
    assert not list(pairs.glob("run_date=2026-12-01"))
