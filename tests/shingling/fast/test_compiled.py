"""shingling.fast.compiled: the loops compile where no cache can be kept, and a cached loop is
compiled again when any module it inlines changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import shingling
from shingling.fast.compiled import Compiled


def test_compiles_where_no_cache_can_be_written(tmp_path: Path) -> None:
    # the code shipped in a zip (as --py-files ships it) on a node whose home directory cannot be
    # written: numba cannot save its cache, and the loop must still run, compiled in the process
    archive = tmp_path / "shingling.zip"
    with zipfile.ZipFile(archive, "w") as z:
        root = Path(shingling.__file__).parent
        for source in root.rglob("*.py"):
            z.write(source, f"shingling/{source.relative_to(root).as_posix()}")
    env = {**os.environ, "PYTHONPATH": str(archive), "HOME": "/proc/nope"}
    env["XDG_CACHE_HOME"] = "/proc/nope"
    env.pop("NUMBA_CACHE_DIR", None)
    # the smallest compiled loop: the fallback is the same for all (compiling the sketching loop
    # too would add 7 s)
    code = (
        "import pyarrow as pa, shingling; from shingling.fast.text import invalid_utf8; "
        "import shingling.fast.text as b; print(shingling.__file__, b.__file__); "
        "texts = pa.array([b'caf\\xc3\\xa9', b'caf\\xe9']).view(pa.string()); "
        "print(''.join('1' if x else '0' for x in invalid_utf8(texts).to_pylist()))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-3000:]
    where, compiled_from, invalid = run.stdout.split()
    assert where.startswith(str(archive)) and compiled_from.startswith(str(archive))
    assert invalid == "01"


HELPER = """
from numba import njit

@njit(inline="always")
def step(x):
    return x + {add}
"""

LOOP = """
from shingling.fast.compiled import Compiled
from shingling.fast.zz_helper import step


def _loop(n):
    total = 0
    for i in range(n):
        total += step(i)
    return total


loop = Compiled(_loop)
"""


def test_a_change_to_an_inlined_module_compiles_the_loop_again(tmp_path: Path) -> None:
    # numba's own cache key is the source of the loop's file only: a step inlined from another
    # module could change and the cached loop would still run the old one. Two modules added to
    # a copy of the package: the loop, and the step it inlines from the other.
    root = tmp_path / "pkg"
    shutil.copytree(
        Path(shingling.__file__).parent,
        root / "shingling",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    fast = root / "shingling" / "fast"
    (fast / "zz_loop.py").write_text(LOOP)
    env = {**os.environ, "PYTHONPATH": str(root), "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    code = "from shingling.fast.zz_loop import loop; print(loop(10))"

    def run() -> int:
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return int(done.stdout)

    (fast / "zz_helper.py").write_text(HELPER.format(add=1))
    assert run() == 55
    assert list((tmp_path / "cache").rglob("zz_loop._loop-*.nbi")), "the loop was not cached"
    assert run() == 55  # from the cache
    (fast / "zz_helper.py").write_text(HELPER.format(add=2))
    assert run() == 65


def _total(values, out):  # type: ignore[no-untyped-def]
    out[0] = values.sum()


def _writes_its_input(values):  # type: ignore[no-untyped-def]
    values[0] = 1


def test_a_loop_is_compiled_once_for_read_only_and_writable_arrays() -> None:
    # Arrow's buffers reach the loops read-only, numpy's arrays writable: numba types them apart,
    # so without read-only views each loop would be compiled (2 to 7 s) once for each
    total = Compiled(_total, writes=("out",))
    out = np.zeros(1, dtype=np.int64)
    total(np.arange(4, dtype=np.int64), out)
    frozen = pa.array(np.arange(5, dtype=np.int64)).to_numpy()
    assert not frozen.flags.writeable
    total(frozen, out)
    assert out[0] == 10
    dispatcher = total._cached if total._cached is not None else total._compiled
    assert len(dispatcher.signatures) == 1
    # a loop that writes an argument it does not declare is refused when it compiles
    with pytest.raises(Exception, match="readonly"):
        Compiled(_writes_its_input)(np.zeros(2))
    with pytest.raises(ValueError, match="no parameter"):
        Compiled(_total, writes=("result",))
