"""Rules decide: a named rule with its parameters turns a check's Measurement into a verdict.

A check measures (theory/claims.py `Measurement`); a rule from this module decides. Every rule is
data: a name, its parameters and one sentence the report prints beside the evidence ("refuted if
...; confirmed if ..."). The statistical rules share one family-wise level, SIGNIFICANCE; a rule
that tests several hypotheses controls the family with Holm's step-down procedure. Each rule has
known-answer tests (tests/theory/test_rules.py): true cases confirm, false cases refute, and under
a true null its refute rate over many seeds stays at or below its stated level.

What a rule reads from a measurement is named in its docstring (keys of `Measurement.values`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.theory.instruments.stats import SIGNIFICANCE, holm

if TYPE_CHECKING:
    from dpverify.theory.claims import Measurement

class Verdict(enum.StrEnum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    NOT_RUN = "not-run"


@dataclass(frozen=True)
class Rule:
    """A decision as data. `decide(measurement)` returns the verdict; `sentence` says how."""

    name: str
    parameters: Mapping[str, Any]
    sentence: str
    decide: Callable[[Measurement], Verdict] = field(repr=False, compare=False)

    def as_record(self) -> dict[str, Any]:
        return {"name": self.name, "parameters": dict(self.parameters), "sentence": self.sentence}


def _require(measurement: Measurement, *keys: str) -> list[Any]:
    missing = [key for key in keys if key not in measurement.values]
    if missing:
        raise KeyError(f"the measurement lacks {', '.join(missing)}, which the rule reads")
    return [measurement.values[key] for key in keys]


def exact() -> Rule:
    """An exact computation (sympy identity, certified optimum, a counterexample search over a finite
    set): reads `holds` (bool). Confirmed when it holds, refuted when it does not."""
    def decide(measurement):
        (holds,) = _require(measurement, "holds")
        return Verdict.CONFIRMED if bool(holds) else Verdict.REFUTED
    return Rule("exact", {}, "confirmed if the exact computation holds; refuted if it does not", decide)


def within_tolerance(tolerance: float, *, relative: bool = True) -> Rule:
    """A numerical identity or bound: reads `excess` (how far the measured value is past what the
    paper allows; <= 0 means it holds), and `scale` for a relative tolerance. Confirmed when the
    excess is within the tolerance, refuted otherwise."""
    if not tolerance >= 0:
        raise InvalidParameterError(f"tolerance must be >= 0; got {tolerance}")

    def decide(measurement):
        excess, = _require(measurement, "excess")
        allowed = tolerance * (abs(measurement.values.get("scale", 1.0)) if relative else 1.0)
        return Verdict.CONFIRMED if np.max(excess) <= allowed else Verdict.REFUTED
    kind = "relative" if relative else "absolute"
    return Rule("within-tolerance", {"tolerance": tolerance, "kind": kind},
                f"confirmed if the measured value exceeds the paper's by at most {tolerance:g} ({kind}); "
                "refuted otherwise", decide)


def interval_below(limit: float, *, level: float = SIGNIFICANCE, min_r_squared: float | None = None) -> Rule:
    """A claimed upper limit on an estimated quantity: reads `intervals`, a mapping label -> (low,
    high) of two-sided (1 - level) confidence intervals. Confirmed if every interval lies below the
    limit, refuted if any lies at or above it, inconclusive otherwise. With `min_r_squared` the
    quantity is a fitted slope and the rule also reads `r_squared` (label -> R^2 of its fit): a fit
    below it cannot confirm (the model does not describe the data), though it may still refute."""
    def decide(measurement):
        (intervals,) = _require(measurement, "intervals")
        if any(low >= limit for low, _ in intervals.values()):
            return Verdict.REFUTED
        fits = min_r_squared is None or all(r2 >= min_r_squared for r2 in _require(measurement, "r_squared")[0].values())
        below = all(high < limit for _, high in intervals.values())
        return Verdict.CONFIRMED if below and fits else Verdict.INCONCLUSIVE
    fit_text = "" if min_r_squared is None else f" and every fit has R^2 >= {min_r_squared:g}"
    parameters = {"limit": limit, "level": level} | ({} if min_r_squared is None else {"min_r_squared": min_r_squared})
    return Rule("interval-below", parameters,
                f"confirmed if every {1 - level:.0%} interval lies below {limit:g}{fit_text}; refuted if any lies at "
                "or above it", decide)


def interval_above(limit: float, *, level: float = SIGNIFICANCE) -> Rule:
    """The mirror image of interval_below: confirmed if every interval lies above the limit."""
    def decide(measurement):
        (intervals,) = _require(measurement, "intervals")
        if any(high <= limit for _, high in intervals.values()):
            return Verdict.REFUTED
        return Verdict.CONFIRMED if all(low > limit for low, _ in intervals.values()) else Verdict.INCONCLUSIVE
    return Rule("interval-above", {"limit": limit, "level": level},
                f"confirmed if every {1 - level:.0%} interval lies above {limit:g}; refuted if any lies at or below it",
                decide)


def paired_dominance(*, level: float = SIGNIFICANCE) -> Rule:
    """An ordering across a grid (A better than B at every point): reads `p_claimed` and
    `p_opposite`, one-sided p-values per comparison for the claimed and the opposite direction.
    Holm over the comparisons in each direction: refuted if any opposite is significant, confirmed
    if every claimed comparison is, inconclusive otherwise."""
    def decide(measurement):
        p_claimed, p_opposite = _require(measurement, "p_claimed", "p_opposite")
        if len(p_opposite) and holm(p_opposite, level).any():
            return Verdict.REFUTED
        return Verdict.CONFIRMED if len(p_claimed) and holm(p_claimed, level).all() else Verdict.INCONCLUSIVE
    return Rule("paired-dominance", {"level": level, "correction": "Holm"},
                f"refuted if any comparison is significant against the claim (one-sided, Holm, family-wise "
                f"{level:g}); confirmed if every comparison is significant for it", decide)


def equivalence(margin: float, *, level: float = SIGNIFICANCE) -> Rule:
    """'Comparable' / 'about the same' (TOST): reads `intervals`, label -> (low, high) of (1 - 2 level)
    intervals of a difference (so each one-sided test has the level). Confirmed if every interval
    lies inside (-margin, margin), refuted if any lies entirely outside, inconclusive otherwise."""
    if not margin > 0:
        raise InvalidParameterError(f"an equivalence margin must be > 0; got {margin}")

    def decide(measurement):
        (intervals,) = _require(measurement, "intervals")
        if any(low >= margin or high <= -margin for low, high in intervals.values()):
            return Verdict.REFUTED
        inside = all(-margin < low and high < margin for low, high in intervals.values())
        return Verdict.CONFIRMED if inside else Verdict.INCONCLUSIVE
    return Rule("equivalence", {"margin": margin, "level": level},
                f"confirmed if every {1 - 2 * level:.0%} interval of the difference lies within ±{margin:g} (TOST at "
                f"{level:g}); refuted if any lies entirely outside it", decide)


def calibrated_noise(margin: float, *, level: float = SIGNIFICANCE) -> Rule:
    """Noise sent against its calibration: `equivalence(margin)` on the `intervals` of log(scale / calibrated
    scale), and also refuted when one of the `upper_bounds` of that log (simultaneous, at the check's own stated
    level) lies below 0: significantly less noise than promised is a privacy failure whatever the margin (more
    noise than promised, within the margin, costs only accuracy)."""
    within = equivalence(margin, level=level)

    def decide(measurement):
        (uppers,) = _require(measurement, "upper_bounds")
        if any(upper < 0 for upper in uppers.values()):
            return Verdict.REFUTED
        return within.decide(measurement)
    return Rule("calibrated-noise", {"margin": margin, "level": level},
                f"refuted if a simultaneous upper bound of log(scale / calibration) lies below 0 (less noise than "
                f"promised) or a {1 - 2 * level:.0%} interval lies entirely outside ±{margin:g}; confirmed if every "
                f"interval lies within ±{margin:g} (TOST at {level:g})", decide)


def audit_lower_bounds(*, relative_tolerance: float = 0.0) -> Rule:
    """Empirical lower bounds on several privacy quantities at once (an audit's eps and rho, a probe's
    witnessed sensitivity): reads `lower_bounds`, a mapping label -> (lower bound, claimed value).
    Refuted if any lower bound exceeds its claimed value by more than `relative_tolerance` (relative
    to the claim: round-off of a deterministic probe); otherwise inconclusive ('not refuted'): lower
    bounds alone never confirm privacy."""
    if not relative_tolerance >= 0:
        raise InvalidParameterError(f"relative_tolerance must be >= 0; got {relative_tolerance}")

    def decide(measurement):
        (lower_bounds,) = _require(measurement, "lower_bounds")
        exceeded = any(bound > claimed * (1.0 + relative_tolerance) for bound, claimed in lower_bounds.values())
        return Verdict.REFUTED if exceeded else Verdict.INCONCLUSIVE
    return Rule("audit-lower-bounds", {"relative_tolerance": relative_tolerance},
                "refuted if any lower bound (eps, rho, sensitivity) exceeds its claimed value"
                + (f" by more than {relative_tolerance:g} (relative)" if relative_tolerance else "")
                + "; otherwise not refuted (lower bounds cannot confirm privacy)", decide)


def reported(why: str = "the paper claims nothing here; the measured values are reported") -> Rule:
    """A quantity measured so the report can show it, which no measurement here can decide (the paper
    claims nothing, or the claim involves constants that exist only in a proof): reads no key. Always
    inconclusive; `why` says what would decide it."""
    def decide(measurement):
        return Verdict.INCONCLUSIVE
    return Rule("reported", {"why": why}, f"never confirmed or refuted: {why}", decide)


def counterexample() -> Rule:
    """A search for a counterexample (a symbolic derivation of the exact value, a probe over a finite
    set): reads `found`. Refuted when one was found; otherwise inconclusive: a search that finds none
    proves nothing."""
    def decide(measurement):
        (found,) = _require(measurement, "found")
        return Verdict.REFUTED if bool(found) else Verdict.INCONCLUSIVE
    return Rule("counterexample", {}, "refuted if a counterexample was found; otherwise inconclusive (finding none "
                "proves nothing)", decide)


def worst_case_equality() -> Rule:
    """A printed equality for a worst case (a sensitivity: a supremum over neighbouring inputs under the claim's
    hypotheses), one rule wherever a paper prints one: reads `exceeded` (an admissible instance goes above the
    printed value) and `attained` (True: an admissible instance reaches it; False: the supremum over the
    hypotheses is proved below it; None: not determined). A value that is only a bound is refuted as printed;
    its direction and looseness are the measurement's to state (and a finding's to confirm, where one is
    declared)."""
    def decide(measurement):
        exceeded, attained = _require(measurement, "exceeded", "attained")
        if bool(exceeded) or attained is False:
            return Verdict.REFUTED
        return Verdict.CONFIRMED if attained is True else Verdict.INCONCLUSIVE
    return Rule("worst-case-equality", {}, "refuted if an admissible instance exceeds the printed worst case, or if "
                "the supremum over the hypotheses is proved below it (then it holds only as a bound); confirmed if none "
                "exceeds it and an admissible instance attains it; inconclusive otherwise", decide)


def proof() -> Rule:
    """A search for a proof (e.g. a sufficient condition checked symbolically): reads `proved`. Confirmed
    when the proof goes through; otherwise inconclusive: a failed proof route refutes nothing."""
    def decide(measurement):
        (proved,) = _require(measurement, "proved")
        return Verdict.CONFIRMED if bool(proved) else Verdict.INCONCLUSIVE
    return Rule("proof", {}, "confirmed if the proof goes through; otherwise inconclusive (a failed route refutes "
                "nothing)", decide)


def fits_identity(margin: float, *, level: float = SIGNIFICANCE) -> Rule:
    """An exact law (a probability, a stationary distribution, a reference's law) tested against simulated
    samples: reads `p_values`, one goodness-of-fit test per part of the law, and `deviations`, label -> an
    upper confidence bound on the distance between the law that generated the samples and the stated law,
    simultaneous over the labels at 1 - level, in the units of `margin` (the check names the distance: the
    largest difference of two probabilities, the Kolmogorov distance, ...). `margin` is the deviation that
    matters, named by the rule's user with its reason. Refuted if a test is rejected (Holm, family-wise
    level); confirmed if none is and every deviation bound lies below the margin (an equivalence statement:
    the samples rule out a deviation of that size); otherwise inconclusive: too few samples to have seen a
    deviation of the margin, and a test that could not have failed is no evidence. An empty family is
    inconclusive."""
    if not margin > 0:
        raise InvalidParameterError(f"the margin of fits_identity must be > 0; got {margin}")

    def decide(measurement):
        p_values, deviations = _require(measurement, "p_values", "deviations")
        if not len(p_values):
            return Verdict.INCONCLUSIVE
        if holm(p_values, level).any():
            return Verdict.REFUTED
        small = len(deviations) and all(bound < margin for bound in deviations.values())
        return Verdict.CONFIRMED if small else Verdict.INCONCLUSIVE
    return Rule("fits-identity", {"margin": margin, "level": level, "correction": "Holm"},
                f"refuted if a goodness-of-fit test of the stated law is rejected (Holm, family-wise {level:g}); "
                f"confirmed if none is and every simultaneous {1 - level:.0%} upper bound on the distance between the "
                f"sampled and the stated law lies below {margin:g}; otherwise inconclusive (too few samples to see a "
                f"deviation of {margin:g})", decide)


def converges(threshold: float) -> Rule:
    """Convergence of an error along runs: reads `cases`, label -> {"final_upper": an upper bound on the
    error at the horizon (a one-sided confidence bound, or the largest over replicas), "final": its
    estimate, "stalled": whether the check's trend criterion found no decrease}. Confirmed if every case
    ends with final_upper below the threshold and is not stalled; refuted if a case is stalled with its
    final error above the threshold (a plateau or divergence, which more iterations would not cure);
    inconclusive otherwise (still decreasing at the horizon)."""
    def decide(measurement):
        (cases,) = _require(measurement, "cases")
        if any(case["stalled"] and case["final"] > threshold for case in cases.values()):
            return Verdict.REFUTED
        done = len(cases) and all(case["final_upper"] < threshold and not case["stalled"] for case in cases.values())
        return Verdict.CONFIRMED if done else Verdict.INCONCLUSIVE
    return Rule("converges", {"threshold": threshold},
                f"confirmed if every run's error at the horizon is bounded below {threshold:g} and still decreasing or "
                f"settled; refuted if a run stalls (no decrease) above {threshold:g}; otherwise inconclusive", decide)


def separated_below() -> Rule:
    """'Fewer than every other' for quantities that vary across replicas (message counts): reads
    `samples`, label -> (a, b), the replicas' values of the claimed-smaller side and of the other.
    Confirmed if for every label every a lies below every b (max a < min b); refuted if for some label
    b's median is at or below a's; inconclusive otherwise (the replicas overlap)."""
    def decide(measurement):
        (samples,) = _require(measurement, "samples")
        pairs = [(np.asarray(a, dtype=float), np.asarray(b, dtype=float)) for a, b in samples.values()]
        if any(np.median(b) <= np.median(a) for a, b in pairs):
            return Verdict.REFUTED
        return Verdict.CONFIRMED if pairs and all(a.max() < b.min() for a, b in pairs) else Verdict.INCONCLUSIVE
    return Rule("separated-below", {}, "confirmed if every replica of the claimed-smaller side lies below every "
                "replica of each other side; refuted if another side's median is at or below its median", decide)
