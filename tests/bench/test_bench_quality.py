"""bench.quality: the exact truth against a brute force, the metrics on literal cases, and the
corpus builder's determinism. Small inputs only (seconds)."""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from bench.quality import corpora, dedup, run
from bench.quality.exact import (
    ShingleSets,
    all_pairs,
    brute_force,
    check_sample,
    compute,
    plain_shingle_sets,
)
from bench.quality.metrics import evaluate, level, scored_codes
from bench.truth import Groups, shingle_sets
from shingling.decision import Link, decide, priority_order

LICENCES = Path("/usr/share/common-licenses")


def licence_docs() -> list[tuple[str, str]]:
    """The common licences (GPL-2/GPL-3, LGPL-2/2.1/3, GFDL-1.2/1.3: natural near-duplicates) and
    the stanzas of 40 Debian copyright files (the same licence texts, varied)."""
    docs: list[tuple[str, str]] = []
    for path in sorted(Path("/usr/share/doc").glob("*/copyright"))[:40]:
        docs += corpora.copyright_stanzas(path)
    for path in sorted(p for p in LICENCES.iterdir() if p.is_file()):
        text = corpora._read(path)
        if text is not None:
            docs.append((str(path), text))
    return corpora.select(docs, 20, 10_000)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not LICENCES.is_dir():
        pytest.skip("no /usr/share/common-licenses on this machine")
    target = tmp_path_factory.mktemp("quality") / "corpus.parquet"
    docs = licence_docs()
    # two exact copies (same normalized text), to exercise the groups
    docs += [("copy-1", docs[0][1].upper()), ("copy-2", docs[0][1] + " !")]
    corpora.write_corpus(docs, target)
    return target


def sets_of(rows: list[list[int]]) -> ShingleSets:
    sizes = [len(r) for r in rows]
    return ShingleSets(
        np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        np.concatenate([np.unique(np.array(r, dtype=np.int64)) for r in rows]),
    )


def test_join_boundaries_are_exact() -> None:
    """J = 0.3 exactly and containment = 0.8 exactly are kept; just below is not."""
    a = list(range(1, 11))
    sets = sets_of(
        [
            a,
            [1, 2, 3],  # J(0, 1) = 3/10 = 0.3 exactly; containment 1.0
            [1, 2, 3, *range(11, 18)],  # J(0, 2) = 3/17; containment 0.3
            [1, 2, 3, 4, 101],  # J(0, 3) = 4/11 = 0.36; containment of doc 3 in 0: 0.8 exactly
            [11, 12, 13, 201, 202, 203, 204],  # with doc 2: 3/14 = 0.21, containment 3/7 = 0.43
        ]
    )
    truth = all_pairs(sets, np.arange(5))
    found = {
        (int(x), int(y)): int(o) for x, y, o in zip(truth.a, truth.b, truth.overlap, strict=True)
    }
    assert found == brute_force(sets, np.arange(5))
    assert (0, 1) in found and (0, 3) in found and (1, 3) in found
    assert (0, 2) not in found and (2, 4) not in found


def test_truth_equals_brute_force_on_licence_texts(small: Path, tmp_path: Path) -> None:
    truth = compute(small, tmp_path)
    reps = truth.representatives()
    rep = truth.groups.rep
    assert rep[-1] == rep[-2] == rep[0] == 0  # the two copies are grouped with the first document
    assert len(reps) < truth.n - 2  # and the licence texts hold copies of their own
    expected = brute_force(truth.sets, reps)
    found = {
        (int(a), int(b)): int(o)
        for a, b, o in zip(truth.pairs.a, truth.pairs.b, truth.pairs.overlap, strict=True)
    }
    assert found == expected
    assert len(found) > 20  # the licences and stanzas hold near-duplicates
    j = truth.pairs.jaccard
    assert (j < 0.5).any() and ((j >= 0.5) & (j < 0.9)).any()  # spread, not only copies
    assert check_sample(truth, 60, seed=3)["agree"]


def test_shingle_sets_are_bench_truths(small: Path) -> None:
    """The truth's shingle sets are those of bench/truth.py (the library's definitions)."""
    sets = plain_shingle_sets(small)
    ids = np.arange(0, len(sets.sizes), 7)
    reference = shingle_sets(small, ids)
    for doc_id in ids:
        assert np.array_equal(sets.get(int(doc_id)), reference[int(doc_id)])


