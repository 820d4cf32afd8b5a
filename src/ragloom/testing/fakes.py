"""A hashing embedder and a scripted chat model.

``HashingEmbedder`` puts each lower-cased word into one of ``dimension`` buckets, so
texts sharing words are near each other: enough for retrieval tests to mean
something, with no model to load. ``ScriptedModel`` answers from a script and
records every call.
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from ragloom.protocols import as_messages
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, Embedding, Tool, Usage, Vector

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Deterministic bag-of-words embedder (unit-normalised)."""

    def __init__(self, dimension: int = 64, *, model: str = "hashing") -> None:
        self._dimension = dimension
        self._name = f"fake:{model}-{dimension}"
        self.calls: list[int] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    def count_tokens(self, text: str) -> int:
        return len(_WORD.findall(text))

    def _embed(self, text: str) -> Vector:
        vector = np.zeros(self._dimension, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            vector[zlib.crc32(word.encode("utf-8")) % self._dimension] += 1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0:
            vector[0] = 1.0
            norm = 1.0
        return Vector(vector / norm)

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        self.calls.append(len(texts))
        return [self._embed(text) for text in texts]

    def embed_query(self, text: str) -> Embedding:
        return self._embed(text)


class FailingQueryEmbedder(HashingEmbedder):
    """A :class:`HashingEmbedder` whose query path fails as an unreachable provider
    does (documents still embed): searches fall back to keyword results. ``failing``
    turns the failure off and on."""

    def __init__(self, dimension: int = 64) -> None:
        super().__init__(dimension, model="failing-query")
        self.failing = True

    def embed_query(self, text: str) -> Embedding:
        if self.failing:
            from ragloom.errors import ProviderConnectionError

            raise ProviderConnectionError("the embedding service is unreachable (fake)",
                                          provider="fake")
        return super().embed_query(text)


Reply = str | Callable[[list[ChatMessage]], str]


class ScriptedModel:
    """A chat model that replies from a list (cycled) or a function of the messages."""

    def __init__(
        self, replies: Sequence[Reply] = ("I don't know.",), *, name: str = "fake:scripted",
        token_delay: float = 0.0,
    ) -> None:
        self._replies = list(replies)
        self._name = name
        self.token_delay = token_delay  # seconds before each streamed word (a slow model)
        #: Streams running now, and the most that ever ran at once.
        self.streaming = 0
        self.most_streaming = 0
        self._count = threading.Lock()
        self.calls: list[list[ChatMessage]] = []

    @property
    def name(self) -> str:
        return self._name

    def chat(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        started = time.perf_counter()
        conversation = as_messages(messages)
        self.calls.append(conversation)
        reply = self._replies[(len(self.calls) - 1) % len(self._replies)]
        text = reply(conversation) if callable(reply) else reply
        for marker in stop or ():
            text = text.split(marker, 1)[0]
        usage = Usage(
            input_tokens=sum(len(m.content.split()) for m in conversation),
            output_tokens=len(text.split()),
            latency_s=time.perf_counter() - started,
        )
        return ChatResponse(message=ChatMessage.assistant(text), usage=usage, model=self._name)

    def stream(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[ChatDelta]:
        response = self.chat(messages, tools=tools, stop=stop)
        with self._count:
            self.streaming += 1
            self.most_streaming = max(self.most_streaming, self.streaming)
        try:
            for word in re.findall(r"\S+\s*", response.text):
                if self.token_delay:
                    time.sleep(self.token_delay)
                yield ChatDelta(text=word)
            yield ChatDelta(response=response)
        finally:
            with self._count:
                self.streaming -= 1


def create_embedder(model: str, *, provider: str = "fake", **options: object) -> HashingEmbedder:
    """Registry entry: ``fake:hashing-64`` or ``fake:64``; ``fake:failing-query-64``
    embeds documents but fails every query (:class:`FailingQueryEmbedder`)."""
    digits = model.rsplit("-", 1)[-1]
    dimension = int(digits) if digits.isdigit() else 64
    if model.startswith("failing-query"):
        return FailingQueryEmbedder(dimension)
    return HashingEmbedder(dimension)


def create_model(model: str, *, provider: str = "fake", **options: object) -> ScriptedModel:
    """Registry entry: ``fake:echo`` repeats the question (``fake:slow-echo`` streams it
    a word per 10 ms); anything else says it doesn't know."""
    if model in ("echo", "slow-echo"):
        return ScriptedModel([lambda messages: messages[-1].content], name=f"fake:{model}",
                             token_delay=0.01 if model == "slow-echo" else 0.0)
    return ScriptedModel(name=f"fake:{model}")
