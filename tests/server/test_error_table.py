"""One error table for ``/api`` and ``/v1``: every ``RagError`` subclass maps to one
status, type and code, answered the same way by both APIs, with no internals."""

from __future__ import annotations

import inspect

import pytest

import ragloom.errors as errors
from ragloom.errors import RagError
from ragloom.server.errors import RAG_ERRORS, from_rag_error
from ragloom.server.v1.errors import translate

SECRET = "/srv/secret/path.db: SELECT * FROM chunks WHERE id = 'x' -- Traceback"


def all_subclasses(cls: type[RagError]) -> list[type[RagError]]:
    found: list[type[RagError]] = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(all_subclasses(sub))
    return found


def make(cls: type[RagError], message: str) -> RagError:
    parameters = inspect.signature(cls.__init__).parameters
    if "source" in parameters and "reason" in parameters:
        return cls(SECRET, "the file is truncated")  # type: ignore[call-arg]
    if "package" in parameters:
        return cls("somepkg", "someextra")  # type: ignore[call-arg]
    return cls(message)


def _import_everything() -> None:
    # Subclasses defined outside ragloom.errors (sessions, agents) are walked too.
    import ragloom.advanced.agent
    import ragloom.chat.sessions  # noqa: F401


def test_every_error_class_of_ragloom_errors_has_its_own_row() -> None:
    defined = {obj for obj in vars(errors).values()
               if inspect.isclass(obj) and issubclass(obj, RagError)}
    assert defined - set(RAG_ERRORS) == set()


@pytest.mark.parametrize("cls", [RagError, *all_subclasses(RagError)],
                         ids=lambda c: c.__name__)
def test_each_rag_error_maps_the_same_on_both_apis(cls: type[RagError]) -> None:
    _import_everything()
    error = make(cls, SECRET)
    native = from_rag_error(error)
    openai = translate(error)
    assert (native.status, native.type, native.code) == (openai.status, openai.type,
                                                         openai.code)
    assert native.message == openai.message and native.headers == openai.headers
    assert 400 <= native.status < 600
    if native.status >= 500:
        assert "/srv/secret" not in native.message and "SELECT" not in native.message
    if issubclass(cls, errors.ParseError):
        assert "/srv/secret" not in native.message and "truncated" in native.message
    expected: dict[type[RagError], int] = {
        errors.NotFoundError: 404, errors.EmbedderMismatchError: 409,
        errors.DimensionMismatchError: 409, errors.UnsupportedEmbeddingError: 400,
        errors.RateLimitError: 429, errors.InvalidInputError: 400,
        errors.ProviderTimeoutError: 504, errors.ProviderError: 502,
        errors.StoreError: 500}
    for base, status in expected.items():  # the most specific listed base decides
        if issubclass(cls, base):
            assert native.status == status, (cls, base)
            break


def test_walk_finds_subclasses_outside_the_errors_module() -> None:
    _import_everything()
    names = {c.__name__ for c in all_subclasses(RagError)}
    assert {"SessionNotFoundError", "ToolsNotSupportedError"} <= names


def test_rate_limit_keeps_retry_after_on_both_apis() -> None:
    error = errors.RateLimitError("slow down", retry_after=7)
    assert from_rag_error(error).headers == {"Retry-After": "7"}
    assert translate(error).headers == {"Retry-After": "7"}


