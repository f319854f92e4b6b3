"""Empirical privacy auditing: statistically valid LOWER bounds on the privacy loss of a black-box
mechanism, from samples of its output on neighbouring datasets.

Method (`audit`)
----------------
For one neighbouring pair (d0, d1) and a batched sampler `sample(dataset, n, rng) -> (n,) or (n, k)`:

1. Split. `samples` draws per side are split into a first part (fraction `split`) and a fresh second
   part. Everything data-dependent (the score, the event) is chosen on the first part only, so the
   second part gives an honest test (Jagielski, Ullman & Oprea 2020, "Auditing Differentially Private
   Machine Learning: How Private is Private SGD?", Alg. 2; Nasr, Song, Thakurta, Papernot & Carlini
   2021, "Adversary Instantiation: Lower Bounds for Differentially Private Machine Learning", Sec. 4).
2. Score. Observations are reduced to a scalar score (any fixed function of the output is
   post-processing): the identity for scalar observations; the log-likelihood ratio when the caller
   knows the noise family (pass it as `score`); otherwise a classifier fitted on the first half of the
   first part (Fisher LDA for continuous vectors, a plug-in likelihood ratio of the distinct outputs for
   discrete transcripts, or ridge logistic regression) -- see `dpverify.theory.audit.scores`.
3. Event search. On the rest of the first part the score distributions of both sides are counted at
   candidate thresholds (quantiles of a pilot sample, dense in both tails: a streamed histogram), for
   the events S = {score >= t} and S = {score < t}, in both directions (P[M(d1) in S] vs P[M(d0) in S]
   and P[M(d0) in S] vs P[M(d1) in S]). Each event is scored by the lower bound it would give on the
   second part (first-part frequencies projected to the second part's size, Clopper-Pearson at the
   test level); the best `events_per_pair` (direction, tail) combinations, each at its best threshold,
   are carried to the second part -- for each claimed quantity (eps and/or rho), as the best event for
   an eps bound and for a rho bound differ. This event search is the search over output sets of Ding,
   Wang, Wang, Zhang & Kifer 2018 ("Detecting Violations of Differential Privacy", Sec. 4) restricted
   to threshold sets of a score.
4. Test. On the second part only the two event counts are needed. With per-interval level
   alpha / (2 m) -- m = number of events tested over all pairs, directions and claimed quantities
   (Bonferroni), 2 = the union bound over the two probabilities of one event -- one-sided
   Clopper-Pearson bounds give p1_lo <= P[M(d_num) in S] and p0_hi >= P[M(d_den) in S], and then
       eps_lb = ln((p1_lo - delta) / p0_hi)                      (Jagielski et al. 2020, Sec. 3)
   is a lower bound on eps of any (eps, delta)-DP guarantee, and
       rho_lb = sup_alpha D_alpha(Bern(p1_lo) || Bern(p0_hi)) / alpha
   is a lower bound on rho of any rho-zCDP guarantee (Bun & Steinke 2016, Def. 1.1; data processing
   of Renyi divergence, van Erven & Harremoes 2014; see `dpverify.theory.audit.bounds`); with an f-DP claim
   (`PrivacyClaim.tradeoff`), the leak factor: by how much the claim's privacy parameter must grow before
   p1_lo <= its largest power at level p0_hi (`dpverify.theory.audit.tradeoff`). All events hold
   simultaneously with probability >= `confidence`, so the maxima over events and pairs are valid.
5. Verdict. REFUTED when eps_lb > claimed eps, rho_lb > claimed rho or the leak factor > 1; otherwise
   "not refuted at N samples". An audit never proves privacy (a lower bound below the claim says nothing about the
   mechanism's true privacy loss on other pairs or events).
6. Futility stop (optional, `futility` = beta). Correct code spends most of an audit's time on a test it cannot
   fail. At each look of FUTILITY_LOOKS the test computes, for every tested event, UPPER Clopper-Pearson bounds
   at level beta / (2 m L) (L looks): the bound each claimed quantity would take at P[M(d_num) in S] = p1_hi and
   P[M(d_den) in S] = p0_lo. Every quantity increases in p1 and decreases in p0 (bounds.py, tradeoff.py), so
   these are upper bounds on the event's true eps, rho and leak factor, simultaneously with probability
   >= 1 - beta. If none exceeds the claim, no event can refute it and the test stops there ("stochastic
   curtailment", Lan, Simon & Halperin 1982, with a confidence bound in place of conditional power). It never
   adds a refutation (a stop is never a refutation), so the false-refutation rate is unchanged; it stops an audit
   that would have refuted only if an event that truly violates the claim looked harmless at a look: at most
   beta, so the power against such a mechanism falls by at most beta. An audit that does not stop tests the same
   draws as without it (a score whose last bits depend on how many samples it is computed on at once, such as a
   fitted linear score, can move a sample that ties with the threshold). The lower bounds of a stopped audit are
   those of the samples tested so far.
7. Model-based (labelled, never used for the verdict): the Gaussian-DP parameter mu = |m1 - m0| / s of
   the score on the second part, assuming Gaussian scores with a common variance (Dong, Roth & Su
   2019, Def. 2.6), and rho = mu^2 / 2.

Sampling is streamed: chunks of `chunk_size` per side; the first part keeps a histogram over at most
MAX_CANDIDATE_THRESHOLDS thresholds, the second part only event counts and score moments, so memory is
O(chunk_size * k) whatever `samples` is. The same idea -- statistically certified one-sided bounds
from many black-box runs -- underlies Lu, Munoz, Fuchs et al. 2022 ("A General Framework for Auditing
Differentially Private Machine Learning") and the one-run audits of Steinke, Nasr & Jagielski 2023.

`sensitivity_probe` checks a claimed sensitivity directly: it measures the distance between the
pre-noise quantities of neighbouring datasets (computed with identical randomness by the caller).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.theory.audit import bounds
from dpverify.theory.audit.scores import Scorer, make_scorer
from dpverify.theory.audit.tradeoff import Tradeoff
from dpverify.theory.claims import Evidence, Verdict
from dpverify.theory.instruments.stats import clopper_pearson

# default: the level of the audit when the caller does not choose one (one false refutation in 20
# audits of a mechanism that satisfies its claim, at most).
DEFAULT_CONFIDENCE = 0.95
# default: each part of the split (and, for fitted scores, the fit and the search halves of the first
# part) needs at least this many samples per side: fewer cannot bound a probability usefully.
MIN_SAMPLES_PER_PART = 20
# default: scores per side buffered before the candidate thresholds are placed (their quantiles).
PILOT_SIZE = 100_000
# default: number of candidate thresholds of the event search (half dense in each tail).
MAX_CANDIDATE_THRESHOLDS = 4_096
# default: a fitted score (classifier) is fitted on this fraction of the first part, capped at
# CLASSIFIER_FIT_CAP rows per side; the rest of the first part is used for the event search.
CLASSIFIER_FIT_FRACTION = 0.5
CLASSIFIER_FIT_CAP = 1_000_000
# default: fraction of the samples used to choose the event (the rest tests it).
DEFAULT_SPLIT = 0.5
# with `futility`: the fractions of the second part after which the test may stop (see `audit`); few and early,
# since each look spends part of the futility level and a correct mechanism usually stops at the first
FUTILITY_LOOKS = (0.125, 0.25, 0.5)


def minimum_samples(split: float = DEFAULT_SPLIT) -> int:
    """The fewest samples per side with which every score can run at this split: each part needs
    MIN_SAMPLES_PER_PART, and a fitted score divides the first part again (CLASSIFIER_FIT_FRACTION). Callers
    (the command line) reject fewer before any run starts."""
    first_part = math.ceil(MIN_SAMPLES_PER_PART / min(CLASSIFIER_FIT_FRACTION, 1.0 - CLASSIFIER_FIT_FRACTION))
    return math.ceil(max(first_part / split, MIN_SAMPLES_PER_PART / (1.0 - split)))
# default: number of Renyi orders used to rank candidate events for a rho bound (the final bound of
# the chosen events is refined by `bounds.rho_lower_bound`).
_RANKING_ORDERS = 1.0 + np.logspace(-3.0, 4.0, 57)

_COMBINATIONS = ((1, "upper"), (0, "lower"), (0, "upper"), (1, "lower"))  # (numerator side, tail)


# ------------------------------------------------------------------------------------------------
# claim and result


@dataclass(frozen=True)
class PrivacyClaim:
    """A claimed guarantee: (epsilon, delta)-DP (delta = 0: pure DP), rho-zCDP and/or an f-DP trade-off curve
    (`tradeoff`: theory/audit/tradeoff.py, e.g. the Gaussian-DP mu of a whole transcript).

    delta qualifies epsilon only (zCDP has no delta here: rho-zCDP in the sense of Bun & Steinke 2016).
    """

    epsilon: float | None = None
    delta: float = 0.0
    rho: float | None = None
    tradeoff: Tradeoff | None = None

    def __post_init__(self) -> None:
        if self.epsilon is None and self.rho is None and self.tradeoff is None:
            raise InvalidParameterError("a privacy claim needs epsilon (with optional delta), rho (zCDP) or a trade-off "
                                        "curve (f-DP); got none")
        if self.tradeoff is not None and not isinstance(self.tradeoff, Tradeoff):
            raise InvalidParameterError(f"tradeoff must be a theory.audit.tradeoff.Tradeoff; got {type(self.tradeoff).__name__}")
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", _finite_number("epsilon", self.epsilon, minimum=0.0))
        if self.rho is not None:
            object.__setattr__(self, "rho", _finite_number("rho", self.rho, minimum=0.0))
        delta = _finite_number("delta", self.delta, minimum=0.0)
        if not delta < 1.0:
            raise InvalidParameterError(f"delta must lie in [0, 1) ((eps, delta)-DP, Dwork & Roth Def. 2.4); got {self.delta!r}")
        if delta > 0.0 and self.epsilon is None:
            raise InvalidParameterError(f"delta qualifies an epsilon claim; got delta = {delta} without epsilon (claim rho alone for zCDP)")
        object.__setattr__(self, "delta", delta)

    def describe(self) -> str:
        parts = []
        if self.epsilon is not None:
            parts.append(f"eps {self.epsilon:g}" + (f", delta {self.delta:g}" if self.delta > 0 else ""))
        if self.rho is not None:
            parts.append(f"rho {self.rho:g} (zCDP)")
        if self.tradeoff is not None:
            parts.append(self.tradeoff.describe())
        return "; ".join(parts)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of `audit`. epsilon_lower_bound, rho_lower_bound: valid lower bounds (simultaneously, at
    `confidence`) on any eps (at the claimed delta) and any rho the mechanism can satisfy; both are
    always computed (rho_lower_bound from the Bernoulli Renyi divergence of the tested events).
    gdp_mu_estimate: MODEL-BASED Gaussian-DP estimate (Gaussian scores assumed), not a bound.
    direction, threshold: the event of the strongest bound. details: everything behind the numbers."""

    claim: PrivacyClaim
    epsilon_lower_bound: float
    rho_lower_bound: float | None
    gdp_mu_estimate: float | None
    confidence: float
    samples_per_side: int
    direction: str
    threshold: float
    refuted: bool
    details: dict = field(default_factory=dict, compare=False)
    # with a trade-off claim: the largest factor by which its privacy parameters must grow before the tested events
    # stop refuting it (> 1 refutes; tradeoff.py)
    tradeoff_factor_lower_bound: float | None = None

    @property
    def gdp_rho_estimate(self) -> float | None:
        """rho = mu^2 / 2 of the model-based GDP estimate (Bun & Steinke 2016 Prop. 1.6 for a Gaussian pair)."""
        return None if self.gdp_mu_estimate is None else self.gdp_mu_estimate**2 / 2.0

    def summary(self) -> str:
        level = f"{100.0 * self.confidence:g}% conf., {self.samples_per_side} samples/side"
        parts = []
        if self.claim.epsilon is not None:
            shown, claimed = _two_numbers(self.epsilon_lower_bound, self.claim.epsilon)
            relation = ">" if self.epsilon_lower_bound > self.claim.epsilon else "<="
            claimed_text = f"claimed eps {claimed}" + (f" (delta {self.claim.delta:g})" if self.claim.delta > 0 else "")
            parts.append(f"eps_lb = {shown} ({level}) {relation} {claimed_text}")
        if self.claim.rho is not None:
            shown, claimed = _two_numbers(self.rho_lower_bound, self.claim.rho)
            relation = ">" if self.rho_lower_bound > self.claim.rho else "<="
            prefix = "" if parts else f" ({level})"
            parts.append(f"rho_lb = {shown}{prefix} {relation} claimed rho {claimed}")
        if self.claim.tradeoff is not None:
            factor = self.tradeoff_factor_lower_bound
            prefix = "" if parts else f" ({level})"
            parts.append(f"leak factor >= {factor:.3g}{prefix} {'>' if factor > 1 else '<='} 1 against "
                         f"{self.claim.tradeoff.describe()}")
        outcome = "REFUTED" if self.refuted else f"not refuted at {self.samples_per_side} samples"
        futility = self.details.get("futility")
        if futility and futility["stopped"]:
            pairs = futility["per_pair"]     # each pair's looks, where it stopped and its upper bounds there
            uppers = {name: max(pair["upper_bounds"][name] for pair in pairs) for name in pairs[0]["upper_bounds"]}
            joined = ", ".join(f"{name} <= {value:.3g}" for name, value in uppers.items())
            outcome += (f" (stopped for futility: no tested event can refute it, {joined} "
                        f"at {100.0 * (1.0 - futility['beta']):g}%)")
        return "; ".join(parts) + f": {outcome}"

    def verdict(self) -> Verdict:
        """REFUTED, or INCONCLUSIVE when not refuted: an audit gives lower bounds only, it never confirms."""
        return Verdict.REFUTED if self.refuted else Verdict.INCONCLUSIVE

    def evidence(self) -> Evidence:
        values: dict[str, Any] = {
            "claim": self.claim.describe(),
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "rho_lower_bound": self.rho_lower_bound,
            "tradeoff_factor_lower_bound": self.tradeoff_factor_lower_bound,
            "gdp_mu_estimate (model-based)": self.gdp_mu_estimate,
            "gdp_rho_estimate (model-based)": self.gdp_rho_estimate,
            "confidence": self.confidence,
            "samples_per_side": self.samples_per_side,
            "direction": self.direction,
            "threshold": self.threshold,
            "tests (Bonferroni)": self.details.get("tests"),
        }
        return Evidence(self.summary(), values)


