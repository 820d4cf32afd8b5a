"""``ragloom keys``: API keys for the server, one tenant each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ragloom.cli.common import (
    DbOption,
    fail,
    out,
    print_json,
    reported_errors,
    resolve_db,
    resolve_location,
)

if TYPE_CHECKING:
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

keys_app = typer.Typer(help="Create, list and revoke the server's API keys.",
                       no_args_is_help=True)


def _store(db: str | None) -> tuple[ServerDatabase, KeyStore]:
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase
    from ragloom.server.settings import ServerSettings

    location = resolve_location(db)
    if location.kind == "postgresql":  # the server's tables in PostgreSQL (replicas)
        from ragloom.cli.common import settings_for

        database = ServerDatabase(db or str(settings_for().db))
    else:
        database = ServerDatabase(ServerSettings(db=resolve_db(db)).server_db)
    return database, KeyStore(database)


@keys_app.command("create")
def create_key(
    tenant: Annotated[str, typer.Option("--tenant", help="Tenant the key acts for.")],
    db: DbOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Create a key and print it once; only its hash is stored."""
    with reported_errors():
        if not tenant.strip():
            fail("--tenant needs a name", 2)
        database, keys = _store(db)
        try:
            created = keys.create_key(tenant)
        finally:
            database.close()
        if json_output:
            print_json({"key": created.key, "key_id": created.key_id,
                        "tenant": created.tenant.name})
            return
        out.print(created.key, markup=False)
        typer.echo(f"key {created.key_id} for tenant {created.tenant.name!r}; it is shown only "
                   "this once", err=True)


@keys_app.command("list")
def list_keys(db: DbOption = None) -> None:
    """List keys (id, tenant, first characters); never the keys themselves."""
    with reported_errors():
        database, keys = _store(db)
        try:
            rows = keys.list_keys()
        finally:
            database.close()
        for key_id, tenant, prefix, _created in rows:
            out.print(f"{key_id}  {tenant}  {prefix}...", markup=False)


@keys_app.command("revoke")
def revoke_key(key_id: Annotated[str, typer.Argument(help="The key's id (from keys list).")],
               db: DbOption = None) -> None:
    """Revoke a key: requests with it get 401 from then on."""
    with reported_errors():
        database, keys = _store(db)
        try:
            done = keys.revoke(key_id)
        finally:
            database.close()
        if not done:
            fail(f"no key with id {key_id!r}")
        out.print(f"revoked {key_id}", markup=False)
