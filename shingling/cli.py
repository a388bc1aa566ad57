"""The ``shingling`` command: ask about one document, and see what a run found, without Spark.

    shingling query INDEX [FILE|-] [--json]       near-duplicates of one document in an index or run
    shingling explain A B [--corpus CORPUS]       two sketches side by side, and the scores
    shingling top OUT [--corpus CORPUS] [-n 5]    the most similar pairs of a run, side by side
    shingling report OUT                          write OUT/report.html, the run report

Exit codes: 0 done, 2 bad arguments, 3 missing or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import textwrap
import time
import tomllib
import unicodedata
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from shingling import config
from shingling.estimators import jaccard, matches, union_sample
from shingling.exact import Overlap
from shingling.exit_codes import EXIT_CODES_HELP, ExitCode
from shingling.index import (
    MANIFEST,
    IndexFormatError,
    IndexReader,
    open_index,
)
from shingling.normalize import words as text_words
from shingling.query import Match, query_index, query_table, rank
from shingling.report import REPORT_NAME, OtherRunError, write_report
from shingling.report.load import CLUSTERS_PATH, distinct_pairs, read_texts, sorted_pairs
from shingling.schema import (
    DOC_A,
    DOC_B,
    DOC_ID,
    EXACT,
    JACCARD,
    JACCARD_ESTIMATE,
    N_SHINGLES,
    RUN_CONFIG,
    RUN_DOCUMENTS,
    RUN_PAIRS,
    RUN_SUMMARY,
    SKETCH,
    TEXT,
    TEXT_HASH,
)
from shingling.shingles import shingles
from shingling.sketch import (
    DEFAULT_K,
    DEFAULT_WIDTH,
    EmptyDocumentError,
    Sketch,
    shingle_hashes,
    sketch,
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


# ---------------------------------------------------------------------------------------------
# Shared helpers


#: ``shingling query --max-mb``'s default: the query sketches the whole document in this process
#: with the reference library, a few dozen times its size in memory (a 100 MB document took 4 GB
#: and 4 minutes); the jobs sketch documents of any size in bounded memory.
QUERY_MAX_MB = 16


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


# ---------------------------------------------------------------------------------------------
# query


def query_documents_table(path: Path, query: Sketch, threshold: float) -> list[Match]:
    """Near-duplicates of a sketch in a run's documents table (:func:`query_table`)."""
    return query_table(read_parquet(path, [DOC_ID, N_SHINGLES, SKETCH]), query, threshold)


@dataclass(frozen=True)
class Source:
    """Where a query looks (an index or a run's output) and the settings it was made with."""

    kind: str
    reader: IndexReader | None
    documents: Path | None
    settings: dict[str, Any]


def open_source(path: Path) -> Source:
    """An index (``_manifest.json``) or a run's output directory (``documents/``) to query."""
    if (path / MANIFEST).is_file():
        try:
            reader = open_index(str(path))
        except (IndexFormatError, ValueError, KeyError, TypeError, AttributeError, OSError) as e:
            raise InputError(f"cannot open the index at {path}: corrupt {MANIFEST}: {e!r}") from e
        return Source("index", reader, None, dict(reader.manifest.settings))
    if (path / RUN_DOCUMENTS).is_dir():
        saved = run_settings(path)
        settings = {**saved.get("sketch", {}), **saved.get("pairs", {})}
        return Source("run", None, path / RUN_DOCUMENTS, settings)
    raise InputError(
        f"nothing to query at {path}: expected an index (holding {MANIFEST}) "
        "or a run's output directory (holding documents/)"
    )


