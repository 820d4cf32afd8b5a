"""Schemathesis over the server's OpenAPI schema, against a real uvicorn: no 5xx, and
every response (status, content type, body) matches what the schema declares.

Hypothesis generates the cases; ``MAX_EXAMPLES`` per operation keeps the suite short.
The number of cases sent is printed at the end of the module's run.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.server.conftest import LiveServer, start_server  # noqa: E402

MAX_EXAMPLES = 6
CASES: list[str] = []


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = start_server(tmp_path_factory.mktemp("fuzz") / "ragloom.db", rate_limit=0)
    client = server.client()
    client.post("/api/knowledge-bases", json={"name": "default"})
    client.post("/api/knowledge-bases/default/documents/text?wait=10",
                json={"text": "The unpaid lunch break is 30 minutes.", "source": "policy"})
    yield server
    server.stop()
    print(f"\nschemathesis: {len(CASES)} cases over "
          f"{len({c.split(' ', 2)[1] for c in CASES})} paths")


def test_every_route_conforms_to_the_schema(fuzzed: LiveServer) -> None:
    from hypothesis import given

    api = schemathesis.openapi.from_url(f"{fuzzed.url}/openapi.json")
    checks = [not_a_server_error, status_code_conformance, content_type_conformance,
              response_schema_conformance]
    failures: list[str] = []
    native, openai_compatible = 0, 0
    for result in api.get_all_operations():
        operation = result.ok()
        if operation.path.startswith("/v1/"):
            openai_compatible += 1  # OpenAI's routes and the specifications' own
        else:
            native += 1

        @given(case=operation.as_strategy())
        @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck), derandomize=True)
        def run(case: object) -> None:
            CASES.append(f"{case.method} {case.path} {len(CASES)}")  # type: ignore[attr-defined]
            case.call_and_validate(checks=checks)  # type: ignore[attr-defined]

        try:
            run()
        except Exception as exc:
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}"[:2000])
    assert native >= 15 and openai_compatible >= 30, (native, openai_compatible)
    assert not failures, "\n\n".join(failures)
