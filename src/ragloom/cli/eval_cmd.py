"""``ragloom eval PATH``: measure retrieval quality on a BEIR-format data set."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ragloom.cli.common import (
    DbOption,
    JsonOption,
    console,
    out,
    plain,
    print_json,
    reported_errors,
    resolve_location,
)
from ragloom.errors import QueryError
from ragloom.registry import DEFAULT_EMBEDDER
from ragloom.retrieval.options import RANKERS, SEARCH_MODES


def eval_command(
    path: Annotated[Path | None, typer.Argument(
        help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv (not with --answers).",
        show_default=False)] = None,
    mode: Annotated[list[str] | None, typer.Option(
        "--mode", help="Search mode to measure (repeatable) [default: vector, keyword, hybrid].",
        show_default=False)] = None,
    ranker: Annotated[list[str] | None, typer.Option(
        "--ranker", help="Hybrid ranker to measure (repeatable) [default: rrf and weighted].",
        show_default=False)] = None,
    db: DbOption = None,
    kb: Annotated[str, typer.Option(
        "--kb", help="Knowledge base to ingest into / reuse with --db [default: eval-<folder>].",
        show_default=False)] = "",
    embedder: Annotated[str, typer.Option(
        "--embedder", help="Embedding model as provider:model.")] = DEFAULT_EMBEDDER,
    limit_queries: Annotated[int | None, typer.Option(
        "--limit-queries", help="Evaluate only the first N judged queries.", min=1,
        show_default=False)] = None,
    answers: Annotated[Path | None, typer.Option(
        "--answers", help="Evaluate answers instead: a JSON Lines file of questions with "
        "accepted answers and source files (see docs/answers.md).", show_default=False)] = None,
    docs: Annotated[Path | None, typer.Option(
        "--docs", help="With --answers: a folder of documents, ingested into a scratch "
        "knowledge base (else --db/--kb name an existing one).", show_default=False)] = None,
    llm: Annotated[str | None, typer.Option(
        "--llm", help="With --answers: the language model as provider:model "
        "[default: $RAGLOOM_LLM or local:smollm2].", show_default=False)] = None,
    split: Annotated[str, typer.Option(
        "--split", help="With --answers: only the questions of this split (dev, test or "
        "all).")] = "all",
    squad: Annotated[bool, typer.Option(
        "--squad", help="With --answers: match every answer with SQuAD's normalisation "
        "(lower case, no punctuation, no a/an/the).")] = False,
    json_output: JsonOption = False,
) -> None:
    """Ingest a BEIR data set and report nDCG@10, Recall@100 and MRR@10 per search mode.

    Without --db the corpus goes into a scratch database that is deleted afterwards;
    with --db it is kept there, and a second run re-uses it without re-embedding.
    With --answers it measures answers instead: accuracy, citations, unsupported
    claims and refusals.
    """
    if answers is not None:
        from ragloom.cli.eval_answers import run_answer_eval

        with reported_errors():
            run_answer_eval(answers, docs=docs, db=db, kb=kb or None, llm=llm,
                            embedder=embedder, json_output=json_output, split=split,
                            squad=squad)
        return
    with reported_errors():
        if path is None:
            raise QueryError("give a BEIR folder to evaluate retrieval, or --answers FILE "
                             "to evaluate answers")
        report = _run(path, mode, ranker, db, kb, embedder, limit_queries, json_output)
        if json_output:
            print_json(report)
        else:
            _print_table(report)


def _check(values: list[str] | None, allowed: tuple[str, ...], what: str) -> list[str]:
    chosen = list(dict.fromkeys(values or allowed))
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        raise QueryError(f"unknown {what} {', '.join(unknown)}; use one of {', '.join(allowed)}")
    return chosen


def _run(
    path: Path, modes: list[str] | None, rankers: list[str] | None, db: str | None, kb: str,
    embedder_name: str, limit_queries: int | None, quiet: bool,
) -> dict[str, Any]:
    from ragloom.evaluation.beir import load_beir
    from ragloom.evaluation.runner import default_configs, evaluate, ingest_dataset
    from ragloom.registry import make_embedder
    from ragloom.stores.factory import StoreLocation, open_store

    chosen_modes = _check(modes, SEARCH_MODES, "mode")
    chosen_rankers = _check(rankers, RANKERS, "ranker")
    dataset = load_beir(path)
    name = kb or f"eval-{dataset.name}"
    provider = make_embedder(embedder_name)
    with tempfile.TemporaryDirectory(prefix="ragloom-eval-") as scratch:
        location = (resolve_location(db) if db
                    else StoreLocation("sqlite", str(Path(scratch) / "eval.db")))
        db_path = location.display()
        store = open_store(location, name)
        try:
            if not quiet:
                console.print(plain(f"ingesting {len(dataset.corpus):,} documents into "
                                    f"{db_path} ({name}) with {provider.name}..."))
            chunks = ingest_dataset(dataset, store, provider, name=name)
            if not quiet:
                console.print(f"searching {len(dataset.judged_queries(limit_queries))} queries...",
                              markup=False)
            rows = evaluate(dataset, store, provider,
                            default_configs(chosen_modes, chosen_rankers),
                            limit_queries=limit_queries)
        finally:
            store.close()
    return {"dataset": dataset.name, "path": str(path), "embedder": provider.name,
            "knowledge_base": name, "documents": len(dataset.corpus), "chunks": chunks,
            "results": [row.to_dict() for row in rows]}


def _print_table(report: dict[str, Any]) -> None:
    table = Table(title=plain(f"{report['dataset']}: {report['documents']:,} documents, "
                              f"{report['chunks']:,} chunks, {report['embedder']}"))
    for column in ("search", "nDCG@10", "Recall@100", "MRR@10", "queries", "seconds"):
        table.add_column(column, justify="left" if column == "search" else "right")
    for row in report["results"]:
        table.add_row(plain(row["config"]), f"{row['ndcg@10']:.4f}", f"{row['recall@100']:.4f}",
                      f"{row['mrr@10']:.4f}", str(row["queries"]), f"{row['seconds']:.1f}")
    out.print(table)
