"""Conformance of an implementation to a paper (docs/verify.md): the checks `dpverify verify` runs.

A paper room that supports verify has `theory/<paper>/conformance.py` with `SUITE = Suite(...)`: how
the verification setting is built from the experiments' parameters, the reference implementation (the
room's `contract.REFERENCE`, which goes through the same door as the user's), the paper's noise
calibration, the neighbouring settings and what the paper's adversary observes. From it,
`conformance_claims(suite, implementation)` builds seven claims about the implementation, each decided
by a rule of theory/rules.py:

1. accounting: the noise scales the implementation reports equal the paper's calibration (exact);
2. exact: with dpverify's noise tape (the same draws for both), its messages and states equal the
   reference's at every round, agent and coordinate (exact; the first divergence is reported);
2b. replay: with its own noise, each state it reports equals the paper's update applied to its own previous
   state and the messages it received (contract.replay; exact, step by step);
3. noise scale: from the messages it actually sent (message - state), the noise scale per round and
   per agent, with simultaneous confidence intervals, against the calibration (equivalence, TOST; less noise
   than promised, an upper bound below 1 at BELOW_LEVEL, refutes whatever the margin: calibrated_noise);
3b. noise law: the same noise's family, centre and independence across runs, rounds, agents and coordinates
   (theory/verify/noise_law.py; fits_identity, each bound in units of its margin);
4. distribution: its messages over independent runs against the reference's, per (round, agent,
   coordinate), two-sample Kolmogorov-Smirnov, Holm, and a simultaneous upper bound on the Kolmogorov distance
   between the two laws (fits_identity: confirmed only if that bound rules out DISTRIBUTION_MARGIN);
5. privacy: the auditor runs the implementation on neighbouring settings over the whole run and bounds, from every
   message the paper's adversary observes, its leak factor against the f-DP curve the paper's calibration implies
   under adaptive composition (theory/audit/tradeoff.py; audit_lower_bounds: refutes, never confirms).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import scipy.stats

from dpverify.algorithms.core.errors import ImplementationError  # raised here; importable from here too
from dpverify.algorithms.core.tape import NoiseTape
from dpverify.theory.audit import PrivacyClaim, audit
from dpverify.theory.audit.scores import CallableScore, ChosenScore, LdaScore
from dpverify.theory.claims import Check, Claim, Measurement, Method, NothingToMeasure, holds
from dpverify.theory.door.isolation import Isolated
from dpverify.theory.execution import CheckContext, task_seed_sequence
from dpverify.theory.instruments.stats import SIGNIFICANCE
from dpverify.theory.rules import audit_lower_bounds, calibrated_noise, exact, fits_identity
from dpverify.theory.verify.noise_law import measure as measure_noise_law
from dpverify.theory.verify.replayed_noise import likelihood_ratio_score, repetition_score

RELATIVE_TOLERANCE = 1e-9    # default: exact conformance; a per-agent loop sums in another order than a batched code (~1e-15 per round, plausible 1e-12-1e-6)
ABSOLUTE_TOLERANCE = 1e-12   # default: the same, for values near 0
EXACT_SEEDS = 3              # default: noise tapes compared (one is enough for a deterministic code; more catch seed-dependent branches)
# default: the fewest independent runs per side for the statistical checks (the distribution check's two-sample
# tests); replicas_for raises it where the noise-scale check needs more (SCALE_HALF_WIDTH). Plausible 200-2000
REPLICAS = {"quick": 400, "paper": 2000}
SCALE_MARGIN = 0.10          # default: a noise scale within +-10% of the calibration is equivalent (plausible 5-20%)
# default: at least enough runs that every simultaneous interval of the noise-scale check has a half-width (on the log
# scale) of a third of the margin: a conforming implementation's estimates scatter by about one such half-width across
# the families, so they land inside the margin; half the margin left it inconclusive on about 30% of seeds for
# dp-recal (3 noisy coordinates a round). Plausible margin/4 - margin/2; fixed before looking at any verdict.
SCALE_HALF_WIDTH = np.log1p(SCALE_MARGIN) / 3
# default: the largest Kolmogorov distance between the implementation's and the reference's law of one message entry
# that still counts as "the same distribution": 0.1 is a mean shift of a quarter of the noise's standard deviation, or a
# 50% change of its scale, for Gaussian noise; plausible 0.05-0.2. The scale itself is judged by the sharper noise-scale
# check (SCALE_MARGIN). Fixed before looking at any verdict; the summary states the smallest distance the runs rule out.
DISTRIBUTION_MARGIN = 0.1
AUDIT_SAMPLES = {"quick": 10_000, "paper": 100_000}  # default: runs per neighbouring setting for the privacy audit
# default: the privacy audit stops its test once no tested event can refute the claim at this level (auditor.py,
# step 6): it loses at most this much power, and where the claim is loose (dpdo-nc's composed releases) it saves
# most of a correct implementation's test part
AUDIT_FUTILITY = 0.01
# default: the fraction of the audit's runs that choose its score and event (the rest test them). A quarter, not the
# auditor's half: the futility stop saves only test runs, so on a loose claim a correct implementation's audit stops
# after 3,438 runs per side instead of 5,625 (dpdo-nc's conformance 17.8 -> 12.0 s), and on a tight one the test has
# 7,500 runs. Noise 2x too small, root seeds 20240221 and 1-6, median leak factor at a quarter (at a half): dpdo-nc
# 1.02 (1.04), zcdp-nfl 1.41 (1.46), wang-basar 1.65 (1.62); refuted on every seed either way (docs/verify.md).
# Plausible 0.25-0.5: with a first part of 1,250 runs per side (625 to fit zcdp-nfl's 480-entry discriminant, 625 to
# search; 5,000 tested) 2x read 0, 1.26 and 1.28 on three seeds
AUDIT_SPLIT = 0.25
CHECKS = ("accounting", "exact", "replay", "noise-scale", "noise-law", "distribution", "privacy")   # the claims below
# default: the family-wise rate at which verify's exit status may be a false alarm for a conforming implementation
# (issue 30's target; plausible 0.001-0.05). The deterministic checks (accounting, exact, replay) cannot false-alarm;
# the four statistical refutations share it by a union bound, CHECK_LEVEL each: noise-scale's "less noise than
# promised", the noise law, the distribution check's tests and the privacy audit's lower bound. (The noise-scale's
# margin part refutes only an interval entirely outside +-SCALE_MARGIN, whose half-width the run count holds at a
# third of the margin: for a conforming implementation that is a deviation of over 4 standard errors.)
VERIFY_LEVEL = 0.01
CHECK_LEVEL = VERIFY_LEVEL / 4
BELOW_LEVEL = CHECK_LEVEL
# default: coupled runs of the reference (one Generator per pair, the same for both neighbours) whose mean difference of
# observations is the privacy audit's direction (reference_difference); the coupling cancels most of the noise, so a few
# hundred runs fix it (plausible 100-1000; the reference costs 1-4 ms a run)
COUPLED_RUNS = 200
REPLAY_SEEDS = 3             # default: runs replayed (each on its own Generator; more catch seed-dependent branches)


@dataclass(frozen=True)
class Suite:
    """What a paper room supplies for `dpverify verify` (module docstring)."""

    paper: str
    line: str                                             # the algorithm's seed lines
    setting: Callable[[CheckContext], Any]                # the verification setting, from the experiments' parameters
    reference: Callable[[Any, Any], Any]                  # contract.REFERENCE: (setting, rng) -> transcript
    shapes: Callable[[Any], dict[str, tuple[int, ...]]]   # the transcript's arrays and their shapes (noise_scales optional)
    added_noise: Callable[[Mapping[str, np.ndarray]], np.ndarray]   # the noise a transcript's messages carry, (T, N, ...)
    calibration: Callable[[Any], np.ndarray]              # the paper's noise scale, (T,) or (T, N), broadcast to added_noise
    noise: str                                            # "laplace" or "normal": the noise added to every message
    neighbours: Callable[[Any], tuple[Any, Any]]          # two neighbouring settings, over the setting's whole run
    observe: Callable[[Mapping[str, np.ndarray]], np.ndarray]   # the adversary's view of one transcript, (k,)
    claimed: Callable[[Any], PrivacyClaim]                # the paper's guarantee for that view, of a neighbour
    # contract.replay: (setting, transcript) -> {array: what the paper's update computes from the transcript's own
    # inputs, shaped as that array, NaN where nothing is predicted (a released message's noise)}; None: not yet
    replay: Callable[[Any, Mapping[str, np.ndarray]], dict[str, np.ndarray]] | None = None
    # contract.implied_noise: (setting, messages (R, T, N, d)) -> the noise those messages carried had the runs been on
    # that setting, replayed from the messages alone; the privacy audit then also scores that noise (its repetition
    # across rounds and its likelihood ratio, replayed_noise.py). None: the audit scores with the discriminant alone
    implied_noise: Callable[[Any, np.ndarray], np.ndarray] | None = None


def transcript(implementation: Callable, setting: Any, rng: Any,
               shapes: Callable[[Any], dict[str, tuple[int, ...]]]) -> dict[str, np.ndarray]:
    """Run the implementation once: its messages, states and, if it reports them, its noise scales, checked
    against `shapes(setting)`. A user's implementation (an Isolated runner) runs in its worker; dpverify's
    reference runs here."""
    return transcripts(implementation, [(setting, rng)], shapes)[0]


def transcripts(implementation: Callable, runs: list[tuple[Any, Any]],
                shapes: Callable[[Any], dict[str, tuple[int, ...]]]) -> list[dict[str, np.ndarray]]:
    """`transcript` of each (setting, rng) of `runs`, in order; an Isolated runner gets them as one stream."""
    if not isinstance(implementation, Isolated):
        results = (implementation(setting, rng) for setting, rng in runs)
        return [_checked(result.get if isinstance(result, Mapping) else partial(getattr, result), shapes(setting))
                for result, (setting, _) in zip(results, runs)]
    keys = tuple(shapes(runs[0][0]))
    returned = implementation.arrays_many(runs, keys)    # raises ImplementationFailed
    try:
        return [_checked(arrays.get, shapes(setting)) for arrays, (setting, _) in zip(returned, runs)]
    except ImplementationError as error:     # a failure of the user's code wherever it is found (isolation.py)
        implementation.failures.append(str(error))
        raise


def _checked(get: Callable[[str, Any], Any], expected: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    arrays = {}
    for key, shape in expected.items():
        value = get(key, None)
        if value is None:
            if key == "noise_scales":      # optional
                continue
            raise ImplementationError(f"the implementation returned no {key!r} (this paper's transcript has "
                                      f"{', '.join(k for k in expected if k != 'noise_scales')})")
        precision(key, value)
        try:
            arrays[key] = np.asarray(value, dtype=float)
        except (TypeError, ValueError) as error:   # ragged lists, strings, objects: the user's output, not our bug
            raise ImplementationError(f"{key} is not an array of numbers: {error}") from error
        if arrays[key].shape != tuple(shape):
            raise ImplementationError(f"{key} must have shape {tuple(shape)}; got {arrays[key].shape}")
    return arrays


class Float64Required(ImplementationError):
    """An implementation that computes in a floating type narrower than float64 (docs/verify.md: dtype)."""


def precision(key: str, value: Any) -> None:
    """Refuse an array computed in a float narrower than float64: the exact check compares to 1e-9 relative,
    which float32 round-off (1.2e-7 per operation) exceeds by construction, so such code could never conform."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return
    dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
    if dtype.kind == "f" and dtype.itemsize < 8:     # a narrow float (np.issubdtype, 10x slower: every array of every run)
        raise Float64Required(f"the implementation returns {key} as {dtype.name}: dpverify verify judges "
                              "float64 implementations only (compute in float64: torch.set_default_dtype(torch.float64), "
                              "jax.config.update('jax_enable_x64', True), numpy's default); docs/verify.md, dtype")


