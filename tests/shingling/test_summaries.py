"""shingling.summaries: every summary, typed once, reads back what it writes and names what is
missing."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shingling.schema import SKIP_REASONS
from shingling.summaries import (
    BatchCounts,
    BuildSummary,
    CompactSummary,
    ComponentCounts,
    CorpusCounts,
    DecisionCounts,
    DedupSummary,
    DocumentCounts,
    IndexAfterUndo,
    IndexVersions,
    NightDecisions,
    NightPairs,
    NightSummary,
    PairCounts,
    Recovered,
    RunSummary,
    SegmentsAfter,
    SegmentsBefore,
    UndoneNight,
    UndoSummary,
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


RECOVERED = Recovered(pair_partitions_published=1, leftovers_deleted=0)


def night(decisions: NightDecisions | None) -> NightSummary:
    return NightSummary(
        run_date="2026-12-03",
        run_id="0123456789ab",
        batch="new.parquet",
        index_path="index",
        output="pairs",
        started_at="2026-12-03T02:00:00+00:00",
        recovered=RECOVERED,
        batch_documents=BatchCounts(read=5, sketched=4, skipped={"no_words": 1}, replaced=2),
        pairs=NightPairs(written=3, exact_duplicates=1, scores="exact"),
        index=IndexVersions(
            version_before=1,
            version_after=2,
            documents_before=10,
            documents_after=13,
            postings_before=100,
            postings_after=130,
            segments=2,
            segment="s2",
        ),  # fmt: skip
        stage_seconds={"total": 9.5},
        finished_at="2026-12-03T02:00:10+00:00",
        status="committed",
        decisions_path=None if decisions is None else "decisions",
        decisions=decisions,
    )


def job_summaries() -> list[Any]:
    nothing_to_do = CompactSummary(
        index="index",
        run_id="0123456789ab",
        started_at="t",
        recovered=RECOVERED,
        before=SegmentsBefore(
            version=2, segments=2, live_documents=13, live_postings=130, replaced_rows=2
        ),
        status="nothing to do",
        seconds=0.5,
    )  # fmt: skip
    return [
        night(None),
        night(
            NightDecisions(
                rounds=2, finished_in_one_task=0, kept=3, removed=1, removed_exact_duplicates=1
            )
        ),  # fmt: skip
        BuildSummary(
            run="out/sample",
            index="index",
            run_date="2026-12-02",
            index_version=1,
            documents=10,
            postings=100,
            sketched=9,
            pairs_written=4,
            segment="s1",
            seconds=3.0,
            status="committed",
        ),  # fmt: skip
        nothing_to_do,
        replace(
            nothing_to_do,
            after=SegmentsAfter(
                version=3,
                segments=1,
                segment="s3",
                live_documents=13,
                live_postings=130,
                segments_deleted=2,
            ),
            status="committed",
            seconds=4.0,
            finished_at="t2",
        ),
        UndoSummary(
            index="index",
            output=None,
            run_date="2026-12-03",
            run_id="0123456789ab",
            recovered=Recovered(
                pair_partitions_published=0, leftovers_deleted=1, decision_partitions_published=0
            ),
            undone=UndoneNight(
                segment="s2", batch="new.parquet", batch_documents=5, pairs_written=None
            ),
            index_after=IndexAfterUndo(
                version_before=2,
                version_after=3,
                documents_before=13,
                documents_after=10,
                last_run_date="2026-12-02",
            ),
            seconds=0.2,
            finished_at="t",
            status="undone",
        ),  # fmt: skip
    ]


@pytest.mark.parametrize("summary", job_summaries(), ids=lambda s: type(s).__name__)
def test_a_job_summary_reads_back_as_printed(summary: Any) -> None:
    printed = json.loads(json.dumps(summary.to_dict()))
    assert list(printed)[0] == "job" and printed["job"] == summary.JOB
    assert type(summary).from_dict(printed) == summary
    for name in summary.OPTIONAL:  # left out when absent, not printed as null
        assert (name in printed) == (getattr(summary, name) is not None)


def test_a_job_summary_missing_a_field_or_of_another_job_is_refused_by_name() -> None:
    printed = night(None).to_dict()
    del printed["index"]["segment"]
    with pytest.raises(ValueError, match="nightly summary's index"):
        NightSummary.from_dict(printed)
    with pytest.raises(ValueError, match="no 'run_date'"):
        NightSummary.from_dict({k: v for k, v in night(None).to_dict().items() if k != "run_date"})
    with pytest.raises(ValueError, match="not of compact_index"):
        CompactSummary.from_dict(night(None).to_dict())
