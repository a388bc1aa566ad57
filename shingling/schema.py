"""Every column name and the layout of a run directory, defined once (no Spark needed).

The Spark code (``shingling/spark/``), the compiled path (``shingling/fast/``), the index reader and the CLI
import these names, and the tables' column types (:func:`arrow_fields`, in Arrow's types):
``shingling/spark/schemas.py`` derives the Spark types from them.

Input contract: a Parquet file or directory (or JSON Lines) with an id column (integer or string,
unique, not null) and a text column (string); their names are set in ``[input]`` and renamed to
:data:`DOC_ID` and :data:`TEXT` when read. Other columns are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import pyarrow as pa

# Internal names: the input's id and text columns are renamed to these when read.
DOC_ID = "doc_id"
TEXT = "text"

# The documents table: one row per input document, its sketch or why it was skipped.
N_WORDS = "n_words"
N_SHINGLES = "n_shingles"
SKETCH = "sketch"
TEXT_HASH = "text_hash"
SKIP_REASON = "skip_reason"
# xxHash64 (seed 42) of the raw text's UTF-8 bytes: Spark SQL xxhash64(text), so a corpus is checked
# against the run that sketched it without sketching it again (shingling.hashing.text_checksum).
TEXT_CHECKSUM = "text_checksum"

# Why a document has no sketch.
SKIP_NULL_ID = "null_id"
SKIP_NULL_TEXT = "null_text"
SKIP_NO_WORDS = "no_words"
SKIP_DUPLICATE_ID = "duplicate_id"  # every row of an id that appears more than once
SKIP_INVALID_UTF8 = "invalid_utf8"  # a string column holding bytes that are not UTF-8
SKIP_REASONS = (SKIP_NULL_ID, SKIP_DUPLICATE_ID, SKIP_NULL_TEXT, SKIP_INVALID_UTF8, SKIP_NO_WORDS)

# The pair table.
DOC_A = "doc_a"
DOC_B = "doc_b"
MATCHES = "matches"
JACCARD = "jaccard"  # exact when the run verified its pairs (pairs.verify), else the estimate
JACCARD_ESTIMATE = "jaccard_estimate"  # the bottom-k sketch's estimate, always
CONTAINMENT_A = "containment_a"
CONTAINMENT_B = "containment_b"
SHINGLES_A = "shingles_a"
SHINGLES_B = "shingles_b"
EXACT = "exact_duplicate"
RELATION = "relation"

# What a pair is (the rule: shingling.pairs.relation).
NEAR_DUPLICATE = "near_duplicate"
A_IN_B = "a_in_b"
B_IN_A = "b_in_a"

# Rows of the join: one sketch hash of one document.
HASH = "hash"
# a prefix row: the positions in its sketch of the prefix hashes before its own (a bit each)
EARLIER = "earlier"

# The columns of the tables, in their order.
DOCUMENT_COLUMNS = (DOC_ID, N_WORDS, N_SHINGLES, SKETCH, TEXT_HASH, SKIP_REASON, TEXT_CHECKSUM)
PAIR_COLUMNS = (
    DOC_A,
    DOC_B,
    MATCHES,
    JACCARD,
    JACCARD_ESTIMATE,
    CONTAINMENT_A,
    CONTAINMENT_B,
    SHINGLES_A,
    SHINGLES_B,
    EXACT,
    RELATION,
)
#: What scoring two sketches gives (the compiled and Spark scorers' rows): the pair table's
#: columns but the separate estimate and the exact-copy flag, which later steps add.
SCORED_COLUMNS = tuple(c for c in PAIR_COLUMNS if c not in (JACCARD_ESTIMATE, EXACT))


def _types(id_type: pa.DataType) -> dict[str, pa.DataType]:
    """Each column's Arrow type; the ids take the input's id type."""
    return {
        DOC_ID: id_type,
        N_WORDS: pa.int64(),
        N_SHINGLES: pa.int64(),
        SKETCH: pa.list_(pa.int64()),
        TEXT_HASH: pa.int64(),
        SKIP_REASON: pa.string(),
        TEXT_CHECKSUM: pa.int64(),
        DOC_A: id_type,
        DOC_B: id_type,
        MATCHES: pa.int32(),
        JACCARD: pa.float64(),
        JACCARD_ESTIMATE: pa.float64(),
        CONTAINMENT_A: pa.float64(),
        CONTAINMENT_B: pa.float64(),
        SHINGLES_A: pa.int64(),
        SHINGLES_B: pa.int64(),
        EXACT: pa.bool_(),
        RELATION: pa.string(),
    }


def arrow_fields(
    columns: tuple[str, ...], id_type: pa.DataType, *, nullable: bool = True
) -> list[pa.Field]:
    """The Arrow fields of these columns (of the documents or the pair table), in this order.

    >>> [str(f.type) for f in arrow_fields((DOC_A, MATCHES, SKETCH), pa.string())]
    ['string', 'int32', 'list<item: int64>']
    """
    types = _types(id_type)
    return [pa.field(c, types[c], nullable) for c in columns]


def documents_table_schema(id_type: pa.DataType) -> pa.Schema:
    """The documents table. Every field is nullable, as Spark reads any Parquet table back: so
    the table a job writes, the same table read back (build_index copies it into an index) and a
    nightly segment all have one schema, nullability included."""
    return pa.schema(arrow_fields(DOCUMENT_COLUMNS, id_type))


def pairs_table_schema(id_type: pa.DataType) -> pa.Schema:
    """The pair table (docs/output.md): no column is null."""
    return pa.schema(arrow_fields(PAIR_COLUMNS, id_type, nullable=False))


# The persistent index (shingling.index).
ADDED = "added"
SEGMENT = "segment"

# A run directory (jobs/near_duplicates.py writes it; every tool reads it).
RUN_DOCUMENTS = "documents"
RUN_PAIRS = "pairs"
RUN_SUMMARY = "summary.json"
RUN_CONFIG = "config.toml"


# The run summary (RUN_SUMMARY, docs/output.md): what jobs/near_duplicates.py writes and every
# tool reads back, typed here once.


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
    ``frequency_sketch``: its megabytes and fill; ``verification``: what verifying found
    (candidates verified, estimates off).
    """

    written: int
    exact_duplicates: int
    scores: str = "estimate"
    candidate_pairs: int = 0
    representative_pairs: int = 0
    capped_documents: int = 0
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


# The dedup job's summary (its output's summary.json, docs/dedup.md), typed here once.


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
