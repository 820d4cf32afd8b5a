"""JSON encoded by orjson when it is installed (the server extra installs it): the
search routes' response bodies.

A search page is about 10 KB of nested dicts and chunk texts: the json module took
0.15-0.26 ms of the request thread to encode it, orjson 0.06-0.08 ms (measured in
the server on 1,000 SciFact abstracts). What orjson cannot encode (integers beyond
64 bits, non-string keys, lone surrogates) goes through the json module, as before.
Two differences remain: NaN and infinities become ``null`` (the json module, with
``allow_nan=False``, refused them and failed the request), and exponents lose their
leading zero (``1e-7`` for ``1e-07``).

Decoding stays with the json module: orjson turns integers beyond 64 bits into
floats, and telling them apart first cost more than orjson saved.
"""

from __future__ import annotations

import json
from typing import Any

from ragloom._optional import optional

orjson = optional("orjson")


def encode(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON, non-ASCII characters kept."""
    if orjson is not None:
        try:
            return bytes(orjson.dumps(value))
        except TypeError:
            pass  # what orjson cannot encode
    return json.dumps(value, ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")).encode("utf-8")
