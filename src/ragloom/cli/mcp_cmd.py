"""``ragloom mcp``: the knowledge bases as a Model Context Protocol server, over stdio
(for a client that starts it, such as Claude Desktop) or streamable HTTP at ``/mcp``."""

from __future__ import annotations

from typing import Annotated

import typer

from ragloom.cli.common import DbOption, EmbedderOption, KbOption, console, fail, reported_errors

TRANSPORTS = ("stdio", "http")


def mcp_command(
    db: DbOption = None,
    kb: KbOption = None,
    transport: Annotated[str, typer.Option(
        "--transport", help="stdio (the client starts this command) or http (streamable "
        "HTTP at /mcp)")] = "stdio",
    host: Annotated[str, typer.Option(
        "--host", help="With --transport http: address to listen on (this machine only; "
        "ragloom serve has API keys for more).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(
        "--port", min=1, max=65535, help="With --transport http: port to listen on.")] = 8765,
    allow_writes: Annotated[bool, typer.Option(
        "--allow-writes", help="Also offer the tools ingest_text and delete_document.")
    ] = False,
    embedder: EmbedderOption = None,
    llm: Annotated[str | None, typer.Option(
        "--llm", help="Language model for ask, as provider:model, or none "
        "[default: $RAGLOOM_LLM or local:smollm2]", show_default=False)] = None,
) -> None:
    """Serve the knowledge bases to AI agents over the Model Context Protocol."""
    with reported_errors():
        from ragloom.server.settings import is_loopback

        if transport not in TRANSPORTS:
            fail(f"--transport is stdio or http, not {transport!r}", 2)
        if transport == "http" and not is_loopback(host):
            fail(f"refusing to serve MCP on {host} without authentication; use a loopback "
                 "address, or ragloom serve (its /mcp needs an API key)", 2)
        from ragloom.mcp.server import require_mcp

        require_mcp()
        import anyio

        from ragloom.mcp.local import LocalBackend
        from ragloom.mcp.server import build_server

        backend = LocalBackend(db, kb, embedder=embedder, llm=llm)
        server = build_server(lambda: backend, allow_writes=allow_writes)
        try:
            if transport == "stdio":
                anyio.run(server.run_stdio_async)
            else:
                console.print(f"MCP (streamable HTTP) at http://{host}:{port}/mcp",
                              markup=False, highlight=False)
                anyio.run(lambda: server.run_streamable_http_async(host=host, port=port))
        finally:
            backend.close()