def first_divergence(name: str, reference: np.ndarray, implementation: np.ndarray) -> dict[str, Any] | None:
    """The first (round, agent, coordinate) where the arrays differ beyond the tolerance, with both values."""
    close = np.isclose(implementation, reference, rtol=RELATIVE_TOLERANCE, atol=ABSOLUTE_TOLERANCE)
    if close.all():
        return None
    index = tuple(int(i) for i in np.argwhere(~close)[0])
    return {"array": name, "round": index[0] + 1, "agent": index[1] if len(index) > 1 else None,
            "coordinate": index[2:] if len(index) > 3 else (index[2] if len(index) > 2 else None),
            "reference": float(reference[index]), "implementation": float(implementation[index]),
            "tolerance": ABSOLUTE_TOLERANCE + RELATIVE_TOLERANCE * abs(float(reference[index]))}


# ----------------------------------------------------------------- the checks
def check_accounting(suite: Suite, implementation: Callable, context: CheckContext) -> Measurement:
    setting = suite.setting(context)
    try:
        reported = transcript(implementation, setting, np.random.default_rng(context.root_seed),
                              suite.shapes).get("noise_scales")
    except ImplementationError as error:
        return holds(False, str(error))
    if reported is None:
        raise NothingToMeasure("the implementation reports no noise_scales (optional in the transcript)")
    calibrated = np.broadcast_to(suite.calibration(setting), reported.shape)
    wrong = np.argwhere(~np.isclose(reported, calibrated, rtol=RELATIVE_TOLERANCE, atol=0.0))
    first = tuple(wrong[0]) if len(wrong) else None
    where = (f"first at round {first[0] + 1}{f', agent {first[1]}' if len(first) > 1 else ''}: reported "
             f"{reported[first]:.6g}, the paper's calibration {calibrated[first]:.6g}" if first else "at every round")
    return holds(not wrong.size, f"noise scales reported by the implementation vs the paper's calibration: "
                 f"{'differ' if wrong.size else 'equal'} {where} ({setting.horizon} rounds)",
                 entries_differing=len(wrong), reported=reported.tolist(), calibrated=calibrated.tolist())


