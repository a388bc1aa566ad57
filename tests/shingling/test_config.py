"""shingling.config: defaults, a user file, --set overrides; bad settings refused by name."""

from __future__ import annotations

import argparse
import tomllib
from dataclasses import asdict
from pathlib import Path

import pytest

from shingling import config as config_module
from shingling.config import DEFAULTS_PATH, Config, add_config_arguments, load, to_toml
from shingling.errors import ConfigError, ExitCode
from shingling.spark.jobs import dedup, near_duplicates, nightly

DEFAULTS_TOML = tomllib.loads(DEFAULTS_PATH.read_text(encoding="utf-8"))


def test_defaults_load_as_written_in_default_toml() -> None:
    cfg = load()
    assert isinstance(cfg, Config)
    for section, values in DEFAULTS_TOML.items():
        loaded = asdict(getattr(cfg, section)) if section != "spark" else cfg.spark
        assert {key: loaded[key] for key in values} == {
            key: (str(v) if section == "spark" else v) for key, v in values.items()
        }, section


def test_every_setting_of_default_toml_has_a_comment() -> None:
    # a setting, or a run of settings that one comment explains, comes right after a comment
    lines = [line.strip() for line in DEFAULTS_PATH.read_text(encoding="utf-8").splitlines()]

    def is_setting(line: str) -> bool:
        return "=" in line and not line.startswith("#")

    for i, line in enumerate(lines):
        if is_setting(line):
            above = i - 1
            while is_setting(lines[above]):
                above -= 1
            assert lines[above].startswith("#"), f"no comment above: {line}"


def test_set_overrides_defaults() -> None:
    cfg = load(
        overrides=[
            "pairs.threshold=0.75",
            "sketch.k=32",
            "input.id_column=url",  # a bare word is a string
            'input.text_column="body"',
            "output.overwrite=true",
            'spark."spark.sql.shuffle.partitions"=16',
        ]
    )
    assert cfg.pairs.threshold == 0.75
    assert cfg.sketch.k == 32
    assert (cfg.input.id_column, cfg.input.text_column) == ("url", "body")
    assert cfg.output.overwrite is True
    assert cfg.spark["spark.sql.shuffle.partitions"] == "16"
    assert cfg.sketch.width == DEFAULTS_TOML["sketch"]["width"]  # the rest stays


def test_an_integer_threshold_is_a_float() -> None:
    assert load(overrides=["pairs.threshold=1"]).pairs.threshold == 1.0


