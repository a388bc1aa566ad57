"""bench.verify_locality: its counts of texts shipped are those of a brute-force assignment."""

from __future__ import annotations

import doctest
import itertools
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from testdata import sample_corpus

import bench.verify_locality
from bench.verify_locality import candidates, measure, partition_of, time_overlap
from shingling.exact import shingle_set
from shingling.pairs import sizes_may_reach
from shingling.schema import DOC_A, DOC_B, DOC_ID, EXACT, SHINGLES_A, SHINGLES_B, SKETCH, TEXT


def candidate_run(
    tmp_path: Path, rows: list[tuple[str, str, int, int, bool]], smallest: dict[str, int]
) -> Path:
    """A run directory: the pairs (doc_a, doc_b, sizes, exact copy) and each document's sketch,
    whose smallest hash is ``smallest[doc]``."""
    (tmp_path / "pairs").mkdir()
    (tmp_path / "documents").mkdir()
    a, b, x, y, copy = zip(*rows, strict=True)
    table = pa.table(
        {DOC_A: a, DOC_B: b, SHINGLES_A: x, SHINGLES_B: y, EXACT: pa.array(copy, pa.bool_())}
    )
    pq.write_table(table, tmp_path / "pairs" / "part-0.parquet")
    docs = sorted(smallest)
    sketches = [[smallest[d], smallest[d] + 5, smallest[d] + 9] for d in docs]
    pq.write_table(pa.table({DOC_ID: docs, SKETCH: sketches}), tmp_path / "documents" / "p.parquet")
    return tmp_path


def brute_force(pairs: list[tuple[str, str]], owner_of, partitions: int, keys=None) -> int:
    """Texts shipped, one (partition, document) at a time, a document's partition that of its
    key in ``keys`` or else of its code, documents coded in first-seen order of the a side then
    the b side (as the measure codes them)."""
    order: dict[str, int] = {}
    for doc in [a for a, _ in pairs] + [b for _, b in pairs]:
        order.setdefault(doc, len(order))
    where = {
        doc: int(partition_of(np.array([code if keys is None else keys[doc]]), partitions)[0])
        for doc, code in order.items()
    }
    needed = set()
    for a, b in pairs:
        owner = owner_of(a, b)
        for doc in (a, b):
            needed.add((where[owner], doc))
    return len(needed)


def test_the_counts_equal_a_brute_force_assignment(tmp_path: Path) -> None:
    rng = random.Random(5)
    docs = [f"d{i}" for i in range(60)]
    rows = []
    for _ in range(400):  # a hub in many candidates, and random ones, some of unequal sizes
        a, b = ("d0", rng.choice(docs[1:])) if rng.random() < 0.3 else rng.sample(docs, 2)
        rows.append((a, b, rng.randint(10, 40), rng.randint(10, 40), rng.random() < 0.05))
    smallest = {d: rng.randrange(-(2**63), 2**63 - 10) for d in docs}
    result = measure(candidates(candidate_run(tmp_path, rows, smallest), 0.5), [1, 4, 64])

    kept = [(a, b) for a, b, x, y, copy in rows if sizes_may_reach(x, y, 0.5) and not copy]
    assert 0 < len(kept) < len([r for r in rows if sizes_may_reach(r[2], r[3], 0.5)])
    assert result["candidates"] == len(kept)
    assert result["today_texts"] == 2 * len(kept)
    degree: dict[str, int] = {}
    for a, b in kept:
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
    for p in (1, 4, 64):
        counts = result["partitions"][str(p)]
        assert counts["by_doc"]["texts"] == brute_force(kept, lambda a, b: a, p)
        hub = brute_force(kept, lambda a, b: a if degree[a] >= degree[b] else b, p)
        assert counts["by_hub"]["texts"] == hub
        homes = brute_force(kept, lambda a, b: a, p, keys=smallest)
        assert counts["by_min_hash"]["texts"] == homes
    # one partition: every document once, whoever owns the candidates
    assert result["partitions"]["1"]["by_doc"]["texts"] == len(degree)
    # documents with one smallest hash share a partition: a candidate of two such ships one text
    same = dict.fromkeys(docs, 7)
    (tmp_path / "again").mkdir()
    again = measure(candidates(candidate_run(tmp_path / "again", rows, same), 0.5), [64])
    assert again["partitions"]["64"]["by_min_hash"]["texts"] == len(degree)
    # the hub, in about a third of the candidates, travels once when it owns them
    assert (
        result["partitions"]["64"]["by_hub"]["texts"]
        < result["partitions"]["64"]["by_doc"]["texts"]
    )


def test_its_doctests_pass() -> None:
    assert doctest.testmod(bench.verify_locality).failed == 0


def test_the_held_sets_count_what_the_library_counts(tmp_path: Path) -> None:
    docs = sample_corpus()[:40]
    sets = {d: shingle_set(t, width=4) for d, t in docs}
    rows = [  # every pair, those that share nothing too
        (a, b, len(sets[a]), len(sets[b]), False)
        for a, b in itertools.combinations(sorted(sets), 2)
    ]
    run = candidate_run(tmp_path, rows, dict.fromkeys(sets, 1))
    pq.write_table(
        pa.table({DOC_ID: [d for d, _ in docs], TEXT: [t for _, t in docs]}), tmp_path / "c.parquet"
    )
    held = time_overlap(tmp_path / "c.parquet", candidates(run, 0.0), sample=10_000)
    # every pair (the size bound refuses none at 0) counted, each of the 50 checked equal inside
    assert held["candidates_timed"] == len(rows) >= 50
    assert held["texts"] == len({d for r in rows for d in r[:2]})
