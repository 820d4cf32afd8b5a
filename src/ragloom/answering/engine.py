"""The answer engine: the one place a question becomes an answer.

``AnswerEngine.answer(question, sources, model, ...)`` runs, for passages already
retrieved:

1. **understand** the question (:func:`~ragloom.answering.question.read_question`):
   its kind from its form, its subject, its key terms;
2. **choose a strategy** by kind: lookup (:mod:`.lookup`, with a second search through
   :mod:`.twostep` when the first fact leads to the answer), list and mentions
   (:mod:`.gather`), procedure (:mod:`.steps`), comparison (:mod:`.compare`),
   summary (:mod:`.summary`); strategies that need more than the given passages
   read them through the :class:`~ragloom.answering.corpus.Corpus`;
3. **compose** the answer with ``[n]`` citations numbered against the sources it
   returns, and the supporting quote;
4. **verify** by the grounding mode (strict, check, off): every answer, whatever
   made it, is checked against the passages it cites (:mod:`.verify`); a refusal
   says why.

``stream`` yields the typed events (:mod:`ragloom.answering.events`): sources, the
answer's text, then the answer, or an error. ``NaiveRag``, ``AugmentedRag``, the CLI,
the native API and the web page are adapters over this engine; the settings
(:class:`~ragloom.answering.settings.GenerationSettings`) and the history reach the
model from every one of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from ragloom.answering.compare import compare
from ragloom.answering.corpus import Corpus
from ragloom.answering.gate import GatePolicy, idf_of, measure, on_subject, partly_on_subject
from ragloom.answering.gather import list_items, mentions
from ragloom.answering.lookup import lookup
from ragloom.answering.periods import newest_first
from ragloom.answering.prompting import ModelCall, PromptBuilder
from ragloom.answering.question import Question, read_question
from ragloom.answering.result import NOT_FOUND, EngineAnswer, refusal
from ragloom.answering.sentences import Sentence, SentenceRanker
from ragloom.answering.settings import GenerationSettings
from ragloom.answering.similar import WordSimilarity, word_similarity_for
from ragloom.answering.spans import measure_cue, states_measure, value_kind
from ragloom.answering.steps import procedure
from ragloom.answering.summary import summarise
from ragloom.answering.tables import with_table_header
from ragloom.answering.twostep import (
    missing_words,
    needs_second_step,
    second_step,
    through_clause,
)
from ragloom.answering.verify import verified
from ragloom.protocols import EmbeddingProvider, ModelProvider, TokenCounter
from ragloom.tracing import span
from ragloom.types import ChatMessage, QueryMatch

__all__ = ["NOT_FOUND", "AnswerEngine", "EngineAnswer"]

#: Passages a lookup reads before it refuses (the engine is given the top few).
WIDER_TOP_K = 10


#: Best sentences among which one stating the measure asked for comes first.
MEASURE_WINDOW = 8


def measure_first(question: str, evidence: list[Sentence]) -> list[Sentence]:
    """``evidence`` with, among its best few, the sentences that state the measure the
    question asks for ("how far": "Range: up to 45 km") first, in their order."""
    cue = measure_cue(question)
    if cue is None or value_kind(question) == "duration":
        # A length of time may be written in words ("a lifetime warranty"): the
        # ranking stands, the cue only counts as held by a stated duration.
        return evidence
    head = evidence[:MEASURE_WINDOW]
    stating = [s for s in head if states_measure(cue[1], s.text)]
    if not stating:
        return evidence
    return [*stating, *(s for s in head if s not in stating), *evidence[MEASURE_WINDOW:]]


#: Best sentences tried as the first step of a two-step question.
FIRST_STEPS = 3


def _first_steps(question: Question, about: list[Sentence],
                 partly: list[Sentence]) -> list[Sentence]:
    """The sentences a second search may start from: among the best few about the
    subject, those that lack the asked value, holding the most of the question's words
    first ("the vet nearest tregarth": "Our nearest vet is Fernbrook Veterinary Centre"
    before "The nearest shop is the Spar"). Evidence naming only some of the question's
    subjects is a first step whatever values it holds: the rest is in another file."""
    if about:
        heads = [s for s in about[:FIRST_STEPS] if needs_second_step(question, s)]
    else:
        heads = list(partly[:FIRST_STEPS])
    return sorted(heads, key=lambda s: len(missing_words(question, s.text)))


def _with_more(passages: list[QueryMatch], more: Sequence[QueryMatch]) -> list[QueryMatch]:
    """``passages`` followed by those of ``more`` not among them."""
    seen = {match.chunk.id for match in passages}
    return [*passages, *(m for m in more if m.chunk.id not in seen)]


class AnswerEngine:
    """Answers questions from passages, by kind of question, with citations.

    ``embedder`` ranks sentences and finds a document's central sentences (usually
    the knowledge base's); ``policy`` sets where lookups refuse; ``prompt_builder``
    replaces :func:`~ragloom.answering.prompting.augment_user_query`.
    """

    def __init__(self, embedder: EmbeddingProvider | None = None, *,
                 settings: GenerationSettings | None = None,
                 policy: GatePolicy | None = None,
                 prompt_builder: PromptBuilder | None = None,
                 chunk_template: str | None = None,
                 max_tokens_in_context: int | None = 1500) -> None:
        self.embedder = embedder
        self.settings = settings or GenerationSettings()
        self.policy = policy or GatePolicy()
        self.prompt_builder = prompt_builder
        self.chunk_template = chunk_template
        self.max_tokens_in_context = max_tokens_in_context
        self._ranker: SentenceRanker | None = None
        self._similar: WordSimilarity | None = None

    @property
    def ranker(self) -> SentenceRanker:
        if self._ranker is None:
            self._ranker = SentenceRanker(self.embedder)
        return self._ranker

    @property
    def similar(self) -> WordSimilarity | None:
        """Word closeness from the embedder, for paraphrased question terms."""
        if self._similar is None:
            self._similar = word_similarity_for(self.embedder)
        return self._similar

    def _call(self, model: ModelProvider | None, settings: GenerationSettings,
              history: Sequence[ChatMessage]) -> ModelCall | None:
        if model is None:
            return None
        counter = self.embedder if isinstance(self.embedder, TokenCounter) else None
        return ModelCall(model, settings, history=history,
                         prompt_builder=self.prompt_builder, chunk_template=self.chunk_template,
                         token_counter=counter,
                         max_tokens_in_context=self.max_tokens_in_context)

    def answer(self, question: str, sources: Sequence[QueryMatch],
               model: ModelProvider | None, *, corpus: Corpus | None = None,
               history: Sequence[ChatMessage] = (),
               settings: GenerationSettings | None = None) -> EngineAnswer:
        """The answer to ``question`` from ``sources`` (and ``corpus`` when given)."""
        settings = settings or self.settings
        passages = [with_table_header(match) for match in sources]
        understood = read_question(question, settings.kind)  # type: ignore[arg-type]
        with span("answer", **{"gen_ai.operation.name": "answer",
                               "ragloom.question.kind": understood.kind}):
            if not passages and corpus is None:
                return refusal("nothing was retrieved", passages, kind=understood.kind)
            calls = self._call(model, settings, history)
            if settings.grounding != "strict" and calls is not None and \
                    understood.kind == "lookup":
                evidence = newest_first(question, self.ranker.rank(question, passages),
                                        passages)
                result = lookup(understood, evidence, passages, calls, policy=self.policy,
                                grounding=settings.grounding, similar=self.similar)
            else:
                result = self._by_kind(understood, passages, calls, corpus, settings)
        return verified(result, question, settings.grounding)

    def _by_kind(self, question: object, passages: list[QueryMatch],
                 calls: ModelCall | None, corpus: Corpus | None,
                 settings: GenerationSettings) -> EngineAnswer:
        from ragloom.answering.question import Question

        assert isinstance(question, Question)
        kind = question.kind
        if kind == "summary":
            return summarise(question, passages, corpus, self.embedder,
                             points=settings.summary_points)
        if kind == "mentions":
            return mentions(question, passages, corpus, limit=settings.list_items)
        if kind == "comparison":
            compared = compare(question, passages, corpus, self.ranker)
            if compared is not None and not compared.refused:
                return compared
        if kind == "list":
            listed = list_items(question, passages, corpus, self.ranker,
                                limit=settings.list_items)
            if not listed.refused:
                return listed
        evidence = self.ranker.rank(question.text, passages)
        if kind == "procedure":
            reason, evidence = self._procedure_gap(question, passages, evidence)
            if reason and corpus is not None:
                # The steps may sit in a section the first passages missed: read more
                # of the knowledge base before refusing, as lists do.
                wider = _with_more(passages, corpus.search(question.text, top_k=10))
                if len(wider) > len(passages):
                    more = self.ranker.rank(question.text, wider)
                    wider_reason, wider_evidence = self._procedure_gap(question, wider, more)
                    if not wider_reason:
                        reason, passages, evidence = "", wider, wider_evidence
            if reason:
                return refusal(reason, passages, kind=kind, evidence=evidence)
            return procedure(question, passages, self.ranker, evidence)
        if kind == "lookup" and corpus is not None and evidence:
            chained = through_clause(question, passages, corpus, self.ranker)
            if chained is not None:
                return chained
            about, _ = on_subject(question, evidence, passages)
            # Evidence that names only some of the question's subjects is a first step
            # whatever values it holds: the rest of the question is in another file.
            partly = [] if about else partly_on_subject(question, evidence, passages)
            if partly or (about and needs_second_step(question, about[0])):
                two = self._two_step(question, about[:1], partly, passages, corpus)
                if two is not None:
                    return two
        evidence = measure_first(question.text, newest_first(question.text, evidence, passages))
        answered = lookup(question, evidence, passages, calls, policy=self.policy,
                          grounding=settings.grounding, similar=self.similar)
        if answered.refused and corpus is not None:
            # The answer may sit just below the passages given (a typo, a paraphrase):
            # one wider search before refusing, judged by the same gate.
            wider = _with_more(passages, corpus.search(question.text, top_k=WIDER_TOP_K))
            if len(wider) > len(passages):
                more = measure_first(question.text, newest_first(
                    question.text, self.ranker.rank(question.text, wider), wider))
                retried = lookup(question, more, wider, calls, policy=self.policy,
                                 grounding=settings.grounding, similar=self.similar)
                if not retried.refused:
                    answered = retried
        if answered.refused and kind == "lookup" and corpus is not None and evidence:
            # The best sentence stated a value but not the one asked ("the nearest shop
            # ... open 7am"); a runner-up may lead to it ("Our nearest vet is ...").
            about, _ = on_subject(question, evidence, passages)
            partly = [] if about else partly_on_subject(question, evidence, passages)
            two = self._two_step(question, about[1:], partly, passages, corpus)
            if two is not None:
                return two
        return replace(answered, kind=kind) if kind != "lookup" else answered

    def _two_step(self, question: Question, about: list[Sentence], partly: list[Sentence],
                  passages: list[QueryMatch], corpus: Corpus) -> EngineAnswer | None:
        for first in _first_steps(question, about, partly):
            two = second_step(question, first, passages, corpus, self.ranker)
            if two is not None:
                return two
        return None

    def _procedure_gap(self, question: Question, passages: list[QueryMatch],
                       evidence: list[Sentence]) -> tuple[str, list[Sentence]]:
        """Why ``passages`` do not hold the steps asked for ("" if they may), and the
        evidence about the question's subject. The gate's confidence is fitted on
        lookups; a procedure is refused when it is about another subject or the
        passages miss most of its words."""
        evidence, missing = on_subject(question, evidence, passages)
        if missing:
            return "the passages are not about " + ", ".join(missing), evidence
        if evidence:
            signals = measure(question, evidence, passages, idf_of(question, evidence),
                              self.similar)
            if signals.coverage < 0.5:
                return "the passages lack " + ", ".join(signals.missing), evidence
        return "", evidence

    def stream(self, question: str, sources: Sequence[QueryMatch],
               model: ModelProvider | None, *, corpus: Corpus | None = None,
               history: Sequence[ChatMessage] = (),
               settings: GenerationSettings | None = None) -> Iterator[EngineAnswer | str]:
        """The answer's text, then the whole :class:`EngineAnswer`.

        Answers are checked before they are shown, so the text comes as one piece.
        """
        result = self.answer(question, sources, model, corpus=corpus, history=history,
                             settings=settings)
        if result.answer:
            yield result.answer
        yield result
