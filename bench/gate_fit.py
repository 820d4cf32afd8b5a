"""Fit the refusal gate's weights on the dev sources, and show the trade-off it makes.

    .venv/bin/python bench/gate_fit.py [--source squad2 --source answers72 --source dev]
        [--write]

The gate (:mod:`ragloom.answering.gate`) mixes a few signals (the best sentence's
score, lexical share and margin, the idf-weighted coverage of the question's terms
around it and in it, whether it holds the kind of value asked) into one confidence
with a logistic function. This script measures those signals the way the engine
does (hybrid search, top 5, the sentence ranker, the subject filter) for every
lookup-shaped question of the dev sources (``bench/qa``; never the locked ``test``
split), labels them:

* **positive**: answerable, and the extract of the best sentence is right (the gate
  should let it through);
* **negative**: unanswerable (the gate should refuse);
* left out: answerable but the extract is wrong (passing or refusing it is wrong
  either way), and questions the subject filter already refused,

and fits the weights by L2-regularised logistic regression (Newton's method), each
source weighted equally. It reports, per source, leave-one-source-out: fitted on the
other sources, how many positives pass and negatives are refused at the operating
point, so the figures are not those of the data the weights came from. Then the
precision/recall table of the fit on all sources, and the operating point that
maximises balanced accuracy (answerable passed + unanswerable refused, halved).

``--write`` prints the :class:`~ragloom.answering.gate.GatePolicy` fields to paste;
results go to ``bench/results/gate_fit.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

FEATURES = ("score", "lexical", "margin", "coverage", "sentence_coverage", "typed",
            "attribute_coverage")
DEV_SOURCES = ("squad2", "answers72", "dev")
RESULTS = HERE / "results" / "gate_fit.json"


@dataclass(frozen=True)
class Row:
    source: str
    qid: str
    label: int
    features: tuple[float, ...]


def collect(source: str) -> list[Row]:
    from answers_eval import open_rag
    from qa_eval import QA, source_docs
    from ragloom.answering.gate import idf_of, measure, on_subject
    from ragloom.answering.lookup import compose_extract
    from ragloom.answering.question import read_question
    from ragloom.evaluation.answers import filter_split, is_right, load_questions
    from ragloom.retrieval.options import SearchOptions

    folder = QA / source
    questions = filter_split(load_questions(folder / "questions.jsonl"), "dev")
    scratch = Path(tempfile.mkdtemp(prefix="ragloom-gatefit-"))
    rag, kb, _ = open_rag(source_docs(folder), scratch / "kb.sqlite", "none")
    ranker = rag.engine.ranker
    options = SearchOptions(mode="hybrid", top_k=5)
    rows = []
    for q in questions:
        understood = read_question(q.question)
        if understood.kind != "lookup":
            continue
        matches = list(kb.search(q.question, options).matches)
        evidence = ranker.rank(q.question, matches)
        kept, missing = on_subject(understood, evidence, matches)
        if missing or not kept:
            continue
        signals = measure(understood, kept, matches, idf_of(understood, kept),
                          rag.engine.similar)
        if q.answerable:
            extract = compose_extract(understood, kept, matches).answer
            if not is_right(q, extract):
                continue
        rows.append(Row(source, q.id, int(q.answerable),
                        tuple(float(getattr(signals, f)) for f in FEATURES)))
    return rows


def fit(rows: list[Row], l2: float = 0.002) -> np.ndarray:
    """Weights (bias first) of a logistic regression, each source weighted equally."""
    x = np.array([(1.0, *r.features) for r in rows])
    y = np.array([r.label for r in rows], dtype=float)
    sources = sorted({r.source for r in rows})
    groups: dict[tuple[str, int], int] = {}
    for r in rows:
        groups[(r.source, r.label)] = groups.get((r.source, r.label), 0) + 1
    # Each source weighs the same, and within a source each class weighs the same.
    weight = np.array([1.0 / (len(sources) * 2 * groups[(r.source, r.label)]) for r in rows])
    w = np.zeros(x.shape[1])
    ridge = l2 * np.eye(x.shape[1])
    ridge[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (weight * (p - y)) + ridge @ w
        hessian = (x.T * (weight * p * (1 - p))) @ x + ridge
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def confidence(w: np.ndarray, row: Row) -> float:
    z = float(w[0] + np.dot(w[1:], row.features))
    return 1.0 / (1.0 + math.exp(-z))


def rates(w: np.ndarray, rows: list[Row], threshold: float) -> dict[str, Any]:
    pos = [r for r in rows if r.label == 1]
    neg = [r for r in rows if r.label == 0]
    passed = sum(1 for r in pos if confidence(w, r) >= threshold)
    refused = sum(1 for r in neg if confidence(w, r) < threshold)
    let_through = len(neg) - refused
    precision = passed / (passed + let_through) if passed + let_through else 1.0
    return {"answerable": len(pos), "passed": passed,
            "pass_rate": passed / len(pos) if pos else None,
            "unanswerable": len(neg), "refused": refused,
            "refuse_rate": refused / len(neg) if neg else None,
            "precision_of_answers": round(precision, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", action="append", choices=DEV_SOURCES, default=None)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    sources = args.source or list(DEV_SOURCES)
    rows = [row for source in sources for row in collect(source)]
    from ragloom.answering.gate import GatePolicy

    current = GatePolicy()
    now = np.array([current.bias, current.w_score, current.w_lexical, current.w_margin,
                    current.w_coverage, current.w_sentence_coverage, current.w_typed,
                    current.w_attribute_coverage])
    print(f"{len(rows)} lookups: " + ", ".join(
        f"{s} {sum(1 for r in rows if r.source == s and r.label)}+/"
        f"{sum(1 for r in rows if r.source == s and not r.label)}-" for s in sources))

    w = fit(rows)
    grid = [round(0.05 * i, 2) for i in range(4, 17)]
    table = []
    for t in grid:
        rate = rates(w, rows, t)
        balanced = ((rate["pass_rate"] or 0) + (rate["refuse_rate"] or 0)) / 2
        table.append({"threshold": t, **rate, "balanced": round(balanced, 3)})
    best = max(table, key=lambda r: r["balanced"])["threshold"]

    print("\nleave one source out (fitted on the others; at the chosen threshold):")
    print("| held out | answerable passed | unanswerable refused | (current weights) |")
    print("|---|---|---|---|")
    held: dict[str, Any] = {}
    for s in sources:
        train = [r for r in rows if r.source != s]
        test = [r for r in rows if r.source == s]
        if not train or not test:
            continue
        rate = rates(fit(train), test, best)
        was = rates(now, test, current.refuse_below)
        held[s] = {"fitted_on_others": rate, "current": was}
        print(f"| {s} | {rate['passed']}/{rate['answerable']} | "
              f"{rate['refused']}/{rate['unanswerable']} | {was['passed']}/{was['answerable']}"
              f" passed, {was['refused']}/{was['unanswerable']} refused |")

    print("\nall dev sources, fitted on all (precision/recall trade-off):")
    print("| refuse below | answerable passed | unanswerable refused | precision of answers |"
          " balanced |")
    print("|---|---|---|---|---|")
    for r in table:
        mark = " <-" if r["threshold"] == best else ""
        print(f"| {r['threshold']:.2f}{mark} | {r['passed']}/{r['answerable']} | "
              f"{r['refused']}/{r['unanswerable']} | {r['precision_of_answers']} | "
              f"{r['balanced']} |")
    names = ("bias", *(f"w_{f}" for f in FEATURES))
    print("\nweights: " + ", ".join(f"{n}={v:.2f}" for n, v in zip(names, w, strict=True)))
    if args.write:
        print("\nGatePolicy(" + ", ".join(f"{n}={v:.2f}" for n, v in zip(names, w,
                                                                           strict=True))
              + f", refuse_below={best})")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "sources": sources, "rows": len(rows), "features": list(FEATURES),
        "weights": dict(zip(names, [round(float(v), 4) for v in w], strict=True)),
        "threshold": best, "table": table, "leave_one_source_out": held}, indent=2) + "\n",
        encoding="utf-8")
    print(f"\nwrote {RESULTS.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
