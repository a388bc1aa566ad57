"""``shingling query``: near-duplicates of one document in an index or a run's output."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from shingling import config
from shingling.cli.common import (
    EXIT_OK,
    InputError,
    UsageError,
    fraction,
    positive,
    read_parquet,
    read_text,
    run_settings,
    shown,
    sketch_options,
)
from shingling.index import (
    MANIFEST,
    IndexFormatError,
    IndexReader,
    open_index,
)
from shingling.query import Match, query_index, query_table, rank
from shingling.schema import (
    DOC_ID,
    N_SHINGLES,
    RUN_DOCUMENTS,
    SKETCH,
)
from shingling.sketch import (
    DEFAULT_K,
    DEFAULT_WIDTH,
    EmptyDocumentError,
    Sketch,
    sketch,
)

#: ``shingling query --max-mb``'s default: the query sketches the whole document in this process
#: with the reference library, a few dozen times its size in memory (a 100 MB document took 4 GB
#: and 4 minutes); the jobs sketch documents of any size in bounded memory.
QUERY_MAX_MB = 16


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


def add_parser(sub: Any) -> None:
    """``shingling query``: its arguments, handled by :func:`query`."""
    p = sub.add_parser(
        "query", help="near-duplicates of one document in an index or a run's output"
    )
    p.add_argument("index", help="a run's output directory (holding documents/)")
    p.add_argument(
        "file", nargs="?", default="-", help="the document: a text file, or - for standard input"
    )
    p.add_argument(
        "--threshold", type=fraction, help="least Jaccard estimate shown (default: the run's)"
    )
    p.add_argument("-n", type=positive, default=20, help="at most this many matches (default 20)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--max-mb",
        type=positive,
        default=QUERY_MAX_MB,
        help=f"refuse a document larger than this many MiB (default {QUERY_MAX_MB}; the query"
        " holds it in memory)",
    )
    sketch_options(p, "the index's")
    p.set_defaults(handler=query)
