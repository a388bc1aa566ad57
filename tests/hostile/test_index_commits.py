"""Point 2: build_index and nightly say what they committed; an index of several runs reads whole.

In process with the session fixture, on 90 documents of the sample corpus.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_helpers import snapshot

from shingling import cli
from shingling.spark.jobs import build_index, nightly

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "sample" / "corpus.parquet"


@pytest.fixture(scope="module")
def corpus() -> pa.Table:
    return pq.read_table(CORPUS, columns=["doc_id", "text"]).slice(0, 90)


@pytest.fixture(scope="module")
def full_run(spark, corpus: pa.Table, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of jobs/near_duplicates.py over the first 50 documents."""
    from shingling.spark.jobs.near_duplicates import main

    root = tmp_path_factory.mktemp("hostile-index")
    pq.write_table(corpus.slice(0, 50), root / "first.parquet")
    assert main(["--input", str(root / "first.parquet"), "--output", str(root / "full")]) == 0
    return root / "full"


def build(run: Path, index: Path, pairs: Path, date: str = "2026-11-30") -> int:
    args = ["--run", str(run), "--index", str(index), "--run-date", date, "--output", str(pairs)]
    return build_index.main(args)


def test_a_second_index_into_the_same_pair_table_commits_nothing(
    spark, full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # a pair table belongs to one index (its _owner.json): another is refused before it writes
    pairs = tmp_path / "pairs"
    assert build(full_run, tmp_path / "first", pairs) == 0
    capsys.readouterr()
    before = snapshot(pairs)
    assert build(full_run, tmp_path / "second", pairs, date="2026-12-01") == 2
    err = capsys.readouterr().err
    assert f"--output {pairs} is the pair table of another index ({tmp_path / 'first'})" in err
    assert not (tmp_path / "second").exists()
    assert snapshot(pairs) == before  # the first index's pairs, and no staging left


def test_a_failure_after_the_commit_point_says_it_committed(
    spark, full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch
) -> None:
    from shingling.spark.storage import Files

    def broken(self, src: str, dst: str) -> None:
        raise OSError("the disk went away")

    monkeypatch.setattr(Files, "rename_dir", broken)
    assert build(full_run, tmp_path / "index", tmp_path / "pairs") == 1
    err = capsys.readouterr().err
    assert "IS COMMITTED as version 1" in err and "the next run on this index moves it" in err
    assert (tmp_path / "index" / "_manifest.json").exists()
    monkeypatch.undo()
    # ... and the next run on the index (its first step, under the lock) publishes the partition
    from shingling.spark.index.store import IndexStore

    store = IndexStore(spark, str(tmp_path / "index"), str(tmp_path / "pairs"))
    assert store.recover(store.manifest())["pair_partitions_published"] == 1
    assert (tmp_path / "pairs" / "run_date=2026-11-30").is_dir()
    assert not any((tmp_path / "pairs" / "_staging").iterdir())


def nightly_main(tmp: Path, batch: Path, date: str) -> int:
    return nightly.main(
        ["--batch", str(batch), "--index", str(tmp / "index"), "--output", str(tmp / "pairs")]
        + ["--run-date", date]
    )


@pytest.mark.history
def test_an_index_of_a_build_and_two_nights_is_queried(
    spark, corpus: pa.Table, full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert build(full_run, tmp_path / "index", tmp_path / "pairs") == 0
    for i, (start, date) in enumerate([(50, "2026-12-01"), (70, "2026-12-02")]):
        batch = tmp_path / f"b{i}.parquet"
        pq.write_table(corpus.slice(start, 20), batch)
        assert nightly_main(tmp_path, batch, date) == 0
    segments = sorted((tmp_path / "index" / "segments").iterdir())
    assert len(segments) == 3
    # one schema for every segment, nullability included: the build's and the nights'
    schemas = {
        str(pq.read_schema(next((segment / "documents").glob("*.parquet"))).remove_metadata())
        for segment in segments
    }
    assert len(schemas) == 1, schemas
    # one document of each segment finds itself (the reader concatenates the three segments)
    for row in (0, 55, 85):
        text = tmp_path / f"doc-{row}.txt"
        text.write_text(corpus["text"][row].as_py())
        capsys.readouterr()
        assert cli.main(["query", str(tmp_path / "index"), str(text), "--json"]) == 0
        found = [m["doc_id"] for m in __import__("json").loads(capsys.readouterr().out)["matches"]]
        assert corpus["doc_id"][row].as_py() in found


def test_the_reader_unifies_segments_that_differ_in_nullability(tmp_path: Path) -> None:
    # the cheap form of the test above: two segments, one with 'not null' columns (as nightly
    # writes them), one without (as build_index copies a run's table), read by pyarrow alone
    from shingling.index import Manifest, SegmentInfo, open_index, segment_path

    strict = pa.schema(
        [
            pa.field("doc_id", pa.string()),
            pa.field("n_shingles", pa.int64(), nullable=False),
            pa.field("sketch", pa.list_(pa.field("element", pa.int64(), nullable=False))),
            pa.field("added", pa.string(), nullable=False),
        ]
    )
    loose = pa.schema(
        [
            pa.field("doc_id", pa.string()),
            pa.field("n_shingles", pa.int64()),
            pa.field("sketch", pa.list_(pa.int64())),
            pa.field("added", pa.string()),
        ]
    )
    segments = []
    for i, schema in enumerate([loose, strict]):
        sid = f"00000{i + 1}-abc"
        root = Path(segment_path(str(tmp_path), sid))
        for table in ("documents", "postings", "superseded"):
            (root / table).mkdir(parents=True)
        docs = pa.table(
            {"doc_id": [f"d{i}"], "n_shingles": [3], "sketch": [[1, 2, 3]], "added": ["x"]},
            schema=schema,
        )
        pq.write_table(docs, root / "documents" / "part-0.parquet")
        pq.write_table(
            pa.table({"hash": [1, 2, 3], "doc_id": [f"d{i}"] * 3}), root / "postings" / "p.parquet"
        )
        pq.write_table(
            pa.table({"doc_id": pa.array([], pa.string()), "segment": pa.array([], pa.string())}),
            root / "superseded" / "s.parquet",
        )
        segments.append(SegmentInfo(sid, f"2026-12-0{i + 1}", 1, 3, 0))
    manifest = Manifest(2, "", "string", {"k": 20}, tuple(segments), {}, 2, 6)
    (tmp_path / "_manifest.json").write_text(manifest.to_json())
    reader = open_index(str(tmp_path))
    found = reader.documents(["d0", "d1"], columns=("doc_id", "n_shingles", "sketch"))
    assert sorted(found["doc_id"].to_pylist()) == ["d0", "d1"]
    assert sorted(reader.postings([2])["doc_id"].to_pylist()) == ["d0", "d1"]
