"""``/v1`` work inside the server's bounded pools, never Starlette's default one.

Starlette runs a sync endpoint, and iterates a sync generator handed to a
``StreamingResponse``, on its process-wide thread pool (40 threads): 44 streamed
chat completions took all of it and every sync route waited behind them, and a
hosted model saw as many concurrent calls as there were streams. Here:

* :func:`pooled_route_class` makes each sync endpoint of a router run in the
  server's CPU pool (``deps.cpu``);
* :func:`stream_in_pool` runs a whole stream (a sync iterator, e.g. a model's
  tokens) as one task of the model pool (``deps.slow``): at most
  ``--model-threads`` generations run at once, the others wait for a slot, and the
  event loop only forwards what the pool produces. A client that goes away stops
  its generation at the next item.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

from ragloom.server.v1.errors import OpenAIRoute

T = TypeVar("T")
Runner = Callable[..., Awaitable[Any]]
_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def pooled_route_class(runner: Runner) -> type[OpenAIRoute]:
    """An :class:`OpenAIRoute` whose sync endpoints run through ``runner``."""

    class PooledRoute(OpenAIRoute):
        def __init__(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
            if not (inspect.iscoroutinefunction(endpoint)
                    or inspect.isasyncgenfunction(endpoint)):
                endpoint = _pooled(endpoint, runner)
            super().__init__(path, endpoint, **options)

    return PooledRoute


def _pooled(function: Callable[..., Any], runner: Runner) -> Callable[..., Any]:
    @functools.wraps(function)
    async def endpoint(*args: Any, **kwargs: Any) -> Any:
        return await runner(functools.partial(function, *args, **kwargs))

    return endpoint


async def stream_in_pool(runner: Runner, items: Iterator[T]) -> AsyncIterator[T]:
    """``items``, produced by one task of ``runner``'s pool and yielded here."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()

    def put(item: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, item)

    def pump() -> None:
        try:
            for item in items:
                put(item)
                if stop.is_set():
                    break
        except BaseException as exc:  # handed to the reader, which raises it
            put(_Failed(exc))
        finally:
            close = getattr(items, "close", None)
            if callable(close):
                close()
            put(_END)

    task = asyncio.ensure_future(runner(pump))
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        while True:
            item = await queue.get()
            if item is _END:
                break
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        stop.set()
