"""Server settings: resolved once at the edge (``ragloom serve`` flags), then frozen."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragloom.errors import ConfigurationError
from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL

LogFormat = Literal["text", "json"]
SERVER_DB_NAME = "server.db"
FILES_DIR_NAME = "server-files"


@dataclass(frozen=True, kw_only=True)
class ServerSettings:
    """How a server runs.

    ``db`` is the knowledge bases' SQLite file; the server's own tables (tenants, keys,
    jobs, sessions) live in ``server.db`` beside it, uploaded bytes waiting for
    ingestion in ``server-files/``. ``rate_limit`` is requests per minute per key
    (0: no limit, counted per process); ``max_upload_bytes`` bounds one request body.

    ``database_url`` (``postgresql://...``) puts everything in PostgreSQL instead: the
    server's tables, the OpenAI-compatible tables and uploaded bytes in the schema
    ``ragloom_server``, knowledge base and vector store content in
    :class:`~ragloom.stores.pgvector.PgVectorStore` collections, so several server
    processes (replicas) on one database serve the same tenants. ``job_lease_seconds``
    is how long a replica's claim on a job holds without its heartbeat: after that,
    another replica runs the job.

    The edge policy (:mod:`ragloom.server.edge`): ``max_json_bytes`` bounds a body
    that is not an upload; ``allowed_hosts`` are ``Host`` names served without API
    keys besides the loopback ones. ``allowed_embedders`` and ``allowed_llms`` are
    the models a tenant may name besides the server's own ``embedder`` and ``llm``;
    ``tenant_models`` adds names for one tenant (tenant name -> model names).
    ``cache_entries`` bounds the query embedding and search result caches (entries per
    tenant, each; 0 turns them off) and ``cache_bytes`` their estimated size (all
    tenants, each); see :mod:`ragloom.server.caches`.
    ``config`` is the resolved ``ragloom.toml`` / environment settings (provider
    base URLs, retries), read once at start-up; None resolves them when the app is
    built.
    """

    host: str = "127.0.0.1"
    port: int = 8321
    db: Path = Path(".ragloom/ragloom.db")
    embedder: str = DEFAULT_EMBEDDER
    llm: str = DEFAULT_MODEL
    fallback_llm: str | None = None
    log_format: LogFormat = "text"
    log_level: str = "info"
    max_upload_bytes: int = 100 * 1024 * 1024
    rate_limit: int = 3000
    insecure_no_auth: bool = False
    search_threads: int = 8
    model_threads: int = 2
    ingest_batch_files: int = 64
    warm_models: bool = True
    database_url: str | None = None
    job_lease_seconds: float = 30.0
    #: A delete answers once its job (cleanup: see ragloom.server.jobs.deletes) ended,
    #: or after this many seconds (the record is gone; the job ends in the background).
    delete_wait: float = 5.0
    #: Knowledge bases and vector stores kept open at once (their in-memory indexes,
    #: pools); the least recently used are closed above it and reopen on use.
    max_open_collections: int = 64
    #: URL jobs: fetched by ``fetch_threads`` threads beside the ingestion worker, each
    #: within ``url_timeout`` seconds (a hard deadline for the whole fetch);
    #: ``url_allow_private`` lets them reach loopback and private addresses.
    fetch_threads: int = 2
    url_timeout: float = 30.0
    url_allow_private: bool = False
    #: OpenTelemetry traces (see ragloom.tracing): on, exported with ``otel_exporter``
    #: (auto: OTLP when installed); ``otel_record_results`` adds document ids and scores
    #: to retrieval spans. Off, the ``OTEL_*`` environment may still turn them on.
    otel: bool = False
    otel_exporter: str = "auto"
    otel_record_results: bool = False
    max_json_bytes: int = 16 * 1024 * 1024
    allowed_hosts: tuple[str, ...] = ()
    allowed_embedders: tuple[str, ...] = ()
    allowed_llms: tuple[str, ...] = ()
    tenant_models: dict[str, tuple[str, ...]] = field(default_factory=dict)
    cache_entries: int = 1000
    cache_bytes: int = 64 * 1024 * 1024
    config: Any = None
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.log_format not in ("text", "json"):
            raise ConfigurationError("log_format is text or json")
        if self.max_upload_bytes < 1 or self.max_json_bytes < 1:
            raise ConfigurationError("max_upload_bytes and max_json_bytes must be positive")
        if self.rate_limit < 0:
            raise ConfigurationError("rate_limit is requests per minute, 0 for no limit")
        if self.search_threads < 1 or self.model_threads < 1:
            raise ConfigurationError("search_threads and model_threads must be at least 1")
        if self.cache_entries < 0 or self.cache_bytes < 1:
            raise ConfigurationError("cache_entries is 0 (caches off) or more, cache_bytes "
                                     "positive")
        if self.max_open_collections < 1:
            raise ConfigurationError("max_open_collections must be at least 1")
        if self.job_lease_seconds <= 0:
            raise ConfigurationError("job_lease_seconds must be positive")
        if self.delete_wait < 0:
            raise ConfigurationError("delete_wait is seconds, 0 or more")
        if self.fetch_threads < 1 or self.url_timeout <= 0:
            raise ConfigurationError("fetch_threads must be at least 1 and url_timeout "
                                     "positive")
        if self.database_url is not None:
            from ragloom.server.sql_postgres import is_postgres_url

            if not is_postgres_url(self.database_url):
                raise ConfigurationError(
                    "the server keeps its state in SQLite (--db FOLDER) or PostgreSQL "
                    "(--db postgresql://USER@HOST/DBNAME); other database URLs are not "
                    "supported for ragloom serve")

    @property
    def server_db(self) -> Path:
        return self.db.parent / SERVER_DB_NAME

    @property
    def server_database(self) -> str:
        """Where the server's own tables are: the PostgreSQL URL, else ``server.db``."""
        return self.database_url or str(self.server_db)

    @property
    def replicated(self) -> bool:
        """Whether all state is in a database that several server processes share."""
        return self.database_url is not None

    @property
    def files_dir(self) -> Path:
        return self.db.parent / FILES_DIR_NAME


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost``, 127.0.0.0/8, ::1)."""
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
