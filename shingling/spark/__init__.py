"""The Spark layer: the pipeline's stages as DataFrame transforms, the jobs that run them, and the
public DataFrame API for your own SparkSession (a notebook, a managed platform)::

    from shingling.spark import near_duplicates
    pairs = near_duplicates(df, id_col="url", text_col="body", threshold=0.8)

The API (:mod:`shingling.spark.api`) is loaded on first use, so that importing one module of the
layer (a path check before a JVM starts) does not import them all.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "Cache",
    "clusters",
    "components",
    "deduplicate",
    "near_duplicates",
    "nightly",
    "sketches",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from shingling.spark import api

        return getattr(api, name)
    raise AttributeError(f"module 'shingling.spark' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
