"""Statistical bounds used by the privacy auditor (pure functions, vectorized over numpy arrays).

* one-sided Clopper-Pearson bounds, vectorized (`cp_lower`, `cp_upper`); the final bounds of an
  audit go through `dpverify.theory.instruments.stats.clopper_pearson`, these are the same formulas for the threshold
  search (tests check that both agree);
* the (eps, delta) lower bound of one event                              (`epsilon_lower_bound`):
  a mechanism that is (eps, delta)-DP satisfies P[M(D) in S] <= e^eps P[M(D') in S] + delta for every
  event S and both orders of a neighbouring pair (Dwork & Roth 2014, Def. 2.4), so
  eps >= ln((P[M(D) in S] - delta) / P[M(D') in S])  (Jagielski, Ullman & Oprea 2020, Sec. 3;
  Nasr, Song, Thakurta, Papernot & Carlini 2021, Sec. 4);
* the Renyi divergence of two Bernoulli distributions and the zCDP lower bound it gives
  (`bernoulli_renyi_divergence`, `rho_lower_bound`): rho-zCDP means D_alpha(M(D) || M(D')) <= rho alpha
  for every alpha > 1 (Bun & Steinke 2016, Def. 1.1 with xi = 0); by the data-processing inequality
  (van Erven & Harremoes 2014, Thm 9) the indicator of an event S satisfies
  D_alpha(Bern(p1) || Bern(p0)) <= D_alpha(M(D) || M(D')), where p1 = P[M(D) in S], p0 = P[M(D') in S];
  the Bernoulli divergence increases in p1 on p1 >= p0 and decreases in p0 on p0 <= p1 (it is convex in
  each argument and vanishes at p1 = p0), so with p1 >= p1_lo > p0_hi >= p0,
  rho >= sup_alpha D_alpha(Bern(p1_lo) || Bern(p0_hi)) / alpha;
* the model-based Gaussian-DP estimate (`gdp_mu_estimate`): if the score is N(m0, s^2) under D' and
  N(m1, s^2) under D, the pair is exactly mu-GDP in the score with mu = |m1 - m0| / s (Dong, Roth &
  Su 2019, Def. 2.6 / Thm 2.7), and mu-GDP is (mu^2 / 2)-zCDP (Bun & Steinke 2016, Prop. 1.6 for the
  Gaussian pair). A model, not a bound: it is reported, never used for a verdict.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

# default: Renyi orders searched for the zCDP bound: alpha - 1 on a log grid over [1e-4, 1e6]; D_alpha/alpha
# of two Bernoullis is unimodal-looking in log(alpha - 1) and tends to 0 at both ends (KL/1 near 1,
# D_inf/alpha at infinity), so the grid brackets the maximum and `rho_lower_bound` refines it.
RENYI_ORDER_GRID = 1.0 + np.logspace(-4.0, 6.0, 241)


def cp_lower(successes, trials, alpha):
    """One-sided lower Clopper-Pearson bound at level 1 - alpha: Beta^{-1}(alpha; k, n - k + 1), 0 at k = 0
    (Clopper & Pearson 1934). Arrays broadcast."""
    k, n = np.broadcast_arrays(np.asarray(successes, dtype=float), np.asarray(trials, dtype=float))
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = special.betaincinv(np.maximum(k, 1e-300), n - k + 1.0, alpha)
    return np.where(k <= 0, 0.0, bound)


def cp_upper(successes, trials, alpha):
    """One-sided upper Clopper-Pearson bound at level 1 - alpha: Beta^{-1}(1 - alpha; k + 1, n - k), 1 at k = n."""
    k, n = np.broadcast_arrays(np.asarray(successes, dtype=float), np.asarray(trials, dtype=float))
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = special.betaincinv(k + 1.0, np.maximum(n - k, 1e-300), 1.0 - alpha)
    return np.where(k >= n, 1.0, bound)


def epsilon_lower_bound(p_numerator_low, p_denominator_high, delta: float = 0.0):
    """ln((p1_lo - delta) / p0_hi), -inf where p1_lo <= delta (no information on eps from this event).

    (eps, delta)-DP: P[M(D) in S] <= e^eps P[M(D') in S] + delta  (Dwork & Roth 2014, Def. 2.4).
    """
    low = np.asarray(p_numerator_low, dtype=float)
    high = np.asarray(p_denominator_high, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(np.maximum(low - delta, 0.0)) - np.log(high)
    value = np.where(low - delta > 0.0, value, -np.inf)
    return value if value.ndim else float(value)


def bernoulli_renyi_divergence(p, q, alpha):
    """D_alpha(Bern(p) || Bern(q)) = ln(p^a q^(1-a) + (1-p)^a (1-q)^(1-a)) / (a - 1), for a > 1 and
    0 < q < 1, 0 <= p <= 1 (Renyi 1961; van Erven & Harremoes 2014, eq. (1)); evaluated in log space."""
    p, q, alpha = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (p, q, alpha)))
    with np.errstate(divide="ignore", invalid="ignore"):
        first = alpha * np.log(p) + (1.0 - alpha) * np.log(q)
        second = alpha * np.log1p(-p) + (1.0 - alpha) * np.log1p(-q)
        value = np.logaddexp(first, second) / (alpha - 1.0)
    value = np.maximum(value, 0.0)  # rounding near p = q
    return value if value.ndim else float(value)


def rho_lower_bound_grid(p_numerator_low, p_denominator_high, orders=RENYI_ORDER_GRID):
    """max over `orders` (default RENYI_ORDER_GRID) of D_alpha(Bern(p1_lo) || Bern(p0_hi)) / alpha (0 where p1_lo <= p0_hi).
    Vectorized (used to rank candidate events); `rho_lower_bound` refines the order."""
    low = np.asarray(p_numerator_low, dtype=float)[..., None]
    high = np.asarray(p_denominator_high, dtype=float)[..., None]
    useful = (low > high) & (high > 0.0) & (low < 1.0)
    safe_low = np.where(useful, low, 0.5)
    safe_high = np.where(useful, high, 0.25)
    orders = np.asarray(orders, dtype=float)
    values = bernoulli_renyi_divergence(safe_low, safe_high, orders) / orders
    return np.where(useful[..., 0], np.max(values, axis=-1), 0.0)


def rho_lower_bound(p_numerator_low: float, p_denominator_high: float) -> tuple[float, float]:
    """(sup_alpha D_alpha(Bern(p1_lo) || Bern(p0_hi)) / alpha, maximizing alpha); (0, nan) if p1_lo <= p0_hi.

    Valid lower bound on rho of a rho-zCDP mechanism when p1_lo <= P[M(D) in S] and p0_hi >= P[M(D') in S]
    (see the module docstring: data processing + monotonicity of the Bernoulli divergence).
    """
    low, high = float(p_numerator_low), float(p_denominator_high)
    if not (0.0 < high < low < 1.0):
        return 0.0, math.nan
    grid_values = bernoulli_renyi_divergence(low, high, RENYI_ORDER_GRID) / RENYI_ORDER_GRID
    best = int(np.argmax(grid_values))
    log_excess = np.log(RENYI_ORDER_GRID - 1.0)
    left = log_excess[max(best - 1, 0)]
    right = log_excess[min(best + 1, log_excess.size - 1)]

    def negative(log_alpha_minus_one: float) -> float:
        alpha = 1.0 + math.exp(log_alpha_minus_one)
        return -float(bernoulli_renyi_divergence(low, high, alpha)) / alpha

    refined = optimize.minimize_scalar(negative, bounds=(left, right), method="bounded", options={"xatol": 1e-6})
    value, order = float(grid_values[best]), float(RENYI_ORDER_GRID[best])
    if refined.success and -refined.fun > value:
        value, order = float(-refined.fun), 1.0 + math.exp(float(refined.x))
    return value, order


def gdp_mu_estimate(mean0: float, var0: float, mean1: float, var1: float) -> float:
    """mu = |m1 - m0| / sqrt((v0 + v1) / 2): the Gaussian-DP parameter of the score if it is Gaussian with
    a common variance under both datasets (Dong, Roth & Su 2019, Def. 2.6). Model-based."""
    difference = abs(mean1 - mean0)
    pooled = math.sqrt(max((var0 + var1) / 2.0, 0.0))
    if pooled == 0.0:
        return 0.0 if difference == 0.0 else math.inf
    return difference / pooled
