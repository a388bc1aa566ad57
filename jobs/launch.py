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

#: The jobs, as the launcher names them, and their modules.
JOBS = {
    "near-duplicates": "jobs.near_duplicates",
    "dedup": "jobs.dedup",
    "nightly": "jobs.nightly",
    "build-index": "jobs.build_index",
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
