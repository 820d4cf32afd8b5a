"""The one place an answer prompt is built and the model is called for an answer.

:func:`augment_user_query` is the specifications' content injector (numbered passages,
chosen metadata keys, a token budget, then the question); the caller may pass its own
function of the same shape (``prompt_builder``). :class:`ModelCall` sends the user's
settings (temperature, max tokens, system prompt, template) and the conversation's
history with every answer request, and counts the calls it made.

A small local model answers best from a few sentences: it gets the best sentences
(``compact``); any other model gets the passages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ragloom.answering.sentences import Sentence
from ragloom.answering.settings import GenerationSettings
from ragloom.protocols import ModelProvider, TokenCounter
from ragloom.templates import check_template, render_template
from ragloom.types import ChatMessage, ChatResponse, Prompt, QueryMatch, TextChunk

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the question using only the numbered context "
    "passages. Cite the passages you used by their number, like [1]. If the context does "
    "not contain the answer, say that you don't know."
)
COMPACT_SYSTEM_PROMPT = (
    "You answer questions about documents. Answer in one short sentence, using the exact "
    "words and numbers of the text. If the text does not answer the question, reply: "
    "not found."
)
DEFAULT_PROMPT = Prompt("Context:\n{context}\n\nQuestion: {question}")
DEFAULT_CHUNK_TEMPLATE = "[{number}] {text}"
#: Model names whose answers come from the best sentences rather than whole passages.
COMPACT_PROVIDERS = ("local", "gguf", "fake", "scripted")

PromptBuilder = Callable[..., str]


def _words(text: str) -> int:
    return max(1, len(text.split()) * 4 // 3)


def augment_user_query(
    context: Sequence[QueryMatch | TextChunk],
    question: str,
    *,
    prompt: Prompt = DEFAULT_PROMPT,
    chunk_template: str = DEFAULT_CHUNK_TEMPLATE,
    metadata_keys: Sequence[str] = (),
    max_tokens_in_context: int | None = None,
    token_counter: TokenCounter | None = None,
) -> str:
    """The user message: numbered passages, then the question.

    ``chunk_template`` may use ``{number}``, ``{text}``, ``{source}`` and any key named
    in ``metadata_keys`` (missing keys render empty); nothing else (no format specs,
    conversions or attribute access: :func:`ragloom.templates.render_template`).
    Passages past ``max_tokens_in_context`` are left out whole, never cut mid-passage.
    """
    count: Callable[[str], int] = token_counter.count_tokens if token_counter else _words
    check_template(chunk_template, ("number", "text", "source", *metadata_keys))
    blocks: list[str] = []
    used = 0
    for number, item in enumerate(context, start=1):
        chunk = item.chunk if isinstance(item, QueryMatch) else item
        values: dict[str, Any] = {key: chunk.metadata.get(key, "") for key in metadata_keys}
        values.update(number=number, text=chunk.text.strip(), source=chunk.source)
        block = render_template(chunk_template, values)
        cost = count(block)
        if max_tokens_in_context is not None and used + cost > max_tokens_in_context and blocks:
            break
        blocks.append(block)
        used += cost
    return prompt.render(context="\n\n".join(blocks), question=question.strip())


def evidence_prompt(question: str, sentences: Sequence[Sentence]) -> str:
    """The compact user message: the chosen sentences (in passage order), then the question."""
    ordered = sorted(sentences, key=lambda s: (s.number, s.position))
    text = "\n".join(s.text for s in ordered)
    return f"Text:\n{text}\n\nQuestion: {question.strip()}"


def is_compact(model: ModelProvider) -> bool:
    name = (getattr(model, "name", "") or "").lower()
    return name.startswith(COMPACT_PROVIDERS) or "smollm" in name


def is_bundled_size(model: ModelProvider) -> bool:
    """A small in-process model (the bundled SmolLM2, a local GGUF file)."""
    name = (getattr(model, "name", "") or "").lower()
    return name.startswith(("local", "gguf")) or "smollm" in name


def trim_history(history: Sequence[ChatMessage], settings: GenerationSettings,
                 counter: TokenCounter | None = None) -> list[ChatMessage]:
    """The latest turns within the window (messages and tokens), oldest first."""
    count: Callable[[str], int] = counter.count_tokens if counter else _words
    kept: list[ChatMessage] = []
    used = 0
    for message in reversed([m for m in history if m.role in ("user", "assistant")]):
        if len(kept) >= settings.history_messages:
            break
        cost = count(message.content or "")
        if used + cost > settings.history_tokens and kept:
            break
        kept.append(message)
        used += cost
    return list(reversed(kept))


class ModelCall:
    """Asks the model for an answer with the user's settings and history.

    ``prompt_builder`` (default :func:`augment_user_query`) builds the user message
    from the passages for models that get passages, and whenever the settings carry a
    ``template``.
    """

    def __init__(self, model: ModelProvider, settings: GenerationSettings, *,
                 history: Sequence[ChatMessage] = (), default_max_tokens: int = 40,
                 prompt_builder: PromptBuilder | None = None, chunk_template: str |
                 None = None, token_counter: TokenCounter | None = None,
                 max_tokens_in_context: int | None = 1500, context_sentences: int = 3
                 ) -> None:
        self.model = model
        self.settings = settings
        self.history = trim_history(history, settings, token_counter)
        self.default_max_tokens = default_max_tokens
        self.prompt_builder = prompt_builder or augment_user_query
        self.chunk_template = chunk_template or DEFAULT_CHUNK_TEMPLATE
        self.token_counter = token_counter
        self.max_tokens_in_context = max_tokens_in_context
        self.context_sentences = context_sentences
        self.compact = is_compact(model) and settings.template is None
        self.small = is_bundled_size(model)
        self.response: ChatResponse | None = None
        self.count = 0

    def messages(self, question: str, evidence: Sequence[Sentence],
                 sources: Sequence[QueryMatch], *, compact: bool | None = None
                 ) -> list[ChatMessage]:
        if self.compact if compact is None else compact:
            system = self.settings.system_prompt or COMPACT_SYSTEM_PROMPT
            user = evidence_prompt(question, evidence[: self.context_sentences])
        else:
            system = self.settings.system_prompt or DEFAULT_SYSTEM_PROMPT
            prompt = Prompt(self.settings.template) if self.settings.template else DEFAULT_PROMPT
            user = self.prompt_builder(
                sources, question, prompt=prompt, chunk_template=self.chunk_template,
                metadata_keys=self.settings.metadata_keys,
                max_tokens_in_context=self.max_tokens_in_context,
                token_counter=self.token_counter)
        return [ChatMessage.system(system), *self.history, ChatMessage.user(user)]

    def send(self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None,
             stop: Sequence[str] | None = None) -> str:
        """One model call with the settings; returns its text."""
        options = self.settings.model_options(max_tokens or self.default_max_tokens)
        response = self.model.chat(list(messages), stop=list(stop) if stop else None,
                                   **options)
        self.count += 1
        self.response = response
        return response.text

    def answer(self, question: str, evidence: Sequence[Sentence],
               sources: Sequence[QueryMatch], *, compact: bool | None = None) -> str:
        compact = self.compact if compact is None else compact
        limit = self.default_max_tokens if compact else max(self.default_max_tokens, 256)
        stop = ["\n\n"] if compact else None
        return self.send(self.messages(question, evidence, sources, compact=compact),
                         max_tokens=limit, stop=stop)
