"""Fast, deterministic stand-ins for unit tests: never the only test of a feature."""

from ragloom.testing.fakes import FailingQueryEmbedder, HashingEmbedder, ScriptedModel

__all__ = ["FailingQueryEmbedder", "HashingEmbedder", "ScriptedModel"]