def query(args: argparse.Namespace) -> int:
    source = open_source(Path(args.index))
    width = int(args.width or source.settings.get("width", DEFAULT_WIDTH))
    k = int(args.k or source.settings.get("k", DEFAULT_K))
    threshold = float(
        args.threshold
        if args.threshold is not None
        else source.settings.get("threshold", config.load().pairs.threshold)
    )
    unit = str(source.settings.get("unit", "words"))
    sample_mod = int(source.settings.get("sample_mod", 0))
    for name, given in (("k", args.k), ("width", args.width)):
        made = source.settings.get(name)
        if given is not None and made is not None and int(given) != int(made):
            raise UsageError(
                f"--{name} {given}: the {source.kind} at {args.index} was made with {name} {made},"
                " and sketches of another size or width share no hashes to compare; leave it out"
            )
    text = read_text(args.file, args.max_mb << 20)
    started = time.perf_counter()
    try:
        wanted = sketch(text, width=width, k=k, unit=unit, sample_mod=sample_mod)
    except EmptyDocumentError as e:
        raise InputError(f"{args.file}: {e}") from e
    if source.reader is not None:
        found = query_index(source.reader, wanted, threshold, args.n)
        stats = source.reader.stats
        read = f"{stats.row_groups_read} of {stats.row_groups_total} row groups read"
    else:
        assert source.documents is not None
        found = query_documents_table(source.documents, wanted, threshold)
        read = "the whole documents table read"
    found = sorted(found, key=rank)[: args.n]
    seconds = time.perf_counter() - started
    if args.json:
        print(
            json.dumps(
                {
                    "index": args.index,
                    "kind": source.kind,
                    "width": width,
                    "k": k,
                    "threshold": threshold,
                    "query": {"n_shingles": wanted.n_shingles, "sketch": list(wanted.hashes)},
                    "matches": [asdict(m) for m in found],
                    "seconds": round(seconds, 4),
                    "read": read,
                },
                default=str,
            )
        )
        return EXIT_OK
    print(
        f"{len(found)} near-duplicate(s) at Jaccard >= {threshold:g} in {args.index} "
        f"(width {width}, k {k}; the query has {wanted.n_shingles} shingles; "
        f"{seconds:.3f} s, {read})"
    )
    if found:
        print(format_matches(found, k, with_containment=bool(sample_mod)))
    return EXIT_OK


def format_matches(found: list[Match], k: int, *, with_containment: bool) -> str:
    """The matches as an aligned table, one line per document.

    >>> print(format_matches([Match("apt", 20, 1.0, None, 1040)], 20, with_containment=False))
      doc_id    matches  jaccard
      apt         20/20     1.00
    """
    id_width = max(8, *(len(shown(m.doc_id)) for m in found))
    header = f"  {'doc_id':<{id_width}}  matches  jaccard"
    lines = [header + ("  containment" if with_containment else "")]
    for m in found:
        line = f"  {shown(m.doc_id):<{id_width}}  {m.matches:>4}/{k:<3} {m.jaccard:7.2f}"
        if with_containment and m.containment is not None:
            line += f"  {m.containment:11.2f}"
        lines.append(line)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# explain


@dataclass(frozen=True)
class Explained:
    """Two documents compared: sketches, the text behind each hash, and the three scores."""

    sketch_a: Sketch
    sketch_b: Sketch
    shingle_text: dict[int, str]
    sample: tuple[int, ...]
    overlap: Overlap  # of the whole shingle sets

    @property
    def shared_full(self) -> int:
        return self.overlap.shared

    @property
    def union_full(self) -> int:
        return self.overlap.size_a + self.overlap.size_b - self.overlap.shared

    @property
    def matches(self) -> int:
        return matches(self.sketch_a, self.sketch_b)

    @property
    def estimate(self) -> float:
        return jaccard(self.sketch_a, self.sketch_b)

    @property
    def exact(self) -> float:
        return self.overlap.jaccard


def shingle_texts(text: str, width: int) -> dict[int, str]:
    """Each distinct shingle hash of a text, with the shingle's words (its first occurrence).

    >>> list(shingle_texts("Once upon a time, in a land", 4).values())[:2]
    ['once upon a time', 'upon a time in']
    """
    found = text_words(text)
    texts: dict[int, str] = {}
    for h, s in zip(shingle_hashes(found, width), shingles(found, width), strict=True):
        texts.setdefault(h, " ".join(s))
    return texts