# ------------------------------------------------------------------------------------------------
# the audit


def audit(
    sample: Callable[[Any, int, np.random.Generator], np.ndarray],
    neighbours,
    claim: PrivacyClaim,
    *,
    samples: int,
    confidence: float = DEFAULT_CONFIDENCE,
    rng,
    score=None,
    adjacency: Callable[[Any, Any], bool] | None = None,
    chunk_size: int = 100_000,
    split: float = DEFAULT_SPLIT,
    events_per_pair: int = 1,
    futility: float | None = None,
) -> AuditResult:
    """Empirical lower bounds on eps (and rho) of `sample` on neighbouring datasets; see the module
    docstring for the method and its references.

    sample: `sample(dataset, n, rng)` returns n independent outputs, shape (n,) or (n, k), finite.
    neighbours: a 2-tuple (d0, d1), or a list / iterable of such pairs (each audited; Bonferroni over
        all tested events; the strongest bound is reported). A 2-tuple is always read as ONE pair.
    claim: the PrivacyClaim to audit. samples: draws per side and per pair (split into two parts).
    confidence: simultaneous confidence of all bounds, in (0, 1). rng: numpy Generator, seed or
        SeedSequence (each pair and side gets an independent child stream).
    score: None (identity for scalar observations; "categorical" for discrete vectors, else "lda"),
        one of "identity", "lda", "logistic", "categorical", or a callable observations -> (n,)
        (e.g. a log-likelihood ratio, `dpverify.theory.audit.scores.gaussian_log_likelihood_ratio`).
    adjacency: optional `adjacency(d0, d1) -> bool`; every pair must satisfy it.
    chunk_size: outputs drawn per call of `sample`. split: fraction of `samples` used for the search.
    events_per_pair: how many (direction, tail) combinations per pair and claimed quantity are tested
        on the second part (1..4; more hedges a wrong choice on the first part, costs Bonferroni).
    futility: None (test the whole second part), or beta in (0, 1): stop the test at a look of FUTILITY_LOOKS
        once no tested event can refute the claim with probability >= 1 - beta (step 6 of the module docstring:
        the power falls by at most beta).
    """
    started = time.perf_counter()
    if not callable(sample):
        raise InvalidParameterError(f"sample must be a callable sample(dataset, n, rng) -> (n,) or (n, k) array; got {type(sample).__name__}")
    if not isinstance(claim, PrivacyClaim):
        raise InvalidParameterError(f"claim must be a PrivacyClaim(epsilon=..., delta=..., rho=...); got {type(claim).__name__}")
    confidence = _confidence(confidence)
    samples = _positive_int("samples", samples)
    chunk_size = _positive_int("chunk_size", chunk_size)
    events_per_pair = _positive_int("events_per_pair", events_per_pair)
    if events_per_pair > len(_COMBINATIONS):
        raise InvalidParameterError(f"events_per_pair must be between 1 and {len(_COMBINATIONS)} (2 directions x 2 tails); got {events_per_pair}")
    if futility is not None and not (isinstance(futility, (int, float)) and 0.0 < futility < 1.0):
        raise InvalidParameterError(f"futility must be None or a level beta in (0, 1); got {futility!r}")
    split = _finite_number("split", split)
    if not 0.0 < split < 1.0:
        raise InvalidParameterError(f"split (fraction of the samples used to choose the event) must lie in (0, 1); got {split}")
    if score is not None and not callable(score) and not isinstance(score, str):
        raise InvalidParameterError(f"score must be None, a string or a callable observations -> (n,); got {type(score).__name__}")
    if adjacency is not None and not callable(adjacency):
        raise InvalidParameterError(f"adjacency must be a callable adjacency(d0, d1) -> bool or None; got {type(adjacency).__name__}")
    first_part = int(round(split * samples))
    second_part = samples - first_part
    if min(first_part, second_part) < MIN_SAMPLES_PER_PART:
        raise InvalidParameterError(
            f"samples = {samples} per side is too few: split = {split:g} gives {first_part} samples for the event search and "
            f"{second_part} for the test; each part needs at least {MIN_SAMPLES_PER_PART} "
            f"(samples >= {math.ceil(MIN_SAMPLES_PER_PART / min(split, 1.0 - split))} at this split)"
        )
    pairs = _neighbour_pairs(neighbours)
    if adjacency is not None:
        for index, (d0, d1) in enumerate(pairs):
            verdict = adjacency(d0, d1)
            if not (isinstance(verdict, (bool, np.bool_)) and bool(verdict)):
                raise InvalidDataError(
                    f"pair {index} is not neighbouring under the given adjacency: adjacency(d0, d1) returned {verdict!r}, expected True; "
                    "a DP guarantee only constrains neighbouring datasets"
                )
    generator = _generator(rng)
    targets = [name for name, value in (("epsilon", claim.epsilon), ("rho", claim.rho), ("tradeoff", claim.tradeoff))
               if value is not None]
    planned_tests = len(pairs) * events_per_pair * len(targets)
    planned_alpha = (1.0 - confidence) / (2.0 * planned_tests)
    children = _children(generator, 2 * len(pairs))

    pair_results = []
    for index, (d0, d1) in enumerate(pairs):
        streams = (
            _Stream(sample, d0, children[2 * index], chunk_size, f"d0 of pair {index}"),
            _Stream(sample, d1, children[2 * index + 1], chunk_size, f"d1 of pair {index}"),
        )
        shape_holder: dict[str, tuple] = {}
        for stream in streams:
            stream.shape_holder = shape_holder
        pair_results.append(
            _audit_pair(index, streams, score, first_part, second_part, chunk_size, claim, planned_alpha, targets, events_per_pair,
                        None if futility is None else futility / (2.0 * planned_tests))
        )

    events = [event for result in pair_results for event in result["events"]]
    tests = len(events)
    interval_confidence = 1.0 - (1.0 - confidence) / (2.0 * tests)
    for event in events:
        tested = event["test_samples"]
        low = clopper_pearson(int(event["k_numerator"]), tested, interval_confidence, side="lower")[0]
        high = clopper_pearson(int(event["k_denominator"]), tested, interval_confidence, side="upper")[1]
        event["p_numerator_low"], event["p_denominator_high"] = low, high
        event["epsilon_lower_bound"] = max(0.0, bounds.epsilon_lower_bound(low, high, claim.delta))
        event["rho_lower_bound"], event["rho_order"] = bounds.rho_lower_bound(low, high)
        if claim.tradeoff is not None:
            event["tradeoff_factor_lower_bound"] = float(claim.tradeoff.factor_lower_bound(low, high))
    epsilon_lb = max(event["epsilon_lower_bound"] for event in events)
    rho_lb = max(event["rho_lower_bound"] for event in events)
    factor_lb = None if claim.tradeoff is None else max(event["tradeoff_factor_lower_bound"] for event in events)
    exceeded = _exceeding(claim, {"eps": epsilon_lb, "rho": rho_lb, "leak factor": factor_lb})
    refuted_by_epsilon, refuted_by_rho, refuted_by_tradeoff = ("eps" in exceeded, "rho" in exceeded,
                                                               "leak factor" in exceeded)
    refuted = bool(exceeded)
    if refuted_by_tradeoff or (claim.epsilon is None and claim.rho is None):
        strongest = max(events, key=lambda e: e["tradeoff_factor_lower_bound"])
    elif refuted_by_epsilon or (claim.epsilon is not None and not refuted):
        strongest = max(events, key=lambda e: e["epsilon_lower_bound"])
    else:
        strongest = max(events, key=lambda e: e["rho_lower_bound"])
    mus = [result["gdp_mu"] for result in pair_results]
    gdp_mu = max(mus) if mus else None

    details = {
        "method": "split-sample event search + one-sided Clopper-Pearson (union bound), Bonferroni over tested events",
        "pairs": len(pairs),
        "samples_first_part": first_part,
        "samples_second_part": second_part,
        "futility": None if futility is None else {
            "beta": futility, "per_pair": [result["futility"] for result in pair_results],
            "stopped": all(result["futility"]["stopped_at"] is not None for result in pair_results)},
        "tests": tests,
        "interval_confidence": interval_confidence,
        "events": events,
        "per_pair": [{k: v for k, v in result.items() if k != "events"} for result in pair_results],
        "gdp_model": "model-based: Gaussian scores with a common variance assumed (Dong, Roth & Su 2019); not a bound",
        "gdp_rho_estimate": None if gdp_mu is None else gdp_mu**2 / 2.0,
        "refuted_by": [name for name, flag in (("epsilon", refuted_by_epsilon), ("rho", refuted_by_rho),
                                               ("tradeoff", refuted_by_tradeoff)) if flag],
        "seconds": time.perf_counter() - started,
    }
    return AuditResult(
        claim=claim,
        epsilon_lower_bound=float(epsilon_lb),
        rho_lower_bound=float(rho_lb),
        gdp_mu_estimate=None if gdp_mu is None else float(gdp_mu),
        confidence=confidence,
        samples_per_side=first_part + max(result["test_samples"] for result in pair_results),
        direction=strongest["direction"] if len(pairs) == 1 else f"pair {strongest['pair']}: {strongest['direction']}",
        threshold=float(strongest["threshold"]),
        refuted=refuted,
        details=details,
        tradeoff_factor_lower_bound=factor_lb,
    )


