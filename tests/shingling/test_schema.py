"""shingling.schema: the run summary, typed once, reads back what it writes and names what is
missing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shingling.schema import (
    SKIP_REASONS,
    ComponentCounts,
    CorpusCounts,
    DecisionCounts,
    DedupSummary,
    DocumentCounts,
    PairCounts,
    RunSummary,
)


def summary() -> RunSummary:
    return RunSummary(
        job="near_duplicates",
        input="corpus.parquet",
        output="out",
        started_at="2026-12-02T00:00:00+00:00",
        documents=DocumentCounts(read=3, sketched=2, skipped={"null_text": 1}),
        pairs=PairCounts(written=1, exact_duplicates=0, scores="exact"),
        stage_seconds={"sketch": 1.5, "pairs": 2.0, "total": 3.5},
        finished_at="2026-12-02T00:00:04+00:00",
        status="succeeded",
        config={"sketch": {"width": 4}},
    )


def test_a_summary_round_trips_through_json(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps(summary().to_dict()))
    loaded = RunSummary.load(tmp_path)
    # every skip reason is listed, the ones not given as 0
    assert loaded.documents.skipped == {r: int(r == "null_text") for r in SKIP_REASONS}
    assert loaded.pairs == summary().pairs and loaded.config == summary().config
    assert "verification" not in loaded.to_dict()["pairs"]  # optional figures left out when absent


@pytest.mark.parametrize("field", ["job", "input", "documents", "pairs", "stage_seconds"])
def test_a_missing_field_is_named(field: str, tmp_path: Path) -> None:
    data = summary().to_dict()
    del data[field]
    (tmp_path / "summary.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=repr(field)):
        RunSummary.load(tmp_path)


@pytest.mark.parametrize("text", ["[1, 2]", '{"job": "x", "input": "y", "documents": 3}'])
def test_a_summary_of_the_wrong_shape_is_a_value_error(text: str, tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(text)
    with pytest.raises(ValueError, match="summary.json"):
        RunSummary.load(tmp_path)


def dedup_summary() -> DedupSummary:
    return DedupSummary(
        input="corpus.parquet",
        run="out/sample",
        output="out/dedup",
        started_at="2026-12-05T12:00:00+00:00",
        cut=0.5,
        containment_cut=None,
        decision=DecisionCounts(0, 1683, 538, 146, 392, 53, 0, 112),
        components=ComponentCounts(0, 110, 538, 112, 428),
        corpus=CorpusCounts(2000, 1608, 392, 53),
        stage_seconds={"check": 1.5, "decide": 2.0},
        finished_at="2026-12-05T12:00:09+00:00",
        status="succeeded",
        config={"pairs": {"threshold": 0.5}},
    )


def test_a_dedup_summary_reads_back_as_written() -> None:
    written = dedup_summary().to_dict()
    assert list(written)[:2] == ["job", "input"] and written["job"] == "dedup"
    read = DedupSummary.from_dict(json.loads(json.dumps(written)))
    assert read == dedup_summary()


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda d: d.pop("decision"), "no 'decision'"),
        (lambda d: d["corpus"].pop("written"), "wrong shape"),
        (lambda d: d.update(job="near_duplicates"), "not of dedup"),
    ],
)
def test_a_dedup_summary_missing_a_field_is_refused_by_name(
    change: Callable[[dict[str, Any]], object], says: str
) -> None:
    data = json.loads(json.dumps(dedup_summary().to_dict()))
    change(data)
    with pytest.raises(ValueError, match=says):
        DedupSummary.from_dict(data)
