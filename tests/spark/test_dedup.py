"""The dedup job end to end on real text: clusters, kept documents, removed table, corpus, bytes."""

from __future__ import annotations

import json
import logging
import tomllib
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from shingling.decision import Link, decide, priority_order
from shingling.errors import ExitCode
from shingling.exact import shingle_set
from shingling.spark.jobs import dedup, near_duplicates
from shingling.summaries import DedupSummary

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "corpus.parquet"
COPIES = 4  # exact copies of one document: above max_exact_group = 2, so written as a star


def edited(text: str) -> str:
    """A near-duplicate: the last paragraph dropped."""
    paragraphs = text.rstrip().split("\n\n")
    return "\n\n".join(paragraphs[:-1]) if len(paragraphs) > 2 else text[: len(text) * 9 // 10]


@pytest.fixture(scope="module")
def workdir(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A corpus of 80 real documents plus planted copies, and a near_duplicates run over it.

    The jobs run in the test session (``spark``), so every run sees the same Spark settings.
    """
    base = tmp_path_factory.mktemp("dedup")
    rows = pq.read_table(SAMPLE).sort_by("doc_id").slice(200, 80).to_pylist()
    original = max(rows, key=lambda r: len(r["text"]))
    planted = [{**original, "doc_id": f"zz-copy-{i}"} for i in range(COPIES)]
    planted.append({**original, "doc_id": "zz-shouting", "text": original["text"].upper()})
    planted.append({**rows[5], "doc_id": "zz-edited", "text": edited(rows[5]["text"])})
    pq.write_table(
        pa.Table.from_pylist(rows + planted, schema=pq.read_schema(SAMPLE)), base / "corpus.parquet"
    )
    code = near_duplicates.main(
        [
            "--input",
            str(base / "corpus.parquet"),
            "--output",
            str(base / "run"),
            "--set",
            "pairs.max_exact_group=2",
        ]
    )
    assert code == ExitCode.OK
    return base


def run_dedup(workdir: Path, name: str, *extra: str) -> int:
    return dedup.main(
        [
            "--input",
            str(workdir / "corpus.parquet"),
            "--run",
            str(workdir / "run"),
            "--output",
            str(workdir / name),
            *extra,
        ]
    )


@pytest.fixture(scope="module")
def first(workdir: Path) -> Path:
    assert run_dedup(workdir, "first") == ExitCode.OK
    return workdir / "first"


def table(path: Path) -> list[dict]:
    return ds.dataset(path).to_table().to_pylist()


def run_cut(workdir: Path) -> float:
    return tomllib.loads((workdir / "run" / "config.toml").read_text())["pairs"]["threshold"]


def test_the_decision_equals_the_reference_on_real_text(first: Path, workdir: Path) -> None:
    """The run's own pairs through the library's decide, the longest text first: the same kept
    documents, the same kept_id and figures for every removed one, the same clusters."""
    corpus = {r["doc_id"]: r["text"] for r in table(workdir / "corpus.parquet")}
    links = [
        Link(
            r["doc_a"],
            r["doc_b"],
            r["jaccard"],
            r["exact_duplicate"],
            r["containment_a"],
            r["containment_b"],
        )
        for r in table(workdir / "run" / "pairs")
    ]
    ids = {d for x in links for d in (x.a, x.b)}
    order = priority_order({d: len(corpus[d]) for d in ids})
    expected = decide(order, links, cut=run_cut(workdir))
    removed = {
        r["doc_id"]: (
            r["kept_id"],
            r["relation"],
            r["jaccard"],
            r["containment"],
            r["exact_duplicate"],
        )
        for r in table(first / "removed")
    }
    assert removed == {
        d: (x.kept_id, x.relation, x.jaccard, x.containment, x.exact)
        for d, x in expected.items()
        if x.removed
    }
    in_favour = Counter(x.kept_id for x in expected.values())
    clusters = sorted(
        (r["doc_id"], r["cluster_id"], r["cluster_size"]) for r in table(first / "clusters")
    )
    assert clusters == sorted(
        (d, x.kept_id, in_favour[x.kept_id])
        for d, x in expected.items()
        if in_favour[x.kept_id] > 1
    )
    # the planted copies and their original: one kept, the others removed in its favour
    copies = [d for d in corpus if d.startswith("zz-copy") or d == "zz-shouting"]
    assert sum(d not in removed for d in copies) <= 1
    assert any(exact for *_, exact in removed.values())


def test_both_promises_hold_against_the_exact_truth(first: Path, workdir: Path) -> None:
    """Independently of the pair job: every removed document's kept document is in the output and
    its exact Jaccard with it reaches the cut; no two documents of the output reach it."""
    cut = run_cut(workdir)
    texts = {r["doc_id"]: r["text"] for r in table(workdir / "corpus.parquet")}
    left = {r["doc_id"] for r in table(first / "corpus")}
    sets = {d: shingle_set(t) for d, t in texts.items()}

    def exact(a: str, b: str) -> float:
        union = len(sets[a] | sets[b])
        return len(sets[a] & sets[b]) / union if union else 0.0

    removed = table(first / "removed")
    assert removed and left | {r["doc_id"] for r in removed} == set(texts)
    for r in removed:
        assert r["kept_id"] in left
        assert exact(r["doc_id"], r["kept_id"]) >= cut
        assert r["jaccard"] == pytest.approx(exact(r["doc_id"], r["kept_id"]), abs=1e-12)
    kept = sorted(d for d in left if sets[d])
    surviving = [(a, b) for i, a in enumerate(kept) for b in kept[i + 1 :] if exact(a, b) >= cut]
    assert surviving == []


def test_the_corpus_is_the_input_minus_the_removed(
    spark: SparkSession, first: Path, workdir: Path
) -> None:
    corpus = spark.read.parquet(str(workdir / "corpus.parquet"))
    removed = spark.read.parquet(str(first / "removed"))
    expected = corpus.join(removed, "doc_id", "left_anti")
    result = spark.read.parquet(str(first / "corpus"))
    assert result.columns == corpus.columns
    assertDataFrameEqual(result, expected)


def test_the_summary_counts_what_was_written_and_the_component_rule_beside_it(
    first: Path, workdir: Path
) -> None:
    summary = json.loads((first / "summary.json").read_text())
    assert DedupSummary.from_dict(summary).to_dict() == summary  # the typed summary, as written
    assert summary["status"] == "succeeded"
    assert summary["corpus"]["written"] == len(table(first / "corpus"))
    assert summary["corpus"]["removed"] == len(table(first / "removed"))
    assert summary["corpus"]["read"] == len(table(workdir / "corpus.parquet"))
    decision, components = summary["decision"], summary["components"]
    assert decision["removed"] == len(table(first / "removed"))
    assert decision["rounds"] + decision["finished_in_one_task"] >= 1
    # one kept a component can only remove more: every kept document of the decision is kept
    assert components["would_remove"] >= decision["removed"]
    assert not (first / "components").exists()


def part_bytes(directory: Path) -> list[bytes]:
    """The data files' bytes, in part-number order (file names carry a random job id)."""
    return [
        p.read_bytes() for p in sorted(directory.glob("part-*"), key=lambda p: p.name.split("-")[1])
    ]


def test_the_same_input_gives_the_same_bytes_in_rounds_or_in_one_task(
    first: Path, workdir: Path
) -> None:
    """Rounds only (finish_edges 0) against the default (one task finishes): the same bytes."""
    args = ["--set", "dedup.finish_edges=0", "--set", "clusters.components=true"]
    assert run_dedup(workdir, "second", *args) == ExitCode.OK
    summary = json.loads((workdir / "second" / "summary.json").read_text())
    assert summary["decision"]["rounds"] >= 1 and summary["decision"]["finished_in_one_task"] == 0
    components = table(workdir / "second" / "components")
    assert len(components) == summary["components"]["documents_in_components"]
    for name in ("clusters", "removed", "corpus"):
        assert part_bytes(first / name) == part_bytes(workdir / "second" / name), name


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        (["--set", "dedup.keep=oldest"], ExitCode.USAGE),
        (
            ["--set", "pairs.threshold=0.3"],
            ExitCode.USAGE,
        ),  # the run's pairs cannot be re-cut lower
        (["--set", "dedup.keep=column:published"], ExitCode.BAD_INPUT),
    ],
)
def test_bad_settings_and_columns_are_refused(
    workdir: Path, extra: list[str], code: ExitCode
) -> None:
    assert run_dedup(workdir, "refused", *extra) == code
    assert not (workdir / "refused").exists()


