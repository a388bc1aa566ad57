"""shingling.fast.postings: every pair of a posting, scored as the library's estimators score it."""

from __future__ import annotations

import random
from collections import defaultdict
from functools import cache

import numba
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testdata import licence_words, light_edits, sample_corpus

from shingling import pairs
from shingling.estimators import containment, jaccard, matches
from shingling.fast import estimators, postings
from shingling.fast.postings import (
    JoinWork,
    pack,
    score_pair_batch,
    score_sorted_batches,
    score_table,
    sketch_arrays,
)
from shingling.normalize import words
from shingling.sketch import Sketch, sketch

K = 20


@cache
def sketches(sample_mod: int = 0) -> dict[str, Sketch]:
    """Every 20th document of the sample corpus and a lightly edited copy or an excerpt of each."""
    rng = random.Random(7)
    texts = {}
    for doc_id, text in sample_corpus()[::20]:
        texts[doc_id] = text
        passage = words(text)
        if len(passage) > 40 and rng.random() < 0.5:
            start = rng.randrange(len(passage) // 2)
            texts[f"{doc_id}-part"] = " ".join(passage[start : start + len(passage) // 2])
        else:
            edited = light_edits(passage, 0.05, list(licence_words()), rng)
            texts[f"{doc_id}-edit"] = " ".join(edited)
    return {d: sketch(t, width=4, k=K, sample_mod=sample_mod) for d, t in texts.items()}


def posting_rows(found: dict[str, Sketch], ids: dict[str, object] | None = None) -> pa.Table:
    """Rows (hash, doc_id, n_shingles, sketch) of every hash of every sketch, sorted by hash."""
    rows = sorted((h, d) for d, s in found.items() for h in s.hashes)
    return pa.table(
        {
            "hash": pa.array([h for h, _ in rows], pa.int64()),
            "doc_id": [ids[d] if ids else d for _, d in rows],
            "n_shingles": pa.array([found[d].n_shingles for _, d in rows], pa.int64()),
            "sketch": pa.array([list(found[d].hashes) for _, d in rows], pa.list_(pa.int64())),
        }
    )


def estimators_scores(a: Sketch, b: Sketch, threshold: float, within: float | None) -> dict:
    """What shingling.estimators and shingling.pairs give a pair, in a scored row's columns."""
    return {
        "matches": matches(a, b),
        "jaccard": jaccard(a, b),
        "containment_a": containment(a, b),
        "containment_b": containment(b, a),
        "shingles_a": a.n_shingles,
        "shingles_b": b.n_shingles,
        "relation": relation(a, b, threshold, within),
    }


def assert_scored_as_the_estimators(
    row: dict, a: Sketch, b: Sketch, threshold: float, within: float | None
) -> None:
    """A scored pair's row holds what shingling.estimators and shingling.pairs give, bit for bit."""
    want = estimators_scores(a, b, threshold, within)
    assert {c: row[c] for c in want} == want


def pair_rows(found: dict[str, Sketch], chosen: list[tuple[str, str]]) -> pa.Table:
    """Rows (doc_a, doc_b, sketch_a, sketch_b, shingles_a, shingles_b) of the chosen pairs."""
    return pa.table(
        {
            "doc_a": [a for a, _ in chosen],
            "doc_b": [b for _, b in chosen],
            "sketch_a": pa.array([list(found[a].hashes) for a, _ in chosen], pa.list_(pa.int64())),
            "sketch_b": pa.array([list(found[b].hashes) for _, b in chosen], pa.list_(pa.int64())),
            "shingles_a": [found[a].n_shingles for a, _ in chosen],
            "shingles_b": [found[b].n_shingles for _, b in chosen],
        }
    )


def relation(a: Sketch, b: Sketch, threshold: float, within: float | None) -> str | None:
    return pairs.relation(
        jaccard(a, b),
        containment(a, b),
        containment(b, a),
        threshold=threshold,
        containment_threshold=within,
    )


@pytest.mark.parametrize("sample_mod", [0, 4])
def test_every_pair_of_every_posting_is_scored_as_the_estimators_score_it(sample_mod: int) -> None:
    found = sketches(sample_mod)
    out = score_table(
        posting_rows(found), k=K, threshold=0.6, containment_threshold=0.5
    ).to_pylist()
    shared = defaultdict(int)  # (a, b) -> the hashes they share: one row per shared hash
    by_hash = defaultdict(list)
    for d, s in found.items():
        for h in s.hashes:
            by_hash[h].append(d)
    for docs in by_hash.values():
        for i, x in enumerate(docs):
            for y in docs[i + 1 :]:
                shared[min(x, y), max(x, y)] += 1
    assert len(out) == sum(shared.values()) > 1000
    near = 0
    want: dict[tuple[str, str], dict] = {}  # a pair has one row per shared hash: scored once here
    for row in out:
        a, b = row["doc_a"], row["doc_b"]
        assert a < b
        if (a, b) not in want:
            want[a, b] = estimators_scores(found[a], found[b], 0.6, 0.5)
        assert {c: row[c] for c in want[a, b]} == want[a, b]
        assert row["star"] is False
        near += row["relation"] == "near_duplicate"
    assert near >= 10


@pytest.mark.parametrize("sample_mod", [0, 4])
@pytest.mark.parametrize("within", [None, 0.5])
def test_pairs_given_with_their_sketches_are_scored_as_the_estimators_score_them(
    sample_mod: int, within: float | None
) -> None:
    # the excerpt candidates' scorer: any pairs, sharing a hash or not, each scored once
    found = sketches(sample_mod)
    ids = sorted(found)
    chosen = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :]]
    out = score_pair_batch(
        pair_rows(found, chosen), k=K, threshold=0.6, containment_threshold=within
    ).to_pylist()
    assert len(out) == len(chosen) > 1000
    for row, (x, y) in zip(out, chosen, strict=True):
        assert (row["doc_a"], row["doc_b"]) == (x, y)
        assert_scored_as_the_estimators(row, found[x], found[y], 0.6, within)
    # the pairs of each document and its own edit or excerpt: near-duplicates and excerpts
    kin = [(d, e) for d in ids for e in (f"{d}-edit", f"{d}-part") if e in found]
    out = score_pair_batch(
        pair_rows(found, kin), k=K, threshold=0.6, containment_threshold=within
    ).to_pylist()
    got = [row["relation"] for row in out]
    assert got == [relation(found[a], found[b], 0.6, within) for a, b in kin]
    assert got.count("near_duplicate") >= 10
    assert within is None or got.count("b_in_a") >= 5


@pytest.mark.parametrize("threshold", [0.3, 0.6, 0.75])
def test_the_test_before_scoring_drops_only_pairs_below_the_threshold(threshold: float) -> None:
    found = sketches()
    rows = posting_rows(found)
    everything = score_table(rows, k=K, threshold=threshold, containment_threshold=0.0)
    tested = score_table(rows, k=K, threshold=threshold)
    reaching = {
        (r["doc_a"], r["doc_b"]) for r in everything.to_pylist() if r["jaccard"] >= threshold
    }
    kept = {(r["doc_a"], r["doc_b"]) for r in tested.to_pylist()}
    assert len(reaching) >= 5
    assert reaching <= kept
    assert tested.num_rows < everything.num_rows  # and it drops candidates
    assert all(r["relation"] in (None, "near_duplicate") for r in tested.to_pylist())


@pytest.mark.parametrize("floor", [0.5, 0.8])
def test_the_size_floor_drops_exactly_the_pairs_whose_sizes_cannot_reach_it(floor: float) -> None:
    # the sample's excerpts are half their documents: pairs of very different sizes to refuse
    found = sketches()
    rows = posting_rows(found)
    work, floored_work = JoinWork(), JoinWork()
    every = score_table(rows, k=K, threshold=0.3, work=work).to_pylist()
    floored = score_table(rows, k=K, threshold=0.3, size_floor=floor, work=floored_work)
    fit = [r for r in every if pairs.sizes_may_reach(r["shingles_a"], r["shingles_b"], floor)]
    assert 0 < len(fit) < len(every)
    assert floored.to_pylist() == fit  # the same rows, in the same order, scored the same
    assert floored_work.tested == work.tested  # met as before, refused before the signatures
    assert floored_work.signature_passes < work.signature_passes
    # not with a containment threshold: an excerpt's sizes are far apart by nature
    within = {"k": K, "threshold": 0.3, "containment_threshold": 0.5}
    assert score_table(rows, **within, size_floor=floor).equals(score_table(rows, **within))


def test_a_posting_over_the_cap_is_a_star_around_its_first_id() -> None:
    s = Sketch((1, 2), n_shingles=2, width=4, k=K)
    found = {"r": s, "q": s, "s": s, "p": s}
    rows = posting_rows(found)  # hashes 1 and 2, each in four rows
    out = score_table(rows, k=K, threshold=0.6, max_posting=3).to_pylist()
    assert sorted((r["doc_a"], r["doc_b"], r["star"]) for r in out) == [
        ("p", "q", True),
        ("p", "q", True),
        ("p", "r", True),
        ("p", "r", True),
        ("p", "s", True),
        ("p", "s", True),
    ]
    assert len(score_table(rows, k=K, threshold=0.6, max_posting=4)) == 12  # at the cap: all


def test_integer_ids_are_ordered_as_numbers() -> None:
    s = Sketch((1, 2), n_shingles=2, width=4, k=K)
    rows = posting_rows({"x": s, "y": s, "z": s}, ids={"x": 10, "y": 9, "z": -3})
    out = score_table(rows, k=K, threshold=0.6).to_pylist()
    assert {(r["doc_a"], r["doc_b"]) for r in out} == {(-3, 9), (-3, 10), (9, 10)}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_postings_split_across_batches_give_the_same_pairs(cuts: list[int]) -> None:
    rows = posting_rows(dict(list(sketches().items())[:60]))
    whole = score_table(rows, k=K, threshold=0.3, containment_threshold=0.0).to_pylist()
    bounds = sorted({0, rows.num_rows, *(c % (rows.num_rows + 1) for c in cuts)})
    batches = [
        rows.slice(a, b - a).combine_chunks().to_batches()[0]
        for a, b in zip(bounds, bounds[1:], strict=False)
        if b > a
    ]
    streamed = [
        r
        for out in score_sorted_batches(batches, k=K, threshold=0.3, containment_threshold=0.0)
        for r in out.to_pylist()
    ]
    key = lambda r: (r["doc_a"], r["doc_b"], r["matches"])  # noqa: E731
    assert sorted(streamed, key=key) == sorted(whole, key=key)


int64s = st.integers(-(2**63), 2**63 - 1)


@given(
    st.lists(st.one_of(st.none(), st.lists(int64s, max_size=30)), max_size=40),
    st.integers(0, 40),
    st.integers(0, 40),
)
def test_packed_sketches_read_back_as_the_lists(
    sketches: list[list[int] | None], start: int, length: int
) -> None:
    lists = pa.array(sketches, pa.list_(pa.int64())).slice(start, length)
    packed = pack(lists)
    assert packed.type == pa.binary() and len(packed) == len(lists)
    assert packed.is_null().to_pylist() == lists.is_null().to_pylist()
    for column in (packed, packed.slice(min(1, len(packed)))):
        offsets, values = sketch_arrays(column)
        got = [values[offsets[i] : offsets[i + 1]].tolist() for i in range(len(column))]
        wanted = [s or [] for s in lists.slice(len(lists) - len(column)).to_pylist()]
        assert got == wanted


def test_scores_of_packed_rows_equal_those_of_lists() -> None:
    rows = posting_rows(sketches())
    packed = rows.set_column(3, "sketch", pack(rows.column("sketch")))
    scoring = {"k": K, "threshold": 0.3, "containment_threshold": 0.0}
    assert score_table(packed, **scoring).equals(score_table(rows, **scoring))


@numba.njit(cache=False)
def _signature_verdicts(values, offsets, k, threshold):  # type: ignore[no-untyped-def]
    """Over every pair of rows: (pairs the intersection passes that the signatures refuse,
    pairs the signatures refuse)."""
    n = len(offsets) - 1
    signatures = np.zeros((n, postings.SIGNATURE_WORDS + 1), dtype=np.uint64)
    for i in range(n):
        postings.sign(values, offsets, i, k, signatures[i])
    lost, refused = 0, 0
    for i in range(n):
        for j in range(i + 1, n):
            signed = postings.signatures_may_reach(signatures, offsets, i, j, k, threshold)
            refused += not signed
            lost += (
                estimators.may_reach(values, offsets, i, values, offsets, j, k, threshold)
                and not signed
            )
    return lost, refused


@pytest.mark.parametrize("sample_mod", [0, 4])
@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.8])
def test_the_signatures_never_refuse_a_pair_the_intersection_passes(
    sample_mod: int, threshold: float
) -> None:
    # real sketches and their edited copies: near-duplicate pairs share most hashes, and two
    # shared hashes often fall on one bit of the signatures (the case a bound must count)
    found = list(sketches(sample_mod).values())
    offsets, values = sketch_arrays(pa.array([list(s.hashes) for s in found], pa.list_(pa.int64())))
    lost, refused = _signature_verdicts(values, offsets, K, threshold)
    pairs_of_rows = len(found) * (len(found) - 1) // 2
    assert lost == 0
    assert refused > pairs_of_rows // 2  # and it does refuse most pairs


