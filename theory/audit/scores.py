"""Scalar scores of observations for the privacy auditor.

An audit compares the distributions of a scalar score of the mechanism's output under two neighbouring
datasets; events are score thresholds. Any fixed function of the output is post-processing, so a
violation found in the score is a violation of the mechanism (Dwork & Roth 2014, Prop. 2.1). The best
score is the log-likelihood ratio of the two output distributions (Neyman-Pearson lemma): pass it as a
callable when the noise family is known (`gaussian_log_likelihood_ratio`,
`laplace_log_likelihood_ratio`). Otherwise a classifier is fitted on the first part of the first
split (Jagielski, Ullman & Oprea 2020; Lu, Munoz, Fuchs et al. 2022, "A General Framework for
Auditing Differentially Private Machine Learning", use trained distinguishers the same way):

* "identity": the observation itself (scalar observations);
* "lda": Fisher's linear discriminant w = (S + lambda I)^{-1} (m1 - m0), streamed sufficient statistics
  (means and pooled scatter), score = <x, w>; this is the exact log-likelihood ratio (up to an affine
  map) for Gaussian outputs with a common covariance (Hastie, Tibshirani & Friedman 2009, Sec. 4.3);
* "logistic": ridge-penalized logistic regression (Newton / IRLS) on at most LOGISTIC_FIT_CAP rows per
  side, score = the linear predictor;
* "categorical": for discrete outputs (finitely many distinct rows, e.g. sparse-vector transcripts):
  the plug-in log-likelihood ratio ln((c1 + 1/2) / (c0 + 1/2)) of each distinct output row, counted on
  the fit part; thresholding it searches over unions of output values, as in Ding, Wang, Wang, Zhang &
  Kifer 2018 ("Detecting Violations of Differential Privacy"), Sec. 4.

Scores are oriented so that larger values are more typical of d1; the auditor tries both tails anyway.

A score that depends on the low-order bits of a floating-point output (e.g. |x - m0| - |x - m1| computed
literally, or "categorical" on continuous outputs) can detect the floating-point side channel of naive
Laplace/Gaussian implementations (Mironov 2012): a valid refutation of the implementation, not of the
mathematical mechanism. Monotone or linear scores (identity, LDA, logistic, the LLRs below) cannot.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.stats

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError

# default: ridge of the LDA scatter matrix, relative to its mean diagonal (keeps w defined when some
# output coordinates are constant, e.g. the halted positions of a sparse-vector transcript).
LDA_RIDGE = 1e-6
# default: rows per side used to fit the logistic regression (Newton steps cost O(rows k^2)).
LOGISTIC_FIT_CAP = 50_000
# default: L2 penalty of the logistic regression on standardized features (avoids divergence under
# perfect separation, which discrete transcripts often show).
LOGISTIC_RIDGE = 1e-3
LOGISTIC_ITERATIONS = 50
# default: largest number of distinct output rows the categorical score keeps (memory bound).
CATEGORICAL_MAX_CATEGORIES = 200_000
# default: the automatic choice for vector observations uses "categorical" when a first chunk of both
# sides pooled has at most this many distinct rows and at most a quarter of its rows are distinct.
AUTO_CATEGORICAL_MAX_DISTINCT = 1_000

SCORE_KINDS = ("identity", "lda", "logistic", "categorical")


class Scorer:
    """A score: optionally fitted (`partial_fit` on chunks of both sides, then `finalize`), then
    `__call__(observations) -> (n,)`."""

    kind = "base"
    needs_fit = False

    def partial_fit(self, side0: np.ndarray, side1: np.ndarray) -> None:  # pragma: no cover - default
        return None

    def finalize(self) -> None:
        return None

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def describe(self) -> dict:
        return {"score": self.kind}


class IdentityScore(Scorer):
    kind = "identity"

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        if observations.ndim != 1:
            raise InvalidParameterError(
                f"the identity score needs scalar observations (shape (n,) or (n, 1)); got shape {observations.shape}; "
                "use score='lda', 'logistic', 'categorical' or a callable for vector observations"
            )
        return observations


class CallableScore(Scorer):
    kind = "callable"

    def __init__(self, function: Callable[[np.ndarray], np.ndarray]):
        self.function = function

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        try:
            values = np.asarray(self.function(observations), dtype=float)
        except (TypeError, ValueError) as error:
            raise InvalidDataError(f"score(observations) must return a numeric array of shape (n,); it raised: {error}") from error
        expected = (observations.shape[0],)
        if values.shape != expected:
            raise InvalidDataError(f"score(observations) must return shape {expected} (one value per observation); got {values.shape}")
        if not np.all(np.isfinite(values)):
            bad = int(values.size - np.count_nonzero(np.isfinite(values)))
            raise InvalidDataError(f"score(observations) returned {bad} NaN/inf value(s) out of {values.size}; scores must be finite")
        return values

    def describe(self) -> dict:
        return {"score": "callable", "function": getattr(self.function, "__name__", repr(self.function))}


class LdaScore(Scorer):
    """Fisher's linear discriminant from streamed means and pooled scatter (shifted sums for accuracy). With a known
    `difference` of the two sides' means (computed elsewhere, e.g. from a reference implementation's coupled runs),
    only the scatter is fitted: the estimated difference's noise, which in k dimensions grows like sqrt(k / n),
    no longer blurs the direction, and the score is still fitted on samples the events are not tested on."""

    kind = "lda"
    needs_fit = True

    def __init__(self, difference: np.ndarray | None = None) -> None:
        self.difference = None if difference is None else np.asarray(difference, dtype=float).ravel()
        self._shift = None
        self._count = [0, 0]
        self._sum = [None, None]
        self._outer = [None, None]
        self.weights = None

    def partial_fit(self, side0: np.ndarray, side1: np.ndarray) -> None:
        for side, block in enumerate((_as_matrix(side0), _as_matrix(side1))):
            if self._shift is None:
                self._shift = block.mean(axis=0)
                dim = block.shape[1]
                self._sum = [np.zeros(dim), np.zeros(dim)]
                self._outer = [np.zeros((dim, dim)), np.zeros((dim, dim))]
            centred = block - self._shift
            self._count[side] += block.shape[0]
            self._sum[side] += centred.sum(axis=0)
            # an explicit transpose copy: numpy's symmetric (syrk) path was ~50x slower on sparse-vector transcripts
            self._outer[side] += np.ascontiguousarray(centred.T) @ centred

    def finalize(self) -> None:
        means = [self._sum[s] / self._count[s] for s in (0, 1)]
        scatter = sum(self._outer[s] - self._count[s] * np.outer(means[s], means[s]) for s in (0, 1))
        covariance = scatter / max(self._count[0] + self._count[1] - 2, 1)
        scale = float(np.mean(np.diag(covariance)))
        ridge = LDA_RIDGE * scale if scale > 0 else 1.0
        difference = means[1] - means[0] if self.difference is None else self.difference
        if difference.shape != means[0].shape:
            raise InvalidParameterError(f"the known mean difference has {difference.size} entries; the observations "
                                        f"have {means[0].size}")
        self.weights = np.linalg.solve(covariance + ridge * np.eye(covariance.shape[0]), difference)
        self._means = means

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return _as_matrix(observations) @ self.weights

    def describe(self) -> dict:
        return {"score": "lda" if self.difference is None else "lda, known mean difference",
                "weights": self.weights.tolist(), "fit_rows_per_side": self._count[0]}


class ChosenScore(Scorer):
    """The candidate that separates the fit part best: each candidate is fitted on the fit part (if it needs a fit)
    and scored on it, and the one whose two sides' scores lie furthest apart (two-sample Kolmogorov-Smirnov
    statistic) scores the rest. The choice reads the fit part only, which the events are neither searched nor tested
    on, so the bound stays valid; candidates that look for different leaks then cost no Bonferroni share. The fit part
    is kept in memory for the choice."""

    kind = "chosen"
    needs_fit = True

    def __init__(self, candidates: dict[str, Scorer]) -> None:
        if not candidates:
            raise InvalidParameterError("ChosenScore needs at least one candidate score")
        self.candidates = dict(candidates)
        self._blocks: list[list[np.ndarray]] = [[], []]
        self.separation: dict[str, float] = {}
        self.chosen: str | None = None

    def partial_fit(self, side0: np.ndarray, side1: np.ndarray) -> None:
        for candidate in self.candidates.values():
            if candidate.needs_fit:
                candidate.partial_fit(side0, side1)
        self._blocks[0].append(side0)
        self._blocks[1].append(side1)

    def finalize(self) -> None:
        sides = [np.concatenate(blocks) for blocks in self._blocks]
        for name, candidate in self.candidates.items():
            if candidate.needs_fit:
                candidate.finalize()
            scores = [candidate(side) for side in sides]
            self.separation[name] = float(scipy.stats.ks_2samp(*scores).statistic)
        self.chosen = max(self.separation, key=self.separation.get)   # the first listed on a tie
        self._blocks = [[], []]

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return self.candidates[self.chosen](observations)

    def describe(self) -> dict:
        return {**self.candidates[self.chosen].describe(), "chosen": self.chosen,
                "fit_part_separation": self.separation}


class LogisticScore(Scorer):
    """Ridge-penalized logistic regression by Newton's method (IRLS) on standardized features."""

    kind = "logistic"
    needs_fit = True

    def __init__(self, cap: int = LOGISTIC_FIT_CAP) -> None:
        self.cap = cap
        self._rows = [[], []]
        self._stored = [0, 0]

    def partial_fit(self, side0: np.ndarray, side1: np.ndarray) -> None:
        for side, block in enumerate((_as_matrix(side0), _as_matrix(side1))):
            room = self.cap - self._stored[side]
            if room > 0:
                kept = block[:room]
                self._rows[side].append(kept)
                self._stored[side] += kept.shape[0]

    def finalize(self) -> None:
        x = np.concatenate([np.concatenate(self._rows[0]), np.concatenate(self._rows[1])])
        y = np.concatenate([np.zeros(self._stored[0]), np.ones(self._stored[1])])
        self._rows = [[], []]
        self.centre = x.mean(axis=0)
        spread = x.std(axis=0)
        self.spread = np.where(spread > 0, spread, 1.0)
        design = np.column_stack([np.ones(x.shape[0]), (x - self.centre) / self.spread])
        beta = np.zeros(design.shape[1])
        penalty = LOGISTIC_RIDGE * x.shape[0] * np.eye(design.shape[1])
        penalty[0, 0] = 0.0
        for _ in range(LOGISTIC_ITERATIONS):
            linear = np.clip(design @ beta, -30.0, 30.0)
            probability = 1.0 / (1.0 + np.exp(-linear))
            gradient = design.T @ (y - probability) - penalty @ beta
            hessian = (design * (probability * (1.0 - probability))[:, None]).T @ design + penalty
            step = np.linalg.solve(hessian + 1e-12 * np.eye(hessian.shape[0]), gradient)
            beta = beta + step
            if np.max(np.abs(step)) < 1e-10:
                break
        self.coefficients = beta

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        x = (_as_matrix(observations) - self.centre) / self.spread
        return self.coefficients[0] + x @ self.coefficients[1:]

    def describe(self) -> dict:
        return {"score": "logistic", "coefficients": self.coefficients.tolist(), "fit_rows_per_side": self._stored[0]}


