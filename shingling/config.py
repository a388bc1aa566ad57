"""Job configuration: shingling/default.toml, an optional user file, and --set overrides.

Parsed as data only (``tomllib``); unknown sections and keys and out-of-range values are refused with
a message that names them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import pkgutil
import re
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, cast

from shingling.errors import ConfigError
from shingling.spark_settings import check_spark_setting

INPUT_FORMATS = ("parquet", "jsonl")
DEFAULTS_NAME = "default.toml"  # package data of shingling/: every setting, its default, a comment
DEFAULTS_PATH = Path(__file__).resolve().parent / DEFAULTS_NAME


@dataclass(frozen=True)
class InputConfig:
    id_column: str
    text_column: str
    format: str = "parquet"


@dataclass(frozen=True)
class SketchConfig:
    width: int
    k: int
    unit: str
    sample_mod: int


@dataclass(frozen=True)
class PairsConfig:
    threshold: float
    max_exact_group: int
    max_posting: int
    frequency_sketch_mb: int
    containment_threshold: float
    verify: bool
    candidate_margin: float


@dataclass(frozen=True)
class OutputConfig:
    overwrite: bool


@dataclass(frozen=True)
class ClustersConfig:
    min_jaccard: float
    max_rounds: int
    components: bool


KEEP_POLICIES = ("longest", "smallest_id")
KEEP_COLUMN_PREFIX = "column:"
KEEP_ORDERS = ("desc", "asc")


@dataclass(frozen=True)
class DedupConfig:
    keep: str
    keep_order: str
    max_rounds: int
    finish_edges: int


@dataclass(frozen=True)
class IndexConfig:
    rows_per_file: int
    row_group_bytes: int
    probe_documents: int


@dataclass(frozen=True)
class Config:
    input: InputConfig
    sketch: SketchConfig
    pairs: PairsConfig
    output: OutputConfig
    clusters: ClustersConfig
    dedup: DedupConfig
    index: IndexConfig
    spark: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_SECTIONS = {
    "input": InputConfig,
    "sketch": SketchConfig,
    "pairs": PairsConfig,
    "output": OutputConfig,
}
_SECTIONS.update(clusters=ClustersConfig, dedup=DedupConfig)
_SECTIONS.update(index=IndexConfig)


@dataclass(frozen=True)
class Rule:
    """What a setting may hold beyond its type: a range (inclusive; None for no bound), or one
    of a few words (``choices``), or, with ``prefix``, a word that starts with it and names
    something (``column:<name>``)."""

    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    prefix: str | None = None
    low_open: bool = False  # the value must be above ``low``, not equal to it

    def check(self, name: str, value: Any) -> None:
        if isinstance(value, str):
            named = (
                self.prefix is not None and value.startswith(self.prefix) and value != self.prefix
            )
            if self.choices and value not in self.choices and not named:
                expected = ", ".join(self.choices)
                if self.prefix is not None:
                    expected += f" or {self.prefix}<name>"
                raise ConfigError(f"{name} = {value!r} is not one of {expected}")
            return
        # compared exactly: an int beyond 2**53 must not round into the range as a float
        number = value if isinstance(value, int) else float(value)
        too_low = self.low is not None and (
            number <= self.low if self.low_open else number < self.low
        )
        if too_low or (self.high is not None and number > self.high):
            opening = "(" if self.low_open else "["
            raise ConfigError(
                f"{name} = {value!r} is out of range {opening}{self.low}, {self.high}]"
            )


#: The largest count a setting may hold: Spark compares counts as 32-bit ints in places, and a
#: value beyond 64 bits fails inside Py4J; no corpus needs more.
MAX_COUNT = 2**31 - 1

# Every setting's rule beyond its type, in one table (the types are the dataclasses' above). Every
# number has both bounds (tests/hostile/test_settings_ranges.py holds the table to that).
RULES: dict[str, Rule] = {
    "input.format": Rule(choices=INPUT_FORMATS),
    "sketch.width": Rule(1, 64),
    "sketch.k": Rule(1, 4096),
    "sketch.unit": Rule(choices=("words", "chars")),
    "sketch.sample_mod": Rule(0, 1 << 40),
    # 0 would promise every pair with J > 0, but two documents whose sketches share no hash are
    # never compared: any positive cut is honoured (the pairs whose figure reaches it)
    "pairs.threshold": Rule(0.0, 1.0, low_open=True),
    "pairs.candidate_margin": Rule(0.0, 1.0),
    "pairs.containment_threshold": Rule(0.0, 1.0, low_open=True),  # 0: the same promise
    "pairs.max_exact_group": Rule(2, MAX_COUNT),
    "pairs.max_posting": Rule(0, MAX_COUNT),
    "pairs.frequency_sketch_mb": Rule(1, 1024),
    "clusters.min_jaccard": Rule(0.0, 1.0),
    "clusters.max_rounds": Rule(1, 1000),
    "dedup.keep": Rule(choices=KEEP_POLICIES, prefix=KEEP_COLUMN_PREFIX),
    "dedup.keep_order": Rule(choices=KEEP_ORDERS),
    "dedup.max_rounds": Rule(1, 100000),
    "dedup.finish_edges": Rule(0, 100_000_000),
    "index.rows_per_file": Rule(1000, MAX_COUNT),
    "index.row_group_bytes": Rule(65536, 1 << 30),
    # each slice is one more scan of the whole index: a handful of documents per slice turns a
    # small night into hundreds of scans (0 made a 60-document night take 11 minutes)
    "index.probe_documents": Rule(100, MAX_COUNT),
}


# Sections of earlier versions, refused with what replaced them.
REMOVED_SECTIONS = {
    "verify": "the pair job verifies every pair (pairs.verify = true, the default) and dedup"
    " decides on its exact Jaccard; rerun near-duplicates with pairs.verify = true",
}


def _read_defaults() -> dict[str, Any]:
    """shingling/default.toml, package data: found in a checkout, an installed package or the zip."""
    data = pkgutil.get_data("shingling", DEFAULTS_NAME)
    if data is None:
        raise ConfigError(f"default config {DEFAULTS_NAME} not found in the shingling package")
    return tomllib.loads(data.decode("utf-8"))


def _merge(base: dict[str, Any], extra: dict[str, Any], origin: str) -> None:
    for section, values in extra.items():
        if section in REMOVED_SECTIONS:
            raise ConfigError(f"{origin}: [{section}] was removed: {REMOVED_SECTIONS[section]}")
        if section not in base:
            raise ConfigError(f"{origin}: unknown section [{section}]; known: {', '.join(base)}")
        if not isinstance(values, dict):
            raise ConfigError(f"{origin}: [{section}] must be a table of settings")
        for key, value in values.items():
            if section == "spark":
                check_spark_setting(key, value, origin)  # an allow-list: config is data
            elif key not in base[section]:
                known = ", ".join(base[section])
                raise ConfigError(f"{origin}: unknown setting {section}.{key}; known: {known}")
            base[section][key] = value


def _parse_override(item: str) -> tuple[str, str, Any]:
    name, sep, raw = item.partition("=")
    section, dot, key = name.strip().partition(".")
    if not sep or not dot or not key:
        raise ConfigError(f"--set {item!r}: expected section.key=value, e.g. pairs.threshold=0.7")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw  # a bare word: a string, such as --set input.id_column=url
    return section, key.strip().strip('"'), value


def _check_text(name: str, value: str) -> None:
    """Refuse a string that is not Unicode text (a lone surrogate, as Python decodes a command
    line's undecodable bytes): config.toml, written in UTF-8 beside the output, could not hold it.

    >>> _check_text("input.id_column", "id 😀")
    >>> _check_text("input.id_column", "id \\udcff")
    Traceback (most recent call last):
    ...
    shingling.errors.ConfigError: input.id_column = 'id \\udcff' is not valid text (a lone surrogate ...
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ConfigError(
            f"{name} = {value!r} is not valid text (a lone surrogate at {e.start}, as undecodable"
            " bytes of a command line read); write it in UTF-8"
        ) from e


def _build(section: str, cls: type, values: dict[str, Any]) -> Any:
    kwargs = {}
    for f in fields(cls):
        value: Any = values[f.name]
        name = f"{section}.{f.name}"
        expected: type = {"int": int, "float": float, "bool": bool, "str": str}[str(f.type)]
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(f"{name} must be {expected.__name__}, got {value!r}")
        if expected is float and not math.isfinite(
            cast(float, value)
        ):  # nan passes every range comparison
            raise ConfigError(f"{name} must be a finite number, got {value!r}")
        if expected is str and not value:
            raise ConfigError(f"{name} must not be empty")
        if expected is str:
            _check_text(name, str(value))
        if name in RULES:
            RULES[name].check(name, value)
        kwargs[f.name] = value
    return cls(**kwargs)


def load(path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()) -> Config:
    """The resolved config: defaults, then the file at ``path``, then ``section.key=value`` items."""
    merged = _read_defaults()
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"cannot read config file {path}: {e.strerror}") from e
        try:
            _merge(merged, tomllib.loads(text), str(path))
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path} is not valid TOML: {e}") from e
    for item in overrides:
        section, key, value = _parse_override(item)
        _merge(merged, {section: {key: value}}, f"--set {item}")
    spark = {
        str(k): str(v).lower() if isinstance(v, bool) else str(v)
        for k, v in merged["spark"].items()
    }
    for key, value in spark.items():
        _check_text(f"spark.{key}", key)
        _check_text(f"spark.{key}", value)
    return Config(
        **{name: _build(name, cls, merged[name]) for name, cls in _SECTIONS.items()}, spark=spark
    )


