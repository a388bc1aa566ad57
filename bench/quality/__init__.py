"""``make bench-quality``: shingling and its peers on real text with natural near-duplicates.

Corpora (:mod:`bench.quality.corpora`), the exact all-pairs truth (:mod:`bench.quality.exact`),
the metrics (:mod:`bench.quality.metrics`) and the runners and report (:mod:`bench.quality.run`).
"""
