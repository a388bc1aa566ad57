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

from shingling.report.load import OtherRunError, RunData, load_run
from shingling.report.page import REPORT_NAME, render, write_report

__all__ = ["REPORT_NAME", "OtherRunError", "RunData", "load_run", "render", "write_report"]
