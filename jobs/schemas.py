"""Column names and table schemas: the input contract and the output tables, defined once.

Input contract: a Parquet file or directory with an id column (integer or string, unique, not null)
and a text column (string); names set in [input]. Other columns are ignored.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
)

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

# What a pair is: resemblance, or one document (mostly) inside the other.
NEAR_DUPLICATE = "near_duplicate"
A_IN_B = "a_in_b"
B_IN_A = "b_in_a"

ID_TYPES: tuple[type[DataType], ...] = (ByteType, ShortType, IntegerType, LongType, StringType)


def documents_schema(id_type: DataType) -> StructType:
    """Schema of the documents table for an id column of ``id_type``.

    Every field is nullable, as Spark reads any Parquet table back: so the documents table a job
    writes, the same table read back (build_index copies it into an index), and a nightly segment
    all have one schema, nullability included.
    """
    return StructType(
        [
            StructField(DOC_ID, id_type, True),
            StructField(N_WORDS, LongType(), True),
            StructField(N_SHINGLES, LongType(), True),
            StructField(SKETCH, ArrayType(LongType(), True), True),
            StructField(TEXT_HASH, LongType(), True),
            StructField(SKIP_REASON, StringType(), True),
        ]
    )


def pairs_schema(id_type: DataType) -> StructType:
    """Schema of the pair table for an id column of ``id_type``."""
    return StructType(
        [
            StructField(DOC_A, id_type, False),
            StructField(DOC_B, id_type, False),
            StructField(MATCHES, IntegerType(), False),
            StructField(JACCARD, DoubleType(), False),
            StructField(JACCARD_ESTIMATE, DoubleType(), False),
            StructField(CONTAINMENT_A, DoubleType(), False),
            StructField(CONTAINMENT_B, DoubleType(), False),
            StructField(SHINGLES_A, LongType(), False),
            StructField(SHINGLES_B, LongType(), False),
            StructField(EXACT, BooleanType(), False),
            StructField(RELATION, StringType(), False),
        ]
    )
