"""How much work the prefix join does, counted from a run's documents table: the join prefixes,
their postings, and the pairs each posting tests, at the candidate threshold of the default run
(verified: 0.3) and of the estimate-only run (0.5). docs/scaling.md's cost model reads the pair
tests per document from here. A run reports the same two counts for its own threshold in its
summary (``pairs.pairs_tested``, ``pairs.signature_passes``, from the job's loop); this counts
both thresholds from one run, and times the loop.

    python -m bench.join_work RUN_DIR [RUN_DIR ...] [--time-sample 64] [--json FILE]

The same code as the job (shingling.fast: the count-min frequency sketch sized as the job sizes
it, the prefix selection rarest first), in one process without Spark: exact copies are collapsed to
one representative per normalized text as the job does, and a posting of more than
``pairs.max_posting`` documents tests n - 1 pairs (a star), a smaller one n (n - 1) / 2. Each
test is the signatures' bound, then for the few it passes one 20-hash intersection (``may_reach``),
in the job's compiled loop.

It also counts the tests the signatures pass (``signature_passes``), each then an intersection:
the loop's time is a cost a prefix row (its signature), a cost a test and a cost a passed test.

With ``--time-sample M`` it also times that loop (:func:`shingling.fast.postings.score_table`, the
function the job's posting stage calls) in this process on the postings of one hash in M (1: all),
and reports its CPU time per pair test: the constant of the cost model's quadratic term.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from numba import njit

from shingling.fast.estimators import min_shared, sizes_may_reach
from shingling.fast.frequency import FrequencySketch, shareable_in_order
from shingling.fast.postings import (
    SIGNATURE_WORDS,
    popcount,
    prefix_rows,
    score_table,
    sign,
    sketch_arrays,
)
from shingling.schema import DOC_ID, HASH, N_SHINGLES, SKETCH, TEXT_HASH

THRESHOLDS = {"defaults (candidates from 0.3)": 0.3, "estimate-only (0.5)": 0.5}
# the cut below which a verifying run drops a pair on its shingle-set sizes, untested (the job's
# size_floor; the estimate-only run has none)
SIZE_FLOORS = {"defaults (candidates from 0.3)": 0.5, "estimate-only (0.5)": 0.0}
# postings of at least this many rows: the share of the rows, the tests and the passes they hold
HOT_SIZES = (8, 32, 128)


def pair_tests(hashes: np.ndarray, max_posting: int) -> tuple[np.ndarray, int]:
    """The sizes of the postings of two or more rows, and the pairs they test (``max_posting``:
    the cap above which a posting is paired by star; 0, no cap)."""
    _, sizes = np.unique(hashes, return_counts=True)
    sizes = sizes[sizes > 1].astype(np.int64)
    return sizes, tests_of(sizes, max_posting)


def tests_of(sizes: np.ndarray, max_posting: int) -> int:
    """The pairs postings of these ``sizes`` (two or more rows) test: n (n - 1) / 2 each, n - 1
    in a star (more than ``max_posting`` rows; 0, no cap)."""
    capped = sizes > max_posting if max_posting > 0 else np.zeros(len(sizes), dtype=bool)
    return int((sizes[~capped] * (sizes[~capped] - 1) // 2).sum() + (sizes[capped] - 1).sum())


@njit(cache=False, nogil=True)
def signature_passes(
    rows: Any,
    hashes: Any,
    offsets: Any,
    values: Any,
    k: int,
    threshold: float,
    max_posting: int,
    min_size: int = 2,
    sizes: Any = None,
    size_floor: float = 0.0,
) -> int:
    """Of the pairs the postings test (``hashes`` sorted, ``rows`` the sketch of each), how many
    the signatures' bound passes: the arithmetic of ``postings.signatures_may_reach``, with the
    sketches reached through ``rows``; a posting of more than ``max_posting`` rows (0: no cap) is
    a star, whose pairs are not tested. Only postings of at least ``min_size`` rows count. With
    ``sizes`` (by sketch) and ``size_floor``, a pair whose shingle-set sizes keep its Jaccard
    under it is refused first, as the job's loop refuses it (``sizes_may_reach``)."""
    n = len(hashes)
    signatures = np.zeros((64, SIGNATURE_WORDS + 1), dtype=np.uint64)  # a row each, grown as needed
    passes = 0
    start = 0
    while start < n:
        end = start + 1
        while end < n and hashes[end] == hashes[start]:
            end += 1
        if end - start >= max(2, min_size) and not 0 < max_posting < end - start:
            if end - start > len(signatures):
                signatures = np.zeros((end - start, SIGNATURE_WORDS + 1), dtype=np.uint64)
            for i in range(start, end):
                sign(values, offsets, rows[i], k, signatures[i - start])
            for i in range(start, end):
                ka = min(offsets[rows[i] + 1] - offsets[rows[i]], k)
                for j in range(i + 1, end):
                    if sizes is not None:  # typed None: the branch is compiled out
                        if size_floor > 0 and not sizes_may_reach(
                            sizes[rows[i]], sizes[rows[j]], size_floor
                        ):
                            continue
                    kb = min(offsets[rows[j] + 1] - offsets[rows[j]], k)
                    need = min_shared(min(k, max(ka, kb)), threshold)
                    a, b = i - start, j - start
                    bound = int(min(signatures[a, SIGNATURE_WORDS], signatures[b, SIGNATURE_WORDS]))
                    for w in range(SIGNATURE_WORDS):
                        bound += popcount(signatures[a, w] & signatures[b, w])
                    if bound >= need:
                        passes += 1
        start = end
    return passes


