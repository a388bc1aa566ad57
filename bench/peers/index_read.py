"""Read a whole index as a nightly run reads it: its live documents (every segment's sketches,
less the rows later segments replaced) and its texts; nothing else.

spark-submit --properties-file conf/spark-local.conf bench/peers/index_read.py --index DIR

bench/index_nights.py times it on an index after many nights and on one compacted index of the
same documents: what the segments of the nights cost a reader.
"""

from __future__ import annotations

import argparse
import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from shingling.schema import SKETCH, TEXT
from shingling.spark.index.store import IndexStore


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="index_read")
    parser.add_argument("--index", required=True)
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName("bench index read").getOrCreate()
    try:
        store = IndexStore(spark, args.index, None)
        manifest = store.manifest()
        assert manifest is not None, f"no index at {args.index}"
        documents = store.live_documents(manifest)
        texts = store.live_texts(manifest)
        assert documents is not None and texts is not None
        # every value read: the sketches' sizes and the texts' lengths summed
        sketches = documents.agg(F.count(F.lit(1)), F.sum(F.size(SKETCH))).first()
        characters = texts.agg(F.sum(F.length(TEXT))).first()
        assert sketches is not None and characters is not None
        print(
            json.dumps(
                {
                    "segments": len(manifest.segments),
                    "documents": int(sketches[0]),
                    "sketch_hashes": int(sketches[1] or 0),
                    "text_characters": int(characters[0] or 0),
                },
                indent=2,
            )
        )
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
