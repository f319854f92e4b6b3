"""Privacy accounting: zCDP, Rényi DP, Gaussian DP and (eps, delta)-DP conversions.

Pure functions (numpy/scipy), vectorized over their numeric arguments where natural: scalars in,
floats out; arrays in, arrays out (numpy broadcasting). Every formula cites its source. Invalid
inputs raise `InvalidParameterError` saying what was expected and what was given.

References
- Bun & Steinke 2016, "Concentrated Differential Privacy: Simplifications, Extensions, and Lower
  Bounds", TCC 2016 / arXiv:1605.02065 (numbering of the arXiv version).
- Mironov 2017, "Rényi Differential Privacy", CSF 2017 / arXiv:1702.07476.
- Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy",
  arXiv:2004.00010, Prop. 12; Asoodeh, Liao, Calmon, Kosut & Sankar 2020, arXiv:2001.05990, eq. (20).
- Dong, Roth & Su 2019, "Gaussian Differential Privacy", arXiv:1905.02383 (Cor. 2.13, Cor. 3.3).
- Dwork & Roth 2014, "The Algorithmic Foundations of Differential Privacy", Thm A.1.
- seeds/004 (zCDP-NFL): Theorem I (12) L129, Corollary L136, App. C L371-L375.

The independent cross-checks (dp_accounting's RDP and PLD accountants) live in the tests only;
this module does not import dp_accounting.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import optimize, stats

from dpverify.algorithms.core.errors import InvalidParameterError

__all__ = [
    "gaussian_zcdp",
    "compose_zcdp",
    "zcdp_to_dp",
    "zcdp_to_dp_tight",
    "zcdp_to_dp_rdp_classic",
    "rdp_to_dp_improved",
    "zcdp_from_dp",
    "gaussian_dp_delta",
    "gaussian_dp_epsilon",
    "gdp_mu_of_gaussians",
    "dynamic_zcdp_schedule",
    "dynamic_zcdp_total",
    "phi1_from_total",
    "corollary_epsilon",
    "classical_gaussian_sigma",
]

# Search range of the Rényi order alpha for the continuous minimizations (a harness default): the
# optimal order of a rho-zCDP conversion is about 1 + sqrt(log(1/delta)/rho), so [1 + 1e-9, 1e12]
# covers rho down to ~1e-22 and up to ~1e10 for every delta in (1e-300, 1).
ALPHA_SEARCH_MIN_EXCESS = 1e-9
ALPHA_SEARCH_MAX = 1e12
_ALPHA_GRID_POINTS = 241  # coarse log-grid that brackets the minimum before Brent refinement


# ------------------------------------------------------------------------------------------------
# validation


def _as_array(name: str, value) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as error:
        raise InvalidParameterError(f"{name} must be a real number or an array of real numbers; got {value!r}") from error
    if array.size == 0:
        raise InvalidParameterError(f"{name} must not be empty; got {value!r}")
    if not np.all(np.isfinite(array)):
        raise InvalidParameterError(f"{name} must be finite; got {_show(array[~np.isfinite(array)])}")
    return array


def _show(bad: np.ndarray) -> str:
    flat = np.ravel(bad)
    shown = ", ".join(repr(float(v)) for v in flat[:5])
    return shown + (f", ... ({flat.size} values)" if flat.size > 5 else "")


def _require(name: str, array: np.ndarray, ok: np.ndarray, expected: str, source: str) -> None:
    if not np.all(ok):
        raise InvalidParameterError(f"{name} must be {expected} (required by {source}); got {_show(array[~ok])}")


def _delta(value, source: str) -> np.ndarray:
    array = _as_array("delta", value)
    _require("delta", array, (array > 0) & (array < 1), "in the open interval (0, 1)", source)
    return array


def _positive(name: str, value, source: str) -> np.ndarray:
    array = _as_array(name, value)
    _require(name, array, array > 0, "> 0", source)
    return array


def _nonnegative(name: str, value, source: str) -> np.ndarray:
    array = _as_array(name, value)
    _require(name, array, array >= 0, ">= 0", source)
    return array


def _tau(value, source: str) -> np.ndarray:
    array = _as_array("tau", value)
    _require("tau", array, (array > 0) & (array < 1), "in the open interval (0, 1)", source)
    return array


def _horizon(value, source: str) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        as_float = _as_array("horizon", value)
        if not np.all(as_float == np.round(as_float)):
            raise InvalidParameterError(f"horizon must be an integer >= 1 (required by {source}); got {value!r}")
        array = as_float.astype(np.int64)
    _require("horizon", array, array >= 1, "an integer >= 1", source)
    return array.astype(np.int64)


def _out(array: np.ndarray):
    """Scalars in, float out; arrays in, array out."""
    array = np.asarray(array, dtype=float)
    return float(array) if array.ndim == 0 else array


# ------------------------------------------------------------------------------------------------
# zCDP


def gaussian_zcdp(sensitivity, sigma):
    """zCDP parameter of the Gaussian mechanism N(f(D), sigma^2 I) with l2-sensitivity Delta.

    rho = Delta^2 / (2 sigma^2)            # Bun & Steinke 2016 Prop. 1.6; seeds/004 (12), L129
    """
    source = "the Gaussian mechanism, Bun & Steinke 2016 Prop. 1.6"
    sensitivity = _nonnegative("sensitivity", sensitivity, source)
    sigma = _positive("sigma", sigma, source)
    return _out(sensitivity**2 / (2.0 * sigma**2))


def compose_zcdp(rhos: Sequence[float] | np.ndarray) -> float:
    """Adaptive composition: rho_total = sum_i rho_i        # Bun & Steinke 2016 Lemma 1.7."""
    rhos = _nonnegative("rhos", rhos, "zCDP composition, Bun & Steinke 2016 Lemma 1.7")
    return float(np.sum(rhos))


