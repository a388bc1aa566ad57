"""rensa (MinHash in Rust) with its LSH index, each candidate scored by its MinHash estimate.

    python -m bench.peers.rensa_lsh --input CORPUS --output PAIRS.parquet [--bands 32]

The same shingles as the pipeline (bench/peers/shingle_lists.py): each document's distinct 4-word
shingle hashes are its tokens, given to rensa as 8 bytes each (rensa hashes tokens itself; it
takes str or bytes). ``RMinHash`` with 128 permutations, built in bulk
(``RMinHash.from_token_sets``); ``RMinHashLSH(threshold=0.5, num_perm=128, num_bands=32)``: 32
bands of 4 rows (128 has no divisor nearer datasketch's 25 x 5; a pair of Jaccard s becomes a
candidate with probability 1 - (1 - s^4)^32: 0.87 at 0.5, 1.0 at 0.8). Every document is inserted,
then queried (``query_all``); each candidate pair's score is ``RMinHash.jaccard``, the share of
equal minimums, so the pairs can be cut at any level.

``--copies-once`` (what ``make bench`` runs): documents with the same shingle set (the same xxh3-128
digest of their sorted shingle hashes) are set aside before rensa sees them, each written as a pair
with the first of them at score 1.0; rensa indexes and queries one document of each set. Its
``query_all`` returns each document's candidates as a Python list, so a page copied into 50,000
documents costs 50,000² list entries without it (the kernel killed the runner at 23 GiB on 1M
documents of the bench's default recipe); a rensa user removes exact copies first. Read as pairs of
distinct texts, as ``make bench`` scores them, the pairs are those of the run without it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import xxhash
from rensa import RMinHash, RMinHashLSH

from bench.peers.shingle_lists import shingle_hash_lists


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rensa_lsh")
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--num-perm", type=int, default=128)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--bands", type=int, default=32)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--copies-once",
        action="store_true",
        help="set documents with the same shingle set aside, each paired with the first (score 1)",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    ids: list[int] = []
    minhashes: list[RMinHash] = []
    first_of: dict[bytes, int] = {}  # shingle-set digest -> the first document with that set
    copy_a: list[int] = []
    copy_b: list[int] = []
    for batch in ds.dataset(args.input, format="parquet").to_batches(
        columns=["doc_id", "text"], batch_size=5_000
    ):
        lists = shingle_hash_lists(batch.column("text"))
        offsets = lists.offsets.to_numpy()
        raw = lists.values.to_numpy().astype("<i8").tobytes()
        token_sets, batch_ids = [], []
        for i, doc_id in enumerate(batch.column("doc_id").to_pylist()):
            lo, hi = int(offsets[i]), int(offsets[i + 1])
            if lo == hi:
                continue  # no words, no MinHash
            if args.copies_once:
                first = first_of.setdefault(xxhash.xxh3_128_digest(raw[8 * lo : 8 * hi]), doc_id)
                if first != doc_id:
                    copy_a.append(first)
                    copy_b.append(doc_id)
                    continue
            token_sets.append([raw[8 * j : 8 * j + 8] for j in range(lo, hi)])
            batch_ids.append(doc_id)
        minhashes += RMinHash.from_token_sets(token_sets, args.num_perm, args.seed)
        ids += batch_ids
    sketched = time.monotonic()
    lsh = RMinHashLSH(args.threshold, args.num_perm, args.bands)
    lsh.insert_many(minhashes)  # keys 0..len-1: rows of ids
    found = lsh.query_all(minhashes)
    a, b, score = [], [], []
    for row, keys in enumerate(found):
        for other in keys:
            if other > row:
                a.append(ids[row])
                b.append(ids[other])
                score.append(minhashes[row].jaccard(minhashes[other]))
    lsh_pairs = len(a)
    a += copy_a
    b += copy_b
    score += [1.0] * len(copy_a)
    ra, rb = np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)
    lo, hi = np.minimum(ra, rb), np.maximum(ra, rb)
    pq.write_table(
        pa.table({"doc_a": lo, "doc_b": hi, "jaccard": np.array(score, dtype=np.float64)}),
        args.output,
    )
    print(
        json.dumps(
            {
                "documents": len(ids) + len(copy_b),
                "indexed": len(ids),
                "pairs": len(a),
                "lsh_pairs": lsh_pairs,
                "copies_set_aside": len(copy_b),
                "sketch_seconds": round(sketched - started, 2),
                "lsh_seconds": round(time.monotonic() - sketched, 2),
                "bands_rows": [lsh.get_num_bands(), args.num_perm // lsh.get_num_bands()],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
