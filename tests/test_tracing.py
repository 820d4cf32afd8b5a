"""ragloom.tracing while off: no opentelemetry import, one shared no-op span, no
allocation per call beyond the call itself."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

from ragloom import tracing


def test_import_ragloom_does_not_import_opentelemetry() -> None:
    code = ("import sys, ragloom, ragloom.tracing, ragloom.retrieval.search, "
            "ragloom.embeddings._remote, ragloom.models._remote, ragloom.models.local;"
            "print(any(m.startswith('opentelemetry') for m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"


def test_the_off_path_is_one_shared_object_and_allocates_nothing() -> None:
    assert not tracing.enabled()

    def one_request() -> None:
        with tracing.retrieval_span("vs_1", 10, "hybrid") as current:
            current.set_attribute("k", 1)
        with tracing.embeddings_span("local:all-MiniLM-L6-v2", 1):
            pass
        with tracing.chat_span("local:smollm2", 256, None) as chat:
            tracing.record_usage(chat, 10, 5, "stop")
        tracing.start_chat_span("local:smollm2").end()

    one_request()  # warm
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(2000):
            one_request()
        after = tracemalloc.take_snapshot()
        current, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        for _ in range(100):
            one_request()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename")
                if stat.traceback[0].filename == tracing.__file__)
    assert grown <= 0  # nothing kept per call
    assert peak - current < 2048  # and nothing much made while one runs
    assert tracing.span("x", a=1) is tracing.NOOP_SPAN
