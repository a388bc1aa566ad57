"""Storage: files and directories through Hadoop's FileSystem API (a local disk, HDFS or an object
store; nothing passed through a shell), and outputs written atomically.

:class:`AtomicOutput` writes a job's output aside and moves it into place when complete;
:class:`Files` are the few file operations of a commit; :func:`check_job_paths` checks a job's
paths before Spark starts. Reading the corpus is :mod:`shingling.spark.read`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import uuid
from typing import Any

from pyspark.sql import SparkSession

from shingling.errors import ConfigError, OutputExistsError
from shingling.spark.hooks import hook
from shingling.spark.paths import (
    GLOB_CHARS,
    check_output_name,
    check_parquet_columns,
    check_parquet_files,
    check_paths,
    is_local,
    literal_prefix,
    local_part,
    resolve_local,
)

log = logging.getLogger("shingling")


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

        Test hooks (:func:`shingling.spark.hooks.hook`): ``output_moved_aside`` after the previous output is
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
