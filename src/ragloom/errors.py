"""The one exception tree of ragloom.

Every error ragloom raises on purpose derives from :class:`RagError`, so callers can
catch one type. Messages say what was wrong and what to do about it.

::

    RagError
    ├── ConfigurationError          a setting or provider name is wrong
    │   └── MissingDependencyError  an optional extra is not installed (names the pip command)
    ├── InvalidInputError           the caller passed something unusable
    │   ├── FilterError             a metadata filter is malformed or does not fit the data
    │   ├── QueryError              a search query cannot be run as given
    │   └── ParseError              a file could not be read or parsed (the batch goes on)
    ├── StoreError                  the knowledge base storage failed or refused
    │   ├── DimensionMismatchError  a vector's size differs from the collection's
    │   ├── EmbedderMismatchError   the knowledge base was built with another embedding model
    │   ├── UnsupportedEmbeddingError  the store cannot hold this kind of embedding
    │   └── NotFoundError           a knowledge base, document or chunk does not exist
    │       ├── KnowledgeBaseNotFoundError
    │       └── CollectionDroppedError  a write reached a collection that was deleted
    └── ProviderError               an embedding or language model provider failed
        ├── AuthenticationError     the key was missing or refused (never includes the key)
        ├── RateLimitError          too many requests; ``retry_after`` seconds when known
        ├── ProviderTimeoutError    no answer in time
        ├── ProviderConnectionError the provider could not be reached
        ├── BadResponseError        the provider answered with something unusable
        └── ModelNotFoundError      the provider does not know that model
"""

from __future__ import annotations


class RagError(Exception):
    """Base of every error ragloom raises on purpose."""


class ConfigurationError(RagError):
    """A setting, provider name or option is wrong."""


class MissingDependencyError(ConfigurationError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, extra: str, purpose: str = "") -> None:
        self.package = package
        self.extra = extra
        what = f" for {purpose}" if purpose else ""
        super().__init__(
            f"The package {package!r} is needed{what} but is not installed. "
            f"Install it with: pip install 'ragloom[{extra}]'"
        )


class InvalidInputError(RagError):
    """The caller passed something ragloom cannot use."""


class FilterError(InvalidInputError):
    """A metadata filter is malformed or does not fit the stored data."""


class QueryError(InvalidInputError):
    """A search query cannot be run as given."""


class ParseError(InvalidInputError):
    """A source could not be read or parsed."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class StoreError(RagError):
    """The storage of a knowledge base failed or refused an operation."""


class DimensionMismatchError(StoreError):
    """A vector's dimension differs from the one the collection holds."""


class EmbedderMismatchError(StoreError):
    """The knowledge base was built with a different embedding model."""


class UnsupportedEmbeddingError(StoreError):
    """The store cannot hold or search this kind of embedding."""


class NotFoundError(StoreError):
    """A knowledge base, document or chunk does not exist."""


class KnowledgeBaseNotFoundError(NotFoundError):
    """No knowledge base of that name exists in the store."""


class CollectionDroppedError(NotFoundError):
    """A write reached a collection (knowledge base, vector store) that was deleted:
    stores never create a dropped collection again behind the caller's back."""


class ProviderError(RagError):
    """An embedding or language model provider failed.

    ``retryable`` says whether the same request may succeed if sent again (rate
    limits, timeouts, unreachable hosts, 5xx answers); retry wrappers read it.
    """

    retryable: bool = False

    def __init__(
        self, message: str, *, provider: str = "", model: str = "", retryable: bool | None = None
    ) -> None:
        self.provider = provider
        self.model = model
        if retryable is not None:
            self.retryable = retryable
        if provider and model:
            prefix = f"{provider}:{model}: "
        else:
            prefix = f"{provider}: " if provider else ""
        super().__init__(prefix + message)


class AuthenticationError(ProviderError):
    """The API key was missing or refused."""


class RateLimitError(ProviderError):
    """The provider asked us to slow down."""

    retryable = True

    def __init__(
        self, message: str, *, provider: str = "", model: str = "", retry_after: float | None = None
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, provider=provider, model=model)


class ProviderTimeoutError(ProviderError):
    """The provider did not answer in time."""

    retryable = True


class ProviderConnectionError(ProviderError):
    """The provider could not be reached."""

    retryable = True


class BadResponseError(ProviderError):
    """The provider answered with something ragloom cannot use."""


class ModelNotFoundError(ProviderError):
    """The provider does not know the requested model."""
