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
from test_clusters import reference_components  # tests/jobs is on sys.path (rootdir mode)

from jobs import dedup, near_duplicates
from jobs.errors import ExitCode

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
            "--set",
            "pairs.verify=false",  # an estimate-only run: dedup's own verification is tested here
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
    assert run_dedup(workdir, "first", "--set", "verify.enabled=true") == ExitCode.OK
    return workdir / "first"


def table(path: Path) -> list[dict]:
    return ds.dataset(path).to_table().to_pylist()


def test_clusters_are_the_components_of_the_decided_pairs(first: Path, workdir: Path) -> None:
    cut = tomllib.loads((workdir / "run" / "config.toml").read_text())["pairs"]["threshold"]
    exact = {(r["doc_a"], r["doc_b"]): r["exact_jaccard"] for r in table(first / "verified")}
    linked = [
        (r["doc_a"], r["doc_b"])
        for r in table(workdir / "run" / "pairs")
        if exact.get((r["doc_a"], r["doc_b"]), r["jaccard"]) >= cut
    ]
    got = sorted(
        (r["doc_id"], r["cluster_id"], r["cluster_size"]) for r in table(first / "clusters")
    )
    assert got == sorted(reference_components(linked))
    # the planted copies, their original and the upper-cased copy form one cluster
    by_doc = {r["doc_id"]: r["cluster_id"] for r in table(first / "clusters")}
    copies = [d for d in by_doc if d.startswith("zz-copy") or d == "zz-shouting"]
    assert len(copies) == COPIES + 1 and len({by_doc[d] for d in copies}) == 1


def test_one_document_per_cluster_survives_and_it_is_the_longest(
    first: Path, workdir: Path
) -> None:
    corpus = {r["doc_id"]: r["text"] for r in table(workdir / "corpus.parquet")}
    clusters = table(first / "clusters")
    left = {r["doc_id"] for r in table(first / "corpus")}
    survivors = Counter(r["cluster_id"] for r in clusters if r["doc_id"] in left)
    assert set(survivors) == {r["cluster_id"] for r in clusters} and set(survivors.values()) == {1}
    for cluster_id in survivors:
        members = [r["doc_id"] for r in clusters if r["cluster_id"] == cluster_id]
        kept = min(members, key=lambda d: (-len(corpus[d]), d))
        assert kept in left


def test_the_corpus_is_the_input_minus_the_removed(
    spark: SparkSession, first: Path, workdir: Path
) -> None:
    corpus = spark.read.parquet(str(workdir / "corpus.parquet"))
    removed = spark.read.parquet(str(first / "removed"))
    expected = corpus.join(removed, "doc_id", "left_anti")
    result = spark.read.parquet(str(first / "corpus"))
    assert result.columns == corpus.columns
    assertDataFrameEqual(result, expected)


def test_each_removed_document_names_a_pair_of_its_cluster(first: Path) -> None:
    clusters = {r["doc_id"]: r["cluster_id"] for r in table(first / "clusters")}
    kept = {r["cluster_id"]: r["doc_id"] for r in table(first / "clusters")} | {
        r["cluster_id"]: r["kept_id"] for r in table(first / "removed")
    }
    removed = table(first / "removed")
    assert removed
    for r in removed:
        assert (
            clusters[r["doc_id"]]
            == clusters[r["kept_id"]]
            == clusters[r["linked_id"]]
            == r["cluster_id"]
        )
        assert r["kept_id"] == kept[r["cluster_id"]] and r["doc_id"] != r["kept_id"]
    assert any(r["exact_duplicate"] for r in removed)


def test_the_summary_counts_what_was_written(first: Path) -> None:
    summary = json.loads((first / "summary.json").read_text())
    assert summary["status"] == "succeeded"
    assert summary["corpus"]["written"] == len(table(first / "corpus"))
    assert summary["corpus"]["removed"] == len(table(first / "removed"))
    assert summary["clusters"]["documents_in_clusters"] == len(table(first / "clusters"))
    assert summary["verify"]["pairs_verified"] == len(table(first / "verified"))


def part_bytes(directory: Path) -> list[bytes]:
    """The data files' bytes, in part-number order (file names carry a random job id)."""
    return [
        p.read_bytes() for p in sorted(directory.glob("part-*"), key=lambda p: p.name.split("-")[1])
    ]


def test_the_same_input_gives_the_same_bytes(first: Path, workdir: Path) -> None:
    assert run_dedup(workdir, "second", "--set", "verify.enabled=true") == ExitCode.OK
    for name in ("clusters", "removed", "corpus", "verified"):
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


def test_a_verified_run_is_not_verified_again(workdir: Path) -> None:
    # the default run's pairs are exact: dedup links on them as they are, every link verified
    assert (
        near_duplicates.main(
            [
                "--input",
                str(workdir / "corpus.parquet"),
                "--output",
                str(workdir / "exact-run"),
                "--set",
                "pairs.max_exact_group=2",
            ]
        )
        == ExitCode.OK
    )
    out = workdir / "exact-dedup"
    code = dedup.main(
        [
            "--input",
            str(workdir / "corpus.parquet"),
            "--run",
            str(workdir / "exact-run"),
            "--output",
            str(out),
            "--set",
            "verify.enabled=true",
        ]
    )
    assert code == ExitCode.OK
    summary = json.loads((out / "summary.json").read_text())
    assert "skipped" in summary["verify"] and not (out / "verified").exists()
    removed = table(out / "removed")
    assert removed and all(r["verified"] for r in removed)
    pairs = {(r["doc_a"], r["doc_b"]): r["jaccard"] for r in table(workdir / "exact-run" / "pairs")}
    for r in removed:  # each link is a pair of the run, with the run's exact score
        key = (min(r["doc_id"], r["linked_id"]), max(r["doc_id"], r["linked_id"]))
        assert pairs[key] == r["jaccard"]


def test_the_log_names_each_step(workdir: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="shingling")
    assert run_dedup(workdir, "named", "--set", "verify.enabled=true") == ExitCode.OK
    steps = [m for m in caplog.messages if m.startswith("step ")]
    names = [
        "verifying",
        "clustering",
        "choosing the kept documents",
        "writing the deduplicated corpus",
    ]
    for n, name in enumerate(names, start=1):
        assert any(
            m.startswith(f"step {n} of 4: {name} (") or m == f"step {n} of 4: {name}" for m in steps
        ), (name, steps)
        assert any(m.startswith(f"step {n} of 4: {name} done in ") for m in steps), (name, steps)
