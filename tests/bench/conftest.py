"""A small pool of real sentences and a 200-document corpus, shared by the bench tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# bench/ is not an installed package: make the repository root importable (pyproject's
# [tool.pytest.ini_options] pythonpath = ["."] would do the same for every test)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.corpus import CorpusSpec, build_pool, generate, write  # noqa: E402


@pytest.fixture(scope="session")
def pool() -> list[str]:
    files = sorted(Path("/usr/share/common-licenses").glob("*")) + sorted(
        Path("/usr/share/doc").glob("*/copyright")
    )
    sentences = build_pool(files)
    assert len(sentences) > 2_000, "the machine ships too little text for the bench tests"
    return sentences


@pytest.fixture(scope="session")
def small_corpus(pool: list[str], tmp_path_factory: pytest.TempPathFactory):
    """(corpus directory, planted table, meta) of a 200-document skewed corpus."""
    spec = CorpusSpec(docs=200, seed=7, skew=True)
    corpus, planted, meta = generate(spec, pool)
    target = tmp_path_factory.mktemp("bench") / spec.key
    write(corpus, planted, meta, target, spec.files)
    return target, corpus, planted, meta
