"""Tenants and API keys.

``ragloom keys create --tenant NAME`` prints a key once; the server keeps only its
SHA-256 (keys are 256 random bits, so a plain hash is as good as a slow one and
keeps every request's check at microseconds). A request names its key with
``Authorization: Bearer KEY`` (what OpenAI clients send) or ``X-API-Key``.

Without any key configured the server has one tenant, ``default``, and answers only
clients on this machine (it refuses to bind elsewhere unless ``--insecure-no-auth``).
Once a key exists, every request needs one.

Each key has its own token bucket: ``rate_limit`` requests per minute, bursts of up
to a tenth of that; an empty bucket answers 429 with ``Retry-After``.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import threading
import time
from dataclasses import dataclass
from typing import TypeVar

import anyio
from fastapi import Request

from ragloom.server.db import ServerDatabase, new_id, now
from ragloom.server.errors import ApiError
from ragloom.server.settings import is_loopback

KEY_PREFIX = "rlk_"
DEFAULT_TENANT = "default"
_KEY_CHECK_SECONDS = 2.0
_KNOWN_KEYS_MAX = 10_000
_T = TypeVar("_T")


@dataclass(frozen=True)
class Tenant:
    """Who is asking: every object the server keeps belongs to one tenant."""

    id: str
    name: str


@dataclass(frozen=True)
class CreatedKey:
    key: str
    key_id: str
    tenant: Tenant


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class KeyStore:
    """Tenants and hashed keys in the server database."""

    def __init__(self, db: ServerDatabase) -> None:
        self.db = db

    def tenant(self, name: str, *, create: bool = True) -> Tenant | None:
        row = self.db.one("SELECT id, name FROM tenants WHERE name = ?", (name,))
        if row is not None:
            return Tenant(id=row[0], name=row[1])
        if not create:
            return None
        with self.db.transaction() as conn:
            row = conn.execute("SELECT id, name FROM tenants WHERE name = ?", (name,)).fetchone()
            if row is not None:
                return Tenant(id=row[0], name=row[1])
            tenant = Tenant(id=DEFAULT_TENANT if name == DEFAULT_TENANT else new_id("tn"),
                            name=name)
            conn.execute("INSERT INTO tenants (id, name, created) VALUES (?, ?, ?)",
                         (tenant.id, tenant.name, now()))
        return tenant

    def create_key(self, tenant_name: str) -> CreatedKey:
        tenant = self.tenant(tenant_name)
        assert tenant is not None
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        key_id = new_id("key")
        self.db.execute(
            "INSERT INTO api_keys (id, tenant_id, key_hash, prefix, created) "
            "VALUES (?, ?, ?, ?, ?)", (key_id, tenant.id, hash_key(key), key[:8], now()))
        return CreatedKey(key=key, key_id=key_id, tenant=tenant)

    def list_keys(self) -> list[tuple[str, str, str, float]]:
        rows = self.db.all(
            "SELECT k.id, t.name, k.prefix, k.created FROM api_keys k "
            "JOIN tenants t ON t.id = k.tenant_id WHERE k.revoked = 0 ORDER BY k.created")
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def revoke(self, key_id: str) -> bool:
        return self.db.execute("UPDATE api_keys SET revoked = 1 WHERE id = ?", (key_id,)) > 0

    def key_count(self) -> int:
        row = self.db.one("SELECT count(*) FROM api_keys WHERE revoked = 0")
        return int(row[0]) if row else 0

    def lookup(self, key: str) -> tuple[str, Tenant] | None:
        digest = hash_key(key)
        row = self.db.one(
            "SELECT k.id, k.key_hash, t.id, t.name FROM api_keys k "
            "JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = ? AND k.revoked = 0",
            (digest,))
        if row is None or not hmac.compare_digest(row[1], digest):
            return None
        return row[0], Tenant(id=row[2], name=row[3])


class TokenBuckets:
    """Per-key token buckets: ``per_minute`` requests, bursts of ``per_minute / 10``."""

    def __init__(self, per_minute: int) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, per_minute / 10.0)
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 when the request may go, else the seconds until it could."""
        if self.rate <= 0:
            return 0.0
        with self._lock:
            clock = time.monotonic()
            tokens, last = self._buckets.get(key, (self.capacity, clock))
            tokens = min(self.capacity, tokens + (clock - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, clock)
                return 0.0
            self._buckets[key] = (tokens, clock)
            return (1.0 - tokens) / self.rate


class Authenticator:
    """Turns a request's key (or its absence) into a :class:`Tenant`, or an ApiError."""

    def __init__(self, keys: KeyStore, *, rate_limit: int, insecure_no_auth: bool) -> None:
        self.keys = keys
        self.buckets = TokenBuckets(rate_limit)
        self.insecure_no_auth = insecure_no_auth
        self._default: Tenant | None = None
        self._key_count = (0, -math.inf)
        # Valid keys seen lately: digest -> (key id, tenant, when checked). A revoked
        # key (``ragloom keys revoke``, another process) stops within the same
        # _KEY_CHECK_SECONDS as a first key's creation takes to be noticed.
        self._known: dict[str, tuple[str, Tenant, float]] = {}
        # Keys looked up in vain while the server had none, and when: such a request is
        # served as one without a key (the official OpenAI client always sends one),
        # and without a database read per request. Keys are random, so a key created
        # later was never among these.
        self._unknown: dict[str, float] = {}

    def keys_configured(self) -> bool:
        count, checked = self._key_count
        if time.monotonic() - checked > _KEY_CHECK_SECONDS:
            count = self.keys.key_count()
            self._key_count = (count, time.monotonic())
        return count > 0

    def keys_configured_lately(self) -> bool | None:
        """:meth:`keys_configured` when that needs no database read, else None."""
        count, checked = self._key_count
        if time.monotonic() - checked > _KEY_CHECK_SECONDS:
            return None
        return count > 0

    def default_tenant(self) -> Tenant:
        if self._default is None:
            self._default = self.keys.tenant(DEFAULT_TENANT)
        assert self._default is not None
        return self._default

    def recent(self, authorization: str | None, api_key: str | None,
               client_host: str | None) -> tuple[str, Tenant] | None:
        """What :meth:`authenticate` would answer, when that needs no database read
        (a key checked lately, or no key, or a key looked up in vain, while none
        exists); else None."""
        clock = time.monotonic()
        key = _key_of(authorization, api_key)
        if key:
            digest = hash_key(key)
            known = self._known.get(digest)
            if known is not None and clock - known[2] <= _KEY_CHECK_SECONDS:
                return known[0], known[1]
            if clock - self._unknown.get(digest, -math.inf) > _KEY_CHECK_SECONDS:
                return None
        count, checked = self._key_count
        if (count == 0 and clock - checked <= _KEY_CHECK_SECONDS and self._default is not None
                and (self.insecure_no_auth or is_loopback(client_host or ""))):
            return f"tenant:{self._default.id}", self._default
        return None

    def authenticate(self, authorization: str | None, api_key: str | None,
                     client_host: str | None) -> tuple[str, Tenant]:
        """(rate-limit key, tenant) for a request."""
        key = _key_of(authorization, api_key)
        if key:
            found = self.keys.lookup(key)
            digest = hash_key(key)
            if found is not None:
                _remember(self._known, digest, (found[0], found[1], time.monotonic()))
                return found
            if self.keys_configured():
                raise ApiError(401, "the API key is not valid; create one with: "
                               "ragloom keys create --tenant NAME",
                               type="authentication_error", code="invalid_api_key")
            _remember(self._unknown, digest, time.monotonic())
        if self.keys_configured():
            raise ApiError(401, "this server needs an API key: send Authorization: Bearer KEY",
                           type="authentication_error", code="missing_api_key")
        if not self.insecure_no_auth and not is_loopback(client_host or ""):
            raise ApiError(401, "without API keys this server answers only this machine; "
                           "create a key with: ragloom keys create --tenant NAME",
                           type="authentication_error", code="missing_api_key")
        tenant = self.default_tenant()
        return f"tenant:{tenant.id}", tenant

    def check_rate(self, bucket: str) -> None:
        wait = self.buckets.take(bucket)
        if wait > 0:
            raise ApiError(429, f"rate limit reached for this key; retry in {wait:.1f} s",
                           type="rate_limit_error", code="rate_limit_exceeded",
                           headers={"Retry-After": str(max(1, math.ceil(wait)))})


def _remember(table: dict[str, _T], digest: str, value: _T) -> None:
    """``table[digest] = value``, emptying a full table first (it holds at most
    _KNOWN_KEYS_MAX keys: a flood of made-up keys cannot grow it without bound)."""
    if len(table) >= _KNOWN_KEYS_MAX and digest not in table:
        table.clear()
    table[digest] = value


def _key_of(authorization: str | None, api_key: str | None) -> str | None:
    """The key a request sends: ``Authorization: Bearer KEY`` before ``X-API-Key``."""
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return api_key


async def current_tenant(request: Request) -> Tenant:
    """FastAPI dependency: the caller's tenant (401 / 429 as ApiError).

    Async, so a request whose key was checked lately costs no thread hand-off; a
    database read (a new key, the periodic recheck) runs on a worker thread, never on
    the event loop (with replicas the database is a PostgreSQL server away)."""
    cached = getattr(request.state, "tenant", None)
    if isinstance(cached, Tenant):
        return cached
    auth: Authenticator = request.app.state.ragloom.auth
    client = request.client.host if request.client else None
    authorization = request.headers.get("authorization")
    api_key = request.headers.get("x-api-key")
    found = auth.recent(authorization, api_key, client)
    if found is None:
        found = await anyio.to_thread.run_sync(auth.authenticate, authorization, api_key,
                                               client)
    bucket, tenant = found
    auth.check_rate(bucket)
    request.state.tenant = tenant
    return tenant
