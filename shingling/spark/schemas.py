"""The Spark types of the tables: the documents table and the pair table.

Their column names, and the input contract, are defined in :mod:`shingling.schema` and re-exported
here for the jobs.
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

from shingling.schema import (
    A_IN_B as A_IN_B,
)
from shingling.schema import (
    B_IN_A as B_IN_A,
)
from shingling.schema import (
    CONTAINMENT_A as CONTAINMENT_A,
)
from shingling.schema import (
    CONTAINMENT_B as CONTAINMENT_B,
)
from shingling.schema import (
    DOC_A as DOC_A,
)
from shingling.schema import (
    DOC_B as DOC_B,
)
from shingling.schema import (  # the names, defined once; the Spark types are here
    DOC_ID as DOC_ID,
)
from shingling.schema import (
    EARLIER as EARLIER,
)
from shingling.schema import (
    EXACT as EXACT,
)
from shingling.schema import (
    HASH as HASH,
)
from shingling.schema import (
    JACCARD as JACCARD,
)
from shingling.schema import (
    JACCARD_ESTIMATE as JACCARD_ESTIMATE,
)
from shingling.schema import (
    MATCHES as MATCHES,
)
from shingling.schema import (
    N_SHINGLES as N_SHINGLES,
)
from shingling.schema import (
    N_WORDS as N_WORDS,
)
from shingling.schema import (
    NEAR_DUPLICATE as NEAR_DUPLICATE,
)
from shingling.schema import (
    RELATION as RELATION,
)
from shingling.schema import (
    SHINGLES_A as SHINGLES_A,
)
from shingling.schema import (
    SHINGLES_B as SHINGLES_B,
)
from shingling.schema import (
    SKETCH as SKETCH,
)
from shingling.schema import (
    SKIP_DUPLICATE_ID as SKIP_DUPLICATE_ID,
)
from shingling.schema import (
    SKIP_INVALID_UTF8 as SKIP_INVALID_UTF8,
)
from shingling.schema import (
    SKIP_NO_WORDS as SKIP_NO_WORDS,
)
from shingling.schema import (
    SKIP_NULL_ID as SKIP_NULL_ID,
)
from shingling.schema import (
    SKIP_NULL_TEXT as SKIP_NULL_TEXT,
)
from shingling.schema import (
    SKIP_REASON as SKIP_REASON,
)
from shingling.schema import (
    SKIP_REASONS as SKIP_REASONS,
)
from shingling.schema import (
    TEXT as TEXT,
)
from shingling.schema import (
    TEXT_CHECKSUM as TEXT_CHECKSUM,
)
from shingling.schema import (
    TEXT_HASH as TEXT_HASH,
)

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
            StructField(TEXT_CHECKSUM, LongType(), True),
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
