from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeservers import FakeServer, Fault, Recorded, Reply, Response
from ragloom.advanced import Query, RetrievalAugmentor
from ragloom.advanced.sql import SqlDatabaseContentRetriever, check_statement
from ragloom.advanced.web import WebSearchContentRetriever
from ragloom.errors import BadResponseError, ProviderConnectionError, QueryError
from ragloom.testing import ScriptedModel


def searxng(request: Recorded, reply: Reply) -> Response:
    if request.path != "/search" or request.query.get("format") != ["json"]:
        return Response(404, {"error": "use /search?format=json"})
    q = request.query["q"][0]
    if q == "broken":
        return Response(body={"no": "results"})
    return Response(body={"query": q, "results": [
        {"url": "https://example.org/a", "title": "Frame warranty", "engine": "fake",
         "content": f"Result for {q}: frames have a lifetime warranty.", "score": 4.0},
        {"url": "https://example.org/b", "title": "Delivery", "content": "Free delivery.",
         "score": 1.0},
        {"url": "https://example.org/c", "title": "", "content": ""},
    ]})


@pytest.mark.integration
def test_web_search_against_a_local_searxng_compatible_server() -> None:
    with FakeServer(searxng) as server:
        web = WebSearchContentRetriever(server.url, max_results=5,
                                        params={"language": "en"})
        matches = web.retrieve(Query(text="frame warranty"))
        assert [m.chunk.source for m in matches] == ["https://example.org/a",
                                                     "https://example.org/b"]
        assert matches[0].score == 1.0 and matches[1].score == 0.25
        assert matches[0].knowledge_base == "web"
        assert "lifetime warranty" in matches[0].chunk.text
        assert matches[0].chunk.metadata["title"] == "Frame warranty"
        assert server.requests[0].query["language"] == ["en"]
        result = RetrievalAugmentor([web]).augment("frame warranty")
        assert "Frame warranty" in result.message.content
        with pytest.raises(BadResponseError, match="SearXNG JSON"):
            web.retrieve(Query(text="broken"))
        server.faults.append(Fault(status=503))
        with pytest.raises(Exception, match="HTTP 503"):
            web.retrieve(Query(text="x"))


def test_web_search_unreachable() -> None:
    with pytest.raises(ProviderConnectionError):
        WebSearchContentRetriever("http://127.0.0.1:9", timeout=2).retrieve(Query(text="x"))


@pytest.fixture
def shop_db(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE bikes (id INTEGER PRIMARY KEY, name TEXT, price REAL, stock INTEGER);
        INSERT INTO bikes (name, price, stock) VALUES ('Roadster', 899, 3), ('Trail', 1299, 0),
            ('City', 499, 12);
        CREATE TABLE secrets (value TEXT);
        INSERT INTO secrets VALUES ('hidden');
    """)
    conn.commit()
    conn.close()
    return path


def _sql_retriever(db: Path, reply: str, **options: Any) -> SqlDatabaseContentRetriever:
    return SqlDatabaseContentRetriever(db, ScriptedModel([reply]), **options)


def test_sql_the_model_writes_the_query(shop_db: Path) -> None:
    sql = _sql_retriever(shop_db, "```sql\nSELECT name, price FROM bikes WHERE stock > 0 "
                                  "ORDER BY price;\n```")
    matches = sql.retrieve(Query(text="Which bikes are in stock?"))
    assert len(matches) == 1
    text = matches[0].chunk.text
    assert "name | price" in text and "City | 499.0" in text and "Trail" not in text
    assert matches[0].knowledge_base == "sql"
    prompt = sql.model.calls[0][-1].content  # type: ignore[attr-defined]
    assert "CREATE TABLE bikes" in prompt and "Which bikes are in stock?" in prompt


@pytest.mark.parametrize("statement", [
    "DELETE FROM bikes",
    "UPDATE bikes SET price = 0",
    "SELECT 1; DROP TABLE bikes",
    "PRAGMA table_info(bikes)",
    "ATTACH DATABASE 'x.db' AS x",
])
def test_sql_refuses_anything_but_one_read(shop_db: Path, statement: str) -> None:
    sql = _sql_retriever(shop_db, statement)
    assert sql.retrieve(Query(text="q")) == []
    assert sql.notice
    conn = sqlite3.connect(shop_db)
    assert conn.execute("SELECT COUNT(*), MIN(price) FROM bikes").fetchone() == (3, 499.0)
    conn.close()


def test_sql_writes_are_refused_even_past_the_allow_list(shop_db: Path) -> None:
    sql = _sql_retriever(shop_db, "x", allowed_statements=("SELECT", "WITH", "DELETE"))
    with pytest.raises(QueryError):
        sql.run("DELETE FROM bikes")  # read-only connection and authorizer both refuse
    with pytest.raises(QueryError):
        sql.run("WITH x AS (SELECT 1) DELETE FROM bikes")


def test_sql_row_limit_tables_and_time_limit(shop_db: Path) -> None:
    sql = _sql_retriever(shop_db, "SELECT name FROM bikes", max_rows=2)
    columns, rows, cut = sql.run("SELECT name FROM bikes ORDER BY id")
    assert columns == ["name"] and len(rows) == 2 and cut
    assert "first 2 rows" in sql.retrieve(Query(text="q"))[0].chunk.text
    limited = _sql_retriever(shop_db, "SELECT value FROM secrets", tables=["bikes"])
    assert "secrets" not in limited.schema()
    assert limited.retrieve(Query(text="q")) == [] and "refused" in limited.notice
    slow = _sql_retriever(shop_db, "x", timeout=0.2)
    with pytest.raises(QueryError, match="longer than"):
        slow.run("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                 "SELECT COUNT(*) FROM n")


def test_check_statement() -> None:
    assert check_statement("select 'a;b' from t;") == "select 'a;b' from t"
    with pytest.raises(QueryError):
        check_statement("")
