"""Usage objects in the shapes the official client's types declare, every field set.

The ``openai`` client validates ``usage`` against its own models: the responses API's
``input_tokens_details`` requires ``cached_tokens`` and ``cache_write_tokens``, and
``output_tokens_details`` requires ``reasoning_tokens``. ragloom caches no prompts and
has no reasoning tokens, so those counts are 0 (true, not placeholders).
"""

from __future__ import annotations

from typing import Any

from ragloom.types import Usage


def chat_usage(usage: Usage) -> dict[str, Any]:
    """``chat.completion``'s ``usage`` (``CompletionUsage``)."""
    return {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0,
                                      "audio_tokens": 0, "image_tokens": 0,
                                      "text_tokens": usage.input_tokens},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0,
                                          "rejected_prediction_tokens": 0,
                                          "text_tokens": usage.output_tokens}}


def response_usage(usage: Usage) -> dict[str, Any]:
    """A response's ``usage`` (``ResponseUsage``)."""
    return {"input_tokens": usage.input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.input_tokens + usage.output_tokens}


def embedding_usage(tokens: int) -> dict[str, int]:
    """``/v1/embeddings``' ``usage``."""
    return {"prompt_tokens": tokens, "total_tokens": tokens}
