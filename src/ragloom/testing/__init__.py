"""Fast, deterministic stand-ins for unit tests: never the only test of a feature."""

from ragloom.testing.fakes import HashingEmbedder, ScriptedModel

__all__ = ["HashingEmbedder", "ScriptedModel"]
