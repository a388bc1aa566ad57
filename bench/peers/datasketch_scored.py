"""datasketch MinHashLSH with each candidate's MinHash Jaccard estimate: the quality bench's peer.

    python -m bench.peers.datasketch_scored --input CORPUS --output PAIRS.parquet

As bench/peers/datasketch_lsh.py (the same shingles, 128 permutations fed the low 32 bits of the
library's shingle hashes, MinHashLSH at threshold 0.5 with the bands and rows it picks), and each
reported pair also carries its score: the MinHash estimate of its Jaccard (the share of the 128
minimums the two documents agree on), so that the pairs can be cut at any level.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench.peers.datasketch_lsh import minhash_index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="datasketch_scored")
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--num-perm", type=int, default=128)
    parser.add_argument("--threshold", type=float, default=0.5)
    args = parser.parse_args(argv)
    started = time.monotonic()
    lsh, sketches = minhash_index(args.input, args.num_perm, args.threshold)
    ids = [doc_id for doc_id, _ in sketches]
    leans = [lean for _, lean in sketches]
    indexed = time.monotonic()
    row_of = {doc_id: row for row, doc_id in enumerate(ids)}
    matrix = (
        np.stack([m.hashvalues for m in leans])
        if leans
        else np.zeros((0, args.num_perm), np.uint64)
    )
    a_parts, b_parts = [], []
    for row, (doc_id, lean) in enumerate(zip(ids, leans, strict=True)):
        found = np.fromiter(lsh.query(lean), dtype=np.int64)
        found = found[found > doc_id]
        a_parts.append(np.full(len(found), row, dtype=np.int64))
        b_parts.append(np.fromiter((row_of[int(f)] for f in found), np.int64, len(found)))
    ra = np.concatenate(a_parts) if a_parts else np.zeros(0, np.int64)
    rb = np.concatenate(b_parts) if b_parts else np.zeros(0, np.int64)
    score = np.empty(len(ra), dtype=np.float64)
    for start in range(0, len(ra), 200_000):  # the estimate: share of equal minimums
        part = slice(start, start + 200_000)
        score[part] = (matrix[ra[part]] == matrix[rb[part]]).mean(axis=1)
    id_array = np.array(ids, dtype=np.int64)
    pq.write_table(
        pa.table({"doc_a": id_array[ra], "doc_b": id_array[rb], "jaccard": score}), args.output
    )
    print(
        json.dumps(
            {
                "documents": len(ids),
                "pairs": len(ra),
                "index_seconds": round(indexed - started, 2),
                "query_seconds": round(time.monotonic() - indexed, 2),
                "bands_rows": [lsh.b, lsh.r],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
