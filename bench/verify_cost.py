"""Where verification's time goes, one candidate at a time, in Spark: issue 37's lever "a larger
sketch in front of verification" timed before it is built.

    spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip \\
        bench/verify_cost.py --input CORPUS --candidates CANDIDATE_RUN [--json FILE]

``CANDIDATE_RUN`` is an estimate-only run at the default run's candidate threshold, as for
bench/verify_filter.py (``--set pairs.verify=false --set pairs.threshold=0.3``): its pairs, less the
exact duplicates and those the size bound decides, are the candidates the default run verifies.
One Spark session then times, each step alone over the same candidates, a sequence of plans of
which each does the work of the one before and one thing more:

- ``join``: both joins of the candidates to their documents' texts, in the JVM only (the job's
  plan: the texts shuffled once by id, two sort-merge joins), then a count;
- ``rows``: and every joined row through Arrow to a Python worker and back, the texts cut to one
  character (what a row costs);
- ``texts``: the same with the whole texts (what the texts' bytes cost);
- ``verify``: the job's verification itself (:func:`shingling.spark.verify.verify_candidates`:
  the exact overlap of every pair, compiled), its kept pairs written;
- ``fingerprints``: the lever. Each document's bottom-256 sketch, as the top 32 bits of its 256
  smallest shingle hashes (:func:`fingerprint`, computed once a document from its text), joined
  to the candidates instead of the texts, and each pair's refusal decided by a compiled merge
  (:func:`sample_counts`); the refused pairs written. The texts of the pairs it lets through would
  still travel afterwards: this times only the filter.

Truncating the hashes to 32 bits never makes the filter refuse more: within a run of equal
prefixes the merge counts as many matches as the shorter side holds, never fewer than the pairs
truly shared there, and consumes no more of the sample than the exact merge, so the counted
sample holds at least the shared hashes the exact bottom-256 sample holds (tested against the
exact merge of bench/verify_filter.py). The refusal rule is that of bench/verify_filter.py: at
most ``refusal_cut(256, threshold, 1e-6)`` shared hashes in the sample, or, when both documents
have at most 256 shingles (the sample is their whole union), a ratio below the threshold. The
last step counts the refused pairs that verification kept: it must be 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from numba import njit
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ under spark-submit

from bench.verify_filter import refusal_cut  # noqa: E402

K = 256  # the fingerprint's hashes
THRESHOLD = 0.5
MISS = 1e-6


def fingerprint(values: np.ndarray, k: int = K) -> np.ndarray:
    """A document's fingerprint: the top 32 bits of its ``k`` smallest distinct shingle hashes
    (unsigned order), ascending.

    >>> fingerprint(np.array([5 << 32, 1 << 32, 7, 9 << 32], dtype=np.uint64), k=3).tolist()
    [0, 1, 5]
    """
    smallest = np.unique(values.astype(np.uint64))[:k]  # sorted
    return (smallest >> np.uint64(32)).astype(np.uint32)


@njit(cache=True)
def sample_counts(da, oa, db, ob, whole, k):
    """Per pair r (its fingerprints da[oa[r]:oa[r + 1]] and db[ob[r]:ob[r + 1]]): the matches among
    the first ``k`` values of the merged union (all of them where ``whole[r]``: both fingerprints
    are whole sets), and how many values of the union that sample took."""
    n = len(oa) - 1
    matches = np.zeros(n, np.int64)
    taken = np.zeros(n, np.int64)
    for r in range(n):
        i, ie, j, je = oa[r], oa[r + 1], ob[r], ob[r + 1]
        limit = (ie - i) + (je - j) if whole[r] else k
        c = 0
        m = 0
        while c < limit and (i < ie or j < je):
            if i < ie and j < je and da[i] == db[j]:
                m += 1
                i += 1
                j += 1
            elif j >= je or (i < ie and da[i] < db[j]):
                i += 1
            else:
                j += 1
            c += 1
        matches[r] = m
        taken[r] = c
    return matches, taken


def refused(
    matches: np.ndarray, taken: np.ndarray, whole: np.ndarray, *, cut: int, threshold: float
) -> np.ndarray:
    """Whether each pair is refused: a whole union below ``threshold``, or a sample of ``K`` with
    at most ``cut`` matches."""
    exact_below = whole & (matches < threshold * np.maximum(taken, 1))
    return exact_below | (~whole & (matches <= cut))


def _fingerprints(width: int) -> Any:
    def compute(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from shingling.fast.exact import shingle_sets
        from shingling.fast.text import Folded
        from shingling.hashing import SEED

        for b in batches:
            starts, _, values = shingle_sets(
                *Folded.of(b.column("text"), "words").loop_args(), width, np.uint64(SEED)
            )
            parts = [fingerprint(values[starts[t] : starts[t + 1]]) for t in range(b.num_rows)]
            sizes = np.diff(starts)
            data = [p.tobytes() for p in parts]
            yield pa.RecordBatch.from_arrays(
                [b.column("doc_id"), pa.array(data, pa.binary()), pa.array(sizes)],
                names=["doc_id", "fp", "size"],
            )

    return compute


def _decide(cut: int) -> Any:
    def decide(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            fa, fb = b.column("fp_a"), b.column("fp_b")
            da = np.frombuffer(fa.buffers()[2] or b"", dtype=np.uint32)
            db = np.frombuffer(fb.buffers()[2] or b"", dtype=np.uint32)
            offsets_a = np.frombuffer(fa.buffers()[1], np.int32)[
                fa.offset : fa.offset + len(fa) + 1
            ]
            offsets_b = np.frombuffer(fb.buffers()[1], np.int32)[
                fb.offset : fb.offset + len(fb) + 1
            ]
            sizes_a = b.column("size_a").to_numpy()
            sizes_b = b.column("size_b").to_numpy()
            whole = (sizes_a <= K) & (sizes_b <= K)
            matches, taken = sample_counts(da, offsets_a // 4, db, offsets_b // 4, whole, K)
            out = refused(matches, taken, whole, cut=cut, threshold=THRESHOLD)
            yield pa.RecordBatch.from_arrays(
                [b.column("doc_a"), b.column("doc_b"), pa.array(out)],
                names=["doc_a", "doc_b", "refused"],
            )

    return decide


def _pass_through(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for b in batches:
        yield pa.RecordBatch.from_arrays([pa.array([b.num_rows], pa.int64())], names=["rows"])


def _joined(candidates: DataFrame, payload: DataFrame, value: str) -> DataFrame:
    """The job's join plan: the payload shuffled once by id, then two sort-merge joins."""
    needed = payload.repartition("doc_id")
    side_a = needed.select(
        F.col("doc_id").alias("doc_a"), *(F.col(v).alias(f"{v}_a") for v in value.split(","))
    ).hint("merge")
    side_b = needed.select(
        F.col("doc_id").alias("doc_b"), *(F.col(v).alias(f"{v}_b") for v in value.split(","))
    ).hint("merge")
    return candidates.join(side_a, "doc_a", "left").join(side_b, "doc_b", "left")