def check_exact(suite: Suite, implementation: Callable, context: CheckContext) -> Measurement:
    setting = suite.setting(context)
    for offset in range(EXACT_SEEDS):
        seed = context.root_seed + offset
        try:
            theirs = transcript(implementation, setting, NoiseTape(seed), suite.shapes)
        except ImplementationError as error:
            return holds(False, f"{error} (noise tape seed {seed})", seed=seed)
        ours = transcript(suite.reference, setting, NoiseTape(seed), suite.shapes)
        for name in (key for key in ours if key != "noise_scales"):
            if found := first_divergence(name, ours[name], theirs[name]):
                return holds(False, f"{name} diverge first at round {found['round']}, agent {found['agent']}, coordinate "
                             f"{found['coordinate']}: reference {found['reference']:.10g}, implementation "
                             f"{found['implementation']:.10g} (tolerance {found['tolerance']:.2g}; noise tape seed {seed}). "
                             "An implementation that draws its own noise, or in another order than (round, agent, "
                             "coordinate), differs here by construction: the statistical checks judge it.",
                             **found, seed=seed)
    return holds(True, f"messages and states equal the reference's at every round, agent and coordinate "
                 f"({setting.horizon} rounds, {EXACT_SEEDS} noise tapes, rtol {RELATIVE_TOLERANCE:g})",
                 seeds=EXACT_SEEDS, rounds=setting.horizon)