class CategoricalScore(Scorer):
    """Plug-in log-likelihood ratio of each distinct output row (Jeffreys-smoothed counts)."""

    kind = "categorical"
    needs_fit = True

    def __init__(self, max_categories: int = CATEGORICAL_MAX_CATEGORIES) -> None:
        self.max_categories = max_categories
        self.counts: dict[bytes, list[int]] = {}
        self.table: dict[bytes, float] = {}

    def partial_fit(self, side0: np.ndarray, side1: np.ndarray) -> None:
        for side, block in enumerate((side0, side1)):
            keys, counts = np.unique(_row_keys(block), return_counts=True)
            for key, count in zip(keys.tolist(), counts.tolist()):
                entry = self.counts.get(key)
                if entry is None:
                    if len(self.counts) >= self.max_categories:
                        raise InvalidDataError(
                            f"the categorical score keeps at most {self.max_categories} distinct outputs; the observations "
                            "have more (continuous outputs?): use score='lda', 'logistic' or a callable"
                        )
                    entry = self.counts[key] = [0, 0]
                entry[side] += count

    def finalize(self) -> None:
        self.table = {key: float(np.log((c1 + 0.5) / (c0 + 0.5))) for key, (c0, c1) in self.counts.items()}

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        keys, inverse = np.unique(_row_keys(observations), return_inverse=True)
        values = np.array([self.table.get(key, 0.0) for key in keys.tolist()], dtype=float)
        return values[inverse.ravel()]

    def describe(self) -> dict:
        return {"score": "categorical", "distinct_outputs": len(self.counts)}


