"""The benchmark harness behind ``make bench``: corpus generator, exact truth, runners, one table.

    make bench DOCS=100000 ARGS="--only pipeline,scan"

See bench/README.md for what is measured and how.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def print_json(result: Any, path: Path | None) -> None:
    """Print ``result`` as indented JSON, and write it to ``path`` as well when one is given (the
    one-process measurements' ``--json FILE``)."""
    text = json.dumps(result, indent=2)
    print(text)
    if path:
        path.write_text(text + "\n")
