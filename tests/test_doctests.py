"""Every ``>>>`` example in the docstrings of shingling/ and jobs/ runs and gives what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import jobs
import shingling

MODULES = sorted(
    info.name
    for package in (shingling, jobs)
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_the_library_has_examples() -> None:
    attempted = sum(
        doctest.testmod(importlib.import_module(n), report=False).attempted
        for n in MODULES
        if n.startswith("shingling.")
    )
    assert attempted >= 30
