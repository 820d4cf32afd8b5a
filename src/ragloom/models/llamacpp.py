"""Any local GGUF chat model through llama.cpp: ``gguf:/path/to/model.gguf``.

llama.cpp comes from the ``xllamacpp`` package (prebuilt wheels, MIT): install it with
``pip install 'ragloom[llamacpp]'``. The model is loaded on first use, once per file
and settings in the process (every :class:`LlamaCppChatModel` of the same file
shares it), with ``threads`` CPU threads per call (default 1: the ragloom server runs
calls side by side, and decoding one token at a time has little work to split).

Prompts use the model's own chat template from the GGUF metadata, applied by
llama.cpp itself (no Python Jinja runs). A conversation that does not fit the context
loses its older turns first, as with ``local:`` models
(:func:`~ragloom.models.chat_template.fit_prompt`); then generation runs on the
token ids, so ``usage.input_tokens`` is exactly what the model read.

``xllamacpp.Server`` also listens on a loopback HTTP port (llama.cpp's server). It is
used here only for tokenizing and templating, and is locked with a random API key
made for this process, so no other local program can use it.
"""

from __future__ import annotations

import json
import queue
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ragloom._optional import require
from ragloom.errors import ConfigurationError, InvalidInputError, ProviderError
from ragloom.models.chat_template import TemplateMessage, fit_prompt, template_messages
from ragloom.models.gguf_header import GGUFInfo, read_gguf_info
from ragloom.protocols import as_messages
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, Tool, Usage

DEFAULT_MAX_TOKENS = 256
#: Context allocated when the model was trained for more (a 128k-token KV cache of a
#: 1B model takes gigabytes); ``context=`` asks for another size.
DEFAULT_CONTEXT_CAP = 4096
DEFAULT_THREADS = 1
_HTTP_TIMEOUT = 30.0


class _Engine:
    """One loaded model: the llama.cpp server object and its locked loopback side."""

    def __init__(self, path: Path, info: GGUFInfo, *, context: int, threads: int,
                 parallel: int) -> None:
        xllamacpp = require("xllamacpp", package="xllamacpp", extra="llamacpp",
                            purpose="running GGUF models with llama.cpp")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = context * parallel  # llama.cpp splits the context between slots
        params.n_parallel = parallel
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = -1  # llama.cpp logs every request to stderr otherwise
        params.n_threads_http = 2
        params.ui = False
        params.endpoint_slots = False
        params.endpoint_props = False
        params.hostnames = ["127.0.0.1"]
        self._key = secrets.token_urlsafe(32)
        params.api_keys = [self._key]
        try:
            self.server = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise ConfigurationError(
                f"llama.cpp could not load {path} ({info.architecture} model): {exc}. The file "
                "may be damaged or of an architecture this llama.cpp build does not know; "
                "try another GGUF file or upgrade xllamacpp"
            ) from exc
        self.address = str(self.server.listening_address)
        self.context = context
        self.info = info

    def post(self, route: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            self.address + route, data=json.dumps(body).encode("utf-8"), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self._key}"})
        try:
            with urllib.request.urlopen(request, timeout=_HTTP_TIMEOUT) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise ProviderError(f"llama.cpp {route} failed: {exc}", provider="gguf") from exc

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        tokens = self.post("/tokenize", {"content": text, "add_special": special,
                                         "parse_special": special})["tokens"]
        return [int(t) for t in tokens]

    def detokenize(self, ids: list[int]) -> str:
        return str(self.post("/detokenize", {"tokens": ids})["content"])

    def render(self, messages: list[TemplateMessage]) -> list[int]:
        prompt = self.post("/apply-template", {"messages": messages})["prompt"]
        return self.tokenize(str(prompt), special=True)


