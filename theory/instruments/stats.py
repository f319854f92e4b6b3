"""Statistical tests with stated confidence and power, used by the statistical checks of the papers'
claims (spec zcdp_nfl.md §7.3):

* rate exponents: OLS of log(mean error) on log T with a bootstrap CI over independent Monte-Carlo
  runs (`fit_rate_exponent`), and the power of the decision rule "CI upper end <= -0.9"
  (`rate_power`, `rate_power_from_standard_error`)                        (§7.3.2, Theorem IV)
* monotone trends: Mann-Kendall (`mann_kendall`), optionally with the Hamed-Rao correction for
  autocorrelation                                                          (§7.3.1, Theorem III)
* one-sided upper confidence bound of a mean (`one_sided_upper_mean_bound`)  (§7.3.1)
* paired comparisons of algorithms on the same seeds: Wilcoxon signed-rank with effect sizes
  (`paired_comparison`)                                                    (§7.3.4, Figures 1-3)
* binomial proportions: Clopper-Pearson (`clopper_pearson`)                (escape probabilities, audits)
* multiple testing across a paper's claims: Holm (`holm`, `holm_adjusted_p_values`)

Every function validates its input and raises InvalidDataError (empty, NaN/inf, wrong shape) or
InvalidParameterError (confidence outside (0, 1), unknown option) with what was expected and given.
Every random procedure takes `rng` (a numpy Generator or an integer seed); `None` means the fixed
DEFAULT_BOOTSTRAP_SEED, so the same call always gives the same numbers (DESIGN.md, Seeds).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.stats
import statsmodels.api as sm
from statsmodels.stats.proportion import proportion_confint

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.validation import require_float_array

# default: seed used when a caller passes rng=None, so that every call is reproducible.
DEFAULT_BOOTSTRAP_SEED = 20240221
# default: spec §7.3.2, "consistent with O(1/T) if the CI upper end <= -0.9".
RATE_DECISION_THRESHOLD = -0.9
# default: bootstrap resamples for the rate CI (brief of theory/instruments/stats; the percentile-interval ends
# at 95% have Monte-Carlo sd ~ 0.005 * (CI width) with 2000 resamples).
DEFAULT_N_BOOT = 2000
# default: bootstrap resamples for the upper mean bound (scipy's default).
DEFAULT_N_BOOT_MEAN = 9999
# default (conventional 5%): the significance level of every rule, interval and Holm family.
SIGNIFICANCE = 0.05  # the one family-wise level of every statistical rule and interval (DESIGN.md: set once)
# default: bootstrap resamples processed at once when a custom statistic needs full resamples.
_BOOT_CHUNK = 256


# ------------------------------------------------------------------------------------------------
# validation helpers


def _check_confidence(confidence: float, name: str = "confidence") -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.integer, np.floating)) or not (
        0.0 < float(confidence) < 1.0
    ):
        raise InvalidParameterError(f"{name} must lie in the open interval (0, 1); got {confidence!r}")
    return float(confidence)


def _check_positive_int(name: str, value: int, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidParameterError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _finite_array(name: str, values, ndim: int, min_size: int = 1) -> np.ndarray:
    array = require_float_array(name, values, ndim)
    if array.size < min_size or (ndim == 2 and 0 in array.shape):
        raise InvalidDataError(f"{name} must hold at least {min_size} value(s); got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        bad = int(array.size - np.count_nonzero(np.isfinite(array)))
        raise InvalidDataError(f"{name} must be finite; found {bad} NaN/inf value(s) in shape {array.shape}")
    return array


def _generator(rng) -> np.random.Generator:
    if rng is None:
        return np.random.default_rng(DEFAULT_BOOTSTRAP_SEED)
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer, np.random.SeedSequence)) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    raise InvalidParameterError(f"rng must be a numpy Generator, an integer seed, a SeedSequence or None; got {type(rng).__name__}")


def _ols_slopes(log_t: np.ndarray, log_y: np.ndarray) -> np.ndarray:
    """Least-squares slopes of log_y (..., H) on log_t (H,), vectorized over leading axes."""
    x = log_t - log_t.mean()
    return (log_y - log_y.mean(axis=-1, keepdims=True)) @ x / float(x @ x)


# ------------------------------------------------------------------------------------------------
# rate exponents (spec §7.3.2)


@dataclass(frozen=True)
class RateFit:
    """Fit of log(error) = a + b log T.

    slope, intercept: OLS on the points (log T, log statistic(errors)), statistic = mean over runs
    unless a custom one was given. ci_low, ci_high: percentile bootstrap CI of the slope at
    `confidence`, obtained by resampling independent runs with replacement and refitting (captures
    run-to-run variability and the correlation of one run's errors across horizons).
    bootstrap_std_error: sd of the bootstrap slopes. ols_ci_low, ols_ci_high, ols_std_error,
    r_squared: the usual OLS quantities (t-based; they treat the points as independent, which they
    are not when every run contributes to every horizon; reported for comparison only).
    log_noise_sd: pooled sd of log(per-run error) around its per-horizon mean (nan if some error
    <= 0), the noise level used by `rate_power`. n_runs, n_points: runs and horizons used;
    n_boot_failed: bootstrap resamples dropped because the statistic was <= 0.
    """

    slope: float
    intercept: float
    ci_low: float
    ci_high: float
    ols_ci_low: float
    ols_ci_high: float
    ols_std_error: float
    bootstrap_std_error: float
    r_squared: float
    log_noise_sd: float
    n_runs: int
    n_points: int
    confidence: float
    n_boot: int
    n_boot_failed: int
    horizons: tuple[float, ...]

    def consistent_with_rate(self, threshold: float = RATE_DECISION_THRESHOLD) -> bool:
        """Decision rule of spec §7.3.2: consistent with O(1/T) iff the CI upper end <= threshold."""
        return self.ci_high <= threshold

    def covers(self, slope: float) -> bool:
        return self.ci_low <= slope <= self.ci_high


def fit_rate_exponent(
    horizons,
    errors_per_run,
    min_horizon: float | None = None,
    confidence: float = 0.95,
    n_boot: int = DEFAULT_N_BOOT,
    rng=None,
    statistic=None,
) -> RateFit:
    """OLS slope b of log(statistic) vs log T with a bootstrap CI over runs (spec §7.3.2).

    horizons: (H,) distinct positive horizons T. errors_per_run: (runs, H), row r = the errors of
    independent Monte-Carlo run r at every horizon. min_horizon: use only T >= min_horizon (the spec
    fits over T >= 200). statistic: optional function (n, H) array -> (H,) positive values (default:
    the mean over runs), e.g. `lambda e: np.abs(e.mean(axis=0)) + C` for |G(T)| + C(T); it is
    recomputed on every bootstrap resample of the runs. Needs >= 2 runs and >= 3 horizons.
    """
    confidence = _check_confidence(confidence)
    n_boot = _check_positive_int("n_boot", n_boot, minimum=100)
    horizons = _finite_array("horizons", horizons, ndim=1, min_size=1)
    errors = _finite_array("errors_per_run", errors_per_run, ndim=2)
    if errors.shape[1] != horizons.shape[0]:
        raise InvalidDataError(
            f"errors_per_run must have shape (runs, {horizons.shape[0]}) (one column per horizon); got {errors.shape}"
        )
    if np.any(horizons <= 0):
        raise InvalidDataError(f"horizons must be > 0 (their logarithm is taken); got min {horizons.min()}")
    if np.unique(horizons).size != horizons.size:
        raise InvalidDataError("horizons must be distinct; got repeated values")
    if min_horizon is not None:
        if not isinstance(min_horizon, (int, float, np.integer, np.floating)) or not math.isfinite(min_horizon):
            raise InvalidParameterError(f"min_horizon must be a finite number or None; got {min_horizon!r}")
        keep = horizons >= min_horizon
        horizons, errors = horizons[keep], errors[:, keep]
    n_runs, n_points = errors.shape
    if n_points < 3:
        raise InvalidDataError(
            f"the rate fit needs >= 3 horizons (2 parameters + 1 residual degree of freedom); got {n_points}"
            + (f" with T >= {min_horizon}" if min_horizon is not None else "")
        )
    if n_runs < 2:
        raise InvalidDataError(f"the bootstrap over runs needs >= 2 independent runs; got {n_runs}")

    def evaluate(block: np.ndarray) -> np.ndarray:
        if statistic is None:
            return block.mean(axis=-2)
        return np.asarray(statistic(block), dtype=float)

    point = evaluate(errors)
    if point.shape != (n_points,):
        raise InvalidDataError(f"statistic must return shape ({n_points},); got {point.shape}")
    if not np.all(np.isfinite(point)) or np.any(point <= 0):
        raise InvalidDataError(
            "the error statistic must be finite and > 0 at every horizon (its logarithm is fitted); "
            f"got min {np.nanmin(point)!r}. Pass a positive error measure (e.g. |G| + C, spec §7.3.2)"
        )
    log_t = np.log(horizons)
    log_y = np.log(point)
    ols = sm.OLS(log_y, sm.add_constant(log_t)).fit()
    ols_ci = ols.conf_int(alpha=1.0 - confidence)
    generator = _generator(rng)
    if statistic is None:
        # resampling runs with replacement = multinomial counts; the resampled mean is counts @ errors / n
        counts = generator.multinomial(n_runs, np.full(n_runs, 1.0 / n_runs), size=n_boot)
        boot_stat = counts @ errors / n_runs
    else:
        boot_stat = np.empty((n_boot, n_points))
        for start in range(0, n_boot, _BOOT_CHUNK):
            stop = min(start + _BOOT_CHUNK, n_boot)
            index = generator.integers(0, n_runs, size=(stop - start, n_runs))
            boot_stat[start:stop] = np.stack([evaluate(errors[row]) for row in index])
    valid = np.all(np.isfinite(boot_stat) & (boot_stat > 0), axis=1)
    n_failed = int(n_boot - np.count_nonzero(valid))
    if np.count_nonzero(valid) < 0.5 * n_boot:
        raise InvalidDataError(
            f"the error statistic was <= 0 in {n_failed} of {n_boot} bootstrap resamples; a bootstrap CI of a log-log "
            "slope needs a statistic that stays positive under resampling"
        )
    slopes = _ols_slopes(log_t, np.log(boot_stat[valid]))
    tail = (1.0 - confidence) / 2.0
    ci_low, ci_high = np.quantile(slopes, [tail, 1.0 - tail])
    if np.all(errors > 0):
        log_errors = np.log(errors)
        centered = log_errors - log_errors.mean(axis=0)
        log_noise_sd = float(np.sqrt(np.sum(centered**2) / (n_points * (n_runs - 1))))
    else:
        log_noise_sd = math.nan
    return RateFit(
        slope=float(ols.params[1]),
        intercept=float(ols.params[0]),
        ci_low=float(ci_low),
        ci_high=float(ci_high),
        ols_ci_low=float(ols_ci[1, 0]),
        ols_ci_high=float(ols_ci[1, 1]),
        ols_std_error=float(ols.bse[1]),
        bootstrap_std_error=float(np.std(slopes, ddof=1)),
        r_squared=float(ols.rsquared),
        log_noise_sd=log_noise_sd,
        n_runs=int(n_runs),
        n_points=int(n_points),
        confidence=confidence,
        n_boot=n_boot,
        n_boot_failed=n_failed,
        horizons=tuple(float(t) for t in horizons),
    )


@dataclass(frozen=True)
class RatePower:
    """Probability that the decision rule "CI upper end <= threshold" says "consistent with the rate"
    when the true slope is `true_slope`. `monte_carlo_std_error` is 0 for the analytic method.
    `assumptions` states the model under which the number holds."""

    power: float
    true_slope: float
    threshold: float
    confidence: float
    slope_standard_error: float
    method: str
    monte_carlo_std_error: float
    assumptions: str


_ANALYTIC_ASSUMPTION = (
    "slope estimate ~ Normal(true_slope, se^2) with se known (taken at the given value), and the CI upper end "
    "= estimate + z_{(1+confidence)/2} * se (the two-sided CI's upper end, as the bootstrap percentile CI is "
    "for a normal sampling distribution)"
)


def rate_power_from_standard_error(
    true_slope: float,
    slope_standard_error: float,
    threshold: float = RATE_DECISION_THRESHOLD,
    confidence: float = 0.95,
) -> RatePower:
    """Analytic power of "CI upper end <= threshold" given the standard error of the slope (e.g.
    RateFit.bootstrap_std_error, which captures the observed run-to-run noise and its correlation
    across horizons):  power = Phi((threshold - true_slope)/se - z_{(1+confidence)/2}).
    Assumes what `RatePower.assumptions` says."""
    confidence = _check_confidence(confidence)
    for name, value in (("true_slope", true_slope), ("threshold", threshold)):
        if not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(value):
            raise InvalidParameterError(f"{name} must be a finite number; got {value!r}")
    if not isinstance(slope_standard_error, (int, float, np.integer, np.floating)) or not (
        math.isfinite(slope_standard_error) and slope_standard_error > 0
    ):
        raise InvalidParameterError(f"slope_standard_error must be a finite number > 0; got {slope_standard_error!r}")
    z = scipy.stats.norm.ppf(0.5 + confidence / 2.0)
    power = float(scipy.stats.norm.cdf((threshold - true_slope) / slope_standard_error - z))
    return RatePower(
        power=power,
        true_slope=float(true_slope),
        threshold=float(threshold),
        confidence=confidence,
        slope_standard_error=float(slope_standard_error),
        method="analytic",
        monte_carlo_std_error=0.0,
        assumptions=_ANALYTIC_ASSUMPTION,
    )


def rate_power(
    true_slope: float,
    noise_sd: float,
    horizons,
    n_runs: int,
    *,
    threshold: float = RATE_DECISION_THRESHOLD,
    confidence: float = 0.95,
    method: str = "analytic",
    n_sim: int = 400,
    n_boot: int = 500,
    rng=None,
) -> RatePower:
    """Power of the decision rule "bootstrap CI upper end <= threshold" of `fit_rate_exponent` at noise
    level `noise_sd` (e.g. RateFit.log_noise_sd).

    Model (both methods): per-run errors e_{r,T} = C T^true_slope exp(noise_sd eps_{r,T}) with eps iid
    N(0, 1) over runs AND horizons, n_runs runs, the given horizons (C does not matter).
    method='analytic': the delta method gives Var(log mean_r e_{r,T}) = (exp(noise_sd^2) - 1)/n_runs,
    independent across horizons, hence se = sqrt((exp(noise_sd^2) - 1)/(n_runs Sxx)), Sxx =
    sum (log T - mean log T)^2, and the power of `rate_power_from_standard_error`.
    method='simulation': n_sim data sets drawn from the model, each fitted with the exact bootstrap
    procedure (n_boot resamples of the runs); power = fraction of "consistent" decisions, with its
    binomial Monte-Carlo standard error.
    If a real run's errors are correlated across horizons the model's se is wrong; use
    `rate_power_from_standard_error(true_slope, fit.bootstrap_std_error)` instead.
    """
    confidence = _check_confidence(confidence)
    if not isinstance(noise_sd, (int, float, np.integer, np.floating)) or not (math.isfinite(noise_sd) and noise_sd > 0):
        raise InvalidParameterError(f"noise_sd must be a finite number > 0 (sd of log per-run error); got {noise_sd!r}")
    for name, value in (("true_slope", true_slope), ("threshold", threshold)):
        if not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(value):
            raise InvalidParameterError(f"{name} must be a finite number; got {value!r}")
    horizons = _finite_array("horizons", horizons, ndim=1, min_size=3)
    if np.any(horizons <= 0) or np.unique(horizons).size != horizons.size:
        raise InvalidDataError("horizons must be distinct and > 0")
    n_runs = _check_positive_int("n_runs", n_runs, minimum=2)
    log_t = np.log(horizons)
    sxx = float(np.sum((log_t - log_t.mean()) ** 2))
    se = math.sqrt(math.expm1(noise_sd**2) / (n_runs * sxx))
    model = (
        f"per-run errors C*T^b*exp(noise_sd*eps), eps iid N(0,1) over runs and horizons; noise_sd={noise_sd:g}, "
        f"n_runs={n_runs}, {horizons.size} horizons in [{horizons.min():g}, {horizons.max():g}]"
    )
    if method == "analytic":
        result = rate_power_from_standard_error(true_slope, se, threshold, confidence)
        return RatePower(**{**result.__dict__, "assumptions": model + "; delta method for log(mean); " + _ANALYTIC_ASSUMPTION})
    if method != "simulation":
        raise InvalidParameterError(f"method must be 'analytic' or 'simulation'; got {method!r}")
    n_sim = _check_positive_int("n_sim", n_sim, minimum=10)
    n_boot = _check_positive_int("n_boot", n_boot, minimum=100)
    generator = _generator(rng)
    tail = (1.0 - confidence) / 2.0
    successes = 0
    uniform = np.full(n_runs, 1.0 / n_runs)
    for _ in range(n_sim):
        errors = np.exp(true_slope * log_t + noise_sd * generator.standard_normal((n_runs, horizons.size)))
        counts = generator.multinomial(n_runs, uniform, size=n_boot)
        slopes = _ols_slopes(log_t, np.log(counts @ errors / n_runs))
        if np.quantile(slopes, 1.0 - tail) <= threshold:
            successes += 1
    power = successes / n_sim
    return RatePower(
        power=power,
        true_slope=float(true_slope),
        threshold=float(threshold),
        confidence=confidence,
        slope_standard_error=se,
        method="simulation",
        monte_carlo_std_error=math.sqrt(power * (1.0 - power) / n_sim),
        assumptions=model + f"; {n_sim} simulated data sets, percentile bootstrap with {n_boot} resamples of runs",
    )


# ------------------------------------------------------------------------------------------------
# monotone trend (spec §7.3.1)


class MannKendallResult(NamedTuple):
    tau: float
    p_value: float
    trend: str  # 'decreasing' | 'increasing' | 'no trend'


def _sen_slope(x: np.ndarray) -> float:
    i, j = np.triu_indices(x.size, k=1)
    return float(np.median((x[j] - x[i]) / (j - i)))


def _hamed_rao_factor(x: np.ndarray, alpha: float) -> float:
    """n/n* of Hamed & Rao (1998), J. Hydrology 204: variance inflation of the MK statistic from the
    significant autocorrelations of the ranks of the Sen-detrended series."""
    n = x.size
    detrended = x - _sen_slope(x) * np.arange(1, n + 1)
    ranks = scipy.stats.rankdata(detrended)
    centered = ranks - ranks.mean()
    denominator = float(centered @ centered)
    if denominator == 0.0:
        return 1.0
    bound = scipy.stats.norm.ppf(1.0 - alpha / 2.0) / math.sqrt(n)
    total = 0.0
    for lag in range(1, n - 2):
        rho = float(centered[:-lag] @ centered[lag:]) / denominator
        if abs(rho) > bound:
            total += (n - lag) * (n - lag - 1) * (n - lag - 2) * rho
    return 1.0 + 2.0 * total / (n * (n - 1) * (n - 2))


def mann_kendall(
    series,
    alpha: float = SIGNIFICANCE,
    alternative: str = "two-sided",
    correction: str = "none",
) -> MannKendallResult:
    """Mann-Kendall trend test of `series` against its index.

    correction='none' (default): the classical Mann-Kendall test, WITHOUT autocorrelation
    correction: Kendall's tau (tau-b, for ties in the series) between the index and the series and
    its p-value from scipy.stats.kendalltau (exact null distribution for small series without ties,
    normal approximation with tie-corrected variance otherwise). Valid for independent observations.
    correction='hamed_rao': the Mann-Kendall S statistic with the variance inflated by the Hamed-Rao
    (1998) factor computed from the autocorrelations of the ranks of the Sen-detrended series that
    are significant at `alpha` (normal approximation with continuity correction; if the factor is
    <= 0 the uncorrected variance is used). Use it for the tail of a learning curve, whose values
    are serially correlated.
    alternative: 'two-sided' | 'less' (decreasing) | 'greater' (increasing). trend is 'decreasing'
    or 'increasing' if p < alpha in that direction, else 'no trend'.
    """
    alpha = _check_confidence(alpha, "alpha")
    x = _finite_array("series", series, ndim=1, min_size=3)
    if alternative not in ("two-sided", "less", "greater"):
        raise InvalidParameterError(f"alternative must be 'two-sided', 'less' or 'greater'; got {alternative!r}")
    if correction not in ("none", "hamed_rao"):
        raise InvalidParameterError(f"correction must be 'none' or 'hamed_rao'; got {correction!r}")
    n = x.size
    if np.ptp(x) == 0:
        return MannKendallResult(0.0, 1.0, "no trend")
    index = np.arange(n, dtype=float)
    kendall = scipy.stats.kendalltau(index, x, alternative=alternative)
    tau = float(kendall.statistic)
    if correction == "none":
        p_value = float(kendall.pvalue)
    else:
        i, j = np.triu_indices(n, k=1)
        s_stat = float(np.sum(np.sign(x[j] - x[i])))
        _, tie_counts = np.unique(x, return_counts=True)
        variance = (n * (n - 1) * (2 * n + 5) - float(np.sum(tie_counts * (tie_counts - 1) * (2 * tie_counts + 5)))) / 18.0
        factor = _hamed_rao_factor(x, alpha)
        if factor > 0:
            variance *= factor
        z = (s_stat - math.copysign(1.0, s_stat)) / math.sqrt(variance) if s_stat != 0 else 0.0
        if alternative == "two-sided":
            p_value = float(2.0 * scipy.stats.norm.sf(abs(z)))
        elif alternative == "less":
            p_value = float(scipy.stats.norm.cdf(z))
        else:
            p_value = float(scipy.stats.norm.sf(z))
    trend = "no trend"
    if p_value < alpha:
        if tau < 0 and alternative in ("two-sided", "less"):
            trend = "decreasing"
        elif tau > 0 and alternative in ("two-sided", "greater"):
            trend = "increasing"
    return MannKendallResult(tau, min(p_value, 1.0), trend)


# ------------------------------------------------------------------------------------------------
# upper confidence bound of a mean (spec §7.3.1)


def one_sided_upper_mean_bound(
    samples,
    confidence: float = 0.95,
    n_boot: int = DEFAULT_N_BOOT_MEAN,
    rng=None,
    method: str = "BCa",
) -> float:
    """Upper confidence bound U of the mean of independent samples: P(mean <= U) >= confidence
    (asymptotically for the bootstrap methods; exactly for 't' when the samples are normal).

    method='BCa' (default) or 'percentile': one-sided bootstrap bound from scipy.stats.bootstrap with
    alternative='less' (the interval (-inf, bound] at `confidence`), n_boot resamples. 't': the
    Student bound mean + t_{confidence, n-1} s/sqrt(n) (exact for normal samples; no resampling).
    A sample with no spread gives bound = its value.
    """
    confidence = _check_confidence(confidence)
    x = _finite_array("samples", samples, ndim=1, min_size=2)
    mean = float(x.mean())
    if method not in ("BCa", "percentile", "t"):
        raise InvalidParameterError(f"method must be 'BCa', 'percentile' or 't'; got {method!r}")
    if np.ptp(x) == 0:
        return mean
    if method == "t":
        return float(mean + scipy.stats.t.ppf(confidence, x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size))
    n_boot = _check_positive_int("n_boot", n_boot, minimum=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=scipy.stats.DegenerateDataWarning)
        result = scipy.stats.bootstrap(
            (x,),
            np.mean,
            n_resamples=n_boot,
            confidence_level=confidence,
            alternative="less",
            method=method,
            rng=_generator(rng),
            vectorized=True,
        )
    bound = float(result.confidence_interval.high)
    if not math.isfinite(bound):
        raise InvalidDataError(f"the {method} bootstrap bound is not finite for these samples (n={x.size}); use method='t' or 'percentile'")
    return bound


# ------------------------------------------------------------------------------------------------
# paired comparison (spec §7.3.4)


@dataclass(frozen=True)
class PairedComparison:
    """Wilcoxon signed-rank test of the paired differences d = a - b.

    p_value: for H1 given by `alternative` ('less': d tends to be < 0, i.e. a < b); statistic:
    scipy's statistic; median_difference: median of d; hodges_lehmann: median of the Walsh averages
    (d_i + d_j)/2, i <= j (the estimator associated with the signed-rank test); fraction_a_less:
    fraction of pairs with a < b; n_pairs; n_nonzero: pairs with d != 0 (zeros are dropped by the
    test, zero_method='wilcox')."""

    p_value: float
    statistic: float
    median_difference: float
    hodges_lehmann: float
    fraction_a_less: float
    n_pairs: int
    n_nonzero: int
    alternative: str

    @property
    def fraction_less(self) -> float:
        """Alias of fraction_a_less."""
        return self.fraction_a_less


def hodges_lehmann(differences) -> float:
    """One-sample Hodges-Lehmann estimate: median of the n(n+1)/2 Walsh averages (O(n^2) memory)."""
    d = _finite_array("differences", differences, ndim=1)
    i, j = np.triu_indices(d.size, k=0)
    return float(np.median((d[i] + d[j]) / 2.0))


def paired_comparison(a, b, alternative: str = "less") -> PairedComparison:
    """Wilcoxon signed-rank test (scipy.stats.wilcoxon, exact null distribution for small samples
    without ties, normal approximation otherwise) on paired samples a, b of equal length, e.g. the
    normalized errors of two algorithms on the same seeds. If all differences are 0 the p-value is 1."""
    x = _finite_array("a", a, ndim=1)
    y = _finite_array("b", b, ndim=1)
    if x.shape != y.shape:
        raise InvalidDataError(f"a and b must be paired samples of equal length; got {x.size} and {y.size}")
    if alternative not in ("two-sided", "less", "greater"):
        raise InvalidParameterError(f"alternative must be 'two-sided', 'less' or 'greater'; got {alternative!r}")
    d = x - y
    n_nonzero = int(np.count_nonzero(d))
    if n_nonzero == 0:
        p_value, statistic = 1.0, math.nan
    else:
        result = scipy.stats.wilcoxon(d, alternative=alternative, zero_method="wilcox")
        p_value, statistic = float(result.pvalue), float(result.statistic)
    return PairedComparison(
        p_value=p_value,
        statistic=statistic,
        median_difference=float(np.median(d)),
        hodges_lehmann=hodges_lehmann(d),
        fraction_a_less=float(np.mean(x < y)),
        n_pairs=int(d.size),
        n_nonzero=n_nonzero,
        alternative=alternative,
    )


def mean_interval(samples, level: float = SIGNIFICANCE) -> tuple[float, float]:
    """Two-sided Student-t interval for a mean at confidence 1 - level (scipy.stats.t.interval);
    exact for normal samples. A sample with no spread gives (its value, its value)."""
    x = _finite_array("samples", samples, ndim=1, min_size=2)
    mean = float(x.mean())
    if np.ptp(x) == 0:
        return mean, mean
    low, high = scipy.stats.t.interval(1 - level, x.size - 1, loc=mean, scale=float(x.std(ddof=1)) / math.sqrt(x.size))
    return float(low), float(high)


# ------------------------------------------------------------------------------------------------
# proportions and multiple testing


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95, side: str = "two-sided") -> tuple[float, float]:
    """Clopper-Pearson (exact binomial) confidence interval for a proportion, via
    statsmodels.stats.proportion.proportion_confint(method='beta').

    side='two-sided': [B(a/2; x, n-x+1), B(1-a/2; x+1, n-x)], a = 1 - confidence (B = beta quantile;
    0 and 1 at x = 0 and x = n). One-sided intervals by alpha doubling: side='lower' returns
    (lower end of the two-sided interval at alpha 2(1 - confidence), 1) and side='upper' returns
    (0, upper end of that interval); each has coverage >= confidence. One-sided needs
    confidence > 1/2.
    """
    confidence = _check_confidence(confidence)
    for name, value in (("successes", successes), ("trials", trials)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise InvalidDataError(f"{name} must be an integer count; got {value!r}")
    if trials < 1:
        raise InvalidDataError(f"trials must be >= 1; got {trials}")
    if not 0 <= successes <= trials:
        raise InvalidDataError(f"successes must lie in [0, trials={trials}]; got {successes}")
    if side == "two-sided":
        low, high = proportion_confint(int(successes), int(trials), alpha=1.0 - confidence, method="beta")
        return float(low), float(high)
    if side not in ("lower", "upper"):
        raise InvalidParameterError(f"side must be 'two-sided', 'lower' or 'upper'; got {side!r}")
    if confidence <= 0.5:
        raise InvalidParameterError(f"a one-sided Clopper-Pearson bound by alpha doubling needs confidence > 0.5; got {confidence}")
    low, high = proportion_confint(int(successes), int(trials), alpha=2.0 * (1.0 - confidence), method="beta")
    if side == "lower":
        return float(low), 1.0
    return 0.0, float(high)


def holm(p_values, alpha: float = SIGNIFICANCE) -> np.ndarray:
    """Holm's step-down procedure: a boolean array, True where the hypothesis is rejected with the
    family-wise error rate controlled at alpha, for any dependence between the tests."""
    alpha = _check_confidence(alpha, "alpha")
    return holm_adjusted_p_values(p_values) <= alpha


def holm_adjusted_p_values(p_values) -> np.ndarray:
    """Holm-adjusted p-values: p_(i)^adj = max_{j <= i} min(1, (m - j + 1) p_(j)), in increasing order
    of p, returned in the input order; hypothesis i is rejected by `holm` at alpha iff p_i^adj <= alpha.

    Written here rather than taken from statsmodels' multipletests (the tests compare the two): that
    function runs gc.collect() on every call, about 70 ms in a process of this size, and the checks
    call it hundreds of times."""
    p = _check_p_values(p_values)
    order = np.argsort(p, kind="stable")
    factors = p.size - np.arange(p.size)
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(factors * p[order]))
    return adjusted


def _check_p_values(p_values) -> np.ndarray:
    p = _finite_array("p_values", p_values, ndim=1)
    if np.any((p < 0) | (p > 1)):
        raise InvalidDataError(f"p_values must lie in [0, 1]; got min {p.min()}, max {p.max()}")
    return p
