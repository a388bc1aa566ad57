"""The benchmark corpus: deterministic, real sentences, planted pairs and skew as described."""

from __future__ import annotations

import doctest
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401
import pyarrow.parquet as pq

import bench.corpus
import bench.peers.shingle_lists
import bench.truth
from bench.corpus import (
    BOILERPLATE_SHARE,
    HOSTILE_BLOCKS,
    HOT_SHARE,
    CorpusSpec,
    Generator,
    build,
    generate,
    generate_hostile,
    prose_sentences,
)
from bench.truth import jaccard
from shingling.normalize import normalize_array
from shingling.sketch import shingle_hashes


def _shingle_sets(texts: list[str]) -> list[np.ndarray]:
    """Each text's distinct shingle hashes, the texts normalized in one batch (a call per text
    costs milliseconds each)."""
    return [
        np.unique(np.array(shingle_hashes(t.split(" ") if t else []), dtype=np.int64))
        for t in normalize_array(pa.array(texts, type=pa.string())).to_pylist()
    ]


def _shingles(text: str) -> np.ndarray:
    return _shingle_sets([text])[0]


def test_bench_doctests_pass() -> None:
    for module in (bench.corpus, bench.truth, bench.peers.shingle_lists):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__


def test_prose_sentences_drop_code_and_markup() -> None:
    text = (
        "Use x = 1 here. See <http://x.org>.\n\nThis license applies to every file of the package."
    )
    assert list(prose_sentences(text)) == ["This license applies to every file of the package."]


def test_same_seed_same_corpus_other_seed_other_corpus(pool: list[str]) -> None:
    first, planted, _ = generate(CorpusSpec(docs=60, seed=3), pool)
    again, planted_again, _ = generate(CorpusSpec(docs=60, seed=3), pool)
    other, _, _ = generate(CorpusSpec(docs=60, seed=4), pool)
    assert first.equals(again) and planted.equals(planted_again)
    assert not first.column("text").equals(other.column("text"))


def test_documents_are_made_of_pool_sentences(small_corpus, pool: list[str]) -> None:
    _, corpus, _, meta = small_corpus
    known = set(pool)
    text = corpus.column("text")[0].as_py()
    first_sentence = next(s for s in known if text.startswith(s)) if text else None
    assert first_sentence is not None
    assert corpus.column("doc_id").to_pylist() == list(range(200))
    assert 1_000 < meta["mean_doc_bytes"] < 2_000


def test_planted_pairs_are_near_duplicates_and_copies_are_identical(small_corpus) -> None:
    _, corpus, planted, meta = small_corpus
    # the skew's boilerplate paragraph may have landed in either member: compare without it
    texts = [
        " ".join(t.replace(meta["boilerplate"], "").split())
        for t in corpus.column("text").to_pylist()
    ]
    rows = planted.to_pylist()
    assert all(r["doc_a"] < r["doc_b"] for r in rows)
    assert sum(r["family"] >= 0 for r in rows) == 3 * 20
    assert sum(r["relation"] == "source~exact" for r in rows) > 0
    for r in rows:
        a, b = texts[r["doc_a"]], texts[r["doc_b"]]
        if r["relation"] == "source~exact":
            assert a == b
        elif r["relation"].startswith("source~") and "excerpt" not in r["relation"]:
            # one edit of the source: some shingles survive, whatever the kind and rate
            assert jaccard(_shingles(a), _shingles(b)) > 0.1, r


def test_substitution_rate_sets_the_expected_jaccard(pool: list[str]) -> None:
    gen = Generator(pool, seed=11)
    doc = gen.base(scale=3.0)
    source = _shingles("\n\n".join(" ".join(p) for p in doc))
    assert jaccard(source, _shingles(gen.variant(doc, "substitute", 0.0))) == 1.0
    # a rate r leaves about (1-r)^4 / (2 - (1-r)^4) of the union shared: 0.85 at 0.02, 0.26 at 0.2
    assert 0.75 < jaccard(source, _shingles(gen.variant(doc, "substitute", 0.02))) < 0.95
    assert 0.15 < jaccard(source, _shingles(gen.variant(doc, "substitute", 0.2))) < 0.4


def test_skew_adds_one_hot_page_and_a_boilerplate_paragraph_and_nothing_else(
    pool: list[str],
) -> None:
    skewed, planted, meta = generate(CorpusSpec(docs=200, seed=7, skew=True), pool)
    clean, planted_clean, _ = generate(CorpusSpec(docs=200, seed=7, skew=False), pool)
    families = planted.filter(pa.compute.greater_equal(planted["family"], 0))
    assert families.equals(planted_clean)
    negatives = planted.filter(pa.compute.equal(planted["family"], -1)).to_pylist()
    assert negatives and all(
        meta["boilerplate"] in s_text
        for r in negatives
        for s_text in (skewed["text"][r["doc_a"]].as_py(), skewed["text"][r["doc_b"]].as_py())
    )
    s, c = skewed.column("text").to_pylist(), clean.column("text").to_pylist()
    values, counts = np.unique(np.array(s, dtype=object), return_counts=True)
    hot = values[np.argmax(counts)]
    assert counts.max() == int(200 * HOT_SHARE)
    with_boilerplate = [i for i, t in enumerate(s) if meta["boilerplate"] in t]
    assert len(with_boilerplate) == int(200 * BOILERPLATE_SHARE)
    changed = {i for i in range(200) if s[i] != c[i]}
    assert changed == {i for i, t in enumerate(s) if t == hot} | set(with_boilerplate)
    for i in with_boilerplate:
        assert s[i].replace(meta["boilerplate"], "").split() == c[i].split()