def check_replay(suite: Suite, implementation: Callable, context: CheckContext) -> Measurement:
    """Every step of the paper's algorithm but the noise is deterministic given what an agent received: each
    state the implementation reports is recomputed from the transcript's own previous state and received
    messages (contract.replay) and compared step by step, so it judges code with any noise source, and round-off
    never accumulates."""
    if suite.replay is None:
        raise NothingToMeasure(f"no replay of {suite.paper}'s update yet (contract.replay)")
    setting = suite.setting(context)
    runs = REPLAY_SEEDS
    try:
        theirs = transcripts(implementation, [(setting, np.random.default_rng(task_seed_sequence(
            context.root_seed, f"verify/replay/{r}"))) for r in range(runs)], suite.shapes)
    except ImplementationError as error:
        return holds(False, str(error))
    compared = 0
    for run, arrays in enumerate(theirs):
        for name, array in arrays.items():    # a NaN would read as "not predicted" below, and predict NaN after it
            if not np.isfinite(array).all():
                first = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
                return holds(False, f"{name} holds a non-finite value, first at {name}{list(first)} (replayed run "
                             f"{run + 1} of {runs})", run=run)
        for name, predicted in suite.replay(setting, arrays).items():
            known = np.isfinite(predicted)
            compared += int(known.sum())
            reported = np.where(known, arrays[name], 0.0)
            if found := first_divergence(name, np.where(known, predicted, 0.0), reported):
                return holds(False, f"{name} diverge from the paper's update applied to the implementation's own "
                             f"previous state and received messages, first at {name}[{found['round'] - 1}] (0-based), "
                             f"agent {found['agent']}, coordinate {found['coordinate']}: the update "
                             f"gives {found['reference']:.10g}, the implementation reports {found['implementation']:.10g} "
                             f"(tolerance {found['tolerance']:.2g}; replayed run {run + 1} of {runs})", **found, run=run)
    return holds(True, f"every state equals the paper's update applied to the implementation's own previous state and "
                 f"received messages ({compared} values over {runs} runs with its own noise, {setting.horizon} rounds "
                 f"each, rtol {RELATIVE_TOLERANCE:g})", values=compared, runs=runs)


