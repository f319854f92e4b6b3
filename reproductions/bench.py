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


def report_speedup(echo: Callable[[str], None], *, batched_rate: float, loop_rate: float, replicas: int, target: float,
                   unit: str = "iterations", loop: str = "per-agent loop", note: str = "same numbers, checked"
                   ) -> dict[str, float]:
    """Print the batched and loop rates and the speed-up against its target; return them by name."""
    speedup = batched_rate / loop_rate
    echo(f"  batched:           {batched_rate:10.1f} {unit}/s  ({batched_rate * replicas:,.0f} replica-{unit}/s)")
    echo(f"  {loop + ':':<18} {loop_rate:10.2f} {unit}/s  ({note})")
    echo(f"  speed-up:          {speedup:10.1f}x  (target >= {target:g}x: {'met' if speedup >= target else 'NOT met'})")
    return {f"batched_{unit}_per_second": batched_rate, f"loop_{unit}_per_second": loop_rate, "speedup": speedup}
