"""Parse functions injected into the worker process (importable by name)."""

from __future__ import annotations

import time

from ragloom.loaders import Parsed, parse_bytes


def sleepy_parse(data: bytes, name: str, mime_type: str | None = None) -> list[Parsed]:
    """Hangs for good on files named *hang*; parses the others normally."""
    if "hang" in name.rsplit("/", 1)[-1]:
        while True:  # only the parent's time limit ends this
            time.sleep(3600)
    return parse_bytes(data, name, mime_type)


def greedy_parse(data: bytes, name: str, mime_type: str | None = None) -> list[Parsed]:
    """Eats memory on files named greedy*; parses the others normally."""
    if "greedy" in name.rsplit("/", 1)[-1]:
        hoard = []
        while True:
            hoard.append(bytearray(64 * 1024 * 1024))
    return parse_bytes(data, name, mime_type)


def crashing_parse(data: bytes, name: str, mime_type: str | None = None) -> list[Parsed]:
    """Kills its own process on files named crash*."""
    if "crash" in name.rsplit("/", 1)[-1]:
        import os
        import signal

        os.kill(os.getpid(), signal.SIGSEGV)
    return parse_bytes(data, name, mime_type)