def zcdp_to_dp(rho, delta):
    """(eps, delta)-DP implied by rho-zCDP (the classic conversion).

    eps = rho + 2 sqrt(rho ln(1/delta))    # Bun & Steinke 2016 Prop. 1.3; seeds/004 Corollary L136
    """
    source = "the zCDP -> (eps, delta) conversion, Bun & Steinke 2016 Prop. 1.3"
    rho = _nonnegative("rho", rho, source)
    delta = _delta(delta, source)
    return _out(rho + 2.0 * np.sqrt(rho * np.log(1.0 / delta)))


def zcdp_from_dp(epsilon, delta):
    """Largest rho whose classic conversion gives at most eps: the inverse of `zcdp_to_dp`.

    Solving eps = rho + 2 sqrt(rho L), L = ln(1/delta), for sqrt(rho) >= 0:
    (sqrt(rho) + sqrt(L))^2 = eps + L  =>  rho = (sqrt(L + eps) - sqrt(L))^2     # spec zcdp_nfl §2.5
    Computed as eps^2 / (sqrt(L + eps) + sqrt(L))^2 (same value, no cancellation for small eps).
    """
    source = "the inverse of Bun & Steinke 2016 Prop. 1.3"
    epsilon = _positive("epsilon", epsilon, source)
    delta = _delta(delta, source)
    log_inv_delta = np.log(1.0 / delta)
    return _out(epsilon**2 / (np.sqrt(log_inv_delta + epsilon) + np.sqrt(log_inv_delta)) ** 2)


def _improved_rdp_bound(alpha: np.ndarray, rdp: np.ndarray, log_inv_delta: float) -> np.ndarray:
    """eps(alpha) = eps_RDP(alpha) + ln(1 - 1/alpha) + (ln(1/delta) - ln(alpha)) / (alpha - 1).

    Canonne, Kamath & Steinke 2020 Prop. 12 (Asoodeh et al. 2020 eq. (20)). Written with the same
    terms as dp_accounting.rdp.rdp_privacy_accountant.compute_epsilon (which evaluates
    r + log1p(-1/a) - log(delta * a)/(a - 1), identical algebraically).
    """
    return rdp + np.log1p(-1.0 / alpha) + (log_inv_delta - np.log(alpha)) / (alpha - 1.0)


def _kl_gives_zero_epsilon(kl_upper: float, delta: float) -> bool:
    """TV(P, Q) <= sqrt(1 - exp(-KL)) (Bretagnolle-Huber) and (0, delta)-DP iff TV <= delta; since
    D_1 = KL <= D_alpha, eps = 0 already holds when 1 - exp(-kl_upper) < delta^2."""
    return -math.expm1(-kl_upper) < delta**2


