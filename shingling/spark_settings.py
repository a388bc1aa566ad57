"""The Spark settings a config file may hold: session settings that cannot load code.

A config file is data. ``[spark]`` (and ``--set spark."<key>"=...``) passes session settings to
Spark, and many Spark settings name code to load or a process environment: a Python module for the
workers (``spark.python.daemon.module``, ``spark.python.worker.module``), a ``PYTHONPATH`` or
``LD_PRELOAD`` (``spark.executorEnv.*``), jars and classes (``spark.jars``, ``spark.sql.extensions``,
``*.extraJavaOptions``, ``*.extraClassPath``, plugins, listeners, catalogs). None of those is
accepted here: a key must be on :data:`ALLOWED` (or under one of :data:`ALLOWED_PREFIXES` and free
of the words in :data:`NEVER`), else the config is refused with exit 2 naming the key. Resources
and anything else belong on the spark-submit line (``--conf``), which the operator controls.

Values are checked too (:data:`VALUES`), before Spark starts: a partition count of 0, a codec Spark
does not know or an unknown time zone would otherwise surface deep in the first read ("cannot read
the input as Parquet"), and a codec setting also takes a class name, which Spark would load. Every
value is a number, a boolean, a size, a duration or one of a few words; none can name a class.
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Callable

from shingling.errors import ConfigError

#: settings accepted by name: SQL planning and shuffle, Arrow batches, Parquet, local I/O sizes
ALLOWED = frozenset(
    {
        "spark.sql.shuffle.partitions",
        "spark.sql.autoBroadcastJoinThreshold",
        "spark.sql.broadcastTimeout",
        "spark.sql.execution.arrow.maxRecordsPerBatch",
        "spark.sql.execution.arrow.maxBytesPerBatch",
        "spark.sql.execution.arrow.pyspark.enabled",
        "spark.sql.parquet.compression.codec",
        "spark.sql.parquet.enableVectorizedReader",
        "spark.sql.parquet.columnarReaderBatchSize",
        "spark.sql.parquet.filterPushdown",
        "spark.sql.parquet.mergeSchema",
        "spark.sql.files.maxPartitionBytes",
        "spark.sql.files.openCostInBytes",
        "spark.sql.files.maxRecordsPerFile",
        "spark.sql.session.timeZone",
        "spark.sql.leafNodeDefaultParallelism",
        "spark.default.parallelism",
        "spark.shuffle.compress",
        "spark.shuffle.spill.compress",
        "spark.shuffle.file.buffer",
        "spark.shuffle.sort.bypassMergeThreshold",
        "spark.reducer.maxSizeInFlight",
        "spark.io.compression.codec",
        "spark.io.compression.zstd.level",
        "spark.locality.wait",
        "spark.ui.enabled",
        "spark.ui.showConsoleProgress",
    }
)
#: families accepted by prefix: adaptive execution's switches and sizes
ALLOWED_PREFIXES = ("spark.sql.adaptive.",)
#: words that make a key under an allowed prefix refused anyway (classes, code, environment)
NEVER = ("class", "plugin", "listener", "extension", "jar", "module", "env", "path", "option")


_SIZE = re.compile(r"^-?[0-9]+(b|k|kb|m|mb|g|gb|t|tb|p|pb)?$", re.IGNORECASE)
_DURATION = re.compile(r"^[0-9]+(us|ms|s|m|min|h|d)?$", re.IGNORECASE)
_OFFSET = re.compile(r"^(UTC|GMT)?[+-][0-9]{2}:[0-9]{2}$")


def _count(low: int) -> Callable[[str], bool]:
    """An integer of at least ``low``."""
    return lambda v: re.fullmatch(r"-?[0-9]+", v) is not None and low <= int(v) < 2**31


def _boolean(value: str) -> bool:
    return value.lower() in ("true", "false")


def _size(value: str) -> bool:
    """Bytes, with Spark's units (``64m``, ``1g``, ``-1`` for "never" where Spark allows it)."""
    return _SIZE.match(value) is not None


# a size unit's power of two, by its first letter (k and kb are the same)
_SHIFTS = {"": 0, "b": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}


def size_bytes(value: str) -> int:
    """A size as Spark reads it (``64m``: 64 MiB; a bare number: bytes), in bytes.

    >>> size_bytes("67108864"), size_bytes("64m"), size_bytes("1G"), size_bytes("-1")
    (67108864, 67108864, 1073741824, -1)
    """
    text = value.strip()
    m = _SIZE.match(text)
    if m is None:
        raise ValueError(f"not a size: {value!r}")
    unit = (m.group(1) or "").lower()
    return int(text[: len(text) - len(unit)]) << _SHIFTS[unit[:1]]


def _duration(value: str) -> bool:
    """A time span, seconds or with Spark's units (``300``, ``3s``, ``500ms``)."""
    return _DURATION.match(value) is not None


