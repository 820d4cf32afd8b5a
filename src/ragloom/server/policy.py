"""Which embedders and language models a tenant may name.

A model name reaches the server's process: ``local:/a/path`` probes its folders,
``hf:...`` downloads, ``openai:...`` spends the operator's key, and each loaded
model stays for the life of the process. So a tenant may name only the server's own
embedder and LLM, plus what the operator allows (``--allow-embedder``,
``--allow-llm``, ``[server] allowed_embedders`` / ``allowed_llms``, and per tenant
``[server.tenants.NAME]``); anything else is a 400 naming the allowed ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ragloom.server.errors import ApiError
from ragloom.server.settings import ServerSettings


@dataclass(frozen=True)
class ModelPolicy:
    """The allowed embedder and LLM names, for every tenant and per tenant name."""

    embedders: tuple[str, ...]
    llms: tuple[str, ...]
    tenants: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: ServerSettings) -> ModelPolicy:
        own_llm = () if settings.llm.strip().lower() in ("", "none") else (settings.llm,)
        return cls(embedders=_unique((settings.embedder, *settings.allowed_embedders)),
                   llms=_unique((*own_llm, *settings.allowed_llms)),
                   tenants={k: tuple(v) for k, v in settings.tenant_models.items()})

    def embedders_for(self, tenant: str | None) -> tuple[str, ...]:
        return _unique((*self.embedders, *self.tenants.get(tenant or "", ())))

    def llms_for(self, tenant: str | None) -> tuple[str, ...]:
        return _unique((*self.llms, *self.tenants.get(tenant or "", ())))

    def check_embedder(self, tenant: str | None, name: str, param: str = "embedder") -> str:
        return _check(name, self.embedders_for(tenant), "embedder", param)

    def check_llm(self, tenant: str | None, name: str, param: str = "model") -> str:
        return _check(name, self.llms_for(tenant), "language model", param)


def refuse(name: str, allowed: Sequence[str], what: str, param: str) -> ApiError:
    listed = ", ".join(repr(a) for a in allowed) or "none"
    return ApiError(400, f"{what} {name!r} is not allowed on this server; allowed: {listed} "
                    "(the operator adds more with ragloom serve --allow-embedder / "
                    "--allow-llm)", type="invalid_request_error", code="model_not_allowed",
                    param=param)


def _check(name: str, allowed: Sequence[str], what: str, param: str) -> str:
    if name not in allowed:
        raise refuse(name, allowed, what, param)
    return name


def _unique(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for n in names if n))