def independent_transcripts(function: Callable, settings: Any, rngs, shapes: Callable[[Any], dict[str, tuple[int, ...]]]
                            ) -> list[dict[str, np.ndarray]]:
    """One checked transcript per rng: independent runs of one implementation (e.g. a user's, inside an
    experiment's task, when `dpverify verify` re-runs the paper's claims). `settings` is one setting for every
    run, or a list of one per run (runs that differ in their start or walk)."""
    per_run = settings if isinstance(settings, list) else itertools.repeat(settings)
    return transcripts(function, list(zip(per_run, rngs)), shapes)


def independent_iterates(function: Callable, settings: Any, rngs, shapes: Callable[[Any], dict[str, tuple[int, ...]]]
                         ) -> np.ndarray:
    """The "iterates" of independent_transcripts(...), stacked on axis 1 (rounds first, then runs)."""
    return np.stack([run["iterates"] for run in independent_transcripts(function, settings, rngs, shapes)], axis=1)


def generators(seed: int, count: int) -> list[np.random.Generator]:
    """`count` independent Generators spawned from one seed: one per run of an implementation."""
    return [np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(count)]


def _runs(suite: Suite, function: Callable, setting: Any, replicas: int, root_seed: int, key: str) -> dict[str, np.ndarray]:
    """`replicas` independent runs, each with its own Generator: the messages and the noise they carry, stacked
    on a leading replica axis."""
    runs = independent_transcripts(function, setting, (np.random.default_rng(task_seed_sequence(root_seed, f"{key}/{r}"))
                                            for r in range(replicas)), suite.shapes)
    return {"messages": np.stack([run["messages"] for run in runs]),
            "noise": np.stack([suite.added_noise(run) for run in runs])}


def _standardized(suite: Suite, setting: Any, noise: np.ndarray) -> np.ndarray:
    """Each draw of `noise` (R, T, N, ...) divided by its calibrated scale; NaN where the paper adds no noise."""
    calibrated = np.asarray(suite.calibration(setting), dtype=float)
    calibrated = calibrated.reshape(calibrated.shape + (1,) * (noise.ndim - 1 - calibrated.ndim))
    calibrated = np.broadcast_to(calibrated, noise.shape[1:])
    private = calibrated > 0
    return np.where(private, noise / np.where(private, calibrated, 1.0), np.nan)


def _families(standard: np.ndarray) -> dict[str, np.ndarray]:
    """The noise-scale check's families: per round (pooled over agents) and per agent (pooled over rounds)."""
    families = {f"round {t + 1}": standard[:, t] for t in range(standard.shape[1])}
    if standard.ndim > 3:
        families |= {f"agent {i}": standard[:, :, i] for i in range(standard.shape[2])}
    return {label: draws[np.isfinite(draws)] for label, draws in families.items() if np.isfinite(draws).any()}


def replicas_for(suite: Suite, setting: Any, profile: str) -> int:
    """Runs per side of the statistical checks: REPLICAS[profile], or more if the noise-scale check's smallest
    family needs them for SCALE_HALF_WIDTH. The log of a scale estimated from n draws has standard deviation about
    1/sqrt(n) for Laplace (sum |xi| ~ b Gamma(n)) and 1/sqrt(2n) for Gaussian noise (sum xi^2 ~ sigma^2 chi2(n))."""
    one = transcript(suite.reference, setting, np.random.default_rng(0), suite.shapes)
    sizes = [draws.size for draws in _families(_standardized(suite, setting, suite.added_noise(one)[None])).values()]
    if not sizes:
        return REPLICAS[profile]
    z = scipy.stats.norm.ppf(1 - SIGNIFICANCE / len(sizes))      # each interval at 1 - 2 alpha / families
    draws = (z / SCALE_HALF_WIDTH) ** 2 / (1.0 if suite.noise == "laplace" else 2.0)
    return max(REPLICAS[profile], int(np.ceil(draws / min(sizes))))


def _independent_runs(suite: Suite, implementation: Callable, context: CheckContext) -> dict[str, np.ndarray]:
    setting = suite.setting(context)
    replicas = replicas_for(suite, setting, context.profile)
    try:
        return context.memoized(f"verify/{suite.paper}/runs", lambda: _runs(
            suite, implementation, setting, replicas, context.root_seed, "verify/implementation"))
    except ImplementationError as error:
        raise NothingToMeasure(str(error)) from error


