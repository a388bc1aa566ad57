"""The pair rules of :mod:`shingling.pairs` as Spark column expressions.

Spark cannot call the Python definitions row by row without leaving the JVM, so each rule is
written once more here as a column expression, and ``tests/spark/test_rules.py`` proves it equal to
the reference on every size and a grid of scores and thresholds.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from shingling.pairs import SLACK
from shingling.schema import A_IN_B, B_IN_A, NEAR_DUPLICATE


def min_shared(size: Column, threshold: float) -> Column:
    """:func:`shingling.pairs.min_shared` of a column of sizes (equal for every size: tested)."""
    return F.greatest(F.ceil(size * F.lit(threshold) - F.lit(SLACK)), F.lit(1))


def prefix_length(size: Column, threshold: float) -> Column:
    """:func:`shingling.pairs.prefix_length` of a column of sizes (equal for every size: tested)."""
    return size - min_shared(size, threshold) + F.lit(1)


def sizes_may_reach(size_a: Column, size_b: Column, threshold: float) -> Column:
    """:func:`shingling.pairs.sizes_may_reach` of two columns of set sizes (equal: tested)."""
    return (F.least(size_a, size_b) / F.greatest(size_a, size_b, F.lit(1))) >= F.lit(
        threshold - SLACK
    )


def relation(
    jaccard: Column,
    containment_a: Column,
    containment_b: Column,
    *,
    threshold: float,
    containment_threshold: float | None,
) -> Column:
    """:func:`shingling.pairs.relation` as a column expression (equal on every input: tested)."""
    rel = F.when(jaccard >= F.lit(threshold), F.lit(NEAR_DUPLICATE))
    if containment_threshold is not None:
        rel = rel.when(
            (containment_a >= containment_b) & (containment_a >= F.lit(containment_threshold)),
            F.lit(A_IN_B),
        ).when(containment_b >= F.lit(containment_threshold), F.lit(B_IN_A))
    return rel


def flipped(rel: Column) -> Column:
    """:func:`shingling.pairs.flipped` of a relation column: the relation of (b, a)."""
    return (
        F.when(rel == F.lit(A_IN_B), F.lit(B_IN_A))
        .when(rel == F.lit(B_IN_A), F.lit(A_IN_B))
        .otherwise(rel)
    )
