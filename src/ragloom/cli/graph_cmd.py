"""``ragloom graph``: a knowledge base's entities and relations, and an entity's neighbours;
plus the graph step ``ragloom ingest --graph`` adds to ingestion."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from ragloom.cli.common import (
    DbOption,
    JsonOption,
    KbOption,
    open_model,
    open_store,
    out,
    print_json,
    reported_errors,
    resolve_db,
    resolve_kb,
)
from ragloom.errors import ConfigurationError, NotFoundError

graph_app = typer.Typer(
    help="The knowledge graph of a knowledge base (ingest with --graph to build it).",
    no_args_is_help=True)


def graph_step(knowledge_base: Any, enable: bool | None, extractor: str | None,
               llm: str | None) -> Any:
    """The ingestion graph step for ``ragloom ingest`` flags (None: extraction is off).

    ``--graph-extractor`` or ``--graph-llm`` alone also switch extraction on; the
    choice is saved with the knowledge base, so later runs without flags keep it.
    """
    from ragloom.graph import graph_indexer_for, make_extractor

    def build(name: str, options: dict[str, Any]) -> Any:
        model = open_model(options.get("llm"), None) if name == "llm" else None
        return make_extractor(name, model=model)

    if enable is None and (extractor is not None or llm is not None):
        enable = True
    from ragloom.stores.sqlite import SqliteVectorStore

    if not isinstance(knowledge_base.store, SqliteVectorStore):
        # The graph lives in the SQLite file; other stores have none (yet).
        if enable:
            raise ConfigurationError("the knowledge graph needs the embedded SQLite store; "
                                     "ingest without --graph on this database")
        return None
    return graph_indexer_for(knowledge_base.store, enable=enable, extractor=extractor,
                             build=build, llm=llm)


def graph_summary(step: Any) -> dict[str, Any]:
    """The graph part of an ingest report (empty when extraction is off)."""
    return {} if step is None else {"graph": step.stats.to_dict()}


def print_graph_summary(step: Any) -> None:
    if step is None:
        return
    stats = step.stats
    out.print(f"graph ({step.extractor.name}): {stats.entities} entities, {stats.relations} "
              f"relations from {stats.chunks} chunks of {stats.documents} documents in "
              f"{stats.seconds:.1f} s; {len(stats.failures)} chunks failed", markup=False)
    for document_id, failure in stats.failures[:10]:
        out.print(Text(f"  failed {document_id[:12]} chunk {failure.chunk_id[:12]}: "
                       f"{failure.reason}"))


def _graph(db: str | None, kb: str | None) -> Any:
    from ragloom.graph import SqliteGraph

    name = resolve_kb(kb)
    return name, SqliteGraph(open_store(resolve_db(db), name, create=False))


@graph_app.command("show")
def show_command(
    kb_name: Annotated[str | None, typer.Argument(
        metavar="[KB]", help="Knowledge base name (or --kb).", show_default=False)] = None,
    db: DbOption = None,
    kb: KbOption = None,
    limit: Annotated[int, typer.Option(
        "--limit", min=0, help="Most entities and relations listed (0: all; the table "
        "shows 20 when 0).")] = 0,
    json_output: JsonOption = False,
) -> None:
    """List a knowledge base's entities (most mentioned first) and relations."""
    with reported_errors():
        name, graph = _graph(db, kb_name or kb)
        cap = limit or (None if json_output else 20)
        entities = graph.entities(limit=cap)
        relations = graph.relations(limit=cap)
        if json_output:
            print_json({"knowledge_base": name, "settings": graph.settings(),
                        "entities": [e.to_dict() for e in entities],
                        "relations": [r.to_dict() for r in relations],
                        "failures": graph.failures()})
            return
        if not entities:
            out.print(f"knowledge base {name!r} has no graph; build it with: "
                      f"ragloom ingest PATH --kb {name} --graph", markup=False)
            return
        table = Table("entity", "type", "mentions", "documents", "aliases", box=None,
                      header_style="bold")
        for entity in entities:
            table.add_row(Text(entity.name), Text(entity.type), str(entity.mentions),
                          str(entity.documents), Text(", ".join(entity.aliases)))
        out.print(table)
        relation_table = Table("source", "relation", "target", "weight", box=None,
                               header_style="bold")
        for relation in relations:
            relation_table.add_row(Text(relation.source), Text(relation.relation),
                                   Text(relation.target), f"{relation.weight:.2f}")
        out.print()
        out.print(relation_table)


@graph_app.command("neighbours")
def neighbours_command(
    entity: Annotated[str, typer.Argument(help="Entity name or alias (any case).")],
    db: DbOption = None,
    kb: KbOption = None,
    hops: Annotated[int, typer.Option("--hops", min=1, max=4,
                                      help="How many relations away to go.")] = 1,
    fan_out: Annotated[int, typer.Option(
        "--fan-out", min=1, help="Strongest relations followed from each entity.")] = 10,
    json_output: JsonOption = False,
) -> None:
    """An entity, the chunks that mention it, and its neighbours in the graph."""
    with reported_errors():
        name, graph = _graph(db, kb)
        found = graph.find(entity)
        if found is None:
            raise NotFoundError(
                f"no entity named {entity!r} in the graph of knowledge base {name!r}; "
                f"list them with: ragloom graph show {name}")
        near = graph.neighbours(found.id, hops=hops, fan_out=fan_out)
        mentions = graph.mentions([found.id])
        if json_output:
            print_json({"knowledge_base": name, "entity": found.to_dict(),
                        "mentions": [{"chunk_id": c, "document_id": d, "evidence": e}
                                     for _, c, d, e in mentions],
                        "neighbours": [n.to_dict() for n in near]})
            return
        aliases = f" (also {', '.join(found.aliases)})" if found.aliases else ""
        out.print(Text(f"{found.name} [{found.type}]{aliases}: {found.mentions} mentions"))
        for _, _, _, evidence in mentions[:5]:
            out.print(Text(f'  "{evidence}"', style="dim"))
        table = Table("hops", "entity", "type", "via", "strength", box=None, header_style="bold")
        for neighbour in near:
            table.add_row(str(neighbour.hops), Text(neighbour.entity.name),
                          Text(neighbour.entity.type), Text(neighbour.relation),
                          f"{neighbour.strength:.2f}")
        out.print(table)
