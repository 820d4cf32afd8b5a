"""Optional dependencies: import one, or say which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from ragloom.errors import MissingDependencyError


def optional(module: str) -> ModuleType | None:
    """Import ``module``, or None when it is not installed (for a faster path that
    has a plain one to fall back to)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def require(module: str, *, package: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingDependencyError` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(package, extra, purpose) from exc