def _time_zone(value: str) -> bool:
    """A region of the time zone database (``Europe/Paris``, ``UTC``) or an offset (``+01:00``)."""
    if _OFFSET.match(value):
        return True
    try:
        zoneinfo.ZoneInfo(value)  # refuses paths and "..": only names in the tz database
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def _one_of(*words: str) -> Callable[[str], bool]:
    return lambda v: v.lower() in words


def _zstd_level(value: str) -> bool:
    return re.fullmatch(r"-?[0-9]+", value) is not None and -7 <= int(value) <= 22


#: What each allowed key's value may be, and how the message describes it.
VALUES: dict[str, tuple[Callable[[str], bool], str]] = {
    "spark.sql.shuffle.partitions": (_count(1), "a count of at least 1"),
    "spark.default.parallelism": (_count(1), "a count of at least 1"),
    "spark.sql.leafNodeDefaultParallelism": (_count(1), "a count of at least 1"),
    "spark.sql.execution.arrow.maxRecordsPerBatch": (_count(1), "a count of at least 1"),
    "spark.sql.parquet.columnarReaderBatchSize": (_count(1), "a count of at least 1"),
    "spark.sql.files.maxRecordsPerFile": (_count(0), "a count (0: no limit)"),
    "spark.shuffle.sort.bypassMergeThreshold": (_count(0), "a count"),
    "spark.io.compression.zstd.level": (_zstd_level, "a zstd level, -7 to 22"),
    "spark.sql.autoBroadcastJoinThreshold": (_size, "a size such as 10m, or -1"),
    "spark.sql.execution.arrow.maxBytesPerBatch": (_size, "a size such as 64m"),
    "spark.sql.files.maxPartitionBytes": (_size, "a size such as 128m"),
    "spark.sql.files.openCostInBytes": (_size, "a size such as 4m"),
    "spark.shuffle.file.buffer": (_size, "a size such as 32k"),
    "spark.reducer.maxSizeInFlight": (_size, "a size such as 48m"),
    "spark.sql.broadcastTimeout": (_duration, "a duration such as 300s"),
    "spark.locality.wait": (_duration, "a duration such as 3s"),
    "spark.sql.session.timeZone": (_time_zone, "a time zone such as UTC or Europe/Paris"),
    # short names only: both settings also take a class name, which Spark would load
    "spark.io.compression.codec": (
        _one_of("lz4", "lzf", "snappy", "zstd"),
        "lz4, lzf, snappy or zstd",
    ),
    "spark.sql.parquet.compression.codec": (
        _one_of(
            "none", "uncompressed", "snappy", "gzip", "lzo", "brotli", "lz4", "lz4_raw", "zstd"
        ),
        "none, uncompressed, snappy, gzip, lzo, brotli, lz4, lz4_raw or zstd",
    ),
}
_BOOLEAN = (_boolean, "true or false")
#: under spark.sql.adaptive.: switches, counts, factors, sizes, durations; never a word
_ADAPTIVE = (
    lambda v: (
        _boolean(v) or _size(v) or _duration(v) or re.fullmatch(r"[0-9]*\.?[0-9]+", v) is not None
    ),
    "true, false, a number, a size or a duration",
)


def check_value(key: str, value: str) -> str | None:
    """Why ``value`` cannot be ``key``'s (a key :func:`allowed` accepts), or None if it can.

    >>> check_value("spark.sql.shuffle.partitions", "0")
    'a count of at least 1'
    >>> check_value("spark.io.compression.codec", "org.evil.Codec")
    'lz4, lzf, snappy or zstd'
    >>> check_value("spark.sql.session.timeZone", "Europe/Paris") is None
    True
    """
    test, expected = VALUES.get(key) or (
        _ADAPTIVE if key.startswith(ALLOWED_PREFIXES) else _BOOLEAN
    )
    return None if test(value.strip()) else expected


def allowed(key: str) -> bool:
    """Whether ``[spark]`` may set ``key``.

    >>> allowed("spark.sql.shuffle.partitions"), allowed("spark.sql.adaptive.enabled")
    (True, True)
    >>> allowed("spark.python.daemon.module"), allowed("spark.sql.adaptive.customCostEvaluatorClass")
    (False, False)
    """
    if key in ALLOWED:
        return True
    lowered = key.lower()
    return key.startswith(ALLOWED_PREFIXES) and not any(word in lowered for word in NEVER)


def check_spark_setting(key: str, value: object, origin: str) -> None:
    """Refuse a ``[spark]`` setting that is not allowed, or whose value is not a plain scalar."""
    if not allowed(key):
        raise ConfigError(
            f"{origin}: spark setting {key!r} is not allowed in a config: [spark] takes session"
            " settings that cannot load code (docs/reliability.md lists them); put Spark"
            " resources and anything else on the spark-submit line (--conf)"
        )
    if not isinstance(value, str | int | float | bool):
        raise ConfigError(f"{origin}: spark setting {key!r} must be a string or a number")
    text = str(value).lower() if isinstance(value, bool) else str(value)
    expected = check_value(key, text)
    if expected is not None:
        raise ConfigError(f"{origin}: spark setting {key!r} = {text!r}: expected {expected}")
