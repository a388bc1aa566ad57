"""The shape of the code: the reference library stands alone, the compiled path and the Spark layer
beside it, the jobs import no other job, and the spark-submit scripts of jobs/ are only that."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import shingling

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = sorted(
    info.name
    for info in pkgutil.walk_packages(shingling.__path__, "shingling.")
    if not info.name.startswith(("shingling.fast", "shingling.spark"))
)
ENTRY_POINTS = ("near_duplicates", "dedup", "nightly", "build_index", "undo_night")


def test_the_reference_library_imports_neither_spark_nor_numba() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {REFERENCE!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in ('pyspark', 'numba') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout
    assert "shingling.pairs" in REFERENCE and "shingling.schema" in REFERENCE


def test_jobs_import_no_other_job() -> None:
    for name in ENTRY_POINTS:
        imported = _imports(ROOT / "shingling" / "spark" / "jobs" / f"{name}.py")
        others = {f"shingling.spark.jobs.{other}" for other in ENTRY_POINTS if other != name}
        assert not imported & others, (name, imported & others)


def test_the_submit_scripts_are_thin_and_not_a_package() -> None:
    assert not (ROOT / "jobs" / "__init__.py").exists()
    scripts = sorted(p.stem for p in (ROOT / "jobs").glob("*.py"))
    assert scripts == sorted([*ENTRY_POINTS, "compact_index"])
    for name in scripts:
        assert _imports(ROOT / "jobs" / f"{name}.py") == {"sys", f"shingling.spark.jobs.{name}"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }


def test_a_clone_named_shingling_does_not_shadow_the_package(tmp_path: Path) -> None:
    """Python run from the folder that holds a clone named ``shingling`` imports the package, not
    the clone as a namespace package (the Makefile's editable install is in compat mode)."""
    (tmp_path / "shingling").symlink_to(ROOT, target_is_directory=True)
    code = "import shingling; from shingling import similarity; print(shingling.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve() == (ROOT / "shingling" / "__init__.py").resolve()
