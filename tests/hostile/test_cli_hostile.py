"""Point 4 for the ``shingling`` command: corrupt or foreign files exit 3 naming them, ids are
printed escaped, and a query with another k than the index's is refused. No Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shingling import cli
from shingling.sketch import sketch
from shingling.summaries import DocumentCounts, PairCounts, RunSummary

TEXT = "the quick brown fox jumps over the lazy dog near the river bank today"
NASTY = "evil\x1b[2J\x1b]0;pwned\x07\u202egnp.exe"  # clear screen, retitle, direction override


def fake_run(root: Path, ids: tuple[str, str] = (NASTY, "plain")) -> Path:
    """A run's output as jobs/near_duplicates.py writes one, two documents and their pair."""
    s = sketch(TEXT, width=4, k=20)
    (root / "documents").mkdir(parents=True)
    (root / "pairs").mkdir()
    pq.write_table(
        pa.table(
            {
                "doc_id": list(ids),
                "n_words": [14, 14],
                "n_shingles": [s.n_shingles] * 2,
                "sketch": [list(s.hashes)] * 2,
                "text_hash": [1, 1],
                "skip_reason": pa.array([None, None], pa.string()),
            }
        ),
        root / "documents" / "part-0.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "doc_a": [min(ids)],
                "doc_b": [max(ids)],
                "matches": [20],
                "jaccard": [0.9],
                "containment_a": [0.9],
                "containment_b": [0.9],
                "shingles_a": [s.n_shingles],
                "shingles_b": [s.n_shingles],
                "exact_duplicate": [False],
                "relation": ["near_duplicate"],
            }
        ),
        root / "pairs" / "part-0.parquet",
    )
    (root / "config.toml").write_text("[sketch]\nwidth = 4\nk = 20\n[pairs]\nthreshold = 0.6\n")
    summary = RunSummary(
        job="near_duplicates",
        input=str(root / "corpus"),
        output=str(root),
        started_at="2026-12-02T00:00:00+00:00",
        documents=DocumentCounts(read=2, sketched=2, skipped={}),
        pairs=PairCounts(written=1, exact_duplicates=0, scores="exact"),
        stage_seconds={"sketch": 1.0, "pairs": 1.0, "total": 2.0},
        finished_at="2026-12-02T00:00:02+00:00",
        status="succeeded",
    )
    (root / "summary.json").write_text(json.dumps(summary.to_dict()))
    (root / "doc.txt").write_text(TEXT)
    return root


def test_control_characters_in_ids_are_printed_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = fake_run(tmp_path / "run")
    assert cli.main(["top", str(run)]) == 0
    assert cli.main(["query", str(run), str(run / "doc.txt")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert out.count("evil\\x1b[2J\\x1b]0;pwned\\x07\\u202egnp.exe") == 2, out


def test_a_query_with_another_k_than_the_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = fake_run(tmp_path / "run")
    assert cli.main(["query", str(run), str(run / "doc.txt"), "--k", "32"]) == 2
    assert "was made with k 20" in capsys.readouterr().err
    assert cli.main(["query", str(run), str(run / "doc.txt"), "--k", "20"]) == 0


@pytest.mark.parametrize(
    "manifest", ["{not json", "[]", '{"format": "shingling-index"}', "\xff\xfe", ""]
)
def test_a_corrupt_manifest_exits_3(
    manifest: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    index = tmp_path / "index"
    index.mkdir()
    (index / "_manifest.json").write_bytes(manifest.encode("latin-1"))
    (tmp_path / "doc.txt").write_text(TEXT)
    assert cli.main(["query", str(index), str(tmp_path / "doc.txt")]) == 3
    assert "_manifest.json" in capsys.readouterr().err


def test_a_corrupt_config_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = fake_run(tmp_path / "run")
    (run / "config.toml").write_text("[sketch\nk = = 3")
    assert cli.main(["query", str(run), str(run / "doc.txt")]) == 3
    assert "config.toml" in capsys.readouterr().err
    assert cli.main(["explain", str(run / "doc.txt"), str(run / "doc.txt"), "--run", str(run)]) == 3


@pytest.mark.parametrize("folder", ["pairs", "documents"])
def test_a_stray_file_in_a_run_exits_3_naming_the_folder(
    folder: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = fake_run(tmp_path / "run")
    (run / folder / "notes.txt").write_text("someone's notes")
    codes = [
        cli.main(["top", str(run)]),
        cli.main(["query", str(run), str(run / "doc.txt")]),
        cli.main(["report", str(run), "--to", str(tmp_path / "r.html")]),
    ]
    err = capsys.readouterr().err
    # each command reads what it needs: query reads no pairs, the report no documents table
    assert codes == [3, 3, 0] if folder == "documents" else [3, 0, 3], err
    assert "Traceback" not in err and folder in err


def test_an_output_holding_an_invalid_utf8_id_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # the jobs refuse such ids now (test_inputs.py); an output written before, or by another tool,
    # still must not crash the command
    run = fake_run(tmp_path / "run")
    bad = pa.array([b"b\xffad", b"plain"], pa.binary()).view(pa.string())
    table = pq.read_table(run / "documents").set_column(0, "doc_id", bad)
    pq.write_table(table, run / "documents" / "part-0.parquet")
    pairs = pq.read_table(run / "pairs")
    pairs = pairs.set_column(0, "doc_a", bad.slice(0, 1)).set_column(1, "doc_b", bad.slice(1, 1))
    pq.write_table(pairs, run / "pairs" / "part-0.parquet")
    codes = [cli.main(["top", str(run)]), cli.main(["query", str(run), str(run / "doc.txt")])]
    err = capsys.readouterr().err
    assert codes == [3, 3], err
    assert "Traceback" not in err
