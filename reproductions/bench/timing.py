"""How `dpverify bench` times: warm-up, interleaved repeats, medians with ranges, paired ratios, scaling
fits and target verdicts. Nothing here knows a paper; reproductions/<paper>/bench.py supplies the
implementations.

Why interleave: on a shared machine the load drifts during a run. Running A B C, then B C A, then C A B
... exposes every implementation to the same drift, and a ratio is taken within one repeat (paired), so
a slow minute moves both sides of it.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

DEFAULT_REPEATS = 5   # rounds of interleaving (each implementation timed once per round)
WARMUP_CALLS = 1      # untimed calls of each implementation first (imports, caches, allocator, BLAS buffers)


def load_average() -> str:
    """The 1-minute load average, printed beside every timing (they depend on it)."""
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "n/a"


@dataclass(frozen=True)
class Spread:
    """The median of repeated measurements and their range."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values) -> Spread:
        values = np.asarray(values, dtype=float)
        return cls(float(np.median(values)), float(values.min()), float(values.max()))

    def text(self, scale: float = 1.0, digits: int = 2) -> str:
        return f"{self.median * scale:.{digits}f} ({self.low * scale:.{digits}f}-{self.high * scale:.{digits}f})"


def rotation_schedule(names: Sequence[str], repeats: int) -> list[tuple[str, ...]]:
    """The order of each repeat: repeat k runs the names rotated left by k (A B C, B C A, C A B, A B C, ...)."""
    names = tuple(names)
    return [names[k % len(names):] + names[:k % len(names)] for k in range(repeats)]


def interleaved_seconds(implementations: Mapping[str, Callable[[], object]], *, repeats: int = DEFAULT_REPEATS,
                        warmup: int = WARMUP_CALLS, min_seconds: float = 0.0, description: str = "timing",
                        clock: Callable[[], float] = time.perf_counter) -> dict[str, np.ndarray]:
    """Wall seconds per call of each implementation, one per repeat (index k = repeat k, so ratios can be
    paired), after `warmup` untimed calls of each, in the rotation order of `rotation_schedule`. With
    min_seconds > 0 a measurement repeats a call that the warm-up found shorter until it lasts about that
    long (short calls are at the mercy of one scheduler tick on a loaded machine), and divides."""
    schedule = rotation_schedule(list(implementations), repeats)
    seconds = {name: np.empty(repeats) for name in implementations}
    calls = dict.fromkeys(implementations, 1)
    total = warmup * len(implementations) + repeats * len(implementations)
    with tqdm(total=total, desc=description, unit="run", leave=False, disable=None) as bar:
        for _ in range(warmup):
            for name, run in implementations.items():
                started = clock() if min_seconds > 0 else 0.0
                run()
                if min_seconds > 0:
                    calls[name] = max(1, math.ceil(min_seconds / max(clock() - started, 1e-9)))
                bar.update()
        for k, order in enumerate(schedule):
            for name in order:
                started = clock()
                for _ in range(calls[name]):
                    implementations[name]()
                seconds[name][k] = (clock() - started) / calls[name]
                bar.update()
    return seconds


def paired_ratio(numerator: np.ndarray, denominator: np.ndarray) -> Spread:
    """numerator[k] / denominator[k] over the repeats k (both measured in the same round of interleaving)."""
    numerator, denominator = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    if numerator.shape != denominator.shape:
        raise ValueError(f"paired timings need the same repeats; got {numerator.shape} and {denominator.shape}")
    return Spread.of(numerator / denominator)


@dataclass(frozen=True)
class Exponent:
    """A fitted scaling exponent with its confidence interval."""

    name: str
    estimate: float
    low: float
    high: float

    def text(self) -> str:
        return f"{self.name} exponent {self.estimate:.2f} (95% CI {self.low:.2f} to {self.high:.2f})"


def fit_exponents(sizes: Mapping[str, Sequence[float]], seconds: Sequence[float],
                  confidence: float = 0.95) -> dict[str, Exponent]:
    """OLS of log(seconds) on log(size) for every size column at once (time ~ c * prod size^b): the exponents
    b with their confidence intervals (statsmodels)."""
    import statsmodels.api as sm

    names = list(sizes)
    design = sm.add_constant(np.column_stack([np.log(np.asarray(sizes[n], dtype=float)) for n in names]),
                             has_constant="add")
    fit = sm.OLS(np.log(np.asarray(seconds, dtype=float)), design).fit()
    interval = fit.conf_int(alpha=1 - confidence)
    return {name: Exponent(name, float(fit.params[i + 1]), float(interval[i + 1, 0]), float(interval[i + 1, 1]))
            for i, name in enumerate(names)}


@dataclass(frozen=True)
class Target:
    """A stated speed target: the measured value must be at most (or at least) the bound. The verdict is read on
    the median; a range that crosses the bound is said beside it."""

    key: str            # its name in the results
    description: str
    bound: float
    at_most: bool

    def met(self, measured: float) -> bool:
        return measured <= self.bound if self.at_most else measured >= self.bound

    def line(self, measured: Spread, unit: str = "x", range_name: str = "range") -> str:
        verdict = "met" if self.met(measured.median) else "NOT met"
        crosses = self.met(measured.low) != self.met(measured.high)
        sign = "<=" if self.at_most else ">="
        return (f"{self.description}: {measured.text()}{unit} (target {sign} {self.bound:g}{unit}): {verdict}"
                + (f" (the {range_name} crosses the bound)" if crosses else ""))
