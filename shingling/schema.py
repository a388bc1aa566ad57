"""Every column name and the layout of a run directory, defined once (no Spark needed).

The Spark code (``jobs/``), the compiled path (``shingling/fast/``), the index reader and the CLI
import these names; ``jobs/schemas.py`` adds the Spark types of the tables.

Input contract: a Parquet file or directory (or JSON Lines) with an id column (integer or string,
unique, not null) and a text column (string); their names are set in ``[input]`` and renamed to
:data:`DOC_ID` and :data:`TEXT` when read. Other columns are ignored.
"""

from __future__ import annotations

# Internal names: the input's id and text columns are renamed to these when read.
DOC_ID = "doc_id"
TEXT = "text"

# The documents table: one row per input document, its sketch or why it was skipped.
N_WORDS = "n_words"
N_SHINGLES = "n_shingles"
SKETCH = "sketch"
TEXT_HASH = "text_hash"
SKIP_REASON = "skip_reason"

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
