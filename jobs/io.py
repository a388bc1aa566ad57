"""The only code that touches storage: reading the corpus, writing outputs atomically.

Paths go through Hadoop's FileSystem API, so the same code works on a local disk, HDFS or an object
store; nothing is passed through a shell.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType

from jobs.errors import BadInputError, OutputExistsError
from jobs.schemas import DOC_ID, ID_TYPES, TEXT


def _fs_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hpath


def path_exists(spark: SparkSession, path: str) -> bool:
    fs, hpath = _fs_path(spark, path)
    return bool(fs.exists(hpath))


def read_corpus(spark: SparkSession, path: str, *, id_column: str, text_column: str) -> DataFrame:
    """The corpus as (doc_id, text), checked against the input contract.

    Raises:
        BadInputError: the path is missing or not Parquet, a column is missing or of the wrong type.
    """
    if not path_exists(spark, path):
        raise BadInputError(f"input path does not exist: {path}")
    try:
        corpus = spark.read.parquet(path)
    except AnalysisException as e:
        raise BadInputError(f"cannot read {path} as Parquet: {e.getMessage()}") from e
    except Exception as e:  # a file that is not Parquet fails inside the footer reader
        raise BadInputError(f"cannot read {path} as Parquet: {str(e).splitlines()[0]}") from e
    present = corpus.schema.fieldNames()
    for role, column in (("id", id_column), ("text", text_column)):
        if column not in present:
            raise BadInputError(
                f"the {role} column {column!r} is not in {path}; columns present: {', '.join(present)}"
                f" (set input.{role}_column)"
            )
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
    return corpus.select(corpus[id_column].alias(DOC_ID), corpus[text_column].alias(TEXT))


def unreadable_input(error: BaseException) -> BadInputError | None:
    """The input error inside a failed Spark action, if a file of the corpus could not be read.

    Such a failure (one file of a directory whose text column has another type, a truncated file)
    surfaces only when the data is read, deep in a Java stack trace; its first line names the file.
    """
    for line in str(error).splitlines():
        if "[FAILED_READ_FILE" in line:
            return BadInputError(f"cannot read the corpus: {line.split('] ', 1)[-1].strip()}")
    return None


class AtomicOutput:
    """An output directory written aside and moved into place only when complete.

    Everything is written under ``<path>.tmp-<run id>``; :meth:`commit` renames it to ``path`` (a
    rename is atomic on local disks and HDFS), so a failed or killed run never leaves a half-written
    output where a finished one is expected. :meth:`abort` removes the staging directory.
    """

    def __init__(self, spark: SparkSession, path: str, *, overwrite: bool) -> None:
        self.spark = spark
        self.path = path.rstrip("/")
        self.overwrite = overwrite
        self.run_id = uuid.uuid4().hex[:12]
        self.staging = f"{self.path}.tmp-{self.run_id}"
        if path_exists(spark, self.path) and not overwrite:
            raise OutputExistsError(
                f"output {self.path} exists; pass --overwrite (or --set output.overwrite=true) to replace it"
            )

    def table(self, name: str) -> str:
        return f"{self.staging}/{name}"

    def write_text(self, name: str, text: str) -> None:
        fs, hpath = _fs_path(self.spark, self.table(name))
        stream = fs.create(hpath, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def write_json(self, name: str, value: Any) -> None:
        self.write_text(name, json.dumps(value, indent=2, sort_keys=False, default=str) + "\n")

    def replace(self, source: str, target: str) -> None:
        """Move the staged table ``source`` over the staged table ``target`` (both under staging)."""
        fs, old = _fs_path(self.spark, self.table(target))
        _, new = _fs_path(self.spark, self.table(source))
        if fs.exists(old) and not fs.delete(old, True):
            raise OSError(f"could not remove {self.table(target)}")
        if not fs.rename(new, old):
            raise OSError(f"could not move {self.table(source)} to {self.table(target)}")

    def commit(self) -> None:
        fs, final = _fs_path(self.spark, self.path)
        _, staged = _fs_path(self.spark, self.staging)
        old = None
        if fs.exists(final):
            if not self.overwrite:
                raise OutputExistsError(f"output {self.path} appeared during the run; not replaced")
            _, old = _fs_path(self.spark, f"{self.path}.old-{self.run_id}")
            if not fs.rename(final, old):
                raise OSError(f"could not move the previous output {self.path} aside")
        if not fs.rename(staged, final):
            if old is not None:
                fs.rename(old, final)
            raise OSError(f"could not move {self.staging} to {self.path}")
        if old is not None:
            fs.delete(old, True)

    def abort(self) -> None:
        fs, staged = _fs_path(self.spark, self.staging)
        if fs.exists(staged):
            fs.delete(staged, True)
