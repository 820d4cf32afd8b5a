"""Which names a request may use for a served model.

A model is served under its ragloom name (``local:all-MiniLM-L6-v2``,
``openai:gpt-4o-mini``); clients written for other servers name it upstream
(``sentence-transformers/all-MiniLM-L6-v2``, ``gpt-4o-mini``). Both are accepted,
case-insensitively, wherever a request names a model (``model``,
``embedding_model``). The bundled MiniLM answers to every alias of the registry
(``local:minilm``, ``all-MiniLM-L6-v2``, ...); its int8 build also answers to the
upstream name, since it is that model (quantised; cosine >= 0.97 to fp32 vectors).
"""

from __future__ import annotations

import functools

_MINILM = ("all-minilm-l6-v2", "minilm", "sentence-transformers/all-minilm-l6-v2")
_MINILM_INT8 = ("all-minilm-l6-v2-int8", "minilm-int8")


@functools.lru_cache(maxsize=64)
def aliases(served: str) -> frozenset[str]:
    """Every lower-cased name a request may use for the model served as ``served``."""
    name = served.lower()
    names = {name}
    provider, sep, model = name.partition(":")
    if sep and model:
        names.add(model)
    if provider in ("local", "hf") and model in (*_MINILM, *_MINILM_INT8):
        for alias in (*_MINILM, *(_MINILM_INT8 if model in _MINILM_INT8 else ())):
            names.update({alias, f"local:{alias}", f"hf:{alias}"})
    return frozenset(names)


def accepts(served: str, asked: str) -> bool:
    """Whether a request naming ``asked`` means the model served as ``served``."""
    return asked.strip().lower() in aliases(served)
