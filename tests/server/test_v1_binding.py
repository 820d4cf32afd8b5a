"""``/v1``'s module-level routers: markers bound per built router, never shared; the
deprecated ``openai_compat`` alias still imports."""

from __future__ import annotations

import asyncio
import importlib
import sys
import warnings
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI, Header

from ragloom.server.v1 import vector_stores
from ragloom.server.v1.binding import Binder, include_bound
from ragloom.server.v1.context import UnboundMarker, caller, caller_tenant, v1_context
from ragloom.server.v1.pooled import pooled_route_class
from ragloom.testing import HashingEmbedder
from tests.server.openai_support import make_app


def call(app: FastAPI, method: str, path: str, **options: Any) -> httpx.Response:
    async def request() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.request(method, path, **options)

    return asyncio.run(request())


def test_two_apps_in_one_process_keep_their_own_stores(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = make_app(tmp_path / "a", HashingEmbedder(dimension=16), None)
    second = make_app(tmp_path / "b", HashingEmbedder(dimension=16), None)
    headers = {"Authorization": "Bearer key-alice"}
    made = call(first, "POST", "/v1/vector_stores", json={"name": "one"}, headers=headers)
    assert made.status_code == 200, made.text
    listed = [call(app, "GET", "/v1/vector_stores", headers=headers).json()["data"]
              for app in (first, second)]
    assert [s["name"] for s in listed[0]] == ["one"] and listed[1] == []
    assert call(second, "GET", "/v1/vector_stores").status_code == 401  # its own tenant


def test_markers_are_replaced_in_nested_dependencies_and_sync_endpoints_are_pooled() -> None:
    source = APIRouter()

    async def shout(who: str = Depends(caller_tenant)) -> str:
        return who.upper()

    @source.get("/who", summary="who")
    def who(name: str = Depends(shout), context: Any = Depends(v1_context)) -> dict[str, Any]:
        return {"name": name, "context": context}

    def tenant(x_tenant: str = Header("nobody")) -> Any:
        return type("T", (), {"id": x_tenant})()

    ran: list[str] = []

    async def runner(function: Any, *args: Any) -> Any:
        ran.append("pool")
        return function(*args)

    async def context() -> str:
        return "bound"

    target = APIRouter(prefix="/v1", route_class=pooled_route_class(runner))
    include_bound(target, source, Binder({v1_context: context, caller: tenant}))
    app = FastAPI()
    app.include_router(target)
    body = call(app, "GET", "/v1/who", headers={"X-Tenant": "alice"}).json()
    assert body["name"] == "ALICE" and body["context"] == "bound" and ran == ["pool"]
    assert source.routes[0].endpoint is who  # the module's router is left as it was


def test_an_unbound_marker_fails_loudly() -> None:
    with pytest.raises(UnboundMarker):
        asyncio.run(v1_context())


def test_module_routers_hold_their_routes_in_order() -> None:
    paths = [route.path for route in vector_stores.router.routes]  # type: ignore[attr-defined]
    assert paths[0] == "/vector_stores" and "/vector_stores/{vector_store_id}/search" in paths


def test_the_old_package_name_still_imports_with_a_warning() -> None:
    sys.modules.pop("ragloom.server.openai_compat", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module("ragloom.server.openai_compat")
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    import ragloom.server.v1 as new
    import ragloom.server.v1.errors as errors

    assert old.build_router is new.build_router and old.OpenAIDeps is new.OpenAIDeps
    assert old.Deps is new.Deps and old.errors is errors
    with pytest.raises(AttributeError):
        old.no_such_module  # noqa: B018
