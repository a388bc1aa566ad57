"""The shape of the code: the reference library stands alone, the compiled path beside it, and the
entry points import no other entry point."""

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
    if not info.name.startswith("shingling.fast")
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


def test_entry_points_import_no_other_entry_point() -> None:
    for name in ENTRY_POINTS:
        tree = ast.parse((ROOT / "jobs" / f"{name}.py").read_text())
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        } | {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        others = {f"jobs.{other}" for other in ENTRY_POINTS if other != name}
        assert not imported & others, (name, imported & others)
