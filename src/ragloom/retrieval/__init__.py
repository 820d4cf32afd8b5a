"""Retrieval: search modes, score normalisation, fusion rankers and retrievers."""