def add_config_arguments(parser: argparse.ArgumentParser, *, overwrite: bool = True) -> None:
    """Add the options every entry point reads its config from: --config, --set, --overwrite.

    ``overwrite=False`` leaves out --overwrite, for a job that has no output to replace.

    >>> parser = argparse.ArgumentParser()
    >>> add_config_arguments(parser, overwrite=False)
    >>> parser.parse_args(["--set", "sketch.k=64", "--set", "pairs.threshold=0.7"])
    Namespace(config=None, set=['sketch.k=64', 'pairs.threshold=0.7'])
    """
    parser.add_argument("--config", help="TOML file with settings over shingling/default.toml")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override one setting",
    )
    if overwrite:
        parser.add_argument("--overwrite", action="store_true", help="replace an existing output")


def describe(config: Config) -> str:
    """One log line for the resolved config: the settings that differ from shingling/default.toml (the
    whole config is saved beside the output, config.toml, and in summary.json)."""
    defaults = load().to_dict()
    changed = [
        f"{section}.{key} = {value!r}"
        for section, values in config.to_dict().items()
        if isinstance(values, dict)
        for key, value in values.items()
        if defaults.get(section, {}).get(key) != value
    ]
    return "config: the defaults of shingling/default.toml" + (
        f", with {', '.join(changed)}" if changed else ""
    )


