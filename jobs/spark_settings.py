"""The Spark settings a config file may hold: session settings that cannot load code.

A config file is data. ``[spark]`` (and ``--set spark."<key>"=...``) passes session settings to
Spark, and many Spark settings name code to load or a process environment: a Python module for the
workers (``spark.python.daemon.module``, ``spark.python.worker.module``), a ``PYTHONPATH`` or
``LD_PRELOAD`` (``spark.executorEnv.*``), jars and classes (``spark.jars``, ``spark.sql.extensions``,
``*.extraJavaOptions``, ``*.extraClassPath``, plugins, listeners, catalogs). None of those is
accepted here: a key must be on :data:`ALLOWED` (or under one of :data:`ALLOWED_PREFIXES` and free
of the words in :data:`NEVER`), else the config is refused with exit 2 naming the key. Resources
and anything else belong on the spark-submit line (``--conf``), which the operator controls.
"""

from __future__ import annotations

from jobs.errors import ConfigError

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
