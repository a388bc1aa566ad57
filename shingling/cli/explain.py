"""``shingling explain``: two documents' sketches side by side, with the shingles behind them and
the three scores."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shingling.cli.common import (
    EXIT_OK,
    InputError,
    corpus_texts,
    input_columns,
    read_text,
    run_settings,
    shown,
    sketch_options,
)
from shingling.estimators import jaccard, matches, union_sample
from shingling.exact import Overlap
from shingling.normalize import words as text_words
from shingling.shingles import shingles
from shingling.sketch import (
    DEFAULT_K,
    DEFAULT_WIDTH,
    EmptyDocumentError,
    Sketch,
    shingle_hashes,
    sketch,
)


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


def add_parser(sub: Any) -> None:
    """``shingling explain``: its arguments, handled by :func:`explain`."""
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
    sketch_options(p, "--run's")
    p.set_defaults(handler=explain)