def measure(spark: SparkSession, corpus: str, candidate_run: str, work: Path) -> dict[str, Any]:
    from shingling.schema import DOC_ID, JACCARD_ESTIMATE, TEXT
    from shingling.spark.rules import sizes_may_reach
    from shingling.spark.verify import verify_candidates

    texts = spark.read.parquet(corpus).select(DOC_ID, TEXT)
    candidates = (
        spark.read.parquet(str(Path(candidate_run) / "pairs"))
        .where(~F.col("exact_duplicate"))
        .where(sizes_may_reach(F.col("shingles_a"), F.col("shingles_b"), THRESHOLD))
        .drop(JACCARD_ESTIMATE)
    )
    ids = (
        candidates.select(F.col("doc_a").alias(DOC_ID))
        .union(candidates.select(F.col("doc_b").alias(DOC_ID)))
        .distinct()
    )
    spark.read.parquet(corpus).agg(F.sum(F.length(TEXT))).collect()  # the files in the page cache
    found: dict[str, Any] = {"candidates": candidates.count()}
    seconds: dict[str, float] = {}

    def timed(name: str, action: Any) -> Any:
        started = time.monotonic()
        result = action()
        seconds[name] = round(time.monotonic() - started, 1)
        print(f"{name}: {seconds[name]} s", file=sys.stderr, flush=True)
        return result

    def texts_cut(chars: int | None) -> DataFrame:
        return (
            texts
            if chars is None
            else texts.select(DOC_ID, F.substring(TEXT, 1, chars).alias(TEXT))
        )

    timed("join", lambda: _joined(candidates, texts, TEXT).agg(F.count(F.lit(1))).collect())
    for name, chars in (("rows", 1), ("texts", None)):
        plan = _joined(candidates, texts_cut(chars), TEXT).mapInArrow(_pass_through, "rows long")
        timed(name, lambda plan=plan: plan.agg(F.sum("rows")).collect())
    kept = work / "kept"
    verified = verify_candidates(
        candidates, texts, width=4, unit="words", threshold=THRESHOLD, wanted=ids
    )
    timed(
        "verify",
        lambda: verified.select("doc_a", "doc_b").write.mode("overwrite").parquet(str(kept)),
    )
    cut = refusal_cut(K, THRESHOLD, MISS)
    fps = texts.join(ids, DOC_ID, "left_semi").mapInArrow(
        _fingerprints(4), "doc_id long, fp binary, size long"
    )
    decided = _joined(candidates.select("doc_a", "doc_b"), fps, "fp,size").mapInArrow(
        _decide(cut), "doc_a long, doc_b long, refused boolean"
    )
    refusals = work / "refused"
    timed(
        "fingerprints",
        lambda: (
            decided.where("refused")
            .select("doc_a", "doc_b")
            .write.mode("overwrite")
            .parquet(str(refusals))
        ),
    )
    refused_pairs = spark.read.parquet(str(refusals))
    kept_pairs = spark.read.parquet(str(kept))
    found.update(
        {
            "kept": kept_pairs.count(),
            "refused": refused_pairs.count(),
            "refused_but_kept": refused_pairs.join(kept_pairs, ["doc_a", "doc_b"]).count(),
            "refusal_cut": cut,
            "seconds": seconds,
        }
    )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="verify_cost", description=__doc__.split("\n")[0])
    parser.add_argument("--input", required=True, help="the corpus (Parquet: doc_id, text)")
    parser.add_argument("--candidates", required=True, help="an estimate-only run at 0.3")
    parser.add_argument("--work", default="bench/work/verify-cost", help="scratch directory")
    parser.add_argument("--json", help="write the result here too")
    args = parser.parse_args(argv)
    from shingling.config import load

    builder = SparkSession.builder.appName("bench verify cost")
    for key, value in load().spark.items():  # the job's session settings: partitions, batches
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        found = {
            "corpus": args.input,
            "candidate_run": args.candidates,
            "at": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
            "session": {k: spark.conf.get(k) for k in load().spark},
            **measure(spark, args.input, args.candidates, Path(args.work)),
        }
    finally:
        spark.stop()
    text = json.dumps(found, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
