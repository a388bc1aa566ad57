"""Every command block of README.md and docs/*.md works when pasted, or says why it is not run here.

Each fenced block carries a marker, an HTML comment on the line before its fence:

- ``<!-- run -->``: shell commands, run as printed by bash in a fresh environment (only PATH,
  HOME, LANG and JAVA_HOME), from a sandbox that looks like a set-up clone (the checkout's files
  and ``.venv`` linked in): a page makes what it uses beyond the bundled sample, as a user
  following it in a fresh clone must. A file's blocks run in order, in one sandbox, as a user
  follows the page in one terminal: its ``source`` and ``export`` lines carry over to its later
  blocks. ``<!-- run: python -->``: a Python snippet, run by the set-up environment's Python.
- ``<!-- transcript -->`` (or ``<!-- transcript: what -->``): a shell session; each ``$ `` line
  is run the same way and must succeed, and the first line printed under it must match a line
  of its output, numbers aside.
- ``<!-- summary: DIR -->``: figures a command above printed; every ``"key": number`` in the block
  must equal that key's value in ``DIR/summary.json`` of the sandbox.
- ``<!-- test: duckdb -->`` in docs/: the SQL runs in the sandbox, after the page's commands
  (the README's query blocks, and its ``test: spark-sql|python|pyspark`` blocks, run in
  tests/test_readme.py).
- ``<!-- long: why -->``: ``make`` lines that run the suite or a benchmark of an hour; each is
  checked with ``make -n`` (the target exists and takes those arguments), not run.
- ``<!-- setup: why -->``: the set-up itself, which this test runs after.
- ``<!-- cluster only: why -->``: needs a cluster or a scheduler.
- ``<!-- text: what -->``: not a command (a diagram, a directory tree, a config excerpt).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
KINDS = {"run", "transcript", "summary", "test", "long", "setup", "cluster only", "text"}
FENCE = re.compile(r"^(?P<fence>```)(?P<lang>[\w-]*)\n(?P<code>.*?)^```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"<!-- (?P<kind>[a-z ]+?)(?::\s*(?P<arg>.*?))? -->\s*$")
LINKED = [".venv", "data", "jobs", "shingling", "conf", "bench", "Makefile", "pyproject.toml"]


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    kind: str | None
    arg: str
    code: str

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, with the marker on the line before its fence (if any).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "x.md"
    ...     _ = p.write_text("a\\n<!-- run -->\\n```\\nls\\n```\\n\\n```sql\\nSELECT 1\\n```\\n")
    ...     [(b.line, b.kind, b.code) for b in blocks(p)]
    [(3, 'run', 'ls\\n'), (7, None, 'SELECT 1\\n')]
    """
    text = page.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        kind = marker.group("kind") if marker else None
        arg = (marker.group("arg") or "") if marker else ""
        found.append(Block(page, line, kind, arg, m.group("code")))
    return found


ALL = [b for page in PAGES for b in blocks(page)]


def test_every_block_says_what_it_is() -> None:
    unmarked = [b.name for b in ALL if b.kind not in KINDS]
    assert not unmarked, f"blocks without a known marker ({', '.join(sorted(KINDS))}): {unmarked}"
    assert any(b.kind in ("run", "transcript") for b in ALL)


