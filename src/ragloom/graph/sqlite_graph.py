"""The knowledge graph of a knowledge base, in the same SQLite file as its chunks.

Tables (created on first use, beside the store's own; every row is keyed by the
collection's integer id and goes when the collection is dropped):

* ``graph_entities``: one row per entity, merged across chunks and documents.
* ``graph_names``: every name key (name and aliases, see :func:`name_key`) -> entity.
* ``graph_mentions``: entity x chunk, with the evidence passage.
* ``graph_relations``: source x relation x target per chunk, with evidence and weight.
* ``graph_failures``: chunks an extractor gave up on, and why.
* ``graph_settings``: whether (and with which extractor) the knowledge base extracts.

Consistency comes from the store's transaction and from triggers: a document's graph
rows are written by a hook (:attr:`SqliteVectorStore.write_hooks`) inside the
transaction that writes its chunks; deleting a document row (a re-ingest replaces it,
``delete_documents`` removes it) deletes its mentions, relations and failures in the
same transaction, and so does deleting a single chunk (``store.delete(ids)``,
``delete_where``) for the rows of that chunk; an entity left with no mention goes with
its last one. (A graph written before the chunk trigger existed gets it, like any
missing table or index, with its next graph write.)
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragloom.graph.merge import better_type, name_key, name_prefix, similar
from ragloom.graph.model import (
    ExtractionFailure,
    MergedEntity,
    MergedRelation,
    Neighbour,
    StoredEntity,
    StoredRelation,
)
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.types import Document

GRAPH_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS graph_entities (
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        aliases TEXT NOT NULL,
        PRIMARY KEY (collection_id, id))""",
    """CREATE TABLE IF NOT EXISTS graph_names (
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        prefix TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        PRIMARY KEY (collection_id, key))""",
    "CREATE INDEX IF NOT EXISTS graph_names_prefix ON graph_names (collection_id, prefix)",
    "CREATE INDEX IF NOT EXISTS graph_names_entity ON graph_names (collection_id, entity_id)",
    """CREATE TABLE IF NOT EXISTS graph_mentions (
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        entity_id TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        evidence TEXT NOT NULL,
        weight REAL NOT NULL,
        PRIMARY KEY (collection_id, entity_id, chunk_id))""",
    "CREATE INDEX IF NOT EXISTS graph_mentions_chunk ON graph_mentions (collection_id, chunk_id)",
    "CREATE INDEX IF NOT EXISTS graph_mentions_document "
    "ON graph_mentions (collection_id, document_id)",
    """CREATE TABLE IF NOT EXISTS graph_relations (
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        source_id TEXT NOT NULL,
        relation TEXT NOT NULL,
        target_id TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        evidence TEXT NOT NULL,
        weight REAL NOT NULL,
        PRIMARY KEY (collection_id, source_id, target_id, relation, chunk_id))""",
    "CREATE INDEX IF NOT EXISTS graph_relations_target "
    "ON graph_relations (collection_id, target_id)",
    "CREATE INDEX IF NOT EXISTS graph_relations_document "
    "ON graph_relations (collection_id, document_id)",
    """CREATE TABLE IF NOT EXISTS graph_failures (
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        document_id TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        extractor TEXT NOT NULL,
        reason TEXT NOT NULL,
        attempts INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS graph_failures_document "
    "ON graph_failures (collection_id, document_id)",
    # For the chunk trigger below: one index lookup per deleted chunk, not a scan.
    "CREATE INDEX IF NOT EXISTS graph_relations_chunk ON graph_relations (collection_id, chunk_id)",
    "CREATE INDEX IF NOT EXISTS graph_failures_chunk ON graph_failures (collection_id, chunk_id)",
    """CREATE TABLE IF NOT EXISTS graph_settings (
        collection_id INTEGER PRIMARY KEY REFERENCES collections(id) ON DELETE CASCADE,
        extractor TEXT NOT NULL,
        options TEXT NOT NULL)""",
    """CREATE TRIGGER IF NOT EXISTS graph_document_deleted AFTER DELETE ON documents BEGIN
        DELETE FROM graph_mentions
            WHERE collection_id = old.collection_id AND document_id = old.id;
        DELETE FROM graph_relations
            WHERE collection_id = old.collection_id AND document_id = old.id;
        DELETE FROM graph_failures
            WHERE collection_id = old.collection_id AND document_id = old.id;
    END""",
    """CREATE TRIGGER IF NOT EXISTS graph_chunk_deleted AFTER DELETE ON chunks BEGIN
        DELETE FROM graph_mentions
            WHERE collection_id = old.collection_id AND chunk_id = old.id;
        DELETE FROM graph_relations
            WHERE collection_id = old.collection_id AND chunk_id = old.id;
        DELETE FROM graph_failures
            WHERE collection_id = old.collection_id AND chunk_id = old.id;
    END""",
    """CREATE TRIGGER IF NOT EXISTS graph_last_mention_deleted AFTER DELETE ON graph_mentions
        WHEN NOT EXISTS (SELECT 1 FROM graph_mentions m WHERE m.collection_id =
                         old.collection_id AND m.entity_id = old.entity_id) BEGIN
        DELETE FROM graph_entities WHERE collection_id = old.collection_id AND id = old.entity_id;
        DELETE FROM graph_names
            WHERE collection_id = old.collection_id AND entity_id = old.entity_id;
    END""",
)

_ENTITY_SQL = """
    SELECT e.id, e.name, e.type, e.aliases,
           (SELECT COUNT(*) FROM graph_mentions m
            WHERE m.collection_id = e.collection_id AND m.entity_id = e.id),
           (SELECT COUNT(DISTINCT m.document_id) FROM graph_mentions m
            WHERE m.collection_id = e.collection_id AND m.entity_id = e.id),
           (SELECT SUM(m.weight) FROM graph_mentions m
            WHERE m.collection_id = e.collection_id AND m.entity_id = e.id)
    FROM graph_entities e"""


def _has_tables(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                       "AND name = 'graph_entities'").fetchone()
    return row is not None


def _entity(row: Sequence[Any]) -> StoredEntity:
    entity_id, name, type_, aliases, mentions, documents, weight = row
    return StoredEntity(id=entity_id, name=name, type=type_, aliases=tuple(json.loads(aliases)),
                        mentions=int(mentions), documents=int(documents),
                        weight=float(weight or 0.0))


@dataclass
class StagedGraph:
    """A document's merged graph, waiting for the transaction that writes the document."""

    entities: list[MergedEntity]
    relations: list[MergedRelation]
    failures: list[ExtractionFailure] = field(default_factory=list)
    extractor: str = ""