def explain_texts(text_a: str, text_b: str, *, width: int, k: int) -> Explained:
    """Two texts compared: sketches, the shingles behind them, the estimate and exact Jaccard."""
    behind_a, behind_b = shingle_texts(text_a, width), shingle_texts(text_b, width)
    if not behind_a or not behind_b:
        raise EmptyDocumentError("a document has no words after normalization, so no sketch")
    a, b = sketch(text_a, width=width, k=k), sketch(text_b, width=width, k=k)
    shared = len(behind_a.keys() & behind_b.keys())
    return Explained(
        a,
        b,
        {**behind_b, **behind_a},
        union_sample(a, b),
        Overlap(shared, len(behind_a), len(behind_b)),
    )


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_explained(e: Explained, name_a: str, name_b: str, column: int = 30) -> str:
    """The sketches side by side as the seed's demo prints them, then the scores."""
    shared = set(e.sketch_a.hashes) & set(e.sketch_b.hashes)
    sample = set(e.sample)

    def mark(h: int | None) -> str:
        if h is None or h not in shared:
            return " "
        return "*" if h in sample else "+"

    lines = [
        f"A: {name_a} ({e.sketch_a.n_shingles} shingles)",
        f"B: {name_b} ({e.sketch_b.n_shingles} shingles)",
        "",
        f"{'shingle of A':>{column}} {'hash':>20}   |   {'hash':<20} shingle of B",
    ]
    rows = max(len(e.sketch_a.hashes), len(e.sketch_b.hashes))
    for i in range(rows):
        ha = e.sketch_a.hashes[i] if i < len(e.sketch_a.hashes) else None
        hb = e.sketch_b.hashes[i] if i < len(e.sketch_b.hashes) else None
        left = (
            f"{_fit(e.shingle_text[ha], column):>{column}} {ha:>20}"
            if ha is not None
            else " " * (column + 21)
        )
        right = f"{hb:<20} {_fit(e.shingle_text[hb], column)}" if hb is not None else ""
        lines.append(f"{left} {mark(ha)} | {mark(hb)} {right}".rstrip())
    in_sample = len(shared & sample)
    lines += [
        "",
        "* shared, among the k smallest hashes of the union (counts for the estimate)",
        "+ shared, beyond the union's k smallest (counts for the match count only)",
        "",
        f"matches:          {e.matches} of {e.sketch_a.k} sketch hashes shared (the seed's score)",
        f"Jaccard estimate: {e.estimate:.3f} ({in_sample} of the {len(e.sample)} smallest hashes "
        "of the union are in both sketches)",
        f"exact Jaccard:    {e.exact:.3f} ({e.shared_full} shared of {e.union_full} distinct "
        "shingles in either document)",
    ]
    return "\n".join(lines)


def _explain_inputs(args: argparse.Namespace, settings: dict[str, Any]) -> tuple[str, str]:
    if not args.corpus:
        return read_text(args.a), read_text(args.b)
    id_column, text_column = input_columns(args, settings)
    texts = corpus_texts(args.corpus, [args.a, args.b], id_column, text_column)
    by_str = {str(key): value for key, value in texts.items()}
    missing = [i for i in (args.a, args.b) if i not in by_str]
    if missing:
        raise InputError(f"no document with id {', '.join(map(repr, missing))} in {args.corpus}")
    return by_str[args.a] or "", by_str[args.b] or ""


def explain(args: argparse.Namespace) -> int:
    settings = run_settings(Path(args.run)) if args.run else {}
    width = int(args.width or settings.get("sketch", {}).get("width", DEFAULT_WIDTH))
    k = int(args.k or settings.get("sketch", {}).get("k", DEFAULT_K))
    text_a, text_b = _explain_inputs(args, settings)
    try:
        e = explain_texts(text_a, text_b, width=width, k=k)
    except EmptyDocumentError as err:
        raise InputError(str(err)) from err
    if args.json:
        shared = set(e.sketch_a.hashes) & set(e.sketch_b.hashes)

        def hashes(sketch: Sketch) -> list[dict[str, Any]]:
            return [
                {
                    "hash": h,
                    "shingle": e.shingle_text[h],
                    "shared": h in shared,
                    "in_union_sample": h in e.sample,
                }
                for h in sketch.hashes
            ]

        side, other = hashes(e.sketch_a), hashes(e.sketch_b)
        print(
            json.dumps(
                {
                    "a": {"name": args.a, "n_shingles": e.sketch_a.n_shingles, "sketch": side},
                    "b": {"name": args.b, "n_shingles": e.sketch_b.n_shingles, "sketch": other},
                    "width": width,
                    "k": k,
                    "matches": e.matches,
                    "jaccard_estimate": e.estimate,
                    "jaccard_exact": e.exact,
                    "shared_shingles": e.shared_full,
                    "union_shingles": e.union_full,
                }
            )
        )
        return EXIT_OK
    print(format_explained(e, shown(args.a), shown(args.b)))
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# top


