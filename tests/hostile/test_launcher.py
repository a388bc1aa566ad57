"""Issue 34 §4: the launcher honours the job's config, runs the Spark it says, and cleans what its
killed runs left.

No JVM: spark-submit is replaced by a recorder (``subprocess.call``) wherever it would start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest
from testdata import SAMPLE_CORPUS

from shingling.spark import launch


@pytest.fixture
def submitted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], dict[str, str]]]:
    """The spark-submit lines the launcher would run, with their environments; each 'succeeds'."""
    calls: list[tuple[list[str], dict[str, str]]] = []

    def record(cmd: list[str], env: dict[str, str]) -> int:
        calls.append((cmd, env))
        return 0

    monkeypatch.setattr(launch.subprocess, "call", record)
    return calls


def previous_output(path: Path) -> Path:
    """A finished output of near_duplicates, which the job may replace when told to."""
    path.mkdir()
    (path / "summary.json").write_text(json.dumps({"job": "near_duplicates"}))
    return path


def test_overwrite_in_the_config_file_is_honoured(
    tmp_path: Path, submitted: list, capsys: pytest.CaptureFixture
) -> None:
    out = previous_output(tmp_path / "out")
    config = tmp_path / "mine.toml"
    config.write_text("[output]\noverwrite = true\n")
    args = ["--input", str(SAMPLE_CORPUS), "--output", str(out), "--config", str(config)]
    assert launch.run("near-duplicates", args) == 0, capsys.readouterr().err
    assert len(submitted) == 1
    # ... and without it, the launcher still refuses before Spark (exit 4)
    assert launch.run("near-duplicates", args[:4]) == 4
    assert len(submitted) == 1


def test_a_foreign_spark_home_is_not_used_silently(
    tmp_path: Path, submitted: list, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = tmp_path / "other-spark"
    (stand_in / "bin").mkdir(parents=True)
    (stand_in / "bin" / "spark-submit").write_text("#!/bin/sh\nexit 0\n")
    (stand_in / "bin" / "spark-submit").chmod(0o755)
    monkeypatch.setenv("SPARK_HOME", str(stand_in))
    args = ["--input", str(SAMPLE_CORPUS), "--output", str(tmp_path / "out")]
    assert launch.run("near-duplicates", args) == 0
    own = Path(pyspark.__file__).resolve().parent
    cmd, env = submitted[0]
    assert cmd[0] == str(own / "bin" / "spark-submit") and env["SPARK_HOME"] == str(own)
    err = capsys.readouterr().err
    assert f"SPARK_HOME={stand_in} is not the installed pyspark's Spark; using {own}" in err


def test_a_spark_that_is_not_pyspark_s_own_stops_the_launcher(
    tmp_path: Path, submitted: list, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = tmp_path / "stand-in"
    (stand_in / "bin").mkdir(parents=True)
    (stand_in / "bin" / "spark-submit").write_text("#!/bin/sh\nexit 0\n")
    monkeypatch.setattr(launch, "spark_home", lambda: stand_in)
    args = ["--input", str(SAMPLE_CORPUS), "--output", str(tmp_path / "out")]
    assert launch.run("near-duplicates", args) == 1
    assert f"{stand_in} is not Spark {pyspark.__version__}" in capsys.readouterr().err
    assert submitted == []


def dead_pid() -> int:
    """The id of a process that has exited."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_the_next_launch_cleans_only_dead_runs_scratch(tmp_path: Path) -> None:
    dead = tmp_path / f"shingling-run-{dead_pid()}-abc123"
    (dead / "spark-local" / "blockmgr-1").mkdir(parents=True)
    (dead / "shingling.zip").write_bytes(b"zip")
    live = tmp_path / f"shingling-run-{os.getpid()}-def456"  # a concurrent run: this process
    live.mkdir()
    older = tmp_path / "shingling-run-xyz789"  # no pid in its name: whose it is cannot be told
    older.mkdir()
    others = [tmp_path / "spark-1234", tmp_path / "blockmgr-5678"]
    for path in others:
        path.mkdir()
    assert launch.clean_dead_runs(str(tmp_path)) == [str(dead)]
    assert not dead.exists() and live.is_dir() and older.is_dir()
    assert all(path.is_dir() for path in others)


def test_spark_s_local_directories_go_inside_the_run_s_scratch(
    tmp_path: Path, submitted: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SPARK_LOCAL_DIRS", raising=False)
    args = ["--input", str(SAMPLE_CORPUS), "--output", str(tmp_path / "out")]
    assert launch.run("near-duplicates", args) == 0
    _, env = submitted[0]
    scratch = Path(env["SPARK_LOCAL_DIRS"]).parent
    assert scratch.name.startswith(f"shingling-run-{os.getpid()}-")
    assert not scratch.exists()  # removed when the launch ends
