"""The only code that touches storage: reading the corpus, writing outputs atomically.

Paths go through Hadoop's FileSystem API, so the same code works on a local disk, HDFS or an object
store; nothing is passed through a shell.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sys
import time
import uuid
from typing import Any

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

from shingling.errors import BadInputError, ConfigError, OutputExistsError
from shingling.spark.paths import (
    GLOB_CHARS,
    check_output_name,
    check_parquet_columns,
    check_parquet_files,
    check_paths,
    is_local,
    literal_prefix,
    local_part,
    missing_column,
    parquet_files,
    resolve_local,
)
from shingling.spark.schemas import DOC_ID, ID_TYPES, TEXT

log = logging.getLogger("shingling")

TEST_HOOK_ENV = "SHINGLING_TEST_HOOK"
BAD_ID = "SHINGLING_INVALID_UTF8_ID"  # the marker of the error a string id that is not UTF-8 raises
BAD_TEXT = "SHINGLING_TEXT_NOT_A_STRING"  # the marker of the error a JSON text not a string raises


def hook(point: str) -> None:
    """Stop or pause here if the test hook names this point (see shingling/spark/index_store.py).

    ``SHINGLING_TEST_HOOK=<point>=exit`` exits at once (``os._exit(97)``, no clean-up);
    ``<point>=sleep:<seconds>`` sleeps there. Never set it in production.
    """
    spec = os.environ.get(TEST_HOOK_ENV, "")
    name, _, action = spec.partition("=")
    if not spec or name != point:
        return
    print(f"test hook: reached {point} ({action})", file=sys.stderr, flush=True)
    if action == "exit":
        os._exit(97)
    if action.startswith("sleep:"):
        time.sleep(float(action.split(":", 1)[1]))


def _fs_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hpath


def path_exists(spark: SparkSession, path: str) -> bool:
    """Whether a path exists; for a glob (``corpus/2026-*/``), whether it matches anything."""
    fs, hpath = _fs_path(spark, path)
    if any(c in GLOB_CHARS for c in path):
        matched = fs.globStatus(hpath)
        return matched is not None and len(matched) > 0
    return bool(fs.exists(hpath))


def qualified(spark: SparkSession | None, path: str) -> str:
    """A path resolved for comparison: local paths by realpath (``..`` and symbolic links), others
    qualified by their Hadoop FileSystem (scheme, authority, ``..``)."""
    if spark is None or is_local(path):
        return resolve_local(path)
    fs, hpath = _fs_path(spark, literal_prefix(path))
    return str(fs.makeQualified(hpath).toUri().toString())


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


def check_replaceable(files: Files, path: str, job: str) -> None:
    """Refuse to replace ``path`` unless it is a previous output of ``job``: a directory whose
    summary.json names it (ConfigError, exit 2). Before Spark starts, with a local ``Files``."""
    summary_text = files.read_text(f"{path}/summary.json") if files.is_dir(path) else None
    found = None
    if summary_text is not None:
        try:
            found = json.loads(summary_text).get("job")
        except (ValueError, AttributeError):
            found = None
    if found != job:
        what = (
            "is not a directory"
            if not files.is_dir(path)
            else "has no summary.json"
            if summary_text is None
            else f"is an output of {found!r}"
            if found
            else "has an unreadable summary.json"
        )
        raise ConfigError(
            f"output {path} exists and {what}: it is not an output of {job}, and"
            " is never deleted, with or without --overwrite; choose another --output"
        )


class Files:
    """The few file operations of a commit: Python's os on a local disk, Hadoop's FileSystem
    elsewhere (so the same code commits on HDFS). A local-only instance needs no session."""

    def __init__(self, spark: SparkSession | None, local: bool) -> None:
        self.spark = spark
        self.local = local

    def _fs(self, path: str) -> tuple[Any, Any]:
        assert self.spark is not None, "a non-local path needs a Spark session"
        return _fs_path(self.spark, path)

    def exists(self, path: str) -> bool:
        if self.local:
            return os.path.lexists(local_part(path))
        fs, p = self._fs(path)
        return bool(fs.exists(p))

    def is_dir(self, path: str) -> bool:
        if self.local:
            return os.path.isdir(local_part(path)) and not os.path.islink(local_part(path))
        fs, p = self._fs(path)
        return bool(fs.exists(p)) and bool(fs.getFileStatus(p).isDirectory())

    def read_text(self, path: str) -> str | None:
        if self.local:
            try:
                with open(local_part(path), encoding="utf-8") as f:
                    return f.read()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return None
        fs, p = self._fs(path)
        if not fs.exists(p) or fs.getFileStatus(p).isDirectory():
            return None
        stream = fs.open(p)
        try:
            jvm = self.spark.sparkContext._jvm  # type: ignore[union-attr]
            assert jvm is not None
            return str(jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()

    def write_text(self, path: str, text: str) -> None:
        """Create or replace a small file."""
        if self.local:
            os.makedirs(os.path.dirname(local_part(path)) or ".", exist_ok=True)
            with open(local_part(path), "w", encoding="utf-8") as f:
                f.write(text)
            return
        fs, p = self._fs(path)
        stream = fs.create(p, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def create_exclusive(self, path: str, text: str) -> bool:
        """Create a file that must not exist yet; False if it does."""
        if self.local:
            os.makedirs(os.path.dirname(local_part(path)), exist_ok=True)
            try:
                fd = os.open(local_part(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            return True
        fs, p = self._fs(path)
        try:
            stream = fs.create(p, False)
        except Exception:  # FileAlreadyExistsException through py4j
            return False
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()
        return True

    def replace_file(self, path: str, text: str) -> None:
        """Write a file aside, then rename it over ``path`` in one atomic step."""
        tmp = f"{path}.tmp-{uuid.uuid4().hex[:12]}"
        if self.local:
            with open(local_part(tmp), "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(local_part(tmp), local_part(path))
            return
        if not self.create_exclusive(tmp, text):
            raise OSError(f"could not write {tmp}")
        assert self.spark is not None
        jvm = self.spark.sparkContext._jvm
        assert jvm is not None
        gateway = self.spark.sparkContext._gateway
        assert gateway is not None
        fs, src = self._fs(tmp)
        _, dst = self._fs(path)
        ctx = jvm.org.apache.hadoop.fs.FileContext.getFileContext(fs.getUri(), fs.getConf())
        options = gateway.new_array(jvm.org.apache.hadoop.fs.Options.Rename, 1)
        options[0] = jvm.org.apache.hadoop.fs.Options.Rename.OVERWRITE
        ctx.rename(src, dst, options)

    def rename_dir(self, src: str, dst: str) -> None:
        """Move ``src`` to ``dst``, which must not exist (an existing one is never replaced)."""
        if self.exists(dst):
            raise OSError(f"could not move {src} to {dst}: {dst} exists")
        if self.local:
            os.makedirs(os.path.dirname(local_part(dst).rstrip("/")) or ".", exist_ok=True)
            os.rename(local_part(src), local_part(dst))
            return
        fs, s = self._fs(src)
        _, d = self._fs(dst)
        fs.mkdirs(d.getParent())
        if not fs.rename(s, d):
            raise OSError(f"could not move {src} to {dst}")

    def delete(self, path: str) -> None:
        if self.local:
            p = local_part(path)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            elif os.path.lexists(p):
                os.remove(p)
            return
        fs, p = self._fs(path)
        fs.delete(p, True)

    def list_names(self, path: str) -> list[str]:
        if self.local:
            try:
                return sorted(os.listdir(local_part(path) or "."))
            except (FileNotFoundError, NotADirectoryError):
                return []
        fs, p = self._fs(path)
        if not fs.exists(p):
            return []
        return sorted(str(s.getPath().getName()) for s in fs.listStatus(p))


_RUN_ID = "[0-9a-f]{12}"


class AtomicOutput:
    """An output directory written aside and moved into place only when complete.

    Everything is written under ``<path>.tmp-<run id>``; :meth:`commit` renames it to ``path`` (a
    rename is atomic on local disks and HDFS), so a failed or killed run never leaves a half-written
    output where a finished one is expected. :meth:`abort` removes the staging directory.

    Before anything is touched, the output is checked against ``reads``, the paths the job reads
    (role -> path): equal, inside or containing one is refused (exit 2, see shingling/spark/paths.py). An
    existing output is replaced only with ``overwrite`` and only if it is a previous output of the
    same ``job`` (its summary.json says so): anything else there (a plain file, a directory
    without that summary) is never deleted (exit 2).

    Leftovers of killed runs, cleaned when a run on the same output starts (docs/reliability.md):
    ``<path>.tmp-<id>`` (killed before or during the commit: deleted); ``<path>.old-<id>`` with
    ``path`` in place (killed while deleting the replaced output: deleted); ``<path>.old-<id>``
    without ``path`` (killed between the commit's two renames: the previous output, moved back).
    Two runs writing the same output at once are not supported.
    """

    def __init__(
        self,
        spark: SparkSession | None,
        path: str,
        *,
        overwrite: bool,
        job: str = "near_duplicates",
        reads: dict[str, str | None] | None = None,
    ) -> None:
        check_output_name("--output", path)
        self.spark = spark
        self.path = path.rstrip("/") or path
        self.overwrite = overwrite
        self.job = job
        self.reads = dict(reads or {})
        check_paths({"--output": self.path}, self.reads, lambda p: qualified(spark, p))
        self.files = Files(spark, is_local(self.path))
        self.run_id = uuid.uuid4().hex[:12]
        self.staging = f"{self.path}.tmp-{self.run_id}"
        self.recovered = self.clean_leftovers()
        if self.files.exists(self.path):
            if not overwrite:
                raise OutputExistsError(
                    f"output {self.path} exists; pass --overwrite (or --set output.overwrite=true)"
                    " to replace it"
                )
            self.check_replaceable()

    def _parent_and_name(self) -> tuple[str, str]:
        parent, _, name = self.path.rpartition("/")
        if not _:
            return ".", name
        return parent or "/", name

    def clean_leftovers(self) -> dict[str, int]:
        """Delete what killed runs on this output left, and move back a previous output that a
        run killed between its two commit renames left aside; returns what was done."""
        done = {"restored": 0, "deleted": 0}
        parent, name = self._parent_and_name()
        pattern = re.compile(rf"^{re.escape(name)}\.(tmp|old)-{_RUN_ID}$")
        found = [n for n in self.files.list_names(parent) if pattern.match(n)]
        if not found:
            return done
        base = "" if parent == "." and not self.path.startswith("./") else f"{parent.rstrip('/')}/"
        olds = [n for n in found if ".old-" in n]
        if olds and not self.files.exists(self.path):
            self.files.rename_dir(f"{base}{olds[0]}", self.path)
            log.warning(
                "moved %s back to %s (a run was killed while committing)", olds[0], self.path
            )
            done["restored"] += 1
            found.remove(olds[0])
        for leftover in found:
            full = f"{base}{leftover}"
            try:  # never delete a path the job reads, whatever its name
                check_paths({"leftover": full}, self.reads, lambda p: qualified(self.spark, p))
            except ConfigError:
                continue
            self.files.delete(full)
            done["deleted"] += 1
        if done["deleted"]:
            log.info("deleted %d leftover(s) of killed runs beside %s", done["deleted"], self.path)
        return done

    def check_replaceable(self) -> None:
        """Refuse to replace anything but a previous output of this job (ConfigError, exit 2)."""
        check_replaceable(self.files, self.path, self.job)

    def table(self, name: str) -> str:
        return f"{self.staging}/{name}"

    def write_text(self, name: str, text: str) -> None:
        self.files.write_text(self.table(name), text)

    def write_json(self, name: str, value: Any) -> None:
        self.write_text(name, json.dumps(value, indent=2, sort_keys=False, default=str) + "\n")

    def replace(self, source: str, target: str) -> None:
        """Move the staged table ``source`` over the staged table ``target`` (both under staging)."""
        self.files.delete(self.table(target))
        self.files.rename_dir(self.table(source), self.table(target))

    def commit(self) -> None:
        """Move the staged output into place: two renames when an output is replaced.

        Test hooks (shingling/spark/io.py :func:`hook`): ``output_moved_aside`` after the previous output is
        renamed to ``<path>.old-<id>``, ``output_committed`` after the new one is in place and
        before the previous one is deleted.
        """
        old = None
        if self.files.exists(self.path):
            if not self.overwrite:
                raise OutputExistsError(f"output {self.path} appeared during the run; not replaced")
            self.check_replaceable()
            old = f"{self.path}.old-{self.run_id}"
            self.files.rename_dir(self.path, old)
            hook("output_moved_aside")
        try:
            self.files.rename_dir(self.staging, self.path)
        except BaseException:
            if old is not None:
                self.files.rename_dir(old, self.path)
            raise
        hook("output_committed")
        if old is not None:
            self.files.delete(old)

    def abort(self) -> None:
        if self.files.exists(self.staging):
            self.files.delete(self.staging)


def check_job_paths(
    writes: dict[str, str | None],
    reads: dict[str, str | None],
    *,
    parquet: tuple[str, ...] = (),
    columns: dict[str, str] | None = None,
    replaces: tuple[str, str] | None = None,
) -> None:
    """What a job checks of its paths before Spark starts: output names and relations (exit 2),
    then local Parquet inputs for files that are not Parquet and (``columns``: role -> name) for
    the id and text columns (exit 3); ``replaces`` (output, job), when --overwrite is given: a
    local output that exists must be this job's (exit 2). The same checks run again when the
    input is read and the output opened, there with Hadoop-qualified paths."""
    for role, path in writes.items():
        check_output_name(role, path)
    check_paths(writes, reads)
    if replaces is not None:
        output, job = replaces
        if is_local(output) and os.path.lexists(local_part(output)):
            check_replaceable(Files(None, local=True), local_part(output), job)
    for path in parquet:
        check_parquet_files(path)
        if columns:
            check_parquet_columns(path, columns)
