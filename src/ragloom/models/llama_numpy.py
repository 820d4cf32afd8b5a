"""SmolLM2 (a Llama-architecture model) run with NumPy alone: the fast local path.

Importing torch and transformers costs 3-8 s of CPU before the first token, more than
a whole short answer. A 135M-parameter Llama is small enough to run as plain NumPy
matrix products with a key/value cache, so ``ragloom ask`` needs neither.

The weights come from the model folder converted once from the bundled GGUF (see
:mod:`ragloom.models.local`) and are re-laid out once more into
``<cache>/<folder>-numpy``: per layer, the query/key/value projections fused into
one matrix and the gate/up projections into another, stored transposed (``x @ W``)
as ``.npy`` files that load memory-mapped in milliseconds. The tokenizer is the
folder's ``tokenizer.json`` through the ``tokenizers`` library.

The maths follows transformers' ``LlamaForCausalLM`` (RMSNorm, rotary embeddings
with ``rotate_half``, grouped-query attention, SiLU-gated MLP, tied embeddings);
``tests/models/test_local.py`` compares its logits with transformers'.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ragloom.errors import ConfigurationError, MissingDependencyError
from ragloom.model_cache import MARKER, build_cached

F32 = npt.NDArray[np.float32]
RECIPE = 1
_ARRAYS = ("embed", "norm", "attn_norm", "mlp_norm", "qkv", "o", "gate_up", "down")


@dataclass(frozen=True)
class LlamaConfig:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    rope_theta: float
    eps: float
    vocab: int
    context: int

    @classmethod
    def from_folder(cls, folder: Path) -> LlamaConfig:
        data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if data.get("model_type") != "llama" or not data.get("tie_word_embeddings", False):
            raise ConfigurationError(
                f"{folder} is not a Llama model with tied embeddings; use backend='torch'")
        rope = data.get("rope_parameters") or {}
        if rope.get("rope_type", "default") != "default" or data.get("rope_scaling"):
            raise ConfigurationError(f"{folder} uses scaled rotary embeddings; "
                                     "use backend='torch'")
        hidden = int(data["hidden_size"])
        heads = int(data["num_attention_heads"])
        return cls(
            layers=int(data["num_hidden_layers"]), hidden=hidden, heads=heads,
            kv_heads=int(data.get("num_key_value_heads", heads)),
            head_dim=int(data.get("head_dim") or hidden // heads),
            intermediate=int(data["intermediate_size"]),
            rope_theta=float(rope.get("rope_theta", data.get("rope_theta", 10000.0))),
            eps=float(data.get("rms_norm_eps", 1e-5)), vocab=int(data["vocab_size"]),
            context=int(data.get("max_position_embeddings", 2048)))


def numpy_cache_folder(model_folder: Path) -> Path:
    return model_folder.parent / f"{model_folder.name}-numpy{RECIPE}"


def export_numpy_cached(model_folder: Path) -> Path:
    """``<folder>-numpy<recipe>``: the weights re-laid out for :class:`NumpyLlama`."""
    return build_cached(numpy_cache_folder(model_folder),
                        lambda work: _export(model_folder, work),
                        what="preparing the language model for NumPy (a few seconds)")


def _export(model_folder: Path, out: Path) -> None:
    try:
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise MissingDependencyError("safetensors", "local") from exc
    config = LlamaConfig.from_folder(model_folder)
    weights = load_file(str(model_folder / "model.safetensors"))

    def layer(i: int, name: str) -> F32:
        return np.asarray(weights[f"model.layers.{i}.{name}.weight"], dtype=np.float32)

    arrays: dict[str, F32] = {
        "embed": np.asarray(weights["model.embed_tokens.weight"], dtype=np.float32),
        "norm": np.asarray(weights["model.norm.weight"], dtype=np.float32),
        "attn_norm": np.stack([layer(i, "input_layernorm") for i in range(config.layers)]),
        "mlp_norm": np.stack([layer(i, "post_attention_layernorm")
                              for i in range(config.layers)]),
        "qkv": np.stack([np.concatenate([layer(i, f"self_attn.{p}_proj") for p in "qkv"]).T
                         for i in range(config.layers)]),
        "o": np.stack([layer(i, "self_attn.o_proj").T for i in range(config.layers)]),
        "gate_up": np.stack([np.concatenate([layer(i, "mlp.gate_proj"),
                                             layer(i, "mlp.up_proj")]).T
                             for i in range(config.layers)]),
        "down": np.stack([layer(i, "mlp.down_proj").T for i in range(config.layers)]),
    }
    for name, array in arrays.items():
        np.save(out / f"{name}.npy", np.ascontiguousarray(array, dtype=np.float32))
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json",
                 "chat_template.jinja", "generation_config.json"):
        if (model_folder / name).is_file():
            (out / name).write_bytes((model_folder / name).read_bytes())
    (out / MARKER).write_text(json.dumps({"from": str(model_folder), "recipe": RECIPE}),
                              encoding="utf-8")


class NumpyLlama:
    """The model's forward pass over a key/value cache. Not thread-safe: one
    generation at a time (the caller holds a lock)."""

    def __init__(self, folder: Path) -> None:
        self.config = LlamaConfig.from_folder(folder)
        self.w = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
        c = self.config
        self._inv_freq = 1.0 / (c.rope_theta ** (np.arange(0, c.head_dim, 2) / c.head_dim))
        self.reset()

    def reset(self) -> None:
        c = self.config
        self._k = np.zeros((c.layers, c.kv_heads, 0, c.head_dim), dtype=np.float32)
        self._v = np.zeros_like(self._k)
        self.length = 0

    def _rms(self, x: F32, weight: Any) -> F32:
        variance = np.mean(x * x, axis=-1, keepdims=True)
        normed: F32 = (x / np.sqrt(variance + self.config.eps) * weight).astype(np.float32)
        return normed

    def _rope(self, x: F32, positions: npt.NDArray[np.int64]) -> F32:
        # x: (heads, T, head_dim); transformers' rotate_half convention.
        freqs = np.outer(positions, self._inv_freq)
        cos = np.cos(np.concatenate([freqs, freqs], axis=-1)).astype(np.float32)
        sin = np.sin(np.concatenate([freqs, freqs], axis=-1)).astype(np.float32)
        half = x.shape[-1] // 2
        rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
        turned: F32 = (x * cos + rotated * sin).astype(np.float32)
        return turned

    def forward(self, ids: Sequence[int]) -> F32:
        """Append ``ids`` to the cached sequence; the logits after the last one."""
        c, w = self.config, self.w
        steps = len(ids)
        positions = np.arange(self.length, self.length + steps)
        total = self.length + steps
        x = np.asarray(w["embed"][np.asarray(ids)], dtype=np.float32)
        q_size, kv_size = c.heads * c.head_dim, c.kv_heads * c.head_dim
        group = c.heads // c.kv_heads
        scale = np.float32(1.0 / np.sqrt(c.head_dim))
        mask = None
        if steps > 1:
            future = np.arange(total)[None, :] > positions[:, None]
            mask = np.where(future, np.float32(-1e30), np.float32(0.0))
        new_k = np.empty((c.layers, c.kv_heads, total, c.head_dim), dtype=np.float32)
        new_v = np.empty_like(new_k)
        new_k[:, :, : self.length] = self._k
        new_v[:, :, : self.length] = self._v
        for i in range(c.layers):
            h = self._rms(x, w["attn_norm"][i])
            qkv = h @ w["qkv"][i]
            q = qkv[:, :q_size].reshape(steps, c.heads, c.head_dim).transpose(1, 0, 2)
            k = qkv[:, q_size:q_size + kv_size].reshape(steps, c.kv_heads, c.head_dim)
            v = qkv[:, q_size + kv_size:].reshape(steps, c.kv_heads, c.head_dim)
            new_k[i, :, self.length:] = self._rope(k.transpose(1, 0, 2), positions)
            new_v[i, :, self.length:] = v.transpose(1, 0, 2)
            q = self._rope(q, positions).reshape(c.kv_heads, group * steps, c.head_dim)
            scores = (q @ new_k[i].transpose(0, 2, 1)) * scale  # (kv, group*T, total)
            scores = scores.reshape(c.kv_heads, group, steps, total)
            if mask is not None:
                scores = scores + mask
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            attended = scores.reshape(c.kv_heads, group * steps, total) @ new_v[i]
            attended = attended.reshape(c.heads, steps, c.head_dim).transpose(1, 0, 2)
            x = x + attended.reshape(steps, q_size) @ w["o"][i]
            h = self._rms(x, w["mlp_norm"][i])
            gate_up = h @ w["gate_up"][i]
            gate, up = gate_up[:, : c.intermediate], gate_up[:, c.intermediate:]
            x = x + ((gate / (1.0 + np.exp(-gate))) * up).astype(np.float32) @ w["down"][i]
        self._k, self._v, self.length = new_k, new_v, total
        last = self._rms(x[-1:], w["norm"])
        logits: F32 = (last @ w["embed"].T)[0]
        return logits


def greedy_tokens(model: NumpyLlama, prompt: Sequence[int], *, max_new_tokens: int,
                  eos: set[int], max_repeat: int = 8) -> Iterator[int]:
    """Token ids chosen greedily after ``prompt``, until an end token or the budget.

    A token repeated ``max_repeat`` times in a row ends generation: a small model
    that starts "1000000..." never stops on its own.
    """
    model.reset()
    logits = model.forward(prompt)
    previous, run = -1, 0
    for _ in range(max_new_tokens):
        token = int(np.argmax(logits))
        if token in eos:
            return
        run = run + 1 if token == previous else 1
        if run >= max_repeat:
            return
        previous = token
        yield token
        logits = model.forward([token])


def sampled_tokens(model: NumpyLlama, prompt: Sequence[int], *, max_new_tokens: int,
                   eos: set[int], temperature: float, rng: np.random.Generator) -> Iterator[int]:
    """Token ids sampled at ``temperature`` after ``prompt``, until an end token."""
    model.reset()
    logits = model.forward(prompt)
    for _ in range(max_new_tokens):
        scaled = (logits - logits.max()) / max(temperature, 1e-6)
        weights = np.exp(scaled.astype(np.float64))
        token = int(rng.choice(len(weights), p=weights / weights.sum()))
        if token in eos:
            return
        yield token
        logits = model.forward([token])
