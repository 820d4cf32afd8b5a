"""Export the bundled all-MiniLM-L6-v2 to ONNX once, on this machine, and cache it.

The export needs torch, transformers, onnx and onnxruntime; running the result
needs only onnxruntime and tokenizers. It writes two graphs:

* ``model-fp32.onnx``: the BERT encoder (last hidden state), with onnxruntime's
  transformer fusions (attention, layer norm, GELU) applied offline;
* ``model-int8.onnx``: the same graph with its MatMul and attention weights
  quantised to int8 per output channel; activations are quantised at run time
  (``quantize_dynamic``), so no calibration data is needed.

The cache lives in ``$RAGLOOM_CACHE_DIR/models`` (or ``~/.cache/ragloom/models``),
like the local language model's: written to a temporary folder, checked, then
renamed into place, under a lock file so concurrent first uses export once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ragloom.errors import ConfigurationError, MissingDependencyError
from ragloom.model_cache import MARKER, build_cached, default_cache_dir
from ragloom.model_cache import is_complete as is_complete

FP32_FILE = "model-fp32.onnx"
INT8_FILE = "model-int8.onnx"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
# Bump when the export recipe changes, so old caches are not reused.
RECIPE = 1
OPSET = 17
NUM_HEADS = 12
HIDDEN_SIZE = 384
# A freshly exported graph must reproduce torch on a padded batch: a tracing bug
# (for instance a padding branch frozen into the graph) shows up here, not later.
FP32_MIN_COSINE = 0.9999
INT8_MIN_COSINE = 0.95

_CHECK_TEXTS = (
    "Staff get a 30 minute unpaid lunch break.",
    "Proteins fold into their native structure, guided by hydrophobic collapse "
    "and hydrogen bonds between residues of the backbone.",
)


def cache_folder(model_folder: Path, cache_dir: Path | None = None) -> Path:
    """The cache folder for a model folder; changed weights (size, mtime) get a new one."""
    weights = model_folder / "model.safetensors"
    if not weights.is_file():
        weights = model_folder / "config.json"
    stat = weights.stat()
    key = hashlib.sha256(
        f"{weights.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{RECIPE}".encode()
    ).hexdigest()
    return (cache_dir or default_cache_dir()) / f"all-minilm-l6-v2-onnx-{key[:16]}"


def export_cached(model_folder: Path, *, cache_dir: Path | None = None) -> Path:
    """The folder holding both ONNX graphs, exported on first use and reused after."""
    return build_cached(cache_folder(model_folder, cache_dir),
                        lambda work: export(model_folder, work),
                        what="exporting the embedding model to ONNX (about 10 s)")


def export(model_folder: Path, out: Path) -> None:
    """Write both graphs and the marker into ``out`` (an empty folder)."""
    torch, transformers = _import_exporters()
    try:
        import onnx
        import onnxruntime
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.transformers import optimizer
    except ImportError as exc:
        raise MissingDependencyError(
            exc.name or "onnx", "fast", purpose="exporting the embedding model to ONNX"
        ) from exc
    from ragloom._threads import quiet_loading

    try:
        with quiet_loading():
            model = transformers.AutoModel.from_pretrained(
                str(model_folder), local_files_only=True, attn_implementation="eager"
            )
        model.eval()
        # Before the export: the TorchScript exporter leaves the module changed
        # (its outputs drift to cosine ~0.95 afterwards, measured with torch 2.13).
        reference = _torch_embed(torch, model, model_folder)
        raw = out / "model-raw.onnx"
        _torch_export(torch, model, raw)
        fused = optimizer.optimize_model(
            str(raw), model_type="bert", num_heads=NUM_HEADS, hidden_size=HIDDEN_SIZE,
            opt_level=1,
        )
        fused.save_model_to_file(str(out / FP32_FILE))
        raw.unlink()
        with _quiet_root_logger():  # the quantiser logs advice meant for CNNs
            quantize_dynamic(
                str(out / FP32_FILE), str(out / INT8_FILE),
                weight_type=QuantType.QInt8, per_channel=True,
                # The fused Attention ops hide their outputs' types from shape inference.
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
    except (MissingDependencyError, ConfigurationError):
        raise
    except Exception as exc:
        raise ConfigurationError(
            f"could not export the embedding model in {model_folder} to ONNX: {exc}. "
            "Use backend='torch' to embed without ONNX"
        ) from exc
    for file, floor in ((FP32_FILE, FP32_MIN_COSINE), (INT8_FILE, INT8_MIN_COSINE)):
        got = _onnx_embed(out / file, model_folder)
        cosine = float(np.min(np.sum(got * reference, axis=1)))
        if cosine < floor:
            raise ConfigurationError(
                f"the ONNX export {file} disagrees with the torch model (cosine {cosine:.4f} "
                f"< {floor}); use backend='torch' and report this with your versions of "
                "torch, transformers and onnxruntime"
            )
    record = {
        "source": str(model_folder), "recipe": RECIPE, "opset": OPSET,
        "torch": str(torch.__version__), "transformers": str(transformers.__version__),
        "onnxruntime": str(onnxruntime.__version__),
    }
    (out / MARKER).write_text(json.dumps(record, indent=2), encoding="utf-8")


def _import_exporters() -> tuple[Any, Any]:
    # The export reads a local folder only (local_files_only=True), so the hub stays
    # as the application set it: no HF_HUB_OFFLINE for the whole process.
    try:
        import torch
    except ImportError as exc:
        raise MissingDependencyError(
            "torch", "local", purpose="exporting the embedding model to ONNX"
        ) from exc
    try:
        import transformers
    except ImportError as exc:
        raise MissingDependencyError(
            "transformers", "local", purpose="exporting the embedding model to ONNX"
        ) from exc
    return torch, transformers


def _torch_export(torch: Any, model: Any, path: Path) -> None:
    class Encoder(torch.nn.Module):  # type: ignore[misc]
        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            ).last_hidden_state

    example = torch.ones(2, 16, dtype=torch.long)
    # A padded example row: with an all-ones mask transformers may skip masking,
    # and the tracer would freeze that shortcut into the graph.
    mask = example.clone()
    mask[1, 10:] = 0
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUT_NAMES, "last_hidden_state")}
    import warnings

    with warnings.catch_warnings(), torch.no_grad():
        # The TorchScript exporter is deprecated and chatty; the torch.export one
        # needs onnxscript, one more dependency, for the same graph.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Encoder(model), (example, mask, torch.zeros_like(example)), str(path),
            input_names=list(INPUT_NAMES), output_names=["last_hidden_state"],
            dynamic_axes=axes, opset_version=OPSET, dynamo=False,
        )


def _torch_embed(torch: Any, model: Any, model_folder: Path) -> Any:
    from ragloom.embeddings.onnx import load_tokenizer, mean_pool

    batch = load_tokenizer(model_folder).encode_batch(list(_CHECK_TEXTS))
    ids = torch.tensor([item.ids for item in batch], dtype=torch.long)
    mask = torch.tensor([item.attention_mask for item in batch], dtype=torch.long)
    with torch.no_grad():
        hidden = model(input_ids=ids, attention_mask=mask,
                       token_type_ids=torch.zeros_like(ids)).last_hidden_state
    return mean_pool(hidden.numpy(), mask.numpy())


def _onnx_embed(path: Path, model_folder: Path) -> Any:
    from ragloom.embeddings.onnx import OnnxEncoder

    return OnnxEncoder(path, model_folder, threads=1).encode(list(_CHECK_TEXTS))


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(previous)
