"""OpenTelemetry traces, with the GenAI semantic conventions; a no-op by default.

``span(name, **attributes)`` is a context manager around one unit of work. While
tracing is off (the default) or opentelemetry is not installed it returns one shared
object whose methods do nothing: no span, no allocation beyond the call itself, and
``import ragloom`` never imports opentelemetry.

Tracing is turned on by :func:`configure` (``ragloom serve --otel``, ``[server] otel =
true`` in ``ragloom.toml``), or from the standard ``OTEL_*`` environment by
:func:`configure_from_env` (``OTEL_TRACES_EXPORTER`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``
set, ``OTEL_SDK_DISABLED`` not true). It needs the ``otel`` extra
(``pip install 'ragloom[otel]'``). Spans are exported with OTLP when
``opentelemetry-exporter-otlp`` is installed, to the console when asked
(``exporter="console"`` or ``OTEL_TRACES_EXPORTER=console``).

Span names and attributes follow the GenAI conventions: ``retrieval {data_source}``,
``embeddings {model}``, ``chat {model}``, with ``gen_ai.operation.name``,
``gen_ai.request.model``, ``gen_ai.data_source.id``, ``gen_ai.request.top_k`` and
``gen_ai.usage.input_tokens`` / ``output_tokens``. Document ids and scores are recorded
only when ``record_results`` is set (they may be sensitive).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["NOOP_SPAN", "chat_span", "configure", "configure_from_env", "embeddings_span",
           "enabled", "record_matches", "record_results", "record_usage", "retrieval_span",
           "shutdown", "span", "start_chat_span", "start_span", "use_context"]

log = logging.getLogger(__name__)

OPERATION = "gen_ai.operation.name"
EXPORTERS = ("auto", "otlp", "console", "none")


class _NoopSpan:
    """What :func:`span` gives while tracing is off: every method does nothing."""

    __slots__ = ()

    def __enter__(self) -> _NoopSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set_attribute(self, key: str, value: Any) -> None:
        return None

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        return None

    def is_recording(self) -> bool:
        return False

    def end(self) -> None:
        return None


NOOP_SPAN = _NoopSpan()


class _State:
    __slots__ = ("provider", "record", "tracer")

    def __init__(self) -> None:
        self.tracer: Any = None
        self.provider: Any = None
        self.record = False


_state = _State()


def enabled() -> bool:
    """Whether spans are being made."""
    return _state.tracer is not None


def record_results() -> bool:
    """Whether retrieval spans carry document ids and scores (opt-in)."""
    return _state.tracer is not None and _state.record


def span(name: str, kind: str = "internal", **attributes: Any) -> Any:
    """A span named ``name`` with ``attributes`` (None values left out), child of the
    current one; :data:`NOOP_SPAN` while tracing is off. ``kind`` is ``internal``,
    ``server`` or ``client``. Use it as ``with span(...) as s: s.set_attribute(...)``.
    """
    tracer = _state.tracer
    if tracer is None:
        return NOOP_SPAN
    return _real_span(tracer, name, kind, attributes)


@contextmanager
def _real_span(tracer: Any, name: str, kind: str, attributes: Mapping[str, Any]
               ) -> Iterator[Any]:
    from opentelemetry.trace import SpanKind

    kinds = {"server": SpanKind.SERVER, "client": SpanKind.CLIENT}
    clean = {k: v for k, v in attributes.items() if v is not None}
    with tracer.start_as_current_span(name, kind=kinds.get(kind, SpanKind.INTERNAL),
                                      attributes=clean) as current:
        yield current


def start_span(name: str, kind: str = "internal", **attributes: Any) -> Any:
    """A started span that is not made current, for work that yields (a stream): end
    it with ``.end()``. :data:`NOOP_SPAN` while tracing is off."""
    tracer = _state.tracer
    if tracer is None:
        return NOOP_SPAN
    from opentelemetry.trace import SpanKind

    kinds = {"server": SpanKind.SERVER, "client": SpanKind.CLIENT}
    return tracer.start_span(name, kind=kinds.get(kind, SpanKind.INTERNAL),
                             attributes={k: v for k, v in attributes.items()
                                         if v is not None})


def _model_parts(name: str) -> tuple[str | None, str]:
    provider, sep, model = name.partition(":")
    return (provider, model) if sep and model else (None, name)


def embeddings_span(model_name: str, inputs: int) -> Any:
    """``embeddings {model}``: one call of an embedding model on ``inputs`` texts."""
    if _state.tracer is None:
        return NOOP_SPAN
    provider, model = _model_parts(model_name)
    return _real_span(_state.tracer, f"embeddings {model}", "client", {
        OPERATION: "embeddings", "gen_ai.request.model": model,
        "gen_ai.provider.name": provider, "ragloom.embeddings.inputs": inputs})


def chat_attributes(model_name: str, max_tokens: int | None,
                    temperature: float | None) -> dict[str, Any]:
    provider, model = _model_parts(model_name)
    return {OPERATION: "chat", "gen_ai.request.model": model,
            "gen_ai.provider.name": provider, "gen_ai.request.max_tokens": max_tokens,
            "gen_ai.request.temperature": temperature}


def chat_span(model_name: str, max_tokens: int | None = None,
              temperature: float | None = None) -> Any:
    """``chat {model}`` (current while it runs): one non-streamed model call."""
    if _state.tracer is None:
        return NOOP_SPAN
    return _real_span(_state.tracer, f"chat {_model_parts(model_name)[1]}", "client",
                      chat_attributes(model_name, max_tokens, temperature))


def start_chat_span(model_name: str, max_tokens: int | None = None,
                    temperature: float | None = None) -> Any:
    """``chat {model}`` for a stream: started, not current; end it with ``.end()``."""
    if _state.tracer is None:
        return NOOP_SPAN
    from opentelemetry.trace import SpanKind

    attributes = {k: v for k, v in chat_attributes(model_name, max_tokens,
                                                   temperature).items() if v is not None}
    return _state.tracer.start_span(f"chat {_model_parts(model_name)[1]}",
                                    kind=SpanKind.CLIENT, attributes=attributes)


def record_usage(current: Any, input_tokens: int, output_tokens: int,
                 finish_reason: str | None = None) -> None:
    """Token counts (and the finish reason) of a model call on its span."""
    if current is NOOP_SPAN:
        return
    current.set_attribute("gen_ai.usage.input_tokens", input_tokens)
    current.set_attribute("gen_ai.usage.output_tokens", output_tokens)
    if finish_reason:
        current.set_attribute("gen_ai.response.finish_reasons", [finish_reason])


def retrieval_span(data_source: str, top_k: int, mode: str) -> Any:
    """``retrieval {data_source}``: one search of one knowledge base / vector store."""
    if _state.tracer is None:
        return NOOP_SPAN
    return _real_span(_state.tracer, f"retrieval {data_source}", "internal", {
        OPERATION: "retrieval", "gen_ai.data_source.id": data_source,
        "gen_ai.request.top_k": top_k, "ragloom.search.mode": mode})


@contextmanager
def use_context(carrier: Mapping[str, str]) -> Iterator[None]:
    """Make the trace context in ``carrier`` (W3C ``traceparent``/``tracestate``
    headers) current, so spans started inside are its children; nothing while off."""
    if _state.tracer is None or "traceparent" not in carrier:
        yield
        return
    from opentelemetry import context, propagate

    token = context.attach(propagate.extract(carrier))
    try:
        yield
    finally:
        context.detach(token)


def configure(enabled: bool = True, *, exporter: str = "auto", record_results: bool = False,
              tracer_provider: Any = None, service_name: str = "ragloom") -> bool:
    """Turn tracing on (or off with ``enabled=False``); True when spans will be made.

    ``tracer_provider``: an SDK ``TracerProvider`` to use as it is (tests pass one
    with an ``InMemorySpanExporter``). Otherwise one is made for ``service_name``
    with ``exporter``: ``auto`` (OTLP when installed, else none), ``otlp``,
    ``console`` or ``none``. The global tracer provider is not replaced.
    """
    if not enabled:
        shutdown()
        return False
    if exporter not in EXPORTERS:
        from ragloom.errors import ConfigurationError

        raise ConfigurationError(f"unknown trace exporter {exporter!r}; use one of "
                                 f"{', '.join(EXPORTERS)}")
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError as exc:
        from ragloom.errors import MissingDependencyError

        raise MissingDependencyError("opentelemetry-sdk", "otel", "tracing") from exc
    provider = tracer_provider
    if provider is None:
        provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        processor = _processor(exporter)
        if processor is not None:
            provider.add_span_processor(processor)
    _state.provider = provider
    _state.record = record_results
    _state.tracer = provider.get_tracer("ragloom")
    return True


def _processor(exporter: str) -> Any:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    if exporter == "console":
        return BatchSpanProcessor(ConsoleSpanExporter())
    if exporter == "none":
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter,
            )
        except ImportError:
            if exporter == "otlp":
                from ragloom.errors import MissingDependencyError

                raise MissingDependencyError("opentelemetry-exporter-otlp", "otel",
                                             "exporting traces with OTLP") from None
            log.warning("tracing is on but opentelemetry-exporter-otlp is not installed: "
                        "spans are not exported (install it, or ask for the console "
                        "exporter with OTEL_TRACES_EXPORTER=console)")
            return None
    return BatchSpanProcessor(OTLPSpanExporter())


def configure_from_env(env: Mapping[str, str] | None = None, *,
                       record_results: bool | None = None) -> bool:
    """Turn tracing on when the standard ``OTEL_*`` variables ask for it."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    wanted = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if not wanted and not env.get("OTEL_EXPORTER_OTLP_ENDPOINT") and not env.get(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return False
    exporter = {"": "auto", "otlp": "otlp", "console": "console", "none": "none"}.get(
        wanted.split(",")[0], "auto")
    record = (env.get("RAGLOOM_OTEL_RECORD_RESULTS", "").lower() in ("1", "true", "yes")
              if record_results is None else record_results)
    return configure(exporter=exporter, record_results=record,
                     service_name=env.get("OTEL_SERVICE_NAME", "ragloom"))


def shutdown() -> None:
    """Flush and stop: spans are no longer made."""
    provider = _state.provider
    _state.tracer = _state.provider = None
    _state.record = False
    if provider is not None and hasattr(provider, "force_flush"):
        provider.force_flush()


def record_matches(current: Any, ids: Sequence[str], scores: Sequence[float]) -> None:
    """Document ids and scores on a retrieval span, when recording them is on."""
    if _state.record and current is not NOOP_SPAN:
        current.set_attribute("ragloom.retrieval.document_ids", list(ids))
        current.set_attribute("ragloom.retrieval.scores", [float(s) for s in scores])
