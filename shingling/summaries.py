"""What each job reports: the ``summary.json`` of a run or a dedup output, and the JSON summary every
job prints on success. One dataclass per job, read back typed (a missing field refused by name);
the tools (the report, ``shingling explain``) and the tests read them through these.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from shingling.schema import RUN_SUMMARY, SKIP_REASONS

# The run summary (RUN_SUMMARY, docs/output.md): what the near-duplicates job writes and every
# tool reads back.


@dataclass(frozen=True)
class DocumentCounts:
    """Documents read, sketched and skipped (by reason: every reason of :data:`SKIP_REASONS`)."""

    read: int
    sketched: int
    skipped: dict[str, int]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DocumentCounts:
        skipped = dict(data.get("skipped") or {})
        return cls(
            read=int(data["read"]),
            sketched=int(data["sketched"]),
            skipped={reason: int(skipped.get(reason, 0)) for reason in SKIP_REASONS},
        )


@dataclass(frozen=True)
class PairCounts:
    """The pair table a run wrote, and how its pairs were found.

    ``scores``: "exact" when every pair of distinct texts was verified against its texts
    (pairs.verify), "estimate" when decided on the sketches; ``candidate_pairs``: pairs the join
    scored, ``representative_pairs``: distinct candidates among representatives of exact-copy
    groups, ``capped_documents``: documents paired by star (pairs.max_posting);
    ``pairs_tested``: pairs of documents the join's postings met and tested, ``signature_passes``:
    those the signatures' bound passed, each then an intersection of two sketches (the join's
    work: divided by ``documents.sketched``, per document);
    ``frequency_sketch``: its megabytes and fill; ``verification``: what verifying found
    (candidates verified, estimates off).
    """

    written: int
    exact_duplicates: int
    scores: str = "estimate"
    candidate_pairs: int = 0
    representative_pairs: int = 0
    capped_documents: int = 0
    pairs_tested: int = 0
    signature_passes: int = 0
    frequency_sketch: dict[str, float] | None = None
    verification: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PairCounts:
        known = {f.name for f in fields(cls)}
        return cls(**{name: value for name, value in data.items() if name in known})


@dataclass(frozen=True)
class RunSummary:
    """A run's ``summary.json``: the job, its input and output, the documents and pairs counted,
    the seconds of each step, and the resolved config (also in ``config.toml``)."""

    job: str
    input: str
    output: str
    started_at: str
    documents: DocumentCounts
    pairs: PairCounts
    stage_seconds: dict[str, float]
    finished_at: str
    status: str
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object written to :data:`RUN_SUMMARY` (optional pair figures left out)."""
        data = asdict(self)
        data["pairs"] = {name: value for name, value in data["pairs"].items() if value is not None}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunSummary:
        """Raises ValueError naming the first field missing or of the wrong shape."""
        try:
            return cls(
                job=str(data["job"]),
                input=str(data["input"]),
                output=str(data.get("output", "")),
                started_at=str(data.get("started_at", "")),
                documents=DocumentCounts.from_dict(data["documents"]),
                pairs=PairCounts.from_dict(data["pairs"]),
                stage_seconds={k: float(v) for k, v in dict(data["stage_seconds"]).items()},
                finished_at=str(data.get("finished_at", "")),
                status=str(data.get("status", "")),
                config=dict(data.get("config") or {}),
            )
        except KeyError as e:
            raise ValueError(f"no {e.args[0]!r} in the run summary") from e
        except (TypeError, AttributeError) as e:
            raise ValueError(f"a field of the run summary has the wrong shape: {e}") from e

    @classmethod
    def load(cls, run: str | Path) -> RunSummary:
        """The summary of the run directory ``run``.

        Raises:
            FileNotFoundError: ``run`` holds no summary.
            ValueError: the summary is not JSON, or not a run summary.
        """
        path = Path(run) / RUN_SUMMARY
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as e:
            raise ValueError(f"{path}: not UTF-8") from e
        except json.JSONDecodeError as e:  # truncated or edited: name the file
            raise ValueError(f"{path}: not JSON ({e})") from e
        if not isinstance(data, dict):
            raise ValueError(f"{path}: not a JSON object")
        try:
            return cls.from_dict(data)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from e


# The dedup job's summary (its output's summary.json, docs/dedup.md).


