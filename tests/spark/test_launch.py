"""``shingling run JOB``: the job's checks answer before any JVM starts; the job runs as printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import SAMPLE_CORPUS

from shingling.spark import launch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "shingling"


def fresh_shell_env(**extra: str) -> dict[str, str]:
    """A shell as a new user has it: no Spark variables, the virtual environment not on PATH."""
    drop = ("SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    return {**env, **extra}


def shingling(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=fresh_shell_env(**env), capture_output=True, text=True
    )


# with SPARK_HOME pointing nowhere a JVM cannot start: these answers come before one would
NO_JVM = {"SPARK_HOME": "/nonexistent/no-jvm"}


def test_help_lists_the_options_and_the_exit_codes_without_a_jvm() -> None:
    done = shingling("run", "near-duplicates", "--help", **NO_JVM)
    assert done.returncode == 0, done.stderr
    assert "--input" in done.stdout and "exit codes:" in done.stdout
    assert "4  the output exists" in done.stdout
    assert "WARN" not in done.stdout + done.stderr


def test_a_missing_input_exits_3_before_spark(tmp_path: Path) -> None:
    done = shingling(
        "run",
        "near-duplicates",
        "--input",
        str(tmp_path / "none"),
        "--output",
        str(tmp_path / "o"),
        **NO_JVM,
    )
    assert done.returncode == 3, done.stderr
    assert str(tmp_path / "none") in done.stderr


def test_an_existing_output_exits_4_and_a_bad_argument_2_before_spark(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    done = shingling(
        "run", "near-duplicates", "--input", str(SAMPLE_CORPUS), "--output", str(out), **NO_JVM
    )
    assert done.returncode == 4, done.stderr
    done = shingling("run", "near-duplicates", "--input", str(SAMPLE_CORPUS), **NO_JVM)
    assert done.returncode == 2 and "--output" in done.stderr
    done = shingling(
        "run",
        "near-duplicates",
        "--input",
        str(SAMPLE_CORPUS),
        "--output",
        str(tmp_path / "o"),
        "--set",
        "pairs.threshold=7",
        **NO_JVM,
    )
    assert done.returncode == 2 and "pairs.threshold" in done.stderr
    assert shingling("run", "no-such-job", **NO_JVM).returncode == 2


def test_a_file_that_is_not_parquet_is_refused_by_name_before_spark(tmp_path: Path) -> None:
    bogus = tmp_path / "corpus.parquet"
    bogus.write_text("id,text\n1,hello\n")
    done = shingling(
        "run", "near-duplicates", "--input", str(bogus), "--output", str(tmp_path / "o"), **NO_JVM
    )
    assert done.returncode == 3, done.stderr
    assert "corpus.parquet" in done.stderr and "o79" not in done.stderr


def test_the_archive_holds_the_package_and_its_defaults(tmp_path: Path) -> None:
    import zipfile

    names = set(zipfile.ZipFile(launch.pack(tmp_path / "a.zip")).namelist())
    assert {
        "shingling/default.toml",
        "shingling/spark/jobs/near_duplicates.py",
        "shingling/fast/kernels.py",
    } <= names
    assert not any(name.startswith("jobs/") for name in names)


def test_the_local_properties_name_their_logging_by_absolute_path(tmp_path: Path) -> None:
    where = launch.local_conf()
    assert where is not None
    written = launch.local_properties(tmp_path).read_text()
    assert f"-Dlog4j2.configurationFile={where / 'log4j2.properties'}" in written
    assert "spark.master" in written and "=conf/" not in written


def test_shingling_run_without_spark_says_what_to_install() -> None:
    # a Python that has this project but neither pyspark nor pandas visible
    code = (
        "import sys, importlib.util as u\n"
        "real = u.find_spec\n"
        "u.find_spec = lambda name, *a: None if name in ('pyspark', 'pandas') else real(name, *a)\n"
        "from shingling.cli import main\n"
        "sys.exit(main(['run', 'near-duplicates', '--help']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert "pip install 'shingling[spark]'" in done.stderr and "pyspark" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.spark
def test_the_job_runs_from_a_fresh_shell_as_printed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"  # not the checkout: the local properties come along
    elsewhere.mkdir()
    done = shingling(
        "run", "near-duplicates", "--input", str(SAMPLE_CORPUS), "--output", str(out), cwd=elsewhere
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # conf/log4j2.properties found from another directory: Spark's INFO lines stay out
    assert " INFO " not in done.stderr, done.stderr[:2000]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "succeeded" and summary["pairs"]["scores"] == "exact"
    # not a terminal: no progress bars in the log
    assert "[Stage" not in done.stderr and "\r" not in done.stderr
