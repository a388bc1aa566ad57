"""``pip install .`` gives a package whose jobs find their defaults (package data, no checkout)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_holds_the_default_config_and_the_jobs_load_it(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), "."],
        cwd=ROOT,
        check=True,
    )
    (wheel,) = tmp_path.glob("shingling-*.whl")
    with zipfile.ZipFile(wheel) as packed:
        names = set(packed.namelist())
        assert "shingling/default.toml" in names
        assert "shingling/fast/sketch.py" in names and "shingling/pairs.py" in names
        assert "shingling/spark/jobs/near_duplicates.py" in names
        # every module of the checkout's package (a subpackage missing from pyproject's list
        # would install a package that fails on import)
        sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "shingling").rglob("*.py")}
        assert sources <= names, sorted(sources - names)
        # one top-level package: no `jobs` (the spark-submit scripts stay in the checkout)
        top = {name.split("/")[0] for name in names if ".dist-info/" not in name}
        assert top == {"shingling"}, top
        packed.extractall(tmp_path / "site")
    # the installed files alone, away from the checkout: isolated mode, the wheel's files first
    script = tmp_path / "load.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path / 'site')!r})\n"
        "import shingling.config as c\n"
        "cfg = c.load()\n"
        "print(cfg.sketch.k, cfg.pairs.threshold, c.__file__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", str(script)], cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    k, threshold, where = out.stdout.split()
    assert where.startswith(str(tmp_path / "site"))
    assert (int(k), float(threshold)) == (20, 0.5)
