"""``shingling run JOB ...``: a job in Spark local mode (or any master), without typing spark-submit.

    shingling run near-duplicates --input corpus.parquet --output out/ [job options] \\
        [-- spark-submit options, e.g. --driver-memory 8g --master yarn]

What the launcher does that a bare ``spark-submit`` line needs by hand:

1. checks the job's arguments, config and paths **before** a JVM starts (the job's own checks,
   run in this process): a bad argument, a missing input or an existing output answers in about
   a second, with the job's exit code;
2. finds Spark in the installed pyspark (``SPARK_HOME``) and makes this Python the driver's and
   the workers';
3. packs the installed ``shingling`` and ``jobs`` packages into the code archive (``--py-files``);
4. passes ``conf/spark-local.conf`` from the checkout (the machine's sizes) unless the options
   after ``--`` name a properties file or a master; and turns Spark's progress bars off when the
   output is not a terminal, so a log file reads as the job's named steps.

The spark-submit lines in docs/cluster.md stay the way to run on a cluster's own Spark.
"""

from __future__ import annotations

import glob
import importlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from types import ModuleType

from jobs import session
from jobs.errors import ExitCode
from jobs.paths import is_local, local_part

#: The jobs, as the launcher names them, and their modules.
JOBS = {
    "near-duplicates": "jobs.near_duplicates",
    "dedup": "jobs.dedup",
    "nightly": "jobs.nightly",
    "build-index": "jobs.build_index",
    "compact-index": "jobs.compact_index",
    "undo-night": "jobs.undo_night",
}
PACKAGES = ("shingling", "jobs")
LOCAL_PROPERTIES = Path(__file__).resolve().parents[1] / "conf" / "spark-local.conf"


def spark_home() -> Path:
    """The Spark of the installed pyspark."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def pack(dest: Path) -> Path:
    """The code archive spark-submit ships to the executors: the packages this process runs."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in PACKAGES:
            root = Path(importlib.import_module(name).__file__ or "").parent
            for path in sorted(root.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                    zf.write(path, (Path(name) / path.relative_to(root)).as_posix())
    return dest


def check(module: ModuleType, job_args: list[str]) -> int:
    """The job's own checks (arguments, config, paths), with no session: its exit code."""
    previous = session.CHECK_ONLY
    session.CHECK_ONLY = True
    quiet = logging.getLogger("shingling")
    quiet.disabled = True  # the config is printed once, by the run itself
    try:
        return int(module.main(job_args))
    finally:
        session.CHECK_ONLY = previous
        quiet.disabled = False


INPUT_OPTIONS = ("--input", "--batch", "--run")


def missing_input(job_args: list[str]) -> str | None:
    """The first input path of the job's arguments that does not exist on this machine. Checked
    for local runs only: on a cluster a path without a scheme may name the cluster's filesystem.
    """
    for i, arg in enumerate(job_args):
        name, _, value = arg.partition("=")
        if name not in INPUT_OPTIONS:
            continue
        if not value and i + 1 < len(job_args):
            value = job_args[i + 1]
        if value and is_local(value) and not glob.glob(local_part(value)):
            return value
    return None


# the jobs whose --output must not exist unless --overwrite (the nightly's pair table accumulates)
FRESH_OUTPUT = ("near-duplicates", "dedup")


def option(job_args: list[str], flag: str) -> str | None:
    """The value of ``flag`` in the job's arguments (``--flag v`` or ``--flag=v``), if given."""
    for i, arg in enumerate(job_args):
        name, eq, value = arg.partition("=")
        if name == flag:
            return value if eq else (job_args[i + 1] if i + 1 < len(job_args) else None)
    return None


def existing_output(job_args: list[str]) -> str | None:
    """The job's --output when it exists on this machine and nothing says to replace it."""
    output = option(job_args, "--output")
    overwrite = "--overwrite" in job_args or any(
        a.replace(" ", "") == "output.overwrite=true" for a in job_args
    )
    if output and not overwrite and is_local(output) and os.path.exists(local_part(output)):
        return output
    return None


def submit_command(
    script: Path, job_args: list[str], submit_args: list[str], archive: Path
) -> list[str]:
    """The spark-submit line that runs ``script``."""
    cmd = [str(spark_home() / "bin" / "spark-submit")]
    named = " ".join(submit_args)
    if LOCAL_PROPERTIES.is_file() and "--properties-file" not in named and "--master" not in named:
        cmd += ["--properties-file", str(LOCAL_PROPERTIES)]
    if not sys.stderr.isatty():
        cmd += ["--conf", "spark.ui.showConsoleProgress=false"]
    return [*cmd, *submit_args, "--py-files", str(archive), str(script), *job_args]


def run(job: str, args: list[str]) -> int:
    """``shingling run JOB [job options] [-- spark-submit options]``: the job's exit code."""
    if job not in JOBS:
        print(f"error: no job {job!r}; the jobs are {', '.join(JOBS)}", file=sys.stderr)
        return int(ExitCode.USAGE)
    job_args, submit_args = args, []
    if "--" in args:
        cut = args.index("--")
        job_args, submit_args = args[:cut], args[cut + 1 :]
    module = importlib.import_module(JOBS[job])
    try:
        checked = check(module, job_args)
    except SystemExit as e:  # argparse: --help (0) or a bad argument (2), already printed
        return int(e.code or 0) if isinstance(e.code, int) else int(ExitCode.USAGE)
    if checked != ExitCode.OK:
        return checked
    local = "--master" not in " ".join(submit_args)
    missing = local and missing_input(job_args)
    if missing:
        print(f"error: input path does not exist: {missing}", file=sys.stderr)
        return int(ExitCode.BAD_INPUT)
    existing = local and job in FRESH_OUTPUT and existing_output(job_args)
    if existing:
        print(
            f"error: output {existing} exists; pass --overwrite (or --set output.overwrite=true)"
            " to replace it",
            file=sys.stderr,
        )
        return int(ExitCode.OUTPUT_EXISTS)
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home()),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    with tempfile.TemporaryDirectory(prefix="shingling-run-") as tmp:
        archive = pack(Path(tmp) / "shingling.zip")
        script = Path(module.__file__ or "")
        cmd = submit_command(script, job_args, submit_args, archive)
        if shutil.which(cmd[0]) is None and not Path(cmd[0]).is_file():
            print(f"error: spark-submit not found at {cmd[0]}", file=sys.stderr)
            return int(ExitCode.FAILED)
        return subprocess.call(cmd, env=env)
