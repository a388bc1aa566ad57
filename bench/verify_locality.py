"""How many texts verification ships, today and if its candidates were grouped by document: a lever
of issue 37 counted before it is built.

    python -m bench.verify_locality CANDIDATE_RUN [--partitions 8,64,512,4096] [--threshold 0.5]
                                    [--corpus CORPUS [--sample 5000000]] [--json FILE]

``CANDIDATE_RUN`` is an estimate-only run at the default run's candidate threshold (``--set
pairs.verify=false --set pairs.threshold=0.3``), as for ``bench/verify_filter.py``: its pairs, less
those :func:`shingling.pairs.sizes_may_reach` refuses, are the candidates a default run verifies.

Today verification joins each candidate to its two texts (:mod:`shingling.spark.verify`): two
texts travel per candidate, however many candidates a document is in. The alternative counted here
brings each candidate to one of P partitions and ships every text once to each partition that needs
it, where a worker holds the shingle sets of the partition's owners and streams the rest past them:

- ``by_doc``: a candidate goes to the partition of its ``doc_a`` (a hash of the id, as Spark
  partitions);
- ``by_hub``: to the partition of whichever of its two documents is in more candidates (ties: the
  first), so that a document in many candidates (a near copy of a large family, a page of
  boilerplate) holds its own candidates and travels once;
- ``by_min_hash``: to the partition of its ``doc_a``, each document's partition chosen by the
  smallest hash of its sketch instead of its id: two documents of Jaccard J have the same smallest
  shingle hash with probability J (Broder), so near copies tend to share a partition and a
  candidate's second text is then already there.

For each, the texts shipped (distinct (partition, document) pairs), their ratio to today's two a
candidate, and the most owners one partition holds (the sets a worker keeps at once). Counted in
one process, without Spark; a partition is a random hash of each document's id (or, ``by_min_hash``,
of its smallest sketch hash), as a shuffle's is.
With ``--corpus`` (the run's input), it also times what such a worker computes: each text's
shingle set built once, and a sample of candidates counted against the held sets
(:func:`time_overlap`).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from numba import vectorize

from bench import print_json
from shingling.exact import overlap
from shingling.fast.exact import overlaps, shingle_sets
from shingling.fast.text import Folded
from shingling.hashing import SEED
from shingling.pairs import sizes_may_reach
from shingling.schema import DOC_A, DOC_B, DOC_ID, EXACT, SHINGLES_A, SHINGLES_B, SKETCH, TEXT
from shingling.sketch import DEFAULT_WIDTH

#: A 64-bit odd multiplier (Fibonacci hashing): a document's partition is the high bits of its code
#: times this, modulo P.
MIX = np.uint64(0x9E3779B97F4A7C15)

#: :func:`shingling.pairs.sizes_may_reach`, the library's own rule, compiled over arrays.
sizes_may_reach_all = vectorize(["boolean(int64, int64, float64)"])(sizes_may_reach)


@dataclass(frozen=True)
class Candidates:
    """Verification's candidates as dense document codes: ``a[i]``, ``b[i]``; by code, the
    smallest hash of the document's sketch and its id."""

    a: np.ndarray
    b: np.ndarray
    smallest: np.ndarray
    ids: pa.Array


def candidates(run: Path, threshold: float) -> Candidates:
    """The run's pairs that verification would read texts for: those of two distinct texts
    (verification does not read exact copies) whose shingle-set sizes may reach ``threshold``
    (:func:`shingling.pairs.sizes_may_reach`), the smallest sketch hashes from the run's documents
    table."""
    columns = [DOC_A, DOC_B, SHINGLES_A, SHINGLES_B, EXACT]
    pairs = pq.read_table(run / "pairs", columns=columns)
    x = pairs[SHINGLES_A].to_numpy().astype(np.int64)
    y = pairs[SHINGLES_B].to_numpy().astype(np.int64)
    keep = sizes_may_reach_all(x, y, threshold)
    keep &= ~pairs[EXACT].to_numpy(zero_copy_only=False).astype(bool)
    pairs = pairs.filter(pa.array(keep))
    ids = pa.concat_arrays([pairs[DOC_A].combine_chunks(), pairs[DOC_B].combine_chunks()])
    encoded = pc.dictionary_encode(ids)
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    docs = pq.read_table(run / "documents", columns=[DOC_ID, SKETCH])
    row = pc.index_in(encoded.dictionary, value_set=docs[DOC_ID]).to_numpy(zero_copy_only=False)
    smallest = pc.list_element(docs[SKETCH], 0).to_numpy(zero_copy_only=False)[row]
    a, b = codes[: pairs.num_rows], codes[pairs.num_rows :]
    return Candidates(a, b, smallest.astype(np.int64), encoded.dictionary)


def partition_of(codes: np.ndarray, partitions: int) -> np.ndarray:
    """Each document's partition: a random hash of its code, as a hash partitioner spreads ids.

    >>> p = partition_of(np.arange(100_000), 8)
    >>> int(p.min()), int(p.max()), bool(np.all(np.bincount(p) > 11_000))
    (0, 7, True)
    """
    mixed = (codes.astype(np.uint64) * MIX) >> np.uint64(32)
    return (mixed % np.uint64(partitions)).astype(np.int64)


