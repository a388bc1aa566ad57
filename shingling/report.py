"""The run report: what a run found, as one self-contained HTML page beside its output.

    shingling report OUT            writes OUT/report.html

From Python (a job at the end of a run, or a notebook)::

    from shingling.report import write_report
    write_report("out/sample")      # returns the path of report.html

The page reads ``OUT/summary.json``, ``OUT/pairs/`` and a clusters table (doc_id, cluster_id,
cluster_size) when one is given or found at ``OUT/dedup/clusters/`` (jobs/dedup.py writes
``clusters/`` under its own output: pass ``clusters=DEDUP_OUT/clusters``); without clusters it shows
the groups of exact duplicates found in the pair table. Excerpts of the largest clusters come from
the corpus the run read (its path is in the summary). The plots are inline SVG drawn here, so the
page needs no script, no network and no plotting library; every piece of text from the data is
HTML-escaped.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from shingling.schema import (
    DOC_A,
    DOC_B,
    DOC_ID,
    EXACT,
    JACCARD,
    JACCARD_ESTIMATE,
    RUN_DOCUMENTS,
    RUN_PAIRS,
    RUN_SUMMARY,
    TEXT,
    TEXT_HASH,
    RunSummary,
)

REPORT_NAME = "report.html"
CLUSTERS_PATH = "dedup/clusters"
# Bars of the similarity histogram: 20 bins of 0.05 over [0, 1].
JACCARD_BINS = 20
LARGEST_CLUSTERS = 10
MEMBERS_SHOWN = 8
EXCERPT_CHARS = 240

EXACT_COLOR = "#9aa5b1"
NEAR_COLOR = "#2f6fb0"


@dataclass(frozen=True)
class Cluster:
    """One cluster (or group of exact duplicates) for the "largest clusters" table."""

    cluster_id: Any
    size: int
    members: list[Any]
    excerpt: str | None = None


@dataclass(frozen=True)
class RunData:
    """Everything the report shows, read from a run's output.

    Attributes:
        summary: OUT/summary.json as written by the job (:class:`shingling.schema.RunSummary`).
        jaccard_near: the ``jaccard`` of the pairs that are not exact duplicates (exact, or the
            estimates of a run made with pairs.verify = false).
        jaccard_exact: the ``jaccard`` of the exact-duplicate pairs (all 1.0).
        cluster_kind: "near-duplicate clusters" (from dedup/clusters) or "exact-duplicate groups".
        cluster_sizes: the size of every cluster of two or more documents.
        largest: the largest clusters, with members and an excerpt when the corpus was readable.
        excerpt_note: why there are no excerpts, when there are none.
        best: the most similar near-duplicate pairs, each pair of texts once (as ``shingling top``
            lists them), with excerpts of both texts when the corpus was readable.
    """

    summary: RunSummary
    jaccard_near: np.ndarray
    jaccard_exact: np.ndarray
    cluster_kind: str
    cluster_sizes: np.ndarray
    largest: list[Cluster] = field(default_factory=list)
    excerpt_note: str | None = None
    best: list[dict[str, Any]] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Numbers


def histogram(values: np.ndarray, bins: int = JACCARD_BINS) -> list[int]:
    """Counts of values in ``bins`` equal bins over [0, 1]; 1.0 falls in the last bin.

    >>> histogram(np.array([0.0, 0.51, 0.55, 1.0]), bins=4)
    [1, 0, 2, 1]
    """
    # round first: 0.55 * 20 is 11.000000000000002 in floating point, and must land in bin 11
    index = np.floor(np.round(np.asarray(values, dtype=np.float64) * bins, 9)).astype(np.int64)
    return [int(c) for c in np.bincount(np.clip(index, 0, bins - 1), minlength=bins)]


def size_buckets(sizes: np.ndarray) -> tuple[list[str], list[int]]:
    """Clusters counted by size: one bar per size up to 10, then powers of two.

    >>> size_buckets(np.array([2, 2, 3, 12, 40]))
    (['2', '3', '11-16', '33-64'], [2, 1, 1, 1])
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if len(sizes) == 0:
        return [], []
    # below 11 every size gets its bar; above, bucket (2^(j-1), 2^j] so a long tail stays readable
    upper = np.where(sizes <= 10, sizes, 2 ** np.ceil(np.log2(sizes)).astype(np.int64))
    keys, counts = np.unique(upper, return_counts=True)
    labels = [str(u) if u <= 10 else f"{max(u // 2 + 1, 11)}-{u}" for u in keys.tolist()]
    return labels, [int(c) for c in counts]