def _as_matrix(observations: np.ndarray) -> np.ndarray:
    return observations.reshape(observations.shape[0], -1)


def _row_keys(observations: np.ndarray) -> np.ndarray:
    """One hashable, sortable key per row: the bytes of the row (-0.0 normalized to 0.0)."""
    matrix = np.ascontiguousarray(_as_matrix(observations) + 0.0)
    return matrix.view(np.dtype((np.void, matrix.dtype.itemsize * matrix.shape[1]))).ravel()


def distinct_rows(observations: np.ndarray) -> int:
    return int(np.unique(_row_keys(observations)).size)


def make_scorer(score, observations_are_vectors: bool, pilot: np.ndarray | None = None) -> Scorer:
    """Resolve the `score` argument of `audit`: None -> identity for scalar observations; for vectors,
    "categorical" when the pilot rows are discrete (few distinct rows), else "lda"; a string of
    SCORE_KINDS; a Scorer (used as it is, fitted here if it needs a fit); or a callable observations -> (n,)."""
    if isinstance(score, Scorer):
        return score
    if callable(score) and not isinstance(score, str):
        return CallableScore(score)
    if score is None:
        if not observations_are_vectors:
            return IdentityScore()
        if pilot is not None:
            distinct = distinct_rows(pilot)
            if distinct <= AUTO_CATEGORICAL_MAX_DISTINCT and 4 * distinct <= pilot.shape[0]:
                return CategoricalScore()
        return LdaScore()
    if score == "identity":
        return IdentityScore()
    if score == "lda":
        return LdaScore()
    if score == "logistic":
        return LogisticScore()
    if score == "categorical":
        return CategoricalScore()
    raise InvalidParameterError(f"score must be None, a callable observations -> (n,) or one of {SCORE_KINDS}; got {score!r}")


