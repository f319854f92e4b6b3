"""How `dpverify bench` times: warm-up, interleaved repeats, medians with ranges, paired ratios with
confidence intervals, scaling fits and target verdicts. Nothing here knows a paper;
reproductions/<paper>/bench.py supplies the implementations.

Why interleave: on a shared machine the load drifts during a run. Running A B C, then B C A, then C A B
... exposes every implementation to the same drift, and a ratio is taken within one repeat (paired), so
a slow minute moves both sides of it.

Why intervals: a verdict read on the median of a few repeats flipped with the load (issue 32: at load 2.8
two targets read NOT met that an idle machine meets). A verdict is now met or NOT met only when the
confidence interval of the measured value lies wholly on one side of the bound (`verdict`).
"""

from __future__ import annotations

import math
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import binom
from tqdm.auto import tqdm

# Two-sided 95%, the conventional level: a wrong met or NOT met needs the interval to miss the true median on
# the wrong side, probability at most 2.5% (1 run in 40) per target; a higher level needs more repeats.
CONFIDENCE = 0.95


def minimum_repeats(confidence: float) -> int:
    """The fewest values whose (min, max) covers their median with the confidence: 1 - 2^(1-n) >= confidence."""
    return 1 + math.ceil(math.log2(1 / (1 - confidence)))


MIN_REPEATS = minimum_repeats(CONFIDENCE)   # 6 at 95%: below it no target is decided
# Rounds of interleaving (each implementation timed once per round). 15 give the 4th and 12th of the 15 sorted
# ratios (coverage 96.5%): up to three repeats that a load spike throws far to either side cannot carry its ends,
# where at 6 it is (min, max) and one spike widens it.
DEFAULT_REPEATS = 15
WARMUP_CALLS = 1      # untimed calls of each implementation first (imports, caches, allocator, BLAS buffers)

MET, NOT_MET, UNDECIDED = "met", "NOT met", "undecided at this load"
UNDECIDED_WITHOUT_INTERVAL = "undecided (no interval)"


def load_average() -> str:
    """The 1-minute load average, printed beside every timing (they depend on it)."""
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "n/a"


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name (Linux), else what `platform.processor()` says."""
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def usable_cores() -> int:
    """Cores this process may run on (a container or taskset may allow fewer than the machine has)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def blas_description() -> str:
    """The BLAS numpy loaded, as threadpoolctl finds it in the process, with its current thread count (scipy
    may bring a second BLAS; numpy's does the products the bench times)."""
    from threadpoolctl import threadpool_info

    pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    pools = [p for p in pools if "numpy" in p.get("filepath", "")] or pools
    return "; ".join(f"{p['internal_api']} {p.get('version') or ''} ({p.get('architecture') or 'n/a'}), "
                     f"{p['num_threads']} thread{'s' if p['num_threads'] != 1 else ''}" for p in pools) or "none found"


def machine_description() -> str:
    """One line naming what the timings were measured on: they hold for this machine only."""
    return (f"machine: {cpu_model()}, {usable_cores()} usable cores of {os.cpu_count()}; Python "
            f"{platform.python_version()}, numpy {np.__version__}, BLAS {blas_description()}")


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


@dataclass(frozen=True)
class Estimate:
    """A measured value with its confidence interval; (-inf, inf) or nan ends when the data give none (too
    few repeats for a median, no residual degrees of freedom for a fit), and then no bound is decided."""

    value: float
    low: float
    high: float
    confidence: float = CONFIDENCE

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def text(self, unit: str = "", digits: int = 2) -> str:
        interval = f"{self.low:.{digits}f} to {self.high:.{digits}f}" if self.has_interval else "none"
        return f"{self.value:.{digits}f}{unit} ({self.confidence:.0%} CI {interval})"


