"""Multi-hop questions with and without graph-aware retrieval; graph extraction speed.

    .venv/bin/python bench/graph_multihop.py [--no-answers] [--llm-chunks N]

The corpus is bench/graph/docs (31 short documents written for this benchmark): each
question in bench/graph/questions.jsonl needs two documents, the one the question
names ("the designer of the Harbor Bridge") and the one about the entity that
document leads to ("Elena Varga ... born in Tallinn"); distractor documents share
the question's other words ("architect ... born in the city of Hamburg").

Reported, on one knowledge base built with the bundled embedder and the offline
graph extractor:

* retrieval accuracy: share of questions whose needed documents are all in the
  top k (hybrid search, default ranker), without and with ``graph=True``, for k = 2
  (exactly the two documents needed), 3 and 5, plus other graph weights; and the
  share of questions whose expected answer is in those passages;
* answer accuracy: share of answers by the bundled local:smollm2 (top 3 passages,
  at most 48 answer tokens) that contain the expected answer, without and with the
  graph;
* extraction time per 1,000 chunks: the offline extractor on the benchmark chunks
  and on 1,000 SciFact documents' chunks (also names only, without YAKE); the LLM
  extractor with local:smollm2 (one retry, 384 reply tokens) on ``--llm-chunks``
  chunks (default 4), extrapolated (it is far too slow to run on 1,000 chunks here),
  with how many of those chunks failed.

Results go to bench/results/graph_multihop.json. With ``--no-answers`` or
``--llm-chunks 0`` the slow parts are skipped and the last run's figures for them are
kept (marked ``from_previous_run``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ragloom.chunking import RecursiveSplitter
from ragloom.graph import GraphIndexer, LlmExtractor, OfflineExtractor, SqliteGraph
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.loaders import load_text
from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL, make_embedder, make_model
from ragloom.retrieval.options import SearchOptions
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.types import TextChunk, TextDocument

HERE = Path(__file__).resolve().parent
DOCS = HERE / "graph" / "docs"
QUESTIONS = HERE / "graph" / "questions.jsonl"
SCIFACT = HERE.parent.parent / "shared" / "data" / "beir" / "scifact" / "corpus.jsonl"
RESULTS = HERE / "results" / "graph_multihop.json"


def load_questions() -> list[dict[str, Any]]:
    return [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]


def build_kb(folder: Path) -> tuple[VectorKnowledgeBase, float]:
    store = SqliteVectorStore(folder / "kb.db", collection="multihop")
    kb = VectorKnowledgeBase(store, make_embedder(DEFAULT_EMBEDDER), name="multihop",
                             graph=GraphIndexer(OfflineExtractor(), SqliteGraph(store)))
    started = time.perf_counter()
    documents = [load_text(path.read_text(), source=str(path), mime_type="text/markdown")
                 for path in sorted(DOCS.glob("*.md"))]
    report = kb.ingest(documents)
    assert not report.skipped, report.skipped
    return kb, time.perf_counter() - started


def file_name(chunk: TextChunk) -> str:
    return Path(chunk.source or str(chunk.metadata.get("source", ""))).name


def retrieval(kb: VectorKnowledgeBase, questions: list[dict[str, Any]], top_k: int,
              graph: bool, weight: float = SearchOptions().graph_weight) -> dict[str, Any]:
    hits = 0
    found_docs = 0
    in_context = 0
    misses = []
    for item in questions:
        options = SearchOptions(top_k=top_k, graph=graph, graph_weight=weight)
        matches = kb.search(item["question"], options).matches
        sources = {file_name(m.chunk) for m in matches}
        context = " ".join(m.chunk.text for m in matches).lower().replace(",", "")
        in_context += item["answer"].lower().replace(",", "") in context
        needed = set(item["documents"])
        found_docs += len(needed & sources)
        if needed <= sources:
            hits += 1
        else:
            misses.append(item["id"])
    total_docs = sum(len(q["documents"]) for q in questions)
    return {"top_k": top_k, "graph": graph, "graph_weight": weight if graph else None,
            "accuracy": hits / len(questions), "doc_recall": found_docs / total_docs,
            "answer_in_context": in_context / len(questions), "missed": misses}


def answers(kb: VectorKnowledgeBase, questions: list[dict[str, Any]], graph: bool,
            model: Any) -> dict[str, Any]:
    from ragloom.rag import NaiveRag

    # Answers are a few words; a cap keeps the small model from rambling for minutes.
    rag = NaiveRag(kb, model, search=SearchOptions(top_k=3, graph=graph),
                   max_answer_tokens=48)
    right = 0
    rows = []
    started = time.perf_counter()
    for item in questions:
        answer = rag.query(item["question"]).answer
        ok = item["answer"].lower().replace(",", "") in answer.lower().replace(",", "")
        right += ok
        rows.append({"id": item["id"], "answer": answer, "correct": ok})
        print(f"  {item['id']} graph={graph} {'right' if ok else 'wrong'}: {answer[:70]!r}",
              file=sys.stderr, flush=True)
    return {"graph": graph, "accuracy": right / len(questions),
            "seconds": time.perf_counter() - started, "answers": rows}


def scifact_chunks(limit: int) -> list[tuple[TextDocument, list[TextChunk]]]:
    splitter = RecursiveSplitter()
    out = []
    with SCIFACT.open() as handle:
        for line in handle:
            row = json.loads(line)
            doc = load_text(f"{row.get('title', '')}\n\n{row['text']}",
                            source=f"scifact:{row['_id']}")
            out.append((doc, splitter.split(doc)))
            if len(out) >= limit:
                break
    return out


def time_extractor(extractor: Any, docs: list[tuple[TextDocument, list[TextChunk]]]
                   ) -> dict[str, Any]:
    started = time.perf_counter()
    chunks = failures = entities = relations = 0
    for document, doc_chunks in docs:
        graph = extractor.extract(document, doc_chunks)
        chunks += len(doc_chunks)
        failures += len(graph.failures)
        entities += sum(len(c.entities) for c in graph.chunks)
        relations += sum(len(c.relations) for c in graph.chunks)
    seconds = time.perf_counter() - started
    return {"extractor": extractor.name, "chunks": chunks, "seconds": round(seconds, 2),
            "seconds_per_1000_chunks": round(seconds / max(chunks, 1) * 1000, 1),
            "failed_chunks": failures, "entities": entities, "relations": relations}


def bench_docs() -> list[tuple[TextDocument, list[TextChunk]]]:
    splitter = RecursiveSplitter()
    docs = []
    for path in sorted(DOCS.glob("*.md")):
        doc = load_text(path.read_text(), source=str(path), mime_type="text/markdown")
        docs.append((doc, splitter.split(doc)))
    return docs


def samples_report() -> dict[str, Any]:
    """The offline graph of samples/: top ten entities per document, and a check that
    every entity has a mention with evidence."""
    from ragloom.testing import HashingEmbedder

    with tempfile.TemporaryDirectory() as folder:
        store = SqliteVectorStore(Path(folder) / "kb.db", collection="samples")
        graph = SqliteGraph(store)
        kb = VectorKnowledgeBase(store, HashingEmbedder(), name="samples",
                                 graph=GraphIndexer(OfflineExtractor(), graph))
        kb.ingest([load_text(path.read_text(), source=str(path),
                             mime_type="text/markdown" if path.suffix == ".md" else "text/plain")
                   for path in sorted((HERE.parent / "samples").iterdir())])
        top = {Path(d.source).name: [e.name for e in graph.entities(document_id=d.id, limit=10)]
               for d in store.list_documents()}
        entities = graph.entities()
        with_evidence = {entity_id for entity_id, _, _, evidence in
                         graph.mentions([e.id for e in entities]) if evidence.strip()}
        store.close()
    return {"top_entities": top, "entities": len(entities),
            "entities_without_evidence": len({e.id for e in entities} - with_evidence)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-answers", action="store_true", help="skip the model answers")
    parser.add_argument("--llm-chunks", type=int, default=4,
                        help="chunks the LLM extractor is timed on (0: skip)")
    args = parser.parse_args()
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    questions = load_questions()
    result: dict[str, Any] = {"questions": len(questions),
                              "documents": len(list(DOCS.glob("*.md")))}
    with tempfile.TemporaryDirectory() as folder:
        kb, ingest_seconds = build_kb(Path(folder))
        result["ingest_seconds_with_offline_graph"] = round(ingest_seconds, 2)
        graph = SqliteGraph(kb.store)  # type: ignore[arg-type]
        result["graph"] = {"entities": len(graph.entities()),
                           "relations": len(graph.relations())}
        runs = [retrieval(kb, questions, k, g) for k in (2, 3, 5) for g in (False, True)]
        runs += [retrieval(kb, questions, k, True, w) for k in (2, 3) for w in (0.25, 1.0)]
        result["retrieval"] = runs
        if not args.no_answers:
            model = make_model(DEFAULT_MODEL)
            result["answers"] = [answers(kb, questions, g, model) for g in (False, True)]
        elif "answers" in previous:  # the slow part, kept from the last run that made it
            result["answers"] = [{**run, "from_previous_run": True}
                                 for run in previous["answers"]]
    result["samples"] = samples_report()
    offline = OfflineExtractor()
    result["extraction"] = [time_extractor(offline, bench_docs())]
    if SCIFACT.exists():
        scifact = scifact_chunks(1000)
        result["extraction"].append({**time_extractor(offline, scifact),
                                     "corpus": "scifact (1,000 documents)"})
        # YAKE is most of the offline extractor's time: names alone, for comparison.
        result["extraction"].append({**time_extractor(OfflineExtractor(key_phrases=0),
                                                      scifact),
                                     "corpus": "scifact (1,000 documents)"})
    if args.llm_chunks > 0:
        llm = LlmExtractor(make_model(DEFAULT_MODEL), retries=1,  # type: ignore[arg-type]
                           max_tokens=384)
        sample = bench_docs()[: args.llm_chunks]
        result["extraction"].append({**time_extractor(llm, sample),
                                     "note": f"measured on {args.llm_chunks} chunks and "
                                             "extrapolated to 1,000"})
    else:
        result["extraction"] += [{**run, "from_previous_run": True}
                                 for run in previous.get("extraction", [])
                                 if run["extractor"].startswith("llm")]
    print_tables(result)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwritten to {RESULTS.relative_to(HERE.parent)}")
    return 0


def print_tables(result: dict[str, Any]) -> None:
    print(f"{result['questions']} two-hop questions over {result['documents']} documents; "
          f"offline graph: {result['graph']['entities']} entities, "
          f"{result['graph']['relations']} relations")
    print("\n| top k | graph | weight | retrieval accuracy (all needed docs) | doc recall "
          "| answer in the passages |")
    print("|---|---|---|---|---|---|")
    for run in result["retrieval"]:
        weight = "" if run["graph_weight"] is None else f"{run['graph_weight']:g}"
        print(f"| {run['top_k']} | {'yes' if run['graph'] else 'no'} | {weight} | "
              f"{run['accuracy']:.2f} | {run['doc_recall']:.2f} | "
              f"{run['answer_in_context']:.2f} |")
    if "answers" in result:
        print("\n| graph | answer accuracy (local:smollm2, top 3) | seconds |")
        print("|---|---|---|")
        for run in result["answers"]:
            print(f"| {'yes' if run['graph'] else 'no'} | {run['accuracy']:.2f} | "
                  f"{run['seconds']:.0f} |")
    samples = result["samples"]
    print(f"\nsamples/: {samples['entities']} entities, "
          f"{samples['entities_without_evidence']} without evidence; top ten per document:")
    for name, entities in samples["top_entities"].items():
        print(f"- {name}: {', '.join(entities)}")
    print("\n| extractor | chunks | seconds | s per 1,000 chunks | failed chunks |")
    print("|---|---|---|---|---|")
    for run in result["extraction"]:
        print(f"| {run['extractor']} {run.get('corpus', '')} | {run['chunks']} | "
              f"{run['seconds']} | {run['seconds_per_1000_chunks']} | "
              f"{run['failed_chunks']} |")


if __name__ == "__main__":
    sys.exit(main())
