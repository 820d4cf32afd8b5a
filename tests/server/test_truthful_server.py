"""The server tells the truth under load and failure: streams in the bounded model
pool, a supervised ingestion worker, ``/ready`` that means it."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import start_server, wait_job

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the vendor fakes


def _stream_chat(url: str, model: str, words: int, results: list[str],
                 errors: list[str]) -> None:
    question = " ".join(f"w{i}" for i in range(words))
    try:
        with httpx.Client(base_url=url, timeout=120) as client, client.stream(
                "POST", "/v1/chat/completions", json={
                    "model": model, "stream": True,
                    "messages": [{"role": "user", "content": question}]}) as response:
            text = "".join(response.iter_text())
        if response.status_code != 200 or "[DONE]" not in text:
            errors.append(f"{response.status_code}: {text[-200:]}")
        else:
            results.append(text)
    except Exception as exc:  # counted, and the test says which
        errors.append(repr(exc))


def test_fifty_streams_finish_while_sync_routes_answer(tmp_path: Path) -> None:
    server = start_server(tmp_path / "ragloom.db", llm="fake:slow-echo", rate_limit=0)
    try:
        results: list[str] = []
        errors: list[str] = []
        threads = [threading.Thread(target=_stream_chat,
                                    args=(server.url, "fake:slow-echo", 8, results, errors))
                   for _ in range(50)]
        for thread in threads:
            thread.start()
        latencies = []
        with server.client() as client:
            while any(t.is_alive() for t in threads):
                started = time.perf_counter()
                assert client.get("/v1/files", timeout=10).status_code == 200
                latencies.append(time.perf_counter() - started)
                time.sleep(0.05)
        for thread in threads:
            thread.join(60)
        assert not errors, errors[:3]
        assert len(results) == 50
        latencies.sort()
        p95 = latencies[int(len(latencies) * 0.95) - 1] if len(latencies) > 1 else latencies[0]
        assert p95 < 1.0, f"GET /v1/files p95 {p95:.2f} s while 50 streams ran"
        model = server.state.models.model()
        print(f"\n50 streams: GET /v1/files p95 {p95 * 1000:.0f} ms over {len(latencies)} "
              f"requests, at most {model.most_streaming} generations at once")
        assert model.most_streaming <= server.state.settings.model_threads, (
            f"{model.most_streaming} generations at once")
    finally:
        server.stop()


def test_hosted_model_sees_at_most_model_threads_calls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fakeservers import FakeServer, openai_api
    from ragloom.config import load_settings

    with FakeServer(openai_api.app) as fake:
        fake.chunk_delay = 0.03
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        config = load_settings({"llm": "openai:gpt-test", "embedder": "fake:hashing-64"},
                               env={"OPENAI_BASE_URL": f"{fake.url}/v1"}, cwd=tmp_path,
                               user_config=tmp_path / "none.toml")
        server = start_server(tmp_path / "ragloom.db", llm="openai:gpt-test", config=config,
                              model_threads=2, rate_limit=0)
        try:
            results: list[str] = []
            errors: list[str] = []
            threads = [threading.Thread(target=_stream_chat, args=(
                server.url, "openai:gpt-test", 3, results, errors)) for _ in range(12)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(120)
            assert not errors, errors[:3]
            assert len(results) == 12
            assert "Hello" in results[0]
            assert len([r for r in fake.requests if r.path == "/v1/chat/completions"]) == 12
            print(f"\nhosted model: {fake.max_in_flight} concurrent calls at most")
            assert fake.max_in_flight <= 2, fake.max_in_flight
        finally:
            server.stop()


def test_ready_is_503_when_the_model_cannot_load(tmp_path: Path) -> None:
    server = start_server(tmp_path / "ragloom.db", embedder="local:/no/such/model/folder")
    try:
        deadline = time.monotonic() + 30
        with server.client() as client:
            while True:
                ready = client.get("/ready")
                if ready.json()["status"] != "loading" or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert ready.status_code == 503
            body = ready.json()
            assert body["status"] == "failed" and "loading the models failed" in body["error"]
            assert "/no/such" not in body["error"]  # the reason, not the path
            assert client.get("/health").status_code == 200
    finally:
        server.stop()


def test_ready_is_503_when_the_worker_died(tmp_path: Path) -> None:
    server = start_server(tmp_path / "ragloom.db")
    try:
        with server.client() as client:
            assert client.get("/ready").status_code == 200
            server.state.worker.stop()
            dead = client.get("/ready")
            assert dead.status_code == 503
            assert "worker" in dead.json()["error"]
    finally:
        server.stop()


def test_a_locked_database_fails_the_job_and_the_worker_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = start_server(tmp_path / "ragloom.db", rate_limit=0)
    try:
        worker = server.state.worker
        real = worker.run_group
        calls = {"n": 0}

        def locked_once(jobs: Any) -> None:
            calls["n"] += 1
            if calls["n"] == 1:
                raise sqlite3.OperationalError("database is locked")
            real(jobs)

        monkeypatch.setattr(worker, "run_group", locked_once)
        real_next = worker.queue.next_group
        failures = {"n": 0}

        def flaky_next(limit: int, **kinds: Any) -> Any:  # the job table locked once, too
            if failures["n"] == 0:
                failures["n"] += 1
                raise sqlite3.OperationalError("database is locked")
            return real_next(limit, **kinds)

        monkeypatch.setattr(worker.queue, "next_group", flaky_next)
        with server.client() as client:
            client.post("/api/knowledge-bases", json={"name": "kb"})
            first = client.post("/api/knowledge-bases/kb/documents/text",
                                json={"text": "first text", "source": "one"}).json()
            failed = wait_job(client, first["id"])
            assert failed["status"] == "failed"
            assert failed["error"]["reason"] == "server_error"
            assert "locked" in failed["error"]["message"]
            assert "SELECT" not in str(failed) and str(tmp_path) not in str(failed)
            second = client.post("/api/knowledge-bases/kb/documents/text",
                                 json={"text": "second text", "source": "two"}).json()
            assert wait_job(client, second["id"])["status"] == "completed"
            assert client.get("/ready").status_code == 200
    finally:
        server.stop()


def test_settings_are_read_once_at_start_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    import ragloom.config

    with caplog.at_level(logging.INFO, logger="ragloom.server"):
        server = start_server(tmp_path / "ragloom.db", rate_limit=0)
    try:
        assert any("settings: embedder fake:hashing-64" in r.getMessage()
                   for r in caplog.records)

        def no_reading(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("settings read while serving")

        monkeypatch.setattr(ragloom.config, "load_settings", no_reading)
        (tmp_path / "ragloom.toml").write_text('embedder = "hf:nothing"\n')
        monkeypatch.chdir(tmp_path)
        with server.client() as client:
            made = client.post("/api/knowledge-bases", json={"name": "other",
                                                             "embedder": "fake:hashing-32"})
            assert made.status_code == 201
            job = client.post("/api/knowledge-bases/other/documents/text",
                              json={"text": "words here", "source": "s"}).json()
            assert wait_job(client, job["id"])["status"] == "completed"
            chat = client.post("/v1/chat/completions", json={
                "model": "fake:echo", "messages": [{"role": "user", "content": "hi"}]})
            assert chat.status_code == 200
    finally:
        server.stop()