# what a TOML basic string must escape: the quote, the backslash and the control characters
# (tab aside); everything else, emoji included, is written as itself (config.toml is UTF-8)
_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string that reads back as exactly ``text``.

    ``json.dumps`` is not that: it writes a character beyond the BMP as two escaped surrogates
    (``\\ud83d\\ude00``), which TOML refuses, and leaves DEL unescaped, which TOML forbids.

    >>> print(toml_string('id "😀"\\x7f'))
    "id \\"😀\\"\\u007F"
    """
    return (
        '"'
        + "".join(
            _TOML_ESCAPES.get(c)
            or (f"\\u{ord(c):04X}" if (ord(c) < 32 and c != "\t") or ord(c) == 127 else c)
            for c in text
        )
        + '"'
    )


def toml_value(value: Any) -> str:
    """A setting's value as TOML: what a config file holds and what ``--set name=value`` takes."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return toml_string(value)
    return json.dumps(value)  # an int, or a finite float (load refuses nan and infinities)


def to_toml(config: Config) -> str:
    """The config as TOML, to save beside an output; :func:`load` reads it back as ``config``
    (tests/hostile/test_state.py, every Unicode string included)."""
    lines = []
    for section, values in config.to_dict().items():
        lines.append(f"[{section}]")
        for key, value in values.items():
            shown_key = key if _BARE_KEY.match(key) else toml_string(key)
            lines.append(f"{shown_key} = {toml_value(value)}")
        lines.append("")
    return "\n".join(lines)
