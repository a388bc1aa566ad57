"""shingling.fast.probe: the nightly join finds every pair the estimators score at the threshold."""

from __future__ import annotations

import random
from functools import cache

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testdata import licence_words, light_edits, sample_corpus

from shingling.estimators import containment, jaccard, matches
from shingling.fast.probe import ProbeTable, slices
from shingling.fast.sketch import sketch_batch
from shingling.normalize import words
from shingling.sketch import Sketch

K = 20


@cache
def documents() -> pa.Table:
    """Every 4th document of the sample corpus, with edited copies, excerpts and exact copies
    (documents table columns, sketched as the jobs sketch them)."""
    rng = random.Random(11)
    texts: dict[str, str] = {}
    for doc_id, text in sample_corpus()[::4]:
        texts[doc_id] = text
        passage = words(text)
        roll = rng.random()
        if roll < 0.3:
            texts[f"{doc_id}-edit"] = " ".join(
                light_edits(passage, 0.03, list(licence_words()), rng)
            )
        elif roll < 0.45:
            texts[f"{doc_id}-copy"] = text.upper()  # the same normalized text
        elif roll < 0.6 and len(passage) > 40:
            texts[f"{doc_id}-part"] = " ".join(passage[: len(passage) * 3 // 4])
    ids = list(texts)
    out = sketch_batch(pa.array([texts[d] for d in ids]), width=4, k=K)
    table = pa.table(
        {
            "doc_id": ids,
            "n_shingles": pa.array(out.n_shingles, pa.int64()),
            "sketch": out.sketch,
            "text_hash": out.text_hash,
            "n_words": pa.array(out.n_words, pa.int64()),
        }
    )
    return table.filter(pa.compute.is_valid(table["sketch"]))


def as_sketch(row: dict) -> Sketch:
    return Sketch(tuple(row["sketch"]), row["n_shingles"], 4, K)


def split(table: pa.Table, seed: int, share: float) -> tuple[pa.Table, pa.Table]:
    """A batch (one row per distinct text, as the job gives it) and the rest."""
    rng = random.Random(seed)
    chosen = [rng.random() < share for _ in range(table.num_rows)]
    batch = table.filter(pa.array(chosen))
    seen: set[tuple[int, int]] = set()
    keep = []
    for row in batch.to_pylist():
        key = (row["text_hash"], row["n_words"])
        keep.append(key not in seen)
        seen.add(key)
    return batch.filter(pa.array(keep, pa.bool_())), table.filter(pa.array([not c for c in chosen]))


def probing(index: pa.Table, batch: pa.Table) -> pa.Table:
    flagged = [
        t.append_column("in_batch", pa.array([flag] * t.num_rows, pa.bool_())) for t, flag in
        ((index, False), (batch, True))
    ]  # fmt: skip
    return pa.concat_tables(flagged)


def expected(
    index: pa.Table, batch: pa.Table, threshold: float, held: pa.Table | None = None
) -> tuple[dict, set]:
    """Brute force: every (batch text held, probing document) at the threshold, with the
    estimators' scores; and the indexed exact copies of batch texts. ``held``: the part of the
    batch in the table (None: all of it)."""
    held = batch if held is None else held
    texts = {(r["text_hash"], r["n_words"]) for r in batch.to_pylist()}
    pairs = {}
    copies = set()
    for y in probing(index, batch).to_pylist():
        if not y["in_batch"] and (y["text_hash"], y["n_words"]) in texts:
            copies.add(y["doc_id"])
            continue
        for b in held.to_pylist():
            if b["doc_id"] == y["doc_id"]:
                continue
            sb, sy = as_sketch(b), as_sketch(y)
            if jaccard(sb, sy) >= threshold:
                pairs[b["doc_id"], y["doc_id"]] = (
                    matches(sb, sy),
                    jaccard(sb, sy),
                    containment(sb, sy),
                    containment(sy, sb),
                    b["n_shingles"],
                )
    return pairs, copies


def found(table: ProbeTable, rows: pa.Table, cut: int) -> tuple[dict, set]:
    pairs, copies = {}, set()
    batches = [rows.slice(i, cut) for i in range(0, rows.num_rows, cut)]
    for batch in batches:
        for r in table.probe(batch).to_pylist():
            if r["probe_id"] is None:
                copies.add(r["doc_id"])
                continue
            key = (r["probe_id"], r["doc_id"])
            assert key not in pairs, f"{key} found twice"
            pairs[key] = (
                r["matches"],
                r["jaccard"],
                r["containment_a"],
                r["containment_b"],
                r["shingles_a"],
            )
    return pairs, copies


@pytest.mark.parametrize("threshold", [0.3, 0.6, 0.9])
def test_every_pair_at_the_threshold_is_found_once_with_the_estimators_scores(
    threshold: float,
) -> None:
    batch, index = split(documents(), seed=1, share=0.2)
    want_pairs, want_copies = expected(index, batch, threshold)
    table = ProbeTable(batch, k=K, threshold=threshold)
    got_pairs, got_copies = found(table, probing(index, batch), cut=97)
    assert got_pairs == want_pairs
    assert got_copies == want_copies
    # the corpus has what the test is about: pairs with the index and within the batch, copies
    in_batch = set(batch["doc_id"].to_pylist())
    assert any(y not in in_batch for _, y in got_pairs)
    assert threshold > 0.6 or any(y in in_batch for _, y in got_pairs)
    assert got_copies


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    share=st.floats(0.05, 0.5),
    cut=st.integers(1, 400),
    sliced=st.booleans(),
)
def test_any_batch_and_any_cut_of_the_probing_rows_gives_the_brute_force_pairs(
    seed: int, share: float, cut: int, sliced: bool
) -> None:
    batch, index = split(documents(), seed=seed, share=share)
    # sliced: the table holds every other batch text, and knows all of them (copies of any are
    # copies); the rest of the batch still probes it
    held = batch.take(list(range(0, batch.num_rows, 2))) if sliced else batch
    table = ProbeTable(held, k=K, threshold=0.5, texts=batch if sliced else None)
    got = found(table, probing(index, batch), cut=cut)
    assert got == expected(index, batch, 0.5, held)


def test_an_empty_batch_finds_nothing() -> None:
    batch, index = split(documents(), seed=3, share=0.0)
    table = ProbeTable(batch, k=K, threshold=0.5)
    assert len(table) == 0
    assert table.probe(probing(index, batch)).num_rows == 0


def test_slices_hold_at_most_the_configured_documents() -> None:
    assert slices(0, 100) == 1
    assert slices(100, 100) == 1
    assert slices(101, 100) == 2
    assert slices(10_000, 3_000) == 4
