"""The peers' runners (bench/peers/): what they write, on real text."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.peers import rensa_lsh
from bench.peers.shingle_lists import shingle_hash_lists
from tests.testdata import sample_corpus


def test_rensa_with_copies_set_aside_finds_the_pairs_of_distinct_texts_it_finds_without(
    tmp_path: Path, capsys
) -> None:
    # the sample corpus's Debian copyright files hold many exact copies of one another
    texts = [t for _, t in sample_corpus()]
    corpus = tmp_path / "corpus.parquet"
    pq.write_table(
        pa.table({"doc_id": pa.array(range(len(texts)), pa.int64()), "text": texts}), corpus
    )
    every, once = tmp_path / "every.parquet", tmp_path / "once.parquet"
    assert rensa_lsh.main(["--input", str(corpus), "--output", str(every)]) == 0
    assert rensa_lsh.main(["--input", str(corpus), "--output", str(once), "--copies-once"]) == 0
    first_of: dict[tuple[int, ...], int] = {}
    group = {
        i: first_of.setdefault(tuple(hashes), i)
        for i, hashes in enumerate(shingle_hash_lists(pa.array(texts)).to_pylist())
        if hashes
    }
    copies = {(g, i) for i, g in group.items() if g != i}
    assert len(copies) > 50

    def pairs(path: Path) -> set[tuple[int, int]]:
        t = pq.read_table(path).to_pydict()
        return set(zip(t["doc_a"], t["doc_b"], strict=True))

    def of_groups(found: set[tuple[int, int]]) -> set[frozenset[int]]:
        return {frozenset((group[a], group[b])) for a, b in found if group[a] != group[b]}

    assert of_groups(pairs(once)) == of_groups(pairs(every)) and of_groups(pairs(every))
    assert copies <= pairs(once)  # each copy paired with the first of its set
    assert len(pairs(once)) < len(pairs(every))
