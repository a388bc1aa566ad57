"""Find near-duplicate documents in a Parquet corpus and write the pair table.

    spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip \\
        jobs/near_duplicates.py --input corpus.parquet --output out/ [--config conf/x.toml] \\
        [--set pairs.threshold=0.7] [--overwrite]

Writes, atomically (all or nothing) under ``--output``:

- ``documents/``: one row per input document, its sketch or why it was skipped;
- ``pairs/``: the near-duplicate pair table;
- ``summary.json``: the run summary; ``config.toml``: the resolved config.

Exit codes: 0 done, 1 internal failure, 2 bad arguments or config, 3 bad input, 4 output exists.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from shingling import config as config_module
from shingling.schema import (
    EXACT,
    RUN_CONFIG,
    RUN_SUMMARY,
    SKIP_DUPLICATE_ID,
)
from shingling.spark.jobs.options import add_input_argument, job_parser
from shingling.spark.read import read_corpus, unreadable_input
from shingling.spark.session import Steps, Work, run_main
from shingling.spark.stages import Cache, PairMetrics, Verification, configured_pairs
from shingling.spark.storage import AtomicOutput, check_job_paths
from shingling.spark.summary import count_documents
from shingling.spark.transforms import sketch_documents, skip_repeated_ids
from shingling.spark.verify import VerifyMetrics
from shingling.summaries import PairCounts, RunSummary

log = logging.getLogger("shingling")

STEPS = 3  # sketching, pairing (and verifying), counting


CHECKED = "documents.ids-checked"  # the documents table rewritten when some ids repeat


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = job_parser("near-duplicates", "Find near-duplicate documents in a Parquet corpus.")
    add_input_argument(parser)
    parser.add_argument("--output", required=True, help="output directory (written atomically)")
    config_module.add_config_arguments(parser)
    return parser.parse_args(argv)


def run(
    spark: SparkSession, cfg: config_module.Config, input_path: str, output_path: str
) -> dict[str, Any]:
    """Read, sketch, pair, write; returns the run summary."""
    started = time.monotonic()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    out = AtomicOutput(
        spark, output_path, overwrite=cfg.output.overwrite, reads={"--input": input_path}
    )
    try:
        corpus = read_corpus(
            spark,
            input_path,
            id_column=cfg.input.id_column,
            text_column=cfg.input.text_column,
            input_format=cfg.input.format,
        )
        steps = Steps(spark, STEPS)
        steps.start("sketching", f"width {cfg.sketch.width}, k {cfg.sketch.k}")
        corpus.transform(
            sketch_documents,
            width=cfg.sketch.width,
            k=cfg.sketch.k,
            unit=cfg.sketch.unit,
            sample_mod=cfg.sketch.sample_mod,
        ).write.parquet(out.table("documents"))
        documents = spark.read.parquet(out.table("documents"))
        # ids are checked on the written table, in the pass that counts it (no pass over the texts)
        counted = count_documents(documents.transform(skip_repeated_ids))
        if counted.skipped[SKIP_DUPLICATE_ID]:  # rare: rewrite, the repeats skipped
            documents.transform(skip_repeated_ids).write.parquet(out.table(CHECKED))
            out.replace(CHECKED, "documents")
            documents = spark.read.parquet(out.table("documents"))
        sketch_seconds = steps.done(json.dumps(asdict(counted)))

        stage = time.monotonic()
        verification = Verification.configured(cfg, corpus, metrics=VerifyMetrics())
        steps.start(
            "pairing and verifying" if verification else "pairing",
            f"threshold {cfg.pairs.threshold:.3f}, "
            + (
                f"candidates from an estimate of {verification.candidate(cfg.pairs.threshold):.3f},"
                " each verified exactly"
                if verification
                else "decided on the sketch estimates"
            ),
        )
        metrics = PairMetrics()
        cache = Cache()
        documents.transform(
            configured_pairs,
            cfg,
            sketched=counted.sketched,
            metrics=metrics,
            verify=verification,
            cache=cache,
        ).write.parquet(out.table("pairs"))
        cache.release()  # the pair stage's persisted intermediates
        steps.done("written")
        steps.start("counting", "the written pair table")
        counts = (
            spark.read.parquet(out.table("pairs"))
            .agg(F.count(F.lit(1)).alias("pairs"), F.sum(F.col(EXACT).cast("long")).alias("exact"))
            .first()
        )
        assert counts is not None
        steps.done(
            f"{int(counts['pairs'])} pairs written ({int(counts['exact'] or 0)} exact copies)"
        )
        pair_seconds = time.monotonic() - stage
        summary = RunSummary(
            job="near_duplicates",
            input=input_path,
            output=output_path,
            started_at=started_at,
            documents=counted,
            pairs=PairCounts(
                **metrics.as_dict(),
                written=int(counts["pairs"]),
                exact_duplicates=int(counts["exact"] or 0),
                scores="exact" if verification else "estimate",
                verification=verification.metrics.as_dict(threshold=cfg.pairs.threshold)
                if verification and verification.metrics
                else None,
            ),
            stage_seconds={
                "sketch": round(sketch_seconds, 2),
                "pairs": round(pair_seconds, 2),
                "total": round(time.monotonic() - started, 2),
            },
            finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
            status="succeeded",
            config=cfg.to_dict(),
        ).to_dict()
        out.write_text(RUN_CONFIG, config_module.to_toml(cfg))
        out.write_json(RUN_SUMMARY, summary)
        out.commit()
    except BaseException as e:
        out.abort()
        bad_input = unreadable_input(e) if isinstance(e, Exception) else None
        if bad_input is not None:
            raise bad_input from e
        raise
    return summary


def main(argv: list[str] | None = None) -> int:
    def prepare(args: argparse.Namespace) -> tuple[dict[str, str], Work]:
        overrides = [*args.set, *(["output.overwrite=true"] if args.overwrite else [])]
        cfg = config_module.load(args.config, overrides)
        check_job_paths(
            {"--output": args.output},
            {"--input": args.input},
            parquet=(args.input,) if cfg.input.format == "parquet" else (),
            columns={"id": cfg.input.id_column, "text": cfg.input.text_column},
            replaces=(args.output, "near_duplicates") if cfg.output.overwrite else None,
        )
        log.info("%s", config_module.describe(cfg))
        return cfg.spark, lambda spark: run(spark, cfg, args.input, args.output)

    return run_main(
        "shingling near_duplicates",
        argv,
        parse_args,
        prepare,
        failed="the run failed; the output was not written",
    )


if __name__ == "__main__":
    sys.exit(main())
