"""Grounded answers: supporting sentences first, a short focused prompt, then a check.

:class:`GroundedAnswerer` turns retrieved passages and a chat model into an answer a
user can trust:

1. rank the sentences of the passages (:class:`~ragloom.answering.sentences.SentenceRanker`);
2. refuse ("not found in the documents") when even the best sentence is a weak match;
3. give the model only the best few sentences, ask for a short answer, and decode
   conservatively (greedy, a small token budget, stop at a blank line);
4. check the answer (:func:`check_answer`): a refusal, a number or name found in none of
   the given sentences, or an answer that shares no words with them is not trusted,
   and the best sentence is quoted instead, with its citation.

Every answer names the passage it relies on (``citations``, numbered as the sources)
and the sentence that supports it (``quote``). Hosted models go through the same
steps; only the prompt is shared, so any chat model works.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ragloom.answering.evidence import expected_kind, has_kind, missing_terms
from ragloom.answering.grounding import (
    content_words,
    is_refusal,
    numbers_in,
    strip_citations,
    unsupported_claims,
)
from ragloom.answering.sentences import Sentence, SentenceRanker
from ragloom.protocols import ModelProvider
from ragloom.retrieval.stemmer import porter_stem
from ragloom.types import ChatMessage, ChatResponse, QueryMatch

NOT_FOUND = "I could not find the answer in the documents."
GROUNDED_SYSTEM_PROMPT = (
    "You answer questions about documents. Answer in one short sentence, using the exact "
    "words and numbers of the text. If the text does not answer the question, reply: "
    "not found."
)
Origin = Literal["model", "quote", "refusal"]
# Share of an answer's own words (beyond the question's) that may be missing from its
# evidence: a paraphrase is fine, a made-up description is not.
MAX_NOVEL_SHARE = 0.34
_NUMERIC_QUESTION = re.compile(
    r"\b(how (much|many|long|often|far|old)|what time|when|what (is|was) the (price|cost|"
    r"rate|fee|limit|number|phone)|which floor|at what|above what|within how)\b", re.I)


@dataclass(frozen=True)
class GroundingOptions:
    """Knobs of :class:`GroundedAnswerer` (defaults tuned on bench/answers, dev split)."""

    context_sentences: int = 3  # sentences the model sees
    refuse_below: float = 0.4  # best sentence score under which the answer is a refusal
    min_lexical: float = 0.2  # ... or share of the question's words under which it refuses
    max_answer_tokens: int = 40
    max_answer_chars: int = 300


@dataclass(frozen=True)
class GroundedAnswer:
    """The checked answer, where it came from, and what supports it."""

    answer: str
    quote: str = ""
    citations: list[int] = field(default_factory=list)
    refused: bool = False
    origin: Origin = "model"
    model_answer: str = ""
    unsupported: list[str] = field(default_factory=list)
    evidence: list[Sentence] = field(default_factory=list)
    response: ChatResponse | None = None


def evidence_prompt(question: str, sentences: Sequence[Sentence]) -> str:
    """The user message: the chosen sentences (in passage order), then the question."""
    ordered = sorted(sentences, key=lambda s: (s.number, s.position))
    text = "\n".join(s.text for s in ordered)
    return f"Text:\n{text}\n\nQuestion: {question.strip()}"


def clean_answer(text: str, limit: int) -> str:
    """The first paragraph of a generated answer, without markers or runaway tails."""
    text = strip_citations(text).strip()
    text = re.split(r"\n\s*\n|\n(?=Question:|Text:)", text, maxsplit=1)[0].strip()
    text = re.sub(r"^(the answer is|answer|a)\s*:?\s*", "", text, flags=re.I)
    if len(text) > limit:
        cut = text.rfind(". ", 0, limit)
        text = text[: cut + 1] if cut > 0 else text[:limit].rstrip() + "..."
    return text


def _stems(text: str) -> set[str]:
    return {porter_stem(word) for word in content_words(text)}


def check_answer(answer: str, question: str, evidence: Sequence[Sentence]) -> list[str]:
    """Why ``answer`` cannot be trusted from ``evidence`` (empty when it can)."""
    problems: list[str] = []
    bare = re.sub(r"\[\d+(?:\s*,\s*\d+)*\]|[-*\u2022:]", " ", answer)
    if not re.search(r"[^\W_]", bare):
        return ["empty answer"]
    if re.search(r"(^|\n)\s*(Text|Question|Context)\s*:", answer):
        return ["the answer repeats the prompt"]
    if is_refusal(answer):
        return ["the model refused"]
    texts = [s.text for s in evidence]
    missing = unsupported_claims(answer, texts, question=question)
    if missing:
        problems.append("not in the sources: " + ", ".join(c.text for c in missing))
    said = _stems(answer) - _stems(question)
    novel = said - _stems(" ".join(texts))
    if said and len(novel) > MAX_NOVEL_SHARE * len(said):
        problems.append("words not in the sources: " + ", ".join(sorted(novel)))
    if _NUMERIC_QUESTION.search(question) and not numbers_in(answer) and any(
            numbers_in(t) for t in texts[:1]):
        problems.append("the question asks for a number the answer does not give")
    kind = expected_kind(question)
    if kind and any(has_kind(t, kind) for t in texts[:1]) and not has_kind(answer, kind):
        problems.append(f"the question asks for a {kind} the answer does not give")
    return problems


def supporting_sentence(answer: str, evidence: Sequence[Sentence]) -> Sentence:
    """The evidence sentence that shares most with the answer (ties: the best ranked)."""
    words = _stems(answer)
    values = set(numbers_in(answer))

    def overlap(item: tuple[int, Sentence]) -> tuple[int, int]:
        rank, sentence = item
        shared = len(words & _stems(sentence.text)) + 2 * len(values & set(numbers_in(
            sentence.text)))
        return shared, -rank

    return max(enumerate(evidence), key=overlap)[1]


class GroundedAnswerer:
    """Answers from retrieved passages with a model, checked against its evidence."""

    def __init__(
        self,
        ranker: SentenceRanker | None = None,
        *,
        options: GroundingOptions | None = None,
        system_prompt: str = GROUNDED_SYSTEM_PROMPT,
    ) -> None:
        self.ranker = ranker or SentenceRanker()
        self.options = options or GroundingOptions()
        self.system_prompt = system_prompt

    def evidence(self, question: str, matches: Sequence[QueryMatch]) -> list[Sentence]:
        """Sentences of the passages, best first."""
        return self.ranker.rank(question, matches)

    def weakness(self, question: str, matches: Sequence[QueryMatch],
                 evidence: Sequence[Sentence]) -> str:
        """Why the evidence cannot answer the question ("" when it can)."""
        if not evidence:
            return "no sentences"
        best = evidence[0]
        if best.score < self.options.refuse_below:
            return f"best sentence scores {best.score:.2f}"
        if best.lexical < self.options.min_lexical:
            return "the best sentence shares too few of the question's words"
        missing = missing_terms(question, [m.chunk.text for m in matches])
        if missing:
            return "the passages never mention " + ", ".join(missing)
        kind = expected_kind(question)
        top = evidence[: self.options.context_sentences]
        # Only a phone number is recognised surely enough to refuse for its absence.
        if kind == "phone" and not any(has_kind(s.text, kind) for s in top):
            return f"no sentence gives a {kind}"
        return ""

    def messages(self, question: str, evidence: Sequence[Sentence]) -> list[ChatMessage]:
        chosen = list(evidence[: self.options.context_sentences])
        return [ChatMessage.system(self.system_prompt),
                ChatMessage.user(evidence_prompt(question, chosen))]

    def refusal(self, evidence: Sequence[Sentence]) -> GroundedAnswer:
        return GroundedAnswer(answer=NOT_FOUND, refused=True, origin="refusal",
                              evidence=list(evidence))

    def decide(self, question: str, generated: str, evidence: Sequence[Sentence],
               response: ChatResponse | None = None) -> GroundedAnswer:
        """Keep the model's answer if the evidence supports it, else quote the evidence."""
        chosen = list(evidence[: self.options.context_sentences])
        text = clean_answer(generated, self.options.max_answer_chars)
        # Numbers and names must come from the best sentence, which is what gets cited:
        # small models often copy a number from a neighbouring sentence.
        problems = check_answer(text, question, chosen[:1])
        if not problems:
            support = supporting_sentence(text, chosen)
            return GroundedAnswer(answer=f"{text} [{support.number}]", quote=support.text,
                                  citations=[support.number], origin="model", model_answer=text,
                                  evidence=list(evidence), response=response)
        best = chosen[0]
        return GroundedAnswer(answer=f"{best.text} [{best.number}]", quote=best.text,
                              citations=[best.number], origin="quote", model_answer=text,
                              unsupported=problems, evidence=list(evidence), response=response)

    def answer(self, question: str, matches: Sequence[QueryMatch],
               model: ModelProvider) -> GroundedAnswer:
        evidence = self.evidence(question, matches)
        if self.weakness(question, matches, evidence):
            return self.refusal(evidence)
        response = model.chat(self.messages(question, evidence),
                              max_tokens=self.options.max_answer_tokens, stop=["\n\n"],
                              temperature=0.0)
        return self.decide(question, response.text, evidence, response)
