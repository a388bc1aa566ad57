"""A Spark standalone cluster on loopback (a master and two one-core workers), for the tests.

The cluster is started with the launcher pyspark ships (``spark-class ...deploy.master.Master`` and
``...deploy.worker.Worker``), on free ports, with every log under the session's tmp directory, and
torn down whatever happens: each daemon runs in its own process group (so its executors and their
Python workers die with it) and is told to die with the test process too.

The job is submitted the way the README documents for a cluster::

    spark-submit --master spark://HOST:PORT --py-files dist/shingling.zip \\
        jobs/near_duplicates.py --input ... --output ...

with a Python on the driver and executors that has the dependencies (pyspark, pyarrow, numpy,
xxhash) but *not* this project, so the code can only come from the shipped zip.

Helpers only; the fixtures are in conftest.py. (Not a conftest: test modules import these by name.)
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "sample" / "corpus.parquet"
JOB = REPO / "jobs" / "near_duplicates.py"
SPARK_BIN = Path(sys.executable).parent  # spark-class and spark-submit come with pyspark

# Small JVMs: the machine has 2 cores shared with other work. Each worker offers 1 core and 1 GiB.
DAEMON_MEMORY = "256m"
WORKER_MEMORY = "1g"
EXECUTOR_MEMORY = "768m"
DRIVER_MEMORY = "1g"
START_TIMEOUT = 60.0
JOB_TIMEOUT = 240.0

# Task retries, set explicitly rather than trusted to defaults: a task may fail 4 times (an
# executor lost with its node does not count against this), a stage may be re-run 4 times after
# fetch failures (the lost node's shuffle output is recomputed on the surviving one).
# Short-lived JVMs on a shared 2-core machine: the serial collector and the quick JIT tier only
# cost less CPU than they save. Tuning for the test's speed, not something a cluster wants.
QUICK_JVM = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"

RETRY_CONF = {
    "spark.task.maxFailures": "4",
    "spark.stage.maxConsecutiveAttempts": "4",
    "spark.excludeOnFailure.enabled": "false",
}


def _die_with_parent() -> None:
    """In the child before exec: its own process group, and SIGKILL when the test process dies."""
    os.setsid()
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass  # not Linux: teardown still kills the group


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to the process group ``proc`` leads (it, its JVM children and their Python)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def stop_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM the group, then SIGKILL it if it is still there after ``grace`` seconds."""
    if proc.poll() is None:
        kill_group(proc, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    kill_group(proc, signal.SIGKILL)  # executors and Python workers left in the group
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass


def log_tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def build_zip(dest: Path) -> Path:
    """dist/shingling.zip as ``make dist`` packs it: shingling/ with its shingling/default.toml.

    Built here rather than by ``make dist``, which deletes dist/ under anyone using it.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for package in ("shingling",):
            for path in sorted((REPO / package).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    zf.write(path, path.relative_to(REPO).as_posix())
    return dest


def deps_only_python(root: Path) -> Path:
    """A Python with this environment's packages but not this project (its editable install is off).

    A ``.pth`` line naming a directory adds it to ``sys.path`` without running the ``.pth`` files
    inside it, so the editable-install hook never loads and ``import shingling`` works only from the zip.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = next(root.glob("lib/python3*/site-packages"))
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    (site / "deps.pth").write_text(ours + "\n")
    python = root / "bin" / "python"
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import pyarrow, xxhash, numpy, pyspark, importlib.util as u;"
            " print(u.find_spec('shingling'))",
        ],
        capture_output=True,
        text=True,
        cwd=root,
        check=True,
    )
    assert probe.stdout.split() == ["None"], probe.stdout
    return python


def spark_env(python: Path, log_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(Path(__import__("pyspark").__file__).parent),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOCAL_HOSTNAME="127.0.0.1",
        SPARK_LOG_DIR=str(log_dir),
        SPARK_DAEMON_MEMORY=DAEMON_MEMORY,
        SPARK_DAEMON_JAVA_OPTS=QUICK_JVM,
        PYSPARK_PYTHON=str(python),
        PYSPARK_DRIVER_PYTHON=str(python),
        PATH=f"{SPARK_BIN}{os.pathsep}{env.get('PATH', '')}",
    )
    env.pop("PYTHONPATH", None)
    env.pop("SPARK_CONF_DIR", None)
    return env


