"""The bundled all-MiniLM-L6-v2 run by onnxruntime: the fast local embedding path.

The model is exported from the bundled weights on this machine at first use
(see :mod:`ragloom.embeddings.onnx_export`) and cached. Two precisions:

* ``"onnx-int8"``: int8 weights, activations quantised at run time. 2.3-4.4x the
  throughput of sentence-transformers fp32 on chunk-sized SciFact texts (2.4-9x on
  whole documents) on a 2-core AVX-512 machine; SciFact nDCG@10 0.6488 vs 0.6492.
  Its vectors differ from fp32 ones (cosine mean 0.994, min 0.983 on chunks, ~0.97
  on very short texts, and a little with their batch mates), so it has its own
  name, ``local:all-MiniLM-L6-v2-int8``: a knowledge base never mixes them.
* ``"onnx"``: the same fused graph in fp32. Vectors match torch's (cosine > 0.9999),
  so it keeps the name ``local:all-MiniLM-L6-v2``; 1.6-2.4x on chunks, 1.8-4.9x on
  documents (bench/embed_speed.py).

Texts are tokenised with the model's fast tokenizer (truncated at 256 tokens, the
model's limit), sorted by length, batched and padded to each batch's longest;
mean pooling and normalisation run in NumPy. Running needs only onnxruntime,
tokenizers and NumPy: torch is imported for the one-time export alone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ragloom._threads import available_cores, cores_are_shared
from ragloom.embeddings.token_spans import word_token_spans
from ragloom.errors import ConfigurationError, MissingDependencyError
from ragloom.types import Embedding, Vector

MAX_TOKENS = 256
DIMENSION = 384
#: Tokens (rows x padded width) one session run takes at most, ``batch_size`` rows at
#: most: a run's activations and attention scores then stay in the CPU's caches, and a
#: text of more than half the model's length runs alone. Attaching 1,000 SciFact
#: abstracts (2,303 chunks of up to 200 tokens, int8, 2 cores): 37 s against 43 s with
#: runs of 32 rows, for 13 % less CPU. Runs of short texts still hold ``batch_size``.
RUN_TOKENS = MAX_TOKENS


def load_tokenizer(model_folder: Path, max_tokens: int = MAX_TOKENS) -> Any:
    """The model's fast tokenizer, truncating at ``max_tokens`` and padding to the
    longest text of each batch (tokenizer.json itself pads and truncates to 128)."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise MissingDependencyError("tokenizers", "local") from exc
    tokenizer = Tokenizer.from_file(str(model_folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_tokens)
    pad_id = tokenizer.token_to_id("[PAD]")
    tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
    return tokenizer


def mean_pool(hidden: Any, mask: Any) -> Any:
    """Mean of the token vectors that are not padding, unit-normalised (float32)."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden.astype(np.float32) * weights).sum(axis=1)
    pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def run_batches(order: list[int], widths: list[int], rows: int,
                tokens: int) -> list[list[int]]:
    """``order`` (longest first, ``widths`` their token counts) cut into session runs
    of at most ``rows`` texts and, where a run holds more than one, ``tokens`` padded
    tokens (its first text is its widest)."""
    batches = []
    start = 0
    while start < len(order):
        take = max(1, min(rows, tokens // max(1, widths[start])))
        batches.append(order[start:start + take])
        start += take
    return batches


class OnnxEncoder:
    """One onnxruntime session over an exported encoder graph, plus its tokenizer.

    ``threads`` is the session's intra-op thread count; ``workers`` how many batches
    run at once (each on its own calling thread: a session may run concurrently).
    Loads on construction: build it lazily (as :class:`OnnxEmbedder` does).
    """

    def __init__(self, graph: Path, model_folder: Path, *, threads: int, workers: int = 1,
                 max_tokens: int = MAX_TOKENS, spin_within_runs: bool = False) -> None:
        self._workers = max(1, workers)
        try:
            import onnxruntime
        except ImportError as exc:
            raise MissingDependencyError("onnxruntime", "fast") from exc
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # warnings about unused initialisers are noise
        # Idle pool threads sleep instead of spinning: during an ingest the parser
        # process, the file reader and the splitter need the same cores between two
        # batches. Measured on 2 cores shared with other jobs: 15 % less CPU for the
        # same 276 SciFact chunks (11.6 vs 13.6 CPU-s), no slower idle.
        #
        # ``spin_within_runs``: pool threads spin between the operators of a run (no
        # wake-up per operator) and stop when it ends. A lone query on 2 threads (23
        # SciFact tokens, standalone): 4.1 ms against 4.4-5.1 without spinning, for
        # 8.3-8.5 ms of CPU against 7.8-9.0 (spinning that goes on after the run:
        # 11.8-13.1). In the server, 1.1 ms less per hybrid search with one client.
        options.add_session_config_entry("session.intra_op.allow_spinning",
                                         "1" if spin_within_runs else "0")
        if spin_within_runs:
            options.add_session_config_entry("session.force_spinning_stop", "1")
        try:
            self._session = onnxruntime.InferenceSession(
                str(graph), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ConfigurationError(
                f"could not load the ONNX model {graph}: {exc}. Delete that folder to "
                "export it again, or use backend='torch'"
            ) from exc
        self._inputs = {item.name for item in self._session.get_inputs()}
        # Unpadded (batches are padded in NumPy); never toggled, so one encoder can
        # serve several threads.
        self._measure = load_tokenizer(model_folder, max_tokens)
        self._measure.no_padding()
        pad_id = self._measure.token_to_id("[PAD]")
        self._pad_id = 0 if pad_id is None else int(pad_id)

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> Any:
        """Unit vectors, one row per text, in input order."""
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        # Tokenise once, unpadded, to sort by token count: each batch then pads little.
        # Padding here gives the ids the padding tokenizer would (tokenising twice cost
        # about 3 % of an ingest's CPU).
        encoded = [item.ids for item in self._measure.encode_batch(list(texts))]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]), reverse=True)
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        workers = min(self._workers, len(texts))
        # Few texts: smaller batches, so that every worker gets one.
        size = max(1, min(batch_size, -(-len(texts) // workers)))
        batches = run_batches(order, [len(encoded[i]) for i in order], size, RUN_TOKENS)
        if workers <= 1 or len(batches) <= 1:
            for batch in batches:
                out[batch] = self._run_ids([encoded[i] for i in batch])
            return out
        pending = iter(batches)
        lock = threading.Lock()
        failures: list[BaseException] = []

        def work() -> None:
            while not failures:
                with lock:
                    batch = next(pending, None)
                if batch is None:
                    return
                try:
                    out[batch] = self._run_ids([encoded[i] for i in batch])
                except BaseException as exc:  # raised again on the calling thread
                    failures.append(exc)

        helpers = [threading.Thread(target=work, name="ragloom-onnx", daemon=True)
                   for _ in range(workers - 1)]
        for helper in helpers:
            helper.start()
        work()
        for helper in helpers:
            helper.join()
        if failures:
            raise failures[0]
        return out

    def _run(self, texts: list[str]) -> Any:
        return self._run_ids([item.ids for item in self._measure.encode_batch(texts)])

    def _run_ids(self, rows: list[list[int]]) -> Any:
        width = max(len(row) for row in rows)
        ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for number, row in enumerate(rows):
            ids[number, :len(row)] = row
            mask[number, :len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        return mean_pool(hidden, mask)


class OnnxEmbedder:
    """The bundled model on onnxruntime, as an EmbeddingProvider and TokenCounter.

    ``precision`` is ``"int8"`` or ``"fp32"``. Nothing loads until first use; the
    first use on a machine exports the model (about 10 s) into ``cache_dir``.
    Documents run ``threads`` batches at once (default: one per available core, each
    batch on one core). A query embedded while this embedder embeds nothing else
    (and no :func:`ragloom._threads.cores_shared` block is open) runs on
    ``solo_query_threads`` (default: up to 2 cores), otherwise on
    ``query_threads`` (default 1): alone it has the cores to itself, and among
    others one thread each wastes nothing on splitting the work.
    """

    def __init__(
        self,
        *,
        precision: str = "int8",
        name: str | None = None,
        model_folder: str | Path | None = None,
        cache_dir: str | Path | None = None,
        batch_size: int = 32,
        threads: int | None = None,
        query_threads: int = 1,
        solo_query_threads: int | None = None,
    ) -> None:
        if precision not in ("int8", "fp32"):
            raise ConfigurationError(f"precision must be 'int8' or 'fp32', got {precision!r}")
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be at least 1, got {batch_size}")
        if solo_query_threads is not None and solo_query_threads < 0:
            raise ConfigurationError("solo_query_threads must be 0 (off) or more, got "
                                     f"{solo_query_threads}")
        self._precision = precision
        self._name = name or default_name(precision)
        self._folder = Path(model_folder) if model_folder is not None else None
        self._cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self._batch_size = batch_size
        self._threads = threads
        self._query_threads = query_threads
        self._solo_threads = solo_query_threads
        self._lock = threading.Lock()
        self._documents: OnnxEncoder | None = None
        self._queries: OnnxEncoder | None = None
        self._solo: OnnxEncoder | None = None
        self._solo_off = solo_query_threads == 0
        self._counter: Any = None
        self._running = 0  # embeddings under way, queries and document batches
        self._running_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def max_tokens(self) -> int:
        return MAX_TOKENS

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def precision(self) -> str:
        return self._precision

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        if not texts:
            return []
        matrix = self.encode_documents(texts)
        return [Vector(row) for row in matrix]

    def embed_query(self, text: str) -> Embedding:
        with self._embedding() as alone:
            encoder = self._solo_encoder() if alone and not cores_are_shared() else None
            return Vector((encoder or self._encoder(query=True)).encode([text])[0])

    def encode_documents(self, texts: Sequence[str]) -> Any:
        """A float32 matrix of unit vectors, one row per text, in input order."""
        with self._embedding():
            return self._encoder(query=False).encode(texts, self._batch_size)

    @contextmanager
    def _embedding(self) -> Iterator[bool]:
        """Counts the embedding under way; yields whether it is the only one."""
        with self._running_lock:
            self._running += 1
            alone = self._running == 1
        try:
            yield alone
        finally:
            with self._running_lock:
                self._running -= 1

    def count_tokens(self, text: str) -> int:
        """Tokens the model sees for ``text``, without special tokens or truncation."""
        return len(self._token_counter().encode(text, add_special_tokens=False).ids)

    def token_spans(self, text: str) -> list[tuple[int, int]] | None:
        """Where the tokens :meth:`count_tokens` counts lie (see
        :class:`ragloom.protocols.TokenSpanner`)."""
        return word_token_spans(self._token_counter(), text)

    def _token_counter(self) -> Any:
        if self._counter is None:
            counter = load_tokenizer(self._model_folder())
            counter.no_truncation()
            counter.no_padding()
            self._counter = counter
        return self._counter

    def warm_up(self) -> Path:
        """Export (if needed) and return the cache folder; loads no session."""
        from ragloom.embeddings.onnx_export import export_cached

        return export_cached(self._model_folder(), cache_dir=self._cache_dir)

    # ------------------------------------------------------------------ loading

    def _model_folder(self) -> Path:
        if self._folder is None:
            from ragloom.embeddings.local import bundled_model_path

            self._folder = bundled_model_path()
        return self._folder

    def _encoder(self, *, query: bool) -> OnnxEncoder:
        encoder = self._queries if query else self._documents
        if encoder is not None:
            return encoder
        with self._lock:
            if query and self._queries is None:
                self._queries = self._build(self._query_threads)
            if not query and self._documents is None:
                # Batches in parallel, one thread each, rather than every operator
                # split across the cores: no barrier per operator, so a core taken
                # by the file reader or another process slows one batch, not all.
                # 400 SciFact abstracts on 2 busy cores: 5-8 % less CPU; wall time
                # 25 % less with batches of 16 at load 12 (batches of 32: within noise).
                self._documents = self._build(1, workers=self._threads or available_cores())
            encoder = self._queries if query else self._documents
        assert encoder is not None
        return encoder

    def _solo_encoder(self) -> OnnxEncoder | None:
        """The session for a query embedded alone, or None when it would be the
        one-thread session anyway.

        A lone SciFact query (23 tokens, int8) on this 2-core machine: 3.98-5.89 ms
        with 2 threads against 6.12-9.36 ms with 1, for 5-60 % more CPU (on a core
        that is idle then); with another process busy on one core, 7.14 against
        7.25 ms, and on both, 10.7 against 14.9 ms (the session's idle threads sleep
        rather than spin). More CPU per query is what costs under a steady stream of
        queries, hence one thread then.
        """
        if self._solo is not None or self._solo_off:
            return self._solo
        threads = (self._solo_threads if self._solo_threads is not None
                   else min(2, available_cores()))
        if threads <= self._query_threads:
            self._solo_off = True  # decided once: no second session
            return None
        with self._lock:
            if self._solo is None:
                self._solo = self._build(threads, spin_within_runs=True)
        return self._solo

    def _build(self, threads: int, *, workers: int = 1,
               spin_within_runs: bool = False) -> OnnxEncoder:
        from ragloom.embeddings.onnx_export import FP32_FILE, INT8_FILE

        folder = self.warm_up()
        graph = folder / (INT8_FILE if self._precision == "int8" else FP32_FILE)
        return OnnxEncoder(graph, self._model_folder(), threads=threads, workers=workers,
                           spin_within_runs=spin_within_runs)


def default_name(precision: str) -> str:
    """What a knowledge base records: int8 vectors are a different vector space."""
    return "local:all-MiniLM-L6-v2-int8" if precision == "int8" else "local:all-MiniLM-L6-v2"


def onnxruntime_available() -> bool:
    """Whether onnxruntime can be imported, without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec("onnxruntime") is not None
    except (ImportError, ValueError):
        return False
