"""The run report: numbers from the run, drawn as SVG, escaped, and rendered by a real browser.

One real run of the job (jobs/near_duplicates.py) on part of the sample corpus, plus copies of a
document that carries hostile HTML in its text and in its id. The browser is Debian's ``chromium``,
headless; the tests that need it are skipped when it is not installed.
"""

from __future__ import annotations

import html
import json
import re
import shlex
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from shingling.cli import main as cli_main
from shingling.report import OtherRunError, load_run, render, write_report
from shingling.report.load import connected_groups
from shingling.report.svg import bar_chart, histogram, size_buckets

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "data" / "sample" / "corpus.parquet"
N_DOCS = 150
# markup that runs script if it ever reaches the page unescaped
HOSTILE = (
    "<script>document.documentElement.setAttribute('data-pwned', 'script')</script>"
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned', 'img')\"> "
)
HOSTILE_ID = "<img src=y onerror=\"document.documentElement.setAttribute('data-pwned', 'id')\">"
HOSTILE_COPIES = 16
CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium)"
)


@pytest.fixture(scope="module")
def run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A real run on 150 sample documents and 16 copies of a hostile one; (output, corpus)."""
    from shingling.spark.jobs.near_duplicates import main as run_job

    work = tmp_path_factory.mktemp("report")
    sample = pq.read_table(CORPUS, columns=["doc_id", "text"]).slice(0, N_DOCS).to_pylist()
    hostile = HOSTILE + sample[0]["text"]
    rows = sample + [
        {"doc_id": f"{HOSTILE_ID}-{i}", "text": hostile} for i in range(HOSTILE_COPIES)
    ]
    corpus = work / "corpus.parquet"
    pq.write_table(pa.Table.from_pylist(rows), corpus)
    out = work / "out"
    assert run_job(["--input", str(corpus), "--output", str(out)]) == 0
    return out, corpus


@pytest.fixture(scope="module")
def summary(run: tuple[Path, Path]) -> dict[str, Any]:
    return json.loads((run[0] / "summary.json").read_text())


@pytest.fixture(scope="module")
def page(run: tuple[Path, Path]) -> str:
    return write_report(run[0]).read_text(encoding="utf-8")


def chromium(url: str, profile: Path) -> str:
    """The DOM of a page after it loaded in headless chromium."""
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


PROBE = """<script>
(function () {
  const out = {keys: {}, charts: {}, text: document.body.innerText,
               images: document.querySelectorAll('img').length,
               scripts: document.querySelectorAll('script').length};
  document.querySelectorAll('[data-key]').forEach(e => { out.keys[e.dataset.key] = e.innerText; });
  document.querySelectorAll('svg.chart').forEach(svg => {
    out.charts[svg.id] = Array.from(svg.querySelectorAll('rect.bar')).map(r => {
      const box = r.getBoundingClientRect();
      return {label: r.dataset.label, series: r.dataset.series, value: Number(r.dataset.value),
              height: box.height, width: box.width};
    });
  });
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


@pytest.fixture(scope="module")
def rendered(page: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What chromium lays out: texts of the keyed numbers, bar sizes, images and scripts.

    The probe is a copy of the page without its Content-Security-Policy (which forbids script) and
    with a script at the end that measures the page; the hostile markup runs too if unescaped.
    """
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    work = tmp_path_factory.mktemp("chromium")
    without_csp = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    assert without_csp != page
    probe = work / "probe.html"
    probe.write_text(without_csp.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = chromium(probe.as_uri(), work / "profile")
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    result = json.loads(html.unescape(found[1]))
    result["html_tag"] = re.search(r"<html[^>]*>", dom)[0]  # type: ignore[index]
    return result


def exact_group_sizes(out: Path) -> list[int]:
    """Sizes of the groups of documents with the same normalized text, from the documents table."""
    hashes = ds.dataset(out / "documents").to_table(columns=["text_hash"])["text_hash"]
    return sorted(n for n in Counter(hashes.drop_null().to_pylist()).values() if n > 1)


# ---------------------------------------------------------------------------------------------
# In the browser


@needs_chromium
def test_browser_shows_the_summary_numbers(
    rendered: dict[str, Any], summary: dict[str, Any]
) -> None:
    keys = rendered["keys"]
    docs, pairs = summary["documents"], summary["pairs"]
    assert keys["documents.read"] == f"{docs['read']:,}"
    assert keys["documents.sketched"] == f"{docs['sketched']:,}"
    assert keys["documents.skipped"] == f"{sum(docs['skipped'].values()):,}"
    for reason, n in docs["skipped"].items():
        assert keys[f"skipped.{reason}"] == f"{n:,}"
    assert keys["pairs.written"] == f"{pairs['written']:,}"
    assert keys["pairs.exact_duplicates"] == f"{pairs['exact_duplicates']:,}"
    assert keys["pairs.near"] == f"{pairs['written'] - pairs['exact_duplicates']:,}"
    for stage, seconds in summary["stage_seconds"].items():
        assert keys[f"stage_seconds.{stage}"] == f"{seconds:.2f}"
    assert keys["status"] == summary["status"] == "succeeded"
    assert docs["read"] == N_DOCS + HOSTILE_COPIES


@needs_chromium
def test_browser_draws_the_histogram_bars_in_proportion(
    rendered: dict[str, Any], summary: dict[str, Any], run: tuple[Path, Path]
) -> None:
    bars = rendered["charts"]["similarity-chart"]
    pairs = ds.dataset(run[0] / "pairs").to_table(columns=["jaccard", "exact_duplicate"])
    # exact copies are counted apart, not drawn: the chart holds the near-duplicates alone
    exact = summary["pairs"]["exact_duplicates"]
    assert sum(b["value"] for b in bars) == summary["pairs"]["written"] - exact
    assert {b["series"] for b in bars} == {"near duplicates"}
    # each bin's count, from the pair table by a plain loop over the rows
    counted = Counter(
        (min(int(round(j * 20, 9)), 19), "near duplicates")
        for j, e in zip(
            pairs["jaccard"].to_pylist(), pairs["exact_duplicate"].to_pylist(), strict=True
        )
        if not e
    )
    for b in bars:
        assert b["value"] == counted.get((round(float(b["label"]) * 20), b["series"]), 0)
    drawn = [b for b in bars if b["value"] > 0]
    assert drawn and all(b["width"] > 0 for b in bars)
    per_pair = drawn[0]["height"] / drawn[0]["value"]
    for b in bars:
        assert b["height"] == pytest.approx(b["value"] * per_pair, abs=0.75)


@needs_chromium
def test_browser_draws_one_bar_per_group_size(
    rendered: dict[str, Any], run: tuple[Path, Path]
) -> None:
    sizes = exact_group_sizes(run[0])
    bars = rendered["charts"]["cluster-chart"]
    assert sum(b["value"] for b in bars) == len(sizes)
    by_label = {b["label"]: b["value"] for b in bars}
    assert by_label.get("11-16", 0) == sum(1 for s in sizes if 11 <= s <= 16)
    assert all(b["height"] > 0 for b in bars)
    assert rendered["keys"]["clusters"] == f"{len(sizes):,}"
    assert rendered["keys"]["clustered_documents"] == f"{sum(sizes):,}"


@needs_chromium
def test_browser_shows_hostile_html_as_text_and_runs_none_of_it(rendered: dict[str, Any]) -> None:
    assert "data-pwned" not in rendered["html_tag"]
    assert rendered["images"] == 0
    assert rendered["scripts"] == 1  # the probe itself
    assert "<script>document.documentElement.setAttribute(" in rendered["text"]
    assert HOSTILE_ID in rendered["text"]  # the id, shown as text in the largest group


@needs_chromium
def test_the_page_as_written_renders_without_script(
    page: str, run: tuple[Path, Path], tmp_path: Path
) -> None:
    dom = chromium((run[0] / "report.html").as_uri(), tmp_path / "profile")
    assert "data-pwned" not in re.search(r"<html[^>]*>", dom)[0]  # type: ignore[index]
    assert "<svg" in dom and 'id="similarity-chart"' in dom and "<script" not in dom


# ---------------------------------------------------------------------------------------------
# The page's source


def test_page_is_self_contained_and_escaped(page: str) -> None:
    assert "<script" not in page and "<img" not in page
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    assert html.escape(HOSTILE_ID, quote=True) in page
    assert "&lt;script&gt;document.documentElement" in page


def test_largest_group_is_the_hostile_copies_with_an_excerpt(run: tuple[Path, Path]) -> None:
    data = load_run(run[0])
    assert data.cluster_kind == "exact-duplicate groups"
    biggest = data.largest[0]
    assert biggest.size == HOSTILE_COPIES == len(biggest.members)
    assert biggest.members == sorted(f"{HOSTILE_ID}-{i}" for i in range(HOSTILE_COPIES))
    assert biggest.excerpt is not None and biggest.excerpt.startswith("<script>")


def test_exact_groups_from_pairs_equal_groups_of_equal_text(run: tuple[Path, Path]) -> None:
    assert sorted(load_run(run[0]).cluster_sizes.tolist()) == exact_group_sizes(run[0])


def test_clusters_table_is_used_when_present(run: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(run[0], out)
    pairs = ds.dataset(out / "pairs").to_table(columns=["doc_a", "doc_b"]).to_pylist()
    # clusters: connected components of every pair, by a plain union-find
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for p in pairs:
        a, b = find(p["doc_a"]), find(p["doc_b"])
        parent[max(a, b)] = min(a, b)
    members: dict[str, list[str]] = {}
    for doc in parent:
        members.setdefault(find(doc), []).append(doc)
    rows = [
        {"doc_id": d, "cluster_id": root, "cluster_size": len(ms)}
        for root, ms in members.items()
        for d in ms
    ]
    (out / "dedup" / "clusters").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), out / "dedup" / "clusters" / "part-00000.parquet")
    data = load_run(out)
    assert data.cluster_kind == "near-duplicate clusters"
    assert sorted(data.cluster_sizes.tolist()) == sorted(len(ms) for ms in members.values())
    assert data.largest[0].size == max(len(ms) for ms in members.values())
    assert sorted(data.largest[0].members) == sorted(members[data.largest[0].cluster_id])
    page = render(data)
    assert "Near-duplicate clusters by size" in page


def test_clusters_option_of_the_cli(
    run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clusters = tmp_path / "dedup_out" / "clusters"
    clusters.mkdir(parents=True)
    docs = ds.dataset(run[0] / "documents").to_table(columns=["doc_id"])["doc_id"].to_pylist()[:6]
    table = pa.table({"doc_id": docs, "cluster_id": [docs[0]] * 6, "cluster_size": [6] * 6})
    pq.write_table(table, clusters / "part-00000.parquet")
    target = tmp_path / "r.html"
    assert cli_main(["report", str(run[0]), "--clusters", str(clusters), "--to", str(target)]) == 0
    assert capsys.readouterr().out.strip() == str(target)
    assert '<span data-key="clusters">1</span>' in target.read_text()
    assert (
        cli_main(["report", str(run[0]), "--clusters", str(tmp_path / "none"), "--to", str(target)])
        == 3
    )


def test_report_command_writes_beside_the_output(
    run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    target = run[0] / "report.html"
    target.unlink(missing_ok=True)
    assert cli_main(["report", str(run[0])]) == 0
    assert capsys.readouterr().out.strip() == str(target)
    assert target.read_text().startswith("<!DOCTYPE html>")


def test_unreadable_corpus_leaves_out_excerpts_and_says_why(run: tuple[Path, Path]) -> None:
    data = load_run(run[0], corpus=str(run[0] / "no-such-corpus.parquet"))
    assert all(c.excerpt is None for c in data.largest)
    assert data.excerpt_note and "cannot read the corpus" in data.excerpt_note
    assert html.escape(data.excerpt_note) in render(data)


# ---------------------------------------------------------------------------------------------
# Pieces


def test_every_k20_estimate_falls_in_its_own_bin() -> None:
    estimates = np.array([m / 20 for m in range(21)])
    assert histogram(estimates) == [1] * 19 + [2]  # 0.95 and 1.0 share the last bin


def test_size_buckets_count_every_cluster_once() -> None:
    sizes = np.array(exact_sizes := [2, 2, 3, 7, 10, 11, 16, 17, 33, 64, 65, 1000])
    labels, counts = size_buckets(sizes)
    assert sum(counts) == len(exact_sizes)
    for label, count in zip(labels, counts, strict=True):
        low, _, high = label.partition("-")
        inside = [s for s in exact_sizes if int(low) <= s <= int(high or low)]
        assert len(inside) == count


def smallest_roots(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """Each node's component, named by its smallest node: a plain union-find."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for x, y in edges:
        rx, ry = find(x), find(y)
        parent[max(rx, ry)] = min(rx, ry)
    return [find(i) for i in range(n)]


def test_connected_groups_equal_a_union_find_on_random_graphs() -> None:
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(2, 60))
        a, b = rng.integers(0, n, size=(2, int(rng.integers(0, 80))))
        expected = smallest_roots(n, list(zip(a.tolist(), b.tolist(), strict=True)))
        assert connected_groups(a, b, n).tolist() == expected


def test_bar_chart_escapes_labels_and_scales_to_the_tallest() -> None:
    svg = bar_chart(
        ["<b>", "x"], [("s&t", [3, 6], "#000")], title="t<", x_label="x", y_label="y", chart_id="c"
    )
    assert "<b>" not in svg and "&lt;b&gt;" in svg and "s&amp;t" in svg
    heights = [float(h) for h in re.findall(r'<rect class="bar"[^>]*height="([\d.]+)"', svg)]
    assert heights[1] == pytest.approx(2 * heights[0], abs=0.1)


def test_exact_groups_of_an_empty_pair_table_are_none(
    tmp_path: Path, run: tuple[Path, Path]
) -> None:
    out = tmp_path / "out"
    shutil.copytree(run[0], out)
    empty = ds.dataset(out / "pairs").to_table().slice(0, 0)
    shutil.rmtree(out / "pairs")
    (out / "pairs").mkdir()
    pq.write_table(empty, out / "pairs" / "part-00000.parquet")
    data = load_run(out)
    assert data.cluster_sizes.size == 0 and data.largest == []
    assert "No exact-duplicate groups" in render(data)
    assert pc.sum(pa.array(histogram(data.jaccard_near))).as_py() == 0


def test_exact_copies_are_counted_apart_from_the_chart(page: str, summary: dict[str, Any]) -> None:
    exact = summary["pairs"]["exact_duplicates"]
    assert exact > 0
    assert re.search(rf'id="exact-copies">[^<]*<span class="num">{exact:,}</span>', page)
    assert "exact duplicates</text>" not in page  # no such series in the chart's legend


def test_only_the_settings_the_run_used_are_listed(page: str, summary: dict[str, Any]) -> None:
    assert "pairs.threshold" in page and "sketch.k" in page
    assert "index." not in page and "dedup.keep" not in page
    # Spark's own keys as they are set, not prefixed with their section
    assert ">spark.sql.shuffle.partitions<" in page and "spark.spark." not in page
    assert "index" in summary["config"]  # the summary holds them; the page leaves them out


def test_the_best_near_pairs_are_listed_side_by_side(run: tuple[Path, Path], page: str) -> None:
    pairs = ds.dataset(run[0] / "pairs").to_table().to_pylist()
    near = sorted(
        (p for p in pairs if not p["exact_duplicate"]),
        key=lambda p: (-p["jaccard"], p["doc_a"], p["doc_b"]),
    )
    assert near
    section = page[page.index('id="best-pairs"') :]
    section = section[: section.index("</section>")]
    assert html.escape(near[0]["doc_a"]) in section and html.escape(near[0]["doc_b"]) in section
    assert f"{near[0]['jaccard']:.3f}" in section
    assert section.count("<tr>") >= 2  # a header and at least one pair, with excerpts


def test_a_clusters_table_of_another_run_is_refused(
    run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dedup_out = tmp_path / "dedup"
    (dedup_out / "clusters").mkdir(parents=True)
    docs = ds.dataset(run[0] / "documents").to_table(columns=["doc_id"])["doc_id"].to_pylist()[:2]
    table = pa.table({"doc_id": docs, "cluster_id": [docs[0]] * 2, "cluster_size": [2] * 2})
    pq.write_table(table, dedup_out / "clusters" / "part-00000.parquet")
    (dedup_out / "summary.json").write_text(json.dumps({"job": "dedup", "run": str(tmp_path)}))
    with pytest.raises(OtherRunError):
        load_run(run[0], clusters=dedup_out / "clusters")
    code = cli_main(
        [
            "report",
            str(run[0]),
            "--clusters",
            str(dedup_out / "clusters"),
            "--to",
            str(tmp_path / "r.html"),
        ]
    )
    assert code == 2 and "made from the run" in capsys.readouterr().err
    # the same table, made from this run: accepted
    (dedup_out / "summary.json").write_text(json.dumps({"job": "dedup", "run": str(run[0])}))
    assert (
        load_run(run[0], clusters=dedup_out / "clusters").cluster_kind == "near-duplicate clusters"
    )


def test_the_verification_figures_are_the_summary_s(page: str, summary: dict[str, Any]) -> None:
    found = summary["pairs"]["verification"]
    assert found["candidates_verified"] > 0
    section = page[page.index('id="verification"') :]
    section = section[: section.index("</section>")]
    for key in ("candidates_verified", "kept", "estimate_above_exact_below"):
        assert f'data-key="verification.{key}">{found[key]:,}<' in section, key
    mean = found["estimate_error"]["mean_abs"]
    assert f'data-key="verification.mean_abs">{mean:.4f}<' in section


def test_each_best_pair_has_an_explain_line_that_runs(
    run: tuple[Path, Path], page: str, capsys: pytest.CaptureFixture[str]
) -> None:
    section = page[page.index('id="best-pairs"') :]
    lines = html.unescape(section[: section.index("</section>")]).split("<pre")[1]
    commands = [c for c in lines.split(">", 1)[1].split("</pre")[0].splitlines() if c]
    assert commands and all(c.startswith("shingling explain ") for c in commands)
    words = shlex.split(commands[0])
    assert words[words.index("--corpus") + 1] == str(run[1])
    assert cli_main(words[1:]) == 0
    assert "Jaccard" in capsys.readouterr().out