def _side_by_side(left: str, right: str, width: int = 58, lines: int = 6) -> str:
    def cut(text: str) -> list[str]:
        wrapped = textwrap.wrap(shown(" ".join(text.split())), width) or [""]
        return wrapped[:lines] + [""] * (lines - len(wrapped[:lines]))

    return "\n".join(f"  {a:<{width}} | {b}" for a, b in zip(cut(left), cut(right), strict=True))


def text_keys(output: Path) -> tuple[dict[Any, int], dict[int, int]]:
    """Each document's normalized-text hash, and how many documents share each text."""
    documents = output / RUN_DOCUMENTS
    if not documents.is_dir():
        return {}, {}
    table = read_parquet(documents, [DOC_ID, TEXT_HASH])
    table = table.filter(pc.is_valid(table[TEXT_HASH]))
    counts = table.group_by(TEXT_HASH).aggregate([(DOC_ID, "count")])
    return (
        dict(zip(table[DOC_ID].to_pylist(), table[TEXT_HASH].to_pylist(), strict=True)),
        dict(zip(counts[TEXT_HASH].to_pylist(), counts["doc_id_count"].to_pylist(), strict=True)),
    )


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


def top(args: argparse.Namespace) -> int:
    output = Path(args.output)
    pairs_path = output / RUN_PAIRS
    if not pairs_path.exists():
        raise InputError(f"no pair table at {pairs_path}")
    id_column, text_column = input_columns(args, run_settings(output))
    pairs = read_parquet(pairs_path)
    if not args.json:
        print(f"{pairs.num_rows} pairs in {pairs_path}")
    if pairs.num_rows == 0:
        if args.json:
            print(json.dumps({"pairs": pairs.num_rows, "top": []}))
        return EXIT_OK
    chosen = pairs.filter(pc.invert(pairs[EXACT])) if args.skip_exact else pairs
    key, copies = text_keys(output)
    best, passed = distinct_pairs(sorted_pairs(chosen), key, args.n)
    ids = [p[DOC_A] for p in best] + [p[DOC_B] for p in best]
    texts = corpus_texts(args.corpus, ids, id_column, text_column) if args.corpus and ids else {}
    if args.json:
        listed = [
            {
                **p,
                "copies_a": copies.get(key[p[DOC_A]], 1) if p[DOC_A] in key else 1,
                "copies_b": copies.get(key[p[DOC_B]], 1) if p[DOC_B] in key else 1,
                **({"text_a": texts.get(p[DOC_A]), "text_b": texts.get(p[DOC_B])} if texts else {}),
            }
            for p in best
        ]
        print(json.dumps({"pairs": pairs.num_rows, "left_out": passed, "top": listed}, default=str))
        return EXIT_OK

    def named(doc: Any) -> str:
        extra = copies.get(key[doc], 1) - 1 if doc in key else 0
        return (
            f"{shown(doc)} (+{extra} exact cop{'y' if extra == 1 else 'ies'})"
            if extra > 0
            else shown(doc)
        )

    for p in best:
        # a verified run's jaccard is exact, and its sketch's estimate is shown beside it
        estimate = p.get(JACCARD_ESTIMATE)
        scored = (
            f"jaccard {p['jaccard']:.2f} (estimate {estimate:.2f})"
            if estimate is not None and estimate != p[JACCARD]
            else f"jaccard {p['jaccard']:.2f}"
        )
        print(
            f"\n{named(p['doc_a'])} ~ {named(p['doc_b'])}: {scored}, "
            f"{p['matches']} shared sketch hashes, {p['shingles_a']} and {p['shingles_b']} shingles"
        )
        if texts:
            print(_side_by_side(texts.get(p[DOC_A]) or "", texts.get(p[DOC_B]) or ""))
    if passed:
        print(f"\n({passed} pairs repeating texts shown above left out)")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# report