@pytest.mark.parametrize("block", [b for b in ALL if b.kind == "long"], ids=lambda b: b.name)
def test_long_commands_are_make_targets_that_take_their_arguments(block: Block) -> None:
    for line in commands(block.code):
        assert line.startswith("make "), f"{block.name}: only make lines may be marked long"
        args = shlex.split(line, comments=True)[1:]
        done = subprocess.run(
            ["make", "-n", *args], cwd=REPO, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, f"{block.name}: make -n {' '.join(args)}: {done.stderr}"


def commands(code: str) -> list[str]:
    """The non-empty, non-comment lines of a block, with continued lines joined."""
    joined = re.sub(r"\\\n\s*", "", code)
    return [
        ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]


def masked(line: str) -> str:
    """A printed line with its numbers (and runs of spaces) made alike.

    >>> masked("3 near-duplicate(s)  at 0.031 s")
    '# near-duplicate(s) at # s'
    """
    return re.sub(r"-?\d+(\.\d+)?", "#", " ".join(line.split()))


def fresh_env(home: Path) -> dict[str, str]:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    if "JAVA_HOME" in os.environ:
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    return env


def sandbox(root: Path) -> Path:
    """A directory that looks like a set-up clone, with the inputs the docs name."""
    root.mkdir()
    for name in LINKED:
        (root / name).symlink_to(REPO / name)
    (root / "home").mkdir()
    return root


class Shell:
    """Runs a page's commands as one terminal session would: each in a fresh bash, with the
    page's earlier ``source``/``export``/``cd`` lines before it."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.state: list[str] = []
        self.env = fresh_env(cwd / "home")

    def run(self, code: str, name: str) -> str:
        script = "\n".join([*self.state, "set -euo pipefail", code])
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, (
            f"{name}: exit {done.returncode}\n{code}\n--- stdout\n{done.stdout[-3000:]}"
            f"\n--- stderr\n{done.stderr[-3000:]}"
        )
        self.state += [ln for ln in commands(code) if re.match(r"(source|\.|export|cd) ", ln)]
        return done.stdout + done.stderr


def transcript(block: Block, shell: Shell) -> None:
    """Each ``$ `` line runs; the lines printed under it in the page must be printed, in that
    order, as shown: only timings (``0.031 s``) may differ. ``...`` stands for lines left out.

    An abridged transcript (``<!-- transcript: what -->``, a log with its JSON cut short): the
    first line under each command must match a printed line, numbers aside, and every
    ``"key": number`` shown must be the run's, in the summary.json of its ``--output``.
    """
    if block.arg:
        abridged(block, shell)
        return
    lines = block.code.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("$ "):
            continue
        printed = [timed(got) for got in shell.run(line[2:], block.name).splitlines()]
        shown = []
        for ln in lines[i + 1 :]:
            if ln.startswith("$ "):
                break
            if ln.strip() and ln.strip() != "...":
                shown.append(timed(ln))
        at = 0
        for want in shown:
            found = next((j for j in range(at, len(printed)) if printed[j] == want), None)
            assert found is not None, (
                f"{block.name}: `{line[2:]}` printed no line {want!r} (after line {at}):\n"
                + "\n".join(printed)[-3000:]
            )
            at = found + 1


def abridged(block: Block, shell: Shell) -> None:
    lines = block.code.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("$ "):
            continue
        printed = shell.run(line[2:], block.name)
        expected = next((ln for ln in lines[i + 1 :] if ln.strip()), "")
        if expected and not expected.startswith("$ ") and expected.strip() != "...":
            want = masked(expected)
            assert any(masked(got) == want for got in printed.splitlines()), (
                f"{block.name}: `{line[2:]}` printed no line like {expected!r}:\n{printed[-3000:]}"
            )
    output = re.search(r"--output (\S+)", block.code)
    if output and numbers(block.code):
        summary_matches(
            Block(block.page, block.line, "summary", output.group(1), block.code), shell.cwd
        )


def timed(line: str) -> str:
    """A printed line with its timings made alike, and runs of spaces made one.

    >>> timed("3 near-duplicate(s)  at 0.031 s, in 12 s")
    '3 near-duplicate(s) at # s, in # s'
    """
    return re.sub(r"\d+(\.\d+)? s\b", "# s", " ".join(line.split()))


def numbers(code: str) -> list[tuple[str, float]]:
    return [(k, float(v)) for k, v in re.findall(r'"([\w.]+)":\s*(-?\d+(?:\.\d+)?)\b', code)]


def flattened(value: object, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for k, v in value.items():
            out.update(flattened(v, f"{prefix}{k}/"))
        return out
    return {prefix.rstrip("/"): value}


def summary_matches(block: Block, cwd: Path) -> None:
    summary = flattened(json.loads((cwd / block.arg / "summary.json").read_text()))
    for key, want in numbers(block.code):
        found = [v for path, v in summary.items() if path.rsplit("/", 1)[-1] == key]
        assert found, f"{block.name}: no {key!r} in {block.arg}/summary.json"
        assert any(isinstance(v, (int, float)) and abs(v - want) < 1e-9 for v in found), (
            f"{block.name}: {key} is {found} in {block.arg}/summary.json, the page says {want}"
        )


def duckdb_block(block: Block, cwd: Path) -> None:
    import duckdb

    connection = duckdb.connect()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        result = None
        for statement in [s for s in re.split(r";\s*$", block.code, flags=re.M) if s.strip()]:
            result = connection.execute(statement).fetchall()
    finally:
        os.chdir(previous)
    assert result is not None, f"{block.name}: no statement"


PAGES_TO_RUN = [p for p in PAGES if any(b.kind in ("run", "transcript") for b in blocks(p))]


@pytest.mark.e2e
@pytest.mark.parametrize("page", PAGES_TO_RUN, ids=lambda p: str(p.relative_to(REPO)))
def test_the_commands_of_a_page_work_as_printed(page: Path, tmp_path: Path) -> None:
    cwd = sandbox(tmp_path / "clone")
    shell = Shell(cwd)
    for block in blocks(page):
        if block.kind == "run" and block.arg == "python":
            shell.run(f".venv/bin/python - <<'PYTHON'\n{block.code}PYTHON", block.name)
        elif block.kind == "run":
            shell.run(block.code, block.name)
        elif block.kind == "transcript":
            transcript(block, shell)
        elif block.kind == "summary":
            summary_matches(block, cwd)
        elif block.kind == "test" and block.arg == "duckdb" and page.name != "README.md":
            duckdb_block(block, cwd)
    shutil.rmtree(cwd, ignore_errors=True)