@njit(cache=False, nogil=True)
def _pair_key_rows(
    offsets: Any, values: Any, frequency: Any, k: int, threshold: float, hot: int, cap: int
) -> Any:
    """Join keys with AND-amplification (counted, not built): each sketch's prefix as the job
    selects it (:func:`shingling.fast.frequency.select_prefixes`: shareable hashes rarest first,
    the first s - need + 1), a single key for each cold prefix hash (estimate below ``hot``) and,
    for each hot one at position x, a key for the pair (x, y) of every later y up to the prefix
    lengthened by one. Lossless: two sketches sharing ``need`` >= 2 hashes share their two
    smallest shared ones (by the order) within both lengthened prefixes, and the first is cold
    (single key) or hot, and then so is the second (the order is by frequency). A sketch whose
    ``need`` is 1 (a few hashes) emits the single key of each hot hash as well as its pair keys,
    so that it meets the sketches it shares one hash with and the larger ones on their pair keys.
    A hash estimated in more than ``cap`` sketches (0: none) keeps its single key too: its
    posting is capped (a star, linear), which pair keys would split into postings under the cap,
    each quadratic. Returns (row, key) per key row; a pair key is the two hashes mixed."""
    most = 0
    for i in range(len(offsets) - 1):
        n = min(offsets[i + 1] - offsets[i], k)
        most += n + n * (n - 1) // 2
    rows = np.empty(most, dtype=np.int32)
    keys = np.empty(most, dtype=np.int64)
    est = np.empty(max(k, 1), dtype=np.int64)
    held = np.empty(max(k, 1), dtype=np.int64)
    where = np.empty(max(k, 1), dtype=np.int64)
    out = 0
    for i in range(len(offsets) - 1):
        start = offsets[i]
        end = min(offsets[i + 1], start + k)
        need = min_shared(end - start, threshold)
        s = shareable_in_order(values, frequency, start, end, est, held, where)
        p = s - need + 1
        for x in range(max(p, 0)):
            if est[x] < hot or need < 2 or 0 < cap < est[x]:
                rows[out] = i
                keys[out] = held[x]
                out += 1
            if hot <= est[x] and not 0 < cap < est[x]:
                for y in range(x + 1, min(p + 1, s)):
                    rows[out] = i
                    keys[out] = (held[x] * np.int64(0x9E3779B97F4A7C15)) ^ held[y]
                    out += 1
    return rows[:out], keys[:out]


