"""The Spark types of the tables: the documents table and the pair table, derived from their
Arrow types in :mod:`shingling.schema` (with the column names and the input contract)."""

from __future__ import annotations

from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_type
from pyspark.sql.types import (
    ByteType,
    DataType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

from shingling.schema import documents_table_schema, pairs_table_schema

ID_TYPES: tuple[type[DataType], ...] = (ByteType, ShortType, IntegerType, LongType, StringType)


def documents_schema(id_type: DataType) -> StructType:
    """The documents table for an id column of ``id_type``
    (:func:`shingling.schema.documents_table_schema` in Spark's types)."""
    return from_arrow_schema(documents_table_schema(to_arrow_type(id_type)))


def pairs_schema(id_type: DataType) -> StructType:
    """The pair table for an id column of ``id_type``
    (:func:`shingling.schema.pairs_table_schema` in Spark's types)."""
    return from_arrow_schema(pairs_table_schema(to_arrow_type(id_type)))