def _audit_pair(index, streams, score, first_part, second_part, chunk_size, claim, planned_alpha, targets, events_per_pair,
                futility_alpha: float | None) -> dict:
    timer = time.perf_counter()
    stream0, stream1 = streams
    pilot_rows = min(chunk_size, first_part)
    pilot0, pilot1 = stream0.peek(pilot_rows), stream1.peek(pilot_rows)
    vectors = pilot0.ndim == 2
    scorer: Scorer = make_scorer(score, vectors, np.concatenate([pilot0, pilot1]) if vectors else None)

    fit_part = 0
    if scorer.needs_fit:
        fit_part = min(int(CLASSIFIER_FIT_FRACTION * first_part), CLASSIFIER_FIT_CAP)
        if min(fit_part, first_part - fit_part) < MIN_SAMPLES_PER_PART:
            raise InvalidParameterError(
                f"the {scorer.kind} score is fitted on part of the first split: {first_part} samples per side give {fit_part} to fit "
                f"and {first_part - fit_part} to search; each needs at least {MIN_SAMPLES_PER_PART}; pass more samples"
            )
        for block0, block1 in zip(stream0.blocks(fit_part), stream1.blocks(fit_part)):
            scorer.partial_fit(block0, block1)
        scorer.finalize()
    search_part = first_part - fit_part

    # event search: histogram of both sides' scores at candidate thresholds placed on a pilot
    candidates = None
    histograms = None
    buffered: list[list[np.ndarray]] = [[], []]
    buffered_rows = 0
    pilot_target = min(PILOT_SIZE, search_part)
    for block0, block1 in zip(stream0.blocks(search_part), stream1.blocks(search_part)):
        scores = (scorer(block0), scorer(block1))
        if candidates is None:
            buffered[0].append(scores[0])
            buffered[1].append(scores[1])
            buffered_rows += scores[0].shape[0]
            if buffered_rows >= pilot_target:
                pooled = [np.concatenate(buffered[0]), np.concatenate(buffered[1])]
                candidates = _candidate_thresholds(np.concatenate(pooled))
                histograms = [_histogram(candidates, pooled[0]), _histogram(candidates, pooled[1])]
                buffered = [[], []]
        else:
            histograms[0] += _histogram(candidates, scores[0])
            histograms[1] += _histogram(candidates, scores[1])
    upper_counts = [search_part - np.cumsum(h)[:-1] for h in histograms]  # #(score >= candidate_j)
    selected = _select_events(candidates, upper_counts, search_part, second_part, claim, planned_alpha, targets, events_per_pair)
    search_seconds = time.perf_counter() - timer

    # test on the fresh second part: event counts and score moments only, up to a futility stop
    thresholds = np.array([event["threshold"] for event in selected])
    k_upper = np.zeros((2, thresholds.size), dtype=np.int64)
    moments = [_Moments(), _Moments()]
    looks = [] if futility_alpha is None else sorted({round(f * second_part) for f in FUTILITY_LOOKS} - {0, second_part})
    futility = None if futility_alpha is None else {"looks": looks, "stopped_at": None, "upper_bounds": None}
    tested = 0
    for end in (*looks, second_part):
        for block0, block1 in zip(stream0.blocks(end - tested), stream1.blocks(end - tested)):
            for side, block in enumerate((block0, block1)):
                values = scorer(block)
                k_upper[side] += np.count_nonzero(values[:, None] >= thresholds[None, :], axis=0)
                moments[side].add(values)
        tested = end
        _record_counts(selected, k_upper, tested, index)
        if end < second_part:
            futility["upper_bounds"] = _upper_bounds(selected, claim, futility_alpha / len(looks))
            if not _exceeding(claim, futility["upper_bounds"]):
                futility["stopped_at"] = tested
                break
    gdp_mu = bounds.gdp_mu_estimate(moments[0].mean, moments[0].variance, moments[1].mean, moments[1].variance)
    return {
        "pair": index,
        "events": selected,
        "score": scorer.describe(),
        "observation_shape": stream0.shape_holder.get("shape"),
        "fit_samples": fit_part,
        "search_samples": search_part,
        "test_samples": tested,
        "futility": futility,
        "candidate_thresholds": int(candidates.size),
        "score_mean": (moments[0].mean, moments[1].mean),
        "score_variance": (moments[0].variance, moments[1].variance),
        "gdp_mu": gdp_mu,
        "gdp_rho": gdp_mu**2 / 2.0,
        "seconds_search": search_seconds,
        "seconds_total": time.perf_counter() - timer,
    }


