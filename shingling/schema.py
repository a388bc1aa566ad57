"""Every column name and the layout of a run directory, defined once (no Spark needed).

The Spark code (``shingling/spark/``), the compiled path (``shingling/fast/``), the index reader and the CLI
import these names, and the tables' column types (:func:`arrow_fields`, in Arrow's types):
``shingling/spark/schemas.py`` derives the Spark types from them.

Input contract: a Parquet file or directory (or JSON Lines) with an id column (integer or string,
unique, not null) and a text column (string); their names are set in ``[input]`` and renamed to
:data:`DOC_ID` and :data:`TEXT` when read. Other columns are ignored.
"""

from __future__ import annotations

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
#: What the pair search measures of a pair (every path: the compiled join, verification, the
#: grouping of exact copies, the nightly probe, the reference search).
MEASURED_PAIR_COLUMNS = (
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
#: The pair table's columns, in its order: the measured ones, then any computed from them row by
#: row (:data:`shingling.pairs.DERIVED` defines each; :func:`shingling.pairs.pair_table` adds
#: them on every path). A new column that the measured ones determine is its name here, its type
#: in :data:`COLUMN_TYPES` and its definition in ``DERIVED``: nothing else changes.
PAIR_COLUMNS: tuple[str, ...] = MEASURED_PAIR_COLUMNS
#: What scoring two sketches gives (the compiled and Spark scorers' rows): the pair table's
#: columns but the separate estimate and the exact-copy flag, which later steps add.
SCORED_COLUMNS = tuple(c for c in MEASURED_PAIR_COLUMNS if c not in (JACCARD_ESTIMATE, EXACT))

#: Each column's Arrow type; None: the input's id type.
COLUMN_TYPES: dict[str, pa.DataType | None] = {
    DOC_ID: None,
    N_WORDS: pa.int64(),
    N_SHINGLES: pa.int64(),
    SKETCH: pa.list_(pa.int64()),
    TEXT_HASH: pa.int64(),
    SKIP_REASON: pa.string(),
    TEXT_CHECKSUM: pa.int64(),
    DOC_A: None,
    DOC_B: None,
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


def _types(id_type: pa.DataType) -> dict[str, pa.DataType]:
    """Each column's Arrow type; the ids take the input's id type."""
    return {c: id_type if t is None else t for c, t in COLUMN_TYPES.items()}


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
