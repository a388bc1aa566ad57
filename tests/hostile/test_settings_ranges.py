"""Issue 34 §2 and §4: every setting's value is checked before Spark starts (exit 2, naming it).

Numbers have a range in the one validation table (shingling/config.py RULES); ``[spark]`` values are
checked as well as their keys, and none may name a class to load.
"""

from __future__ import annotations

import typing
from dataclasses import fields
from pathlib import Path

import pytest

from shingling import config as config_module
from shingling.errors import ConfigError


def numeric_settings() -> list[str]:
    """Every int or float setting of the config's sections."""
    found = []
    for section, cls in config_module._SECTIONS.items():
        hints = typing.get_type_hints(cls)
        for f in fields(cls):
            if hints[f.name] in (int, float):
                found.append(f"{section}.{f.name}")
    return found


@pytest.mark.parametrize("name", numeric_settings())
def test_every_number_has_both_bounds_in_the_table(name: str) -> None:
    rule = config_module.RULES.get(name)
    assert rule is not None and rule.low is not None and rule.high is not None, name


@pytest.mark.parametrize(
    "override",
    [
        "pairs.max_exact_group=100000000000000000000",  # beyond 64 bits: was a Py4J traceback
        "pairs.max_exact_group=9223372036854775807",
        "index.probe_documents=0",  # made a 60-document night take 11 minutes
        "index.probe_documents=-5",
        "pairs.max_posting=100000000000000000000",
        "index.rows_per_file=100000000000000000000",
        "pairs.threshold=0",  # would promise every pair with J > 0
        "pairs.threshold=0.0",
        "pairs.containment_threshold=0",  # every pair with any shingle in common: not honoured
    ],
)
def test_out_of_range_numbers_are_refused_by_name(override: str) -> None:
    name = override.split("=")[0]
    with pytest.raises(ConfigError, match=f"{name} = .* is out of range"):
        config_module.load(None, [override])


def test_the_smallest_positive_threshold_is_accepted() -> None:
    assert config_module.load(None, ["pairs.threshold=0.01"]).pairs.threshold == 0.01


BAD_SPARK_VALUES = {
    "spark.sql.shuffle.partitions": ["0", "-1", "eight"],
    "spark.default.parallelism": ["0"],
    "spark.sql.parquet.compression.codec": ["org.evil.Codec", "zstandard"],
    "spark.io.compression.codec": ["org.apache.spark.io.EvilCodec", "gzip"],
    "spark.sql.session.timeZone": ["Mars/Olympus", "../../etc/passwd", "/etc/localtime"],
    "spark.sql.execution.arrow.maxRecordsPerBatch": ["0"],
    "spark.sql.files.maxPartitionBytes": ["lots"],
    "spark.sql.adaptive.enabled": ["maybe"],
    "spark.sql.adaptive.optimizer.excludedRules": ["org.apache.spark.sql.Evil"],
    "spark.ui.enabled": ["org.evil.Ui"],
}


@pytest.mark.parametrize(
    ("key", "value"), [(k, v) for k, values in BAD_SPARK_VALUES.items() for v in values]
)
def test_spark_values_are_checked_before_spark(key: str, value: str, tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text(f'[spark]\n"{key}" = "{value}"\n')
    with pytest.raises(ConfigError, match=f"spark setting '{key}' = .*: expected"):
        config_module.load(path)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("spark.sql.shuffle.partitions", 64),
        ("spark.sql.session.timeZone", "Europe/Paris"),
        ("spark.sql.session.timeZone", "+01:00"),
        ("spark.sql.parquet.compression.codec", "snappy"),
        ("spark.io.compression.codec", "lz4"),
        ("spark.sql.adaptive.enabled", False),
        ("spark.sql.adaptive.advisoryPartitionSizeInBytes", "64m"),
        ("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "5.0"),
        ("spark.sql.broadcastTimeout", "600s"),
        ("spark.sql.autoBroadcastJoinThreshold", "-1"),
    ],
)
def test_ordinary_spark_values_pass(key: str, value: object) -> None:
    shown = f'"{value}"' if isinstance(value, str) else str(value).lower()
    cfg = config_module.load(None, [f'spark."{key}"={shown}'])
    assert key in cfg.spark


def test_a_bad_spark_value_exits_2_before_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from shingling.spark.jobs.near_duplicates import main

    args = ["--input", str(tmp_path / "c.parquet"), "--output", str(tmp_path / "out")]
    assert main([*args, "--set", 'spark."spark.sql.shuffle.partitions"=0']) == 2
    assert "'spark.sql.shuffle.partitions' = '0'" in capsys.readouterr().err
