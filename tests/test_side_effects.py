"""Library calls leave the process as they found it: no HF_HUB_OFFLINE that stops a later
hf: model from downloading, no BLAS or torch thread count left behind (also when
searches overlap in threads), no logging or verbosity changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable

import pytest

from ragloom._threads import ScopedSetting
from ragloom.retrieval.threads import single_blas_thread


def _overlap(scope: Callable[[], object], inside: Callable[[], object]) -> object:
    """A enters, B enters, A leaves, B looks and leaves: the order that used to leak."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[object] = []

    def first() -> None:
        with scope():  # type: ignore[attr-defined]
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def second() -> None:
        a_in.wait(5)
        with scope():  # type: ignore[attr-defined]
            b_in.set()
            a_out.wait(5)
            seen.append(inside())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    return seen[0]


def test_scoped_setting_restores_after_overlapping_scopes() -> None:
    state = {"value": 4}
    setting = ScopedSetting(lambda: state["value"], lambda v: state.update(value=v))
    held_inside = _overlap(lambda: setting.held(1), lambda: state["value"])
    assert held_inside == 1  # still limited while the second scope runs
    assert state["value"] == 4 and setting.depth == 0


def test_a_closing_scope_gives_the_setting_back_to_the_scopes_still_open() -> None:
    state = {"value": 4}
    setting = ScopedSetting(lambda: state["value"], lambda v: state.update(value=v))
    outer = setting.held(1)
    outer.__enter__()
    with setting.held(2):  # a model's generation inside a server's lifetime, say
        assert state["value"] == 2
    assert state["value"] == 1 and setting.depth == 1
    first, second = setting.held(3), setting.held(5)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # not nested: the later scope keeps its value
    assert state["value"] == 5
    second.__exit__(None, None, None)
    assert state["value"] == 1
    outer.__exit__(None, None, None)
    assert state["value"] == 4 and setting.depth == 0


def test_overlapping_searches_leave_blas_threads_alone() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas() -> list[int]:
        return [i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"]

    before = blas()
    if not before or min(before) < 2:
        pytest.skip("no multi-threaded BLAS pool here")
    # Two searches that overlap without nesting (as threads do), interleaved in this
    # thread: OpenBLAS applies a count set from another thread unreliably.
    first, second = single_blas_thread(), single_blas_thread()
    first.__enter__()
    second.__enter__()
    assert set(blas()) == {1}
    first.__exit__(None, None, None)
    assert set(blas()) == {1}  # the second search still runs
    second.__exit__(None, None, None)
    assert blas() == before


PROBE = r"""
import json, logging, os, sys
import torch
from ragloom._threads import available_cores
from ragloom.registry import make_embedder

torch.set_num_threads(available_cores() + 1)
before = {"torch_threads": torch.get_num_threads(), "root": logging.getLogger().level,
          "handlers": len(logging.getLogger().handlers)}
int8 = make_embedder("local:all-MiniLM-L6-v2-int8")
int8.embed_documents(["a first sentence", "a second one"])
int8.embed_query("a query")
reference = make_embedder("local:all-MiniLM-L6-v2", backend="torch")
reference.embed_documents(["a first sentence"])
reference.embed_query("a query")
reference.count_tokens("tokens")

import huggingface_hub.constants as hub
from transformers.utils import logging as hf_logging
print(json.dumps({
    "env": sorted(k for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TRANSFORMERS_VERBOSITY",
                              "HF_HUB_DISABLE_PROGRESS_BARS", "TOKENIZERS_PARALLELISM")
                  if k in os.environ),
    "hub_offline": bool(hub.HF_HUB_OFFLINE),
    "verbosity": hf_logging.get_verbosity(),
    "progress_bars": hf_logging.is_progress_bar_enabled(),
    "before": before,
    "after": {"torch_threads": torch.get_num_threads(), "root": logging.getLogger().level,
              "handlers": len(logging.getLogger().handlers)},
}))
"""


@pytest.mark.integration
def test_loading_the_bundled_embedder_changes_nothing_process_wide() -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "TRANSFORMERS_", "TOKENIZERS_"))}
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["env"] == []
    assert seen["hub_offline"] is False  # a later hf: model may still download
    assert seen["verbosity"] == 30 and seen["progress_bars"] is True  # transformers' defaults
    assert seen["after"] == seen["before"]
