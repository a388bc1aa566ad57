"""What the commands share: their errors (exit 2 and 3), printing untrusted text, reading a run's
files and a corpus's texts, and the argument types."""

from __future__ import annotations

import argparse
import json
import math
import sys
import tomllib
import unicodedata
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds

from shingling.exit_codes import ExitCode
from shingling.report.load import read_texts
from shingling.schema import (
    DOC_ID,
    RUN_CONFIG,
    RUN_SUMMARY,
    TEXT,
)
from shingling.sketch import (
    DEFAULT_K,
    DEFAULT_WIDTH,
)

EXIT_OK = ExitCode.OK
EXIT_USAGE = ExitCode.USAGE
EXIT_INPUT = ExitCode.BAD_INPUT


def read_parquet(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A Parquet file or directory (as Spark writes it) as one table.

    Raises:
        InputError: a file that is not Parquet, or columns of another type, naming the path.
    """
    try:
        return ds.dataset(path, format="parquet").to_table(columns=columns)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise InputError(f"cannot read {path} as Parquet: {e}") from e


class InputError(Exception):
    """A missing or unreadable input: the message says which, and the command exits with 3."""


_ESCAPED = frozenset({"Cc", "Cs", "Zl", "Zp"})
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


class UsageError(Exception):
    """Arguments that cannot work with the input (a k other than the index's): exit 2."""


def shown(value: Any) -> str:
    """A value as text safe to print on a terminal: control characters (escape sequences, bells),
    line separators and the bidirectional overrides that make text read backwards are written as
    escapes; everything else (accents, scripts, emoji with their joiners) as it is.

    >>> print(shown("a\x1b[31mb\u202ec"), shown(42), shown("été 文書 👩\u200d🚒"))
    a\\x1b[31mb\\u202ec 42 été 文書 👩\u200d🚒
    """
    text = str(value)
    if text.isprintable():
        return text
    return "".join(
        c.encode("unicode_escape").decode("ascii")
        if unicodedata.category(c) in _ESCAPED or c in _BIDI_CONTROLS
        else c
        for c in text
    )


def read_text(source: str, max_bytes: int | None = None) -> str:
    """The text of a file, or of standard input for ``-`` (UTF-8, undecodable bytes replaced).

    With ``max_bytes``, at most that many bytes are read: a longer document is refused
    (InputError) before it is held in memory.
    """
    try:
        if source == "-":
            data = sys.stdin.buffer.read(-1 if max_bytes is None else max_bytes + 1)
        else:
            with open(source, "rb") as f:
                data = f.read(-1 if max_bytes is None else max_bytes + 1)
    except OSError as e:
        raise InputError(f"cannot read {source}: {e.strerror}") from e
    if max_bytes is not None and len(data) > max_bytes:
        raise InputError(
            f"{source} is larger than {max_bytes // (1 << 20)} MiB (--max-mb): a query sketches"
            " the whole document in memory; query an excerpt, raise --max-mb, or run the nightly"
            " job, which sketches documents of any size"
        )
    return data.decode("utf-8", errors="replace")


def run_settings(path: Path) -> dict[str, Any]:
    """The resolved config a run saved beside its output (config.toml, else summary.json)."""
    try:
        if (path / RUN_CONFIG).is_file():
            return tomllib.loads((path / RUN_CONFIG).read_text(encoding="utf-8"))
        if (path / RUN_SUMMARY).is_file():
            return dict(
                json.loads((path / RUN_SUMMARY).read_text(encoding="utf-8")).get("config", {})
            )
    except (ValueError, AttributeError, TypeError, OSError) as e:  # TOML, JSON, UTF-8 errors
        name = RUN_CONFIG if (path / RUN_CONFIG).is_file() else RUN_SUMMARY
        raise InputError(f"cannot read {path / name}: {e}") from e
    return {}


def input_columns(args: argparse.Namespace, settings: dict[str, Any]) -> tuple[str, str]:
    """The corpus's id and text columns: as given, else the run's ([input] of its config)."""
    given = settings.get("input", {})
    return (
        args.id_column or given.get("id_column", DOC_ID),
        args.text_column or given.get("text_column", TEXT),
    )


def corpus_texts(corpus: str, ids: list[Any], id_column: str, text_column: str) -> dict[Any, str]:
    """The texts of ``ids`` in ``corpus``, or a clear error (exit 3) naming what is missing."""
    if not corpus.startswith(("s3", "hdfs", "gs", "abfs")) and not Path(corpus).exists():
        raise InputError(f"no corpus at {corpus}")
    try:
        return read_texts(corpus, ids, id_column, text_column)
    except KeyError as e:
        raise InputError(
            f"the corpus {corpus} has no column {e.args[0]}: pass --id-column / --text-column"
        ) from e
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"cannot read the corpus {corpus}: {e}") from e


def fraction(value: str) -> float:
    number = float(value)
    if not 0.0 <= number <= 1.0 or math.isnan(number):
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return number


def positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return number


def sketch_options(p: argparse.ArgumentParser, where: str) -> None:
    p.add_argument(
        "--width",
        type=positive,
        help=f"words per shingle (default: {where}, else {DEFAULT_WIDTH})",
    )
    p.add_argument("--k", type=positive, help=f"sketch size (default: {where}, else {DEFAULT_K})")