def median_interval_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (r, n + 1 - r) of the sorted values that bound a distribution-free interval for the
    median of n independent values: the number of values below the median is Binomial(n, 1/2), so
    [x_(r), x_(n+1-r)] misses it with probability 2 P(B <= r - 1). The largest r keeping that <= 1 -
    confidence; None when even (min, max) covers less (n < MIN_REPEATS at 95%)."""
    tails = binom.cdf(np.arange(n), n, 0.5)
    inside = np.flatnonzero(2 * tails <= 1 - confidence)
    return (int(inside[-1]) + 1, n - int(inside[-1])) if inside.size else None


def median_interval_coverage(n: int, rank: int) -> float:
    """The probability that [x_(rank), x_(n+1-rank)] of n values covers their median."""
    return float(1 - 2 * binom.cdf(rank - 1, n, 0.5))


def median_with_interval(values, confidence: float = CONFIDENCE) -> Estimate:
    """The median of the values and its order-statistic interval (`median_interval_ranks`). Why this
    interval: timings under load are skewed and heavy-tailed (a spike slows one repeat many times over), so
    an interval assuming normality, or a bootstrap on 15 values, would be driven by the spikes; the
    order-statistic interval needs only independent repeats, and its coverage is exact (binomial), not
    asymptotic."""
    values = np.sort(np.asarray(values, dtype=float))
    ranks = median_interval_ranks(values.size, confidence)
    low, high = (values[ranks[0] - 1], values[ranks[1] - 1]) if ranks else (-math.inf, math.inf)
    return Estimate(float(np.median(values)), float(low), float(high), confidence)


def interval_note(repeats: int, confidence: float = CONFIDENCE) -> str:
    """How the ratios' intervals were formed, for the end of a bench's output."""
    ranks = median_interval_ranks(repeats, confidence)
    if ranks is None:
        return (f"{repeats} repeats give no {confidence:.0%} interval for a median (at least "
                f"{minimum_repeats(confidence)} do): no target can be decided")
    return (f"{confidence:.0%} CI of a median: sorted ratios number {ranks[0]} and {ranks[1]} of {repeats}, "
            f"distribution-free, coverage {median_interval_coverage(repeats, ranks[0]):.1%}")


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


def paired_ratio(numerator: np.ndarray, denominator: np.ndarray) -> Estimate:
    """The median of numerator[k] / denominator[k] over the repeats k (both measured in the same round of
    interleaving) with its confidence interval."""
    numerator, denominator = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    if numerator.shape != denominator.shape:
        raise ValueError(f"paired timings need the same repeats; got {numerator.shape} and {denominator.shape}")
    return median_with_interval(numerator / denominator)


@dataclass(frozen=True)
class Exponent:
    """A fitted scaling exponent with its confidence interval."""

    name: str
    estimate: float
    low: float
    high: float
    confidence: float = CONFIDENCE

    def interval(self) -> Estimate:
        return Estimate(self.estimate, self.low, self.high, self.confidence)

    def text(self) -> str:
        return f"{self.name} exponent {self.interval().text()}"


def fit_exponents(sizes: Mapping[str, Sequence[float]], seconds: Sequence[float],
                  confidence: float = CONFIDENCE) -> dict[str, Exponent]:
    """OLS of log(seconds) on log(size) for every size column at once (time ~ c * prod size^b): the exponents
    b with their confidence intervals (statsmodels)."""
    import statsmodels.api as sm

    names = list(sizes)
    design = sm.add_constant(np.column_stack([np.log(np.asarray(sizes[n], dtype=float)) for n in names]),
                             has_constant="add")
    fit = sm.OLS(np.log(np.asarray(seconds, dtype=float)), design).fit()
    interval = fit.conf_int(alpha=1 - confidence)
    return {name: Exponent(name, float(fit.params[i + 1]), float(interval[i + 1, 0]), float(interval[i + 1, 1]),
                           confidence)
            for i, name in enumerate(names)}


@dataclass(frozen=True)
class Target:
    """A stated speed target: the measured value must be at most (or at least) the bound. Decided on the
    measured value's confidence interval by `verdict`."""

    key: str            # its name in the results
    description: str
    bound: float
    at_most: bool

    def met(self, measured: float) -> bool:
        """Whether one value is on the target's side of the bound (the bound itself included)."""
        return measured <= self.bound if self.at_most else measured >= self.bound

    def line(self, measured: Estimate, unit: str = "x") -> str:
        sign = "<=" if self.at_most else ">="
        return (f"{self.description}: {measured.text(unit)} (target {sign} {self.bound:g}{unit}): "
                f"{verdict(self, measured)}")


def verdict(target: Target, measured: Estimate) -> str:
    """The one rule of every printed target verdict: met when the whole interval is on the target's side of
    the bound, NOT met when the whole interval is on the other side, undecided otherwise (the repeats do not
    separate the value from the bound at the load they ran under; with no interval, nothing is decided)."""
    if not measured.has_interval:
        return UNDECIDED_WITHOUT_INTERVAL
    ends_met = target.met(measured.low), target.met(measured.high)
    if all(ends_met):
        return MET
    return NOT_MET if not any(ends_met) else UNDECIDED


def verdict_number(target: Target, measured: Estimate) -> float:
    """The verdict as a number for the results: 1 met, 0 NOT met, nan undecided."""
    return {MET: 1.0, NOT_MET: 0.0}.get(verdict(target, measured), math.nan)
