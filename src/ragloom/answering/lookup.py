"""Lookups: one fact (a value, a date, a name, a yes/no) from the best sentence.

1. the gate (:mod:`ragloom.answering.gate`) refuses when the evidence is not about the
   question's subject or lacks what it asks; a question asking a price, a length of
   time or a measure is refused when no sentence near the best evidence holds one;
2. the model is asked with the best sentences (a small local model) or the passages
   (a capable hosted model), with the user's settings and history; a small local
   model is not asked when the best sentence states the value asked for (an amount,
   a time, a date, a count, a name): its span is the answer;
3. the answer is checked by the grounding mode: *strict* keeps a model answer only
   when the sentence it cites backs it (else the span of that sentence, else the
   sentence itself); *check* keeps it and flags what the passages lack; *off* keeps it;
4. the answer carries its citation and the supporting sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ragloom.answering.answerer import check_answer, clean_answer, supporting_sentence
from ragloom.answering.gate import GatePolicy, on_subject, weakness
from ragloom.answering.grounding import cited_numbers, is_refusal, unsupported_claims
from ragloom.answering.prompting import ModelCall
from ragloom.answering.question import Question
from ragloom.answering.result import EngineAnswer, cite, refusal
from ragloom.answering.sentences import Sentence, is_record, split_sentences
from ragloom.answering.similar import WordSimilarity
from ragloom.answering.spans import (
    answer_span,
    asked_measure,
    states_measure,
    states_money,
    value_kind,
)
from ragloom.types import QueryMatch

MAX_ANSWER_CHARS = 400
# How far down the evidence a stated value is looked for when the best sentence
# lacks it: the next two sentences, if they score at least 85 % of the best.
RUNNERS_UP = 2
RUNNER_UP_SHARE = 0.85


def _with_quote(short: str, sentence: Sentence) -> str:
    """``short [n]``, followed by the sentence when the short answer is only part of it."""
    if not short or short.strip().lower() == sentence.text.strip().lower():
        return cite(sentence.text, sentence.number)
    return f"{cite(short, sentence.number)} \u2014 \u201c{sentence.text}\u201d"


def stated_value(question: Question, evidence: Sequence[Sentence]) -> tuple[Sentence, str]:
    """The best sentence and the span of the value asked for that it states ("" if
    none). A value the best sentence leads up to but does not state is taken from the
    sentence after it in the same passage ("Garden waste collection is a paid
    subscription. It costs £48 a year."): the two are then quoted as one."""
    best = evidence[0]
    span = answer_span(question.text, best.text)
    if span or value_kind(question.text) == "other":
        return best, span
    after = next((s for s in evidence if s.number == best.number
                  and s.position == best.position + 1), None)
    following = answer_span(question.text, after.text) if after is not None else ""
    if after is not None and following:
        return replace(best, text=f"{best.text} {after.text}"), following
    # The best sentence names the thing but not the value asked for ("Order repeat
    # prescriptions on the NHS App"): a close runner-up that states it is the answer.
    for other in evidence[1:RUNNERS_UP + 1]:
        if other.score < best.score * RUNNER_UP_SHARE:
            break
        found = answer_span(question.text, other.text)
        if found:
            return other, found
    return best, span


def compose_extract(question: Question, evidence: Sequence[Sentence], sources: list[QueryMatch],
                    *, model_answer: str = "", problems: Sequence[str] = (),
                    calls: ModelCall | None = None,
                    stated: tuple[Sentence, str] | None = None) -> EngineAnswer:
    """The best sentence's span (or the sentence), cited. A value the best sentence
    leads up to but does not state is taken from the sentence after it in the same
    passage ("Garden waste collection is a paid subscription. It costs £48 a year.")."""
    best, span = stated or stated_value(question, evidence)
    return EngineAnswer(
        answer=_with_quote(span, best), sources=sources, kind=question.kind,
        strategy="lookup", quote=best.text, citations=[best.number],
        origin="extract" if span else "quote", model_answer=model_answer,
        unsupported=list(problems), evidence=list(evidence),
        response=calls.response if calls else None, model_calls=calls.count if calls else 0)


#: Kinds of value a lookup must find written near its evidence: a question asking
#: "how much" is not answered by a weight, however well the row names the product.
TYPED_KINDS = frozenset({"money", "duration"})
#: Sentences before and after the best one that may state the value.
NEAR = 2
_FREE = re.compile(r"\b(free|no charge|free of charge)\b", re.I)
_PAID = re.compile(r"\b(cost|costs|price|prices|priced|fee|fees|charge|charges|pay|paid|"
                   r"expensive|cheap|cheaper|cheapest)\b", re.I)
_FIGURE = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?|one|two|three|four|five|six|seven|eight|"
                     r"nine|ten|twelve)\b(?:\s?%)?", re.I)
# Units of things measured, not paid: a figure followed by one is no amount of money.
_PHYSICAL = re.compile(r"[\s-]?(?:kg|g|grams?|km/h|kph|km|mph|m|cm|mm|metres?|miles?|rpm|v|"
                       r"volts?|amps?|ah|mah|wh|w|kw|kwh|watts?|\u00b0|degrees?|c|l|litres?|ml|"
                       r"gb|mb|tb|inch(?:es)?|ft|psi|(?-i:A))\b", re.I)
_PERIOD_AFTER = re.compile(r"(?:\s?(?:to|-)\s?\d+)?\s?(?:seconds?|minutes?|mins?|hours?|hrs?|h|"
                           r"days?|weeks?|months?|years?)\b", re.I)
_PAID_PERIOD = re.compile(r"\s?(?:days?|weeks?|months?|years?)['\u2019]?\s+(?:rent|pay|"
                          r"salary|wages|fees?)\b", re.I)