def rdp_to_dp_improved(orders, rdp_values, delta: float) -> tuple[float, float]:
    """(eps, optimal order) from RDP guarantees eps_RDP(alpha_i) at finitely many orders alpha_i > 1.

    eps = min_i [ eps_RDP(alpha_i) + ln(1 - 1/alpha_i) + (ln(1/delta) - ln alpha_i)/(alpha_i - 1) ]
    # Canonne, Kamath & Steinke 2020 Prop. 12
    clipped at 0 (eps >= 0 by definition); eps = 0 when the KL shortcut of `_kl_gives_zero_epsilon` applies.
    """
    source = "the RDP -> (eps, delta) conversion, Canonne, Kamath & Steinke 2020 Prop. 12"
    orders = _as_array("orders", orders).ravel()
    rdp_values = _nonnegative("rdp_values", rdp_values, source).ravel()
    _require("orders", orders, orders > 1, "> 1", source)
    if orders.shape != rdp_values.shape:
        raise InvalidParameterError(f"orders and rdp_values must have the same length; got {orders.size} and {rdp_values.size}")
    delta = float(_delta(delta, source))
    if _kl_gives_zero_epsilon(float(np.min(rdp_values)), delta):
        index = int(np.argmin(rdp_values))
        return 0.0, float(orders[index])
    values = _improved_rdp_bound(orders, rdp_values, math.log(1.0 / delta))
    index = int(np.argmin(values))
    return max(0.0, float(values[index])), float(orders[index])


def _minimize_over_alpha(objective, *, alpha_max: float = ALPHA_SEARCH_MAX) -> tuple[float, float]:
    """Minimize objective(alpha) over alpha in (1, alpha_max]: a log-spaced grid in alpha - 1 brackets
    the minimum, then bounded Brent refines it in t = ln(alpha - 1). Returns (value, argmin)."""
    t_lo, t_hi = math.log(ALPHA_SEARCH_MIN_EXCESS), math.log(alpha_max - 1.0)
    grid = np.linspace(t_lo, t_hi, _ALPHA_GRID_POINTS)
    values = objective(1.0 + np.exp(grid))
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    result = optimize.minimize_scalar(lambda t: float(objective(1.0 + math.exp(t))), bounds=(lo, hi),
                                      method="bounded", options={"xatol": 1e-12})
    if result.fun <= values[i]:
        return float(result.fun), 1.0 + math.exp(result.x)
    return float(values[i]), 1.0 + math.exp(grid[i])


def _zcdp_to_dp_tight_scalar(rho: float, delta: float, orders: np.ndarray | None) -> float:
    if rho == 0.0:
        return 0.0
    if orders is not None:  # the same finite order grid an RDP accountant would use
        return rdp_to_dp_improved(orders, rho * orders, delta)[0]
    if _kl_gives_zero_epsilon(rho, delta):  # KL = D_1 <= rho * 1
        return 0.0
    log_inv_delta = math.log(1.0 / delta)
    value, _ = _minimize_over_alpha(lambda a: _improved_rdp_bound(a, rho * a, log_inv_delta))
    return max(0.0, value)


def zcdp_to_dp_tight(rho, delta, orders=None):
    """(eps, delta)-DP implied by rho-zCDP through RDP with the improved RDP -> DP conversion.

    rho-zCDP gives (alpha, rho alpha)-RDP for every alpha > 1 (Bun & Steinke 2016 Def. 1.1), so
      eps = min_{alpha > 1} [ rho alpha + (ln(1/delta) + (alpha - 1) ln(1 - 1/alpha) - ln(alpha)) / (alpha - 1) ]
    # Canonne, Kamath & Steinke 2020 Prop. 12; Asoodeh et al. 2020 eq. (20)
    This is the formula dp_accounting's RdpAccountant evaluates in `compute_epsilon` (checked by
    reading dp_accounting 0.6 rdp/rdp_privacy_accountant.py: `r + log1p(-1/a) - log(delta*a)/(a-1)`),
    there over a finite list of orders with a > 1.01.

    orders=None minimizes over the continuum alpha in (1, 1e12] (log-grid + bounded Brent);
    an explicit `orders` list minimizes over those orders only (what an RDP accountant does).
    Never larger than `zcdp_to_dp` (at alpha = 1 + sqrt(L/rho) the extra terms are <= 0).
    """
    source = "the zCDP -> RDP -> (eps, delta) conversion, Canonne, Kamath & Steinke 2020 Prop. 12"
    rho = _nonnegative("rho", rho, source)
    delta = _delta(delta, source)
    grid = None
    if orders is not None:
        grid = _as_array("orders", orders).ravel()
        _require("orders", grid, grid > 1, "> 1", source)
    rho_b, delta_b = np.broadcast_arrays(rho, delta)
    result = np.vectorize(lambda r, d: _zcdp_to_dp_tight_scalar(float(r), float(d), grid), otypes=[float])(rho_b, delta_b)
    return _out(result)