_ENGINES: dict[tuple[str, int, int, int, int], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


def _engine(path: Path, context: int | None, threads: int, parallel: int) -> _Engine:
    """The loaded model for this file and settings, loaded on the first call only."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError as exc:
        raise ConfigurationError(f"the GGUF model file {path} cannot be read: {exc}") from exc
    with _ENGINES_LOCK:
        info = read_gguf_info(path)
        size = context or min(info.context_length or DEFAULT_CONTEXT_CAP, DEFAULT_CONTEXT_CAP)
        key = (str(path), stamp, size, threads, parallel)
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = _Engine(path, info, context=size, threads=threads,
                                             parallel=parallel)
        return engine


class LlamaCppChatModel:
    """A GGUF chat model run in-process by llama.cpp. Loads nothing until first used.

    ``context`` is the tokens the model attends to (prompt plus answer; default: what
    it was trained for, at most 4096); ``threads`` the CPU threads of one call;
    ``parallel`` how many calls generate at once (each gets ``context`` tokens);
    ``top_p`` and ``seed`` apply when sampling (``temperature`` above 0).
    """

    def __init__(self, path: str | Path, *, name: str | None = None,
                 max_tokens: int = DEFAULT_MAX_TOKENS, context: int | None = None,
                 threads: int = DEFAULT_THREADS, parallel: int = 1,
                 top_p: float | None = None, seed: int | None = None) -> None:
        target = Path(path).expanduser()
        if not target.is_file():
            raise ConfigurationError(
                f"the GGUF model file {target} does not exist" if not target.exists() else
                f"{target} is not a file; give the path of a .gguf model file")
        for option, value, least in (("max_tokens", max_tokens, 1), ("threads", threads, 1),
                                     ("parallel", parallel, 1), ("context", context or 64, 64)):
            if value < least:
                raise ConfigurationError(f"{option} must be at least {least}, got {value}")
        _check_top_p(top_p)
        self.path = target.resolve()
        self._name = name or f"gguf:{self.path}"
        self._max_tokens = max_tokens
        self._context = context
        self._threads = threads
        self._parallel = parallel
        self._top_p = top_p
        self._seed = seed
        self._loaded: _Engine | None = None

    def __repr__(self) -> str:
        return f"LlamaCppChatModel({str(self.path)!r}, threads={self._threads})"

    @property
    def name(self) -> str:
        return self._name

    def _engine(self) -> _Engine:
        if self._loaded is None:
            self._loaded = _engine(self.path, self._context, self._threads, self._parallel)
        return self._loaded

    def load(self) -> LlamaCppChatModel:
        """Load the model now instead of on the first call; returns self."""
        self._engine()
        return self

    @property
    def context_length(self) -> int:
        """Tokens the model attends to: prompt plus answer."""
        return self._engine().context

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in the model's own tokenizer (no special tokens added)."""
        return len(self._engine().tokenize(text, special=False)) if text else 0

    # ----------------------------------------------------------------- chatting
    def chat(self, messages: str | ChatMessage | Sequence[ChatMessage], *,
             tools: Sequence[Tool] = (), stop: Sequence[str] | None = None,
             temperature: float | None = None, max_tokens: int | None = None,
             top_p: float | None = None) -> ChatResponse:
        response: ChatResponse | None = None
        for delta in self.stream(messages, tools=tools, stop=stop, temperature=temperature,
                                 max_tokens=max_tokens, top_p=top_p):
            response = delta.response or response
        assert response is not None  # a stream always ends with its response
        return response

    def stream(self, messages: str | ChatMessage | Sequence[ChatMessage], *,
               tools: Sequence[Tool] = (), stop: Sequence[str] | None = None,
               temperature: float | None = None, max_tokens: int | None = None,
               top_p: float | None = None) -> Iterator[ChatDelta]:
        """Text pieces as they are generated, then one delta with the full response.

        ``tools`` is accepted and ignored (no tool calling here). Text from a stop
        string on is never yielded.
        """
        started = time.perf_counter()
        new_tokens = self._max_tokens if max_tokens is None else max_tokens
        if new_tokens < 1:
            raise InvalidInputError(f"max_tokens must be at least 1, got {new_tokens}")
        if temperature is not None and temperature < 0:
            raise InvalidInputError(f"temperature must be 0 or more, got {temperature}")
        _check_top_p(top_p, InvalidInputError)
        conversation = template_messages(as_messages(messages))
        engine = self._engine()
        budget = engine.context - min(new_tokens, engine.context // 2)
        prompt, _ = fit_prompt(conversation, budget, render=engine.render,
                               encode=lambda text: engine.tokenize(text, special=False),
                               decode=engine.detokenize)
        request: dict[str, Any] = {
            "prompt": prompt, "max_tokens": new_tokens, "stream": True,
            "temperature": float(temperature or 0.0), "cache_prompt": True,
            "stop": [marker for marker in (stop or ()) if marker]}
        if temperature:
            chosen = self._top_p if top_p is None else top_p
            if chosen is not None:
                request["top_p"] = float(chosen)
            if self._seed is not None:
                request["seed"] = int(self._seed)
        else:
            request["top_k"] = 1  # greedy: the most likely token every time
        text: list[str] = []
        finish, usage = "stop", Usage(input_tokens=len(prompt))
        for chunk in self._chunks(engine, request):
            error = chunk.get("error")
            if error:
                raise ProviderError(f"generation failed: {_message(error)}", provider="gguf",
                                    model=str(self.path))
            for choice in chunk.get("choices") or ():
                piece = str(choice.get("text") or "")
                if piece:
                    text.append(piece)
                    yield ChatDelta(text=piece)
                finish = str(choice.get("finish_reason") or finish)
            counts = chunk.get("usage")
            if counts:
                usage = Usage(input_tokens=int(counts.get("prompt_tokens", len(prompt))),
                              output_tokens=int(counts.get("completion_tokens", 0)))
        usage = Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                      latency_s=time.perf_counter() - started)
        yield ChatDelta(response=ChatResponse(message=ChatMessage.assistant("".join(text)),
                                              usage=usage, model=self._name,
                                              finish_reason=finish))

    @staticmethod
    def _chunks(engine: _Engine, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The streamed chunks of one completion, read as they come.

        llama.cpp calls back on the thread that asked, which waits in native code
        without the GIL; a worker thread asks, and a consumer that stops early makes
        the next callback return True, which ends the generation.
        """
        pieces: queue.Queue[dict[str, Any] | BaseException | None] = queue.Queue()
        cancelled = threading.Event()

        def on_chunk(chunk: Any) -> bool:
            pieces.put(chunk if isinstance(chunk, dict) else {"error": str(chunk)})
            return cancelled.is_set()

        def work() -> None:
            try:
                result = engine.server.handle_completions(request, on_chunk)
                if isinstance(result, dict) and result.get("error"):
                    pieces.put(result)
            except BaseException as exc:  # handed to the consumer, which raises it
                pieces.put(exc)
            finally:
                pieces.put(None)

        worker = threading.Thread(target=work, name="ragloom-llamacpp", daemon=True)
        worker.start()
        try:
            while (item := pieces.get()) is not None:
                if isinstance(item, BaseException):
                    raise ProviderError(f"generation failed: {item}", provider="gguf") from item
                yield item
        finally:
            cancelled.set()
            worker.join()


def _message(error: object) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def _check_top_p(value: float | None, kind: type[Exception] = ConfigurationError) -> None:
    if value is not None and not 0.0 < value <= 1.0:
        raise kind(f"top_p must be above 0 and at most 1, got {value}")


_OPTIONS = "max_tokens, context, threads, parallel, top_p, seed"


def create_model(model: str, *, provider: str = "gguf", **options: Any) -> LlamaCppChatModel:
    """Registry entry for ``gguf:/path/to/model.gguf``.

    ``timeout`` (a setting every provider may be given) is accepted and unused: a
    local model has no connection to time out.
    """
    options.pop("timeout", None)
    if "base_url" in options:
        raise ConfigurationError(f"{provider}: models run in-process and take no base_url")
    try:
        return LlamaCppChatModel(model, name=f"{provider}:{model}", **options)
    except TypeError as exc:
        raise ConfigurationError(f"unknown option for {provider}:{model}: {exc}. "
                                 f"Known options: {_OPTIONS}") from exc
