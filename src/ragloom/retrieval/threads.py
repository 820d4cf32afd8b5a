"""One BLAS thread for the length of a single query.

A query is one matrix-vector product; splitting it over OpenBLAS's threads costs
more in hand-off than it saves, and on a busy 2-core machine it is far worse
(SciFact-sized matrix, 12k x 384: 16 ms with 2 threads under load, 0.56 ms with
one). The limit is set and restored around each search through a cached
``threadpoolctl`` controller (about 10 microseconds); without threadpoolctl
installed, searches run with the BLAS library's own setting.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_controller: Any = None
_unavailable = False


def _get_controller() -> Any:
    global _controller, _unavailable
    if _controller is None and not _unavailable:
        with _lock:
            if _controller is None and not _unavailable:
                try:
                    from threadpoolctl import ThreadpoolController
                except ImportError:
                    _unavailable = True
                    return None
                _controller = ThreadpoolController()
    return _controller


@contextmanager
def single_blas_thread() -> Iterator[None]:
    controller = _get_controller()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield
