"""From a run's pairs to a decision: which documents to keep, and a deduplicated corpus.

    spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip \\
        jobs/dedup.py --input corpus.parquet --run out/ --output dedup/ [--config conf/x.toml] \\
        [--set dedup.keep=smallest_id] [--overwrite]

``--run`` is the output of jobs/near_duplicates.py on the same corpus, made with pairs.verify =
true (exact Jaccard); its [input], [sketch] and [pairs] settings are taken from its config.toml.
The decision (shingling/decision.py, computed by shingling/spark/decide.py): every removed document has a kept
near-duplicate, and no two kept documents are near-duplicates. Writes, atomically (all or
nothing) under ``--output``:

- ``removed/``: each removed document, the kept document it was removed in favour of, and the
  exact figures of their pair;
- ``clusters/``: (doc_id, cluster_id, cluster_size): each kept document that others were removed
  in favour of (cluster_id is its id), and those documents;
- ``corpus/``: the input without the removed documents, same columns;
- ``components/``: with clusters.components, the connected components (analysis only);
- ``summary.json``: the run summary; ``config.toml``: the resolved config.

Every table is hash-partitioned (spark.sql.shuffle.partitions parts) and sorted on its key, so the
same input, config and Spark settings give the same files byte for byte.

Exit codes: 0 done, 1 internal failure (or rounds past their bound), 2 bad arguments or config,
3 bad input (an estimate-only run among them), 4 output exists.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import tomllib
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from shingling import config as config_module
from shingling.decision import EXCERPT, KEPT
from shingling.errors import BadInputError, ConfigError
from shingling.schema import (
    DOC_A,
    DOC_ID,
    EXACT,
    SKIP_REASON,
    TEXT,
    TEXT_CHECKSUM,
)
from shingling.spark.connected_components import (
    CLUSTER_ID,
    CLUSTER_SIZE,
    connected_components,
    figures_in_one_task,
)
from shingling.spark.decide import DECISION_RELATION, KEPT_ID, decisions, linked_ids, usable_links
from shingling.spark.jobs.options import add_input_argument, job_parser
from shingling.spark.keep import (
    KEEP_KEY,
    LONGEST,
    deduplicated_corpus,
    keep_key,
    keep_keys,
    kept_clusters,
    removed_documents,
)
from shingling.spark.paths import is_local, local_part
from shingling.spark.read import read_corpus, read_input
from shingling.spark.run_checks import (
    CORPUS_CHECKSUM,
    check_corpus_texts,
    refuse_other_texts,
)
from shingling.spark.session import Steps, Work, run_main
from shingling.spark.storage import AtomicOutput, check_job_paths, path_exists
from shingling.summaries import ComponentCounts, CorpusCounts, DecisionCounts, DedupSummary

log = logging.getLogger("shingling")

# The sections that describe how the run's pairs were made: they come from the run, not from here.
RUN_SECTIONS = ("input", "sketch", "pairs")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = job_parser(
        "dedup", "Cluster a run's near-duplicate pairs and write a deduplicated corpus."
    )
    add_input_argument(parser)
    parser.add_argument("--run", required=True, help="output directory of jobs/near_duplicates.py")
    parser.add_argument("--output", required=True, help="output directory (written atomically)")
    config_module.add_config_arguments(parser)
    return parser.parse_args(argv)


def run_format(run_path: str) -> str | None:
    """The run's input.format, when its config.toml is on this machine (None: not known here)."""
    path = Path(local_part(run_path)) / "config.toml"
    if not is_local(run_path) or not path.is_file():
        return None
    try:
        return str(tomllib.loads(path.read_text(encoding="utf-8")).get("input", {}).get("format"))
    except (OSError, ValueError):
        return None


