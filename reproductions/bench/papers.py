"""What `dpverify bench` runs for every paper; each paper's `reproductions/<paper>/bench.py` supplies its
implementations (`contenders(...)`, and `grid_contenders(...)` for `--grid`) and calls `run_paper_bench`.

Four implementations of one algorithm, each a function (generator, rounds) -> final state:
- reference: dpverify's algorithm as the experiments run it (batched over replicas and agents);
- loop: a plain, competent per-agent Python loop (one replica, one agent at a time; neighbour sums over
  index arrays, the per-agent oracles of the paper's problem);
- vectorized: what a good researcher writes: one replica at a time in Python, each round one matrix
  product over the (N, d) state for the neighbour sums and array code over agents for the gradients;
- limit: not an algorithm but the floor of one round measured in this process: the noise draw, the
  cheapest neighbour sum (one product of the batched state laid out (N, R*d): BLAS, or sparse for
  zCDP-NFL's sparse graph, core/mixing.py) and the cheapest gradient, for the same R, N, d and rounds.
Every baseline except the limit must give the reference's numbers on the same draws (CHECK_RTOL, checked
before anything is timed). Timings are per round, interleaved and repeated; ratios are paired within a repeat
and carry a confidence interval, on which every target is decided (reproductions/bench/timing.py, `verdict`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import product

import numpy as np
from tqdm.auto import tqdm

from dpverify.reproductions.bench.timing import (
    DEFAULT_REPEATS,
    Estimate,
    Spread,
    Target,
    fit_exponents,
    interleaved_seconds,
    interval_note,
    load_average,
    machine_description,
    paired_ratio,
    verdict_number,
)
from dpverify.algorithms.core.mixing import agent_major
from dpverify.algorithms.core.noise import PrivacyLedger, gaussian_release, gaussian_releases
from dpverify.reproductions.run.allocator import settle_allocator
from dpverify.reproductions.run.threads import limit_blas_threads

Implementation = Callable[[np.random.Generator, int], object]   # (generator, rounds) -> final state

CHECK_RTOL = CHECK_ATOL = 1e-12   # baselines against the reference on the same draws
CHECK_SEED, TIMING_SEED = 2, 1

LIMIT_TARGET = Target("reference_over_limit", "reference / physical limit", 2.0, at_most=True)
VECTORIZED_TARGET = Target("speedup_over_vectorized", "speed-up over the vectorized baseline", 3.0, at_most=False)
VECTORIZED_TARGET_MIN_REPLICAS = 100     # the 3x target applies at R >= 100
GRID_NEVER_SLOWER = Target("worst_reference_over_vectorized", "worst reference / vectorized time on the grid at R >= 10",
                           1.0, at_most=True)
GRID_NEVER_SLOWER_MIN_REPLICAS = 10
SPARSE_N_EXPONENT = Target("N_exponent", "fitted N exponent of the reference (sparse graph)", 1.0, at_most=True)
D_EXPONENT = Target("d_exponent", "fitted d exponent of the reference", 1.0, at_most=True)   # issue 32

GRID_REPLICAS, GRID_AGENTS, GRID_DIMENSIONS = (1, 10, 100, 1000), (10, 50, 200), (8, 64, 512)   # issue 32
GRID_MAX_ENTRIES = 30_000_000   # cells whose state R N d exceeds this are skipped (issue 32: 240 MB a state array)
GRID_REPEATS = 9   # the fewest whose 95% interval drops each cell's extreme repeat on both sides (MIN_REPEATS: min-max)
GRID_MIN_SECONDS = 0.05   # a grid measurement repeats calls shorter than this (the R = 1 cells take ~1 ms per round)


def timed(function: Callable[[], object]) -> tuple[float, object]:
    """(wall seconds, result) of one call (for one-off costs; algorithms are timed by `run_paper_bench`)."""
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


class BenchmarkInvalid(AssertionError):
    """A baseline does not compute the reference's numbers: the benchmark would compare different things."""


