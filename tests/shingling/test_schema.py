"""shingling.schema: the run summary, typed once, reads back what it writes and names what is
missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shingling.schema import SKIP_REASONS, DocumentCounts, PairCounts, RunSummary


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
