# shingling: `make` lists the targets. Extra arguments go through ARGS, e.g. make test ARGS="-k parity".
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORPUS ?= data/sample/corpus.parquet
OUT ?= out/sample
DEDUP_OUT ?= out/dedup
ARGS ?=
SCALING_DOCS := 10000,100000,1000000
# spark-submit finds Spark and the Python to run through these
export PATH := $(CURDIR)/$(BIN):$(PATH)
export PYSPARK_PYTHON := $(CURDIR)/$(BIN)/python
export PYSPARK_DRIVER_PYTHON := $(CURDIR)/$(BIN)/python
SPARK_SUBMIT := $(BIN)/spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip

.DEFAULT_GOAL := help
.PHONY: help setup dist run dedup test test-fast test-history test-e2e test-all test-cluster lint bench bench-scaling bench-nightly bench-index-nights bench-containment bench-query bench-quality clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's|$$(OUT)|$(OUT)|g; s|$$(DEDUP_OUT)|$(DEDUP_OUT)|g; s|$$(CORPUS)|$(CORPUS)|g' \
		| awk 'BEGIN {FS = ":.*## "} {printf "  make %-14s %s\n", $$1, $$2}'

# compat: the editable install puts the checkout on sys.path (a .pth line), so that a clone named
# `shingling` does not shadow the package, as a namespace package, when Python runs from its parent
$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bench]' --config-settings editable_mode=compat
	touch $(STAMP)

setup: $(STAMP) ## create .venv with the project and its development tools

dist: $(STAMP) ## pack shingling/ into dist/shingling.zip for spark-submit --py-files
	@rm -rf dist && mkdir -p dist/pkg
	@cp -r shingling dist/pkg/
	@find dist/pkg -name __pycache__ -prune -exec rm -rf {} +
	@cd dist/pkg && $(CURDIR)/$(BIN)/python -m zipfile -c ../shingling.zip shingling
	@rm -rf dist/pkg && echo "dist/shingling.zip"

run: $(STAMP) ## run the job on the bundled sample corpus (Spark local mode) and show the top pairs
	$(BIN)/shingling run near-duplicates --input $(CORPUS) --output $(OUT) --overwrite $(ARGS)
	$(BIN)/shingling top $(OUT) --corpus $(CORPUS)
	$(BIN)/shingling report $(OUT) --corpus $(CORPUS)

dedup: $(STAMP) ## write the corpus without its near-duplicates (each removed one has a kept near-duplicate) to $(DEDUP_OUT), from the run in $(OUT)
	$(BIN)/shingling run dedup --input $(CORPUS) --run $(OUT) --output $(DEDUP_OUT) --overwrite $(ARGS)

test: $(STAMP) ## the suite on this machine, both tiers on 2 processes: the fast tier first (it fills numba's cache), then the Spark tier
	SPARK_HOME=/nonexistent/no-jvm-in-the-fast-tier $(BIN)/pytest -q -m "not spark" -n 2 $(ARGS)
	$(BIN)/pytest -q -m "spark and not e2e and not history" -n 2 --ignore=tests/cluster $(ARGS)

test-history: $(STAMP) ## in-process histories: several nights, compactions and undos on one index, each checked against one full run
	$(BIN)/pytest -q -m "history and not e2e" -n 2 --ignore=tests/cluster $(ARGS)

test-e2e: $(STAMP) ## whole processes as a user runs them: spark-submit, the launcher, every docs command as printed, the installed wheel, killed runs
	$(BIN)/pytest -q -m e2e -n 2 --ignore=tests/cluster $(ARGS)

test-all: test test-history test-e2e test-cluster ## everything CI runs: make test, make test-history, make test-e2e, make test-cluster

test-fast: $(STAMP) ## the fast tier, no JVM (library, compiled path, CLI, docs), on 2 processes: under 2 minutes
	SPARK_HOME=/nonexistent/no-jvm-in-the-fast-tier $(BIN)/pytest -q -m "not spark" -n 2 $(ARGS)

test-cluster: $(STAMP) ## the job on a standalone cluster on loopback: equals local mode, survives a lost worker and a killed write
	SHINGLING_REQUIRE_CLUSTER=1 $(BIN)/pytest -q tests/cluster $(ARGS)

lint: $(STAMP) ## ruff and mypy
	$(BIN)/ruff check shingling jobs tests bench
	$(BIN)/mypy shingling

bench: dist ## benchmark against MinHashLSH and the scan floor (DOCS=10000 by default)
	$(BIN)/python -m bench.run --docs $(or $(DOCS),10000) $(ARGS)

bench-scaling: dist ## scan floor and pipeline at growing sizes: time per document (DOCS=10000,100000,1000000)
	$(BIN)/python -m bench.scaling --docs $(or $(DOCS),$(SCALING_DOCS)) $(ARGS)

bench-nightly: dist ## nightly batches against an index vs a full run, side by side (DOCS=100000; ARGS="--batches 0.001,0.01")
	$(BIN)/python -m bench.nightly_bench --docs $(or $(DOCS),100000) $(ARGS)

bench-index-nights: dist ## an index grown by 30 nights vs one compacted index of the same documents: read and next night (DOCS=100000)
	$(BIN)/python -m bench.index_nights --docs $(or $(DOCS),100000) $(ARGS)

bench-containment: dist ## containment mode on planted 1k-word excerpts of 20k-word documents
	$(BIN)/python -m bench.containment $(ARGS)

bench-quality: dist ## precision/recall/F1 of shingling and its peers on real text (ARGS="--corpora short --only defaults,rensa")
	$(BIN)/python -m bench.quality $(ARGS)

bench-query: ## latency of shingling query on a synthetic 1M-document index (DOCS=1000000)
	$(BIN)/python -m bench.query_latency --docs $(or $(DOCS),1000000) $(ARGS)

clean: ## remove the environment, build outputs and run outputs
	rm -rf $(VENV) dist out .pytest_cache .mypy_cache .ruff_cache .hypothesis bench/work
	find . -name __pycache__ -prune -exec rm -rf {} +
