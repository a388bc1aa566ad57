"""The harness: processes measured and stopped, runners chosen, the table filled in."""

from __future__ import annotations

import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bench.run import Run, measure, parse_args, table, verified_pairs
from bench.truth import Quality


def test_measure_tells_success_failure_and_timeout_apart(tmp_path) -> None:
    hold = "import time; x = b'x' * 50_000_000; time.sleep(1)"
    ok = measure([sys.executable, "-c", hold], tmp_path / "ok.log", 60)
    assert ok[0] == "ok" and ok[2] > 50_000_000
    failed = measure([sys.executable, "-c", "raise SystemExit(3)"], tmp_path / "f.log", 60)
    assert failed[0] == "failed"
    slow = measure([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "t.log", 1)
    assert slow[0] == "timeout"


def test_unknown_runner_is_refused(capsys) -> None:
    assert parse_args(["--only", "scan,pipeline"]).only == ["scan", "pipeline"]
    with pytest.raises(SystemExit):
        parse_args(["--only", "scan,minhash"])
    assert "minhash" in capsys.readouterr().err


def test_table_compares_with_the_floor_and_bounds_a_peer_that_timed_out() -> None:
    runs = [
        Run("scan", "ok", wall=10.0, peak_rss=2**30, cores=2),
        Run("pipeline", "ok", wall=30.0, peak_rss=2**31, cores=2),
        Run("mllib", "timeout", wall=600.0, peak_rss=2**32, cores=2),
        Run("datasketch", "skipped"),
    ]
    q = Quality(10, 1.0, 0.9, 0.8, 1.0, [None] * 10)
    rows = table(runs, {"pipeline": q}, text_mb=100.0).splitlines()[2:]
    pipeline = [c.strip() for c in rows[1].split("|")[1:-1]]
    assert pipeline[2:7] == ["30.0", "3.0", "< 0.05", "2.00", "1.67"]
    assert pipeline[7:] == ["10", "1.000", "0.900", "0.800", "1.000"]
    assert "> 600" in rows[2] and rows[3].count("–") == 10


def test_verified_pairs_are_the_copies_and_the_candidates_at_the_cut(tmp_path) -> None:
    pq.write_table(
        pa.table(
            {
                "doc_a": [1, 1, 2, 5],
                "doc_b": [2, 3, 4, 6],
                "exact_duplicate": [True, False, False, False],
            }
        ),
        tmp_path / "pairs.parquet",
    )
    # as dedup writes them: every candidate but the copies, with its exact Jaccard (null: no
    # words), the ids declared not null
    verified = pa.schema(
        [
            pa.field("doc_a", pa.int64(), nullable=False),
            pa.field("doc_b", pa.int64(), nullable=False),
            pa.field("exact_jaccard", pa.float64()),
        ]
    )
    pq.write_table(
        pa.table([[1, 2, 5], [3, 4, 6], [0.5, 0.49, None]], schema=verified),
        tmp_path / "verified.parquet",
    )
    kept = verified_pairs(tmp_path / "pairs.parquet", tmp_path / "verified.parquet", cut=0.5)
    assert sorted((r["doc_a"], r["doc_b"]) for r in kept.to_pylist()) == [(1, 2), (1, 3)]