def pair_key_work(
    offsets: np.ndarray,
    values: np.ndarray,
    frequency: np.ndarray,
    *,
    k: int,
    threshold: float,
    hot: int,
    max_posting: int,
    documents: int,
) -> dict[str, Any]:
    """The rows, pair tests and signature passes of the join keyed as :func:`_pair_key_rows`."""
    rows, keys = _pair_key_rows(offsets, values, frequency, k, threshold, hot, max_posting)
    by_key = np.argsort(keys, kind="stable")
    sizes, tests = pair_tests(keys, max_posting)
    passes = signature_passes(
        rows[by_key], keys[by_key], offsets, values, k, threshold, max_posting
    )
    return {
        "hot_from": hot,
        "key_rows": len(keys),
        "key_rows_per_document": round(len(keys) / documents, 2),
        "largest_posting": int(sizes.max()) if len(sizes) else 0,
        "pair_tests": tests,
        "pair_tests_per_document": round(tests / documents, 2),
        "signature_passes": int(passes),
        "signature_passes_per_document": round(int(passes) / documents, 2),
    }


def hot_shares(
    rows: np.ndarray,
    hashes: np.ndarray,
    offsets: np.ndarray,
    values: np.ndarray,
    k: int,
    threshold: float,
    max_posting: int,
    sizes: np.ndarray | None = None,
    size_floor: float = 0.0,
) -> dict[str, dict[str, int]]:
    """For each size of :data:`HOT_SIZES`: the prefix rows in postings of at least that many rows,
    the pairs those postings test and the tests the signatures pass there (``hashes`` sorted).
    What a filter carried only by the rows of large postings would cost (its rows) and reach (its
    tests)."""
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    per_row = counts[inverse]
    found = {}
    for size in HOT_SIZES:
        found[str(size)] = {
            "prefix_rows": int((per_row >= size).sum()),
            "pair_tests": tests_of(counts[counts >= max(2, size)].astype(np.int64), max_posting),
            "signature_passes": int(
                signature_passes(
                    rows,
                    hashes,
                    offsets,
                    values,
                    k,
                    threshold,
                    max_posting,
                    size,
                    sizes,
                    size_floor,
                )
            ),
        }
    return found


def time_postings(
    reps: pa.Table,
    frequencies: FrequencySketch,
    *,
    k: int,
    threshold: float,
    max_posting: int,
    sample: int,
) -> dict[str, Any]:
    """CPU seconds of the compiled posting loop over the postings of one hash in ``sample``."""
    parts = []
    for batch in reps.to_batches(200_000):
        rows = prefix_rows(batch, frequencies, k=k, threshold=threshold, max_posting=max_posting)
        if sample > 1:
            rows = rows.filter(pc.equal(pc.bit_wise_and(rows[HASH], sample - 1), 0))
        parts.append(rows)
    rows = pa.Table.from_batches(parts)
    rows = rows.take(pc.sort_indices(rows[HASH]))
    hashes = rows[HASH].to_numpy()
    sizes, tests = pair_tests(hashes, max_posting)
    offsets, values = sketch_arrays(rows[SKETCH])
    passes = signature_passes(
        np.arange(len(hashes)), hashes, offsets, values, k, threshold, max_posting
    )
    # compiled before the clock starts
    score_table(rows.slice(0, 1000), k=k, threshold=threshold, max_posting=max_posting)
    started = time.process_time()
    scored = score_table(rows, k=k, threshold=threshold, max_posting=max_posting).num_rows
    seconds = time.process_time() - started
    return {
        "sample": f"1/{sample}",
        "pair_tests": tests,
        "signature_passes": int(passes),
        "scored": scored,
        "cpu_seconds": round(seconds, 2),
        "ns_per_test": round(seconds / max(tests, 1) * 1e9, 1),
    }


