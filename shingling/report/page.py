"""The report page: one self-contained HTML document (inline CSS and SVG, no script) from a
run's :class:`~shingling.report.load.RunData`."""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shingling.report.load import MEMBERS_SHOWN, RunData, load_run
from shingling.report.svg import (
    JACCARD_BINS,
    NEAR_COLOR,
    bar_chart,
    esc,
    histogram,
    number_label,
    size_buckets,
)
from shingling.schema import (
    DOC_A,
    DOC_B,
    JACCARD,
    JACCARD_ESTIMATE,
)
from shingling.summaries import RunSummary

REPORT_NAME = "report.html"


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], table_id: str) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return (
        f'<table id="{esc(table_id)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def _stat(key: str, label: str, value: Any) -> str:
    return (
        f'<div class="stat"><div class="value" data-key="{esc(key)}">'
        f"{esc(number_label(value))}</div>"
        f'<div class="label">{esc(label)}</div></div>'
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
margin-top:16px;overflow-x:auto}
td code{word-break:break-all}
table{border-collapse:collapse;width:100%;margin-top:8px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e4e7eb;vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.excerpt{color:#3e4c59;font-size:13px;white-space:pre-wrap;word-break:break-word}
.commands{overflow-x:auto;font-size:12px;background:#f5f7fa;padding:8px;border-radius:4px}
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
            f'<section id="clusters"><h2>{esc(title)}</h2>'
            f'<p class="note">No {esc(run.cluster_kind)} of two or more documents.</p></section>'
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
        f'<p><span data-key="clusters">{len(run.cluster_sizes):,}</span> {esc(run.cluster_kind)} '
        f'of two or more documents, holding <span data-key="clustered_documents">{documents:,}'
        "</span> documents.</p>"
    )
    rows = []
    for c in run.largest:
        shown = ", ".join(esc(m) for m in c.members[:MEMBERS_SHOWN])
        more = f" … and {c.size - MEMBERS_SHOWN:,} more" if c.size > MEMBERS_SHOWN else ""
        text = f'<div class="excerpt">{esc(c.excerpt)}</div>' if c.excerpt is not None else ""
        rows.append(
            (
                f'<span class="ids">{esc(c.cluster_id)}</span>',
                f"{c.size:,}",
                f'<div class="ids">{shown}{esc(more)}</div>{text}',
            )
        )
    note = f'<p class="note">{esc(run.excerpt_note)}</p>' if run.excerpt_note else ""
    table = _table(
        ("cluster", "size", "members and an excerpt of the first"), rows, "largest-clusters"
    )
    return (
        f'<section id="clusters"><h2>{esc(title)}</h2>{intro}{chart}'
        f"<h3>The largest</h3>{note}{table}</section>"
    )


def explain_command(run: RunData, pair: dict[str, Any]) -> str:
    """The ``shingling explain`` line that shows a pair's sketches and the shingles behind them."""
    words = ["shingling", "explain", str(pair[DOC_A]), str(pair[DOC_B])]
    if run.corpus:
        words += ["--corpus", run.corpus]
    if run.summary.output:
        words += ["--run", run.summary.output]
    return shlex.join(words)


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
                f"<code>{esc(p[DOC_A])}</code>",
                f"<code>{esc(p[DOC_B])}</code>",
                f'<span class="num">{esc(score)}</span>',
                esc(p.get("excerpt_a") or ""),
                esc(p.get("excerpt_b") or ""),
            )
        )
    table = _table(("doc_a", "doc_b", "jaccard", "text a", "text b"), rows, "best-pairs-table")
    commands = "\n".join(esc(explain_command(run, p)) for p in run.best)
    return (
        '<section id="best-pairs"><h2>Most similar pairs</h2>'
        '<p class="note">Near-duplicates only, best first, each pair of texts once'
        " (as <code>shingling top</code> lists them).</p>"
        f"{table}"
        '<p class="note">Each pair\'s sketches, and the shingles behind them:</p>'
        f'<pre class="commands">{commands}</pre></section>'
    )


#: The verification figures of the summary (pairs.verification), as the report names them.
VERIFICATION_ROWS = (
    ("candidates_verified", "candidates verified against their texts"),
    ("kept", "of them at the threshold by exact Jaccard (pairs of distinct texts written)"),
    ("estimate_above_exact_below", "the estimate alone would have written, exact below"),
    ("estimate_below_exact_above", "the estimate alone would have missed, exact at or above"),
)
ERROR_ROWS = (
    ("mean", "mean error of the estimate (estimate - exact)"),
    ("mean_abs", "mean absolute error"),
    ("max_abs", "largest absolute error"),
    ("off_by_more_than_0.1", "candidates whose estimate is off by more than 0.1"),
    ("off_by_more_than_0.2", "candidates whose estimate is off by more than 0.2"),
)


def _verification_section(summary: RunSummary) -> str:
    found = summary.pairs.verification
    if not found:
        return ""
    rows = [
        (esc(label), f'<span data-key="verification.{key}">{int(found.get(key) or 0):,}</span>')
        for key, label in VERIFICATION_ROWS
    ]
    error = found.get("estimate_error") or {}
    for key, label in ERROR_ROWS:
        value = error.get(key)
        shown = (
            "–" if value is None else (f"{value:,}" if isinstance(value, int) else f"{value:.4f}")
        )
        rows.append((esc(label), f'<span data-key="verification.{key}">{shown}</span>'))
    table = _table(("", "candidates"), rows, "verification-table")
    return (
        '<section id="verification"><h2>Verification</h2>'
        '<p class="note">Every candidate pair was scored exactly on its texts; the estimate is'
        f" what the sketches alone said (threshold {esc(found.get('threshold'))}).</p>"
        f"{table}</section>"
    )


def _skipped_section(summary: RunSummary) -> str:
    skipped = summary.documents.skipped
    rows = [
        (esc(reason), f'<span data-key="skipped.{esc(reason)}">{int(n):,}</span>')
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
        (esc(k), f'<span data-key="stage_seconds.{esc(k)}">{v:.2f}</span>')
        for k, v in stages.items()
    ]
    if total is not None:
        rows.append(("<b>total</b>", f'<b data-key="stage_seconds.total">{float(total):.2f}</b>'))
    table = _table(("stage", "seconds"), rows, "stage-table")
    return f'<section id="stages"><h2>Stage times</h2>{chart}{table}</section>'


#: The config sections each job reads; the report shows only those of the run's job.
USED_SECTIONS = {
    "near_duplicates": ("input", "sketch", "pairs", "output", "spark"),
    "dedup": ("input", "sketch", "pairs", "clusters", "dedup", "output", "spark"),
}


def _config_section(summary: RunSummary) -> str:
    config = summary.config
    used = USED_SECTIONS.get(summary.job, tuple(config))
    rows = [
        # [spark] keys are Spark's own names (spark.sql...): shown as they are set
        (
            esc(key if section == "spark" else f"{section}.{key}"),
            f"<code>{esc(json.dumps(value))}</code>",
        )
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
        f"{name} <code>{esc(value)}</code>"
        for name, value in (
            ("width", sketch_cfg.get("width")),
            ("k", sketch_cfg.get("k")),
            ("threshold", threshold),
        )
        if value is not None
    )
    meta = (
        f'<p class="meta">Run <code data-key="status">{esc(s.status or "unknown")}</code>'
        f" · input <code>{esc(s.input)}</code>"
        f" · output <code>{esc(s.output or '?')}</code><br>"
        f"started {esc(s.started_at or '?')} · finished {esc(s.finished_at or '?')}"
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
        f"<title>shingling report: {esc(s.output)}</title><style>{_CSS}</style></head>"
        f"<body><main><h1>Near-duplicate run report</h1>{meta}"
        f'<div class="stats">{stats}</div>'
        f"{_similarity_section(run, threshold)}{_best_section(run)}{_verification_section(s)}"
        f"{_clusters_section(run)}"
        f"{_skipped_section(s)}{_stages_section(s)}{_config_section(s)}"
        f'<p class="note">Generated by shingling report at {esc(generated)}.</p>'
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
    # written aside and renamed, so a reader never sees half a page; on any failure (disk full,
    # a target that cannot be replaced) the partial file goes too
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_text(page, encoding="utf-8")
        partial.replace(target)
    except BaseException:
        partial.unlink(missing_ok=True)  # a full disk must not leave half a page behind
        raise
    return target
