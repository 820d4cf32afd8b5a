"""MilvusStore's two collections per knowledge base: their names and schemas.

``rl_<name>_<hash>_c`` holds the chunks (id, document id, text, the analysed terms
Milvus's BM25 function indexes, metadata, the kind-tagged filter field ``fm``, the
chunk's position and the dense vector); ``rl_<name>_<hash>_d`` holds the document
records and one ``#collection`` row with the knowledge base's settings. Milvus needs
a vector in every collection; the documents' is a 2-dimensional placeholder.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

#: Milvus's VARCHAR limit, in bytes.
MAX_TEXT_BYTES = 65_535
METRIC_NAMES = {"cosine": "COSINE", "euclidean": "L2", "dot": "IP"}


def collection_names(name: str) -> tuple[str, str]:
    """The Milvus collections (chunks, documents) of a knowledge base name: Milvus
    allows only letters, digits and ``_``, so the name's hash keeps them apart."""
    slug = re.sub(r"[^A-Za-z0-9_]", "_", name)[:40]
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"rl_{slug}_{digest}_c", f"rl_{slug}_{digest}_d"


def documents_schema(pymilvus: Any, client: Any) -> tuple[Any, Any]:
    types = pymilvus.DataType
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", types.VARCHAR, is_primary=True, max_length=512)
    schema.add_field("source", types.VARCHAR, max_length=MAX_TEXT_BYTES)
    schema.add_field("data", types.JSON)
    schema.add_field("v", types.FLOAT_VECTOR, dim=2)
    params = client.prepare_index_params()
    params.add_index("v", index_type="FLAT", metric_type="L2")
    return schema, params


def chunks_schema(pymilvus: Any, client: Any, *, dimension: int, metric: str, index: str,
                  hnsw: tuple[int, int, int]) -> tuple[Any, Any]:
    types = pymilvus.DataType
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", types.VARCHAR, is_primary=True, max_length=512)
    schema.add_field("document_id", types.VARCHAR, max_length=512)
    schema.add_field("text", types.VARCHAR, max_length=MAX_TEXT_BYTES)
    # Our terms, space-separated; Milvus's standard tokenizer splits them back apart.
    schema.add_field("terms", types.VARCHAR, max_length=MAX_TEXT_BYTES, enable_analyzer=True,
                     analyzer_params={"tokenizer": "standard"})
    schema.add_field("metadata", types.JSON)
    schema.add_field("fm", types.JSON)
    schema.add_field("position", types.JSON)
    schema.add_field("dense", types.FLOAT_VECTOR, dim=dimension)
    schema.add_field("sparse", types.SPARSE_FLOAT_VECTOR)
    schema.add_function(pymilvus.Function(
        name="bm25", function_type=pymilvus.FunctionType.BM25,
        input_field_names=["terms"], output_field_names=["sparse"]))
    params = client.prepare_index_params()
    if index == "hnsw":
        m, ef_construction, _ = hnsw
        params.add_index("dense", index_type="HNSW", metric_type=METRIC_NAMES[metric],
                         params={"M": m, "efConstruction": ef_construction})
    else:
        params.add_index("dense", index_type="FLAT", metric_type=METRIC_NAMES[metric])
    # Replacing or deleting a document selects its chunks by document_id: without an
    # index that is a scan of the collection per document (ingest grows quadratically).
    params.add_index("document_id", index_type="INVERTED")
    params.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                     params={"bm25_k1": 1.2, "bm25_b": 0.75})
    return schema, params
