"""Building the SparkSession: spark-submit's settings win, conf [spark] fills in the rest."""

from __future__ import annotations

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession


def get_session(app_name: str, settings: dict[str, str]) -> tuple[SparkSession, bool]:
    """The active session if there is one, else a new one; and whether it was created here.

    Settings from config apply only where spark-submit (or spark-defaults.conf) set nothing, and
    local[2] is the embedded default master when none is given.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    SparkContext._ensure_initialized()  # connect to spark-submit's JVM, so SparkConf sees its settings
    conf = SparkConf()
    for key, value in settings.items():
        if not conf.contains(key):
            conf.set(key, value)
    if not conf.contains("spark.master"):
        conf.setMaster("local[2]")
    spark = SparkSession.builder.appName(app_name).config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark, True