def _record_counts(selected: list[dict], k_upper: np.ndarray, tested: int, pair: int) -> None:
    """Each event's two counts among the `tested` samples per side of the second part."""
    for position, event in enumerate(selected):
        numerator, denominator = event["numerator"], 1 - event["numerator"]
        counts = k_upper[:, position] if event["tail"] == "upper" else tested - k_upper[:, position]
        event["k_numerator"], event["k_denominator"] = int(counts[numerator]), int(counts[denominator])
        event["test_samples"], event["pair"] = tested, pair


def _upper_bounds(selected: list[dict], claim: PrivacyClaim, alpha: float) -> dict[str, float]:
    """The largest, over the events, upper confidence bound on each claimed quantity (eps at the claim's delta, rho,
    leak factor): the lower-bound formulas at P[num] = its upper and P[den] = its lower Clopper-Pearson bound (each
    at `alpha`), which bound the event's true value from above since every formula increases in P[num] and
    decreases in P[den]."""
    tested = selected[0]["test_samples"]
    high = bounds.cp_upper(np.array([event["k_numerator"] for event in selected]), tested, alpha)
    low = bounds.cp_lower(np.array([event["k_denominator"] for event in selected]), tested, alpha)
    result = {}
    if claim.epsilon is not None:
        result["eps"] = float(np.max(bounds.epsilon_lower_bound(high, low, claim.delta)))
    if claim.rho is not None:
        result["rho"] = max(bounds.rho_lower_bound(float(a), float(b))[0] for a, b in zip(high, low))
    if claim.tradeoff is not None:
        result["leak factor"] = float(np.max(claim.tradeoff.factor_lower_bound(high, low)))
    return result


