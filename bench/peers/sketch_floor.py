"""The nightly floor: start Spark, read a batch, sketch it, write the sketches; nothing else.

spark-submit --properties-file conf/spark-local.conf bench/peers/sketch_floor.py \\
    --input BATCH --output DIR

The least any nightly run does (it must read and sketch its batch, and write something), with the
same start-up, Python workers and sketching code as jobs/nightly.py: what a nightly run costs
before it touches the index. bench/nightly_bench.py times it side by side with the full and the
nightly runs.
"""

from __future__ import annotations

import argparse
import json
import sys

from pyspark.sql import SparkSession

from shingling.spark.read import read_corpus
from shingling.spark.transforms import sketch_documents


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sketch_floor")
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName("bench nightly floor").getOrCreate()
    try:
        batch = read_corpus(spark, args.input, id_column="doc_id", text_column="text")
        batch.transform(sketch_documents, width=4, k=20).write.mode("overwrite").parquet(
            args.output
        )  # not even read back to count: a floor, below what a real run must do
        print(json.dumps({"written": args.output}))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
