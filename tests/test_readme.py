"""The README's query examples run as written, on the output of a real run over the sample corpus.

A fenced code block is tested when the line right before its fence is ``<!-- test: duckdb -->`` or
``<!-- test: spark-sql -->``, or ``<!-- test: python -->`` for a Python shell session (run as a
doctest from the repository root). The README's examples read ``out/sample`` (where ``make run`` writes);
here that path is replaced by the test run's output directory.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import duckdb
import pytest
from pyspark.sql import SparkSession
from testdata import SAMPLE_CORPUS

import shingling.spark.jobs.near_duplicates as job
from shingling.errors import ExitCode

README = Path(__file__).resolve().parents[1] / "README.md"
README_OUTPUT = "out/sample"
MARKER = re.compile(
    r"^<!-- test: (duckdb|spark-sql|python|pyspark) -->\s*\n```[\w-]*\n(.*?)^```", re.M | re.S
)


def marked_blocks(markdown: str) -> list[tuple[str, str]]:
    """(engine, code) of every marked fenced block, in order.

    >>> text = "<!-- test: duckdb -->\\n```sql\\nSELECT 1;\\n```\\n\\n```sql\\nSELECT 2;\\n```\\n"
    >>> marked_blocks(text)
    [('duckdb', 'SELECT 1;\\n')]
    """
    return [(m.group(1), m.group(2)) for m in MARKER.finditer(markdown)]


def statements(code: str) -> list[str]:
    """The SQL statements of a block: split at semicolons that end a line."""
    return [s.strip() for s in re.split(r";\s*$", code, flags=re.M) if s.strip()]


BLOCKS = marked_blocks(README.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> Path:
    """A run of the job over the sample corpus, as `make run` does."""
    out = tmp_path_factory.mktemp("readme") / "out"
    assert job.main(["--input", str(SAMPLE_CORPUS), "--output", str(out)]) == ExitCode.OK
    return out


def localized(code: str, output: Path) -> str:
    assert README_OUTPUT in code, f"the example does not read {README_OUTPUT}"
    return code.replace(README_OUTPUT, str(output))


def test_readme_has_tested_duckdb_and_spark_sql_examples() -> None:
    engines = [engine for engine, _ in BLOCKS]
    assert "duckdb" in engines, "README.md has no block marked <!-- test: duckdb -->"
    assert "spark-sql" in engines, "README.md has no block marked <!-- test: spark-sql -->"


@pytest.mark.parametrize(
    "code", [c for e, c in BLOCKS if e == "duckdb"], ids=lambda c: c.splitlines()[0][:40]
)
def test_duckdb_example_runs(output: Path, code: str) -> None:
    connection = duckdb.connect()
    result = None
    for statement in statements(localized(code, output)):
        result = connection.execute(statement).fetchall()
    assert result, "the example's last statement returned no rows on the sample corpus"


@pytest.mark.parametrize(
    "code", [c for e, c in BLOCKS if e == "spark-sql"], ids=lambda c: c.splitlines()[0][:40]
)
def test_spark_sql_example_runs(spark: SparkSession, output: Path, code: str) -> None:
    result = None
    for statement in statements(localized(code, output)):
        result = spark.sql(statement).collect()
    assert result, "the example's last statement returned no rows on the sample corpus"


@pytest.mark.parametrize(
    "code", [c for e, c in BLOCKS if e == "python"], ids=lambda c: c.splitlines()[0][:40]
)
def test_python_session_gives_what_it_shows(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(README.parent)
    test = doctest.DocTestParser().get_doctest(code, {}, "README", str(README), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert test.examples and runner.failures == 0, f"{runner.failures} examples failed"


@pytest.mark.parametrize(
    "code", [c for e, c in BLOCKS if e == "pyspark"], ids=lambda c: c.splitlines()[0][:40]
)
def test_pyspark_example_runs_in_a_session(
    spark: SparkSession, code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(README.parent)
    namespace: dict = {"spark": spark}
    exec(compile(code, str(README), "exec"), namespace)  # the README's own example, as printed
    assert namespace["pairs"].count() > 0
    spark.catalog.clearCache()


def test_readme_shows_the_library_in_a_python_shell() -> None:
    assert any(e == "python" for e, _ in BLOCKS) and any(e == "pyspark" for e, _ in BLOCKS)