@dataclass(frozen=True)
class Contenders:
    """The implementations of one benchmark setting. rounds: per timed call of the reference and the limit;
    loop_rounds, vectorized_rounds (default: rounds): of the slower baselines (times are compared per round);
    check_rounds: of the equality check. no_vectorized: why a paper has no vectorized-over-agents baseline."""

    title: str
    replicas: int
    reference: Implementation
    loop: Implementation | None
    vectorized: Implementation | None
    limit: Implementation | None
    rounds: int
    loop_rounds: int
    check_rounds: int
    vectorized_rounds: int | None = None
    no_vectorized: str = ""
    labels: dict[str, str] = field(default_factory=dict)

    def baselines(self) -> dict[str, Implementation]:
        return {name: run for name, run in (("loop", self.loop), ("vectorized", self.vectorized)) if run is not None}

    def timed(self) -> dict[str, tuple[Implementation, int]]:
        """name -> (implementation, rounds per timed call)."""
        timed = {"reference": (self.reference, self.rounds)}
        if self.loop is not None:
            timed["loop"] = (self.loop, self.loop_rounds)
        if self.vectorized is not None:
            timed["vectorized"] = (self.vectorized, self.vectorized_rounds or self.rounds)
        if self.limit is not None:
            timed["limit"] = (self.limit, self.rounds)
        return timed


def states_agree(reference, other) -> bool:
    """Every array of the final state agrees to CHECK_RTOL / CHECK_ATOL."""
    pairs = zip(reference, other, strict=True) if isinstance(reference, tuple) else [(reference, other)]
    return all(np.allclose(a, b, rtol=CHECK_RTOL, atol=CHECK_ATOL) for a, b in pairs)


def machine_line() -> str:
    """The machine the bench runs on, BLAS threads as the bench runs them (printed once per `dpverify bench`)."""
    with limit_blas_threads():
        return machine_description()


def check_same_numbers(contenders: Contenders) -> None:
    """Run the reference and every baseline on the same draws; raise BenchmarkInvalid when one differs."""
    expected = contenders.reference(np.random.default_rng(CHECK_SEED), contenders.check_rounds)
    for name, run in contenders.baselines().items():
        if not states_agree(expected, run(np.random.default_rng(CHECK_SEED), contenders.check_rounds)):
            raise BenchmarkInvalid(f"{contenders.title}: the {name} baseline and the reference disagree on the same "
                                   f"draws ({contenders.check_rounds} rounds, rtol {CHECK_RTOL:g}); the benchmark is invalid")


def seconds_per_round(contenders: Contenders, repeats: int, description: str,
                      min_seconds: float = 0.0) -> dict[str, np.ndarray]:
    """Per-round wall seconds of every timed implementation, one per interleaved repeat."""
    timed = contenders.timed()
    calls = {name: (lambda run=run, rounds=rounds: run(np.random.default_rng(TIMING_SEED), rounds))
             for name, (run, rounds) in timed.items()}
    seconds = interleaved_seconds(calls, repeats=repeats, min_seconds=min_seconds, description=description)
    return {name: seconds[name] / timed[name][1] for name in timed}


def default_targets(per_round: dict[str, np.ndarray], replicas: int) -> list[tuple[Target, Estimate, str]]:
    """(target, measured ratio, why it does not apply or "") at the bench defaults."""
    rows = []
    if "limit" in per_round:
        rows.append((LIMIT_TARGET, paired_ratio(per_round["reference"], per_round["limit"]), ""))
    if "vectorized" in per_round:
        applies = replicas >= VECTORIZED_TARGET_MIN_REPLICAS
        rows.append((VECTORIZED_TARGET, paired_ratio(per_round["vectorized"], per_round["reference"]),
                     "" if applies else f"applies at R >= {VECTORIZED_TARGET_MIN_REPLICAS}"))
    return rows


def run_paper_bench(contenders: Contenders, *, repeats: int = DEFAULT_REPEATS,
                    echo: Callable[[str], None] = print) -> dict[str, float]:
    """Check, time and report one setting; returns the medians (ms per round), ratios, their intervals and the
    verdicts (1 met, 0 NOT met, nan undecided) by name."""
    allocator = settle_allocator()   # as every dpverify command runs (reproductions/run/allocator.py)
    with limit_blas_threads():   # as every dpverify process runs (reproductions/run/threads.py)
        check_same_numbers(contenders)
        echo(f"{contenders.title}; load average {load_average()} at the start; {allocator}")
        per_round = seconds_per_round(contenders, repeats, contenders.title.split(",")[0])
        return report_paper_timings(contenders, per_round, echo)


RELEASE_SHARE = Target("release_share", "noise release beyond its draw / reference round", 0.10, at_most=True)