def run_settings(run_config: dict[str, Any]) -> list[str]:
    """The run's [input], [sketch] and [pairs] settings as section.key=value overrides.

    A run made before pairs were verified has no ``pairs.verify``: its scores are estimates.

    >>> run_settings({"pairs": {"threshold": 0.7}, "spark": {"x": "1"}})
    ['pairs.threshold=0.7', 'pairs.verify=false']
    """
    pairs = run_config.get("pairs", {})
    older = [] if "verify" in pairs or not pairs else ["pairs.verify=false"]
    return [
        f"{section}.{key}={config_module.toml_value(value)}"
        for section in RUN_SECTIONS
        for key, value in run_config.get(section, {}).items()
    ] + older


def check_not_overriding_run(
    config_path: str | None, overrides: list[str], run_config: dict[str, Any]
) -> None:
    """Refuse settings of the run's own sections that differ from the run's: they cannot apply."""
    given: dict[str, Any] = {}
    if config_path is not None and Path(config_path).is_file():
        try:
            user = tomllib.loads(Path(config_path).read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError:
            user = {}  # config.load reports it
        for section in RUN_SECTIONS:
            for key, value in user.get(section, {}).items():
                given[f"{section}.{key}"] = value
    for item in overrides:
        name = item.partition("=")[0].strip()
        if name.partition(".")[0] in RUN_SECTIONS:
            given[name] = config_module._parse_override(item)[2]
    for name, value in given.items():
        section, _, key = name.partition(".")
        if run_config.get(section, {}).get(key, value) != value:
            raise ConfigError(
                f"{name} = {value!r} differs from the run's {run_config[section][key]!r}: [input],"
                " [sketch] and [pairs] come from the run's config.toml;"
                " rerun near_duplicates to change them"
            )


def read_text_file(spark: SparkSession, path: str) -> str:
    """A small text file's content, through Spark (so any file system works)."""
    row = spark.read.text(path, wholetext=True).first()
    return "" if row is None else str(row[0])


def read_run_config(spark: SparkSession, run_path: str) -> dict[str, Any]:
    """The run's config.toml, parsed; BadInputError if the run is incomplete."""
    run_path = run_path.rstrip("/")
    for part in ("pairs", "config.toml"):
        if not path_exists(spark, f"{run_path}/{part}"):
            raise BadInputError(
                f"{run_path}/{part} does not exist:"
                " --run must be the output of jobs/near_duplicates.py"
            )
    try:
        return tomllib.loads(read_text_file(spark, f"{run_path}/config.toml"))
    except tomllib.TOMLDecodeError as e:
        raise BadInputError(f"{run_path}/config.toml is not valid TOML: {e}") from e


def dedup_reads(input_path: str, run_path: str) -> dict[str, str | None]:
    """The paths dedup reads: its output must be apart from each (shingling/spark/paths.py)."""
    run_path = run_path.rstrip("/") or run_path
    return {
        "--input": input_path,
        "the run's pairs (--run)": f"{run_path}/pairs",
        "the run's documents (--run)": f"{run_path}/documents",
        "the run's config (--run)": f"{run_path}/config.toml",
    }


_COALESCE = "spark.sql.adaptive.coalescePartitions.enabled"

#: Up to this many removed documents, their ids go to every task (a broadcast) and the corpus is
#: written in its own order, read and filtered in one pass, without a shuffle of its texts; past
#: it, the corpus is joined with them through a shuffle (hash-partitioned by id).
BROADCAST_REMOVED = 4_000_000


def write_sorted(df: DataFrame, path: str, keys: list[str | Column], *, partitions: int) -> None:
    """Write hash-partitioned on the first key and sorted by all: same rows, same files, same bytes.

    Adaptive execution would merge small partitions by their shuffled bytes, which vary with the
    order rows arrive in; it is off for these writes so each row's file depends on its key alone.
    """
    spark = df.sparkSession
    previous = spark.conf.get(_COALESCE, "true") or "true"
    spark.conf.set(_COALESCE, "false")
    try:
        df.repartition(partitions, keys[0]).sortWithinPartitions(*keys).write.parquet(path)
    finally:
        spark.conf.set(_COALESCE, previous)


def corpus_facts(
    cfg: config_module.Config,
    texts: DataFrame,
    corpus: DataFrame,
    documents: DataFrame,
    linked: DataFrame,
    *,
    source: str,
) -> DataFrame | None:
    """Check that the corpus holds the run's texts of the documents to decide on, and return their
    keep keys (doc_id, keep_key), None for ``smallest_id``.

    ``texts``: the corpus as (doc_id, text); ``corpus``: as read (its own columns, for a
    ``column:<name>`` policy); ``documents``: the run's documents table, restricted to ``linked``
    (doc_id), the documents of a usable pair. When the documents table records text checksums,
    one pass over the texts computes, in the JVM, each text's checksum and length (the key of
    ``longest``); only ids and numbers are shuffled, never texts.

    Raises:
        BadInputError: a document to decide on is missing from the corpus or has another text there
            (exit 3), or the policy names a column the corpus lacks.
    """
    key = keep_key(corpus, keep=cfg.dedup.keep, text_column=cfg.input.text_column)
    if TEXT_CHECKSUM not in documents.columns:  # a run made before checksums were recorded
        check_corpus_texts(
            texts.join(linked, DOC_ID, "left_semi"), documents, unit=cfg.sketch.unit, source=source
        )
        return None if key is None else keep_keys(corpus, id_column=cfg.input.id_column, key=key)
    facts = (
        documents.where(F.col(SKIP_REASON).isNull())
        .select(DOC_ID, TEXT_CHECKSUM)
        .join(
            texts.where(F.col(TEXT).isNotNull()).select(
                DOC_ID,
                F.xxhash64(TEXT).alias(CORPUS_CHECKSUM),
                F.length(TEXT).alias(KEEP_KEY),
            ),
            DOC_ID,
            "left",
        )
        .localCheckpoint(eager=True)
    )
    refuse_other_texts(facts, TEXT_CHECKSUM, source=source)
    repeated = facts.groupBy(DOC_ID).count().where(F.col("count") > 1).limit(1).collect()
    if repeated:
        raise BadInputError(
            f"document {repeated[0][DOC_ID]!r} of the run is in {source} more than once: the"
            " corpus must hold the run's documents once each; pass the corpus the run read"
        )
    if key is None:
        return None
    if cfg.dedup.keep == LONGEST:
        return facts.select(DOC_ID, KEEP_KEY)
    return keep_keys(corpus, id_column=cfg.input.id_column, key=key)


def is_exact_run(run_config: dict[str, Any]) -> bool:
    """Whether the run verified its pairs (pairs.verify, the default since 2026-12-02)."""
    return bool(run_config.get("pairs", {}).get("verify", False))


def check_exact_run(run_config: dict[str, Any], run_path: str) -> None:
    """Refuse an estimate-only run: its jaccard is an estimate, and the contract is stated on
    exact Jaccard (a document could be removed for a pair whose estimate came out high)."""
    if not is_exact_run(run_config):
        raise BadInputError(
            f"{run_path} was made with pairs.verify = false: its jaccard is an estimate, and dedup"
            " removes a document only for a pair at the cut by exact Jaccard; rerun near-duplicates"
            " with pairs.verify = true (the default)"
        )


def count_decisions(decided: DataFrame) -> dict[str, Any]:
    """Kept and removed documents of the decision, by relation: one aggregate."""
    row = decided.agg(
        F.count_if(F.col(DECISION_RELATION) == F.lit(KEPT)).alias("kept"),
        F.count_if(F.col(DECISION_RELATION) != F.lit(KEPT)).alias("removed"),
        F.count_if(F.col(EXACT)).alias("exact"),
        F.count_if(F.col(DECISION_RELATION) == F.lit(EXCERPT)).alias("excerpts"),
        F.max(F.col("_in_favour")).alias("largest"),
    ).first()
    assert row is not None
    return {
        "documents_decided": int(row["kept"]) + int(row["removed"]),
        "kept": int(row["kept"]),
        "removed": int(row["removed"]),
        "removed_exact_duplicates": int(row["exact"]),
        "removed_excerpts": int(row["excerpts"]),
        "largest_cluster": int(row["largest"] or 0),
    }


def count_components(components: DataFrame) -> dict[str, Any]:
    """The connected components of the same graph: what one-kept-per-component would remove."""
    row = components.agg(
        F.count(F.lit(1)).alias("documents"),
        F.countDistinct(CLUSTER_ID).alias("components"),
        F.max(CLUSTER_SIZE).alias("largest"),
    ).first()
    assert row is not None
    return {
        "components": int(row["components"]),
        "documents_in_components": int(row["documents"]),
        "largest_component": int(row["largest"] or 0),
        "would_remove": int(row["documents"]) - int(row["components"]),
    }


def run(
    spark: SparkSession, cfg: config_module.Config, input_path: str, run_path: str, output_path: str
) -> dict[str, Any]:
    """Read the run and the corpus, decide, write; returns the summary
    (:class:`shingling.summaries.DedupSummary`, as written)."""
    started = time.monotonic()
    run_path = run_path.rstrip("/")
    cut = max(cfg.clusters.min_jaccard, cfg.pairs.threshold)
    containment_cut = cfg.pairs.containment_threshold if cfg.sketch.sample_mod > 0 else None
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    seconds: dict[str, float] = {}
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions") or "200")
    id_column, text_column = cfg.input.id_column, cfg.input.text_column
    out = AtomicOutput(
        spark,
        output_path,
        overwrite=cfg.output.overwrite,
        job="dedup",
        reads=dedup_reads(input_path, run_path),
    )
    try:
        texts = read_corpus(
            spark,
            input_path,
            id_column=id_column,
            text_column=text_column,
            input_format=cfg.input.format,
        )
        corpus = read_input(spark, input_path, cfg.input.format)
        pairs = spark.read.parquet(f"{run_path}/pairs")
        if pairs.schema[DOC_A].dataType != texts.schema[DOC_ID].dataType:
            raise BadInputError(
                f"the run's ids are {pairs.schema[DOC_A].dataType.simpleString()}, the corpus's"
                f" {id_column!r} is {texts.schema[DOC_ID].dataType.simpleString()}:"
                " not the run's corpus"
            )
        steps = Steps(spark, 4)
        stage = time.monotonic()
        steps.start("checking the corpus", "it must hold the texts of the run's pairs")
        # the decision stands on the run's texts: the corpus must hold them (those it decides on)
        linked = linked_ids(usable_links(pairs, cut=cut, containment_cut=containment_cut))
        linked = linked.localCheckpoint(eager=True)
        documents = spark.read.parquet(f"{run_path}/documents").join(linked, DOC_ID, "left_semi")
        keys = corpus_facts(cfg, texts, corpus, documents, linked, source=input_path)
        seconds["check"] = time.monotonic() - stage
        steps.done()

        stage = time.monotonic()
        steps.start("deciding", f"keep {cfg.dedup.keep} first, cut {cut:.3f}")
        decided = decisions(
            pairs,
            keys,
            cut=cut,
            containment_cut=containment_cut,
            descending=cfg.dedup.keep_order == "desc",
            max_rounds=cfg.dedup.max_rounds,
            finish_edges=cfg.dedup.finish_edges,
            component_rounds=cfg.clusters.max_rounds,
        )
        table = decided.decisions.localCheckpoint(eager=True)
        write_sorted(
            kept_clusters(table), out.table("clusters"), [CLUSTER_ID, DOC_ID], partitions=partitions
        )
        write_sorted(
            removed_documents(table), out.table("removed"), [DOC_ID], partitions=partitions
        )
        in_favour = table.withColumn(
            "_in_favour", F.count(F.lit(1)).over(Window.partitionBy(KEPT_ID))
        )
        decision = DecisionCounts(
            rounds=decided.rounds,
            finished_in_one_task=decided.finished_edges,
            **count_decisions(in_favour),
        )
        seconds["decide"] = time.monotonic() - stage
        steps.done(json.dumps(asdict(decision)))

        stage = time.monotonic()
        steps.start("connected components, for comparison")
        links = usable_links(pairs, cut=cut, containment_cut=containment_cut)
        if not cfg.clusters.components and decided.one_task:  # the graph fits one task
            compared = ComponentCounts(rounds=0, **figures_in_one_task(links))
        else:
            components = connected_components(links, max_rounds=cfg.clusters.max_rounds)
            if cfg.clusters.components:
                write_sorted(
                    components.clusters,
                    out.table("components"),
                    [CLUSTER_ID, DOC_ID],
                    partitions=partitions,
                )
                found = spark.read.parquet(out.table("components"))
            else:
                found = components.clusters
            compared = ComponentCounts(rounds=components.rounds, **count_components(found))
        seconds["components"] = time.monotonic() - stage
        steps.done(json.dumps(asdict(compared)))

        stage = time.monotonic()
        steps.start("writing the deduplicated corpus")
        removed = spark.read.parquet(out.table("removed"))
        deduplicated_corpus(
            corpus,
            removed,
            id_column=id_column,
            broadcast=decision.removed <= BROADCAST_REMOVED,
        ).write.parquet(out.table("corpus"))
        written = spark.read.parquet(out.table("corpus")).count()
        corpus_counts = CorpusCounts(
            read=written + decision.removed,
            written=written,
            removed=decision.removed,
            removed_exact_duplicates=decision.removed_exact_duplicates,
        )
        seconds["corpus"] = time.monotonic() - stage
        steps.done(json.dumps(asdict(corpus_counts)))
        seconds["total"] = time.monotonic() - started
        summary = DedupSummary(
            input=input_path,
            run=run_path,
            output=output_path,
            started_at=started_at,
            cut=cut,
            containment_cut=containment_cut,
            decision=decision,
            components=compared,
            corpus=corpus_counts,
            stage_seconds={name: round(value, 2) for name, value in seconds.items()},
            finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
            status="succeeded",
            config=cfg.to_dict(),
        )
        out.write_text("config.toml", config_module.to_toml(cfg))
        out.write_json("summary.json", summary.to_dict())
        out.commit()
    except BaseException:
        out.abort()
        raise
    return summary.to_dict()


def main(argv: list[str] | None = None) -> int:
    def prepare(args: argparse.Namespace) -> tuple[dict[str, str], Work]:
        given = config_module.load(args.config, args.set)  # bad settings fail before Spark starts
        # the run's input.format applies; a JSON Lines input is checked when it is read
        json_input = given.input.format == "jsonl" or run_format(args.run) == "jsonl"
        check_job_paths(
            {"--output": args.output},
            dedup_reads(args.input, args.run),
            parquet=() if json_input else (args.input,),
            replaces=(args.output, "dedup") if args.overwrite or given.output.overwrite else None,
        )

        def work(spark: SparkSession) -> dict[str, Any]:
            run_config = read_run_config(spark, args.run)
            check_exact_run(run_config, args.run)
            check_not_overriding_run(args.config, args.set, run_config)
            overrides = [
                *args.set,
                *run_settings(run_config),
                *(["output.overwrite=true"] if args.overwrite else []),
            ]
            cfg = config_module.load(args.config, overrides)
            log.info("%s", config_module.describe(cfg))
            return run(spark, cfg, args.input, args.run, args.output)

        return given.spark, work

    return run_main(
        "shingling dedup",
        argv,
        parse_args,
        prepare,
        failed="the run failed; the output was not written",
    )


if __name__ == "__main__":
    sys.exit(main())
