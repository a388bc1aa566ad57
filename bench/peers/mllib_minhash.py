"""Spark MLlib MinHashLSH + approxSimilarityJoin on the library's shingles: the Spark peer.

    spark-submit --properties-file conf/spark-local.conf bench/peers/mllib_minhash.py \\
        --input CORPUS --output PAIRS [--tables 5] [--distance 0.5]

The configuration, chosen to be fair to it:

- the same words and shingles as the pipeline: one Arrow function (mapInArrow) computes every
  document's distinct 4-word shingle hashes with the library (bench/peers/shingle_lists.py);
- vectorized the usual way: ``HashingTF(binary=True, numFeatures=2**20)`` over the shingle hashes
  (as strings), giving the sparse 0/1 vectors MinHashLSH wants; documents with no words are left
  out (MinHashLSH refuses empty vectors);
- ``MinHashLSH(numHashTables=5)`` (as in MEASURED.md), then ``approxSimilarityJoin`` of the corpus
  with itself at Jaccard distance 0.5, which keeps pairs whose exact Jaccard of the hashed vectors
  is above 0.5: every candidate is verified;
- the feature vectors persisted (memory and disk), since the join reads them twice; the same
  shuffle settings as the pipeline (passed by bench/run.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.ml.feature import HashingTF, MinHashLSH
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

SHINGLES = "shingles"


def shingle_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """(doc_id, text) batches -> (doc_id, shingles): each document's distinct shingle hashes."""
    from bench.peers.shingle_lists import shingle_hash_lists

    for batch in batches:
        lists = shingle_hash_lists(batch.column("text"))
        yield pa.RecordBatch.from_arrays(
            [batch.column("doc_id"), lists], names=["doc_id", SHINGLES]
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mllib_minhash")
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--tables", type=int, default=5)
    parser.add_argument("--distance", type=float, default=0.5)
    parser.add_argument("--features", type=int, default=1 << 20)
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName("bench MLlib MinHashLSH").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    started = time.monotonic()
    try:
        docs = spark.read.parquet(args.input).select("doc_id", "text")
        shingled = docs.mapInArrow(shingle_batches, "doc_id long, shingles array<bigint>")
        tokens = shingled.where(F.size(SHINGLES) > 0).select(
            "doc_id", F.col(SHINGLES).cast("array<string>").alias("tokens")
        )
        tf = HashingTF(
            inputCol="tokens", outputCol="features", numFeatures=args.features, binary=True
        )
        features = (
            tf.transform(tokens).select("doc_id", "features").persist(StorageLevel.MEMORY_AND_DISK)
        )
        model = MinHashLSH(
            inputCol="features", outputCol="hashes", numHashTables=args.tables, seed=42
        ).fit(features)
        joined = model.approxSimilarityJoin(features, features, args.distance, distCol="distance")
        pairs = joined.select(
            F.col("datasetA.doc_id").alias("doc_a"),
            F.col("datasetB.doc_id").alias("doc_b"),
            "distance",
        ).where(F.col("doc_a") < F.col("doc_b"))
        pairs.write.mode("overwrite").parquet(args.output)
        print(json.dumps({"seconds": round(time.monotonic() - started, 2)}))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
