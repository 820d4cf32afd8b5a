"""The ONNX backends of the bundled all-MiniLM-L6-v2: export cache, fallback, agreement."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloom._threads import cores_shared
from ragloom.embeddings import onnx_export
from ragloom.embeddings.local import INT8_NAME, SentenceTransformerEmbedder, create_embedder
from ragloom.embeddings.onnx import (
    RUN_TOKENS,
    OnnxEmbedder,
    OnnxEncoder,
    default_name,
    mean_pool,
    run_batches,
)
from ragloom.errors import ConfigurationError, MissingDependencyError
from ragloom.protocols import EmbeddingProvider, TokenCounter
from ragloom.registry import make_embedder
from ragloom.types import Vector
from tests.embeddings.texts import MIXED_LENGTHS

SENTENCES = [
    "Staff get a 30 minute unpaid lunch break.",
    "Employees have half an hour for lunch, without pay.",
    "The capital gains tax rate changed in 2019.",
    "Mitochondrial DNA mutations accumulate with age in human muscle fibres.",
]


def values(embedding: object) -> np.ndarray:
    assert isinstance(embedding, Vector)
    return embedding.values


def fake_export(calls: list[Path]) -> object:
    def export(model_folder: Path, out: Path) -> None:
        calls.append(out)
        (out / onnx_export.FP32_FILE).write_bytes(b"fake")
        (out / onnx_export.MARKER).write_text("{}", encoding="utf-8")

    return export


# ------------------------------------------------------------------------ unit


def test_names_follow_the_vector_space() -> None:
    assert make_embedder("local:all-MiniLM-L6-v2", backend="torch").name == (
        "local:all-MiniLM-L6-v2")
    assert make_embedder("local:all-MiniLM-L6-v2", backend="onnx").name == (
        "local:all-MiniLM-L6-v2")
    int8 = make_embedder("local:all-MiniLM-L6-v2", backend="onnx-int8")
    assert int8.name == INT8_NAME == "local:all-MiniLM-L6-v2-int8"
    # The recorded name recreates the same embedder.
    again = make_embedder(INT8_NAME)
    assert isinstance(again, SentenceTransformerEmbedder)
    assert again.name == INT8_NAME
    assert again.backend == "onnx-int8"
    assert default_name("int8") == INT8_NAME
    assert isinstance(again, EmbeddingProvider)
    assert isinstance(again, TokenCounter)


def test_bad_backends_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="auto, torch, onnx, onnx-int8"):
        create_embedder("minilm", provider="local", backend="tensorrt")
    with pytest.raises(ConfigurationError, match="bundled"):
        SentenceTransformerEmbedder("BAAI/bge-small-en-v1.5", backend="onnx")
    with pytest.raises(ConfigurationError, match="int8"):
        create_embedder("all-MiniLM-L6-v2-int8", provider="local", backend="torch")
    with pytest.raises(ConfigurationError, match="precision"):
        OnnxEmbedder(precision="fp16")
    with pytest.raises(ConfigurationError, match="batch_size"):
        OnnxEmbedder(batch_size=0)


def test_auto_falls_back_to_torch_when_onnxruntime_is_missing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails
    embedder = make_embedder("local:all-MiniLM-L6-v2")
    assert isinstance(embedder, SentenceTransformerEmbedder)
    with caplog.at_level(logging.WARNING, logger="ragloom.embeddings.local"):
        assert embedder.backend == "torch"
    assert embedder.name == "local:all-MiniLM-L6-v2"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "onnxruntime is not installed" in warnings[0].getMessage()
    assert "\n" not in warnings[0].getMessage()


def test_explicit_onnx_without_onnxruntime_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    calls: list[Path] = []
    monkeypatch.setattr(onnx_export, "export", fake_export(calls))
    embedder = make_embedder(INT8_NAME, cache_dir=tmp_path)
    with pytest.raises(MissingDependencyError, match="onnxruntime") as caught:
        embedder.embed_query("hello")
    assert caught.value.extra == "fast"


def test_auto_falls_back_when_the_export_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(model_folder: Path, out: Path) -> None:
        raise ConfigurationError("the exporter broke")

    monkeypatch.setattr(onnx_export, "export", broken)
    embedder = SentenceTransformerEmbedder.bundled(cache_dir=tmp_path)
    with caplog.at_level(logging.WARNING, logger="ragloom.embeddings.local"):
        assert embedder._onnx_embedder() is None
    assert embedder.backend == "torch"
    assert "the exporter broke" in caplog.text
    assert list((tmp_path).glob("*.tmp-*")) == []  # no half-written cache left


def test_concurrent_first_uses_export_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    calls: list[Path] = []
    monkeypatch.setattr(onnx_export, "export", fake_export(calls))
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    cache = tmp_path / "cache"
    cache.mkdir()
    stale = cache / f"{onnx_export.cache_folder(folder, cache).name}.tmp-x"
    stale.mkdir()  # left by a killed export
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(
            onnx_export.export_cached(folder, cache_dir=tmp_path / "cache")))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len(set(results)) == 1
    assert onnx_export.is_complete(results[0])
    assert not stale.exists()
    assert not calls[0].exists()  # the temporary folder was renamed into place


def test_cache_folder_follows_ragloom_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv("RAGLOOM_CACHE_DIR", str(tmp_path))
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    first = onnx_export.cache_folder(folder)
    assert first.parent == tmp_path / "models"
    (folder / "model.safetensors").write_bytes(b"other weights")
    assert onnx_export.cache_folder(folder) != first  # new weights, new export


def test_mean_pool_ignores_padding_and_normalises() -> None:
    hidden = np.array([[[1.0, 0.0], [0.0, 1.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])
    pooled = mean_pool(hidden, mask)
    np.testing.assert_allclose(pooled, [[2 ** -0.5, 2 ** -0.5]], atol=1e-6)
    assert pooled.dtype == np.float32


@settings(max_examples=300, deadline=None)
@given(widths=st.lists(st.integers(0, 300), max_size=60), rows=st.integers(1, 40),
       tokens=st.integers(1, 2000))
def test_runs_keep_the_order_and_stay_within_their_budget(
        widths: list[int], rows: int, tokens: int) -> None:
    widths = sorted(widths, reverse=True)  # encode() hands them over longest first
    order = list(range(100, 100 + len(widths)))
    batches = run_batches(order, widths, rows, tokens)
    assert [i for batch in batches for i in batch] == order
    start = 0
    for batch in batches:
        assert 1 <= len(batch) <= rows
        widest = max(1, widths[start])
        if len(batch) > 1:
            assert len(batch) * widest <= tokens
        end = start + len(batch)
        if end < len(order):  # greedy: one more text would break a limit
            assert len(batch) == rows or (len(batch) + 1) * widest > tokens
        start = end


# ---------------------------------------------------------------- integration


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("ragloom-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAGLOOM_CACHE_DIR", str(root))
        yield root


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    embedder = SentenceTransformerEmbedder.bundled(backend="torch")
    return np.stack([values(v) for v in embedder.embed_documents(SENTENCES)])


@pytest.mark.integration
@pytest.mark.parametrize(("backend", "floor"), [("onnx", 0.9999), ("onnx-int8", 0.97)])
def test_unit_vectors_that_agree_with_torch(
    cache_dir: Path, torch_vectors: np.ndarray, backend: str, floor: float,
) -> None:
    embedder = make_embedder("local:all-MiniLM-L6-v2", backend=backend)
    got = np.stack([values(v) for v in embedder.embed_documents(SENTENCES)])
    assert got.shape == (len(SENTENCES), 384)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-4)
    cosines = np.sum(got * torch_vectors, axis=1)
    assert cosines.min() >= floor, cosines
    query = values(embedder.embed_query("How long is the lunch break?"))
    assert query.shape == (384,)
    assert float(query @ got[0]) > float(query @ got[2])
    assert embedder.count_tokens("hello world") == 2
    assert list((cache_dir / "models").glob("all-minilm-l6-v2-onnx-*/model-*.onnx"))


@pytest.mark.integration
def test_second_construction_reuses_the_export(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = OnnxEmbedder(precision="fp32")
    folder = first.warm_up()
    stamp = (folder / onnx_export.FP32_FILE).stat().st_mtime_ns

    def no_export(model_folder: Path, out: Path) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_export, "export", no_export)
    second = OnnxEmbedder(precision="fp32")
    assert second.warm_up() == folder
    assert values(second.embed_documents(["still works"])[0]).shape == (384,)
    assert (folder / onnx_export.FP32_FILE).stat().st_mtime_ns == stamp


@pytest.mark.integration
def test_order_is_kept_across_sorting_and_batches(cache_dir: Path) -> None:
    texts = MIXED_LENGTHS
    fp32 = OnnxEmbedder(precision="fp32", batch_size=2)
    one_by_one = np.stack([values(fp32.embed_query(t)) for t in texts])
    batched = np.stack([values(v) for v in fp32.embed_documents(texts)])
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    # int8 vectors depend a little on their batch mates; each must still be
    # nearest its own single embedding.
    int8 = OnnxEmbedder(precision="int8", batch_size=2)
    alone = np.stack([values(int8.embed_query(t)) for t in texts])
    together = np.stack([values(v) for v in int8.embed_documents(texts)])
    assert list(np.argmax(together @ alone.T, axis=1)) == list(range(len(texts)))
    assert fp32.embed_documents([]) == []


@pytest.mark.integration
def test_long_texts_run_a_few_at_a_time_and_short_ones_many(
        cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shapes: list[tuple[int, int]] = []
    run = OnnxEncoder._run_ids

    def watched(self: OnnxEncoder, rows: list[list[int]]) -> object:
        shapes.append((len(rows), max(len(row) for row in rows)))
        return run(self, rows)

    monkeypatch.setattr(OnnxEncoder, "_run_ids", watched)
    long_text = " ".join(["mitochondrial respiration declines with age"] * 60)
    embedder = OnnxEmbedder(batch_size=32, threads=1)
    embedder.encode_documents([long_text] * 6 + ["short text"] * 40)
    assert sum(count for count, _ in shapes) == 46
    long_runs = [(count, width) for count, width in shapes if width > 200]
    assert long_runs and all(count * width <= RUN_TOKENS for count, width in long_runs)
    assert max(count for count, width in shapes if width < 10) == 32  # batch_size caps


@pytest.mark.integration
def test_auto_uses_onnx_and_matches_torch(cache_dir: Path, torch_vectors: np.ndarray) -> None:
    embedder = make_embedder("local:minilm")
    got = np.stack([values(v) for v in embedder.embed_documents(SENTENCES)])
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.backend == "onnx"
    assert embedder.name == "local:all-MiniLM-L6-v2"
    np.testing.assert_allclose(got, torch_vectors, atol=1e-4)


@pytest.mark.integration
def test_document_batches_run_in_parallel_with_the_same_vectors(
        cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = MIXED_LENGTHS * 3
    one = OnnxEmbedder(precision="fp32", batch_size=4, threads=1).encode_documents(texts)
    seen: set[str] = set()
    run = OnnxEncoder._run_ids

    def watched(self: OnnxEncoder, rows: list[list[int]]) -> object:
        seen.add(threading.current_thread().name)
        return run(self, rows)

    monkeypatch.setattr(OnnxEncoder, "_run_ids", watched)
    two = OnnxEmbedder(precision="fp32", batch_size=4, threads=2).encode_documents(texts)
    np.testing.assert_allclose(two, one, atol=1e-5)
    assert seen == {"MainThread", "ragloom-onnx"}

    def broken(self: OnnxEncoder, rows: list[list[int]]) -> object:
        raise RuntimeError("the session failed")

    monkeypatch.setattr(OnnxEncoder, "_run_ids", broken)
    with pytest.raises(RuntimeError, match="the session failed"):
        OnnxEmbedder(precision="fp32", batch_size=4, threads=2).encode_documents(texts)


@pytest.mark.integration
def test_a_query_embedded_alone_gets_more_threads_and_the_same_vector(
        cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    build = OnnxEmbedder._build

    def counted(self: OnnxEmbedder, threads: int, *, workers: int = 1,
                spin_within_runs: bool = False) -> object:
        built.append(threads)
        return build(self, threads, workers=workers, spin_within_runs=spin_within_runs)

    monkeypatch.setattr(OnnxEmbedder, "_build", counted)
    embedder = OnnxEmbedder(precision="int8", solo_query_threads=2)
    alone = values(embedder.embed_query(SENTENCES[3]))
    assert built == [2]
    # The lone query's session spins between its operators and stops after a run.
    assert embedder._solo is not None
    solo = embedder._solo._session.get_session_options()
    assert solo.get_session_config_entry("session.intra_op.allow_spinning") == "1"
    assert solo.get_session_config_entry("session.force_spinning_stop") == "1"
    with embedder._embedding():  # as if another query or a document batch ran
        among = values(embedder.embed_query(SENTENCES[3]))
    assert built == [2, 1]
    shared = embedder._encoder(query=True)._session.get_session_options()
    assert shared.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    np.testing.assert_allclose(alone, among, atol=1e-5)
    again = values(embedder.embed_query(SENTENCES[3]))  # alone again: the 2-thread one
    assert built == [2, 1]
    np.testing.assert_allclose(again, alone, atol=1e-6)
    calls: list[str] = []
    run = OnnxEncoder.encode

    def watched(self: OnnxEncoder, texts: Sequence[str], batch_size: int = 32) -> object:
        calls.append("solo" if self is embedder._solo else "one")
        return run(self, texts, batch_size)

    monkeypatch.setattr(OnnxEncoder, "encode", watched)
    with cores_shared():  # other work of the process holds a core
        embedder.embed_query(SENTENCES[0])
    embedder.embed_query(SENTENCES[0])
    assert calls == ["one", "solo"]

    built.clear()
    one = OnnxEmbedder(precision="int8", solo_query_threads=1)
    one.embed_query(SENTENCES[0])
    assert built == [1]  # no second session when it would be the same
    with pytest.raises(ConfigurationError, match="solo_query_threads"):
        OnnxEmbedder(solo_query_threads=-1)


_SPIN_PROBE = """
import sys, time
from ragloom.embeddings.onnx import OnnxEmbedder
embedder = OnnxEmbedder(precision="int8", solo_query_threads=2)
embedder.embed_query("warm up")
assert embedder._solo is not None
after = []
for n in range(5):
    embedder.embed_query(f"graphene oxide membranes {n}")
    before = time.process_time()
    time.sleep(0.05)
    after.append(time.process_time() - before)
print(sorted(after)[2])
"""


@pytest.mark.integration
def test_a_lone_query_leaves_no_thread_spinning_after_it(cache_dir: Path) -> None:
    # The lone query's session spins between operators; after the run its threads
    # must sleep, or an idle server would keep a core busy. Measured here: with the
    # spinning left on, the 50 ms after a query cost about 30-50 ms of CPU; with it
    # stopped at the end of the run, under 0.1 ms. A fresh process, so that no other
    # test's threads count.
    import subprocess

    done = subprocess.run([sys.executable, "-c", _SPIN_PROBE], capture_output=True,
                          text=True, timeout=300, check=True)
    assert float(done.stdout.strip().splitlines()[-1]) < 0.01, done.stdout