def scale_interval(noise: np.ndarray, kind: str, confidence: float) -> tuple[float, float]:
    """Exact confidence interval of the scale of i.i.d. zero-mean noise: Laplace b from sum |xi| ~ b Gamma(n),
    Gaussian sigma from sum xi^2 ~ sigma^2 chi2(n)."""
    n, tail = noise.size, (1 - confidence) / 2
    if kind == "laplace":
        total = float(np.abs(noise).sum())
        return total / scipy.stats.gamma.ppf(1 - tail, n), total / scipy.stats.gamma.ppf(tail, n)
    total = float(np.square(noise).sum())
    return np.sqrt(total / scipy.stats.chi2.ppf(1 - tail, n)), np.sqrt(total / scipy.stats.chi2.ppf(tail, n))


def check_noise_scale(suite: Suite, implementation: Callable, context: CheckContext) -> Measurement:
    """log(estimated scale / calibrated scale) per round (pooled over agents) and per agent (pooled over
    rounds), each draw divided by its own calibration: simultaneous (Bonferroni) intervals at 1 - 2 alpha for the
    margin, and simultaneous upper bounds at 1 - BELOW_LEVEL for "less noise than promised", for the rule
    calibrated_noise(log(1 + SCALE_MARGIN))."""
    setting = suite.setting(context)
    runs = _independent_runs(suite, implementation, context)
    families = _families(_standardized(suite, setting, runs["noise"]))   # noise (R, T, N, ...): added before sending
    if not families:
        raise NothingToMeasure("the setting calibrates no noise (no private round)")
    confidence = 1 - 2 * SIGNIFICANCE / len(families)
    with np.errstate(divide="ignore"):
        intervals = {label: tuple(np.log(scale_interval(draws, suite.noise, confidence)))
                     for label, draws in families.items()}
        uppers = {label: float(np.log(scale_interval(draws, suite.noise, 1 - 2 * BELOW_LEVEL / len(families))[1]))
                  for label, draws in families.items()}
    below = [label for label, upper in uppers.items() if upper < 0]
    margin = np.log1p(SCALE_MARGIN)
    outside = [label for label, (low, high) in intervals.items() if low >= margin or high <= -margin]
    worst = (below or outside or [max(intervals, key=lambda k: max(abs(intervals[k][0]), abs(intervals[k][1])))])[0]
    low, high = np.exp(intervals[worst])
    where = ("significantly below 1: less noise than promised, upper bound "
             f"{np.exp(uppers[worst]):.3g} at {1 - BELOW_LEVEL:.2%} simultaneous" if below else
             "outside the margin" if outside else "at its farthest")
    return Measurement(
        f"noise actually added to the messages, {runs['messages'].shape[0]} runs: scale / the paper's calibration in "
        f"[{low:.3g}, {high:.3g}] ({worst}, {where}; simultaneous {1 - 2 * SIGNIFICANCE:.0%} intervals over "
        f"{len(families)} rounds and agents); equivalent within +-{SCALE_MARGIN:.0%}",
        {"intervals": intervals, "upper_bounds": uppers, "replicas": int(runs["messages"].shape[0]),
         "margin": SCALE_MARGIN})


def check_noise_law(suite: Suite, implementation: Callable, context: CheckContext) -> Measurement:
    """The family, centre and independence of the noise actually sent (theory/verify/noise_law.py), from the noise-scale
    check's runs (no run of its own)."""
    setting = suite.setting(context)
    runs = _independent_runs(suite, implementation, context)
    standard = _standardized(suite, setting, runs["noise"])
    if not np.isfinite(standard).any():
        raise NothingToMeasure("the setting calibrates no noise (no private round)")
    line, values = measure_noise_law(standard, suite.noise, CHECK_LEVEL)
    return Measurement(f"noise actually added to the messages, {line}", values)


def dkw_half_width(size: int, entries: int, level: float) -> float:
    """e with P(sup_x |F_n(x) - F(x)| > e) <= level / (2 entries) for the empirical CDF F_n of `size` draws of any
    law F: the Dvoretzky-Kiefer-Wolfowitz inequality with Massart's constant, 2 exp(-2 n e^2). Two samples per entry
    at this width bound all entries' distances at once with probability >= 1 - level."""
    return float(np.sqrt(np.log(4 * entries / level) / (2 * size)))


