"""``shingling top``: the most similar pairs of a run, side by side."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

import pyarrow.compute as pc

from shingling.cli.common import (
    EXIT_OK,
    InputError,
    corpus_texts,
    input_columns,
    positive,
    read_parquet,
    run_settings,
    shown,
)
from shingling.report.load import distinct_pairs, sorted_pairs
from shingling.schema import (
    DOC_A,
    DOC_B,
    DOC_ID,
    EXACT,
    JACCARD,
    JACCARD_ESTIMATE,
    RUN_DOCUMENTS,
    RUN_PAIRS,
    TEXT_HASH,
)


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


def add_parser(sub: Any) -> None:
    """``shingling top``: its arguments, handled by :func:`top`."""
    p = sub.add_parser("top", help="the most similar pairs of a run, side by side")
    p.add_argument("output", help="a run's output directory (holding pairs/)")
    p.add_argument("--corpus", help="the corpus the run read, to show the texts")
    p.add_argument("-n", type=positive, default=5, help="how many pairs (default 5)")
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
