"""Grounded answers: the answer engine (:mod:`ragloom.answering.engine`) and its strategies."""