def release_share(contenders: Contenders, agents: int, dim: int, repeats: int,
                  echo: Callable[[str], None]) -> dict[str, float]:
    """What the Gaussian release adds to its raw draw, as a share of a reference round (issue 32 item 3): the
    reference over its rounds, that many planned releases (core/noise.py `gaussian_release`: the values' check, the
    draw, the ledger record, the re-layout and the scaled add) of a state (R, N, d) laid out as the reference keeps
    it, and that many raw draws, interleaved; (releases - draws) / reference paired within each repeat."""
    rounds, shape = contenders.rounds, (contenders.replicas, agents, dim)
    state = agent_major(np.random.default_rng(CHECK_SEED).standard_normal(shape))
    planned = gaussian_releases(np.ones((rounds, agents)), np.full((rounds, agents), 0.5), range(1, rounds + 1),
                                ["bench"] * rounds)

    def releases() -> None:
        rng, ledger = np.random.default_rng(TIMING_SEED), PrivacyLedger()
        for release in planned:
            gaussian_release(state, release, rng, ledger)

    def draws() -> None:
        rng = np.random.default_rng(TIMING_SEED)
        for _ in range(rounds):
            rng.standard_normal(shape)
    with limit_blas_threads():
        seconds = interleaved_seconds({"reference": lambda: contenders.reference(np.random.default_rng(TIMING_SEED),
                                                                                rounds),
                                       "releases": releases, "draws": draws}, repeats=repeats,
                                      description="release share")
    share = paired_ratio(seconds["releases"] - seconds["draws"], seconds["reference"])
    echo(f"  {RELEASE_SHARE.line(share, unit='')} (load average {load_average()})")
    return {RELEASE_SHARE.key: share.value, f"{RELEASE_SHARE.key}_ci_low": share.low,
            f"{RELEASE_SHARE.key}_ci_high": share.high, f"{RELEASE_SHARE.key}_met": verdict_number(RELEASE_SHARE, share)}


def report_paper_timings(contenders: Contenders, per_round: dict[str, np.ndarray],
                         echo: Callable[[str], None]) -> dict[str, float]:
    """The lines and results of one setting from its per-round seconds (one per interleaved repeat)."""
    repeats = len(per_round["reference"])
    results: dict[str, float] = {}
    for name, values in per_round.items():
        spread = Spread.of(values)
        label = contenders.labels.get(name, "")
        echo(f"  {name + ':':<12} {spread.text(1e3, 3):>28} ms/round  {label}")
        results[f"{name}_ms_per_round"] = spread.median * 1e3
    if contenders.no_vectorized:
        echo(f"  {'vectorized:':<12} {'not run':>28}           {contenders.no_vectorized}")
    if "loop" in per_round:
        ratio = paired_ratio(per_round["loop"], per_round["reference"])
        echo(f"  speed-up over the loop: {ratio.text('x')}")
        results["speedup_over_loop"] = ratio.value
    for target, measured, why_not in default_targets(per_round, contenders.replicas):
        results.update({target.key: measured.value, f"{target.key}_ci_low": measured.low,
                        f"{target.key}_ci_high": measured.high})
        if why_not:
            echo(f"  {target.description}: {measured.text('x')} (target {target.bound:g}x {why_not})")
        else:
            echo(f"  {target.line(measured)}")
            results[f"{target.key}_met"] = verdict_number(target, measured)
    echo(f"  ({repeats} interleaved repeats after a warm-up; times: median (min-max); ratios paired within a "
         f"repeat: median ({interval_note(repeats)}); load average {load_average()} at the end)")
    return results


# --------------------------------------------------------------------------------------------------
# --grid: R x N x d


@dataclass(frozen=True)
class GridCell:
    replicas: int
    agents: int
    dim: int
    reference: Spread        # seconds per round
    vectorized: Spread
    ratio: Estimate          # reference / vectorized, paired, with its interval


def grid_cells(replicas: Sequence[int] = GRID_REPLICAS, agents: Sequence[int] = GRID_AGENTS,
               dims: Sequence[int] = GRID_DIMENSIONS) -> list[tuple[int, int, int]]:
    """Every (R, N, d) whose state has at most GRID_MAX_ENTRIES entries."""
    return [cell for cell in product(replicas, agents, dims) if math.prod(cell) <= GRID_MAX_ENTRIES]


def worst_cell(cells: Sequence[GridCell], min_replicas: int = GRID_NEVER_SLOWER_MIN_REPLICAS) -> GridCell:
    """The cell with R >= min_replicas where the reference is slowest against the vectorized baseline (median)."""
    return max((c for c in cells if c.replicas >= min_replicas), key=lambda c: c.ratio.value)