def test_metrics_on_a_literal_case() -> None:
    # docs 0 and 2 are copies (group 0); 1, 3, 4 distinct texts
    groups = Groups(rep=np.array([0, 1, 0, 3, 4]), size=np.array([2, 1, 2, 1, 1]))
    n = 5
    truth_codes = np.array([0 * n + 1, 0 * n + 3, 3 * n + 4])  # (0,1) (0,3) (3,4)
    truth_j = np.array([0.9, 0.6, 0.3])
    # the run: (1, 2) is (0, 1) seen through a copy, scored 0.85 and 0.95 (max counts); (0, 2)
    # links the copy; (0, 4) is a false positive at 0.7; (0, 3) is scored 0.45 (below 0.5)
    pairs = np.array([[1, 2], [0, 1], [0, 2], [0, 4], [0, 3]])
    scores = np.array([0.95, 0.85, 1.0, 0.7, 0.45])
    codes, best = scored_codes(pairs, scores, groups)
    assert codes.tolist() == [1, 3, 4] and best.tolist() == [0.95, 0.45, 0.7]
    result = evaluate(pairs, scores, groups, truth_codes, truth_j)
    at50, at80 = result["levels"]
    assert (at50["reported"], at50["truth"], at50["hits"]) == (2, 2, 1)
    assert at50["precision"] == 0.5 and at50["recall"] == 0.5 and at50["f1"] == 0.5
    assert (at80["reported"], at80["truth"], at80["hits"]) == (1, 1, 1)
    assert at80["f1"] == 1.0
    assert result["reported"] == 3 and result["copies_linked"] == 1.0
    none = level(np.zeros(0, np.int64), np.zeros(0), truth_codes, truth_j, 0.8)
    assert none.precision is None and none.recall == 0.0 and none.f1 is None


def test_corpus_builder_is_deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not LICENCES.is_dir():
        pytest.skip("no /usr/share/common-licenses on this machine")
    spec = corpora.Spec("tiny", "licence texts", licence_docs, min_words=20, max_docs=50)
    monkeypatch.setitem(corpora.SPECS, "tiny", spec)
    first = corpora.build("tiny", work=tmp_path / "one")
    second = corpora.build("tiny", work=tmp_path / "two")
    assert first.meta["digest"] == second.meta["digest"]
    assert first.meta["documents"] == 50 < first.meta["found"]  # the deterministic subset
    one, two = pq.read_table(first.path), pq.read_table(second.path)
    assert one.equals(two)
    assert one["doc_id"].to_pylist() == list(range(50))
    assert one.schema.names == ["doc_id", "text", "source"]


def test_docstrings_of_a_module(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        'class A:\n    """Class doc."""\n\n    def f(self):\n        """Method doc."""\n\n'
        'def g():\n    if True:\n        def h():\n            """Nested doc."""\n'
    )
    assert list(corpora.docstrings(module, "m")) == [
        ("m::A", "Class doc."),
        ("m::A.f", "Method doc."),
        ("m::g.h", "Nested doc."),
    ]


def chain_case() -> tuple[dedup.Truth, dict[str, np.ndarray], np.ndarray]:
    """A tiny literal truth and pair table: (truth, pairs, text lengths).

    Documents: 0 ~ 1 ~ 2 a chain (J 0.6 and 0.6, J(0, 2) = 0.35 below the cut), 0 the longest;
    3 an exact copy of 1 (same normalized text); 4 ~ 5 at J 0.7, a pair the pair job missed;
    6 alone. The pair job's table (as it writes it): the chain, the copy paired with 1 (exact) and
    with 0 and 2 as 1 is, and (0, 2) at 0.35 (below the cut: not a link).
    """
    rep = np.array([0, 1, 2, 1, 4, 5, 6])
    truth = dedup.Truth.of(
        rep, np.array([0, 1, 0, 4]), np.array([1, 2, 2, 5]), np.array([0.6, 0.6, 0.35, 0.7])
    )
    pairs = {
        "a": np.array([0, 1, 0, 1, 0, 2]),
        "b": np.array([1, 2, 2, 3, 3, 3]),
        "jaccard": np.array([0.6, 0.6, 0.35, 1.0, 0.6, 0.6]),
        "exact": np.array([False, False, False, True, False, False]),
    }
    lengths = np.array([900, 500, 400, 480, 300, 300, 100])
    return truth, pairs, lengths


def test_truth_lookup_between_documents() -> None:
    truth, _, _ = chain_case()
    j = truth.pair_jaccard(np.array([3, 3, 0, 2, 5, 6]), np.array([1, 2, 2, 0, 4, 0]))
    assert j[:5].tolist() == [1.0, 0.6, 0.35, 0.35, 0.7] and np.isnan(j[5])


def test_component_rule_orphans_the_end_of_a_chain_and_the_decision_does_not() -> None:
    truth, p, lengths = chain_case()
    removed, kept = dedup.component_rule(p["a"], p["b"], p["jaccard"], p["exact"], lengths, 0.5)
    # one component {0, 1, 2, 3}: the longest (0) kept, the rest removed in its favour
    assert removed.tolist() == [1, 2, 3] and kept.tolist() == [0, 0, 0]
    component = dedup.audit(truth, removed, kept, 0.5)
    assert component["removed"] == 3
    # 2 is at J 0.35 of 0, its kept document, and nothing like it is left
    assert component["orphans_kept_id"] == 1 and component["orphan_ids_kept_id"] == [2]
    assert component["orphans_none_left"] == 1 and component["orphan_ids_none_left"] == [2]
    # (4, 5) was never paired: it survives either rule
    assert component["surviving_pairs"] == 1 and component["surviving_pair_ids"] == [[4, 5]]
    assert component["surviving_copies"] == 0

    # the decision: the library's rule (what jobs/dedup.py computes), longest first
    links = [
        Link(int(a), int(b), float(j), exact=bool(e))
        for a, b, j, e in zip(p["a"], p["b"], p["jaccard"], p["exact"], strict=True)
    ]
    order = priority_order({d: int(lengths[d]) for d in range(4)})
    decided = decide(order, links, cut=0.5)
    gone = sorted(d for d, x in decided.items() if x.removed)
    kept_ids = [decided[d].kept_id for d in gone]
    # 0 kept; 1 and its copy 3 removed in its favour; 2 kept (its only kept neighbour would be 1)
    assert gone == [1, 3] and kept_ids == [0, 0]
    decision = dedup.audit(truth, np.array(gone), np.array(kept_ids), 0.5)
    assert (decision["removed"], decision["orphans_kept_id"], decision["orphans_none_left"]) == (
        2,
        0,
        0,
    )
    assert decision["surviving_pairs"] == 1 and decision["surviving_copies"] == 0
    stated = [decided[d].jaccard for d in gone]
    assert dedup.stated_jaccard_error(truth, np.array(gone), np.array(kept_ids), stated) == 0.0