def conf_args(conf: dict[str, str]) -> list[str]:
    return [arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")]


@dataclass
class Submission:
    """A spark-submit run: its process and where its output and logs go."""

    proc: subprocess.Popen
    output: Path
    stdout: Path
    stderr: Path

    def wait(self, timeout: float = JOB_TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            stop_group(self.proc, grace=2)
            pytest.fail(
                f"spark-submit did not finish in {timeout:.0f} s:\n{log_tail(self.stderr, 40)}"
            )

    def summary(self) -> dict:
        return json.loads((self.output / "summary.json").read_text())

    def logs(self) -> str:
        """What the job printed: Spark's log, and the Python driver's (spark-submit merges its
        stderr into stdout)."""
        return self.stderr.read_text(errors="replace") + self.stdout.read_text(errors="replace")


@dataclass
class Cluster:
    """A running standalone cluster: the master's URL, and the workers by index."""

    root: Path
    env: dict[str, str]
    zip_path: Path
    master_url: str = ""
    web_port: int = 0
    daemons: dict[str, subprocess.Popen] = field(default_factory=dict)

    def _launch(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.root / f"{name}.log", "ab")  # noqa: SIM115 - the daemon owns it until it exits
        proc = subprocess.Popen(
            [str(SPARK_BIN / "spark-class"), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
            cwd=self.root,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - setsid and PDEATHSIG, nothing else
        )
        log.close()
        self.daemons[name] = proc
        return proc

    def _wait_for_log(self, name: str, pattern: str) -> re.Match:
        log, deadline = self.root / f"{name}.log", time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            found = re.search(pattern, log.read_text(errors="replace")) if log.exists() else None
            if found:
                return found
            if self.daemons[name].poll() is not None:
                break
            time.sleep(0.2)
        raise ClusterUnavailable(f"the {name} did not start (waited for {pattern!r})", log)

    def start_master(self) -> None:
        props = self.root / "master.properties"
        props.write_text("spark.master.rest.enabled false\n")  # no REST port to collide on
        self._launch(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(free_port()),
                "--webui-port",
                str(free_port()),
                "--properties-file",
                str(props),
            ],
        )
        # Spark moves to the next port if one was taken meanwhile: read the ones it bound
        self.master_url = self._wait_for_log(
            "master", r"Starting Spark master at (spark://\S+)"
        ).group(1)
        self.web_port = int(self._wait_for_log("master", r"'MasterUI' on port (\d+)").group(1))
        self._wait_for_log("master", r"elected leader")

    def start_worker(self, index: int) -> None:
        name = f"worker{index}"
        work = self.root / f"{name}-work"
        work.mkdir(exist_ok=True)
        self._launch(
            name,
            [
                "org.apache.spark.deploy.worker.Worker",
                self.master_url,
                "--host",
                "127.0.0.1",
                "--cores",
                "1",
                "--memory",
                WORKER_MEMORY,
                "--webui-port",
                str(free_port()),
                "--work-dir",
                str(work),
            ],
        )

    def state(self) -> dict:
        """The master's state as its web UI serves it in JSON."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/json/", timeout=5) as r:
            return dict(json.load(r))

    def alive_workers(self) -> int:
        return int(self.state()["aliveworkers"])

    def app_ids(self) -> set[str]:
        """Ids of the applications the master has run or is running."""
        state = self.state()
        return {app["id"] for app in state["activeapps"] + state["completedapps"]}

    def executor_dirs(self, app_id: str) -> list[Path]:
        """The directories the workers made for an application's executors: one per executor."""
        return sorted(self.root.glob(f"worker*-work/{app_id}/*"))

    def ensure_workers(self, n: int = 2) -> None:
        """Start the workers that are not running, and wait until ``n`` are registered and alive."""
        for index in range(1, n + 1):
            proc = self.daemons.get(f"worker{index}")
            if proc is None or proc.poll() is not None:
                self.start_worker(index)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.alive_workers() >= n:
                return
            for index in range(1, n + 1):
                if self.daemons[f"worker{index}"].poll() is not None:
                    raise ClusterUnavailable(
                        f"worker{index} exited", self.root / f"worker{index}.log"
                    )
            time.sleep(0.3)
        raise ClusterUnavailable(
            f"{n} workers did not register in {START_TIMEOUT:.0f} s", self.root / "master.log"
        )

    def kill_worker(self, index: int) -> None:
        """SIGKILL a worker with its executor and Python workers: the node is gone."""
        proc = self.daemons[f"worker{index}"]
        kill_group(proc)
        proc.wait(10)

    def submit(
        self,
        output: Path,
        *extra: str,
        conf: dict[str, str] | None = None,
        input_path: Path = CORPUS,
        job: Path = JOB,
    ) -> Submission:
        """Start the job on this cluster, as the README says; returns at once. ``job``: another
        entry point, whose arguments are all in ``extra`` (no --input, --output)."""
        settings = {
            "spark.executor.memory": EXECUTOR_MEMORY,
            "spark.driver.memory": DRIVER_MEMORY,
            "spark.ui.enabled": "false",
            "spark.driver.extraJavaOptions": QUICK_JVM,
            "spark.executor.extraJavaOptions": QUICK_JVM,
            # one task per core and stage is plenty for 669 documents
            "spark.sql.shuffle.partitions": "2",
            **RETRY_CONF,
            **(conf or {}),
        }
        return launch_submit(
            ["--master", self.master_url, *conf_args(settings)],
            self.zip_path,
            self.env,
            input_path,
            output,
            extra,
            self.root,
            job,
        )

    def stop(self) -> None:
        for proc in reversed(list(self.daemons.values())):  # workers first, then the master
            stop_group(proc)


class ClusterUnavailable(Exception):
    def __init__(self, why: str, log: Path) -> None:
        super().__init__(f"{why}; end of {log.name}:\n{log_tail(log)}")


def launch_submit(
    spark_args: list[str],
    zip_path: Path,
    env: dict[str, str],
    input_path: Path,
    output: Path,
    extra: tuple[str, ...],
    log_dir: Path,
    job: Path = JOB,
) -> Submission:
    stem = f"submit-{output.name}-{time.monotonic_ns()}"
    io = ["--input", str(input_path), "--output", str(output)] if job == JOB else []
    stdout, stderr = log_dir / f"{stem}.out", log_dir / f"{stem}.err"
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        proc = subprocess.Popen(
            [
                str(SPARK_BIN / "spark-submit"),
                *spark_args,
                "--py-files",
                str(zip_path),
                str(job),
                *io,
                *extra,
            ],
            stdout=out,
            stderr=err,
            env=env,
            cwd=REPO,
            preexec_fn=_die_with_parent,  # noqa: PLW1509
        )
    return Submission(proc, output, stdout, stderr)


def read_sorted(path: Path, keys: list[str]) -> pa.Table:
    """A written table, its rows in key order (Spark writes them in no particular order)."""
    table = pq.read_table(path)
    return table.take(pc.sort_indices(table, [(k, "ascending") for k in keys]))


def assert_same_output(actual: Path, expected: Path) -> None:
    """Both runs wrote the same documents and pairs tables, schema and every value."""
    for name, keys in (("documents", ["doc_id"]), ("pairs", ["doc_a", "doc_b"])):
        got, want = read_sorted(actual / name, keys), read_sorted(expected / name, keys)
        assert got.schema == want.schema, (
            f"{name}: schema differs:\n{got.schema}\nvs\n{want.schema}"
        )
        assert got.num_rows == want.num_rows, (
            f"{name}: {got.num_rows} rows, expected {want.num_rows}"
        )
        if not got.equals(want):
            for column in want.column_names:
                if not got[column].equals(want[column]):
                    a, b = got[column].to_pylist(), want[column].to_pylist()
                    i = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
                    pytest.fail(f"{name}.{column} differs at row {i}: {a[i]!r} != {b[i]!r}")
    got, want = (
        json.loads((actual / "summary.json").read_text()),
        json.loads((expected / "summary.json").read_text()),
    )
    assert (got["documents"], got["pairs"]) == (want["documents"], want["pairs"])


def tree_digest(path: Path) -> dict[str, str]:
    """Every file under ``path`` with the SHA-256 of its bytes."""
    return {
        p.relative_to(path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }
