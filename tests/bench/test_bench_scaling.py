"""The scaling table: time per document from the runs of each corpus size."""

from __future__ import annotations

from bench.run import Run
from bench.scaling import parse_args, scaling_table


def test_scaling_table_gives_time_per_document_whole_and_in_the_job() -> None:
    rows = []
    for docs, wall, in_job in ((10_000, 30.0, 20.0), (1_000_000, 50.0, 45.0)):
        scan = Run("scan", "ok", wall=10.0, cores=2)
        pipe = Run(
            "pipeline",
            "ok",
            wall=wall,
            cores=2,
            detail={"stage_seconds": {"total": in_job}, "pairs": {"written": 7}},
        )
        rows.append((docs, docs / 1000, scan, pipe, None))
    lines = scaling_table(rows).splitlines()[2:]
    small = [c.strip() for c in lines[0].split("|")[1:-1]]
    large = [c.strip() for c in lines[1].split("|")[1:-1]]
    assert small == [
        "10,000",
        "10",
        "10.0",
        "30.0",
        "3.00",
        "20.0",
        "3000",
        "2000",
        "–",
        "1000",
        "7",
    ]
    # 25 s more in the job for 990,000 documents more: 25 µs each
    assert large[6:10] == ["50", "45", "25", "10"]


def test_sizes_are_read_from_one_comma_separated_argument() -> None:
    assert parse_args(["--docs", "10000,100000"]).docs == [10_000, 100_000]
    assert parse_args([]).docs == [10_000, 100_000, 1_000_000]


def test_the_estimate_only_run_gets_its_columns_when_it_ran() -> None:
    scan = Run("scan", "ok", wall=10.0, cores=2)
    pipe = Run("pipeline", "ok", wall=60.0, cores=2, detail={"stage_seconds": {"total": 50.0}})
    estimate = Run("estimate", "ok", wall=40.0, cores=2)
    header, _, line = scaling_table([(1_000_000, 1000.0, scan, pipe, estimate)]).splitlines()
    assert header.split("|")[-4:-1] == [
        " estimate-only s ",
        " estimate × scan floor ",
        " shingling ÷ estimate-only ",
    ]
    assert [c.strip() for c in line.split("|")[-4:-1]] == ["40.0", "4.00", "1.50"]
    assert parse_args(["--with-estimate"]).with_estimate
