"""``/mcp`` behind ``ragloom serve``'s API keys, with the SDK's bearer-token machinery.

:class:`ApiKeyVerifier` is the SDK's ``TokenVerifier``: an API key
(``Authorization: Bearer rlk_...``) becomes an ``AccessToken`` whose claims name the
key's tenant; anything else is refused (401 from the SDK's ``RequireAuthMiddleware``).
:class:`TenantAuthBackend` extends the SDK's ``BearerAuthBackend`` with what every
other route of the server does too: ``X-API-Key``, the keyless mode (no key
configured: clients on this machine are the ``default`` tenant) and each key's rate
limit (429 with ``Retry-After``).
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials, AuthenticationError
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, Response

from ragloom.server.auth import Authenticator, Tenant
from ragloom.server.errors import ApiError

TENANT_ID = "ragloom_tenant_id"
TENANT_NAME = "ragloom_tenant_name"


def access_token(token: str, bucket: str, tenant: Tenant) -> AccessToken:
    """The SDK's record of a caller: ``client_id`` is the key's id (sessions are bound
    to it), the claims name the tenant."""
    return AccessToken(token=token, client_id=bucket, scopes=[], subject=tenant.id,
                       claims={TENANT_ID: tenant.id, TENANT_NAME: tenant.name})


def tenant_of(token: AccessToken | None) -> Tenant:
    """The tenant an access token was issued for (a tool call without one is refused)."""
    claims = (token.claims or {}) if token is not None else {}
    tenant_id, name = claims.get(TENANT_ID), claims.get(TENANT_NAME)
    if not isinstance(tenant_id, str) or not isinstance(name, str):
        raise PermissionError("this MCP request carries no ragloom tenant")
    return Tenant(id=tenant_id, name=name)


class ApiKeyVerifier:
    """The SDK's ``TokenVerifier`` over ragloom's API keys."""

    def __init__(self, auth: Authenticator) -> None:
        self.auth = auth

    async def verify_token(self, token: str) -> AccessToken | None:
        found = await self.found(f"Bearer {token}", None, None)
        return None if found is None else access_token(token, *found)

    async def found(self, authorization: str | None, api_key: str | None,
                    client_host: str | None) -> tuple[str, Tenant] | None:
        """(rate-limit bucket, tenant), or None when the server would answer 401."""
        cached = self.auth.recent(authorization, api_key, client_host)
        if cached is not None:
            return cached
        try:
            return await anyio.to_thread.run_sync(self.auth.authenticate, authorization,
                                                  api_key, client_host)
        except ApiError:
            return None


class RateLimited(AuthenticationError):
    def __init__(self, error: ApiError) -> None:
        super().__init__(error.message)
        self.error = error


class TenantAuthBackend(BearerAuthBackend):
    """Bearer keys as the SDK checks them, plus X-API-Key, keyless loopback clients and
    the per-key rate limit."""

    def __init__(self, verifier: ApiKeyVerifier) -> None:
        super().__init__(verifier)
        self.verifier = verifier

    async def authenticate(self, conn: HTTPConnection) -> Any:
        result = await super().authenticate(conn)
        if result is None:  # X-API-Key, or the keyless mode (where any key is no key)
            host = conn.client.host if conn.client else None
            found = await self.verifier.found(conn.headers.get("authorization"),
                                              conn.headers.get("x-api-key"), host)
            if found is not None:
                token = access_token("", *found)
                result = AuthCredentials(token.scopes), AuthenticatedUser(token)
        if result is not None:
            try:
                self.verifier.auth.check_rate(result[1].access_token.client_id)
            except ApiError as exc:
                raise RateLimited(exc) from exc
        return result


def on_auth_error(conn: HTTPConnection, exc: Exception) -> Response:
    """A refused request as every other route answers it (429 with Retry-After)."""
    if isinstance(exc, RateLimited):
        return JSONResponse(exc.error.body(), status_code=exc.error.status,
                            headers=exc.error.headers)
    return JSONResponse({"error": {"message": str(exc), "type": "authentication_error"}},
                        status_code=401)
