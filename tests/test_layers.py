"""The declared layers (pyproject.toml [tool.importlinter], docs/architecture.md) hold.

``lint-imports`` runs over this tree's ``src`` in a subprocess, so a module that
reaches up a layer (a lazy import inside a function counts) fails the suite as well as
``make lint``. A copy of the package with two such imports planted shows the contracts
catch them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter")

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"


def lint_imports(src: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with ``src`` first on the path, reading ``cwd/pyproject.toml``."""
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(no_cache=True, no_logo=True))")
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=300, check=False)


def test_every_contract_is_kept() -> None:
    result = lint_imports(SRC, ROOT)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "0 broken" in output
    # Every contract of pyproject.toml ran, the layers among them.
    assert "ragloom layers" in output and "KEPT" in output


def test_an_import_up_a_layer_breaks_the_contracts(tmp_path: Path) -> None:
    copy = tmp_path / "src"
    shutil.copytree(SRC / "ragloom", copy / "ragloom",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    # Retrieval reaching up to the graph, lazily; NaiveRag reaching up to advanced/.
    with (copy / "ragloom" / "retrieval" / "vector.py").open("a") as out:
        out.write("\n\ndef _planted() -> object:\n"
                  "    from ragloom.graph.retrieval import graph_search\n\n"
                  "    return graph_search\n")
    with (copy / "ragloom" / "rag.py").open("a") as out:
        out.write("\n\nfrom ragloom.advanced import RetrievalAugmentor  # noqa: E402\n")
    result = lint_imports(copy, tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "ragloom.retrieval.vector -> ragloom.graph.retrieval" in output
    assert "ragloom.rag -> ragloom.advanced" in output


def test_retrieval_and_rag_do_not_import_the_layers_above() -> None:
    """The dependencies the issue names, read from the import graph itself."""
    pairs = [("ragloom.retrieval", "ragloom.graph"), ("ragloom.rag", "ragloom.advanced"),
             ("ragloom.stores", "ragloom.retrieval"), ("ragloom.graph", "ragloom.retrieval")]
    code = ("import grimp, json, sys; g = grimp.build_graph('ragloom', cache_dir=None); "
            "print(json.dumps([g.chain_exists(importer=a, imported=b, as_packages=True) "
            "for a, b in json.loads(sys.argv[1])]))")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    result = subprocess.run([sys.executable, "-c", code, json.dumps(pairs)], env=env,
                            text=True, capture_output=True, timeout=300, check=True)
    chains = dict(zip(pairs, json.loads(result.stdout), strict=True))
    assert chains == {pairs[0]: False, pairs[1]: False, pairs[2]: False,
                      # The graph layer does use retrieval: the check sees real chains.
                      pairs[3]: True}
