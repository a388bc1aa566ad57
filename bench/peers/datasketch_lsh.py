"""datasketch MinHashLSH in one Python process: the single-machine reference.

    python -m bench.peers.datasketch_lsh --input CORPUS --output PAIRS.parquet

The same shingles as the pipeline (bench/peers/shingle_lists.py); each document's MinHash has 128
permutations, fed the low 32 bits of the library's shingle hashes (so datasketch spends no time on
SHA-1, only on its permutations); MinHashLSH at threshold 0.5 picks its own bands and rows.
Every document is inserted, then queried; the candidates are the reported pairs, unverified, as
datasketch is commonly used.
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
from datasketch import LeanMinHash, MinHash, MinHashLSH

from bench.peers.shingle_lists import shingle_hash_lists


def _identity(value: int) -> int:
    return value


def minhash_index(
    corpus: str, num_perm: int, threshold: float
) -> tuple[MinHashLSH, list[tuple[int, LeanMinHash]]]:
    """Every document with words as a MinHash of its shingle hashes' low 32 bits, inserted into a
    MinHashLSH at ``threshold``; the index and the (doc_id, MinHash) list, in corpus order."""
    permutations = MinHash(num_perm=num_perm, seed=1).permutations
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    sketches: list[tuple[int, LeanMinHash]] = []
    with lsh.insertion_session() as session:
        for batch in ds.dataset(corpus, format="parquet").to_batches(
            columns=["doc_id", "text"], batch_size=5_000
        ):
            lists = shingle_hash_lists(batch.column("text"))
            offsets = lists.offsets.to_numpy()
            low32 = (lists.values.to_numpy().view(np.uint64) & np.uint64(0xFFFFFFFF)).tolist()
            for i, doc_id in enumerate(batch.column("doc_id").to_pylist()):
                if offsets[i] == offsets[i + 1]:
                    continue  # no words, no MinHash
                m = MinHash(
                    num_perm=num_perm,
                    hashfunc=_identity,
                    permutations=permutations,
                    scheme="affine32",
                )
                m.update_batch(low32[offsets[i] : offsets[i + 1]])
                lean = LeanMinHash(m)
                session.insert(doc_id, lean)
                sketches.append((doc_id, lean))
    return lsh, sketches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="datasketch_lsh")
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--num-perm", type=int, default=128)
    parser.add_argument("--threshold", type=float, default=0.5)
    args = parser.parse_args(argv)
    started = time.monotonic()
    lsh, sketches = minhash_index(args.input, args.num_perm, args.threshold)
    indexed = time.monotonic()
    a_parts, b_parts = [], []
    for doc_id, lean in sketches:
        found = np.fromiter(lsh.query(lean), dtype=np.int64)
        found = found[found > doc_id]
        a_parts.append(np.full(len(found), doc_id, dtype=np.int64))
        b_parts.append(found)
    a = np.concatenate(a_parts) if a_parts else np.zeros(0, np.int64)
    b = np.concatenate(b_parts) if b_parts else np.zeros(0, np.int64)
    pq.write_table(pa.table({"doc_a": a, "doc_b": b}), args.output)
    print(
        json.dumps(
            {
                "documents": len(sketches),
                "pairs": len(a),
                "index_seconds": round(indexed - started, 2),
                "query_seconds": round(time.monotonic() - indexed, 2),
                "bands_rows": [lsh.b, lsh.r],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
