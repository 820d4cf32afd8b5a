"""Adapters that put ragloom inside other frameworks, one module per framework.

* :mod:`ragloom.integrations.langchain`: ``RagloomVectorStore``, ``RagloomRetriever``,
  ``RagloomEmbeddings`` (extra ``ragloom[langchain]``);
* :mod:`ragloom.integrations.haystack`: ``RagloomDocumentStore``, ``RagloomRetriever``
  (extra ``ragloom[haystack]``);
* :mod:`ragloom.integrations.llama_index`: ``RagloomVectorStore``, ``RagloomEmbedding``
  (extra ``ragloom[llama-index]``).

Each is a thin layer over a :class:`~ragloom.knowledge_base.VectorKnowledgeBase`: the
store, embedder, search and filters are ragloom's own. Nothing here is imported by
``import ragloom``; import the module of the framework you use.
"""
