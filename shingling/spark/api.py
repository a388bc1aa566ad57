"""The Spark API: near-duplicates of a DataFrame in your own SparkSession (a notebook, a managed
platform), as ``MinHashLSH.approxSimilarityJoin`` is called.

    >>> from shingling.spark import near_duplicates                    # doctest: +SKIP
    >>> pairs = near_duplicates(df, id_col="url", text_col="body", threshold=0.8)  # doctest: +SKIP
    >>> pairs.where("NOT exact_duplicate").orderBy("jaccard", ascending=False).show()  # doctest: +SKIP

It calls the stages the jobs call (``shingling/spark/stages.py``, ``decide.py``,
``connected_components.py``, ``jobs/nightly.py``), with the settings of ``shingling/default.toml``
unless given: :func:`sketches`, :func:`near_duplicates`, :func:`deduplicate`, :func:`clusters`,
:func:`components`, :func:`nightly`; ``shingling.spark`` exports them. The executors need the
package too: on a cluster, ship ``dist/shingling.zip`` (``spark.sparkContext.addPyFile``) or
install it on the nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from shingling import config as config_module
from shingling.errors import ConfigError
from shingling.schema import DOC_ID, JACCARD, TEXT
from shingling.spark.connected_components import connected_components
from shingling.spark.decide import decisions
from shingling.spark.index.arguments import check_run_date
from shingling.spark.jobs import nightly as nightly_job
from shingling.spark.keep import SMALLEST_ID, keep_key, keep_keys, kept_clusters
from shingling.spark.stages import Cache, Verification, configured_pairs
from shingling.spark.transforms import sketch_documents, skip_repeated_ids


@dataclass(frozen=True)
class Settings:
    """The settings of one call; None takes shingling/default.toml's."""

    threshold: float | None = None
    verify: bool | None = None
    candidate_margin: float | None = None
    width: int | None = None
    k: int | None = None
    unit: str | None = None

    def resolved(self) -> config_module.Config:
        return resolved(
            {
                "pairs.threshold": self.threshold,
                "pairs.verify": self.verify,
                "pairs.candidate_margin": self.candidate_margin,
                "sketch.width": self.width,
                "sketch.k": self.k,
                "sketch.unit": self.unit,
            }
        )


def resolved(settings: dict[str, Any]) -> config_module.Config:
    """shingling/default.toml with ``settings`` (dotted names; None keeps the default), checked
    as ``--set`` values are."""
    return config_module.load(
        overrides=[
            f"{name}={config_module.toml_value(value)}"
            for name, value in settings.items()
            if value is not None
        ]
    )


def sketches(
    df: DataFrame,
    *,
    id_col: str = DOC_ID,
    text_col: str = TEXT,
    width: int | None = None,
    k: int | None = None,
    unit: str | None = None,
) -> DataFrame:
    """(id, text) -> the documents table: one row per input row, its sketch or why it has none
    (``skip_reason``), as the job writes ``documents/``."""
    corpus = df.select(F.col(id_col).alias(DOC_ID), F.col(text_col).alias(TEXT))
    return _sketched(corpus, Settings(width=width, k=k, unit=unit).resolved())


def _sketched(corpus: DataFrame, cfg: config_module.Config) -> DataFrame:
    return corpus.transform(
        sketch_documents, width=cfg.sketch.width, k=cfg.sketch.k, unit=cfg.sketch.unit
    ).transform(skip_repeated_ids)


def near_duplicates(
    df: DataFrame,
    *,
    id_col: str = DOC_ID,
    text_col: str = TEXT,
    threshold: float | None = None,
    verify: bool | None = None,
    candidate_margin: float | None = None,
    width: int | None = None,
    k: int | None = None,
    unit: str | None = None,
    cache: Cache | None = None,
    lazy: bool = True,
) -> DataFrame:
    """(id, text) -> the pair table (docs/output.md): every pair of documents whose Jaccard
    reaches ``threshold`` (default 0.5), exact unless ``verify=False``.

    The ids come back as ``doc_a`` < ``doc_b``. Like MLlib's ``approxSimilarityJoin``, the call
    is lazy: it builds a plan and runs no Spark job; the work is done when rows are asked for
    (``show``, ``count``, ``write``), and again at each action unless you ``persist`` the
    result. The plan is the job's pair stage with nothing computed ahead of it: the prefixes
    are ordered by each hash's exact document frequency, counted within the plan (two shuffles
    of the sketches' hashes, where the job broadcasts a count-min table it builds first), and
    the texts to verify are chosen by a semi-join with the candidates' ids; the pairs are the
    job's. It shuffles with the session's ``spark.sql.shuffle.partitions`` (200 by default: on
    a laptop, 2 to 4 times the cores is faster; ``conf/spark-local.conf`` and docs/cluster.md
    give sizes) and relies on adaptive query execution (on by default) to broadcast the small
    sides of its joins. At 1M documents it took 1.5 times the job's time with the job's 8 shuffle
    partitions, 3 times with Spark's default 200 (docs/performance.md);
    ``lazy=False`` takes the job's own stages, which run their small jobs (the copy-group count,
    the frequency table, the candidate join and its id bitmap) before the call returns, and the
    rest when rows are asked for. The sketches and the candidates are persisted when first
    computed: pass ``cache=Cache()`` and call ``cache.release()`` once done with the result to
    free them (nothing else of the session's cache is touched).
    """
    cache = cache if cache is not None else Cache()
    cfg = Settings(threshold, verify, candidate_margin, width, k, unit).resolved()
    corpus = df.select(F.col(id_col).alias(DOC_ID), F.col(text_col).alias(TEXT))
    # read by the grouping, the join and the expansion: sketched once, when first computed
    documents = cache.persist(_sketched(corpus, cfg))
    verification = Verification.configured(cfg, corpus)
    return documents.transform(
        configured_pairs, cfg, verify=verification, cache=cache, planned=lazy
    )