def report_reads(output: Path, corpus: str | None, clusters: str | None) -> dict[str, str | None]:
    """What ``shingling report`` reads, by role: the report is never written over these, inside
    them, or as a directory holding them (the corpus: ``--corpus``, else the summary's input)."""
    if corpus is None:
        try:
            recorded = json.loads((output / RUN_SUMMARY).read_text(encoding="utf-8")).get("input")
            corpus = str(recorded) if recorded else None
        except (OSError, ValueError, AttributeError):
            corpus = None  # load_run says what is wrong with the summary
    return {
        "the run's summary": str(output / RUN_SUMMARY),
        "the run's config": str(output / RUN_CONFIG),
        "the run's documents": str(output / RUN_DOCUMENTS),
        "the run's pairs": str(output / RUN_PAIRS),
        "the clusters table": clusters or str(output / CLUSTERS_PATH),
        "the corpus": corpus,
    }


def check_report_target(output: Path, target: Path, reads: dict[str, str | None]) -> None:
    """The path guards of the jobs (shingling/spark/paths.py), for the report's one written file.

    Raises:
        UsageError: the target is, holds or lies inside something the report reads, has a name
            a job would refuse, or is an existing directory.
    """
    from shingling.errors import ConfigError  # the jobs' guards: one definition of the rule
    from shingling.spark.storage import check_job_paths

    try:
        check_job_paths({"--to": str(target)}, reads)
    except ConfigError as e:
        raise UsageError(f"{e}; nothing was written") from e
    if target.is_dir():
        raise UsageError(f"--to {target} is a directory; name the file to write")


def report(args: argparse.Namespace) -> int:
    output = Path(args.output)
    if not (output / RUN_SUMMARY).is_file():
        raise InputError(f"no run summary at {output / RUN_SUMMARY}")
    target = Path(args.to) if args.to is not None else output / REPORT_NAME
    check_report_target(output, target, report_reads(output, args.corpus, args.clusters))
    try:
        print(write_report(output, corpus=args.corpus, path=args.to, clusters=args.clusters))
    except OtherRunError as e:
        raise UsageError(str(e)) from e
    except (FileNotFoundError, ValueError) as e:  # ValueError: not a run summary, or a file
        raise InputError(str(e)) from e  # that cannot be parsed, named
    except OSError as e:  # writing the page: a full disk, a read-only directory
        print(
            f"error: cannot write the report to {e.filename or args.to}: {e.strerror}",
            file=sys.stderr,
        )
        return int(ExitCode.FAILED)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# Arguments


def _fraction(value: str) -> float:
    number = float(value)
    if not 0.0 <= number <= 1.0 or math.isnan(number):
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return number


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return number


