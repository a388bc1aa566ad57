"""``shingling run JOB ...``: a job in Spark local mode (or any master), without typing spark-submit.

    shingling run near-duplicates --input corpus.parquet --output out/ [job options] \\
        [-- spark-submit options, e.g. --driver-memory 8g --master yarn]

What the launcher does that a bare ``spark-submit`` line needs by hand:

1. checks the job's arguments, config and paths **before** a JVM starts (the job's own checks,
   run in this process): a bad argument, a missing input or an existing output answers in about
   a second, with the job's exit code;
2. runs the Spark of the installed pyspark (the package carries its own), whatever ``SPARK_HOME``
   says: a ``SPARK_HOME`` naming another Spark is ignored with a note saying which is used, and
   the Spark used must be the pyspark's version (its ``spark-core`` jar), or the launcher stops
   (exit 1) instead of running a stand-in; and makes this Python the driver's and the workers';
3. packs the installed ``shingling`` package into the code archive (``--py-files``);
4. passes ``conf/spark-local.conf`` (the machine's sizes and logging; installed with the package)
   unless the options after ``--`` name a properties file or a master; and turns Spark's progress bars off when the
   output is not a terminal, so a log file reads as the job's named steps.

The spark-submit lines in docs/cluster.md stay the way to run on a cluster's own Spark.

Its scratch directory, ``<tmp>/shingling-run-<pid>-<random>``, holds the code archive and (unless
``SPARK_LOCAL_DIRS`` or ``spark.local.dir`` is set) Spark's local directories (``spark-*``,
``blockmgr-*``), so a killed run leaves one directory; the next launch deletes those whose process
is gone (never a live run's).
"""

from __future__ import annotations

import glob
import importlib
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from types import ModuleType

from shingling.errors import ConfigError, ExitCode
from shingling.spark import session
from shingling.spark.paths import is_local, local_part

#: The jobs, as the launcher names them, and their modules.
JOBS = {
    "near-duplicates": "shingling.spark.jobs.near_duplicates",
    "dedup": "shingling.spark.jobs.dedup",
    "nightly": "shingling.spark.jobs.nightly",
    "build-index": "shingling.spark.jobs.build_index",
    "compact-index": "shingling.spark.jobs.compact_index",
    "undo-night": "shingling.spark.jobs.undo_night",
}
PACKAGES = ("shingling",)
PROPERTIES, LOG4J = "spark-local.conf", "log4j2.properties"
LOG4J_OPTION = re.compile(r"-Dlog4j2\.configurationFile=\S+")


def local_conf() -> Path | None:
    """The directory of the local-mode Spark properties and logging: installed inside the package
    (``shingling/spark/conf/``, from the checkout's ``conf/``), or the checkout's ``conf/`` itself
    (an editable install, a source tree); None if neither is there."""
    here = Path(__file__).resolve().parent
    for where in (here / "conf", here.parents[1] / "conf"):
        if (where / PROPERTIES).is_file():
            return where
    return None


def local_properties(scratch: Path) -> Path | None:
    """``conf/spark-local.conf`` written into ``scratch`` with its logging file named by absolute
    path (the file names it relative to the checkout, where ``make`` runs), so a run from any
    directory logs as one from the checkout does."""
    where = local_conf()
    if where is None:
        return None
    text = (where / PROPERTIES).read_text(encoding="utf-8")
    option = f"-Dlog4j2.configurationFile={(where / LOG4J).as_posix()}"
    dest = scratch / PROPERTIES
    dest.write_text(LOG4J_OPTION.sub(lambda _: option, text), encoding="utf-8")
    return dest


def spark_home() -> Path:
    """The Spark of the installed pyspark: the package's own directory when it carries Spark (as
    pip's pyspark does), never ``SPARK_HOME`` first; else where pyspark's own finder looks."""
    import pyspark

    own = Path(pyspark.__file__ or "").resolve().parent
    if (own / "bin" / "spark-submit").is_file():
        return own
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def spark_problem(home: Path) -> str | None:
    """Why ``home`` is not the Spark the installed pyspark needs, or None: its spark-submit and a
    ``spark-core`` jar of pyspark's version must be there (a stand-in that runs nothing is not)."""
    import pyspark

    version = pyspark.__version__
    if not (home / "bin" / "spark-submit").is_file():
        return f"no bin/spark-submit in {home}"
    if not glob.glob(str(home / "jars" / f"spark-core_*-{version}.jar")):
        return (
            f"{home} is not Spark {version} (no jars/spark-core_*-{version}.jar), pyspark's version"
        )
    return None


