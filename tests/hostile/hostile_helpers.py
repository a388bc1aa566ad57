"""Helpers of the hostile suite."""

from __future__ import annotations

import hashlib
from pathlib import Path


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (itself included) with the digest of its bytes."""
    if root.is_file():
        return {str(root): hashlib.sha256(root.read_bytes()).hexdigest()}
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
