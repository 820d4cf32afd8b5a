"""The search pool marks the cores as shared for work that starts beside other work."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

from ragloom._threads import cores_are_shared
from ragloom.server.state import CpuWork


def test_work_alone_does_not_share_the_cores() -> None:
    work = CpuWork()
    assert work.beside_others(cores_are_shared)() is False
    assert work.in_flight == 0


def test_work_started_beside_other_work_shares_the_cores() -> None:
    work = CpuWork()
    first_running, release = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        seen["first at start"] = cores_are_shared()
        first_running.set()
        release.wait(10)

    def second() -> None:
        seen["second"] = cores_are_shared()
        seen["in flight"] = work.in_flight == 2

    thread = threading.Thread(target=work.beside_others(first))
    thread.start()
    assert first_running.wait(10)
    work.beside_others(second)()
    release.set()
    thread.join(10)
    assert seen == {"first at start": False, "second": True, "in flight": True}
    # Both done: the count and the mark are gone.
    assert work.in_flight == 0 and not cores_are_shared()


def test_a_failure_still_leaves_the_count_and_the_mark() -> None:
    work = CpuWork()
    holder = threading.Event()
    release = threading.Event()

    def hold() -> None:
        holder.set()
        release.wait(10)

    def fail() -> None:
        raise ValueError("boom")

    thread = threading.Thread(target=work.beside_others(hold))
    thread.start()
    assert holder.wait(10)
    with pytest.raises(ValueError, match="boom"):
        work.beside_others(fail)()
    assert work.in_flight == 1 and not cores_are_shared()
    release.set()
    thread.join(10)
    assert work.in_flight == 0


def test_the_server_pools_count_searches_and_model_calls_together(tmp_path: Path) -> None:
    from ragloom.server.settings import ServerSettings
    from ragloom.server.state import ServerState

    state = ServerState.build(ServerSettings(port=8321, db=tmp_path / "ragloom.db",
                                             llm="none"))
    try:
        # Alone in either pool: not shared.
        assert anyio.run(state.run_cpu, cores_are_shared) is False
        assert anyio.run(state.run_model, cores_are_shared) is False
        # A search beside a model call in flight (and the other way round): shared.
        for outer, inner in ((state.run_model, state.run_cpu),
                             (state.run_cpu, state.run_model)):
            started, release = threading.Event(), threading.Event()

            def hold(started: threading.Event = started,
                     release: threading.Event = release) -> None:
                started.set()
                release.wait(10)

            holder = threading.Thread(target=anyio.run, args=(outer, hold))
            holder.start()
            assert started.wait(10)
            assert anyio.run(inner, cores_are_shared) is True
            release.set()
            holder.join(10)
        assert state.cpu_work.in_flight == 0
    finally:
        state.db.close()


BLAS_PROBE = r"""
import json, sys, tempfile
from pathlib import Path
import numpy as np
import threadpoolctl
from tests.server.conftest import start_server

np.ones((2, 2)) @ np.ones((2, 2))  # BLAS loaded before the counts are read


def blas():
    return [i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas"]


seen = {"before": blas()}
server = start_server(Path(tempfile.mkdtemp()) / "ragloom.db")
seen["serving"] = blas()
seen["status"] = server.client().post("/api/search", json={"query": "lunch"}).status_code
seen["after a search"] = blas()
server.stop()
seen["stopped"] = blas()
print(json.dumps(seen))
"""


def test_a_serving_app_keeps_blas_to_one_thread_and_gives_it_back() -> None:
    # In a fresh process: once a process's main thread has set OpenBLAS's thread
    # count, OpenBLAS ignores counts set from other threads (0.3.31), and this
    # suite's main thread has set it many times. `ragloom serve` runs the app's
    # lifespan on the main thread.
    pytest.importorskip("threadpoolctl")
    import json
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", BLAS_PROBE], cwd=repo, capture_output=True,
                          text=True, timeout=120, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    if not seen["before"] or min(seen["before"]) < 2:
        pytest.skip("no multi-threaded BLAS pool here")
    assert seen["status"] < 500
    assert set(seen["serving"]) == {1}
    assert set(seen["after a search"]) == {1}  # not put back when the search ended
    assert seen["stopped"] == seen["before"]


def test_open_http_requests_share_the_cores_even_with_the_pool_empty() -> None:
    work = CpuWork()
    work.request_started()
    assert work.beside_others(cores_are_shared)() is False  # one request: its own cores
    work.request_started()
    assert work.beside_others(cores_are_shared)() is True  # two open: shared
    work.request_finished()
    work.request_finished()
    assert work.beside_others(cores_are_shared)() is False


def test_the_server_counts_its_open_requests(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from ragloom.server.app import create_app
    from ragloom.server.settings import ServerSettings

    app = create_app(ServerSettings(db=tmp_path / "ragloom.db", llm="none",
                                    embedder="fake:8", warm_models=False))
    seen: list[int] = []
    with TestClient(app, base_url="http://127.0.0.1") as client:
        state = app.state.ragloom
        original = state.cpu_work.request_started

        def started() -> None:
            original()
            seen.append(state.cpu_work._requests)

        state.cpu_work.request_started = started
        assert client.get("/health").status_code == 200
    assert seen == [1]
    assert state.cpu_work._requests == 0