RUN_DIR_PREFIX = "shingling-run-"
_RUN_DIR = re.compile(rf"^{RUN_DIR_PREFIX}(\d+)-")


def _alive(pid: int) -> bool:
    """Whether a process of this id exists (one of another user's counts: it is not ours to judge)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_dead_runs(tmp: str | None = None) -> list[str]:
    """Delete the scratch directories of launches whose process is gone; returns their paths.

    Only ``shingling-run-<pid>-*`` directories of this user whose ``pid`` no longer runs: a live
    concurrent run's directory, another user's, or one of an older launcher without a pid in its
    name is left alone (docs/reliability.md lists what is never cleaned).
    """
    root = Path(tmp or tempfile.gettempdir())
    removed: list[str] = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return removed
    for name in names:
        match = _RUN_DIR.match(name)
        path = root / name
        if not match or not path.is_dir() or path.is_symlink():
            continue
        if path.stat().st_uid != os.getuid() or _alive(int(match.group(1))):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(str(path))
    return removed


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


def values(job_args: list[str], flag: str) -> list[str]:
    """Every value of a repeated ``flag`` (``--set a=1 --set b=2``)."""
    found = []
    for i, arg in enumerate(job_args):
        name, eq, value = arg.partition("=")
        if name == flag:
            found.append(value if eq else (job_args[i + 1] if i + 1 < len(job_args) else ""))
    return found


def overwrite_asked(job_args: list[str]) -> bool:
    """Whether the job is told to replace its output: --overwrite, or ``output.overwrite`` in the
    resolved config (--config file, then --set), as the job itself reads it."""
    if "--overwrite" in job_args:
        return True
    from shingling import config as config_module

    try:
        cfg = config_module.load(option(job_args, "--config"), values(job_args, "--set"))
    except ConfigError:
        return False  # the job's own check has answered already
    return cfg.output.overwrite


def existing_output(job_args: list[str]) -> str | None:
    """The job's --output when it exists on this machine and nothing says to replace it."""
    output = option(job_args, "--output")
    overwrite = overwrite_asked(job_args)
    if output and not overwrite and is_local(output) and os.path.exists(local_part(output)):
        return output
    return None


def sets_local_dir(submit_args: list[str]) -> bool:
    """Whether the spark-submit options (or the properties file they or the launcher pass) set
    ``spark.local.dir``, which the launcher then leaves as it is."""
    if any("spark.local.dir" in a for a in submit_args):
        return True
    named = option(submit_args, "--properties-file")
    where = local_conf()
    properties = Path(named) if named else (where / PROPERTIES if where else None)
    try:
        return properties is not None and "spark.local.dir" in properties.read_text("utf-8")
    except OSError:
        return False


def submit_command(
    script: Path, job_args: list[str], submit_args: list[str], archive: Path
) -> list[str]:
    """The spark-submit line that runs ``script``; the local properties are written beside the
    code archive."""
    cmd = [str(spark_home() / "bin" / "spark-submit")]
    named = " ".join(submit_args)
    if "--properties-file" not in named and "--master" not in named:
        properties = local_properties(archive.parent)
        if properties is not None:
            cmd += ["--properties-file", str(properties)]
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
    home = spark_home()
    given = os.environ.get("SPARK_HOME")
    if given and Path(given).resolve() != home.resolve():
        print(
            f"note: SPARK_HOME={given} is not the installed pyspark's Spark; using {home}"
            " (run spark-submit yourself to use another Spark, docs/cluster.md)",
            file=sys.stderr,
        )
    problem = spark_problem(home)
    if problem:
        print(f"error: the installed pyspark's Spark cannot be used: {problem}", file=sys.stderr)
        return int(ExitCode.FAILED)
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    clean_dead_runs()
    with tempfile.TemporaryDirectory(prefix=f"{RUN_DIR_PREFIX}{os.getpid()}-") as tmp:
        if "SPARK_LOCAL_DIRS" not in env and not sets_local_dir(submit_args):
            # Spark's spark-* and blockmgr-* directories inside ours: a killed run leaves one
            # directory, which the next launch deletes
            env["SPARK_LOCAL_DIRS"] = str(Path(tmp) / "spark-local")
        archive = pack(Path(tmp) / "shingling.zip")
        script = Path(module.__file__ or "")
        cmd = submit_command(script, job_args, submit_args, archive)
        if shutil.which(cmd[0]) is None and not Path(cmd[0]).is_file():
            print(f"error: spark-submit not found at {cmd[0]}", file=sys.stderr)
            return int(ExitCode.FAILED)
        return subprocess.call(cmd, env=env)