def largest_ratio(cells: Sequence[GridCell], min_replicas: int = GRID_NEVER_SLOWER_MIN_REPLICAS) -> Estimate:
    """The largest of the cells' ratios with an interval for it: from the largest lower end to the largest
    upper end of the cells' intervals. The true largest ratio is below the largest upper end when every cell's
    interval holds (so met needs every cell's interval under the bound) and above the largest lower end when
    that cell's holds (so NOT met needs one cell's interval above it). Each cell's interval is at CONFIDENCE,
    not corrected for the number of cells (26 at R >= 10 on the default grid)."""
    ratios = [c.ratio for c in cells if c.replicas >= min_replicas]
    return Estimate(max(r.value for r in ratios), max(r.low for r in ratios), max(r.high for r in ratios),
                    ratios[0].confidence)


def run_grid(title: str, make: Callable[[int, int, int], Contenders], *, repeats: int = GRID_REPEATS,
             cells: Sequence[tuple[int, int, int]] | None = None, echo: Callable[[str], None] = print
             ) -> dict[str, float]:
    """Reference against the vectorized baseline on every (R, N, d) cell (each checked for equal numbers
    first); the table of ratios, the fitted exponents of the reference's time per round, and the grid targets."""
    allocator = settle_allocator()
    with limit_blas_threads():
        return _run_grid(title, make, repeats, cells, echo, allocator)


def _run_grid(title: str, make: Callable[[int, int, int], Contenders], repeats: int,
              cells: Sequence[tuple[int, int, int]] | None, echo: Callable[[str], None], allocator: str
              ) -> dict[str, float]:
    cells = grid_cells() if cells is None else list(cells)
    echo(f"{title} grid over R x N x d ({len(cells)} cells, {repeats} interleaved repeats each); "
         f"load average {load_average()} at the start; {allocator}")
    measured: list[GridCell] = []
    for replicas, agents, dim in tqdm(cells, desc="grid", unit="cell", leave=False, disable=None):
        contenders = replace(make(replicas, agents, dim), loop=None, limit=None, vectorized_rounds=None)
        check_same_numbers(contenders)
        per_round = seconds_per_round(contenders, repeats, f"R={replicas} N={agents} d={dim}", GRID_MIN_SECONDS)
        measured.append(GridCell(replicas, agents, dim, Spread.of(per_round["reference"]),
                                 Spread.of(per_round["vectorized"]),
                                 paired_ratio(per_round["reference"], per_round["vectorized"])))
    return report_grid(measured, repeats, echo)


def report_grid(measured: Sequence[GridCell], repeats: int, echo: Callable[[str], None]) -> dict[str, float]:
    """The table, the fitted exponents and the grid targets from the measured cells."""
    echo(f"  {'R':>4} {'N':>4} {'d':>2}  {'reference ms/round':>26}  {'vectorized ms/round':>26}  reference/vectorized")
    for cell in measured:
        echo(f"  {cell.replicas:>4} {cell.agents:>4} {cell.dim:>2}  {cell.reference.text(1e3, 3):>26}  "
             f"{cell.vectorized.text(1e3, 3):>26}  {cell.ratio.text()}")
    exponents = fit_exponents({"N": [c.agents for c in measured], "R": [c.replicas for c in measured],
                               "d": [c.dim for c in measured]}, [c.reference.median for c in measured])
    echo("  reference time per round ~ N^a R^b d^c (OLS on log median time, all cells): "
         + "; ".join(e.text() for e in exponents.values()))
    results = {f"{name}_exponent": e.estimate for name, e in exponents.items()}
    if any(c.replicas >= GRID_NEVER_SLOWER_MIN_REPLICAS for c in measured):
        worst, largest = worst_cell(measured), largest_ratio(measured)
        echo(f"  {GRID_NEVER_SLOWER.line(largest)}; largest median at R = {worst.replicas}, N = {worst.agents}, "
             f"d = {worst.dim} (interval: the largest ends of the cells' intervals)")
        results[GRID_NEVER_SLOWER.key] = largest.value
        results[f"{GRID_NEVER_SLOWER.key}_met"] = verdict_number(GRID_NEVER_SLOWER, largest)
    for name, target in (("N", SPARSE_N_EXPONENT), ("d", D_EXPONENT)):
        interval = exponents[name].interval()
        echo(f"  {target.line(interval, unit='')} (the OLS interval)")
        results[f"{target.key}_met"] = verdict_number(target, interval)
    echo(f"  ({repeats} interleaved repeats per cell; times: median (min-max); ratios paired within a repeat: "
         f"median ({interval_note(repeats)}); load average {load_average()} at the end)")
    return results
