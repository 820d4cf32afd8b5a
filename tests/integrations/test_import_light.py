"""``import ragloom`` imports no framework and no adapter; a missing framework is a clear
MissingDependencyError naming the extra."""

from __future__ import annotations

import subprocess
import sys


def test_import_ragloom_imports_no_framework() -> None:
    code = ("import sys, ragloom, ragloom.knowledge_base, ragloom.stores.sqlite;"
            "print(','.join(m for m in ('langchain_core', 'haystack', 'llama_index',"
            " 'ragloom.integrations') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == ""


def test_a_missing_framework_names_the_extra() -> None:
    code = ("import sys; sys.modules['haystack'] = None\n"
            "try:\n    import ragloom.integrations.haystack\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.startswith("MissingDependencyError")
    assert "pip install 'ragloom[haystack]'" in done.stdout
