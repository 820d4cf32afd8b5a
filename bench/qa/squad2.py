"""Turn articles of a SQuAD 2.0 JSON file into a ragloom answer-quality source.

    python bench/qa/squad2.py PATH [--article TITLE ...] [--out DIR] [--split dev]

Writes ``DIR/docs/<title>.txt`` (the article as one document: the title, then its
paragraphs separated by blank lines) and ``DIR/questions.jsonl`` (one question a
line, in the format of ``ragloom eval --answers``): ``answers`` are the distinct
gold answers, ``answerable`` is false for ``is_impossible`` questions (their
``plausible_answers`` are kept for reading, never scored), ``kind`` is
``unanswerable`` or ``date`` / ``number`` / ``lookup`` guessed from the question
("when", "what year"...) and the gold answers' form, ``split`` is ``dev`` unless
``--split`` says otherwise and ``match`` is ``squad``: score it with SQuAD's
normalisation (lower case, no punctuation, no a/an/the, single spaces). Without
``--article`` every article is converted. The default is ``bench/qa/squad2/`` from
``/work/shared/data/squad2/normans-dev-v2.0.json``, article Normans.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_INPUT = Path("/work/shared/data/squad2/normans-dev-v2.0.json")

_MONTHS = ("january|february|march|april|may|june|july|august|september|october|"
           "november|december")
_DATE = re.compile(
    rf"\b(1\d{{3}}|20\d{{2}}|\d{{1,2}}(st|nd|rd|th) centur(y|ies)|{_MONTHS})\b|"
    r"\b(\d{1,4}s|centur(y|ies)|AD|BC|decade)\b", re.IGNORECASE)
_NUMBER = re.compile(
    r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|dozen|several|half)\b", re.IGNORECASE)


_WHEN = re.compile(r"^(when|(in )?what (year|century|decade|month|day)|(in )?which "
                   r"(year|century|decade))\b", re.IGNORECASE)


def guess_kind(answers: list[str], question: str = "") -> str:
    """``date`` when the question asks when (or which year or century) or most gold
    answers look like a date or period, ``number`` when they hold a figure, else
    ``lookup``."""
    if not answers:
        return "unanswerable"
    if _WHEN.match(question.strip()):
        return "date"
    dates = sum(bool(_DATE.search(a)) for a in answers)
    numbers = sum(bool(_NUMBER.search(a)) for a in answers)
    if dates * 2 >= len(answers) and dates:
        return "date"
    if numbers * 2 >= len(answers) and numbers:
        return "number"
    return "lookup"


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "article"


def article_text(article: dict[str, Any]) -> str:
    title = str(article["title"]).replace("_", " ")
    paragraphs = [str(p["context"]).strip() for p in article["paragraphs"]]
    return "\n\n".join([title, *paragraphs]) + "\n"


def convert_article(article: dict[str, Any], split: str) -> tuple[str, str, list[dict[str, Any]]]:
    """(file name, document text, questions) of one SQuAD article."""
    name = f"{slug(str(article['title']))}.txt"
    questions: list[dict[str, Any]] = []
    for paragraph in article["paragraphs"]:
        for qa in paragraph["qas"]:
            impossible = bool(qa.get("is_impossible", False))
            gold = list(dict.fromkeys(str(a["text"]).strip() for a in qa.get("answers", [])))
            row: dict[str, Any] = {"id": str(qa["id"]), "question": str(qa["question"]).strip()}
            if impossible:
                plausible = list(dict.fromkeys(
                    str(a["text"]).strip() for a in qa.get("plausible_answers", [])))
                row.update(answers=[], answerable=False, kind="unanswerable",
                           plausible_answers=plausible)
            else:
                if not gold:
                    raise ValueError(f"question {qa['id']} is answerable but has no answers")
                row.update(answers=gold, answerable=True, kind=guess_kind(gold, row["question"]))
            row.update(source=name, split=split, match="squad")
            questions.append(row)
    return name, article_text(article), questions


def convert(path: Path, articles: list[str] | None, out: Path,
            split: str = "dev") -> dict[str, int]:
    """Write the chosen articles' documents and questions under ``out``; returns counts."""
    data = json.loads(path.read_text(encoding="utf-8"))
    chosen = data.get("data", [])
    if articles:
        wanted = {a.lower().replace(" ", "_") for a in articles}
        chosen = [a for a in chosen if str(a["title"]).lower().replace(" ", "_") in wanted]
        found = {str(a["title"]).lower().replace(" ", "_") for a in chosen}
        missing = sorted(wanted - found)
        if missing:
            titles = ", ".join(str(a["title"]) for a in data.get("data", [])[:20])
            raise SystemExit(f"{path}: no article titled {', '.join(missing)} "
                             f"(it has: {titles})")
    if not chosen:
        raise SystemExit(f"{path}: no articles to convert")
    docs = out / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for article in chosen:
        name, text, questions = convert_article(article, split)
        (docs / name).write_text(text, encoding="utf-8")
        rows.extend(questions)
    (out / "questions.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    counts: dict[str, int] = {"articles": len(chosen), "questions": len(rows)}
    for row in rows:
        counts[row["kind"]] = counts.get(row["kind"], 0) + 1
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_INPUT,
                        help="a SQuAD 2.0 JSON file")
    parser.add_argument("--article", action="append", default=None,
                        help="article title to convert (repeatable; default: all)")
    parser.add_argument("--out", type=Path, default=HERE / "squad2")
    parser.add_argument("--split", default="dev")
    args = parser.parse_args(argv)
    if not args.path.is_file():
        raise SystemExit(f"{args.path}: no such file")
    counts = convert(args.path, args.article, args.out, args.split)
    print(f"wrote {args.out}: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
          file=sys.stderr)


if __name__ == "__main__":
    main()
