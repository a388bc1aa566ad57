"""Reading the corpus: Parquet or JSON Lines, checked against the input contract
(:mod:`shingling.schema`), and the input errors inside a failed Spark action recognised.
"""

from __future__ import annotations

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    IntegralType,
    LongType,
    StringType,
    StructField,
    StructType,
    VariantType,
)

from shingling.errors import BadInputError
from shingling.schema import DOC_ID, TEXT
from shingling.spark.paths import (
    GLOB_CHARS,
    check_parquet_files,
    is_local,
    missing_column,
    parquet_files,
)
from shingling.spark.schemas import ID_TYPES
from shingling.spark.storage import path_exists

BAD_ID = "SHINGLING_INVALID_UTF8_ID"  # the marker of the error a string id that is not UTF-8 raises
BAD_TEXT = "SHINGLING_TEXT_NOT_A_STRING"  # the marker of the error a JSON text not a string raises


def quoted(name: str) -> str:
    """A column name quoted for Spark, so that a dot in it is part of the name, not a struct field.

    >>> quoted("my.id"), quoted("a`b")
    ('`my.id`', '`a``b`')
    """
    return "`" + name.replace("`", "``") + "`"


def column(name: str) -> Column:
    """A top-level column by its exact name (a dot in it is part of the name, not a struct field)."""
    return F.col(quoted(name))


def _first_line(error: BaseException) -> str:
    """The line of a Spark error that says what went wrong (not py4j's "An error occurred")."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    for line in lines:
        if "[FAILED_READ_FILE" in line or "is not a Parquet file" in line:
            return line.split("] ", 1)[-1]
    meaningful = [line for line in lines if not line.startswith(("An error occurred", "at "))]
    return (meaningful or lines or [type(error).__name__])[0]


def _widened(schema: StructType, id_column: str) -> StructType | None:
    """The schema with an integer id read as bigint, if it is a narrower integer."""
    field = schema[id_column]
    if isinstance(field.dataType, IntegralType) and not isinstance(field.dataType, LongType):
        return StructType(
            [StructField(f.name, LongType(), True) if f.name == id_column else f for f in schema]
        )
    return None


def _mixed_integer_ids(path: str, id_column: str) -> bool:
    """Whether a local input's files hold the id as integers of different widths."""
    if not is_local(path) or any(c in GLOB_CHARS for c in path):
        return False
    import pyarrow as pa
    import pyarrow.parquet as pq

    widths = set()
    for name in parquet_files(path):
        try:
            schema = pq.read_schema(name)
        except Exception:  # noqa: BLE001 - Spark reports it, naming the file
            return False
        if id_column in schema.names and pa.types.is_integer(schema.field(id_column).type):
            widths.add(schema.field(id_column).type.bit_width)
    return len(widths) > 1


def read_input(spark: SparkSession, path: str, input_format: str = "parquet") -> DataFrame:
    """The input's table, every column: Parquet, or JSON Lines (``input.format = "jsonl"``)."""
    if input_format == "jsonl":
        try:
            # FAILFAST: a malformed line is an error naming it, never a row silently nulled
            return spark.read.option("mode", "FAILFAST").json(path)
        except Exception as e:
            raise BadInputError(f"cannot read {path} as JSON Lines: {_first_line(e)}") from e
    return spark.read.parquet(path)


def read_corpus(
    spark: SparkSession,
    path: str,
    *,
    id_column: str,
    text_column: str,
    input_format: str = "parquet",
) -> DataFrame:
    """The corpus as (doc_id, text), checked against the input contract.

    Raises:
        BadInputError: the path is missing or not Parquet (not JSON Lines), a column is missing or
            of the wrong type.
    """
    if not path_exists(spark, path):
        raise BadInputError(f"input path does not exist: {path}")
    if input_format == "jsonl":
        corpus = _json_texts_checked(
            spark, read_input(spark, path, input_format), path, text_column
        )
        return _checked(corpus, path, id_column, text_column)
    check_parquet_files(path)  # a local input: a file that is not Parquet is named
    try:
        corpus = spark.read.parquet(path)
        wide = _widened(corpus.schema, id_column) if id_column in corpus.columns else None
        if wide is not None and _mixed_integer_ids(path, id_column):
            # Spark takes one file's schema: a file with wider integer ids would fail to read
            corpus = spark.read.schema(wide).parquet(path)
    except AnalysisException as e:
        raise BadInputError(f"cannot read {path} as Parquet: {e.getMessage()}") from e
    except Exception as e:  # a file that is not Parquet fails inside the footer reader
        raise BadInputError(f"cannot read {path} as Parquet: {_first_line(e)}") from e
    return _checked(corpus, path, id_column, text_column)