def _sketch_options(p: argparse.ArgumentParser, where: str) -> None:
    p.add_argument(
        "--width",
        type=_positive,
        help=f"words per shingle (default: {where}, else {DEFAULT_WIDTH})",
    )
    p.add_argument("--k", type=_positive, help=f"sketch size (default: {where}, else {DEFAULT_K})")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shingling",
        description="Near-duplicate documents: run a job, or look at a run without Spark.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"shingling {version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser(
        "run",
        help="run a job (near-duplicates, dedup, nightly, build-index, compact-index,"
        " undo-night) with the bundled Spark:"
        " shingling run JOB [job options] [-- spark-submit options]",
        add_help=False,
    )

    p = sub.add_parser(
        "query", help="near-duplicates of one document in an index or a run's output"
    )
    p.add_argument("index", help="a run's output directory (holding documents/)")
    p.add_argument(
        "file", nargs="?", default="-", help="the document: a text file, or - for standard input"
    )
    p.add_argument(
        "--threshold", type=_fraction, help="least Jaccard estimate shown (default: the run's)"
    )
    p.add_argument("-n", type=_positive, default=20, help="at most this many matches (default 20)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--max-mb",
        type=_positive,
        default=QUERY_MAX_MB,
        help=f"refuse a document larger than this many MiB (default {QUERY_MAX_MB}; the query"
        " holds it in memory)",
    )
    _sketch_options(p, "the index's")
    p.set_defaults(handler=query)

    p = sub.add_parser(
        "explain", help="two documents' sketches side by side, with the shingles behind them"
    )
    p.add_argument("a", help="a text file, or an id with --corpus")
    p.add_argument("b", help="a text file, or an id with --corpus")
    p.add_argument("--corpus", help="a Parquet corpus: A and B are then document ids in it")
    p.add_argument("--id-column", help="the corpus's id column (default: --run's, else doc_id)")
    p.add_argument("--text-column", help="the corpus's text column (default: --run's, else text)")
    p.add_argument("--run", help="take width and k from this run's output directory")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    _sketch_options(p, "--run's")
    p.set_defaults(handler=explain)

    p = sub.add_parser("top", help="the most similar pairs of a run, side by side")
    p.add_argument("output", help="a run's output directory (holding pairs/)")
    p.add_argument("--corpus", help="the corpus the run read, to show the texts")
    p.add_argument("-n", type=_positive, default=5, help="how many pairs (default 5)")
    p.add_argument("--id-column", help="the corpus's id column (default: the run's)")
    p.add_argument("--text-column", help="the corpus's text column (default: the run's)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument(
        "--skip-exact",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="leave out exact duplicates (default: yes)",
    )
    p.set_defaults(handler=top)

    p = sub.add_parser("report", help="write the run report, OUT/report.html")
    p.add_argument("output", help="a run's output directory (holding summary.json)")
    p.add_argument("--corpus", help="the corpus, for excerpts (default: the run's input)")
    p.add_argument("--to", help="write here instead of OUT/report.html")
    p.add_argument(
        "--clusters", help="a clusters table, e.g. DEDUP_OUT/clusters (default: OUT/dedup/clusters)"
    )
    p.set_defaults(handler=report)
    return parser


def version() -> str:
    """The installed package's version."""
    try:
        return metadata.version("shingling")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def missing_spark() -> str | None:
    """The first module of the ``spark`` extra this Python lacks (pandas: pyspark's Arrow
    functions need it), or None."""
    from importlib.util import find_spec

    return next((name for name in ("pyspark", "pandas") if find_spec(name) is None), None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["run"]:  # the job's own parser reads the rest (and answers --help)
        missing = missing_spark()
        if missing:
            print(
                f"error: `shingling run` needs Spark, and {missing} is not installed:"
                " pip install 'shingling[spark]'",
                file=sys.stderr,
            )
            return int(ExitCode.FAILED)
        from shingling.spark import launch

        if len(argv) < 2 or argv[1] in ("-h", "--help"):
            print((launch.__doc__ or "").replace("``", ""))
            print("jobs: " + ", ".join(launch.JOBS))
            return EXIT_OK if len(argv) >= 2 else EXIT_USAGE
        return launch.run(argv[1], argv[2:])
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except InputError as e:
        print(f"error: {shown(e)}", file=sys.stderr)
        return EXIT_INPUT
    except UsageError as e:
        print(f"error: {shown(e)}", file=sys.stderr)
        return EXIT_USAGE
    except (
        pa.ArrowException,
        UnicodeDecodeError,
        tomllib.TOMLDecodeError,
        json.JSONDecodeError,
    ) as e:
        # an output or index whose files are not what the job writes (edited, truncated, foreign)
        print(f"error: cannot read the input: {shown(e)}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        # the reader went away (shingling explain A B | head): not a failure of ours; point stdout
        # at /dev/null so that the interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
