"""Issue 34, point 1: ``shingling report --to`` follows the path guards of the jobs.

It overwrote anything: the corpus it reads, the run's summary.json, a file inside pairs/. Each case
exits 2 naming the path, and leaves every byte of the run and the corpus as it was, with no
partial file beside them. No Spark: the refusals come before the run is read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_helpers import snapshot

from shingling import cli
from shingling.report import page


def fake_run(root: Path) -> tuple[Path, Path]:
    """A finished run's directory and its corpus, as far as the path checks look."""
    corpus = root / "data" / "corpus.parquet"
    corpus.parent.mkdir(parents=True)
    pq.write_table(pa.table({"doc_id": ["a", "b"], "text": ["one two", "three four"]}), corpus)
    out = root / "out"
    for table in ("documents", "pairs", "dedup/clusters"):
        (out / table).mkdir(parents=True)
        pq.write_table(pa.table({"doc_id": ["a"]}), out / table / "part-0.parquet")
    (out / "config.toml").write_text("[sketch]\nwidth = 4\n")
    (out / "summary.json").write_text(json.dumps({"job": "near_duplicates", "input": str(corpus)}))
    return out, corpus


TARGETS: dict[str, Callable[[Path, Path], Path]] = {
    "the corpus it reads": lambda out, corpus: corpus,
    "the corpus's directory": lambda out, corpus: corpus.parent,
    "the run's summary.json": lambda out, corpus: out / "summary.json",
    "the run's config.toml": lambda out, corpus: out / "config.toml",
    "a file inside pairs/": lambda out, corpus: out / "pairs" / "part-0.parquet",
    "a new file inside documents/": lambda out, corpus: out / "documents" / "report.html",
    "the pairs table itself": lambda out, corpus: out / "pairs",
    "the clusters table": lambda out, corpus: out / "dedup" / "clusters" / "x.html",
    "the run's directory": lambda out, corpus: out,
    "a parent of everything": lambda out, corpus: out.parent,
    "a dot-dot way to summary.json": lambda out, corpus: out / "pairs" / ".." / "summary.json",
}


@pytest.mark.parametrize("case", list(TARGETS))
def test_report_to_a_path_it_reads_is_refused(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out, corpus = fake_run(tmp_path)
    target = TARGETS[case](out, corpus)
    before = snapshot(tmp_path)
    assert cli.main(["report", str(out), "--to", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"--to {target}" in err and "nothing was written" in err
    assert snapshot(tmp_path) == before  # no byte changed, no partial file left anywhere


def test_report_to_the_corpus_given_by_option_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out, _ = fake_run(tmp_path)
    other = tmp_path / "other-corpus"
    other.mkdir()
    (other / "part-0.parquet").write_text("the corpus named by --corpus")
    before = snapshot(tmp_path)
    target = other / "report.html"
    assert cli.main(["report", str(out), "--corpus", str(other), "--to", str(target)]) == 2
    assert "--to" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


def test_report_to_a_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out, _ = fake_run(tmp_path)
    (tmp_path / "reports").mkdir()
    assert cli.main(["report", str(out), "--to", str(tmp_path / "reports")]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert list((tmp_path / "reports").iterdir()) == []


def test_a_failed_write_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page, "load_run", lambda *args: None)
    monkeypatch.setattr(page, "render", lambda data: "<!DOCTYPE html>\n<p>report</p>\n")
    target = tmp_path / "report.html"
    target.mkdir()  # a target that cannot be replaced by a file
    (target / "keep.txt").write_text("mine")
    before = snapshot(tmp_path)
    with pytest.raises(OSError):
        page.write_report(tmp_path / "out", path=target)
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    # and a report to a place apart from what it reads is written
    written = page.write_report(tmp_path / "out", path=tmp_path / "elsewhere.html")
    assert written.read_text() == "<!DOCTYPE html>\n<p>report</p>\n"
