"""The DataFrame API as a notebook calls it: ``shingling.spark.near_duplicates`` on the corpus, its
pairs written to Parquet. Prints how long the call took to return (a plan: no Spark job) and how
long the write took (the work).

spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip \
    bench/peers/api_plan.py --input CORPUS --output PAIRS
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from pyspark.sql import SparkSession

from shingling.spark import Cache, near_duplicates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="api_plan")
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName("bench shingling.spark.near_duplicates").getOrCreate()
    cache = Cache()
    try:
        start = time.perf_counter()
        pairs = near_duplicates(spark.read.parquet(args.input), cache=cache)
        returned = time.perf_counter() - start
        pairs.write.mode("overwrite").parquet(args.output)
        written = time.perf_counter() - start - returned
        count = spark.read.parquet(args.output).count()
        print(
            json.dumps(
                {"returned_s": round(returned, 3), "write_s": round(written, 1), "pairs": count}
            )
        )
    finally:
        cache.release()
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
