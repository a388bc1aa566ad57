"""The ``shingling`` command: look at what a run found, without Spark.

    shingling top OUT --corpus CORPUS [-n 5]    the most similar pairs of a run, side by side
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path


import pyarrow.compute as pc
import pyarrow.dataset as ds


def _texts(corpus: str, ids: list, id_column: str, text_column: str) -> dict:
    table = ds.dataset(corpus, format="parquet").to_table(
        columns=[id_column, text_column], filter=pc.field(id_column).isin(ids)
    )
    return dict(zip(table[id_column].to_pylist(), table[text_column].to_pylist(), strict=True))


def _side_by_side(left: str, right: str, width: int = 58, lines: int = 6) -> str:
    def cut(text: str) -> list[str]:
        wrapped = textwrap.wrap(" ".join(text.split()), width) or [""]
        return wrapped[:lines] + [""] * (lines - len(wrapped[:lines]))

    return "\n".join(f"  {a:<{width}} | {b}" for a, b in zip(cut(left), cut(right), strict=True))


def top(args: argparse.Namespace) -> int:
    pairs_path = Path(args.output) / "pairs"
    if not pairs_path.exists():
        print(f"error: no pair table at {pairs_path}", file=sys.stderr)
        return 3
    pairs = ds.dataset(pairs_path, format="parquet").to_table()
    print(f"{pairs.num_rows} pairs in {pairs_path}")
    if pairs.num_rows == 0:
        return 0
    distinct = pairs.filter(pc.invert(pairs["exact_duplicate"])) if args.skip_exact else pairs
    order = pc.sort_indices(
        distinct, sort_keys=[("jaccard", "descending"), ("doc_a", "ascending"), ("doc_b", "ascending")]
    )
    best = distinct.take(order[: args.n]).to_pylist()
    ids = [p["doc_a"] for p in best] + [p["doc_b"] for p in best]
    texts = _texts(args.corpus, ids, args.id_column, args.text_column) if args.corpus else {}
    for p in best:
        print(
            f"\n{p['doc_a']!s} ~ {p['doc_b']!s}: jaccard {p['jaccard']:.2f}, "
            f"{p['matches']} shared sketch hashes, {p['shingles_a']} and {p['shingles_b']} shingles"
        )
        if texts:
            print(_side_by_side(texts.get(p["doc_a"], ""), texts.get(p["doc_b"], "")))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shingling", description="Near-duplicate documents, without Spark.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("top", help="the most similar pairs of a run, side by side")
    p.add_argument("output", help="a run's output directory (holding pairs/)")
    p.add_argument("--corpus", help="the corpus the run read, to show the texts")
    p.add_argument("-n", type=int, default=5, help="how many pairs (default 5)")
    p.add_argument("--id-column", default="doc_id")
    p.add_argument("--text-column", default="text")
    p.add_argument(
        "--skip-exact", action=argparse.BooleanOptionalAction, default=True,
        help="leave out exact duplicates (default: yes)",
    )
    p.set_defaults(handler=top)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())



