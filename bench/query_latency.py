"""How fast ``shingling query`` answers on a large index (no Spark involved).

    python -m bench.query_latency --docs 1000000 [--mode distinct|copies] [--queries 20]

Builds a synthetic index in the layout of shingling/index.py from the real sketches of a run's
documents table (``make run`` writes out/sample/documents): each sample sketch is replicated under
new ids until there are ``--docs`` documents. Two modes:

- ``distinct`` (default): every copy after the first has its hashes mixed with a per-copy salt, so
  the index holds ``--docs`` different sketches with the posting-list sizes of a real corpus plus
  one unrelated document per copy; the query's near-duplicates are the sample's own.
- ``copies``: every copy keeps its hashes, so each query hash has about docs/669 postings and every
  query has thousands of exact matches: the worst case for the postings read.

Postings are written sorted by hash in small row groups, documents sorted by id. Then the queries
(real sample documents with their last paragraph dropped) are timed in process (open the index,
sketch, search) and as a whole ``shingling query`` process.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from shingling.index import Manifest, SegmentInfo, open_index
from shingling.query import query_index
from shingling.sketch import sketch

SEGMENT = "000001-bench"


def replicate(
    documents: pa.Table, n_docs: int, mode: str
) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """The documents table grown to n_docs rows, and its postings as (hash, row) arrays."""
    documents = documents.filter(pc.is_valid(documents["sketch"]))
    base = len(documents)
    copies = -(-n_docs // base)
    sketches = documents["sketch"].combine_chunks()
    lengths = np.diff(sketches.offsets.to_numpy())
    values = sketches.values.to_numpy()
    rows = np.arange(copies * base)[:n_docs]
    copy_of_row = rows // base
    length = lengths[rows % base]
    starts = np.concatenate([[0], np.cumsum(lengths)])[rows % base]
    # every posting: its row and the sample hash it copies
    posting_row = np.repeat(rows, length)
    within = np.arange(len(posting_row)) - np.repeat(np.cumsum(length) - length, length)
    hashes = values[np.repeat(starts, length) + within]
    if mode == "distinct":
        salt = (copy_of_row.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)).view(np.int64)
        salt[copy_of_row == 0] = 0
        hashes = hashes ^ np.repeat(salt, length)
    # keep each sketch ascending, as a bottom-k sketch is
    order = np.lexsort((hashes, posting_row))
    hashes = hashes[order]
    source_ids = documents["doc_id"].cast(pa.string()).take(pa.array(rows % base))
    suffix = pa.array([f"~{c}" if c else "" for c in copy_of_row.tolist()], pa.string())
    ids = pc.binary_join_element_wise(source_ids, suffix, "")
    offsets = np.concatenate([[0], np.cumsum(length)]).astype(np.int32)
    table = pa.table(
        {
            "doc_id": ids,
            "n_words": documents["n_words"].take(pa.array(rows % base)),
            "n_shingles": documents["n_shingles"].take(pa.array(rows % base)),
            "sketch": pa.ListArray.from_arrays(pa.array(offsets), pa.array(hashes)),
            "text_hash": documents["text_hash"].take(pa.array(rows % base)),
            "skip_reason": pa.nulls(len(rows), pa.string()),
            "added": pa.array(["2026-11-30"] * len(rows), pa.string()),
        }
    )
    return table, hashes, posting_row


def write_sorted(table: pa.Table, directory: Path, files: int, row_group: int) -> None:
    """Write a table already sorted by its key as ``files`` range partitions of small row groups."""
    directory.mkdir(parents=True)
    bounds = np.linspace(0, table.num_rows, files + 1).astype(int)
    for i in range(files):
        part = table.slice(bounds[i], bounds[i + 1] - bounds[i])
        pq.write_table(
            part, directory / f"part-{i:05d}.parquet", row_group_size=row_group, compression="zstd"
        )


def build_index(root: Path, documents: pa.Table, n_docs: int, mode: str) -> dict[str, float]:
    started = time.perf_counter()
    table, hashes, posting_row = replicate(documents, n_docs, mode)
    segment = root / "segments" / SEGMENT
    by_id = table.take(pc.sort_indices(table["doc_id"]))
    write_sorted(by_id, segment / "documents", files=4, row_group=8192)
    order = np.argsort(hashes, kind="stable")
    postings = pa.table(
        {"hash": hashes[order], "doc_id": table["doc_id"].take(pa.array(posting_row[order]))}
    )
    write_sorted(postings, segment / "postings", files=8, row_group=16384)
    manifest = Manifest(
        version=1,
        created_at="2026-11-30T00:00:00+00:00",
        id_type="string",
        settings={"width": 4, "k": 20, "threshold": 0.6, "max_exact_group": 100},
        segments=(SegmentInfo(SEGMENT, "2026-11-30", table.num_rows, postings.num_rows, 0),),
        runs={},
        live_documents=table.num_rows,
        live_postings=postings.num_rows,
    )
    (root / "_manifest.json").write_text(manifest.to_json())
    size = sum(f.stat().st_size for f in root.rglob("*.parquet"))
    return {
        "documents": table.num_rows,
        "postings": postings.num_rows,
        "build_seconds": round(time.perf_counter() - started, 1),
        "megabytes": round(size / 2**20),
    }


def queries(corpus: str, n: int) -> list[str]:
    """Real sample documents with their last paragraph dropped: near-duplicates, not copies."""
    texts = ds.dataset(corpus).to_table(columns=["text"])["text"].to_pylist()
    chosen = [t for t in texts if t and t.count("\n\n") >= 2][:: max(1, len(texts) // n)][:n]
    return [t.rsplit("\n\n", 1)[0] for t in chosen]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--mode", choices=("distinct", "copies"), default="distinct")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--run", default="out/sample", help="a run output with documents/")
    parser.add_argument("--corpus", default="data/sample/corpus.parquet")
    parser.add_argument("--work", default="bench/work/query-index")
    parser.add_argument("--reuse", action="store_true", help="keep an index built before")
    args = parser.parse_args(argv)

    root = Path(args.work) / f"{args.mode}-{args.docs}"
    if not (args.reuse and (root / "_manifest.json").exists()):
        if root.exists():
            shutil.rmtree(root)
        documents = ds.dataset(Path(args.run) / "documents").to_table()
        built = build_index(root, documents, args.docs, args.mode)
        print(json.dumps({"index": str(root), "mode": args.mode, **built}))

    texts = queries(args.corpus, args.queries)
    in_process, found, groups = [], [], []
    for text in texts:
        t0 = time.perf_counter()
        reader = open_index(str(root))
        s = sketch(text, width=4, k=20)
        matches = query_index(reader, s, 0.6, 20)
        in_process.append(time.perf_counter() - t0)
        found.append(len(matches))
        groups.append(reader.stats.row_groups_read)
    total_groups = reader.stats.row_groups_total
    whole = []
    for text in texts[:5]:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "shingling.cli", "query", str(root), "-", "-n", "5"],
            input=text.encode(),
            check=True,
            capture_output=True,
        )
        whole.append(time.perf_counter() - t0)
    print(
        json.dumps(
            {
                "queries": len(texts),
                "in_process_seconds": {
                    "median": round(statistics.median(in_process), 3),
                    "max": round(max(in_process), 3),
                },
                "whole_process_seconds": {
                    "median": round(statistics.median(whole), 3),
                    "max": round(max(whole), 3),
                },
                "row_groups_read_median": statistics.median(groups),
                "row_groups_considered": total_groups,
                "matches_found_median": statistics.median(found),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
