"""How many torch threads the in-process models use.

On small machines torch's intra-op pool and the BLAS pool fight for the same
cores, and torch's default (all logical CPUs) is not always the fastest. The
local models call :func:`use_torch_threads` before each piece of work with the
count measured best for it. torch is imported only when a model already loaded it.
"""

from __future__ import annotations

import os
import sys
import threading

_lock = threading.Lock()


def available_cores() -> int:
    """CPUs this process may run on (respects affinity masks and cgroup cpusets)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def use_torch_threads(count: int) -> None:
    """Set torch's intra-op thread count if it differs.

    Call it in the thread that runs the work: with OpenMP the count is kept per
    thread, so a worker thread's setting does not change the caller's.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return
    with _lock:
        if torch.get_num_threads() != count:
            torch.set_num_threads(count)


def quiet_model_libraries() -> None:
    """Silence transformers' progress bars and info logs.

    They write to the terminal on every model load ("Loading weights", GGUF
    conversion), which drowns the CLI's own output; real errors still raise.
    """
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import transformers

        transformers.utils.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
        transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except ImportError:  # the caller reports the missing dependency
        pass
