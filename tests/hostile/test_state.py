"""Issue 34, point 3: no state the user cannot leave.

A run date far ahead (a typo) is refused before anything is written unless the user says it is
right; and every config value, whatever characters it holds, reads back from the config.toml
written beside an output. The undo of a night is in test_undo_night.py. No Spark here.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_helpers import snapshot
from hypothesis import given
from hypothesis import strategies as st

from shingling import config as config_module
from shingling.errors import ConfigError
from shingling.spark import session
from shingling.spark.jobs import build_index, nightly

# -- a run date far ahead ------------------------------------------------------------------------


def days_from_today(days: int) -> str:
    return (datetime.now(UTC).date() + timedelta(days=days)).isoformat()


def batch(tmp_path: Path) -> Path:
    path = tmp_path / "batch.parquet"
    pq.write_table(pa.table({"doc_id": ["a"], "text": ["one two three four five"]}), path)
    return path


def night_args(tmp_path: Path, date: str) -> list[str]:
    return [
        "--batch", str(batch(tmp_path)), "--index", str(tmp_path / "index"),
        "--output", str(tmp_path / "pairs"), "--run-date", date,
    ]  # fmt: skip


@pytest.mark.parametrize("days", [30, 365 * 10])
def test_a_run_date_far_ahead_is_refused_before_anything_is_written(
    days: int, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    date = days_from_today(days)
    args = night_args(tmp_path, date)
    before = snapshot(tmp_path)
    assert nightly.main(args) == 2
    err = capsys.readouterr().err
    assert f"--run-date {date} is {days} days after today" in err
    assert "--allow-future-date" in err and "undo-night" in err
    assert snapshot(tmp_path) == before  # no index, no pair table, the batch as it was
    assert not (tmp_path / "index").exists() and not (tmp_path / "pairs").exists()
    run = ["--run", str(tmp_path / "run"), "--index", str(tmp_path / "index")]
    assert build_index.main([*run, "--run-date", date]) == 2
    assert "days after today" in capsys.readouterr().err


def test_a_date_a_day_or_two_ahead_and_a_date_allowed_by_flag_pass_the_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the launcher's check-only mode: the job's own checks, no session
    monkeypatch.setattr(session, "CHECK_ONLY", True)
    assert nightly.main(night_args(tmp_path, days_from_today(1))) == 0
    assert nightly.main(night_args(tmp_path, days_from_today(2))) == 0
    far = night_args(tmp_path, days_from_today(400))
    assert nightly.main(far) == 2
    assert nightly.main([*far, "--allow-future-date"]) == 0


def test_the_api_refuses_a_date_far_ahead_too(tmp_path: Path) -> None:
    from shingling.spark.api import nightly as api_nightly

    with pytest.raises(ConfigError, match="--allow-future-date"):
        api_nightly(
            None,  # type: ignore[arg-type]  # refused before the session is used
            batch=str(batch(tmp_path)),
            index=str(tmp_path / "index"),
            output=str(tmp_path / "pairs"),
            run_date=days_from_today(90),
        )
    assert not (tmp_path / "index").exists()


# -- config values round-trip through config.toml -------------------------------------------------

DEFAULT = config_module.load()


def with_columns(id_column: str, text_column: str) -> config_module.Config:
    return replace(
        DEFAULT, input=replace(DEFAULT.input, id_column=id_column, text_column=text_column)
    )


def read_back(cfg: config_module.Config, tmp_path: Path) -> config_module.Config:
    """The config as a job saves it beside its output (UTF-8), loaded again as a config file."""
    path = tmp_path / "config.toml"
    path.write_text(config_module.to_toml(cfg), encoding="utf-8")
    return config_module.load(path)


@pytest.mark.parametrize(
    "name",
    ["📎 id", "doc 𝔦𝔡", "a\U0010fffdb", 'quote " and \\ backslash', "tab\tand\nnewline\x7f\x00"],
)
def test_a_column_named_beyond_the_bmp_reads_back(name: str, tmp_path: Path) -> None:
    cfg = with_columns(name, "text")
    written = config_module.to_toml(cfg)
    assert "\\ud8" not in written.lower()  # no escaped surrogates, which TOML cannot read
    if name.isprintable() and not set(name) & set('"\\'):
        assert f'id_column = "{name}"' in written  # real UTF-8, not escapes
    assert read_back(cfg, tmp_path) == cfg
    # and the readers of a run (shingling top, query) read it as the jobs do
    from shingling.cli.common import run_settings

    assert run_settings(tmp_path)["input"]["id_column"] == name


# every Unicode scalar value a TOML string can hold: anything but the surrogates
TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40)


@given(id_column=TEXT, text_column=TEXT)
def test_any_text_in_a_config_string_round_trips(id_column: str, text_column: str) -> None:
    cfg = with_columns(id_column, text_column)
    parsed = tomllib.loads(config_module.to_toml(cfg))
    assert parsed["input"] == {
        "id_column": id_column,
        "text_column": text_column,
        "format": "parquet",
    }


def test_a_lone_surrogate_from_the_command_line_is_refused_by_name() -> None:
    # what Python makes of a command line's bytes that are not UTF-8 (surrogateescape)
    with pytest.raises(ConfigError, match="input.id_column .* is not valid text"):
        config_module.load(None, ["input.id_column=id\udcff"])
