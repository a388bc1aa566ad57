"""Issue 34 §2 and §4: an index knows how it was made, and a run that cannot continue it is refused
before Spark starts.

A night with other sketch or pair settings than its index, a character-shingle or containment run
given to build_index or a night, an index path or pair table that is a file or cannot be written, a
truncated manifest: each exits with its code and one line naming the setting or the path, and
writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hostile_helpers import snapshot

from shingling import config as config_module
from shingling.index import MANIFEST, Manifest
from shingling.spark.index.errors import IndexMismatchError
from shingling.spark.index.segments import index_settings
from shingling.spark.jobs import build_index, nightly

DATE = "2026-12-01"


def make_index(root: Path, settings: dict | None = None) -> Path:
    """An index directory whose manifest records one committed run (no Spark)."""
    index = root / "index"
    index.mkdir()
    manifest = Manifest(
        version=1,
        created_at="2026-11-30T00:00:00+00:00",
        id_type="bigint",
        settings=index_settings(config_module.load()) if settings is None else settings,
        segments=(),
        runs={"2026-11-30": {}},
        live_documents=0,
        live_postings=0,
    )
    (index / MANIFEST).write_text(manifest.to_json(), encoding="utf-8")
    return index


def night(root: Path, index: Path, *sets: str, output: Path | None = None) -> int:
    batch = root / "batch.parquet"  # never read: every case is refused before
    args = ["--batch", str(batch), "--index", str(index), "--run-date", DATE]
    args += ["--output", str(output or root / "pairs")]
    for item in sets:
        args += ["--set", item]
    return nightly.main(args)


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("sketch.k=64", "sketch.k = 64 differs from the index, made with sketch.k = 20"),
        ("sketch.width=5", "sketch.width = 5 differs"),
        ("pairs.threshold=0.7", "pairs.threshold = 0.7 differs"),
        ("pairs.verify=false", "pairs.verify = false differs"),
        ("pairs.candidate_margin=0.3", "pairs.candidate_margin = 0.3 differs"),
    ],
)
def test_a_night_with_other_settings_is_refused_naming_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture, override: str, named: str
) -> None:
    index = make_index(tmp_path)
    before = snapshot(tmp_path)
    assert night(tmp_path, index, override) == 2
    assert named in capsys.readouterr().err
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("override", "named"),
    [("sketch.unit=chars", "sketch.unit = 'chars'"), ("sketch.sample_mod=16", "sample_mod = 16")],
)
def test_a_night_of_chars_or_containment_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture, override: str, named: str
) -> None:
    assert night(tmp_path, tmp_path / "index", override) == 2
    assert named in capsys.readouterr().err
    assert not (tmp_path / "index").exists()


def test_an_index_made_before_unit_was_recorded_takes_a_words_night(tmp_path: Path) -> None:
    settings = index_settings(config_module.load())
    old = {k: v for k, v in settings.items() if k not in ("unit", "sample_mod")}
    base = make_index(tmp_path, old)
    manifest = Manifest.from_json((base / MANIFEST).read_text())
    nightly.check_base(manifest, DATE, settings)  # the same settings: accepted
    with pytest.raises(IndexMismatchError, match="sketch.k = 32"):
        nightly.check_base(manifest, DATE, {**settings, "k": 32})


def fake_run(root: Path, *overrides: str) -> Path:
    """A run directory as build_index reads it: its config.toml (and an empty documents/)."""
    run = root / "run"
    (run / "documents").mkdir(parents=True)
    (run / "pairs").mkdir()
    cfg = config_module.load(None, list(overrides))
    (run / "config.toml").write_text(config_module.to_toml(cfg), encoding="utf-8")
    return run


@pytest.mark.parametrize(
    ("override", "named"),
    [("sketch.unit=chars", "sketch.unit = 'chars'"), ("sketch.sample_mod=32", "sample_mod = 32")],
)
def test_build_index_refuses_a_run_the_nights_cannot_continue(
    tmp_path: Path, capsys: pytest.CaptureFixture, override: str, named: str
) -> None:
    run = fake_run(tmp_path, override)
    args = ["--run", str(run), "--index", str(tmp_path / "index"), "--run-date", DATE]
    assert build_index.main([*args, "--output", str(tmp_path / "pairs")]) == 2
    err = capsys.readouterr().err
    assert named in err and str(run) in err
    assert not (tmp_path / "index").exists() and not (tmp_path / "pairs").exists()


def test_an_index_path_that_is_a_file_is_refused_before_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    (tmp_path / "index").write_text("my notes\n")
    assert night(tmp_path, tmp_path / "index") == 2
    assert f"--index {tmp_path / 'index'} is a file" in capsys.readouterr().err
    assert (tmp_path / "index").read_text() == "my notes\n"
    run = fake_run(tmp_path)
    args = ["--run", str(run), "--index", str(tmp_path / "index"), "--run-date", DATE]
    assert build_index.main(args) == 2
    assert "is a file" in capsys.readouterr().err


def test_a_pair_table_path_that_is_a_file_is_refused_before_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    pairs = tmp_path / "pairs.parquet"
    pairs.write_bytes(b"PAR1 not mine")
    assert night(tmp_path, tmp_path / "index", output=pairs) == 2
    assert f"--output {pairs} is a file" in capsys.readouterr().err
    assert pairs.read_bytes() == b"PAR1 not mine"


def test_a_read_only_index_is_refused_before_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = make_index(tmp_path)
    real = os.access
    # the tests run as root, for whom every directory is writable: the check is what is tested
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == index else real(p, mode))
    assert night(tmp_path, index) == 2
    assert f"{index} is not writable by this user" in capsys.readouterr().err


@pytest.mark.parametrize("cut", [0, 40, -3])
def test_a_truncated_manifest_is_exit_3_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture, cut: int
) -> None:
    index = make_index(tmp_path)
    text = (index / MANIFEST).read_text()
    (index / MANIFEST).write_text(text[:cut] if cut else "")
    before = snapshot(tmp_path)
    assert night(tmp_path, index) == 3
    err = capsys.readouterr().err
    assert f"{index / MANIFEST} is not a readable index manifest" in err
    assert "_versions/" in err and "Traceback" not in err
    assert snapshot(tmp_path) == before


def test_compact_index_refuses_a_file_and_a_truncated_manifest_before_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from shingling.spark.jobs import compact_index

    (tmp_path / "notes").write_text("mine\n")
    assert compact_index.main(["--index", str(tmp_path / "notes")]) == 2
    assert "is a file" in capsys.readouterr().err
    index = make_index(tmp_path)
    (index / MANIFEST).write_text("{")
    assert compact_index.main(["--index", str(index)]) == 3
    assert f"{index / MANIFEST} is not a readable index manifest" in capsys.readouterr().err
