"""``/v1/embeddings`` input: a string, strings, token ids, or lists of token ids.

Token ids are OpenAI's: LangChain's ``OpenAIEmbeddings`` sends ``input=[[ids...]]``
(its default ``check_embedding_ctx_length``), tokenised with ``cl100k_base``, the
encoding of every OpenAI embedding model. They are decoded back to text with that
encoding (``bpe-openai``, from the ``openai`` extra, ships it: no download) and the
text is embedded by the served model. Without the encoding a token array is a 400
saying what to install.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom.errors import MissingDependencyError
from ragloom.server.v1.errors import bad_request

ENCODING = "cl100k_base"


def _is_ids(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(t, int) and not isinstance(t, bool) for t in value))


def input_texts(raw: Any) -> list[str]:
    """The texts to embed, token arrays decoded (a 400 for anything else)."""
    if isinstance(raw, str):
        return [raw]
    if not isinstance(raw, list) or not raw:
        raise bad_request("input must be a string, a non-empty list of strings, a token "
                          "array or a list of token arrays", "input")
    if all(isinstance(item, str) for item in raw):
        return list(raw)
    if _is_ids(raw):
        return [decode(raw, "input")]
    if all(_is_ids(item) for item in raw):
        return [decode(item, f"input[{i}]") for i, item in enumerate(raw)]
    raise bad_request("input must be a string, a non-empty list of strings, a token array "
                      "or a list of non-empty token arrays (not a mix)", "input")


def decode(ids: Sequence[int], param: str) -> str:
    """Token ids of ``cl100k_base`` back to text."""
    from ragloom.chunking.tokens import encoding_for

    try:
        encoding = encoding_for(ENCODING)
    except MissingDependencyError as exc:
        raise bad_request(f"token arrays need the {ENCODING} tokenizer: {exc}", param,
                          code="unsupported_value") from exc
    top = encoding.n_vocab
    for index, token in enumerate(ids):
        if not 0 <= token < top:
            raise bad_request(f"token id {token} is not a {ENCODING} token (0..{top - 1})",
                              f"{param}[{index}]")
    try:
        return str(encoding.decode(list(ids)))
    except Exception as exc:  # an id with no bytes (a gap in the vocabulary)
        raise bad_request(f"the token ids cannot be decoded with {ENCODING}: {exc}",
                          param) from exc