# ------------------------------------------------------------------------------------------------
# log-likelihood ratios for known noise families (pass as `score=`)


def gaussian_log_likelihood_ratio(mean0, mean1, sigma) -> Callable[[np.ndarray], np.ndarray]:
    """ln p1(x)/p0(x) for N(mean1, sigma^2 I) vs N(mean0, sigma^2 I):  <x - (m0 + m1)/2, m1 - m0> / sigma^2
    (the optimal score by Neyman-Pearson; Dong, Roth & Su 2019, Sec. 2.3). Observations (n,) or (n, k)."""
    mean0 = np.atleast_1d(np.asarray(mean0, dtype=float)).ravel()
    mean1 = np.atleast_1d(np.asarray(mean1, dtype=float)).ravel()
    sigma = float(sigma)
    if mean0.shape != mean1.shape or not sigma > 0:
        raise InvalidParameterError(f"need means of equal shape and sigma > 0; got shapes {mean0.shape}, {mean1.shape}, sigma {sigma}")
    direction, middle = mean1 - mean0, (mean0 + mean1) / 2.0

    def log_likelihood_ratio(observations: np.ndarray) -> np.ndarray:
        x = np.asarray(observations, dtype=float).reshape(np.shape(observations)[0], -1)
        return (x - middle) @ direction / sigma**2

    return log_likelihood_ratio


def laplace_log_likelihood_ratio(mean0, mean1, scale) -> Callable[[np.ndarray], np.ndarray]:
    """ln p1(x)/p0(x) for i.i.d. Laplace(mean1, b) vs Laplace(mean0, b) coordinates,
    sum_i (|x_i - m0_i| - |x_i - m1_i|) / b  (Dwork & Roth 2014, proof of Thm 3.6), evaluated in the
    equivalent MONOTONE form sum_i sign(m1_i - m0_i) (2 clip(x_i, lo_i, hi_i) - m0_i - m1_i) / b.

    The literal difference of absolute values is not monotone in floating point: its rounding depends on
    the low-order bits of x, which differ between q + L and q' + L, so thresholding it detects the
    floating-point side channel of the textbook Laplace mechanism (Mironov 2012, "On Significance of the
    Least Significant Bits for Differential Privacy") -- a true violation of the implementation, but not
    the privacy loss of the mathematical mechanism this score is meant to measure."""
    mean0 = np.atleast_1d(np.asarray(mean0, dtype=float)).ravel()
    mean1 = np.atleast_1d(np.asarray(mean1, dtype=float)).ravel()
    scale = float(scale)
    if mean0.shape != mean1.shape or not scale > 0:
        raise InvalidParameterError(f"need means of equal shape and scale > 0; got shapes {mean0.shape}, {mean1.shape}, scale {scale}")
    low, high, sign = np.minimum(mean0, mean1), np.maximum(mean0, mean1), np.sign(mean1 - mean0)

    def log_likelihood_ratio(observations: np.ndarray) -> np.ndarray:
        x = np.asarray(observations, dtype=float).reshape(np.shape(observations)[0], -1)
        return ((2.0 * np.clip(x, low, high) - (mean0 + mean1)) * sign).sum(axis=1) / scale

    return log_likelihood_ratio
