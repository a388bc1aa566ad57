"""Failure-injection points for the kill tests: a job reaching a named point stops or pauses there
when the test hook names it (never set in production)."""

from __future__ import annotations

import os
import sys
import time

TEST_HOOK_ENV = "SHINGLING_TEST_HOOK"


def hook(point: str) -> None:
    """Stop or pause here if the test hook names this point (see shingling/spark/index/__init__.py).

    ``SHINGLING_TEST_HOOK=<point>=exit`` exits at once (``os._exit(97)``, no clean-up);
    ``<point>=sleep:<seconds>`` sleeps there. Never set it in production.
    """
    spec = os.environ.get(TEST_HOOK_ENV, "")
    name, _, action = spec.partition("=")
    if not spec or name != point:
        return
    print(f"test hook: reached {point} ({action})", file=sys.stderr, flush=True)
    if action == "exit":
        os._exit(97)
    if action.startswith("sleep:"):
        time.sleep(float(action.split(":", 1)[1]))
