"""One BLAS thread for the length of a single query.

A query is one matrix-vector product; splitting it over OpenBLAS's threads costs
more in hand-off than it saves, and on a busy 2-core machine it is far worse
(SciFact-sized matrix, 12k x 384: 16 ms with 2 threads under load, 0.56 ms with
one). The limit is held while any search runs and lifted when the last
overlapping one ends (see :func:`ragloom._threads.blas_threads`), so concurrent
searches never leave the process at one BLAS thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ragloom._threads import blas_threads


@contextmanager
def single_blas_thread() -> Iterator[None]:
    with blas_threads(1):
        yield
