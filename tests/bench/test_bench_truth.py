"""Exact truth: groups of copies, shingle sets by the library's definitions, quality figures."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from bench.peers.shingle_lists import shingle_hash_lists
from bench.truth import Truth, copies_linked, evaluate, exact_groups, jaccard, shingle_sets
from shingling.normalize import normalize, words
from shingling.sketch import shingle_hashes


def test_exact_groups_join_documents_with_the_same_normalized_text(small_corpus) -> None:
    target, corpus, _, _ = small_corpus
    groups = exact_groups(target / "corpus")
    normalized = [normalize(t) for t in corpus.column("text").to_pylist()]
    first_with = {}
    for doc_id, text in enumerate(normalized):
        first_with.setdefault(text, doc_id)
    assert groups.rep.tolist() == [first_with[t] for t in normalized]
    assert groups.size.max() >= 10  # the hot page: 5% of 200 documents
    assert groups.copies == len(normalized) - len(first_with)


def test_shingle_sets_follow_the_library_and_the_peers_see_the_same(small_corpus) -> None:
    target, corpus, _, _ = small_corpus
    texts = corpus.column("text").to_pylist()
    sets = shingle_sets(target / "corpus", np.arange(len(texts)))
    lists = shingle_hash_lists(pa.array(texts)).to_pylist()
    for doc_id, text in enumerate(texts):
        expected = sorted(set(shingle_hashes(words(text))))
        assert sets[doc_id].tolist() == expected
        assert lists[doc_id] == expected


def test_truth_scores_pairs_once_and_reads_them_back(small_corpus, tmp_path) -> None:
    target, corpus, planted, _ = small_corpus
    texts = corpus.column("text").to_pylist()
    pairs = np.stack([planted["doc_a"].to_numpy(), planted["doc_b"].to_numpy()], axis=1)
    truth = Truth(target / "corpus", tmp_path / "truth.parquet")
    scored = truth.compute(pairs)
    expected = [
        jaccard(
            np.unique(shingle_hashes(words(texts[a]))), np.unique(shingle_hashes(words(texts[b])))
        )
        for a, b in pairs
    ]
    assert scored.tolist() == expected
    assert Truth(target / "corpus", tmp_path / "truth.parquet").known == truth.known


def test_quality_of_a_run_reporting_the_planted_pairs(small_corpus, tmp_path) -> None:
    target, _, planted, _ = small_corpus
    truth = Truth(target / "corpus", tmp_path / "truth.parquet")
    planted_pairs = np.stack([planted["doc_a"].to_numpy(), planted["doc_b"].to_numpy()], axis=1)
    runs = {"planted": planted_pairs, "none": np.zeros((0, 2), dtype=np.int64)}
    quality, described = evaluate(truth, runs, planted_pairs, sample=500, seed=1)
    reps = truth.groups.rep[planted_pairs]
    distinct = {(min(a, b), max(a, b)) for a, b in reps.tolist() if a != b}
    exact = truth.compute(np.array(sorted(distinct)))
    q = quality["planted"]
    assert q.reported == len(distinct)
    assert q.precision_50 == np.mean(exact >= 0.5)
    assert q.recall_80 == 1.0  # nothing else at 0.8 or above: the sample is of unrelated pairs
    assert quality["none"].reported == 0 and quality["none"].recall_50 == 0.0
    assert sum(described["bin_counts"]) == described["pairs_evaluated"]
    assert q.acceptance[-1] == 1.0


def test_copies_are_linked_through_their_representative_or_not_at_all(small_corpus) -> None:
    target, _, _, _ = small_corpus
    groups = exact_groups(target / "corpus")
    copies = np.flatnonzero(groups.rep != np.arange(len(groups.rep)))
    star = np.stack([groups.rep[copies], copies], axis=1)
    assert copies_linked(star, groups) == 1.0
    assert copies_linked(star[1:], groups) == (len(copies) - 1) / len(copies)
    chain = np.stack([copies[:-1], copies[1:]], axis=1)  # copies linked to each other, not the rep
    same_group = groups.rep[chain[:, 0]] == groups.rep[chain[:, 1]]
    assert copies_linked(chain[same_group], groups) < 1.0
