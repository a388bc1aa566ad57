"""Safe by construction: config is data, paths are never shell words, nothing runs input.

The source is scanned with ``ast`` (not grep, so comments and strings do not count) for the ways
text can become code: ``eval``/``exec``/``compile``, unpickling, ``os.system``/``os.popen``, and
``subprocess`` with ``shell=True`` or a single command string. Then config values and ``--set``
overrides that look like code are shown to stay inert, and the job is run on a corpus and an output
whose paths are full of shell metacharacters.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from testdata import SAMPLE_CORPUS

from shingling import config as config_module
from shingling.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for d in ("shingling", "jobs", "bench") for p in (REPO / d).rglob("*.py"))

CODE_BUILTINS = {"eval", "exec", "compile", "__import__"}
UNSAFE_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle"}
SHELL_CALLS = {("os", "system"), ("os", "popen"), ("os", "execl"), ("os", "execlp")}
SUBPROCESS_CALLS = {
    "run",
    "Popen",
    "call",
    "check_call",
    "check_output",
    "getoutput",
    "getstatusoutput",
}


def unsafe_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each place in a module where text could be run as code or shell.

    >>> unsafe_uses(ast.parse("import pickle\\neval(x)\\nsubprocess.run(c, shell=True)"))
    [(1, 'import pickle'), (2, 'eval()'), (3, 'subprocess.run(shell=True)')]
    >>> unsafe_uses(ast.parse("re.compile(p)\\nsubprocess.run(['ls', path])"))
    []
    """
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            found += [
                (node.lineno, f"import {n}") for n in names if n.split(".")[0] in UNSAFE_MODULES
            ]
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in CODE_BUILTINS:
            found.append((node.lineno, f"{f.id}()"))
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            if (f.value.id, f.attr) in SHELL_CALLS:
                found.append((node.lineno, f"{f.value.id}.{f.attr}()"))
            if f.value.id == "subprocess" and f.attr in SUBPROCESS_CALLS:
                shell = any(
                    k.arg == "shell"
                    and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                    for k in node.keywords
                )
                if shell:
                    found.append((node.lineno, f"subprocess.{f.attr}(shell=True)"))
                elif node.args and isinstance(node.args[0], ast.Constant | ast.JoinedStr):
                    found.append((node.lineno, f"subprocess.{f.attr}(<a command string>)"))
    return sorted(found)


def test_the_scan_covers_the_code() -> None:
    assert len(SOURCES) > 20 and REPO / "shingling" / "config.py" in SOURCES


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_code_or_shell_built_from_text(path: Path) -> None:
    assert unsafe_uses(ast.parse(path.read_text(encoding="utf-8"), str(path))) == []


# what an attacker would put in a config: it must be refused or kept as the literal text it is
PAYLOAD = "__import__('os').system('touch {marker}')"


def test_config_values_that_look_like_code_are_refused_as_data(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    payload = PAYLOAD.format(marker=marker)
    (tmp_path / "x.toml").write_text(f"[pairs]\nthreshold = {payload!r}\n".replace("'", '"', 2))
    for load in (
        lambda: config_module.load(tmp_path / "x.toml"),
        lambda: config_module.load(None, [f"pairs.threshold={payload}"]),
        lambda: config_module.load(
            None, [f"sketch.k=!!python/object:os.system ['touch {marker}']"]
        ),
    ):
        with pytest.raises(ConfigError):
            load()
    # a string setting keeps the text as it is, shell and Python syntax included
    column = f"$(touch {marker}); `touch {marker}` {payload}"
    assert config_module.load(None, [f"input.text_column={column}"]).input.text_column == column
    assert not marker.exists()


# every character a shell treats specially, but none that Hadoop paths or Spark's globbing read
# (':' starts a URI scheme; '*', '?', '[', '{' and '\\' are glob syntax in Spark's input paths)
SHELL_CHARS = "in put; $(touch ran) & `touch ran` 'q' \"d\" <r> |p| #!~ $HOME %s"


def test_paths_with_shell_metacharacters_are_plain_paths(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shingling.spark.jobs.near_duplicates import main

    monkeypatch.chdir(tmp_path)  # a command run by a shell here would leave ./ran behind
    corpus_dir = tmp_path / SHELL_CHARS
    corpus_dir.mkdir()
    pq.write_table(pq.read_table(SAMPLE_CORPUS).slice(0, 60), corpus_dir / "corpus.parquet")
    output = tmp_path / f"out {SHELL_CHARS}"
    assert main(["--input", str(corpus_dir / "corpus.parquet"), "--output", str(output)]) == 0
    written = sorted(p.name for p in output.iterdir() if not p.name.startswith("."))  # .crc files
    assert written == [
        "config.toml",
        "documents",
        "pairs",
        "summary.json",
    ]
    assert pq.read_table(output / "documents").num_rows == 60
    assert not list(tmp_path.rglob("ran")) and not Path("ran").exists()
    assert not os.path.exists(os.path.expanduser("~/ran"))
