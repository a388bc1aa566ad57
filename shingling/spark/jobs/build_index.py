"""Create the sketch index from a full run of the core job, so nightly runs can continue from it.

    spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip \\
        jobs/near_duplicates.py --input corpus.parquet --output out/full
    spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip \\
        jobs/build_index.py --run out/full --index index/ --run-date 2026-11-30 [--output pairs/]

Reads the run's ``documents/`` table (no re-sketching) and its ``config.toml`` (the index keeps the
run's sketch and pair settings, and every nightly run must use the same). With ``--output``, the
run's pair table also becomes the pair table's first partition, ``run_date=<date>``, so that the
union of the partitions stays the pair table of everything indexed. Same commit protocol and exit
codes as jobs/nightly.py; an index that already holds a run exits 4.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import tomllib
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from shingling import config as config_module
from shingling.errors import BadInputError, OutputExistsError
from shingling.index import Manifest
from shingling.schema import DOC_ID, SKETCH
from shingling.spark.hooks import hook
from shingling.spark.index.arguments import add_future_date_argument, check_run_date
from shingling.spark.index.segments import index_settings, write_options
from shingling.spark.index.store import IndexStore, check_index_owned
from shingling.spark.jobs.options import job_parser
from shingling.spark.paths import check_output_name, check_paths, is_local, local_part
from shingling.spark.read import read_corpus
from shingling.spark.run_checks import (
    check_corpus_texts,
    check_nights_can_honour,
    check_writable_dir,
    local_manifest,
)
from shingling.spark.session import Steps, Work, run_main
from shingling.spark.storage import path_exists
from shingling.summaries import BuildSummary

log = logging.getLogger("shingling")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = job_parser("build-index", "Create the sketch index from a full run.")
    parser.add_argument("--run", required=True, help="output directory of jobs/near_duplicates.py")
    parser.add_argument("--index", required=True, help="the index directory to create")
    parser.add_argument(
        "--run-date", required=True, help="the date the full run stands for, YYYY-MM-DD"
    )
    parser.add_argument("--output", help="the pair table to start with the run's pairs")
    parser.add_argument(
        "--input",
        help="the run's corpus, whose texts a verifying index keeps (default: the run's input,"
        " as its summary.json records it)",
    )
    add_future_date_argument(parser)
    return parser.parse_args(argv)


def run_reads(
    run_path: str, pairs_path: str | None, input_path: str | None = None
) -> dict[str, str | None]:
    """The paths of the run that build_index reads (the index and --output must be apart)."""
    run_path = run_path.rstrip("/") or run_path
    return {
        "the run's documents (--run)": f"{run_path}/documents",
        "the run's config (--run)": f"{run_path}/config.toml",
        "the run's pairs (--run)": f"{run_path}/pairs" if pairs_path else None,
        "the corpus (--input)": input_path,
    }


def run_corpus(spark: SparkSession, run_path: str, input_path: str | None) -> str:
    """The corpus the run read: ``input_path``, or the input its summary.json records."""
    if input_path:
        return input_path
    summary = f"{run_path}/summary.json"
    if not path_exists(spark, summary):
        raise BadInputError(f"{summary} is missing: pass the run's corpus as --input")
    text = "\n".join(r.value for r in spark.read.text(summary).collect())
    try:
        return str(json.loads(text)["input"])
    except (ValueError, KeyError) as e:
        raise BadInputError(f"{summary} names no input: pass the run's corpus as --input") from e


def run_config(saved: dict[str, Any]) -> config_module.Config:
    """The config a run saved (its config.toml, parsed): its sketch and pair settings, over the
    defaults."""
    # a run made before verification existed has no pairs.verify: its scores are estimates
    saved.setdefault("pairs", {}).setdefault("verify", False)
    return config_module.load(
        None,
        [
            f"{s}.{k}={json.dumps(v)}"
            for s in ("sketch", "pairs")
            for k, v in saved.get(s, {}).items()
        ],
    )


def check_local_run(run_path: str) -> None:
    """Before Spark starts, refuse a local run whose settings the nights cannot honour (exit 2)."""
    if not is_local(run_path):
        return
    path = os.path.join(local_part(run_path), "config.toml")
    try:
        with open(path, encoding="utf-8") as f:
            saved = tomllib.loads(f.read())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return  # missing or unreadable: build() says so, naming it
    cfg = run_config(saved)
    check_nights_can_honour(cfg.sketch.unit, cfg.sketch.sample_mod, where=f"the run {run_path}")


def build(
    spark: SparkSession,
    *,
    run_path: str,
    index_path: str,
    run_date: str,
    pairs_path: str | None,
    input_path: str | None = None,
) -> dict[str, Any]:
    """Commit a full run's documents and pairs as version 1 of a new index; returns a summary."""
    started = time.monotonic()
    run_path = run_path.rstrip("/")
    for part in ("documents", "config.toml") + (("pairs",) if pairs_path else ()):
        if not path_exists(spark, f"{run_path}/{part}"):
            raise BadInputError(
                f"{run_path} is not a finished run of the core job: {part} is missing"
            )
    cfg_text = "\n".join(r.value for r in spark.read.text(f"{run_path}/config.toml").collect())
    saved = tomllib.loads(cfg_text)
    cfg = run_config(saved)
    check_nights_can_honour(cfg.sketch.unit, cfg.sketch.sample_mod, where=f"the run {run_path}")
    settings = index_settings(cfg)
    options = write_options(cfg)
    run_id = uuid.uuid4().hex[:12]
    store = IndexStore(spark, index_path, pairs_path, reads=run_reads(run_path, pairs_path))
    store.check_owned()  # before the lock: a foreign directory is not even given a lock file
    with store.locked(run_id):
        store.claim()
        current = store.manifest()
        store.recover(current)
        if current is not None and current.runs:
            raise OutputExistsError(
                f"index {index_path} already holds {current.version} version(s); not rebuilt"
            )
        documents = spark.read.parquet(f"{run_path}/documents").where(F.col(DOC_ID).isNotNull())
        id_type = documents.schema[DOC_ID].dataType.simpleString()
        # an index whose every run was undone (jobs/undo_night.py) is empty at a later version:
        # the build commits the next one (version numbers only grow)
        base = replace(Manifest.empty(id_type, settings), version=current.version if current else 0)
        tx = store.begin(base, run_date, run_id)
        # every precondition before anything is written (as jobs/nightly.py): after the commit
        # point only the publishing rename is left, and a failure there says the run committed
        if tx.final_pairs is not None and store.files.exists(tx.final_pairs):
            raise OutputExistsError(
                f"{tx.final_pairs} exists (another index's run, or an earlier build): nothing was"
                f" committed; choose another --output or --run-date, or move it away"
            )
        try:
            steps = Steps(spark, 3)
            steps.start("writing the index segment", f"the documents of {run_path}")
            rows = documents.count()
            files = max(1, -(-rows // options.rows_per_file))
            ordered = documents.repartitionByRange(files, DOC_ID).sortWithinPartitions(DOC_ID)
            written = tx.write_documents(ordered, options)
            if cfg.pairs.verify:  # later nights verify their pairs with these documents' texts
                source = run_corpus(spark, run_path, input_path)
                corpus = read_corpus(
                    spark,
                    source,
                    id_column=saved["input"]["id_column"],
                    text_column=saved["input"]["text_column"],
                    input_format=saved["input"].get("format", "parquet"),
                )
                # the ids are the run's; the texts must be too, or the index keeps documents
                # for texts they do not have and its nights verify pairs against other texts
                check_corpus_texts(corpus, written, unit=cfg.sketch.unit, source=source)
                sketched = written.where(F.col(SKETCH).isNotNull()).select(DOC_ID)
                tx.write_texts(corpus.join(sketched, DOC_ID, "left_semi"), options)
            pairs_written = 0
            if pairs_path:
                pairs = spark.read.parquet(f"{run_path}/pairs")
                tx.stage_pairs(pairs)
                assert tx.staged_pairs is not None
                pairs_written = spark.read.parquet(tx.staged_pairs).count()
            info = tx.write_index(None, documents=rows, options=options)
            steps.done(f"{rows} documents")
            hook("index_written")
            steps.start("committing", f"run date {run_date}")
            new = tx.commit(
                settings,
                id_type,
                {
                    "batch": run_path,
                    "batch_documents": rows,
                    "pairs_written": pairs_written,
                    "committed_at": datetime.now(UTC).isoformat(timespec="seconds"),
                },
            )
        except BaseException:
            tx.abort()
            raise
        steps.done(f"index version {new.version}")
        steps.start("publishing the pairs", pairs_path or "no pair table")
        tx.publish()
        steps.done(f"{pairs_written} pairs")
    return BuildSummary(
        run=run_path,
        index=index_path,
        run_date=run_date,
        index_version=new.version,
        documents=new.live_documents,
        postings=new.live_postings,
        sketched=int(
            spark.read.parquet(tx.documents_path).where(F.col(SKETCH).isNotNull()).count()
        ),
        pairs_written=pairs_written,
        segment=info.id,
        seconds=round(time.monotonic() - started, 2),
        status="committed",
    ).to_dict()


def main(argv: list[str] | None = None) -> int:
    def prepare(args: argparse.Namespace) -> tuple[dict[str, str], Work]:
        run_date = check_run_date(args.run_date, allow_future=args.allow_future_date)
        check_output_name("--index", args.index)
        check_output_name("--output", args.output)
        check_paths(
            {"--index": args.index, "--output": args.output},
            run_reads(args.run, args.output, args.input),
        )
        check_local_run(args.run)
        check_writable_dir("--index", args.index)
        check_writable_dir("--output", args.output)
        local_manifest(args.index)  # a truncated one is named now, not after the sketching
        check_index_owned(args.index, args.output, run_reads(args.run, args.output, args.input))
        defaults = config_module.load(None, [])
        return defaults.spark, lambda spark: build(
            spark,
            run_path=args.run,
            index_path=args.index,
            run_date=run_date,
            pairs_path=args.output,
            input_path=args.input,
        )

    return run_main(
        "shingling build_index",
        argv,
        parse_args,
        prepare,
        failed="building the index failed; nothing was committed",
    )


if __name__ == "__main__":
    sys.exit(main())
