"""shingling.fast.text: the UTF-8 check refuses exactly what Python's strict decoder refuses."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from shingling.fast.text import invalid_utf8


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=12) | st.text(max_size=6).map(str.encode), max_size=8))
def test_invalid_utf8_is_what_the_strict_decoder_refuses(texts: list[bytes]) -> None:
    def refused(b: bytes) -> bool:
        try:
            b.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return False

    arr = pa.array(texts, pa.binary()).view(pa.string())
    assert invalid_utf8(arr).to_pylist() == [refused(b) for b in texts]
    assert invalid_utf8(arr.slice(1)).to_pylist() == [refused(b) for b in texts[1:]]


def test_invalid_utf8_on_the_edges_of_the_standard() -> None:
    cases = {
        b"\xc2\x80": False, b"\xc1\xbf": True,  # the smallest 2-byte form; an overlong one
        b"\xe0\xa0\x80": False, b"\xe0\x9f\xbf": True,  # 3 bytes: smallest, overlong
        b"\xed\x9f\xbf": False, b"\xed\xa0\x80": True,  # U+D7FF; a surrogate
        b"\xf4\x8f\xbf\xbf": False, b"\xf4\x90\x80\x80": True,  # U+10FFFF; beyond it
        b"\xf0\x90\x80": True, b"abc\xe2\x82": True,  # cut short
        b"\x80": True, b"\xff": True, b"": False,
    }  # fmt: skip
    arr = pa.array([*cases, None], pa.binary()).view(pa.string())
    assert invalid_utf8(arr).to_pylist() == [*cases.values(), False]
