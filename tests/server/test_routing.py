"""PrefixRouter: paths outside its prefix are declined at once; inside, routing is FastAPI's."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from fastapi import FastAPI
from starlette.routing import Match

from ragloom.server.routing import PrefixRouter


def build() -> tuple[FastAPI, PrefixRouter]:
    app = FastAPI()
    api = PrefixRouter(prefix="/api")

    @api.get("/items/{item}")
    async def item(item: str) -> dict[str, str]:
        return {"router": "api", "item": item}

    app.include_router(api)

    @app.get("/apix/items/{item}")  # shares the prefix's letters, not its path
    async def other(item: str) -> dict[str, str]:
        return {"router": "app", "item": item}

    @app.get("/api")
    async def bare() -> dict[str, str]:
        return {"router": "app"}

    return app, api


def get(app: FastAPI, path: str, method: str = "GET", root_path: str = "") -> httpx.Response:
    async def request() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, root_path=root_path)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.request(method, path)

    return asyncio.run(request())


def test_paths_inside_and_outside_the_prefix_reach_the_right_route() -> None:
    app, _ = build()
    assert get(app, "/api/items/7").json() == {"router": "api", "item": "7"}
    assert get(app, "/apix/items/7").json() == {"router": "app", "item": "7"}
    assert get(app, "/api").json() == {"router": "app"}
    assert get(app, "/api/items/7", method="DELETE").status_code == 405
    assert get(app, "/api/nothing").status_code == 404
    assert get(app, "/elsewhere").status_code == 404


def test_a_root_path_is_left_out_of_the_comparison() -> None:
    app, _ = build()
    found = get(app, "/proxy/api/items/3", root_path="/proxy")
    assert found.json() == {"router": "api", "item": "3"}


def test_other_paths_are_declined_without_trying_the_routes() -> None:
    _, api = build()
    for path in ("/v1/models", "/apix/items/7", "/health"):
        scope = {"type": "http", "path": path, "root_path": "", "method": "GET"}
        assert api.matches(scope) == (Match.NONE, {})


def test_the_prefix_must_be_a_path() -> None:
    for prefix in ("", "api", "/api/"):
        with pytest.raises(ValueError, match="prefix"):
            PrefixRouter(prefix=prefix)
