"""Run one piece of work on several threads at once, for concurrency tests."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_in_threads(work: Callable[[int], object], workers: int = 4) -> None:
    """Call ``work(0)`` ... ``work(workers - 1)`` at once, one thread each.

    Waits for all of them; if any raised, raises an :class:`AssertionError` listing
    every failure (chained to the first), so a test fails with what went wrong
    instead of a thread's traceback on stderr.
    """
    errors: list[BaseException] = []

    def guarded(worker: int) -> None:
        try:
            work(worker)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(worker,)) for worker in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise AssertionError(f"{len(errors)} of {workers} threads failed: {errors!r}") \
            from errors[0]
