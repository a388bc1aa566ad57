"""Point 3: a config is data. [spark] takes an allow-list of session settings that cannot load code.

Every attack is refused with exit 2 naming the key, before Spark starts; nothing it names runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shingling import config as config_module
from shingling.errors import ConfigError
from shingling.spark_settings import ALLOWED, allowed

ATTACKS = {
    # a module of the file's choosing imported by every Python worker
    "spark.python.daemon.module": "evil",
    "spark.python.worker.module": "evil",
    "spark.executorEnv.PYTHONPATH": "/tmp/evil",
    "spark.executorEnv.LD_PRELOAD": "/tmp/evil.so",
    "spark.jars": "/tmp/evil.jar",
    "spark.jars.packages": "evil:evil:1.0",
    "spark.driver.extraJavaOptions": "-javaagent:/tmp/evil.jar",
    "spark.executor.extraJavaOptions": "-javaagent:/tmp/evil.jar",
    "spark.driver.extraClassPath": "/tmp/evil",
    "spark.executor.extraLibraryPath": "/tmp/evil",
    "spark.plugins": "evil.Plugin",
    "spark.extraListeners": "evil.Listener",
    "spark.sql.extensions": "evil.Extensions",
    "spark.sql.catalog.evil": "evil.Catalog",
    "spark.sql.queryExecutionListeners": "evil.Listener",
    "spark.sql.adaptive.customCostEvaluatorClass": "evil.Evaluator",
    "spark.sql.sources.commitProtocolClass": "evil.Protocol",
    "spark.pyspark.python": "/tmp/evil",
    "spark.submit.pyFiles": "/tmp/evil.py",
    "spark.files": "/tmp/evil",
    "spark.archives": "/tmp/evil.tar.gz",
    "spark.executor.memory": "100g",  # a resource: the spark-submit line's business
    "spark.master": "spark://elsewhere:7077",
}


@pytest.mark.parametrize("key", sorted(ATTACKS))
def test_code_loading_settings_are_refused_by_name(key: str, tmp_path: Path) -> None:
    path = tmp_path / "attack.toml"
    path.write_text(f'[spark]\n"{key}" = "{ATTACKS[key]}"\n')
    with pytest.raises(ConfigError, match=f"spark setting '{key}' is not allowed"):
        config_module.load(path)
    with pytest.raises(ConfigError, match="is not allowed"):
        config_module.load(None, [f'spark."{key}"="{ATTACKS[key]}"'])


def test_the_job_exits_2_before_spark(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from shingling.spark.jobs.near_duplicates import main

    marker = tmp_path / "ran"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    path = tmp_path / "attack.toml"
    path.write_text(
        '[spark]\n"spark.python.daemon.module" = "evil"\n'
        f'"spark.executorEnv.PYTHONPATH" = "{tmp_path}"\n'
    )
    args = ["--input", str(tmp_path / "c.parquet"), "--output", str(tmp_path / "out")]
    assert main([*args, "--config", str(path)]) == 2
    assert "'spark.python.daemon.module' is not allowed" in capsys.readouterr().err
    assert not marker.exists()


def test_the_defaults_and_the_documented_settings_are_allowed() -> None:
    defaults = config_module._read_defaults()["spark"]
    assert all(allowed(key) for key in defaults), defaults
    documented = (Path(__file__).resolve().parents[2] / "docs" / "reliability.md").read_text()
    assert all(f"`{key}`" in documented for key in sorted(ALLOWED)), "docs/reliability.md"
    cfg = config_module.load(None, ['spark."spark.sql.adaptive.skewJoin.enabled"=false'])
    assert cfg.spark["spark.sql.adaptive.skewJoin.enabled"] == "false"


def test_a_setting_must_be_a_scalar(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text('[spark]\n"spark.sql.shuffle.partitions" = {nested = 1}\n')
    with pytest.raises(ConfigError, match="must be a string or a number"):
        config_module.load(path)