def kolmogorov_distance_bounds(statistics: np.ndarray, first_size: int, second_size: int,
                               level: float = SIGNIFICANCE) -> np.ndarray:
    """Upper bounds, simultaneous over the entries at 1 - level, on the Kolmogorov distance sup |F - G| between the
    two laws behind two samples per entry, from their two-sample statistics D = sup |F_n - G_m|: by the triangle
    inequality sup |F - G| <= D + sup |F_n - F| + sup |G_m - G|, each DKW-bounded (dkw_half_width)."""
    statistics = np.asarray(statistics, dtype=float)
    return statistics + dkw_half_width(first_size, statistics.size, level) + dkw_half_width(second_size, statistics.size, level)


def check_distribution(suite: Suite, implementation: Callable, context: CheckContext) -> Measurement:
    """Two-sample Kolmogorov-Smirnov per (round, agent, coordinate) for the rule's tests, and from the same statistics
    a simultaneous upper bound on the Kolmogorov distance between the two laws at every entry, for its margin."""
    setting = suite.setting(context)
    theirs = _independent_runs(suite, implementation, context)["messages"]
    ours = context.memoized(f"verify/{suite.paper}/reference-runs", lambda: _runs(
        suite, suite.reference, setting, theirs.shape[0], context.root_seed, "verify/reference"))["messages"]
    tests = scipy.stats.ks_2samp(theirs, ours, axis=0)                            # one per message entry
    constant = np.isnan(tests.pvalue.ravel())                                     # both constant and equal: no evidence
    p_values = np.where(constant, 1.0, tests.pvalue.ravel())
    distances = np.where(constant, 0.0, tests.statistic.ravel())
    runs = theirs.shape[0]
    bounds = kolmogorov_distance_bounds(distances, runs, ours.shape[0], CHECK_LEVEL)
    first, widest = int(np.argmin(p_values)), int(np.argmax(bounds))
    where, at = (np.unravel_index(index, theirs.shape[1:]) for index in (first, widest))
    # runs per side below which even identical empirical laws (D = 0) leave the bound at or above the margin
    needed = int(np.ceil(2 * np.log(4 * p_values.size / CHECK_LEVEL) / DISTRIBUTION_MARGIN ** 2))
    outcome = (f"rules out a distance of the margin {DISTRIBUTION_MARGIN:g}" if bounds[widest] < DISTRIBUTION_MARGIN
               else f"too few runs to rule out a distance of the margin {DISTRIBUTION_MARGIN:g} (that needs more than "
                    f"{needed} runs per side even if the samples agreed exactly)")
    return Measurement(
        f"messages of {runs} independent runs vs the reference's, two-sample Kolmogorov-Smirnov per "
        f"(round, agent, coordinate), {p_values.size} tests: smallest p = {p_values[first]:.3g} at round "
        f"{where[0] + 1}, entry {tuple(int(i) for i in where[1:])} (Holm, family-wise {CHECK_LEVEL:g}); Kolmogorov "
        f"distance between the two laws <= {bounds[widest]:.3g} at every entry (widest at round {at[0] + 1}, entry "
        f"{tuple(int(i) for i in at[1:])}; simultaneous {1 - CHECK_LEVEL:.2%}, DKW): {outcome}",
        {"p_values": p_values.tolist(), "replicas": int(runs), "smallest_p": float(p_values[first]),
         "deviations": {f"Kolmogorov distance, widest of {p_values.size} entries": float(bounds[widest])},
         "runs_needed_at_zero_distance": needed})


def every_message(transcript: Mapping[str, np.ndarray]) -> np.ndarray:
    """Every message of a transcript, flattened: what an adversary who sees all communication observes."""
    return np.ravel(transcript["messages"])


def reference_difference(suite: Suite, first: Any, second: Any, root_seed: int) -> np.ndarray:
    """The mean difference of what the adversary observes between the two neighbours, under the paper's algorithm:
    the reference run on both with the same Generator (coupled), averaged over COUPLED_RUNS pairs."""
    def observed(neighbour) -> np.ndarray:
        rngs = (np.random.default_rng(task_seed_sequence(root_seed, f"verify/{suite.paper}/audit-direction/{r}"))
                for r in range(COUPLED_RUNS))
        return np.stack([suite.observe(run) for run in independent_transcripts(suite.reference, neighbour, rngs,
                                                                               suite.shapes)])
    return (observed(second) - observed(first)).mean(axis=0)