@dataclass(frozen=True)
class DecisionCounts:
    """The decision: documents decided (those of a pair at the cut), kept and removed (of them,
    exact copies and excerpts), the largest number removed in favour of one kept document, and
    how it was reached (Spark rounds, then links finished in one task)."""

    rounds: int
    finished_in_one_task: int
    documents_decided: int
    kept: int
    removed: int
    removed_exact_duplicates: int
    removed_excerpts: int
    largest_cluster: int


@dataclass(frozen=True)
class ComponentCounts:
    """The connected components of the same links, for comparison: what one kept document per
    component would remove (``would_remove``)."""

    rounds: int
    components: int
    documents_in_components: int
    largest_component: int
    would_remove: int


@dataclass(frozen=True)
class CorpusCounts:
    """The deduplicated corpus: rows read, written and removed (of them, exact copies)."""

    read: int
    written: int
    removed: int
    removed_exact_duplicates: int


@dataclass(frozen=True)
class DedupSummary:
    """A dedup output's ``summary.json``: its input, run and output, the cuts, the decision, the
    components' comparison, the corpus written, the seconds of each step and the resolved
    config."""

    input: str
    run: str
    output: str
    started_at: str
    cut: float
    containment_cut: float | None
    decision: DecisionCounts
    components: ComponentCounts
    corpus: CorpusCounts
    stage_seconds: dict[str, float]
    finished_at: str
    status: str
    config: dict[str, Any] = field(default_factory=dict)
    job: str = "dedup"

    def to_dict(self) -> dict[str, Any]:
        """The JSON object written to the output's summary.json (``job`` first)."""
        data = asdict(self)
        return {"job": data.pop("job"), **data}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DedupSummary:
        """Raises ValueError naming the first field missing or of the wrong shape."""
        try:
            if data["job"] != "dedup":
                raise ValueError(f"the summary of a {data['job']!r} job, not of dedup")
            return cls(
                input=str(data["input"]),
                run=str(data["run"]),
                output=str(data["output"]),
                started_at=str(data["started_at"]),
                cut=float(data["cut"]),
                containment_cut=(
                    None if data["containment_cut"] is None else float(data["containment_cut"])
                ),
                decision=DecisionCounts(**data["decision"]),
                components=ComponentCounts(**data["components"]),
                corpus=CorpusCounts(**data["corpus"]),
                stage_seconds={k: float(v) for k, v in dict(data["stage_seconds"]).items()},
                finished_at=str(data["finished_at"]),
                status=str(data["status"]),
                config=dict(data.get("config") or {}),
            )
        except KeyError as e:
            raise ValueError(f"no {e.args[0]!r} in the dedup summary") from e
        except TypeError as e:
            raise ValueError(f"a field of the dedup summary has the wrong shape: {e}") from e


# The index jobs print their summary (docs/nightly.md); their shapes are read back generically.

T = TypeVar("T")
S = TypeVar("S", bound="_JobSummary")


def _read(cls: type[T], data: Mapping[str, Any], where: str) -> T:
    """``cls`` from a JSON object: nested dataclasses read as such; a field with a default may be
    missing. Raises ValueError naming the first required field missing."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: not a JSON object")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            if f.default is MISSING and f.default_factory is MISSING:
                raise ValueError(f"no {f.name!r} in the {where}")
            continue
        value = data[f.name]
        inner = [t for t in typing.get_args(hints[f.name]) or (hints[f.name],) if is_dataclass(t)]
        if inner and value is not None:
            value = _read(inner[0], value, f"{where}'s {f.name}")  # type: ignore[arg-type]
        values[f.name] = value
    return cls(**values)


class _JobSummary:
    """A job's printed summary: ``job`` first, the optional parts left out when absent."""

    JOB: ClassVar[str]
    OPTIONAL: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)  # type: ignore[call-overload]
        data = {k: v for k, v in data.items() if not (k in self.OPTIONAL and v is None)}
        return {"job": self.JOB, **data}

    @classmethod
    def from_dict(cls: type[S], data: Mapping[str, Any]) -> S:
        """Raises ValueError when ``data`` is another job's summary or misses a field."""
        job = cls.JOB
        if data.get("job") != job:
            raise ValueError(f"the summary of a {data.get('job')!r} job, not of {job}")
        return _read(cls, {k: v for k, v in data.items() if k != "job"}, f"{job} summary")


