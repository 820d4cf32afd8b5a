"""Tracing spans; a no-op until the ``otel`` extra's tracer is configured."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[None]:
    """A span named ``name`` with ``attributes`` (nothing is recorded without a tracer)."""
    yield None