def check_privacy(suite: Suite, implementation: Callable, context: CheckContext) -> Measurement:
    setting = suite.setting(context)
    first, second = suite.neighbours(setting)
    claim = suite.claimed(first)
    # the score: Fisher's discriminant of the implementation's own runs (its scatter, fitted on the audit's fit part)
    # along the paper's mean difference, computed here from the reference (a direction the implementation's runs do
    # not estimate, so that its noise in hundreds of dimensions does not blur it): less noise, noise reused or a state
    # in the clear change the scatter, which the fit sees; the mean difference is the algorithm's, which replay judges
    direction = reference_difference(suite, first, second, context.root_seed)
    score = LdaScore(direction)
    if suite.implied_noise is not None:   # and two scores of the noise the messages imply: chosen on the fit part
        replayed = (suite.implied_noise, suite.calibration, (first, second), suite.shapes(first)["messages"])
        score = ChosenScore({"discriminant": score,
                             "implied-noise repetition": CallableScore(repetition_score(*replayed)),
                             "implied-noise likelihood ratio": CallableScore(
                                 likelihood_ratio_score(replayed[0], replayed[1], suite.noise, *replayed[2:]))})

    def sample(neighbour, n, rng):   # a Generator per run: independent runs, which may go to several workers
        runs = transcripts(implementation, [(neighbour, child) for child in rng.spawn(n)], suite.shapes)
        return np.stack([suite.observe(run) for run in runs])
    try:
        result = audit(sample, (first, second), claim, samples=AUDIT_SAMPLES[context.profile],
                       confidence=context.audit_confidence, score=score, split=AUDIT_SPLIT, futility=AUDIT_FUTILITY,
                       rng=task_seed_sequence(context.root_seed, f"verify/{suite.paper}/audit"))
    except ImplementationError as error:
        raise NothingToMeasure(str(error)) from error
    evidence = result.evidence()
    bounds = {name: (bound, claimed) for name, bound, claimed in (
        ("eps", result.epsilon_lower_bound, claim.epsilon), ("rho", result.rho_lower_bound, claim.rho),
        ("leak factor", result.tradeoff_factor_lower_bound, None if claim.tradeoff is None else 1.0))
        if claimed is not None}       # every quantity the claim states, so none is printed but not decided
    rounds = f"{first.horizon} round{'s' if first.horizon != 1 else ''}"
    scored = f", scored by the {score.chosen} (the fit part's choice)" if isinstance(score, ChosenScore) else ""
    return Measurement(f"the implementation's own messages on neighbouring settings ({rounds}{scored}), what the "
                       f"paper's adversary observes: {result.summary()}", {**evidence.values, "lower_bounds": bounds})


def conformance_claims(suite: Suite, implementation: Callable) -> tuple[Claim, ...]:
    """The seven claims of the module docstring about `implementation`, in that order."""
    def claim(name: str, title: str, statement: str, method: Method, run, rule) -> Claim:
        return Claim(f"{suite.paper}/conformance-{name}", "conformance", suite.line, title, statement,
                     (Check(title, method, partial(run, suite, implementation), rule=rule),))
    return (
        claim("accounting", "noise scales as calibrated", "The noise scale the implementation reports for every "
              "round equals the paper's calibration.", Method.NUMERICAL, check_accounting, exact()),
        claim("exact", "same draws, same transcript", "Given the same noise draws, the implementation sends the "
              "reference's messages and reaches its states at every round, agent and coordinate.",
              Method.NUMERICAL, check_exact, exact()),
        claim("replay", "each step is the paper's update", "Every state the implementation reports is what the paper's "
              "update computes from its own previous state and the messages it received, at every round, agent and "
              "coordinate, whatever its noise source.", Method.NUMERICAL, check_replay, exact()),
        claim("noise-scale", "noise actually sent as calibrated", "The noise in the messages the implementation "
              "sends has the paper's scale at every round and agent.", Method.STATISTICAL, check_noise_scale,
              calibrated_noise(float(np.log1p(SCALE_MARGIN)))),
        claim("noise-law", "noise of the paper's law, independent", "The noise in the messages the implementation sends "
              f"is of the paper's family ({suite.noise}), centred, and independent across runs, rounds, agents and "
              "coordinates.", Method.STATISTICAL, check_noise_law, fits_identity(1.0, level=CHECK_LEVEL)),
        claim("distribution", "messages distributed as the reference's", "Over independent runs, the implementation's "
              "messages have the reference's distribution at every round, agent and coordinate.",
              Method.STATISTICAL, check_distribution, fits_identity(DISTRIBUTION_MARGIN, level=CHECK_LEVEL)),
        claim("privacy", "its real messages are as private as claimed", "What the paper's adversary observes in the "
              "implementation's own messages satisfies the paper's privacy guarantee.", Method.AUDIT, check_privacy,
              audit_lower_bounds()),
    )
