"""The harness: processes measured and stopped, runners chosen, the table filled in."""

from __future__ import annotations

import sys

import pytest

from bench.run import Run, measure, parse_args, peers_note, pipeline_note, table
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
    assert parse_args(["--only", "pipeline,rensa"]).only == ["pipeline", "rensa"]
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
    assert "> 600" in rows[2] and "> 60.0" in rows[2] and rows[3].count("–") == 10


def test_the_note_gives_the_cost_of_verifying_against_the_estimate_only_run() -> None:
    stages = {"sketch": 10.0, "pairs": 20.0, "total": 32.0}
    runs = [
        Run("scan", "ok", 10.0),
        Run("pipeline", "ok", 45.0, detail={"stage_seconds": stages}),
        Run("estimate", "ok", 36.0),
    ]
    note = pipeline_note(runs)
    assert "1.25× the estimate-only run" in note and "4.50× the scan floor" in note, note


def test_the_note_gives_the_dedup_against_the_pipeline_run() -> None:
    stages = {"sketch": 10.0, "pairs": 20.0, "total": 32.0}
    decision = {"rounds": 2, "finished_in_one_task": 500, "removed": 70}
    runs = [
        Run("pipeline", "ok", 40.0, detail={"stage_seconds": stages}),
        Run("dedup", "ok", 10.0, detail={"decision": decision, "components": {"would_remove": 90}}),
    ]
    note = pipeline_note(runs)
    assert "Dedup 10.0 s whole process, 0.25× the pipeline run (2 rounds" in note, note
    assert "70 documents removed, the component rule would remove 90" in note, note


def test_the_note_gives_the_joins_work_per_document_from_the_summary() -> None:
    stages = {"sketch": 10.0, "pairs": 20.0, "total": 32.0}
    pairs = {
        "pairs_tested": 5000,
        "signature_passes": 1000,
        "candidate_pairs": 300,
        "verification": {"candidates_verified": 150},
    }
    detail = {"stage_seconds": stages, "pairs": pairs, "documents": {"sketched": 200}}
    note = pipeline_note([Run("pipeline", "ok", 40.0, detail=detail)])
    assert (
        "per sketched document: pairs tested 25.00, signature passes 5.00, "
        "candidates scored 1.50, verified 0.75." in note
    ), note
    # a summary from before the counters: no such sentence
    old = {
        "stage_seconds": stages,
        "pairs": {"candidate_pairs": 300},
        "documents": detail["documents"],
    }
    assert "per sketched document" not in pipeline_note([Run("pipeline", "ok", 40.0, detail=old)])


def test_the_peers_note_sets_the_defaults_against_each_peer_and_bounds_a_timeout() -> None:
    runs = [
        Run("pipeline", "ok", 60.0),
        Run("rensa", "ok", 40.0),
        Run("datasketch", "skipped"),
        Run("mllib", "timeout", 600.0),
    ]
    note = peers_note(runs)
    assert note == "The defaults' whole process against the peers': 1.50× rensa's, < 0.10× mllib's."
    assert peers_note([Run("pipeline", "failed", 60.0), Run("rensa", "ok", 40.0)]) == ""
