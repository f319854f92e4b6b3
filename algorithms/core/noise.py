"""Gaussian and Laplace mechanisms, and the privacy ledger every noisy release is recorded in.

Each mechanism perturbs a batched state `(R, N, d)` (replicas, agents, dimension) in one draw and
records ONE `Release` per call (per agent: sensitivity assumed, noise scale, privacy spent).
Accounting facts used (Bun & Steinke 2016, arXiv:1605.02065):
  Prop. 1.6: Gaussian noise N(0, sigma^2 I) on a query of l2-sensitivity Delta is Delta^2/(2 sigma^2)-zCDP;
  Prop. 1.4: eps-DP (pure) implies eps^2/2-zCDP;
  Lemma 1.7: zCDP composes additively (adaptively).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.mixing import copy_vectors

GAUSSIAN = "gaussian"
LAPLACE = "laplace"


@dataclass(frozen=True)
class Release:
    """One noisy release by all agents at one iteration. Arrays are per agent, shape (N,).

    zcdp: rho spent (inf for a non-private release of data-dependent values).
    epsilon: pure eps (Laplace), a declared per-release eps of an (eps, delta) calibration
        (Gaussian), 0 for a data-independent release, else None (no pure-eps guarantee).
    delta: declared per-release delta of an (eps, delta) calibration, else None.
    """

    iteration: int
    mechanism: str
    sensitivity: np.ndarray
    scale: np.ndarray
    zcdp: np.ndarray | None
    epsilon: np.ndarray | None
    label: str
    delta: np.ndarray | None = None

    @cached_property
    def factor(self):
        """What the standard draws are multiplied by: the one scale of every agent as a scalar (the usual case: no
        broadcast over a short axis), else the scales per agent, (1, N, 1). Decided once per release (the test cost
        2.5 of the 20 us the release added to its draw at R = 1000, N = 5, d = 2, measured)."""
        common = self.scale.size and np.all(self.scale == self.scale[0])
        return float(self.scale[0]) if common else self.scale[None, :, None]


class PrivacyLedger:
    """Append-only record of releases; totals by zCDP composition (Bun-Steinke Lemma 1.7) and by
    basic composition of eps."""

    def __init__(self) -> None:
        self._releases: list[Release] = []

    def record(self, release: Release) -> None:
        if self._releases and release.sensitivity.shape != self._releases[0].sensitivity.shape:
            raise InvalidDataError(
                f"release covers {release.sensitivity.shape[0]} agents but the ledger holds releases for "
                f"{self._releases[0].sensitivity.shape[0]} agents"
            )
        self._releases.append(release)

    @property
    def releases(self) -> list[Release]:
        return list(self._releases)

    @property
    def num_agents(self) -> int:
        return self._releases[0].sensitivity.shape[0] if self._releases else 0

    def total_zcdp(self) -> np.ndarray:
        """(N,) sum of rho over releases (Bun-Steinke Lemma 1.7)."""
        total = np.zeros(self.num_agents)
        for release in self._releases:
            total = total + (np.full(self.num_agents, np.inf) if release.zcdp is None else release.zcdp)
        return total

    def total_epsilon(self) -> np.ndarray:
        """(N,) sum of eps over releases (basic composition); inf for an agent with a release that has
        no eps guarantee (Gaussian without a declared (eps, delta) calibration)."""
        total = np.zeros(self.num_agents)
        for release in self._releases:
            total = total + (np.full(self.num_agents, np.inf) if release.epsilon is None else release.epsilon)
        return total

    def total_delta(self) -> np.ndarray:
        """(N,) sum of declared deltas (basic composition); releases without a declared delta add 0."""
        total = np.zeros(self.num_agents)
        for release in self._releases:
            if release.delta is not None:
                total = total + release.delta
        return total

    def to_frame(self):
        """Long format: one row per (release, agent)."""
        import pandas as pd

        rows = []
        for release in self._releases:
            for agent in range(release.sensitivity.shape[0]):
                rows.append(
                    {
                        "iteration": release.iteration,
                        "agent": agent,
                        "mechanism": release.mechanism,
                        "sensitivity": float(release.sensitivity[agent]),
                        "scale": float(release.scale[agent]),
                        "zcdp": np.nan if release.zcdp is None else float(release.zcdp[agent]),
                        "epsilon": np.nan if release.epsilon is None else float(release.epsilon[agent]),
                        "delta": np.nan if release.delta is None else float(release.delta[agent]),
                        "label": release.label,
                    }
                )
        columns = ["iteration", "agent", "mechanism", "sensitivity", "scale", "zcdp", "epsilon", "delta", "label"]
        return pd.DataFrame(rows, columns=columns)


def gaussian_mechanism(
    values: np.ndarray,
    sensitivity,
    sigma,
    rng: np.random.Generator,
    *,
    ledger: PrivacyLedger | None = None,
    iteration: int = 0,
    label: str = "",
    epsilon=None,
    delta=None,
    allow_non_private: bool = False,
) -> np.ndarray:
    """Return values + N(0, sigma_k^2 I) noise for agent k in every replica (one draw).

    values: (R, N, d). sensitivity, sigma: broadcastable to (N,); sensitivity is the l2-sensitivity
    the caller assumes. sigma must be > 0 unless sensitivity == 0 (a data-independent release), or
    unless `allow_non_private=True` (a non-private control; recorded with zcdp = inf).
    epsilon, delta: optional per-release (eps, delta) claimed by a classical calibration; recorded as is.
    Noise is always drawn (even when sigma == 0) so that runs with and without noise consume the
    generator identically (common random numbers across calibrations).
    """
    values, num_agents = _check_values(values)
    planned = gaussian_releases(_per_agent("sensitivity", sensitivity, num_agents)[None],
                                _per_agent("sigma", sigma, num_agents)[None], [iteration], [label],
                                None if epsilon is None else [epsilon], None if delta is None else [delta],
                                allow_non_private)
    return _release_checked(values, planned[0], rng, ledger)


def gaussian_releases(sensitivity: np.ndarray, sigma: np.ndarray, iterations, labels, epsilon=None, delta=None,
                      allow_non_private: bool = False) -> list[Release]:
    """The Releases of T Gaussian mechanism calls planned ahead, validated together: sensitivity, sigma (T, N);
    iterations, labels: T each; epsilon, delta: None or T values each a scalar or (N,). A run whose calibration
    does not depend on the data checks it once here and then releases with `gaussian_release` each iteration,
    without repeating the checks (issue 17: validation on tiny arrays was a visible part of every iteration)."""
    sensitivity = _per_release("sensitivity", sensitivity)
    sigma = _per_release("sigma", sigma)
    if sigma.shape != sensitivity.shape or len(iterations) != sigma.shape[0] or len(labels) != sigma.shape[0]:
        raise InvalidParameterError(
            f"planned releases need sensitivity and sigma of one shape (T, N) and T iterations and labels; got "
            f"{sensitivity.shape}, {sigma.shape}, {len(iterations)} and {len(labels)}")
    releases, num_agents = sigma.shape
    data_dependent_without_noise = (sigma == 0) & (sensitivity > 0)
    if np.any(data_dependent_without_noise) and not allow_non_private:
        agents = np.flatnonzero(data_dependent_without_noise.any(axis=0)).tolist()
        raise InvalidParameterError(
            f"sigma must be > 0 where sensitivity > 0 (Gaussian mechanism, Bun-Steinke Prop. 1.6); agents {agents} "
            "have sigma = 0; pass allow_non_private=True for a non-private control"
        )
    zcdp = _ratio_or_zero(sensitivity**2, 2.0 * sigma**2)  # Bun-Steinke Prop. 1.6
    if epsilon is not None:
        epsilon = [_per_agent("epsilon", value, num_agents) for value in epsilon]
    else:   # a data-independent release (every sensitivity 0) spends eps = 0; any other claims no pure eps
        independent = np.all(sensitivity == 0, axis=1)
        epsilon = [np.zeros(num_agents) if free else None for free in independent]
    delta = [None] * releases if delta is None else [_per_agent("delta", value, num_agents) for value in delta]
    for array in (sensitivity, sigma, zcdp):
        array.setflags(write=False)
    return [Release(int(iterations[t]), GAUSSIAN, sensitivity[t], sigma[t], zcdp[t], epsilon[t], labels[t], delta[t])
            for t in range(releases)]


def gaussian_release(values: np.ndarray, release: Release, rng: np.random.Generator,
                     ledger: PrivacyLedger | None = None) -> np.ndarray:
    """values + N(0, sigma_k^2 I) for agent k in every replica, for a release planned by `gaussian_releases`: the
    part of `gaussian_mechanism` that depends on the values (their check, the draw, the ledger entry)."""
    return _release_planned(values, release, GAUSSIAN, rng, ledger)


def _release_planned(values: np.ndarray, release: Release, mechanism: str, rng: np.random.Generator,
                     ledger: PrivacyLedger | None) -> np.ndarray:
    """A planned release of `mechanism`, checked to fit the values."""
    values, num_agents = _check_values(values)
    if release.mechanism != mechanism or release.scale.shape != (num_agents,):
        raise InvalidParameterError(
            f"the {mechanism} release needs a {mechanism} release planned for {num_agents} agents; got a "
            f"{release.mechanism} release for {release.scale.shape[0]} agents")
    return _release_checked(values, release, rng, ledger)


def _release_checked(values: np.ndarray, release: Release, rng: np.random.Generator,
                     ledger: PrivacyLedger | None) -> np.ndarray:
    """The draw, the ledger entry and the noisy values, for values and a release both checked already."""
    noise = rng.laplace(0.0, 1.0, size=values.shape) if release.mechanism == LAPLACE else rng.standard_normal(values.shape)
    if ledger is not None:
        ledger.record(release)
    return _add_scaled(values, noise, release.factor)


def laplace_mechanism(
    values: np.ndarray,
    sensitivity_l1,
    scale,
    rng: np.random.Generator,
    *,
    ledger: PrivacyLedger | None = None,
    iteration: int = 0,
    label: str = "",
) -> np.ndarray:
    """Return values + i.i.d. Laplace(0, b_k) noise per coordinate for agent k in every replica.

    Pure eps_k = Delta_1,k / b_k (Dwork & Roth 2014, Thm 3.6); recorded zcdp = eps^2/2 (Bun-Steinke
    Prop. 1.4). b must be > 0 unless sensitivity_l1 == 0.
    """
    values, num_agents = _check_values(values)
    return _release_checked(values, laplace_plan(sensitivity_l1, scale, num_agents, iteration, label), rng, ledger)


def laplace_plan(sensitivity_l1, scale, num_agents: int, iteration: int = 0, label: str = "") -> Release:
    """The Release of one Laplace mechanism call, checked: what `laplace_mechanism` records. A run that releases a
    state a block of replicas at a time records it once and draws each block with `laplace_release`."""
    sensitivity_l1 = _per_agent("sensitivity_l1", sensitivity_l1, num_agents)
    scale = _per_agent("scale", scale, num_agents)
    if np.any((scale == 0) & (sensitivity_l1 > 0)):
        raise InvalidParameterError(
            "Laplace scale b must be > 0 where the l1-sensitivity is > 0 (eps = Delta_1/b, Dwork & Roth Thm 3.6)"
        )
    epsilon = _ratio_or_zero(sensitivity_l1, scale)
    return Release(int(iteration), LAPLACE, sensitivity_l1, scale, epsilon**2 / 2.0, epsilon, label)


def laplace_release(values: np.ndarray, release: Release, rng: np.random.Generator,
                    ledger: PrivacyLedger | None = None) -> np.ndarray:
    """values + Laplace(0, b_k) noise for agent k in every replica, for a release planned by `laplace_plan`. The
    draw runs in (R, N, d) order, so consecutive blocks of replicas draw what one call on them all draws."""
    return _release_planned(values, release, LAPLACE, rng, ledger)


def _add_scaled(values: np.ndarray, noise: np.ndarray, factor) -> np.ndarray:
    """values + noise * factor (`Release.factor`). The noise is drawn in (R, N, d) order whatever the state's layout,
    so a seed gives the same draws; the result takes the state's layout (an agent-major state stays agent-major,
    core/mixing.py)."""
    released = np.empty_like(values)
    copy_vectors(released, noise)   # one pass into the state's layout; the arithmetic below then runs contiguous
    released *= factor
    released += values
    return released


def _ratio_or_zero(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator per agent, 0 where the numerator is 0 (a data-independent release) and inf where
    only the denominator is. The errstate context costs more than the division, so only a zero denominator pays it."""
    if np.all(denominator > 0):
        return numerator / denominator   # 0 / positive = 0: what the general branch gives
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(numerator == 0, 0.0, numerator / denominator)