def _exceeding(claim: PrivacyClaim, values: dict[str, float | None]) -> list[str]:
    """Which of the claimed quantities `values` ("eps", "rho", "leak factor") exceed the claim (step 5's rule): eps
    over its eps, rho over its rho, the leak factor over 1; quantities the claim does not state never do."""
    claimed = {"eps": claim.epsilon, "rho": claim.rho, "leak factor": None if claim.tradeoff is None else 1.0}
    return [name for name, value in values.items()
            if claimed[name] is not None and value is not None and value > claimed[name]]


def _select_events(candidates, upper_counts, search_part, second_part, claim, alpha, targets, events_per_pair) -> list[dict]:
    """Best threshold of each (direction, tail) for each target, ranked by the bound the first part
    itself certifies (Clopper-Pearson at level alpha / (number of candidate events)); the top
    `events_per_pair` per target, deduplicated."""
    counts = {}
    for side in (0, 1):
        counts[(side, "upper")] = upper_counts[side]
        counts[(side, "lower")] = search_part - upper_counts[side]
    fractions = {key: value / search_part for key, value in counts.items()}
    # Bonferroni over every candidate event: the ranking bound holds for all candidates at once, which
    # keeps the maximization from picking a far-tail event whose few counts fluctuated up (winner's curse)
    search_alpha = alpha / (len(candidates) * len(_COMBINATIONS))
    lows = {key: bounds.cp_lower(value, search_part, search_alpha) for key, value in counts.items()}
    highs = {key: bounds.cp_upper(value, search_part, search_alpha) for key, value in counts.items()}
    chosen: dict[tuple, dict] = {}
    for target in targets:
        ranked = []
        for numerator, tail in _COMBINATIONS:
            low, high = lows[(numerator, tail)], highs[(1 - numerator, tail)]
            if target == "tradeoff":     # its largest only, found without bisecting every candidate to the end
                best, value = claim.tradeoff.largest_factor(low, high)
            else:
                objective = np.atleast_1d(bounds.epsilon_lower_bound(low, high, claim.delta) if target == "epsilon"
                                          else bounds.rho_lower_bound_grid(low, high, _RANKING_ORDERS))
                best = int(np.argmax(objective))
                value = float(objective[best])
            ranked.append((value, numerator, tail, best))
        ranked.sort(key=lambda item: -item[0])
        for value, numerator, tail, best in ranked[:events_per_pair]:
            threshold = float(candidates[best])
            key = (numerator, tail, threshold)
            event = chosen.get(key)
            if event is None:
                relation = ">=" if tail == "upper" else "<"
                event = chosen[key] = {
                    "numerator": numerator,
                    "tail": tail,
                    "threshold": threshold,
                    "direction": f"P[M(d{numerator}) in S] vs P[M(d{1 - numerator}) in S], S = {{score {relation} {threshold:.6g}}}",
                    "selected_for": [],
                    "search_frequencies": (
                        float(fractions[(numerator, tail)][best]),
                        float(fractions[(1 - numerator, tail)][best]),
                    ),
                    "search_bound": {},
                }
            event["selected_for"].append(target)
            event["search_bound"][target] = value
    return list(chosen.values())


