"""Issue 34 §2: a corpus given again must hold the texts the run sketched.

``build_index --input`` (and ``dedup --input``, through :func:`shingling.spark.run_checks.check_corpus_texts`)
with the run's ids but other texts, or without some of its texts, is refused with exit 3 naming an
id, instead of an index whose later nights verify against other texts (or a dedup that removes
documents whose near-duplicates are not there).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shingling.errors import BadInputError
from shingling.schema import DOC_ID, TEXT, TEXT_CHECKSUM
from shingling.spark.jobs import build_index
from shingling.spark.run_checks import check_corpus_texts
from shingling.spark.transforms import sketch_documents

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "sample" / "corpus.parquet"


@pytest.fixture(scope="module")
def corpus() -> pa.Table:
    return pq.read_table(CORPUS, columns=["doc_id", "text"]).slice(0, 30)


@pytest.fixture(scope="module")
def full_run(spark, corpus: pa.Table, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from shingling.spark.jobs.near_duplicates import main

    root = tmp_path_factory.mktemp("corpus-texts")
    pq.write_table(corpus, root / "corpus.parquet")
    assert main(["--input", str(root / "corpus.parquet"), "--output", str(root / "full")]) == 0
    return root / "full"


def build(run: Path, root: Path, corpus: Path) -> int:
    return build_index.main(
        ["--run", str(run), "--index", str(root / "index"), "--run-date", "2026-11-30"]
        + ["--output", str(root / "pairs"), "--input", str(corpus)]
    )


def test_build_index_refuses_the_run_ids_with_other_texts(
    spark, corpus: pa.Table, full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    texts = corpus.column("text").to_pylist()
    other = corpus.set_column(1, "text", pa.array(texts[1:] + texts[:1]))  # the same ids
    pq.write_table(other, tmp_path / "other.parquet")
    assert build(full_run, tmp_path, tmp_path / "other.parquet") == 3
    err = capsys.readouterr().err
    assert "has another text in" in err and str(tmp_path / "other.parquet") in err
    assert not (tmp_path / "index" / "_manifest.json").exists()
    assert not list((tmp_path / "pairs").glob("run_date=*"))


def test_build_index_refuses_a_corpus_missing_texts(
    spark, corpus: pa.Table, full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    pq.write_table(corpus.slice(0, 20), tmp_path / "part.parquet")
    assert build(full_run, tmp_path, tmp_path / "part.parquet") == 3
    assert "of the run has no text in" in capsys.readouterr().err
    assert not (tmp_path / "index" / "_manifest.json").exists()


def test_the_check_dedup_calls_names_the_mismatched_id(spark) -> None:
    rows = [(1, "the cat sat on the mat today"), (2, "a dog ran in the park at noon")]
    corpus = spark.createDataFrame(rows, f"{DOC_ID} long, {TEXT} string")
    documents = sketch_documents(corpus, width=4, k=20)
    check_corpus_texts(corpus, documents, unit="words", source="same")  # the same texts: passes
    # the same words, other case and spacing: the raw text's checksum differs, refused; a run
    # made before documents recorded checksums compares the normalized words, and accepts it
    respaced = spark.createDataFrame(
        [(1, "The  cat sat on the mat TODAY"), rows[1]], f"{DOC_ID} long, {TEXT} string"
    )
    with pytest.raises(BadInputError, match="document 1 has another text in respaced"):
        check_corpus_texts(respaced, documents, unit="words", source="respaced")
    older = documents.drop(TEXT_CHECKSUM)
    check_corpus_texts(respaced, older, unit="words", source="respaced")
    with pytest.raises(BadInputError, match="document 2 has another text in edited"):
        check_corpus_texts(
            spark.createDataFrame(
                [rows[0], (2, "a dog ran in the park at night")], f"{DOC_ID} long, {TEXT} string"
            ),
            older,
            unit="words",
            source="edited",
        )
    edited = spark.createDataFrame(
        [rows[0], (2, "a dog ran in the park at night")], f"{DOC_ID} long, {TEXT} string"
    )
    with pytest.raises(BadInputError, match="document 2 has another text in edited") as e:
        check_corpus_texts(edited, documents, unit="words", source="edited")
    assert e.value.exit_code == 3