def test_written_corpus_reads_back_with_the_input_contract(small_corpus) -> None:
    target, corpus, _, _ = small_corpus
    read = pq.read_table(target / "corpus")
    assert (
        read.schema.field("doc_id").type == "int64" and read.schema.field("text").type == "string"
    )
    assert read.sort_by("doc_id").equals(corpus)
    assert len(list((target / "corpus").glob("*.parquet"))) == 2


def test_a_large_corpus_is_written_in_shards_sharing_its_skew(
    pool: list[str], tmp_path, monkeypatch
) -> None:
    # the shards of a corpus too large for memory: unique ids, planted pairs within each shard,
    # one hot page and one boilerplate paragraph for all; and a whole corpus stays as it was
    monkeypatch.setattr(bench.corpus, "SHARD_DOCS", 100)
    spec = CorpusSpec(docs=250, seed=5, skew=True)
    monkeypatch.setattr(bench.corpus, "load_pool", lambda work: pool)
    corpus = build(spec, tmp_path)
    table = pq.read_table(corpus.path)
    ids = table.column("doc_id").to_numpy()
    assert sorted(ids.tolist()) == list(range(250))
    planted = pq.read_table(corpus.planted)
    shard_of = {int(i): int(i) // 100 for i in ids}
    family = planted.filter(pa.compute.greater_equal(planted.column("family"), 0))
    assert family.num_rows > 0
    assert all(
        shard_of[a] == shard_of[b]
        for a, b in zip(
            family.column("doc_a").to_pylist(), family.column("doc_b").to_pylist(), strict=True
        )
    )
    texts = dict(zip(ids.tolist(), table.column("text").to_pylist(), strict=True))
    boilerplate = corpus.meta["boilerplate"]
    assert all(
        any(boilerplate in texts[i] for i in range(s * 100, min(250, (s + 1) * 100)))
        for s in range(3)
    )
    hot = [n for _, n in Counter(texts.values()).items() if n > 5]
    # the one hot page: 5% of each shard's documents (100, 100 and 50)
    assert hot == [corpus.meta["hot_page_copies"]] == [5 + 5 + 2]
    assert corpus.meta["documents"] == 250 and corpus.meta["shards"] == 3
    # a corpus of one shard is generated whole, as before the shards
    whole, _, _ = generate(CorpusSpec(docs=100, seed=5), pool)
    again, _, _ = generate(CorpusSpec(docs=100, seed=5), pool, skew_seed=5)
    assert whole.equals(again)


def test_the_denser_recipe_spreads_its_pairs_over_jaccard_03_to_1(pool: list[str]) -> None:
    spec = CorpusSpec(docs=2000, seed=5, dense=True)
    corpus, planted, meta = generate(spec, pool)
    assert spec.key.endswith("-dense") and corpus.num_rows == 2000
    family = planted.filter(pa.compute.greater_equal(planted["family"], 0))
    assert family.num_rows == 200 and meta["family_documents"] == 400  # a fifth of the corpus
    assert meta["hot_page_copies"] == 0 and meta["boilerplate_documents"] == 60  # 3%
    texts = dict(zip(corpus["doc_id"].to_pylist(), corpus["text"].to_pylist(), strict=True))
    scores = np.array(
        [
            jaccard(_shingles(texts[a]), _shingles(texts[b]))
            for a, b in zip(family["doc_a"].to_pylist(), family["doc_b"].to_pylist(), strict=True)
        ]
    )
    # spread evenly: every tenth of 0.3 to 1.0 holds some pairs, none holds most of them
    counts = np.histogram(scores, bins=7, range=(0.25, 1.0))[0]
    assert (counts > 5).all() and counts.max() < 0.3 * len(scores), counts


def test_the_hostile_recipe_reuses_paragraphs_blocks_a_template_and_near_copy_families(
    pool: list[str],
) -> None:
    spec = CorpusSpec(docs=6000, seed=5, hostile=True)
    corpus, planted, meta = generate_hostile(spec, pool)
    assert spec.key.endswith("-hostile") and corpus.num_rows == 6000
    texts = corpus["text"].to_pylist()
    paragraphs = Counter(p for t in texts for p in set(t.split("\n\n")))
    shared = sorted(paragraphs.values(), reverse=True)
    # each block in as many documents as its size (the template's two paragraphs in a tenth)
    for count in HOSTILE_BLOCKS:
        assert count in shared
    assert shared.count(6000 // 10) >= 2
    # the reused paragraphs: many paragraphs in a few documents each, none of the fresh ones
    reused = [c for c in shared if 2 <= c < 100]
    assert len(reused) > 1000
    # one family of near copies (1% of 6,000): its planted pairs are near-duplicates, once the
    # blocks and the template (here in more documents than the family) are left out
    assert meta["families"] == 1 and meta["family_documents"] == 60
    common = {p for p, c in paragraphs.items() if c >= 6000 // 10}

    def content(text: str) -> str:
        return "\n\n".join(p for p in text.split("\n\n") if p not in common)

    listed = list(zip(planted["doc_a"].to_pylist(), planted["doc_b"].to_pylist(), strict=True))
    ids = sorted({d for pair in listed for d in pair})
    text_of = dict(zip(corpus["doc_id"].to_pylist(), texts, strict=True))
    sets = dict(zip(ids, _shingle_sets([content(text_of[i]) for i in ids]), strict=True))
    scores = [jaccard(sets[a], sets[b]) for a, b in listed]
    assert len(scores) > 100 and np.median(scores) > 0.6
    again, _, _ = generate_hostile(spec, pool)
    assert again.equals(corpus)
