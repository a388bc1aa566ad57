"""The benchmark harness behind ``make bench``: corpus generator, exact truth, runners, one table.

    make bench DOCS=100000 ARGS="--only pipeline,scan"

See bench/README.md for what is measured and how.
"""
