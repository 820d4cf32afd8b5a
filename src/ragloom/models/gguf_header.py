"""The few facts ragloom needs from a GGUF file's header, read without llama.cpp.

A GGUF file starts with ``b"GGUF"``, a version (2 or 3), the tensor and key/value
counts, then typed key/value metadata (``general.architecture``,
``<architecture>.context_length``, the tokenizer...). Reading it first lets a wrong
file fail with a clear :class:`~ragloom.errors.ConfigurationError` instead of
llama.cpp's "failed to init", and tells the context length the model was trained
with before any memory is allocated for it. Reading stops as soon as both facts
are known, which is near the start of every file seen so far.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

from ragloom.errors import ConfigurationError

MAGIC = b"GGUF"
# Value type -> struct format of one scalar (GGUF spec: 8 is a string, 9 an array).
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
#: More keys than any real model has; a larger count means a damaged header.
_MAX_KEYS = 1_000_000


@dataclass(frozen=True)
class GGUFInfo:
    """``architecture`` (e.g. ``llama``, ``qwen2``), the trained ``context_length``
    (None when the file does not say) and the model's ``name`` (may be empty)."""

    architecture: str
    context_length: int | None
    name: str = ""


class _Reader:
    def __init__(self, data: mmap.mmap, path: Path) -> None:
        self.data = data
        self.at = 0
        self.path = path

    def unpack(self, fmt: str) -> int | float | bool:
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise ConfigurationError(f"{self.path} is not a complete GGUF file (the header "
                                     "ends early); download it again")
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return value  # type: ignore[no-any-return]

    def string(self) -> str:
        length = int(self.unpack("<Q"))
        if self.at + length > len(self.data):
            raise ConfigurationError(f"{self.path} is not a complete GGUF file")
        raw = bytes(self.data[self.at:self.at + length])
        self.at += length
        return raw.decode("utf-8", errors="replace")

    def value(self, kind: int) -> object:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item = int(self.unpack("<I"))
            count = int(self.unpack("<Q"))
            if item in _SCALARS:  # skipped whole: arrays are only ever skipped here
                self.at += struct.calcsize(_SCALARS[item]) * count
            else:
                for _ in range(count):
                    self.value(item)
            return None
        raise ConfigurationError(f"{self.path}: unknown GGUF value type {kind}; the file is "
                                 "damaged or from a newer GGUF version")


def read_gguf_info(path: Path) -> GGUFInfo:
    """The architecture and trained context length of the GGUF model at ``path``."""
    try:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0,
                                                   access=mmap.ACCESS_READ) as data:
            return _read(_Reader(data, path))
    except ValueError as exc:  # mmap of an empty file
        raise ConfigurationError(f"{path} is empty, not a GGUF model file") from exc
    except OSError as exc:
        raise ConfigurationError(f"cannot read the GGUF model file {path}: {exc}") from exc


def _read(reader: _Reader) -> GGUFInfo:
    path = reader.path
    if bytes(reader.data[:4]) != MAGIC:
        raise ConfigurationError(
            f"{path} is not a GGUF model file (it does not start with 'GGUF'); give the "
            "path of a .gguf file, e.g. one downloaded from a model's -GGUF repository")
    reader.at = 4
    version = int(reader.unpack("<I"))
    if version not in (2, 3):
        raise ConfigurationError(f"{path} is GGUF version {version}; llama.cpp reads "
                                 "versions 2 and 3")
    reader.unpack("<Q")  # tensor count
    keys = int(reader.unpack("<Q"))
    if keys > _MAX_KEYS:
        raise ConfigurationError(f"{path} has a damaged GGUF header ({keys} keys)")
    found: dict[str, object] = {}
    for _ in range(keys):
        key = reader.string()
        value = reader.value(int(reader.unpack("<I")))
        found[key] = value
        architecture = found.get("general.architecture")
        if isinstance(architecture, str) and f"{architecture}.context_length" in found:
            break
    architecture = found.get("general.architecture")
    if not isinstance(architecture, str) or not architecture:
        raise ConfigurationError(f"{path} has no general.architecture in its GGUF header; "
                                 "it is not a model llama.cpp can run")
    context = found.get(f"{architecture}.context_length")
    name = found.get("general.name")
    return GGUFInfo(architecture=architecture,
                    context_length=int(context) if isinstance(context, int) and context > 0
                    else None,
                    name=name if isinstance(name, str) else "")
