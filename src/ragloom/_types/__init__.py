"""The value types behind :mod:`ragloom.types`, one module per role.

``documents`` (documents, chunks, content ids, metadata), ``vectors`` (embeddings and
the matches stores and retrievers return), ``chat`` (messages, responses, prompts) and
``answers`` (``RagAnswer``). Import them from :mod:`ragloom.types`, which re-exports
every name; these modules are the package's own.
"""
