"""shingling.fast.kernels: the compiled xxHash64 equals the xxhash package, for any input length."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

import shingling
from shingling.fast.kernels import hash_bytes, hash_lanes

UINT64 = st.integers(min_value=0, max_value=2**64 - 1)
SEEDS = st.one_of(st.just(42), st.just(0), UINT64)


@settings(deadline=None, max_examples=300)
@given(st.binary(max_size=200), SEEDS)
def test_bytes_equal_the_xxhash_package(data: bytes, seed: int) -> None:
    # lengths 0 to 200 take every path: the 32-byte stripes, the 8-, 4- and 1-byte tails
    assert hash_bytes(data, seed) == xxhash.xxh64_intdigest(data, seed)


@settings(deadline=None, max_examples=300)
@given(st.lists(UINT64, max_size=17), SEEDS)
def test_lanes_equal_the_xxhash_package(lanes: list[int], seed: int) -> None:
    packed = struct.pack(f"<{len(lanes)}Q", *lanes)
    assert hash_lanes(lanes, seed) == xxhash.xxh64_intdigest(packed, seed)


@pytest.mark.parametrize("n", range(0, 10))
def test_extreme_values(n: int) -> None:
    # zero, one and all-ones inputs exercise every carry of the 64-bit arithmetic
    for v in (0, 1, 2**63, 2**64 - 1):
        packed = struct.pack(f"<{n}Q", *([v] * n))
        assert hash_lanes([v] * n, 42) == xxhash.xxh64_intdigest(packed, 42)
        assert hash_bytes(packed, 2**64 - 1) == xxhash.xxh64_intdigest(packed, 2**64 - 1)


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
        "import pyarrow as pa, shingling; from shingling.fast.batch import invalid_utf8; "
        "import shingling.fast.batch as b; print(shingling.__file__, b.__file__); "
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
