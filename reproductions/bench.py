"""Shared pieces of `dpverify bench`; each paper's benchmark is `reproductions/<paper>/bench.py`
(a `run_benchmarks(*, replicas, iterations, echo)` function)."""

from __future__ import annotations

import time
from collections.abc import Callable


def timed(function: Callable[[], object]) -> tuple[float, object]:
    """(wall seconds, result) of one call."""
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result