@numba.njit(cache=False)
def _may_reach_all(values, offsets, k, threshold):  # type: ignore[no-untyped-def]
    """The compiled test over every pair of rows, as a flat array (i < j, row-major)."""
    n = len(offsets) - 1
    out = np.zeros(n * (n - 1) // 2, dtype=np.bool_)
    at = 0
    for i in range(n):
        for j in range(i + 1, n):
            out[at] = estimators.may_reach(values, offsets, i, values, offsets, j, k, threshold)
            at += 1
    return out


def _reference_may_reach(rows: list[list[int]], k: int, threshold: float) -> list[bool]:
    return [
        pairs.may_reach(rows[i], rows[j], k, threshold)
        for i in range(len(rows))
        for j in range(i + 1, len(rows))
    ]


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.8])
def test_the_compiled_may_reach_is_the_reference_on_real_sketches(threshold: float) -> None:
    rows = [list(s.hashes) for s in sketches(4).values()]  # mod-m sketches: longer than k too
    offsets, values = sketch_arrays(pa.array(rows, pa.list_(pa.int64())))
    got = _may_reach_all(values, offsets, K, threshold)
    expected = _reference_may_reach(rows, K, threshold)
    assert got.tolist() == expected
    assert 0 < sum(expected) < len(expected)  # both answers occur


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(-50, 50), max_size=12, unique=True).map(sorted),
        min_size=2,
        max_size=8,
    ),
    st.integers(1, 10),
    st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 1.0]),
)
def test_the_compiled_may_reach_is_the_reference_on_any_sketches(
    rows: list[list[int]], k: int, threshold: float
) -> None:
    offsets, values = sketch_arrays(pa.array(rows, pa.list_(pa.int64())))
    got = _may_reach_all(values, offsets, k, threshold)
    assert got.tolist() == _reference_may_reach(rows, k, threshold)