def test_audit_catches_a_broken_decision() -> None:
    truth, _, _ = chain_case()
    # 1 and its copy 3 removed in favour of 2, which is removed too (in favour of 0, at J 0.35):
    # all three orphans by kept_id; 1 and 3 still have 0 left at J 0.6, 2 has nothing left
    a = dedup.audit(truth, np.array([2, 1, 3]), np.array([0, 2, 2]), 0.5)
    assert a["orphans_kept_id"] == 3 and a["orphan_ids_kept_id"] == [1, 2, 3]
    assert a["orphans_none_left"] == 1 and a["orphan_ids_none_left"] == [2]
    # 1 and its copy 3 both left: a surviving copy; removing 0 in favour of its copy's group is fine
    b = dedup.audit(truth, np.array([0]), np.array([3]), 0.5)
    assert b["orphans_kept_id"] == 0 and b["orphans_none_left"] == 0
    assert b["surviving_copies"] == 1 and b["surviving_pairs"] == 2  # (1, 2) and (4, 5)
    # a group removed in favour of itself: orphans by kept_id, not by what is left (0 and 2)
    c = dedup.audit(truth, np.array([1, 3]), np.array([3, 1]), 0.5)
    assert (c["orphans_kept_id"], c["orphans_none_left"]) == (2, 0)
    with pytest.raises(ValueError, match="0.3"):
        dedup.audit(truth, np.array([1]), np.array([0]), 0.2)


def test_dedup_module_examples() -> None:
    result = doctest.testmod(dedup, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 4 and result.failed == 0


def test_only_dedup_brings_the_defaults_run() -> None:
    assert run.parse_args(["--only", "dedup"]).only == ["defaults", "dedup"]
    assert run.parse_args(["--only", "rensa,dedup,defaults"]).only == ["rensa", "dedup", "defaults"]
    assert "dedup" in run.parse_args([]).only


def test_dedup_tables_render() -> None:
    truth, p, lengths = chain_case()
    removed, kept = dedup.component_rule(p["a"], p["b"], p["jaccard"], p["exact"], lengths, 0.5)
    audited = {
        "cut": 0.5,
        "pairs_at_cut": 5,
        "truth_pairs_at_cut": 3,
        "truth_pairs_missed": 1,
        "decision": {
            **dedup.audit(truth, np.array([1, 3]), np.array([0, 0]), 0.5),
            "stated_jaccard_max_error": 0.0,
        },
        "component_rule": dedup.audit(truth, removed, kept, 0.5),
        "job": {
            "decision": {
                "rounds": 0,
                "finished_in_one_task": 2,
                "removed": 2,
                "removed_exact_duplicates": 1,
            },
            "components": {"would_remove": 3},
            "stage_seconds": {"decide": 1.0, "components": 0.5, "corpus": 0.2},
        },
        "pair_job_wall": 30.0,
        "dedup_wall": 15.0,
    }
    ok = {"name": "dedup", "status": "ok", "wall": 15.0, "detail": {}}
    table = run.dedup_markdown(ok, audited)
    assert "| 2 | 0 | 0 | 1 | 0 |" in table  # the decision: removed, orphans both ways, surviving
    assert "| 3 | 1 | 1 | 1 | 0 |" in table  # the component rule orphans 2
    assert "0.50× the defaults pair job's 30.0 s" in table
    assert "component_rule orphan ids" in table and "decision orphan ids" not in table
    overview = run.dedup_overview({"tiny": {"corpus": {"documents": 7}, "dedup": audited}})
    assert "| tiny | 7 | 5 | 2 | 0 / 0 | 1 | 3 | 1 / 1 | 1 | 15.0 | 30.0 |" in overview
    failed = {"name": "dedup", "status": "failed", "wall": 3.0, "detail": {"log": "x.log"}}
    assert run.dedup_markdown(failed, None) == "Dedup: failed after 3.0 s (log `x.log`)."
    skipped = {"name": "dedup", "status": "skipped", "wall": None, "detail": {}}
    assert run.dedup_markdown(skipped, None) == "Dedup: skipped."