def connected_groups(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """The component label (its smallest node) of each of ``n`` nodes joined by edges a[i]-b[i].

    Min-label propagation with pointer jumping, vectorized: exact-duplicate groups are cliques or
    stars, so it settles in two or three rounds.

    >>> connected_groups(np.array([0, 3, 1]), np.array([1, 4, 2]), 6).tolist()
    [0, 0, 0, 3, 3, 5]
    """
    labels = np.arange(n, dtype=np.int64)
    while True:
        low = np.minimum(labels[a], labels[b])
        before = labels.copy()
        np.minimum.at(labels, a, low)
        np.minimum.at(labels, b, low)
        labels = labels[labels]
        if np.array_equal(labels, before):
            return labels


def nice_step(top: float, ticks: int = 5) -> float:
    """A round axis step (1, 2 or 5 times a power of ten) giving about ``ticks`` ticks up to top.

    >>> nice_step(860), nice_step(7), nice_step(0.9)
    (200, 2, 0.2)
    """
    if top <= 0:
        return 1
    raw = top / ticks
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            step = m * power
            return int(step) if step >= 1 else round(step, 12)
    return 10 * power  # pragma: no cover


# ---------------------------------------------------------------------------------------------
# Reading a run


def _read_table(path: Path, columns: list[str] | None = None) -> pa.Table | None:
    if not path.exists():
        return None
    return ds.dataset(path, format="parquet").to_table(columns=columns)


def exact_groups(pairs: pa.Table) -> tuple[np.ndarray, list[Cluster]]:
    """Groups of exact duplicates from the pair table: their sizes, and all groups largest first."""
    exact = pairs.filter(pairs[EXACT])
    if exact.num_rows == 0:
        return np.zeros(0, dtype=np.int64), []
    # index ids in sorted order, so a group's label (its smallest index) is its smallest id
    ids = pc.unique(
        pa.concat_arrays([exact[DOC_A].combine_chunks(), exact[DOC_B].combine_chunks()])
    )
    ids = ids.take(pc.sort_indices(ids))
    a = pc.index_in(exact[DOC_A], value_set=ids).to_numpy()
    b = pc.index_in(exact[DOC_B], value_set=ids).to_numpy()
    labels = connected_groups(a, b, len(ids))
    roots, sizes = np.unique(labels, return_counts=True)
    order = np.lexsort((roots, -sizes))
    id_list = ids.to_pylist()
    clusters = []
    for i in order[:LARGEST_CLUSTERS]:
        members = np.flatnonzero(labels == roots[i])
        clusters.append(Cluster(id_list[roots[i]], int(sizes[i]), [id_list[m] for m in members]))
    return sizes, clusters


def dedup_clusters(clusters: pa.Table) -> tuple[np.ndarray, list[Cluster]]:
    """Cluster sizes (two or more members) and the largest clusters from dedup/clusters/."""
    per_cluster = clusters.group_by("cluster_id").aggregate([(DOC_ID, "count")])
    per_cluster = per_cluster.filter(pc.greater(per_cluster["doc_id_count"], 1))
    sizes = per_cluster["doc_id_count"].to_numpy()
    order = pc.sort_indices(
        per_cluster, sort_keys=[("doc_id_count", "descending"), ("cluster_id", "ascending")]
    )
    top = per_cluster.take(order[:LARGEST_CLUSTERS]).to_pylist()
    members = clusters.filter(pc.field("cluster_id").isin([c["cluster_id"] for c in top]))
    members = members.sort_by([("cluster_id", "ascending"), (DOC_ID, "ascending")])
    by_cluster: dict[Any, list[Any]] = {}
    for cid, doc in zip(
        members["cluster_id"].to_pylist(), members[DOC_ID].to_pylist(), strict=True
    ):
        by_cluster.setdefault(cid, []).append(doc)
    return sizes, [
        Cluster(c["cluster_id"], int(c["doc_id_count"]), by_cluster[c["cluster_id"]]) for c in top
    ]


def excerpt(text: str | None, limit: int = EXCERPT_CHARS) -> str:
    """The start of a text on one line, cut at a word boundary.

    >>> excerpt("Copyright  (c) 2004\\n  Free Software Foundation, Inc.", 30)
    'Copyright (c) 2004 Free…'
    """
    flat = " ".join((text or "").split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut + "…"


def distinct_pairs(
    pairs: Iterator[dict[str, Any]], key: dict[Any, Any], n: int
) -> tuple[list[dict[str, Any]], int]:
    """The first ``n`` pairs that show a text not yet shown, and how many were passed over.

    An exact-duplicate group repeats the same two texts under many id pairs; a pair whose two
    texts both appeared already adds nothing to read.

    >>> ps = [{"doc_a": a, "doc_b": b} for a, b in [("a1", "b"), ("a2", "b"), ("a1", "c")]]
    >>> shown, skipped = distinct_pairs(iter(ps), {"a1": 1, "a2": 1, "b": 2, "c": 3}, 5)
    >>> [p["doc_b"] for p in shown], skipped
    (['b', 'c'], 1)
    """
    shown: set[Any] = set()
    best: list[dict[str, Any]] = []
    skipped = 0
    for p in pairs:
        ka = ("text", key[p[DOC_A]]) if p[DOC_A] in key else ("id", p[DOC_A])
        kb = ("text", key[p[DOC_B]]) if p[DOC_B] in key else ("id", p[DOC_B])
        if ka in shown and kb in shown:
            skipped += 1
            continue
        shown |= {ka, kb}
        best.append(p)
        if len(best) == n:
            break
    return best, skipped


def _sorted_pairs(pairs: pa.Table, chunk: int = 1000) -> Iterator[dict[str, Any]]:
    order = pc.sort_indices(
        pairs, sort_keys=[(JACCARD, "descending"), (DOC_A, "ascending"), (DOC_B, "ascending")]
    )
    for start in range(0, len(order), chunk):
        yield from pairs.take(order[start : start + chunk]).to_pylist()


def read_texts(corpus: str, ids: Sequence[Any], id_column: str, text_column: str) -> dict[Any, str]:
    """The texts of the given ids in a Parquet corpus (reads only those rows' column chunks)."""
    dataset = ds.dataset(corpus, format="parquet")
    id_type = dataset.schema.field(id_column).type
    wanted = pa.array(list(ids)).cast(id_type)
    table = dataset.to_table(
        columns=[id_column, text_column], filter=pc.field(id_column).isin(wanted)
    )
    return dict(zip(table[id_column].to_pylist(), table[text_column].to_pylist(), strict=True))


def _with_excerpts(
    clusters: list[Cluster], corpus: str | None, summary: RunSummary
) -> tuple[list[Cluster], str | None]:
    if not clusters:
        return clusters, None
    if not corpus:
        return clusters, "no corpus path in the summary: pass --corpus to show excerpts"
    columns = summary.config.get("input", {})
    try:
        texts = read_texts(
            corpus,
            [c.members[0] for c in clusters],
            columns.get("id_column", "doc_id"),
            columns.get("text_column", "text"),
        )
    except (OSError, KeyError, pa.ArrowException) as e:
        return clusters, f"excerpts left out: cannot read the corpus at {corpus} ({e})"
    shown = [
        Cluster(c.cluster_id, c.size, c.members, excerpt(texts.get(c.members[0]))) for c in clusters
    ]
    return shown, None


class OtherRunError(ValueError):
    """A clusters table made from another run than the one reported."""


def check_clusters_run(clusters: Path, output: Path) -> None:
    """Refuse a clusters table whose dedup run (its summary.json beside it) linked another run."""
    summary = clusters.parent / RUN_SUMMARY
    if not summary.is_file():
        return  # a table written by hand: nothing says which run it came from
    made_from = json.loads(summary.read_text(encoding="utf-8")).get("run")
    if made_from and Path(made_from).resolve() != output.resolve():
        raise OtherRunError(
            f"the clusters table {clusters} was made from the run {made_from}, not {output}"
        )


BEST_PAIRS = 5


def _best_pairs(
    out: Path, pairs: pa.Table, corpus: str | None, summary: RunSummary
) -> list[dict[str, Any]]:
    """The best near-duplicate pairs, each pair of texts once, with excerpts when readable."""
    near = pairs.filter(pc.invert(pairs[EXACT]))
    if near.num_rows == 0:
        return []
    try:  # the text keys only tell repeated texts apart: without them, every pair is listed
        documents = _read_table(out / RUN_DOCUMENTS, [DOC_ID, TEXT_HASH])
    except (OSError, pa.ArrowException):
        documents = None
    key: dict[Any, Any] = (
        dict(zip(documents[DOC_ID].to_pylist(), documents[TEXT_HASH].to_pylist(), strict=True))
        if documents is not None
        else {}
    )
    best, _ = distinct_pairs(_sorted_pairs(near), key, BEST_PAIRS)
    texts: dict[Any, str] = {}
    if corpus:
        columns = summary.config.get("input", {})
        try:
            texts = read_texts(
                corpus,
                [p[DOC_A] for p in best] + [p[DOC_B] for p in best],
                columns.get("id_column", DOC_ID),
                columns.get("text_column", TEXT),
            )
        except (OSError, KeyError, pa.ArrowException):
            texts = {}
    return [
        {**p, "excerpt_a": excerpt(texts.get(p[DOC_A])), "excerpt_b": excerpt(texts.get(p[DOC_B]))}
        for p in best
    ]


def load_run(
    output: str | Path, corpus: str | None = None, clusters: str | Path | None = None
) -> RunData:
    """Read what the report shows from a run's output directory.

    Args:
        output: the run's output directory (holding summary.json and pairs/).
        corpus: the corpus, for excerpts; by default the input path recorded in the summary.
        clusters: a clusters table (doc_id, cluster_id, cluster_size); by default
            ``output/dedup/clusters`` when it exists.

    Raises:
        FileNotFoundError: there is no summary.json in ``output``.
        ValueError: the summary is not a run summary.
    """
    out = Path(output)
    summary = RunSummary.load(out)
    pairs = _read_table(out / RUN_PAIRS)
    if pairs is None:
        pairs = pa.table(
            {
                DOC_A: pa.array([], pa.string()),
                DOC_B: pa.array([], pa.string()),
                JACCARD: pa.array([], pa.float64()),
                EXACT: pa.array([], pa.bool_()),
            }
        )
    exact_mask = pairs[EXACT].to_numpy(zero_copy_only=False).astype(bool)
    jaccard = pairs[JACCARD].to_numpy(zero_copy_only=False)
    clusters_path = Path(clusters) if clusters is not None else out / CLUSTERS_PATH
    table = _read_table(clusters_path)
    if clusters is not None and table is None:
        raise FileNotFoundError(f"no clusters table at {clusters}")
    if table is not None:
        check_clusters_run(clusters_path, out)
    if table is not None:
        kind = "near-duplicate clusters"
        sizes, largest = dedup_clusters(table)
    else:
        kind = "exact-duplicate groups"
        sizes, largest = exact_groups(pairs.select([DOC_A, DOC_B, EXACT]))
    largest, note = _with_excerpts(largest, corpus or summary.input, summary)
    best = _best_pairs(out, pairs, corpus or summary.input, summary)
    return RunData(
        summary=summary,
        jaccard_near=jaccard[~exact_mask],
        jaccard_exact=jaccard[exact_mask],
        cluster_kind=kind,
        cluster_sizes=np.asarray(sizes, dtype=np.int64),
        largest=largest,
        excerpt_note=note,
        best=best,
    )


# ---------------------------------------------------------------------------------------------
# Drawing


def _e(value: Any) -> str:
    """HTML-escape anything shown on the page, quotes included (safe in text and attributes)."""
    return html.escape(str(value), quote=True)


def _number(value: float) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}"


def bar_chart(
    labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float], str]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    chart_id: str,
    width: int = 720,
    height: int = 260,
) -> str:
    """A stacked vertical bar chart as inline SVG; each bar segment carries its value and a tooltip.

    Args:
        labels: one label per bar, left to right.
        series: (name, values per bar, colour) stacked bottom to top.
    """
    left, right, top, bottom = 56, 12, 28, 58
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(s[1][i] for s in series) for i in range(len(labels))]
    peak = max(totals, default=0)
    step = nice_step(peak)
    axis_top = step * max(1, math.ceil(peak / step)) if peak > 0 else 1
    scale = plot_h / axis_top
    parts = [
        f'<svg id="{_e(chart_id)}" class="chart" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{_e(title)}">',
        f"<title>{_e(title)}</title>",
        f'<text x="{left}" y="16" class="chart-title">{_e(title)}</text>',
    ]
    tick = 0.0
    while tick <= axis_top + 1e-9:
        y = top + plot_h - tick * scale
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
        )
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">'
            f"{_e(_number(tick))}</text>"
        )
        tick += step
    slot = plot_w / max(len(labels), 1)
    bar_w = max(slot * 0.8, 1)
    every = max(1, math.ceil(len(labels) / 20))  # at most about 20 axis labels
    for i, label in enumerate(labels):
        x = left + i * slot + (slot - bar_w) / 2
        base: float = top + plot_h
        for name, values, color in series:
            value: float = values[i]
            h = value * scale
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{base - h:.1f}" width="{bar_w:.1f}" '
                f'height="{h:.1f}" fill="{color}" data-series="{_e(name)}" '
                f'data-label="{_e(label)}" data-value="{value:g}">'
                f"<title>{_e(label)}: {_e(_number(value))} {_e(name)}</title></rect>"
            )
            base -= h
        if i % every == 0:
            cx = left + i * slot + slot / 2
            parts.append(
                f'<text x="{cx:.1f}" y="{top + plot_h + 14}" class="tick" text-anchor="end" '
                f'transform="rotate(-40 {cx:.1f} {top + plot_h + 14})">{_e(label)}</text>'
            )
    parts.append(
        f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" '
        'class="axis"/>'
    )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" class="axis-label" '
        f'text-anchor="middle">{_e(x_label)}</text>'
    )
    parts.append(
        f'<text x="14" y="{top + plot_h / 2:.1f}" class="axis-label" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + plot_h / 2:.1f})">{_e(y_label)}</text>'
    )
    legend_x = width - right
    for name, _values, color in reversed(series):
        if len(series) < 2:
            break
        legend_x -= 8 + 7 * len(name) + 16
        parts.append(f'<rect x="{legend_x}" y="8" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{legend_x + 14}" y="17" class="tick">{_e(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], table_id: str) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table id="{_e(table_id)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _stat(key: str, label: str, value: Any) -> str:
    return (
        f'<div class="stat"><div class="value" data-key="{_e(key)}">{_e(_number(value))}</div>'
        f'<div class="label">{_e(label)}</div></div>'
    )


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2933;margin:0;
background:#f5f7fa}
main{max-width:960px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.meta{color:#52606d;margin:0 0 16px}.meta code{background:#e4e7eb;padding:1px 4px;border-radius:3px}
.stats{display:flex;flex-wrap:wrap;gap:10px}
.stat{background:#fff;border:1px solid #d9e2ec;border-radius:6px;padding:10px 14px;min-width:120px}
.stat .value{font-size:20px;font-weight:600}.stat .label{color:#52606d;font-size:12px}
section{background:#fff;border:1px solid #d9e2ec;border-radius:6px;padding:12px 16px;
margin-top:16px}
table{border-collapse:collapse;width:100%;margin-top:8px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e4e7eb;vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.excerpt{color:#3e4c59;font-size:13px;white-space:pre-wrap;word-break:break-word}
.ids{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
.note{color:#7b8794;font-style:italic}
svg.chart{max-width:100%;height:auto}
svg .grid{stroke:#e4e7eb}svg .axis{stroke:#52606d}
svg .tick{font-size:11px;fill:#52606d}svg .axis-label{font-size:12px;fill:#3e4c59}
svg .chart-title{font-size:13px;font-weight:600;fill:#1f2933}
"""


def _similarity_section(run: RunData, threshold: float | None) -> str:
    near = histogram(run.jaccard_near)
    exact = histogram(run.jaccard_exact)
    labels = [f"{i / JACCARD_BINS:.2f}" for i in range(JACCARD_BINS)]
    # a run that verified its pairs (the default) wrote exact scores; an estimate-only run, the
    # sketches' estimates
    score = "exact Jaccard" if run.summary.pairs.scores == "exact" else "Jaccard estimate"
    # start the axis at the first bin that can hold a pair: no pair below the threshold is written
    first = min([i for i in range(JACCARD_BINS) if near[i] or exact[i]], default=0)
    if threshold is not None:
        first = min(first, int(math.floor(threshold * JACCARD_BINS + 1e-9)))
    # exact copies (all at 1.0) are counted apart: in one bin of a linear scale they would flatten
    # every other bar
    first = min([i for i in range(JACCARD_BINS) if near[i]], default=first)
    if threshold is not None:
        first = min(first, int(math.floor(threshold * JACCARD_BINS + 1e-9)))
    copies = int(sum(exact))
    chart = bar_chart(
        labels[first:],
        [("near duplicates", near[first:], NEAR_COLOR)],
        title=f"Near-duplicate pairs by {score} (exact copies apart)",
        x_label=f"{score} (bin start; bins of 0.05)",
        y_label="pairs",
        chart_id="similarity-chart",
    )
    rows = [
        (
            f"{i / JACCARD_BINS:.2f}–{(i + 1) / JACCARD_BINS:.2f}",
            f'<span class="num">{near[i]:,}</span>',
            f'<span class="num">{exact[i]:,}</span>',
        )
        for i in range(first, JACCARD_BINS)
        if near[i] or exact[i]
    ]
    table = _table(
        ("Jaccard", "near-duplicate pairs", "exact-duplicate pairs"), rows, "similarity-table"
    )
    apart = (
        f'<p class="note" id="exact-copies">Exact copies (same normalized text, Jaccard 1.0):'
        f' <span class="num">{copies:,}</span> pairs, not drawn above.</p>'
    )
    return f'<section id="similarity"><h2>Similarity</h2>{chart}{apart}{table}</section>'


def _clusters_section(run: RunData) -> str:
    labels, counts = size_buckets(run.cluster_sizes)
    title = run.cluster_kind[0].upper() + run.cluster_kind[1:]
    if not labels:
        return (
            f'<section id="clusters"><h2>{_e(title)}</h2>'
            f'<p class="note">No {_e(run.cluster_kind)} of two or more documents.</p></section>'
        )
    chart = bar_chart(
        labels,
        [(run.cluster_kind, counts, NEAR_COLOR)],
        title=f"{title} by size",
        x_label="documents in the cluster",
        y_label="clusters",
        chart_id="cluster-chart",
    )
    documents = int(run.cluster_sizes.sum())
    intro = (
        f'<p><span data-key="clusters">{len(run.cluster_sizes):,}</span> {_e(run.cluster_kind)} '
        f'of two or more documents, holding <span data-key="clustered_documents">{documents:,}'
        "</span> documents.</p>"
    )
    rows = []
    for c in run.largest:
        shown = ", ".join(_e(m) for m in c.members[:MEMBERS_SHOWN])
        more = f" … and {c.size - MEMBERS_SHOWN:,} more" if c.size > MEMBERS_SHOWN else ""
        text = f'<div class="excerpt">{_e(c.excerpt)}</div>' if c.excerpt is not None else ""
        rows.append(
            (
                f'<span class="ids">{_e(c.cluster_id)}</span>',
                f"{c.size:,}",
                f'<div class="ids">{shown}{_e(more)}</div>{text}',
            )
        )
    note = f'<p class="note">{_e(run.excerpt_note)}</p>' if run.excerpt_note else ""
    table = _table(
        ("cluster", "size", "members and an excerpt of the first"), rows, "largest-clusters"
    )
    return (
        f'<section id="clusters"><h2>{_e(title)}</h2>{intro}{chart}'
        f"<h3>The largest</h3>{note}{table}</section>"
    )


def _best_section(run: RunData) -> str:
    if not run.best:
        return ""
    rows = []
    for p in run.best:
        estimate = p.get(JACCARD_ESTIMATE)
        score = f"{p[JACCARD]:.3f}" + (
            f" (estimate {estimate:.3f})" if estimate is not None and estimate != p[JACCARD] else ""
        )
        rows.append(
            (
                f"<code>{_e(p[DOC_A])}</code>",
                f"<code>{_e(p[DOC_B])}</code>",
                f'<span class="num">{_e(score)}</span>',
                _e(p.get("excerpt_a") or ""),
                _e(p.get("excerpt_b") or ""),
            )
        )
    table = _table(("doc_a", "doc_b", "jaccard", "text a", "text b"), rows, "best-pairs-table")
    return (
        '<section id="best-pairs"><h2>Most similar pairs</h2>'
        '<p class="note">Near-duplicates only, best first, each pair of texts once'
        " (as <code>shingling top</code> lists them).</p>"
        f"{table}</section>"
    )


def _skipped_section(summary: RunSummary) -> str:
    skipped = summary.documents.skipped
    rows = [
        (_e(reason), f'<span data-key="skipped.{_e(reason)}">{int(n):,}</span>')
        for reason, n in skipped.items()
    ]
    table = _table(("reason", "documents"), rows, "skipped-table")
    return f'<section id="skipped"><h2>Documents skipped, by reason</h2>{table}</section>'


def _stages_section(summary: RunSummary) -> str:
    stages = {k: v for k, v in summary.stage_seconds.items() if k != "total"}
    total = summary.stage_seconds.get("total")
    chart = (
        bar_chart(
            list(stages),
            [("seconds", list(stages.values()), NEAR_COLOR)],
            title="Seconds per stage",
            x_label="stage",
            y_label="seconds",
            chart_id="stage-chart",
            height=220,
        )
        if stages
        else ""
    )
    rows = [
        (_e(k), f'<span data-key="stage_seconds.{_e(k)}">{v:.2f}</span>') for k, v in stages.items()
    ]
    if total is not None:
        rows.append(("<b>total</b>", f'<b data-key="stage_seconds.total">{float(total):.2f}</b>'))
    table = _table(("stage", "seconds"), rows, "stage-table")
    return f'<section id="stages"><h2>Stage times</h2>{chart}{table}</section>'


#: The config sections each job reads; the report shows only those of the run's job.
USED_SECTIONS = {
    "near_duplicates": ("input", "sketch", "pairs", "output", "spark"),
    "dedup": ("input", "sketch", "pairs", "clusters", "dedup", "verify", "output", "spark"),
}


def _config_section(summary: RunSummary) -> str:
    config = summary.config
    used = USED_SECTIONS.get(summary.job, tuple(config))
    rows = [
        (_e(f"{section}.{key}"), f"<code>{_e(json.dumps(value))}</code>")
        for section, values in config.items()
        if isinstance(values, dict) and section in used
        for key, value in values.items()
    ]
    table = _table(("setting", "value"), rows, "config-table")
    return f'<section id="config"><h2>Configuration</h2>{table}</section>'


def render(run: RunData) -> str:
    """The report page for a run, as one HTML document with inline CSS and SVG and no script."""
    s = run.summary
    skipped_total = sum(s.documents.skipped.values())
    threshold = s.config.get("pairs", {}).get("threshold")
    sketch_cfg = s.config.get("sketch", {})
    written, exact = s.pairs.written, s.pairs.exact_duplicates
    stats = "".join(
        [
            _stat("documents.read", "documents read", s.documents.read),
            _stat("documents.sketched", "sketched", s.documents.sketched),
            _stat("documents.skipped", "skipped", skipped_total),
            _stat("pairs.written", "pairs written", written),
            _stat("pairs.near", "near-duplicate pairs", written - exact),
            _stat("pairs.exact_duplicates", "exact-duplicate pairs", exact),
        ]
    )
    settings = ", ".join(
        f"{name} <code>{_e(value)}</code>"
        for name, value in (
            ("width", sketch_cfg.get("width")),
            ("k", sketch_cfg.get("k")),
            ("threshold", threshold),
        )
        if value is not None
    )
    meta = (
        f'<p class="meta">Run <code data-key="status">{_e(s.status or "unknown")}</code>'
        f" · input <code>{_e(s.input)}</code>"
        f" · output <code>{_e(s.output or '?')}</code><br>"
        f"started {_e(s.started_at or '?')} · finished {_e(s.finished_at or '?')}"
        f" · {settings}</p>"
    )
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # no script, no remote resource: the page must be safe to open from any output directory
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>shingling report: {_e(s.output)}</title><style>{_CSS}</style></head>"
        f"<body><main><h1>Near-duplicate run report</h1>{meta}"
        f'<div class="stats">{stats}</div>'
        f"{_similarity_section(run, threshold)}{_best_section(run)}{_clusters_section(run)}"
        f"{_skipped_section(s)}{_stages_section(s)}{_config_section(s)}"
        f'<p class="note">Generated by shingling report at {_e(generated)}.</p>'
        "</main></body></html>\n"
    )


def write_report(
    output: str | Path,
    corpus: str | None = None,
    path: str | Path | None = None,
    clusters: str | Path | None = None,
) -> Path:
    """Render the report of the run in ``output`` and write it (by default to OUT/report.html).

    Args:
        output: the run's output directory.
        corpus: the corpus for excerpts; by default the input path in the summary.
        path: where to write; by default ``output/report.html``.
        clusters: a clusters table; by default ``output/dedup/clusters`` when it exists.

    Returns:
        The path written.
    """
    target = Path(path) if path is not None else Path(output) / REPORT_NAME
    page = render(load_run(output, corpus, clusters))
    # written aside and renamed, so a reader never sees half a page
    partial = target.with_name(f".{target.name}.partial")
    partial.write_text(page, encoding="utf-8")
    partial.replace(target)
    return target
