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
        "shingling/fast/sketch.py",
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


def installed_wheel(root: Path) -> Path:
    """A fresh virtual environment at ``root`` holding the built wheel of this checkout, not its
    editable install; its dependencies come from this environment's site-packages, named in a
    ``.pth`` line (which adds the directory without running the editable-install hook there).
    Returns its bin/ directory."""
    wheels = root / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
    )
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python3*/site-packages"))
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    (site / "deps.pth").write_text(ours + "\n")
    (wheel,) = wheels.glob("shingling-*.whl")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install"]
        + ["-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
    )
    return venv / "bin"


API_SCRIPT = """
import sys
from pyspark.sql import SparkSession
import shingling
from shingling.spark import near_duplicates

spark = SparkSession.builder.master("local[1]").getOrCreate()
df = spark.read.parquet(sys.argv[1])
pairs = near_duplicates(df, id_col="doc_id", text_col="text")
print(shingling.__file__, pairs.count())
"""


@pytest.mark.e2e
def test_the_installed_wheel_runs_from_another_directory_twice_at_once(tmp_path: Path) -> None:
    """The built wheel in a fresh environment, run from a directory outside the checkout, in a
    fresh shell: two launcher runs started together both succeed with the bundled settings (each
    owns its scratch), and ``shingling.spark`` works in a plain SparkSession."""
    bin_dir = installed_wheel(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    runs = [
        subprocess.Popen(
            [str(bin_dir / "shingling"), "run", "near-duplicates"]
            + ["--input", str(SAMPLE_CORPUS), "--output", str(tmp_path / f"out{i}")],
            cwd=elsewhere,
            env=fresh_shell_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    done = [(run.wait(), run.communicate()[1]) for run in runs]
    for code, err in done:
        assert code == 0, err[-3000:]
        # conf/ came with the package: its logging keeps Spark's INFO lines out
        assert " INFO " not in err, err[:2000]
        # not a terminal: no progress bars in the log
        assert "[Stage" not in err and "\r" not in err
    summaries = [json.loads((tmp_path / f"out{i}" / "summary.json").read_text()) for i in range(2)]
    assert all(s["status"] == "succeeded" and s["pairs"]["scores"] == "exact" for s in summaries)
    assert summaries[0]["pairs"]["written"] == summaries[1]["pairs"]["written"] > 0
    assert summaries[0]["config"]["sketch"]["k"] == 20  # the bundled defaults
    # a notebook in the activated environment: its python3 is the one Spark's workers start
    activated = fresh_shell_env(PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin")
    api = subprocess.run(
        [str(bin_dir / "python"), "-c", API_SCRIPT, str(SAMPLE_CORPUS)],
        cwd=elsewhere,
        env=activated,
        capture_output=True,
        text=True,
    )
    assert api.returncode == 0, api.stderr[-3000:]
    where, count = api.stdout.split()
    assert (
        where.startswith(str(tmp_path / "venv")) and int(count) == summaries[0]["pairs"]["written"]
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--set", "input.id_column=url"], 3, "the id column 'url' is not in"),
        (["--set", "input.text_column=body"], 3, "the text column 'body' is not in"),
        (["--overwrite"], 2, "has no summary.json: it is not an output of near_duplicates"),
    ],
)
def test_a_wrong_column_or_a_foreign_output_is_refused_before_a_jvm(
    args: list[str], code: int, message: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    if "--overwrite" in args:
        out.mkdir()
        (out / "thesis.tex").write_text("not ours")
    done = shingling(
        "run", "near-duplicates", "--input", str(SAMPLE_CORPUS), "--output", str(out), *args,
        **NO_JVM,
    )  # fmt: skip
    assert done.returncode == code, done.stderr[-2000:]
    assert message in done.stderr, done.stderr[-2000:]
    if code == 3:
        assert "columns present: doc_id, text, source" in done.stderr
    if "--overwrite" in args:
        assert (out / "thesis.tex").read_text() == "not ours"
