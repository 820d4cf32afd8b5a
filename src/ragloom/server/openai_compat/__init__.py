"""Deprecated: the OpenAI-compatible API moved to :mod:`ragloom.server.v1`.

This package only re-exports the public names of :mod:`ragloom.server.v1`
(``build_router``, ``Deps``, ``OpenAIDeps``) so that ``from
ragloom.server.openai_compat import build_router, OpenAIDeps`` keeps working, with a
``DeprecationWarning``. Its submodules are reached as attributes
(``ragloom.server.openai_compat.errors`` is :mod:`ragloom.server.v1.errors`, the
same module object); ``import ragloom.server.openai_compat.errors`` does not work:
import from ``ragloom.server.v1`` instead. It will be removed in a later release.
"""

from __future__ import annotations

import importlib
import warnings
from types import ModuleType

from ragloom.server.v1 import Deps, OpenAIDeps, build_router

__all__ = ["Deps", "OpenAIDeps", "build_router"]

warnings.warn("ragloom.server.openai_compat moved to ragloom.server.v1; import from there",
              DeprecationWarning, stacklevel=2)


def __getattr__(name: str) -> ModuleType:
    """``openai_compat.<module>``: the module of the same name in :mod:`ragloom.server.v1`."""
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        return importlib.import_module(f"ragloom.server.v1.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"ragloom.server.v1.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from exc
