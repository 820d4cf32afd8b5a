import subprocess
import sys


def test_import_ragloom_is_light() -> None:
    code = (
        "import sys, ragloom, ragloom.registry, ragloom.knowledge_base, ragloom.rag;"
        "heavy = [m for m in ('torch', 'transformers', 'typer', 'fastapi', 'sentence_transformers',"
        " 'openai', 'anthropic') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""


def test_public_api_names_resolve() -> None:
    import ragloom

    for name in ragloom.__all__:
        assert getattr(ragloom, name) is not None, name