def _amount(text: str) -> bool:
    """Whether ``text`` writes a figure that may be an amount paid: a share, or a number
    that is neither a year nor followed by a unit of something measured."""
    for found in _FIGURE.finditer(text):
        figure = found.group()
        if figure.endswith("%"):
            return True
        if re.fullmatch(r"(1[5-9]|20)\d\d", figure) or _PHYSICAL.match(text, found.end()):
            continue
        if _PERIOD_AFTER.match(text, found.end()) and not _PAID_PERIOD.match(text, found.end()):
            continue  # "6 to 7 hours" is a length of time; "five weeks' rent" is paid
        if re.search(r"[A-Za-z]$", text[: found.start()]):
            continue  # part of a code ("S9")
        return True
    return False


def _lacks_kind(question: Question, evidence: Sequence[Sentence],
                sources: Sequence[QueryMatch]) -> str:
    """Why the evidence cannot answer a question asking for a kind of value ("" when it
    may): none of the best sentences, nor those around the best one, holds a value of
    that kind (a money question over a specification row of weights and speeds)."""
    kind = value_kind(question.text)
    measure = asked_measure(question.text) if kind == "quantity" else None
    if (kind not in TYPED_KINDS and measure is None) or not evidence:
        return ""
    if kind == "money" and not _PAID.search(question.text):
        return ""  # "how much salt does it hold" asks an amount, not a price
    best = evidence[0]
    texts = [s.text for s in evidence[: RUNNERS_UP + 1]]
    if 0 < best.number <= len(sources):
        around = split_sentences(sources[best.number - 1].chunk.text)
        texts += around[max(0, best.position - NEAR): best.position + NEAR + 1]
    if kind == "money":
        # An amount is money, a share, "free" or a count of something paid ("five
        # weeks' rent"); never a weight, a speed or a year ("Model S9 (2025 edition)").
        if any(states_money(text) or _FREE.search(text) or _amount(text) for text in texts):
            return ""
    elif measure is not None:
        if any(states_measure(measure[1], text) for text in texts):
            return ""
    elif any(answer_span(question.text, text) for text in texts):
        return ""
    wanted = measure[0] if measure is not None else kind
    return f"the passages give no {wanted} for it"


def lookup(question: Question, evidence: Sequence[Sentence], sources: list[QueryMatch],
           calls: ModelCall | None, *, policy: GatePolicy, grounding: str,
           similar: WordSimilarity | None = None) -> EngineAnswer:
    """Answer a lookup from ranked ``evidence`` over ``sources`` (``similar`` lets the
    gate credit paraphrased terms)."""
    if grounding == "strict":
        evidence, missing = on_subject(question, evidence, sources)
        if missing:
            return refusal("the passages are not about " + ", ".join(missing), sources,
                           kind=question.kind)
        reason, _signals = weakness(question, evidence, sources, policy, similar)
        if not reason:
            reason = _lacks_kind(question, evidence, sources)
        if reason:
            return refusal(reason, sources, kind=question.kind, evidence=list(evidence))
    elif not evidence:
        return refusal("the passages hold no sentences", sources, kind=question.kind)
    if calls is None:
        return compose_extract(question, evidence, sources)
    compact = calls.compact and grounding == "strict"
    stated = stated_value(question, evidence) if compact and calls.small else None
    if stated is not None and (is_record(evidence[0].text) or stated[1]):
        # A small local model adds nothing to a value the best sentence states (an
        # amount, a time, a date, a count, a name), and garbles a table row it
        # rewrites: the span (or the row) is the answer, at once.
        return compose_extract(question, evidence, sources, stated=stated)
    generated = calls.answer(question.text, evidence, sources, compact=compact)
    text = clean_answer(generated, MAX_ANSWER_CHARS)
    if grounding == "strict" and compact:
        chosen = list(evidence[: calls.context_sentences])
        problems = check_answer(text, question.text, chosen[:1])
        if problems:
            return compose_extract(question, evidence, sources, model_answer=text,
                                   problems=problems, calls=calls)
        backing = supporting_sentence(text, chosen)
        return EngineAnswer(
            answer=_with_quote(text, backing), sources=sources, kind=question.kind,
            strategy="lookup", quote=backing.text, citations=[backing.number],
            origin="model", model_answer=text, evidence=list(evidence),
            response=calls.response, model_calls=calls.count)
    # The model read the passages: its claims are checked against those it cites.
    numbers = [n for n in cited_numbers(generated) if 0 < n <= len(sources)]
    cited = [sources[n - 1].chunk.text for n in numbers] or [m.chunk.text for m in sources]
    flagged = [c.text for c in unsupported_claims(generated, cited, question=question.text)]
    if grounding == "strict" and (flagged or is_refusal(generated)):
        problems = flagged and ["not in the passages it cites: " + ", ".join(flagged)]
        return compose_extract(question, evidence, sources, model_answer=generated.strip(),
                               problems=problems or ["the model refused"], calls=calls)
    body = generated.strip()
    within = [s for s in evidence if s.number in numbers] or list(evidence)
    support: Sentence | None = supporting_sentence(body, within[:3]) if within else None
    if not numbers and support is not None and grounding != "off" and not is_refusal(body):
        numbers = [support.number]
        body = cite(body, support.number)
    return EngineAnswer(
        answer=body, sources=sources, kind=question.kind, strategy="lookup",
        quote=support.text if support is not None else "", citations=numbers,
        origin="model", model_answer=body, evidence=list(evidence),
        unsupported=flagged if grounding == "check" else [],
        refused=is_refusal(body), response=calls.response, model_calls=calls.count)