def shipped(
    owner: np.ndarray, other: np.ndarray, partitions: int, keys: np.ndarray | None = None
) -> dict[str, int]:
    """Texts shipped when each candidate (owner, other) goes to its owner's partition: the
    distinct (partition, document) pairs over both sides; and the most owners one partition holds.
    A document's partition is :func:`partition_of` its code, or of its value in ``keys`` (by code).

    >>> shipped(np.array([0, 0, 0, 1]), np.array([1, 2, 3, 2]), 1)
    {'texts': 4, 'most_owners_in_a_partition': 2}
    """
    where = partition_of(owner if keys is None else keys[owner], partitions)
    size = int(max(owner.max(initial=0), other.max(initial=0))) + 1
    needed = np.concatenate([where * size + owner, where * size + other])
    owners = np.unique(where * size + owner)
    held = np.bincount(owners // size, minlength=partitions)
    return {"texts": int(len(np.unique(needed))), "most_owners_in_a_partition": int(held.max())}


def hubs_first(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate oriented (owner, other), the owner the document in more candidates (ties:
    ``a``).

    >>> hubs_first(np.array([0, 1, 2]), np.array([3, 3, 0]))
    (array([0, 3, 0]), array([3, 1, 2]))
    """
    degree = np.bincount(np.concatenate([a, b]))
    a_owns = degree[a] >= degree[b]
    return np.where(a_owns, a, b), np.where(a_owns, b, a)


def measure(found: Candidates, partitions: list[int]) -> dict[str, Any]:
    """The texts each assignment ships at each partition count (:func:`shipped`), against today's
    two a candidate."""
    started = time.perf_counter()
    a, b, smallest = found.a, found.b, found.smallest
    count = len(a)
    out: dict[str, Any] = {
        "candidates": count,
        "documents_in_candidates": int(len(np.unique(np.concatenate([a, b])))),
        "today_texts": 2 * count,
        "partitions": {},
    }
    owner, other = hubs_first(a, b)
    for p in partitions:
        ways = {
            "by_doc": shipped(a, b, p),
            "by_hub": shipped(owner, other, p),
            "by_min_hash": shipped(a, b, p, keys=smallest),
        }
        out["partitions"][str(p)] = {
            way: {**counts, "of_today": round(counts["texts"] / max(2 * count, 1), 4)}
            for way, counts in ways.items()
        }
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def time_overlap(corpus: Path, found: Candidates, sample: int) -> dict[str, Any]:
    """What a worker holding its documents' shingle sets pays, in one process: every document of
    the candidates has its set built once (:func:`shingling.fast.exact.shingle_sets`, as
    verification builds them), then a sample of ``sample`` candidates, in ``doc_a`` order, has its
    shared shingles counted against the held sets (:func:`shingling.fast.exact.overlaps`). CPU
    seconds each, per text and per candidate; 50 of the sampled candidates are checked against
    :func:`shingling.exact.overlap`."""
    a, b, ids = found.a, found.b, found.ids
    texts = pq.read_table(corpus, columns=[DOC_ID, TEXT])
    texts = texts.filter(pc.is_in(texts[DOC_ID], value_set=ids))
    row = pc.index_in(ids, value_set=texts[DOC_ID].combine_chunks())
    text_by_code = texts[TEXT].combine_chunks().take(row)
    started = time.process_time()
    starts, ordered, values = shingle_sets(
        *Folded.of(text_by_code, "words").loop_args(), DEFAULT_WIDTH, np.uint64(SEED)
    )
    sets_s = time.process_time() - started
    rng = np.random.default_rng(0)
    chosen = rng.choice(len(a), min(sample, len(a)), replace=False)
    chosen = chosen[np.argsort(a[chosen], kind="stable")]
    side_a, side_b = a[chosen], b[chosen]
    started = time.process_time()
    shared = overlaps(starts, ordered, values, side_a, side_b)
    overlap_s = time.process_time() - started
    for i in rng.choice(len(chosen), min(50, len(chosen)), replace=False):
        x, y = text_by_code[int(side_a[i])].as_py(), text_by_code[int(side_b[i])].as_py()
        assert int(shared[i]) == overlap(x, y, width=DEFAULT_WIDTH).shared, (x, y)
    return {
        "texts": len(text_by_code),
        "sets_cpu_s": round(sets_s, 2),
        "us_per_text": round(1e6 * sets_s / max(len(text_by_code), 1), 2),
        "candidates_timed": len(chosen),
        "overlap_cpu_s": round(overlap_s, 2),
        "us_per_candidate": round(1e6 * overlap_s / max(len(chosen), 1), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="an estimate-only run at the candidate threshold")
    parser.add_argument("--partitions", default="8,64,512,4096")
    parser.add_argument("--threshold", type=float, default=0.5, help="the default run's cut")
    parser.add_argument("--json", type=Path, help="write the result there as well")
    parser.add_argument("--corpus", type=Path, help="also time the sets held and the overlaps")
    parser.add_argument("--sample", type=int, default=5_000_000, help="candidates timed")
    args = parser.parse_args(argv)
    counts = [int(p) for p in args.partitions.split(",")]
    found = candidates(args.run, args.threshold)
    result = {"run": str(args.run), **measure(found, counts)}
    if args.corpus:
        result["held_sets"] = time_overlap(args.corpus, found, args.sample)
    print_json(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