def _candidate_thresholds(pooled: np.ndarray) -> np.ndarray:
    """Candidate thresholds: every distinct pilot value if there are few, else pilot quantiles on a grid
    dense in both tails (log-spaced tail probabilities down to 1/(2 n)) and uniform in the middle."""
    values = np.unique(pooled)
    if values.size <= MAX_CANDIDATE_THRESHOLDS:
        return values
    quarter = MAX_CANDIDATE_THRESHOLDS // 4
    tail = np.logspace(np.log10(0.5 / pooled.size), np.log10(0.25), quarter)
    middle = np.linspace(0.25, 0.75, 2 * quarter)
    probabilities = np.unique(np.concatenate([tail, middle, 1.0 - tail]))
    return np.unique(np.quantile(pooled, probabilities, method="inverted_cdf"))


def _histogram(candidates: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Counts of scores by the number of candidates <= score (length len(candidates) + 1)."""
    return np.bincount(np.searchsorted(candidates, scores, side="right"), minlength=candidates.size + 1)


class _Moments:
    """Streamed mean and variance (Chan, Golub & LeVeque 1979 pairwise update)."""

    def __init__(self) -> None:
        self.count, self.mean, self._m2 = 0, 0.0, 0.0

    def add(self, values: np.ndarray) -> None:
        n = values.size
        if n == 0:
            return
        mean = float(values.mean())
        m2 = float(np.sum((values - mean) ** 2))
        total = self.count + n
        delta = mean - self.mean
        self.mean += delta * n / total
        self._m2 += m2 + delta**2 * self.count * n / total
        self.count = total

    @property
    def variance(self) -> float:
        return self._m2 / (self.count - 1) if self.count > 1 else 0.0


class _Stream:
    """Draws validated chunks of one side of one pair; `peek` keeps a chunk to be served first."""

    def __init__(self, sample, dataset, rng, chunk_size: int, label: str) -> None:
        self.sample, self.dataset, self.rng = sample, dataset, rng
        self.chunk_size, self.label = chunk_size, label
        self.pending: np.ndarray | None = None
        self.shape_holder: dict[str, tuple] = {}

    def peek(self, rows: int) -> np.ndarray:
        self.pending = self._draw(rows)
        return self.pending

    def blocks(self, total: int):
        remaining = total
        while remaining > 0:
            if self.pending is not None:
                block, self.pending = self.pending, None
            else:
                block = self._draw(min(self.chunk_size, remaining))
            if block.shape[0] > remaining:
                self.pending = block[remaining:]
                block = block[:remaining]
            remaining -= block.shape[0]
            yield block

    def _draw(self, rows: int) -> np.ndarray:
        raw = self.sample(self.dataset, rows, self.rng)
        try:
            observations = np.asarray(raw, dtype=float)
        except (TypeError, ValueError) as error:
            raise InvalidDataError(f"sample(dataset, n, rng) must return a numeric array; for {self.label} it returned {type(raw).__name__}") from error
        if observations.ndim == 2 and observations.shape[1] == 1:
            observations = observations[:, 0]
        if observations.ndim not in (1, 2) or observations.shape[0] != rows:
            raise InvalidDataError(
                f"sample(dataset, n={rows}, rng) must return an array of shape ({rows},) or ({rows}, k); "
                f"for {self.label} it returned shape {observations.shape}"
            )
        expected = self.shape_holder.setdefault("shape", observations.shape[1:])
        if observations.shape[1:] != expected:
            raise InvalidDataError(
                f"sample returned observations of shape (n,) + {observations.shape[1:]} for {self.label}, but (n,) + {expected} "
                "earlier; every output of one audit must have the same shape"
            )
        if not np.all(np.isfinite(observations)):
            bad = int(observations.size - np.count_nonzero(np.isfinite(observations)))
            raise InvalidDataError(
                f"sample returned {bad} NaN/inf value(s) in a chunk of {rows} outputs for {self.label}; observations must be finite"
            )
        return observations


# ------------------------------------------------------------------------------------------------
# sensitivity probe


@dataclass(frozen=True)
class ProbeResult:
    """max_distance: largest distance between the pre-noise quantities of a pair (over pairs and the
    leading axes); witness_index: (pair, *index into the leading axes) where it occurs; distances: the
    largest distance of each pair."""

    max_distance: float
    witness_index: tuple[int, ...]
    claimed_sensitivity: float
    norm: str
    refuted: bool
    distances: tuple[float, ...] = ()

    def summary(self) -> str:
        relation = ">" if self.refuted else "<="
        outcome = "REFUTED" if self.refuted else f"not refuted on {len(self.distances)} pair(s)"
        return (
            f"max {self.norm} distance of the pre-noise quantities = {self.max_distance:.6g} at {self.witness_index} "
            f"{relation} claimed sensitivity {self.claimed_sensitivity:g}: {outcome}"
        )


_NORMS = {
    "l1": lambda d: np.sum(np.abs(d), axis=-1),
    "l2": lambda d: np.sqrt(np.sum(d * d, axis=-1)),
    "linf": lambda d: np.max(np.abs(d), axis=-1),
}
# default: relative slack of the probe (floating-point rounding of the pre-noise computation).
SENSITIVITY_RELATIVE_TOLERANCE = 1e-9


def sensitivity_probe(pre_noise: Callable[[Any], np.ndarray], neighbours, claimed_sensitivity, *, norm: str = "l2") -> ProbeResult:
    """Measure the sensitivity of the pre-noise quantities directly: for each pair, distance (`norm`
    over the last axis) between pre_noise(d0) and pre_noise(d1), arrays of shape (..., k) computed by
    the caller with identical randomness (common random numbers). Refuted when the largest distance
    exceeds claimed_sensitivity * (1 + 1e-9) -- the definition of sensitivity (Dwork & Roth 2014,
    Def. 3.1 / 3.8) violated by a witness, no statistics involved."""
    if not callable(pre_noise):
        raise InvalidParameterError(f"pre_noise must be a callable dataset -> array (..., k); got {type(pre_noise).__name__}")
    if norm not in _NORMS:
        raise InvalidParameterError(f"norm must be one of {sorted(_NORMS)}; got {norm!r}")
    claimed = _finite_number("claimed_sensitivity", claimed_sensitivity, minimum=0.0)
    pairs = _neighbour_pairs(neighbours)
    best, witness, per_pair = -1.0, (), []
    for index, (d0, d1) in enumerate(pairs):
        first, second = (_finite_array(f"pre_noise(d{side}) of pair {index}", pre_noise(d)) for side, d in ((0, d0), (1, d1)))
        if first.shape != second.shape:
            raise InvalidDataError(f"pre_noise must return the same shape for both datasets of a pair; pair {index} gave {first.shape} and {second.shape}")
        distances = _NORMS[norm](np.atleast_1d(second - first))
        position = np.unravel_index(int(np.argmax(distances)), distances.shape) if distances.ndim else ()
        largest = float(np.max(distances))
        per_pair.append(largest)
        if largest > best:
            best, witness = largest, (index, *(int(i) for i in position))
    return ProbeResult(
        max_distance=best,
        witness_index=witness,
        claimed_sensitivity=claimed,
        norm=norm,
        refuted=bool(best > claimed * (1.0 + SENSITIVITY_RELATIVE_TOLERANCE)),
        distances=tuple(per_pair),
    )


# ------------------------------------------------------------------------------------------------
# validation helpers


def _neighbour_pairs(neighbours) -> list[tuple[Any, Any]]:
    if isinstance(neighbours, tuple) and len(neighbours) == 2:
        return [neighbours]
    if isinstance(neighbours, (str, bytes)) or not isinstance(neighbours, Iterable):
        raise InvalidParameterError(f"neighbours must be a pair (d0, d1) or an iterable of pairs; got {type(neighbours).__name__}")
    pairs = []
    for index, pair in enumerate(neighbours):
        try:
            d0, d1 = pair
        except (TypeError, ValueError) as error:
            raise InvalidParameterError(f"neighbours[{index}] must be a pair (d0, d1); got {type(pair).__name__}") from error
        pairs.append((d0, d1))
    if not pairs:
        raise InvalidParameterError("neighbours must contain at least one pair (d0, d1); got none")
    return pairs


def _finite_number(name: str, value, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(float(value)):
        raise InvalidParameterError(f"{name} must be a finite number; got {value!r}")
    if minimum is not None and float(value) < minimum:
        raise InvalidParameterError(f"{name} must be >= {minimum:g}; got {value!r}")
    return float(value)


def _confidence(confidence) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.integer, np.floating)) or not 0.0 < float(confidence) < 1.0:
        raise InvalidParameterError(f"confidence must lie in the open interval (0, 1); got {confidence!r}")
    return float(confidence)


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidParameterError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def _finite_array(name: str, values) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as error:
        raise InvalidDataError(f"{name} must be a numeric array; got {type(values).__name__}") from error
    if not np.all(np.isfinite(array)):
        raise InvalidDataError(f"{name} must be finite; found NaN/inf in shape {array.shape}")
    return array


def _generator(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer, np.random.SeedSequence)) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    raise InvalidParameterError(f"rng must be a numpy Generator, an integer seed or a SeedSequence; got {type(rng).__name__}")


def _children(generator: np.random.Generator, count: int) -> list[np.random.Generator]:
    """Independent child streams (one per pair and side): Generator.spawn, or seeds drawn from the
    generator when its bit generator has no SeedSequence to spawn from."""
    try:
        return generator.spawn(count)
    except (TypeError, ValueError, AttributeError):
        seeds = generator.integers(0, 2**63 - 1, size=count)
        return [np.random.default_rng(int(seed)) for seed in seeds]


def _two_numbers(value: float, claimed: float) -> tuple[str, str]:
    """Format a bound and a claim with enough digits that the printed relation matches the true one."""
    for digits in range(3, 13):
        shown, limit = f"{value:.{digits}g}", f"{claimed:.{digits}g}"
        if (shown != limit) or value == claimed:
            return shown, f"{claimed:g}"
    return f"{value!r}", f"{claimed!r}"