def _check_values(values) -> tuple[np.ndarray, int]:
    values = np.asarray(values, dtype=float)
    if values.ndim != 3:
        raise InvalidDataError(f"values must be a batched state of shape (R, N, d); got shape {values.shape}")
    # sum v^2 is finite whenever every value is finite and below 1e154: one BLAS pass with no (R, N, d) boolean
    # temporary (the ravel is a view in any contiguous layout); only a sum that is not finite pays the exact check
    flat = values.ravel(order="K")
    with np.errstate(over="ignore"):
        squares = flat @ flat
    if not math.isfinite(squares) and not np.isfinite(flat).all():
        raise InvalidDataError("values to release contain NaN/inf; the iterates diverged before this release")
    return values, values.shape[1]


def _per_release(name: str, value) -> np.ndarray:
    """A (T, N) array of finite values >= 0, as a fresh copy."""
    array = np.array(value, dtype=float)
    if array.ndim != 2:
        raise InvalidParameterError(f"{name} of planned releases must have shape (T, N); got shape {array.shape}")
    if not (array.size == 0 or (array.min() >= 0 and array.max() < math.inf)):   # False for a NaN
        raise InvalidParameterError(f"{name} must be finite and >= 0 for every agent; got {array}")
    return array


def _per_agent(name: str, value, num_agents: int) -> np.ndarray:
    if isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value, bool):
        scalar = float(value)   # the common cases, a scalar or one float per agent: checked without building arrays
        if math.isfinite(scalar) and scalar >= 0:
            array = np.full(num_agents, scalar)
            array.setflags(write=False)
            return array
    elif isinstance(value, np.ndarray) and value.shape == (num_agents,) and value.dtype == np.float64:
        if value.min() >= 0 and value.max() < math.inf:   # False for a NaN, which both reductions return
            array = value.copy()
            array.setflags(write=False)
            return array
    array = np.asarray(value, dtype=float)
    try:
        array = np.broadcast_to(array, (num_agents,)).copy()
    except ValueError:
        raise InvalidParameterError(
            f"{name} must be a scalar or have shape ({num_agents},) (one value per agent); got shape {array.shape}"
        ) from None
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise InvalidParameterError(f"{name} must be finite and >= 0 for every agent; got {array}")
    array.setflags(write=False)
    return array