@dataclass(frozen=True)
class Recovered:
    """What a run's recovery did under the index's lock before its own work: committed runs'
    staged pairs (and decisions) published, killed runs' leftovers deleted."""

    pair_partitions_published: int
    leftovers_deleted: int
    decision_partitions_published: int | None = None


@dataclass(frozen=True)
class BatchCounts:
    """The night's batch: documents read, sketched and skipped by reason; of the index's
    documents, how many a batch document of the same id replaced."""

    read: int
    sketched: int
    skipped: dict[str, int]
    replaced: int


@dataclass(frozen=True)
class NightPairs:
    """The night's pairs: written to its partition, of them exact copies; "exact" scores when
    verified; what verification found."""

    written: int
    exact_duplicates: int
    scores: str
    verification: dict[str, Any] | None = None


@dataclass(frozen=True)
class NightDecisions:
    """The night's dedup decisions (with ``--decisions``): rounds and links finished in one
    task, the batch's documents kept and removed (of them, exact copies)."""

    rounds: int
    finished_in_one_task: int
    kept: int
    removed: int
    removed_exact_duplicates: int


@dataclass(frozen=True)
class IndexVersions:
    """The index before and after a run: versions, live documents and postings, segments, and
    the run's new segment."""

    version_before: int
    version_after: int
    documents_before: int
    documents_after: int
    postings_before: int
    postings_after: int
    segments: int
    segment: str


@dataclass(frozen=True)
class NightSummary(_JobSummary):
    """What the nightly job prints: the night, its paths (``decisions_path`` with
    ``--decisions``), the recovery, the batch, its pairs and decisions, the index's versions,
    the seconds of each step."""

    JOB: ClassVar[str] = "nightly"
    OPTIONAL: ClassVar[tuple[str, ...]] = ("decisions_path", "decisions")

    run_date: str
    run_id: str
    batch: str
    index_path: str
    output: str
    started_at: str
    recovered: Recovered
    batch_documents: BatchCounts
    pairs: NightPairs
    index: IndexVersions
    stage_seconds: dict[str, float]
    finished_at: str
    status: str
    decisions_path: str | None = None
    decisions: NightDecisions | None = None


@dataclass(frozen=True)
class BuildSummary(_JobSummary):
    """What build_index prints: the run it indexed, the index's first version (its documents,
    of them sketched, its postings), the pairs published, the segment."""

    JOB: ClassVar[str] = "build_index"

    run: str
    index: str
    run_date: str
    index_version: int
    documents: int
    postings: int
    sketched: int
    pairs_written: int
    segment: str
    seconds: float
    status: str


@dataclass(frozen=True)
class SegmentsBefore:
    """The index a compaction read: its version, segments, live documents and postings, and the
    rows that later nights replaced."""

    version: int
    segments: int
    live_documents: int
    live_postings: int
    replaced_rows: int


@dataclass(frozen=True)
class SegmentsAfter:
    """The index a compaction committed: one segment (``segment``), and the segments deleted."""

    version: int
    segments: int
    segment: str
    live_documents: int
    live_postings: int
    segments_deleted: int


@dataclass(frozen=True)
class CompactSummary(_JobSummary):
    """What compact_index prints: ``status`` "committed", or "nothing to do" (no ``after``)."""

    JOB: ClassVar[str] = "compact_index"
    OPTIONAL: ClassVar[tuple[str, ...]] = ("after", "finished_at")

    index: str
    run_id: str
    started_at: str
    recovered: Recovered
    before: SegmentsBefore
    status: str
    seconds: float
    after: SegmentsAfter | None = None
    finished_at: str | None = None


@dataclass(frozen=True)
class UndoneNight:
    """The night an undo took back, as the manifest recorded it (None where it did not)."""

    segment: str | None
    batch: str | None
    batch_documents: int | None
    pairs_written: int | None


@dataclass(frozen=True)
class IndexAfterUndo:
    """The index before and after the undo, and the last night it now holds."""

    version_before: int
    version_after: int
    documents_before: int
    documents_after: int
    last_run_date: str | None


@dataclass(frozen=True)
class UndoSummary(_JobSummary):
    """What undo_night prints."""

    JOB: ClassVar[str] = "undo_night"

    index: str
    output: str | None
    run_date: str
    run_id: str
    recovered: Recovered
    undone: UndoneNight
    index_after: IndexAfterUndo
    seconds: float
    finished_at: str
    status: str
