"""The nightly benches' corpus split and the join-work count, without Spark."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from bench.join_work import pair_tests
from bench.nightly_bench import split


def test_split_accounts_for_every_document_once(small_corpus, tmp_path: Path) -> None:
    corpus = small_corpus[0] / "corpus"
    index_part, batches, n_index, n_batches = split(corpus, [0.05, 0.1], 3, tmp_path)
    ids = ds.dataset(corpus, format="parquet").to_table(columns=["doc_id"])["doc_id"].to_pylist()
    indexed = ds.dataset(index_part, format="parquet").to_table()["doc_id"].to_pylist()
    held = [pq.read_table(b)["doc_id"].to_pylist() for b in batches]
    assert sorted(indexed + held[0] + held[1]) == sorted(ids)  # every document, once
    assert [len(h) for h in held] == n_batches and len(indexed) == n_index
    assert 0 < n_batches[0] < n_batches[1] < n_index  # drawn at random, about 5% and 10%
    assert len(list(index_part.iterdir())) == len(ds.dataset(corpus, format="parquet").files)


@pytest.mark.parametrize("cap", [0, 2, 3, 100])
def test_pair_tests_count_every_pair_of_a_posting_or_a_star(cap: int) -> None:
    hashes = np.array([5, 5, 5, 9, 9, 1, 7, 7, 7, 7])  # postings of 3, 2, 1 and 4 rows
    sizes, tests = pair_tests(hashes, cap)  # 0: no cap
    assert sorted(sizes.tolist()) == [2, 3, 4]  # a posting of one row tests nothing
    brute = sum(n - 1 if n > (cap or 10**9) else n * (n - 1) // 2 for n in (3, 2, 4))
    assert tests == brute
