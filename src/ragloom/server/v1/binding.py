"""Module-level routers bound to one built ``/v1`` router's collaborators.

Each resource module declares ``router = APIRouter()`` at module level, like the
native API; its endpoints take what they need with ``Depends`` on a *marker* (see
:mod:`.context`), a function that only stands for a collaborator.
:func:`include_bound` copies a module's routes into a built router, each endpoint
(and each dependency it reaches) with the markers replaced by that build's own
collaborators: ``app.dependency_overrides``, but per router, so two apps in one
process (the tests build many) never share a database or a tenant dependency.

The copy is a new function object over the same code, globals and closure with
other default values, so FastAPI sees the endpoint's own signature (its string
annotations resolve in its own module) and whether it is sync or async; functions
that reach no marker are used as they are.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import APIRouter, params
from fastapi.routing import APIRoute

Call = Callable[..., Any]


class Binder:
    """Replaces markers by collaborators in endpoints and their dependencies."""

    def __init__(self, replacements: Mapping[Call, Call]) -> None:
        self._bound: dict[Call, Call] = dict(replacements)

    def __call__(self, call: Call) -> Call:
        found = self._bound.get(call)
        if found is None:
            found = self._bound[call] = self._copy(call)
        return found

    def _copy(self, call: Call) -> Call:
        if not isinstance(call, types.FunctionType):
            return call
        defaults = call.__defaults__ or ()
        kwdefaults = call.__kwdefaults__ or {}
        new_defaults = tuple(self._default(value) for value in defaults)
        new_kwdefaults = {name: self._default(value) for name, value in kwdefaults.items()}
        if (all(a is b for a, b in zip(new_defaults, defaults, strict=True))
                and all(new_kwdefaults[k] is v for k, v in kwdefaults.items())):
            return call
        copy = types.FunctionType(call.__code__, call.__globals__, call.__name__,
                                  new_defaults, call.__closure__)
        copy.__kwdefaults__ = new_kwdefaults or None
        copy.__qualname__ = call.__qualname__
        copy.__module__ = call.__module__
        copy.__doc__ = call.__doc__
        copy.__annotations__ = dict(call.__annotations__)
        return copy

    def _default(self, value: Any) -> Any:
        if isinstance(value, params.Depends) and value.dependency is not None:
            bound = self(value.dependency)
            if bound is not value.dependency:
                return dataclasses.replace(value, dependency=bound)
        return value


def include_bound(target: APIRouter, source: APIRouter, binder: Binder) -> None:
    """Add ``source``'s routes to ``target`` (with its prefix, tags, error responses and
    route class), in order, their endpoints bound by ``binder``."""
    for route in source.routes:
        if not isinstance(route, APIRoute) or route.dependencies:
            raise TypeError(f"cannot bind {route!r}: only plain API routes are copied")
        target.add_api_route(
            route.path, binder(route.endpoint), methods=sorted(route.methods or ()),
            response_model=route.response_model, status_code=route.status_code,
            tags=list(route.tags), summary=route.summary, description=route.description,
            response_description=route.response_description,
            responses=dict(route.responses), deprecated=route.deprecated, name=route.name,
            operation_id=route.operation_id,
            response_model_include=route.response_model_include,
            response_model_exclude=route.response_model_exclude,
            response_model_by_alias=route.response_model_by_alias,
            response_model_exclude_unset=route.response_model_exclude_unset,
            response_model_exclude_defaults=route.response_model_exclude_defaults,
            response_model_exclude_none=route.response_model_exclude_none,
            include_in_schema=route.include_in_schema, response_class=route.response_class,
            callbacks=route.callbacks, openapi_extra=route.openapi_extra)