class SqliteGraph:
    """Read and write one knowledge base's graph through its :class:`SqliteVectorStore`.

    ``SqliteGraph(store)`` costs nothing; :meth:`attach` registers the write hook so
    graphs :meth:`stage`\\ d for a document are written with it.
    """

    def __init__(self, store: SqliteVectorStore) -> None:
        self.store = store
        self._staged: dict[str, StagedGraph] = {}
        self._lock = threading.Lock()
        self._attached = False

    # -------------------------------------------------------------------- writing
    def attach(self) -> SqliteGraph:
        if not self._attached:
            self.store.write_hooks.append(self._write)
            self._attached = True
        return self

    def stage(self, document_id: str, graph: StagedGraph) -> None:
        """Hold ``graph`` until the store writes the document with this id."""
        self.attach()
        with self._lock:
            self._staged[document_id] = graph

    def _write(self, conn: sqlite3.Connection, cid: int, document: Document) -> None:
        with self._lock:
            staged = self._staged.pop(document.id, None)
        if staged is None:
            return
        for statement in GRAPH_SCHEMA:
            conn.execute(statement)
        ids = {entity.name: self._resolve(conn, cid, entity) for entity in staged.entities}
        conn.executemany(
            "INSERT OR REPLACE INTO graph_mentions (collection_id, entity_id, chunk_id, "
            "document_id, evidence, weight) VALUES (?, ?, ?, ?, ?, ?)",
            ((cid, ids[e.name], m.chunk_id, document.id, m.evidence, m.weight)
             for e in staged.entities for m in e.mentions))
        conn.executemany(
            "INSERT INTO graph_relations (collection_id, source_id, relation, target_id, "
            "chunk_id, document_id, evidence, weight) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (collection_id, source_id, target_id, relation, chunk_id) "
            "DO UPDATE SET weight = weight + excluded.weight",
            ((cid, ids[r.source], r.relation, ids[r.target], r.chunk_id, document.id,
              r.evidence, r.weight) for r in staged.relations
             if r.source in ids and r.target in ids and ids[r.source] != ids[r.target]))
        conn.executemany(
            "INSERT INTO graph_failures (collection_id, document_id, chunk_id, extractor, "
            "reason, attempts) VALUES (?, ?, ?, ?, ?, ?)",
            ((cid, document.id, f.chunk_id, staged.extractor, f.reason, f.attempts)
             for f in staged.failures))

    def _resolve(self, conn: sqlite3.Connection, cid: int, entity: MergedEntity) -> str:
        """The id of the stored entity this one is (by name key, alias or fuzzy spelling),
        merging names and type into it; a new entity when none matches."""
        keys = list(dict.fromkeys(name_key(n) for n in (entity.name, *entity.aliases)))
        keys = [k for k in keys if k]
        found = conn.execute(
            "SELECT entity_id FROM graph_names WHERE collection_id = ? AND key IN "
            "(SELECT value FROM json_each(?)) LIMIT 1", (cid, json.dumps(keys))).fetchone()
        if found is None:
            prefixes = sorted({name_prefix(k) for k in keys})
            rows = conn.execute(
                "SELECT key, entity_id FROM graph_names WHERE collection_id = ? AND prefix IN "
                "(SELECT value FROM json_each(?))", (cid, json.dumps(prefixes))).fetchall()
            found = next(((eid,) for key, eid in rows if any(similar(k, key) for k in keys)),
                         None)
        if found is None:
            entity_id = hashlib.sha1(f"{keys[0]}\x1f{entity.type}".encode()).hexdigest()[:16]
            conn.execute("INSERT OR IGNORE INTO graph_entities (collection_id, id, name, type, "
                         "aliases) VALUES (?, ?, ?, ?, ?)",
                         (cid, entity_id, entity.name, entity.type,
                          json.dumps(list(entity.aliases), ensure_ascii=False)))
        else:
            entity_id = str(found[0])
            name, type_, aliases = conn.execute(
                "SELECT name, type, aliases FROM graph_entities WHERE collection_id = ? "
                "AND id = ?", (cid, entity_id)).fetchone()
            names = [a for a in dict.fromkeys([*json.loads(aliases), entity.name,
                                               *entity.aliases]) if a != name]
            conn.execute("UPDATE graph_entities SET type = ?, aliases = ? WHERE "
                         "collection_id = ? AND id = ?",
                         (better_type(type_, entity.type), json.dumps(names, ensure_ascii=False),
                          cid, entity_id))
        conn.executemany(
            "INSERT OR IGNORE INTO graph_names (collection_id, key, prefix, entity_id) "
            "VALUES (?, ?, ?, ?)", ((cid, k, name_prefix(k), entity_id) for k in keys))
        return entity_id

    # ------------------------------------------------------------------- settings
    def settings(self) -> dict[str, Any] | None:
        """The knowledge base's graph setting (``{"extractor": ..., **options}``), or None."""
        with self.store.reading() as (conn, cid):
            if cid is None or not _has_tables(conn):
                return None
            row = conn.execute("SELECT extractor, options FROM graph_settings "
                               "WHERE collection_id = ?", (cid,)).fetchone()
        if row is None:
            return None
        return {"extractor": row[0], **json.loads(row[1])}

    def save_settings(self, extractor: str | None, **options: Any) -> None:
        """Switch graph extraction on (``extractor`` names it) or off (None) for this KB."""
        with self.store.writing() as (conn, cid):
            for statement in GRAPH_SCHEMA:
                conn.execute(statement)
            if extractor is None:
                conn.execute("DELETE FROM graph_settings WHERE collection_id = ?", (cid,))
            else:
                conn.execute("INSERT OR REPLACE INTO graph_settings (collection_id, extractor, "
                             "options) VALUES (?, ?, ?)", (cid, extractor, json.dumps(options)))

    # -------------------------------------------------------------------- reading
    def entities(self, *, limit: int | None = None, document_id: str | None = None
                 ) -> list[StoredEntity]:
        """Entities, most mentioned first (only those of one document if named)."""
        with self.store.reading() as (conn, cid):
            if cid is None or not _has_tables(conn):
                return []
            params: list[Any] = [cid]
            where = "WHERE e.collection_id = ?"
            if document_id is not None:
                where += (" AND e.id IN (SELECT entity_id FROM graph_mentions WHERE "
                          "collection_id = ? AND document_id = ?)")
                params += [cid, document_id]
            rows = conn.execute(f"{_ENTITY_SQL} {where} ORDER BY 7 DESC, 5 DESC, e.name "
                                f"LIMIT ?", [*params, -1 if limit is None else limit]).fetchall()
        return [_entity(row) for row in rows]

    def relations(self, *, limit: int | None = None,
                  entity_ids: Iterable[str] | None = None) -> list[StoredRelation]:
        """Relations summed over chunks (strongest first), optionally touching some entities."""
        with self.store.reading() as (conn, cid):
            if cid is None or not _has_tables(conn):
                return []
            params: list[Any] = [cid]
            where = "r.collection_id = ?"
            if entity_ids is not None:
                chosen = json.dumps(list(entity_ids))
                where += (" AND (r.source_id IN (SELECT value FROM json_each(?)) OR "
                          "r.target_id IN (SELECT value FROM json_each(?)))")
                params += [chosen, chosen]
            rows = conn.execute(
                f"""SELECT r.source_id, s.name, r.relation, r.target_id, t.name, SUM(r.weight),
                           MIN(r.evidence), json_group_array(DISTINCT r.chunk_id)
                    FROM graph_relations r
                    JOIN graph_entities s ON s.collection_id = r.collection_id
                         AND s.id = r.source_id
                    JOIN graph_entities t ON t.collection_id = r.collection_id
                         AND t.id = r.target_id
                    WHERE {where}
                    GROUP BY r.source_id, r.relation, r.target_id
                    ORDER BY 6 DESC, 2, 5 LIMIT ?""",
                [*params, -1 if limit is None else limit]).fetchall()
        return [StoredRelation(source_id=r[0], source=r[1], relation=r[2], target_id=r[3],
                               target=r[4], weight=float(r[5]), evidence=r[6],
                               chunk_ids=tuple(json.loads(r[7]))) for r in rows]

    def failures(self) -> list[dict[str, Any]]:
        with self.store.reading() as (conn, cid):
            if cid is None or not _has_tables(conn):
                return []
            rows = conn.execute(
                "SELECT f.document_id, d.source, f.chunk_id, f.extractor, f.reason, f.attempts "
                "FROM graph_failures f LEFT JOIN documents d ON d.collection_id = "
                "f.collection_id AND d.id = f.document_id WHERE f.collection_id = ? "
                "ORDER BY d.source, f.chunk_id", (cid,)).fetchall()
        return [{"document_id": r[0], "source": r[1], "chunk_id": r[2], "extractor": r[3],
                 "reason": r[4], "attempts": r[5]} for r in rows]

    def find(self, name: str) -> StoredEntity | None:
        """The entity with this name or alias (any case; a near spelling also matches)."""
        key = name_key(name)
        with self.store.reading() as (conn, cid):
            if cid is None or not _has_tables(conn) or not key:
                return None
            row = conn.execute("SELECT entity_id FROM graph_names WHERE collection_id = ? "
                               "AND key = ?", (cid, key)).fetchone()
            if row is None:
                rows = conn.execute("SELECT key, entity_id FROM graph_names WHERE "
                                    "collection_id = ? AND prefix = ?",
                                    (cid, name_prefix(key))).fetchall()
                row = next(((eid,) for k, eid in rows if similar(key, k)), None)
            if row is None:
                return None
            found = conn.execute(f"{_ENTITY_SQL} WHERE e.collection_id = ? AND e.id = ?",
                                 (cid, row[0])).fetchone()
        return _entity(found) if found is not None else None

    def entities_in_text(self, text: str, *, max_words: int = 6) -> list[StoredEntity]:
        """Entities named in ``text`` (word n-grams looked up by name key), longest first;
        a name inside a longer one found at the same place is left out."""
        words = name_key(text).split()
        grams: dict[str, tuple[int, int]] = {}
        for size in range(min(max_words, len(words)), 0, -1):
            for start in range(len(words) - size + 1):
                grams.setdefault(name_key(" ".join(words[start:start + size])),
                                 (start, start + size))
        with self.store.reading() as (conn, cid):
            if cid is None or not _has_tables(conn) or not grams:
                return []
            rows = conn.execute(
                "SELECT key, entity_id FROM graph_names WHERE collection_id = ? AND key IN "
                "(SELECT value FROM json_each(?))", (cid, json.dumps(list(grams)))).fetchall()
            taken: set[int] = set()
            chosen: list[str] = []
            for key, entity_id in sorted(rows, key=lambda r: (-len(r[0].split()), r[0])):
                span = set(range(*grams[key]))
                if span & taken or entity_id in chosen:
                    continue
                taken |= span
                chosen.append(entity_id)
            found = conn.execute(
                f"{_ENTITY_SQL} WHERE e.collection_id = ? AND e.id IN "
                "(SELECT value FROM json_each(?))", (cid, json.dumps(chosen))).fetchall()
        order = {entity_id: i for i, entity_id in enumerate(chosen)}
        return sorted((_entity(r) for r in found), key=lambda e: order[e.id])

    def neighbours(self, entity_id: str, *, hops: int = 1, fan_out: int = 10,
                   include_same_passage: bool = True) -> list[Neighbour]:
        """Entities within ``hops`` relations of one entity, breadth first; from each
        entity only its ``fan_out`` strongest relations are followed. ``strength`` is
        the product along the path of each relation's summed weight ``w`` mapped to
        ``w / (w + 1)`` (one sentence together: 0.5; a ``same_passage`` link: 0.2)."""
        reached: dict[str, Neighbour] = {}
        frontier = [(entity_id, 1.0)]
        seen = {entity_id}
        with self.store.reading() as (conn, cid):
            if cid is None or not _has_tables(conn):
                return []
            for hop in range(1, max(0, hops) + 1):
                next_frontier: list[tuple[str, float]] = []
                for node, strength in frontier:
                    for other, relation, weight in self._adjacent(
                            conn, cid, node, fan_out, include_same_passage):
                        if other in seen:
                            continue
                        seen.add(other)
                        value = strength * weight / (weight + 1.0)
                        row = conn.execute(f"{_ENTITY_SQL} WHERE e.collection_id = ? AND "
                                           "e.id = ?", (cid, other)).fetchone()
                        if row is None:
                            continue
                        reached[other] = Neighbour(entity=_entity(row), hops=hop,
                                                   strength=value, via=node, relation=relation)
                        next_frontier.append((other, value))
                frontier = next_frontier
        return sorted(reached.values(), key=lambda n: (n.hops, -n.strength, n.entity.name))

    @staticmethod
    def _adjacent(conn: sqlite3.Connection, cid: int, node: str, fan_out: int,
                  same_passage: bool) -> list[tuple[str, str, float]]:
        """(other entity, a relation label, summed weight), strongest first."""
        extra = "" if same_passage else " AND relation != 'same_passage'"
        rows = conn.execute(
            f"""SELECT other, relation, SUM(weight) AS w FROM (
                    SELECT target_id AS other, relation, weight FROM graph_relations
                    WHERE collection_id = ? AND source_id = ?{extra}
                    UNION ALL
                    SELECT source_id AS other, relation, weight FROM graph_relations
                    WHERE collection_id = ? AND target_id = ?{extra})
                GROUP BY other ORDER BY w DESC, other LIMIT ?""",
            (cid, node, cid, node, fan_out)).fetchall()
        return [(r[0], r[1], float(r[2])) for r in rows]

    def mentions(self, entity_ids: Sequence[str]) -> list[tuple[str, str, str, str]]:
        """(entity id, chunk id, document id, evidence) for each mention of these entities."""
        with self.store.reading() as (conn, cid):
            if cid is None or not _has_tables(conn) or not entity_ids:
                return []
            rows = conn.execute(
                "SELECT entity_id, chunk_id, document_id, evidence FROM graph_mentions "
                "WHERE collection_id = ? AND entity_id IN (SELECT value FROM json_each(?)) "
                "ORDER BY entity_id, chunk_id", (cid, json.dumps(list(entity_ids)))).fetchall()
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def chunk_count(self) -> int:
        """How many chunks of the knowledge base mention at least one entity."""
        with self.store.reading() as (conn, cid):
            if cid is None or not _has_tables(conn):
                return 0
            row = conn.execute("SELECT COUNT(DISTINCT chunk_id) FROM graph_mentions "
                               "WHERE collection_id = ?", (cid,)).fetchone()
        return int(row[0])
