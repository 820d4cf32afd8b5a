"""Lexical analysis shared by every keyword index and keyword query: the tokenizer
(:mod:`.tokenize`, FTS5's ``porter unicode61 remove_diacritics 2``) and the Porter
stemmer (:mod:`.stemmer`). It sits below the stores and retrieval, which both use it;
``ragloom.retrieval.tokenize`` and ``ragloom.retrieval.stemmer`` re-export it."""