def deduplicate(
    pairs: DataFrame,
    corpus: DataFrame | None = None,
    *,
    id_col: str = DOC_ID,
    text_col: str = TEXT,
    keep: str | None = None,
    keep_order: str | None = None,
    min_jaccard: float | None = None,
    containment_threshold: float | None = None,
) -> DataFrame:
    """A pair table (+ the corpus the keep policy reads) -> the dedup decision, as
    ``jobs/dedup.py`` takes it (docs/dedup.md): (doc_id, kept_id, relation, jaccard, containment,
    exact_duplicate) for every document of a pair at ``jaccard`` >= ``min_jaccard``; relation is
    ``kept`` for a kept document (kept_id its own id, or the kept exact copy of an exact copy),
    else what it is of ``kept_id``, a kept document it is a near-duplicate of. The kept documents
    hold no pair at the cut. ``keep`` (default shingling/default.toml's ``longest``) needs ``corpus``
    unless it is ``smallest_id``; ``containment_threshold`` also decides on excerpt pairs (a run
    with ``sketch.sample_mod`` > 0). Spark jobs run here (the rounds): the result is computed.
    """
    cfg = resolved(
        {"dedup.keep": keep, "dedup.keep_order": keep_order, "clusters.min_jaccard": min_jaccard}
    )
    keys = None
    if cfg.dedup.keep != SMALLEST_ID:
        if corpus is None:
            raise ConfigError(f"dedup.keep = {cfg.dedup.keep!r} ranks by the corpus: give corpus")
        key = keep_key(corpus, keep=cfg.dedup.keep, text_column=text_col)
        keys = None if key is None else keep_keys(corpus, id_column=id_col, key=key)
    return decisions(
        pairs,
        keys,
        cut=cfg.clusters.min_jaccard,
        containment_cut=containment_threshold,
        descending=cfg.dedup.keep_order == "desc",
        max_rounds=cfg.dedup.max_rounds,
        finish_edges=cfg.dedup.finish_edges,
        component_rounds=cfg.clusters.max_rounds,
    ).decisions


def clusters(decisions: DataFrame) -> DataFrame:
    """:func:`deduplicate`'s decision -> (doc_id, cluster_id, cluster_size), as ``jobs/dedup.py``
    writes ``clusters/``: each kept document that others were removed in favour of
    (cluster_id = its id) and those documents. No Spark job runs here."""
    return kept_clusters(decisions)


def components(
    pairs: DataFrame, *, min_jaccard: float = 0.0, max_rounds: int | None = None
) -> DataFrame:
    """A pair table -> (doc_id, cluster_id, cluster_size): the connected components of its pairs
    with ``jaccard`` at least ``min_jaccard``, each named by its smallest id, as ``jobs/dedup.py``
    writes ``components/`` (``clusters.components = true``). An analysis: components chain
    documents that are not near-duplicates of each other, so do not deduplicate by them.
    Large-star/small-star rounds, at most ``max_rounds`` (default shingling/default.toml's).
    """
    rounds = max_rounds if max_rounds is not None else config_module.load().clusters.max_rounds
    linking = pairs.where(F.col(JACCARD) >= F.lit(min_jaccard))
    return connected_components(linking, max_rounds=rounds).clusters


def nightly(
    spark: SparkSession,
    *,
    batch: str,
    index: str,
    output: str,
    run_date: str,
    settings: Sequence[str] = (),
    allow_future_date: bool = False,
) -> dict[str, Any]:
    """The nightly step (docs/nightly.md) from your own session: pairs the Parquet batch at
    ``batch`` with itself and with the index at ``index`` (created if absent), commits the batch's
    sketches to the index and the pairs to ``output``/run_date=``run_date``/, as
    ``jobs/nightly.py`` does; ``settings`` are its ``--set`` values (``"pairs.threshold=0.6"``),
    ``allow_future_date`` its ``--allow-future-date``. Returns the run summary; raises the job's
    errors (``shingling.errors.ShinglingError``).
    """
    cfg = config_module.load(overrides=list(settings))
    run_date = check_run_date(run_date, allow_future=allow_future_date)
    return nightly_job.run(
        spark, cfg, batch_path=batch, index_path=index, pairs_path=output, run_date=run_date
    )
