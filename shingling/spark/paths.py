"""How the paths a job writes relate to the paths it reads, checked before anything is touched.

A job that writes where it reads can delete its own input: ``--output`` equal to ``--input``, or a
parent of it, with ``--overwrite``. Every job names the paths it reads and the paths it writes, and
:func:`check_paths` refuses (exit 2, naming both) any written path that is equal to, inside, or
contains a read path (or another written path), after resolving ``..`` and symbolic links.

Local paths are resolved with :func:`os.path.realpath`; other paths (``hdfs://``, ``s3a://``) are
compared as URIs, normalized here without a filesystem, and qualified by Hadoop's FileSystem
(``makeQualified``) when a session is there (:func:`shingling.spark.storage.qualified`). Both comparisons are on
whole path components: ``/data/out`` does not contain ``/data/output``.

No Spark here: the checks run before the session starts, so bad paths exit 2 in about a second.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable

from shingling.errors import ConfigError

# characters Spark reads as glob syntax in an input path ('\\' escapes)
GLOB_CHARS = frozenset("*?[]{}\\")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


class PathConflictError(ConfigError):
    """A path the job would write is, holds or lies inside a path it reads (exit 2)."""


def is_local(path: str) -> bool:
    """Whether a path is on the local filesystem (no scheme, or file:).

    >>> is_local("index/"), is_local("file:/tmp/index"), is_local("hdfs://nn/index")
    (True, True, False)
    """
    match = _SCHEME.match(path)
    return match is None or match.group(1).lower() == "file"


def local_part(path: str) -> str:
    """The filesystem path of a local path or ``file:`` URI.

    >>> local_part("file:///tmp/x"), local_part("file:/tmp/x"), local_part("out/")
    ('/tmp/x', '/tmp/x', 'out/')
    """
    if path.startswith("file://"):
        return path[len("file://") :] or "/"
    return path.removeprefix("file:")


def literal_prefix(path: str) -> str:
    """The part of a path before its first glob character, cut back to a whole component.

    A glob input reads what its pattern matches, all of it under this prefix.

    >>> literal_prefix("hdfs:///corpus/2026-*/"), literal_prefix("data/c.parquet")
    ('hdfs:///corpus', 'data/c.parquet')
    """
    cut = next((i for i, c in enumerate(path) if c in GLOB_CHARS), None)
    if cut is None:
        return path
    head = path[:cut]
    return head[: head.rfind("/")] if "/" in head else "."


def resolve_local(path: str) -> str:
    """A local path made absolute, its ``..`` and symbolic links resolved, as a ``file:`` URI."""
    return "file:" + os.path.realpath(local_part(literal_prefix(path)) or ".")


def resolve_uri(path: str) -> str:
    """A path compared without a filesystem: local paths resolved, others normalized as URIs.

    >>> resolve_uri("hdfs://nn:8020/a/b/../c/")
    'hdfs://nn:8020/a/c'
    """
    path = literal_prefix(path)
    if is_local(path):
        return resolve_local(path)
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*://[^/]*)(.*)$", path)
    if match is None:  # scheme:/path, no authority
        scheme, _, rest = path.partition(":")
        head = f"{scheme.lower()}:"
    else:
        head, rest = match.group(1), match.group(2)
        head = head[: head.index(":")].lower() + head[head.index(":") :]
    return head + (posixpath.normpath(rest or "/") if rest else "/")


def relation(written: str, read: str) -> str | None:
    """How a resolved written path relates to a resolved read path, or None when they are apart.

    >>> relation("file:/d/out", "file:/d/out"), relation("file:/d", "file:/d/in")
    ('is', 'contains')
    >>> relation("file:/d/in/out", "file:/d/in"), relation("file:/d/output", "file:/d/out")
    ('is inside', None)
    >>> relation("hdfs://nn/", "hdfs://nn/x"), relation("hdfs://a/x", "hdfs://b/x")
    ('contains', None)
    """
    a, b = written.rstrip("/"), read.rstrip("/")
    if a == b:
        return "is"
    if b.startswith(a + "/") or (written.endswith("/") and b.startswith(written)):
        return "contains"
    if a.startswith(b + "/") or (read.endswith("/") and a.startswith(read)):
        return "is inside"
    return None


def check_paths(
    writes: dict[str, str | None],
    reads: dict[str, str | None],
    resolve: Callable[[str], str] = resolve_uri,
) -> None:
    """Refuse a written path that is, contains or lies inside a read path or another written path.

    ``writes`` and ``reads`` map a role ("--output", "the run's pairs") to a path (None: not
    given). Raises :class:`PathConflictError` naming both.

    >>> check_paths({"--output": "/data/corpus"}, {"--input": "/data/corpus/a.parquet"})
    Traceback (most recent call last):
    ...
    shingling.spark.paths.PathConflictError: --output /data/corpus contains --input /data/corpus/a.parquet: ...
    """
    given_writes = {role: p for role, p in writes.items() if p}
    resolved = {role: resolve(p) for role, p in given_writes.items()}
    against = [(role, p, resolve(p)) for role, p in reads.items() if p]
    roles = list(given_writes)
    for i, role in enumerate(roles):
        others = [(r, given_writes[r], resolved[r]) for r in roles[i + 1 :]]
        for other_role, other, other_resolved in [*against, *others]:
            how = relation(resolved[role], other_resolved)
            if how is not None:
                raise PathConflictError(
                    f"{role} {given_writes[role]} {how} {other_role} {other}: a job never writes"
                    " where it reads (nor two outputs inside each other); choose another path"
                )


def check_output_name(role: str, path: str | None) -> None:
    """Refuse an output path that is empty or holds glob or control characters (exit 2).

    Spark would read such a name back as a pattern (or not at all) after the work is done.

    >>> check_output_name("--output", "out/{a,b}")
    Traceback (most recent call last):
    ...
    shingling.spark.paths.PathConflictError: --output 'out/{a,b}': an output path must not be empty nor hold ...
    """
    if path is None:
        return
    bad = (
        not path.strip()
        or any(c in GLOB_CHARS for c in path)
        or any(ord(c) < 32 or ord(c) == 127 for c in path)
        or local_part(path).rstrip("/") in ("", ".", "..")
    )
    if bad:
        raise PathConflictError(
            f"{role} {path!r}: an output path must not be empty nor hold the characters"
            f" {''.join(sorted(GLOB_CHARS))} or control characters (Spark reads them as a pattern)"
        )


def parquet_files(path: str) -> Iterable[str]:
    """The data files of a local Parquet input: the file itself, or a directory's files, skipping
    names that start with ``_`` or ``.`` (Spark's markers and checksums) and empty files (Spark
    skips them too)."""
    root = local_part(path)
    if os.path.isfile(root):
        yield root
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        for name in sorted(files):
            full = os.path.join(folder, name)
            if not name.startswith(("_", ".")) and os.path.getsize(full) > 0:
                yield full


def check_parquet_files(path: str) -> None:
    """Refuse a local input holding a file that is not Parquet, naming it (exit 3)."""
    from shingling.errors import BadInputError

    if not is_local(path) or any(c in GLOB_CHARS for c in path):
        return
    for name in parquet_files(path):
        try:
            with open(name, "rb") as f:
                head = f.read(4)
                f.seek(max(0, os.path.getsize(name) - 4))
                tail = f.read(4)
        except OSError as e:
            raise BadInputError(f"cannot read {name}: {e.strerror}") from e
        if head != b"PAR1" or tail != b"PAR1" or os.path.getsize(name) < 12:
            hint = (
                "; for JSON Lines, pass --set input.format=jsonl"
                if head[:1] in (b"{", b"[") or name.endswith((".jsonl", ".json", ".ndjson"))
                else ""
            )
            if os.path.isfile(local_part(path)):
                raise BadInputError(f"the input {path} is not a Parquet file{hint}")
            raise BadInputError(
                f"{name} in the input {path} is not a Parquet file; move it out of the input"
                f" (files whose names start with _ or . are skipped){hint}"
            )


def missing_column(role: str, name: str, path: str, present: list[str]) -> Exception:
    """The error for an input without its id or text column (exit 3), naming the columns it has."""
    from shingling.errors import BadInputError

    return BadInputError(
        f"the {role} column {name!r} is not in {path}; columns present: {', '.join(present)}"
        f" (set input.{role}_column)"
    )


def check_parquet_columns(path: str, columns: dict[str, str]) -> None:
    """Refuse a local Parquet input whose first file lacks a column (``columns``: role -> name),
    from its footer, before Spark starts (exit 3). Spark reads the schema of one file too."""
    import pyarrow.parquet as pq

    if not is_local(path) or any(c in GLOB_CHARS for c in path):
        return
    first = next(iter(parquet_files(path)), None)
    if first is None:
        return
    present = pq.read_schema(first).names
    for role, name in columns.items():
        if name not in present:
            raise missing_column(role, name, path, present)
