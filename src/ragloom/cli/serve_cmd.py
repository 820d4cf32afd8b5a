"""``ragloom serve``: the HTTP server (native API, OpenAI-compatible API, docs, metrics)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer

from ragloom.cli.common import (
    DbOption,
    fail,
    reported_errors,
    resolve_db,
    resolve_location,
    settings_for,
    side_path,
)
from ragloom.errors import ConfigurationError, MissingDependencyError


def _require_server_extra() -> None:
    for module in ("fastapi", "uvicorn", "multipart", "prometheus_client"):
        try:
            __import__(module)
        except ImportError as exc:
            raise MissingDependencyError(module, "server", "ragloom serve") from exc


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigurationError(f"[server] {where} must be a list of names")
    return tuple(value)


def edge_policy(table: Mapping[str, Any], embedders: Sequence[str], llms: Sequence[str],
                hosts: Sequence[str]) -> dict[str, Any]:
    """ServerSettings' allow-lists from ``[server]`` in ragloom.toml and the flags."""
    tenants: dict[str, tuple[str, ...]] = {}
    for name, entry in dict(table.get("tenants", {})).items():
        if not isinstance(entry, Mapping) or set(entry) - {"allowed_embedders",
                                                            "allowed_llms"}:
            raise ConfigurationError(f"[server.tenants.{name}] takes allowed_embedders and "
                                     "allowed_llms")
        tenants[str(name)] = (
            *_names(entry.get("allowed_embedders", []), f"tenants.{name}.allowed_embedders"),
            *_names(entry.get("allowed_llms", []), f"tenants.{name}.allowed_llms"))
    return {
        "allowed_embedders": (*_names(table.get("allowed_embedders", []), "allowed_embedders"),
                              *embedders),
        "allowed_llms": (*_names(table.get("allowed_llms", []), "allowed_llms"), *llms),
        "allowed_hosts": (*_names(table.get("allowed_hosts", []), "allowed_hosts"), *hosts),
        "tenant_models": tenants,
    }


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8321,
    db: DbOption = None,
    embedder: Annotated[str | None, typer.Option(
        "--embedder", help="Default embedding model for new knowledge bases "
        "[default: $RAGLOOM_EMBEDDER or the bundled MiniLM]", show_default=False)] = None,
    llm: Annotated[str | None, typer.Option(
        "--llm", help="Language model as provider:model, or none [default: $RAGLOOM_LLM or "
        "local:smollm2]", show_default=False)] = None,
    fallback_llm: Annotated[str | None, typer.Option(
        "--fallback-llm", help="Model to ask when the first one fails.",
        show_default=False)] = None,
    log_format: Annotated[str, typer.Option(
        "--log-format", help="text or json (one object per line).")] = "text",
    log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning.")
                         ] = "info",
    max_upload_mb: Annotated[float, typer.Option(
        "--max-upload-mb", min=0.001, help="Largest request body, in MB (413 above).")] = 100.0,
    rate_limit: Annotated[int, typer.Option(
        "--rate-limit", min=0, help="Requests per minute per API key (0: no limit).")] = 3000,
    insecure_no_auth: Annotated[bool, typer.Option(
        "--insecure-no-auth", help="Serve without API keys on a non-loopback address.")
    ] = False,
    search_threads: Annotated[int, typer.Option(
        "--search-threads", min=1, help="Threads for searches and other CPU work.")] = 8,
    model_threads: Annotated[int, typer.Option(
        "--model-threads", min=1, help="Threads for language model calls.")] = 2,
    otel: Annotated[bool | None, typer.Option(
        "--otel/--no-otel", help="OpenTelemetry traces (extra otel): OTLP when "
        "opentelemetry-exporter-otlp is installed [default: [server] otel, or on when "
        "OTEL_* variables ask]", show_default=False)] = None,
    otel_exporter: Annotated[str | None, typer.Option(
        "--otel-exporter", help="auto, otlp, console or none [default: [server] "
        "otel_exporter or auto]", show_default=False)] = None,
    allow_embedder: Annotated[list[str], typer.Option(
        "--allow-embedder", help="An embedder tenants may name for new knowledge bases, "
        "besides the server's own (repeatable; also [server] allowed_embedders).")
    ] = [],  # noqa: B006
    allow_llm: Annotated[list[str], typer.Option(
        "--allow-llm", help="A language model tenants may name, besides the server's own "
        "(repeatable; also [server] allowed_llms).")] = [],  # noqa: B006
    allowed_host: Annotated[list[str], typer.Option(
        "--allowed-host", help="A Host name served without API keys besides localhost, "
        "127.0.0.1 and [::1] (repeatable).")] = [],  # noqa: B006
    max_json_mb: Annotated[float, typer.Option(
        "--max-json-mb", min=0.001, help="Largest request body that is not an upload, "
        "in MB (413 above).")] = 16.0,
    job_lease: Annotated[float, typer.Option(
        "--job-lease", min=0.5, help="With --db postgresql://...: seconds a replica's claim "
        "on an ingestion job holds without its heartbeat (then another replica takes it).")
    ] = 30.0,
    cache_entries: Annotated[int | None, typer.Option(
        "--cache-entries", min=0, help="Query embeddings and search results each tenant "
        "keeps cached, per cache (0: no caching) [default: [server] cache_entries or "
        "1000]", show_default=False)] = None,
    cache_mb: Annotated[float | None, typer.Option(
        "--cache-mb", min=0.001, help="Largest size of each cache, all tenants together, "
        "in MB [default: [server] cache_mb or 64]", show_default=False)] = None,
    max_open_collections: Annotated[int, typer.Option(
        "--max-open-collections", min=1, help="Knowledge bases and vector stores kept open "
        "at once (in-memory indexes, connection pools); the least recently used are closed "
        "above it and reopen on use.")] = 64,
    url_timeout: Annotated[float, typer.Option(
        "--url-timeout", min=0.1, help="Seconds one URL fetch may take in all (a hard "
        "deadline; the job fails with fetch_failed after it).")] = 30.0,
    fetch_threads: Annotated[int, typer.Option(
        "--fetch-threads", min=1, help="Threads fetching URL jobs, beside the ingestion "
        "worker.")] = 2,
    allow_private_urls: Annotated[bool, typer.Option(
        "--allow-private-urls", help="Let URL jobs fetch from loopback and private "
        "addresses (refused by default).")] = False,
    delete_wait: Annotated[float, typer.Option(
        "--delete-wait", min=0, help="Seconds a delete waits for its job (dropping the "
        "chunks, sidecar files and uploads) before it answers; the record is gone at once "
        "and the job finishes in the background.")] = 5.0,
) -> None:
    """Serve the knowledge bases over HTTP: /api (native), /v1 (OpenAI-compatible), /docs."""
    from pathlib import Path

    with reported_errors():
        _require_server_extra()
        import uvicorn

        from ragloom.server.app import create_app
        from ragloom.server.auth import KeyStore
        from ragloom.server.db import ServerDatabase
        from ragloom.server.observability import configure_logging
        from ragloom.server.settings import ServerSettings, is_loopback

        resolved = settings_for(embedder=embedder, llm=llm, fallback_llm=fallback_llm)
        location = resolve_location(db)
        if location.kind not in ("sqlite", "postgresql"):
            fail(f"ragloom serve keeps its state in SQLite (--db FOLDER) or PostgreSQL (--db "
                 f"postgresql://USER@HOST/DBNAME), not in {location.kind}; copy the knowledge "
                 "bases with ragloom migrate --from URL --to postgresql://...", 2)
        # PostgreSQL: every replica on that database serves the same tenants and data.
        database_url = (db or str(resolved.db)) if location.kind == "postgresql" else None
        settings = ServerSettings(
            host=host, port=port,
            db=Path(side_path(db) if database_url else resolve_db(db)),
            database_url=database_url, job_lease_seconds=job_lease,
            max_open_collections=max_open_collections,
            url_timeout=url_timeout, fetch_threads=fetch_threads,
            url_allow_private=allow_private_urls, delete_wait=delete_wait,
            embedder=str(resolved.embedder),
            llm=str(resolved.llm), fallback_llm=resolved.fallback_llm,
            log_format=log_format,  # type: ignore[arg-type]
            log_level=log_level, max_upload_bytes=int(max_upload_mb * 1024 * 1024),
            rate_limit=rate_limit, insecure_no_auth=insecure_no_auth,
            search_threads=search_threads, model_threads=model_threads,
            max_json_bytes=int(max_json_mb * 1024 * 1024), config=resolved,
            **edge_policy(resolved.server, allow_embedder, allow_llm, allowed_host),
            **_otel_settings(resolved.server, otel, otel_exporter),
            **cache_settings(resolved.server, cache_entries, cache_mb))
        if not is_loopback(host) and not insecure_no_auth:
            database = ServerDatabase(settings.server_database)
            try:
                keys = KeyStore(database).key_count()
            finally:
                database.close()
            if keys == 0:
                fail(f"refusing to listen on {host} without API keys: anyone who can reach "
                     "it could read and change every knowledge base. Create a key with "
                     "`ragloom keys create --tenant NAME`, or pass --insecure-no-auth.", 2)
        configure_logging(settings.log_format, settings.log_level)
        app = create_app(settings)
        uvicorn.run(app, host=host, port=port, log_config=None, access_log=False,
                    timeout_graceful_shutdown=5)


def cache_settings(server: Mapping[str, Any], entries: int | None, megabytes: float | None
                   ) -> dict[str, Any]:
    """The caches' bounds: flags over ``[server]`` in ragloom.toml."""
    try:
        count = int(server.get("cache_entries", 1000) if entries is None else entries)
        size = float(server.get("cache_mb", 64) if megabytes is None else megabytes)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError("[server] cache_entries is a whole number and cache_mb a "
                                 "number of megabytes") from exc
    if count < 0 or size <= 0:
        raise ConfigurationError("[server] cache_entries is 0 (no caching) or more, "
                                 "cache_mb positive")
    return {"cache_entries": count, "cache_bytes": max(1, int(size * 1024 * 1024))}


def _otel_settings(server: Any, otel: bool | None, exporter: str | None) -> dict[str, Any]:
    """Tracing settings: flags over ``[server]`` in ragloom.toml."""
    return {"otel": bool(server.get("otel", False) if otel is None else otel),
            "otel_exporter": str(exporter or server.get("otel_exporter", "auto")),
            "otel_record_results": bool(server.get("otel_record_results", False))}