def zcdp_to_dp_rdp_classic(rho, delta):
    """(eps, delta)-DP from rho-zCDP through RDP with Mironov's basic conversion.

    eps = min_{alpha > 1} [ rho alpha + ln(1/delta) / (alpha - 1) ]         # Mironov 2017 Prop. 3
    Minimized numerically here; the minimizer alpha* = 1 + sqrt(ln(1/delta)/rho) gives exactly the
    Bun-Steinke value rho + 2 sqrt(rho ln(1/delta)) (shown symbolically in the tests).
    """
    source = "the RDP -> (eps, delta) conversion, Mironov 2017 Prop. 3"
    rho = _nonnegative("rho", rho, source)
    delta = _delta(delta, source)

    def scalar(r: float, d: float) -> float:
        if r == 0.0:
            return 0.0
        log_inv_delta = math.log(1.0 / d)
        return _minimize_over_alpha(lambda a: r * a + log_inv_delta / (a - 1.0))[0]

    rho_b, delta_b = np.broadcast_arrays(rho, delta)
    return _out(np.vectorize(scalar, otypes=[float])(rho_b, delta_b))


# ------------------------------------------------------------------------------------------------
# Gaussian differential privacy


def gaussian_dp_delta(epsilon, mu):
    """Smallest delta such that a mu-GDP mechanism is (eps, delta)-DP.

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)     # Dong, Roth & Su 2019 Cor. 2.13
    The second term is evaluated as exp(eps + log Phi(.)) so that large eps does not overflow.
    """
    source = "the GDP -> (eps, delta) conversion, Dong, Roth & Su 2019 Cor. 2.13"
    epsilon = _nonnegative("epsilon", epsilon, source)
    mu = _positive("mu", mu, source)
    first = stats.norm.cdf(-epsilon / mu + mu / 2.0)
    second = np.exp(epsilon + stats.norm.logcdf(-epsilon / mu - mu / 2.0))
    return _out(np.maximum(first - second, 0.0))


def gaussian_dp_epsilon(delta, mu):
    """Smallest eps >= 0 with gaussian_dp_delta(eps, mu) <= delta (root of the decreasing map eps -> delta(eps)).

    eps = 0 when delta >= delta(0) = 2 Phi(mu/2) - 1.                  # Dong, Roth & Su 2019 Cor. 2.13
    """
    source = "the GDP -> (eps, delta) conversion, Dong, Roth & Su 2019 Cor. 2.13"
    delta = _delta(delta, source)
    mu = _positive("mu", mu, source)

    def scalar(d: float, m: float) -> float:
        if gaussian_dp_delta(0.0, m) <= d:
            return 0.0
        upper = max(1.0, m * m)
        while gaussian_dp_delta(upper, m) > d:
            upper *= 2.0
        return optimize.brentq(lambda e: gaussian_dp_delta(e, m) - d, 0.0, upper, xtol=1e-14, rtol=1e-14, maxiter=500)

    delta_b, mu_b = np.broadcast_arrays(delta, mu)
    return _out(np.vectorize(scalar, otypes=[float])(delta_b, mu_b))


def gdp_mu_of_gaussians(sensitivities, sigmas) -> float:
    """mu of the composition of Gaussian releases (sensitivity Delta_n, noise std sigma_n).

    Each release is (Delta_n/sigma_n)-GDP (Dong, Roth & Su 2019 Thm 2.7); composition of mu_n-GDP
    is sqrt(sum mu_n^2)-GDP (Cor. 3.3):  mu = sqrt(sum_n Delta_n^2 / sigma_n^2).
    """
    source = "GDP composition, Dong, Roth & Su 2019 Cor. 3.3"
    sensitivities = _nonnegative("sensitivities", sensitivities, source)
    sigmas = _positive("sigmas", sigmas, source)
    try:
        ratio = np.broadcast_arrays(sensitivities, sigmas)
    except ValueError as error:
        raise InvalidParameterError(f"sensitivities and sigmas must broadcast; got shapes {sensitivities.shape} and {sigmas.shape}") from error
    return float(np.sqrt(np.sum((ratio[0] / ratio[1]) ** 2)))


# ------------------------------------------------------------------------------------------------
# dynamic zCDP of zCDP-NFL (seeds/004)


def dynamic_zcdp_schedule(phi1, tau, horizon: int) -> np.ndarray:
    """Per-release budgets phi^(n) = phi^(1) tau^-(n-1), n = 1..T.

    # seeds/004 App. C L373: phi^(n+1) = phi^(n) / tau; spec zcdp_nfl §2.5 (phi_index default)
    Returns an array of shape (T,) + broadcast shape of (phi1, tau).
    """
    source = "the dynamic zCDP schedule, seeds/004 App. C L373"
    phi1 = _nonnegative("phi1", phi1, source)
    tau = _tau(tau, source)
    horizon = _horizon(horizon, source)
    if horizon.ndim != 0:
        raise InvalidParameterError(f"horizon must be a single integer for a schedule; got shape {horizon.shape}")
    n = np.arange(1, int(horizon) + 1).reshape((-1,) + (1,) * np.broadcast(phi1, tau).ndim)
    return phi1 * tau ** (-(n - 1.0))


