"""Answer quality: the advanced pipeline (AugmentedRag) against NaiveRag, on the
question set of bench/answers_eval.py (documents the project has never seen).

    .venv/bin/python bench/advanced_answers.py [--split test] [--limit 24]

Both pipelines search the same knowledge base the same way (hybrid, top 3) with the
bundled model; ``NaiveRag`` answers grounded (the default), ``AugmentedRag`` is the
advanced composition with the default transformer, aggregator and injector (free
generation, as LangChain4j's). Results go to bench/results/advanced_answers.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ragloom.advanced import AugmentedRag, KnowledgeBaseContentRetriever, RetrievalAugmentor
from ragloom.evaluation.answers import evaluate_answers, ingest_folder, load_questions
from ragloom.rag import NaiveRag
from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL, make_model
from ragloom.retrieval.options import SearchOptions

HERE = Path(__file__).resolve().parent
DOCS = HERE / "answers" / "docs"
QUESTIONS = HERE / "answers" / "questions.jsonl"
RESULTS = HERE / "results" / "advanced_answers.json"
COLUMNS = ("answer_accuracy", "citation_accuracy", "correct_refusals",
           "unsupported_claims", "false_refusals", "seconds_p50")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int, default=24)
    parser.add_argument("--llm", default=DEFAULT_MODEL)
    args = parser.parse_args()

    questions = [q for q in load_questions(QUESTIONS) if not args.split or q.split == args.split]
    questions = questions[: args.limit]
    model = make_model(args.llm)
    assert model is not None
    options = SearchOptions(mode="hybrid", top_k=3)
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ragloom-answers-") as folder:
        kb = ingest_folder(DOCS, Path(folder) / "answers.db", embedder=DEFAULT_EMBEDDER)
        naive = NaiveRag(kb, model, search=options)
        augmentor = RetrievalAugmentor([KnowledgeBaseContentRetriever(kb, options=options)],
                                       max_contents=3)
        pipelines = {"NaiveRag (grounded)": naive.query,
                     "AugmentedRag": AugmentedRag(augmentor, model).query}
        for name, ask in pipelines.items():
            print(f"{name}...", file=sys.stderr, flush=True)
            rows[name] = evaluate_answers(ask, questions).summary()
    print(f"{'pipeline':24}" + "".join(f"{c:>20}" for c in COLUMNS))
    for name, row in rows.items():
        print(f"{name:24}" + "".join(f"{row[c]:>20}" for c in COLUMNS))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"llm": args.llm, "split": args.split,
                                   "questions": len(questions), "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