def join_work(
    run: Path,
    *,
    k: int = 20,
    max_posting: int = 2000,
    frequency_mb: float = 24,
    time_sample: int | None = None,
    pair_keys: tuple[int, ...] = (),
) -> dict[str, Any]:
    """The prefix join's rows, postings and pair tests for the documents table of ``run`` (and,
    for each of ``pair_keys``, those of the join keyed by :func:`_pair_key_rows` from it)."""
    started = time.monotonic()
    table = ds.dataset(run / "documents", format="parquet").to_table(
        columns=[DOC_ID, N_SHINGLES, SKETCH, TEXT_HASH]
    )
    table = table.filter(pc.is_valid(table[SKETCH]))
    sketched = table.num_rows
    _, first = np.unique(table[TEXT_HASH].to_numpy(), return_index=True)
    reps = table.take(np.sort(first)).combine_chunks()
    offsets, values = sketch_arrays(pc.list_slice(reps[SKETCH], 0, k))
    frequencies = FrequencySketch.for_hashes(sketched * k, max_megabytes=frequency_mb)
    frequencies.add(values)
    found: dict[str, Any] = {
        "run": str(run),
        "sketched": sketched,
        "representatives": reps.num_rows,
        "frequency_sketch_filled": round(frequencies.filled, 3),
    }
    n_shingles = reps[N_SHINGLES].to_numpy().astype(np.int64)
    for name, threshold in THRESHOLDS.items():
        rows, hashes, _ = frequencies.select_prefixes(
            offsets, values, k=k, threshold=threshold, max_posting=max_posting
        )
        sizes, tests = pair_tests(hashes, max_posting)
        by_hash = np.argsort(hashes, kind="stable")
        floor = {"sizes": n_shingles, "size_floor": SIZE_FLOORS[name]}
        passes = signature_passes(
            rows[by_hash], hashes[by_hash], offsets, values, k, threshold, max_posting, 2, **floor
        )
        found[name] = {
            "prefix_rows": len(hashes),
            "postings_of_two_or_more": len(sizes),
            "largest_posting": int(sizes.max()) if len(sizes) else 0,
            "capped_postings": int((sizes > max_posting).sum()),
            "pair_tests": tests,
            "pair_tests_per_document": round(tests / sketched, 2),
            "signature_passes": int(passes),
            "in_postings_of_at_least": hot_shares(
                rows[by_hash], hashes[by_hash], offsets, values, k, threshold, max_posting, **floor
            ),
        }
        del by_hash
        if pair_keys:
            frequency = frequencies.estimates(offsets, values, k=k)
            found[name]["pair_keys"] = [
                pair_key_work(
                    offsets,
                    values,
                    frequency,
                    k=k,
                    threshold=threshold,
                    hot=hot,
                    max_posting=max_posting,
                    documents=sketched,
                )
                for hot in pair_keys
            ]
        if time_sample:
            found[name]["timed"] = time_postings(
                reps.select([DOC_ID, N_SHINGLES, SKETCH]),
                frequencies,
                k=k,
                threshold=threshold,
                max_posting=max_posting,
                sample=time_sample,
            )
    found["seconds"] = round(time.monotonic() - started, 1)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.join_work", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run output directories")
    parser.add_argument("--frequency-mb", type=float, default=24)
    parser.add_argument("--max-posting", type=int, default=2000)
    parser.add_argument(
        "--time-sample",
        type=int,
        help="time the compiled posting loop on one hash in this many (a power of two; 1: all)",
    )
    parser.add_argument(
        "--pair-keys",
        type=lambda v: tuple(int(x) for x in v.split(",")),
        default=(),
        help="also count a join keyed by pairs of prefix hashes estimated in at least this many "
        "sketches (comma-separated: one count each)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    results = []
    for run in args.runs:
        results.append(
            join_work(
                run,
                max_posting=args.max_posting,
                frequency_mb=args.frequency_mb,
                time_sample=args.time_sample,
                pair_keys=args.pair_keys,
            )
        )
        print(json.dumps(results[-1], indent=2), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