def test_config_file_then_set(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('[sketch]\nk = 64\n[input]\nid_column = "url"\n', encoding="utf-8")
    cfg = load(path, ["sketch.k=48"])
    assert (cfg.sketch.k, cfg.input.id_column) == (48, "url")
    assert cfg.pairs.threshold == DEFAULTS_TOML["pairs"]["threshold"]


def test_resolved_config_round_trips_through_toml(tmp_path: Path) -> None:
    zone = 'spark."spark.sql.session.timeZone"="America/New_York"'
    spaced = 'input.id_column="page url"'  # a value with a space
    cfg = load(overrides=["sketch.k=31", "pairs.threshold=0.65", zone, spaced])
    path = tmp_path / "resolved.toml"
    path.write_text(to_toml(cfg), encoding="utf-8")
    assert load(path) == cfg


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("sketchy.k=3", "sketchy"),
        ("sketch.kk=3", "sketch.kk"),
        ("pairs.thresold=0.5", "pairs.thresold"),
    ],
)
def test_unknown_section_or_key_is_refused_by_name(override: str, named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")) as e:
        load(overrides=[override])
    assert e.value.exit_code == ExitCode.USAGE


def test_unknown_key_in_a_file_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[pairs]\nthreshhold = 0.5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"pairs\.threshhold") as e:
        load(path)
    assert str(path) in str(e.value)


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ('sketch.k="many"', "sketch.k"),
        ("sketch.k=2.5", "sketch.k"),
        ("sketch.k=true", "sketch.k"),
        ("pairs.threshold=high", "pairs.threshold"),
        ("output.overwrite=1", "output.overwrite"),
        ('input.id_column=""', "input.id_column"),
        ("input.text_column=[1, 2]", "input.text_column"),
    ],
)
def test_bad_types_are_refused_by_name(override: str, named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        load(overrides=[override])


@pytest.mark.parametrize(
    "override",
    [
        "sketch.k=0",
        "sketch.width=0",
        "sketch.width=-4",
        "pairs.threshold=1.5",
        "pairs.threshold=-0.1",
        "pairs.threshold=nan",
        "pairs.threshold=inf",
        "pairs.max_exact_group=1",
    ],
)
def test_out_of_range_values_are_refused_by_name(override: str) -> None:
    with pytest.raises(ConfigError, match=override.split("=")[0].replace(".", r"\.")):
        load(overrides=[override])


@pytest.mark.parametrize("override", ["pairs.threshold", "threshold=0.5", "=3", "pairs.=3"])
def test_malformed_set_is_refused(override: str) -> None:
    with pytest.raises(ConfigError, match="section.key=value"):
        load(overrides=[override])


def test_missing_or_invalid_config_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[pairs\nthreshold = ", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load(bad)


def test_a_section_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "flat.toml"
    path.write_text("sketch = 4\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[sketch\]"):
        load(path)


def test_config_arguments_read_a_file_overrides_in_order_and_overwrite() -> None:
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    assert vars(parser.parse_args([])) == {"config": None, "set": [], "overwrite": False}
    argv = ["--set", "sketch.k=64", "--config", "x.toml", "--set", "sketch.k=32", "--overwrite"]
    assert vars(parser.parse_args(argv)) == {
        "config": "x.toml",
        "set": ["sketch.k=64", "sketch.k=32"],
        "overwrite": True,
    }


def test_config_arguments_without_overwrite_refuse_it() -> None:
    parser = argparse.ArgumentParser()
    add_config_arguments(parser, overwrite=False)
    assert vars(parser.parse_args([])) == {"config": None, "set": []}
    with pytest.raises(SystemExit) as refused:
        parser.parse_args(["--overwrite"])
    assert refused.value.code == 2


@pytest.mark.parametrize(
    ("parse_args", "required", "has_overwrite"),
    [
        (near_duplicates.parse_args, ["--input", "c", "--output", "o"], True),
        (dedup.parse_args, ["--input", "c", "--run", "r", "--output", "o"], True),
        (
            nightly.parse_args,
            ["--batch", "b", "--index", "i", "--output", "p", "--run-date", "2026-12-01"],
            False,
        ),
    ],
)
def test_entry_points_take_the_config_arguments(parse_args, required, has_overwrite) -> None:
    args = parse_args([*required, "--config", "x.toml", "--set", "a.b=1", "--set", "c.d=2"])
    assert (args.config, args.set) == ("x.toml", ["a.b=1", "c.d=2"])
    assert parse_args(required).set == []
    if has_overwrite:
        assert parse_args([*required, "--overwrite"]).overwrite is True
    else:
        assert not hasattr(args, "overwrite")


def test_the_log_line_names_only_the_settings_that_differ_from_the_defaults() -> None:
    assert config_module.describe(config_module.load()) == (
        "config: the defaults of shingling/default.toml"
    )
    line = config_module.describe(
        config_module.load(overrides=["pairs.threshold=0.7", "sketch.k=64"])
    )
    assert line.endswith("with sketch.k = 64, pairs.threshold = 0.7")


def test_every_rule_names_a_setting_and_refuses_a_value() -> None:
    defaults = config_module.load().to_dict()
    for name, rule in config_module.RULES.items():
        section, key = name.split(".")
        assert key in defaults[section], name  # no rule for a setting that does not exist
        bad = "not-a-choice" if rule.choices else (rule.low - 1 if rule.low is not None else None)
        if bad is None:
            bad = rule.high + 1  # type: ignore[operator]
        with pytest.raises(ConfigError, match=name.replace(".", r"\.")):
            config_module.load(overrides=[f"{name}={bad}"])
