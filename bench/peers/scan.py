"""The scan floor: read the corpus and sum the text lengths, the least any Spark pipeline does.

spark-submit --properties-file conf/spark-local.conf bench/peers/scan.py --input CORPUS
"""

from __future__ import annotations

import argparse
import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scan")
    parser.add_argument("--input", required=True)
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName("bench scan floor").getOrCreate()
    try:
        row = (
            spark.read.parquet(args.input)
            .agg(F.count(F.lit(1)).alias("documents"), F.sum(F.length("text")).alias("characters"))
            .first()
        )
        assert row is not None
        print(json.dumps({"documents": row["documents"], "characters": row["characters"]}))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