def dynamic_zcdp_total(phi1, tau, horizon, method: str = "sum"):
    """Total zCDP of T releases: sum_{n=1}^{T} phi^(1) tau^-(n-1)     (zCDP composition, Bun & Steinke 2016 Lemma 1.7).

    method="sum": the explicit sum of the schedule (independent of any closed form);
    method="closed-form": the Corollary's expression phi^(1) (1 - tau^T) / (tau^(T-1) - tau^T)
    # seeds/004 Corollary L136 (= App. C L375). Both agree for every T >= 1 (geometric series);
    App. C L371-L375 labels this closed form sum_{0<n<T}, i.e. T-1 terms, which it is not (see
    dpverify.theory.zcdp_nfl.symbolic.check_appendix_c_sum).
    """
    source = "the dynamic zCDP total, seeds/004 Corollary L136"
    phi1 = _nonnegative("phi1", phi1, source)
    tau = _tau(tau, source)
    horizon = _horizon(horizon, source)
    if method == "sum":
        def scalar(p: float, t: float, h: int) -> float:
            n = np.arange(1, int(h) + 1, dtype=float)
            return float(math.fsum(p * t ** (-(n - 1.0))))

        p_b, t_b, h_b = np.broadcast_arrays(phi1, tau, horizon)
        return _out(np.vectorize(scalar, otypes=[float])(p_b, t_b, h_b))
    if method == "closed-form":
        return _out(phi1 * (1.0 - tau**horizon) / (tau ** (horizon - 1.0) - tau**horizon))
    raise InvalidParameterError(f"method must be 'sum' or 'closed-form'; got {method!r}")


def phi1_from_total(rho_total, tau, horizon):
    """phi^(1) that spends rho_total over T releases with phi^(n+1) = phi^(n)/tau.

    phi^(1) = rho_total (tau^(T-1) - tau^T) / (1 - tau^T)             # spec zcdp_nfl §2.5, inverse of L136
    Evaluated as rho_total (1 - tau) tau^(T-1) / (-expm1(T ln tau)) for accuracy when tau -> 1.
    """
    source = "the inverse of the Corollary's closed form, seeds/004 L136"
    rho_total = _nonnegative("rho_total", rho_total, source)
    tau = _tau(tau, source)
    horizon = _horizon(horizon, source)
    return _out(rho_total * (1.0 - tau) * tau ** (horizon - 1.0) / (-np.expm1(horizon * np.log(tau))))


def corollary_epsilon(phi1, tau, horizon, delta):
    """eps_k of the Corollary, exactly as printed (seeds/004 L136; natural log):

    eps_k = phi^(1) (1 - tau^T)/(tau^(T-1) - tau^T) + 2 sqrt( phi^(1) (1 - tau^T)/(tau^(T-1) - tau^T) log(1/delta) )
    """
    source = "the Corollary, seeds/004 L136"
    phi1 = _nonnegative("phi1", phi1, source)
    tau = _tau(tau, source)
    horizon = _horizon(horizon, source)
    delta = _delta(delta, source)
    total = phi1 * (1.0 - tau**horizon) / (tau ** (horizon - 1.0) - tau**horizon)
    return _out(total + 2.0 * np.sqrt(total * np.log(1.0 / delta)))


# ------------------------------------------------------------------------------------------------
# classical Gaussian mechanism


def classical_gaussian_sigma(sensitivity, epsilon, delta):
    """Noise std of the classical Gaussian mechanism for (eps, delta)-DP, eps in (0, 1).

    sigma = Delta sqrt(2 ln(1.25/delta)) / eps                         # Dwork & Roth 2014 Thm A.1
    """
    source = "the classical Gaussian mechanism, Dwork & Roth 2014 Thm A.1"
    sensitivity = _nonnegative("sensitivity", sensitivity, source)
    epsilon = _as_array("epsilon", epsilon)
    _require("epsilon", epsilon, (epsilon > 0) & (epsilon < 1), "in the open interval (0, 1)", source)
    delta = _delta(delta, source)
    return _out(sensitivity * np.sqrt(2.0 * np.log(1.25 / delta)) / epsilon)