def _json_texts_checked(
    spark: SparkSession, corpus: DataFrame, path: str, text_column: str
) -> DataFrame:
    """JSON Lines read so that a text which is not a JSON string fails, as Parquet input does.

    Spark's JSON reader infers one type per column and widens a mix of strings and numbers,
    booleans or objects to string, writing the others as their JSON: ``42`` would be sketched as
    the text "42". The lines are read again with the text as a variant (same files, same schema
    otherwise, no second inference), and the first action that meets a text whose JSON type is
    not a string (or null) fails with :data:`BAD_TEXT`, which :func:`unreadable_input` turns into
    exit 3 naming the type.
    """
    if text_column not in corpus.columns or not isinstance(
        corpus.schema[text_column].dataType, StringType
    ):
        return corpus  # missing or of another type throughout: _checked refuses it by name
    schema = StructType(
        [
            StructField(f.name, VariantType(), True) if f.name == text_column else f
            for f in corpus.schema
        ]
    )
    try:
        raw = spark.read.option("mode", "FAILFAST").schema(schema).json(path)
    except Exception as e:
        raise BadInputError(f"cannot read {path} as JSON Lines: {_first_line(e)}") from e
    text = column(text_column)
    kind = F.schema_of_variant(text)
    checked = F.when(
        text.isNull() | kind.isin("STRING", "VOID"), F.variant_get(text, "$", "string")
    ).otherwise(
        F.raise_error(
            F.concat(
                F.lit(f"{BAD_TEXT} the text column {text_column!r} of {path} holds a JSON "),
                kind,
                F.lit(" where a string is expected"),
            )
        )
    )
    return raw.withColumn(text_column, checked)


def _checked(corpus: DataFrame, path: str, id_column: str, text_column: str) -> DataFrame:
    """(doc_id, text) of an input table, its columns checked against the input contract."""
    present = corpus.schema.fieldNames()
    for role, name in (("id", id_column), ("text", text_column)):
        if name not in present:
            raise missing_column(role, name, path, present)
    id_type = corpus.schema[id_column].dataType
    if not isinstance(id_type, ID_TYPES):
        raise BadInputError(
            f"the id column {id_column!r} is {id_type.simpleString()}; it must be an integer or a string"
        )
    text_type = corpus.schema[text_column].dataType
    if not isinstance(text_type, StringType):
        raise BadInputError(
            f"the text column {text_column!r} is {text_type.simpleString()}; it must be a string"
        )
    ids = column(id_column)
    if isinstance(id_type, StringType):
        # an id that is not UTF-8 would break every reader of the output: the first action that
        # meets one fails with this marker, which unreadable_input turns into exit 3
        ids = F.when(
            ~F.is_valid_utf8(ids),
            F.raise_error(
                F.concat(F.lit(f"{BAD_ID} column {id_column!r} of {path}: bytes "), F.hex(ids))
            ),
        ).otherwise(ids)
    return corpus.select(ids.alias(DOC_ID), column(text_column).alias(TEXT))


def unreadable_input(error: BaseException) -> BadInputError | None:
    """The input error inside a failed Spark action, if a file of the corpus could not be read.

    Such a failure (one file of a directory whose text column has another type, a truncated file)
    surfaces only when the data is read, deep in a Java stack trace; its first line names the file.
    """
    for line in str(error).splitlines():
        if BAD_ID in line:
            detail = line.split(BAD_ID, 1)[1].split(" SQLSTATE")[0].strip()
            return BadInputError(
                f"a string id is not valid UTF-8 ({detail}); ids must be valid text or integers"
            )
        if BAD_TEXT in line:
            detail = line.split(BAD_TEXT, 1)[1].split(" SQLSTATE")[0].strip()
            return BadInputError(f"{detail}: texts must be strings (or null), as in Parquet")
        if "MALFORMED_RECORD" in line or "Malformed records are detected" in line:
            return BadInputError(f"a line of the input is not valid JSON: {line.strip()}")
        if "[FAILED_READ_FILE" in line:
            return BadInputError(f"cannot read the corpus: {line.split('] ', 1)[-1].strip()}")
    return None
