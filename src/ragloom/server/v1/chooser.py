"""Which chat model a ``/v1`` request may name: the server's own, plus what the
operator allows the tenant (``--allow-llm``, ``[server.tenants.NAME]``); anything
else is a 400 naming the allowed ones. An allowed model other than the server's
own is the core's shared, load-once model of that name."""

from __future__ import annotations

from ragloom.protocols import ModelProvider
from ragloom.server.v1.deps import OpenAIDeps
from ragloom.server.v1.errors import bad_request, not_allowed
from ragloom.server.v1.model_names import accepts


class ModelChooser:
    def __init__(self, deps: OpenAIDeps) -> None:
        self.deps = deps

    def allowed(self, tenant: str) -> list[str]:
        own = [self.deps.model.name] if self.deps.model is not None else []
        more = list(self.deps.allowed_models(tenant)) if self.deps.allowed_models else []
        return list(dict.fromkeys([*own, *more]))

    def check(self, name: str, tenant: str) -> ModelProvider:
        """The model ``name`` for ``tenant`` (a 400 when it may not name it)."""
        allowed = self.allowed(tenant)
        if not allowed:
            raise bad_request("this server has no language model; start it with one",
                              "model", code="model_not_available")
        canonical = next((a for a in allowed if a == name or accepts(a, name)), None)
        if canonical is None:
            raise not_allowed("model", name, allowed)
        return self.get(canonical)

    def get(self, name: str) -> ModelProvider:
        """The model of a name :meth:`check` let through for this request."""
        model = self.deps.model
        if model is not None and (name == model.name or accepts(model.name, name)):
            return model
        if self.deps.model_for is None:
            raise not_allowed("model", name, [model.name] if model is not None else [])
        return self.deps.model_for(name)
