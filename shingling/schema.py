"""Every column name and the layout of a run directory, defined once (no Spark needed).

The Spark code (``shingling/spark/``), the compiled path (``shingling/fast/``), the index reader and the CLI
import these names; ``shingling/spark/schemas.py`` adds the Spark types of the tables.

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