def test_a_missing_run_is_bad_input_and_an_existing_output_is_kept(
    workdir: Path, first: Path
) -> None:
    missing = dedup.main(
        [
            "--input",
            str(workdir / "corpus.parquet"),
            "--run",
            str(workdir / "nowhere"),
            "--output",
            str(workdir / "x"),
        ]
    )
    assert missing == ExitCode.BAD_INPUT
    assert run_dedup(workdir, "first") == ExitCode.OUTPUT_EXISTS


def test_an_estimate_only_run_and_the_removed_verify_section_are_refused(workdir: Path) -> None:
    """The contract is on exact Jaccard: a run of estimates cannot be deduplicated under it."""
    assert (
        near_duplicates.main(
            [
                "--input",
                str(workdir / "corpus.parquet"),
                "--output",
                str(workdir / "estimate-run"),
                "--set",
                "pairs.verify=false",
            ]
        )
        == ExitCode.OK
    )
    args = ["--input", str(workdir / "corpus.parquet"), "--output", str(workdir / "refused")]
    assert dedup.main([*args, "--run", str(workdir / "estimate-run")]) == ExitCode.BAD_INPUT
    assert dedup.main([*args, "--run", str(workdir / "run"), "--set", "verify.enabled=true"]) == (
        ExitCode.USAGE
    )
    assert not (workdir / "refused").exists()


def test_a_corpus_with_the_runs_ids_but_other_texts_is_refused(workdir: Path) -> None:
    """A copy's text replaced: the run paired it on its old text; deciding on it would remove a
    document with nothing like it left, so the job refuses (exit 3, naming the id)."""
    table = pq.read_table(workdir / "corpus.parquet").to_pylist()
    for row in table:
        if row["doc_id"] == "zz-copy-0":
            row["text"] = "an unrelated text that the run never saw " * 20
    other = workdir / "other-texts.parquet"
    pq.write_table(pa.Table.from_pylist(table, schema=pq.read_schema(SAMPLE)), other)
    args = ["--input", str(other), "--run", str(workdir / "run"), "--output", str(workdir / "o")]
    assert dedup.main(args) == ExitCode.BAD_INPUT
    assert not (workdir / "o").exists()


def test_the_log_names_each_step(workdir: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="shingling")
    assert run_dedup(workdir, "named") == ExitCode.OK
    steps = [m for m in caplog.messages if m.startswith("step ")]
    names = [
        "checking the corpus",
        "deciding",
        "connected components, for comparison",
        "writing the deduplicated corpus",
    ]
    for n, name in enumerate(names, start=1):
        assert any(
            m.startswith(f"step {n} of 4: {name} (") or m == f"step {n} of 4: {name}" for m in steps
        ), (name, steps)
        assert any(m.startswith(f"step {n} of 4: {name} done in ") for m in steps), (name, steps)
