"""dpverify.theory.instruments.stats: numbers against closed forms and independent computations; statistical assertions
run with a fixed seed and state their nominal level and the binomial tolerance used."""

import math

import numpy as np
import pytest
import scipy.stats

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.theory.instruments.stats import (
    MannKendallResult,
    clopper_pearson,
    fit_rate_exponent,
    hodges_lehmann,
    holm,
    holm_adjusted_p_values,
    mann_kendall,
    one_sided_upper_mean_bound,
    paired_comparison,
    rate_power,
    rate_power_from_standard_error,
)

HORIZONS = np.array([200, 300, 500, 800, 1200, 2000, 3000, 5000], dtype=float)  # spec §7.3.2: T >= 200 on a log grid


def synthetic_errors(rng, slope, n_runs=30, noise_sd=0.5, horizons=HORIZONS, scale=3.0):
    """Per-run errors scale * T^slope * lognormal(0, noise_sd), iid over runs and horizons."""
    return scale * horizons**slope * np.exp(noise_sd * rng.standard_normal((n_runs, horizons.size)))


# ------------------------------------------------------------------------------------------------ rate fit


def test_rate_fit_point_estimate_and_ols_ci_match_independent_computation():
    rng = np.random.default_rng(1)
    errors = synthetic_errors(rng, -1.0)
    fit = fit_rate_exponent(HORIZONS, errors, rng=2)
    log_t, log_y = np.log(HORIZONS), np.log(errors.mean(axis=0))
    slope, intercept = np.polyfit(log_t, log_y, 1)
    assert fit.slope == pytest.approx(slope, abs=1e-12)
    assert fit.intercept == pytest.approx(intercept, abs=1e-12)
    residuals = log_y - (intercept + slope * log_t)
    sxx = np.sum((log_t - log_t.mean()) ** 2)
    standard_error = math.sqrt(residuals @ residuals / (HORIZONS.size - 2) / sxx)
    t_quantile = scipy.stats.t.ppf(0.975, HORIZONS.size - 2)
    assert fit.ols_std_error == pytest.approx(standard_error, rel=1e-10)
    assert fit.ols_ci_low == pytest.approx(slope - t_quantile * standard_error, rel=1e-10)
    assert fit.ols_ci_high == pytest.approx(slope + t_quantile * standard_error, rel=1e-10)
    assert (fit.n_runs, fit.n_points, fit.n_boot_failed) == (30, 8, 0)
    # pooled sd of log errors about their per-horizon means (true value 0.5)
    assert fit.log_noise_sd == pytest.approx(0.5, abs=0.05)


def test_rate_fit_recovers_one_over_t():
    # fixed seed; nominal: the 95% CI misses -1 with probability ~5% for a random seed
    errors = synthetic_errors(np.random.default_rng(10), -1.0)
    fit = fit_rate_exponent(HORIZONS, errors, rng=11)
    assert fit.ci_low <= -1.0 <= fit.ci_high
    assert fit.covers(-1.0)
    assert fit.slope == pytest.approx(-1.0, abs=0.1)
    assert fit.consistent_with_rate(-0.9)  # the spec's decision rule says "consistent with O(1/T)"


def test_rate_fit_on_one_over_sqrt_t_excludes_minus_one():
    errors = synthetic_errors(np.random.default_rng(12), -0.5)
    fit = fit_rate_exponent(HORIZONS, errors, rng=13)
    assert fit.ci_low > -1.0  # the whole CI lies above -1
    assert not fit.covers(-1.0)
    assert fit.covers(-0.5)
    assert not fit.consistent_with_rate(-0.9)


def test_rate_fit_bootstrap_coverage_over_200_simulations():
    """Coverage of the nominal 95% bootstrap CI over 200 seeded simulations (30 runs each).
    Binomial tolerance: if the true coverage were 0.95, P(at most 179 of 200 cover) =
    binom.cdf(179, 200, 0.95) ~ 1.2e-3, so the threshold 180/200 = 0.90 is a test at level ~0.1%
    of "coverage is at least nominal" (a percentile bootstrap with 30 runs may undercover slightly)."""
    rng = np.random.default_rng(2024)
    covered = sum(fit_rate_exponent(HORIZONS, synthetic_errors(rng, -1.0), n_boot=1000, rng=rng).covers(-1.0) for _ in range(200))
    assert scipy.stats.binom.cdf(179, 200, 0.95) < 2e-3
    assert covered >= 180


def test_rate_fit_is_reproducible_and_respects_min_horizon():
    horizons = np.array([20, 50, 100, 200, 500, 1000, 2000, 5000], dtype=float)
    errors = synthetic_errors(np.random.default_rng(3), -1.0, horizons=horizons)
    errors[:, :3] *= 50.0  # a transient the fit must ignore
    first = fit_rate_exponent(horizons, errors, min_horizon=200, rng=4)
    second = fit_rate_exponent(horizons, errors, min_horizon=200, rng=4)
    assert first == second
    assert first.n_points == 5 and first.horizons == (200.0, 500.0, 1000.0, 2000.0, 5000.0)
    assert first.slope == pytest.approx(np.polyfit(np.log(horizons[3:]), np.log(errors[:, 3:].mean(0)), 1)[0], abs=1e-12)


def test_rate_fit_with_a_custom_statistic():
    # |G(T)| + C(T) as in spec §7.3.2: G from the runs, C a deterministic term
    rng = np.random.default_rng(5)
    gaps = 2.0 / HORIZONS * (1 + 0.3 * rng.standard_normal((40, HORIZONS.size)))
    c_term = 1.0 / HORIZONS
    fit = fit_rate_exponent(HORIZONS, gaps, statistic=lambda e: np.abs(e.mean(axis=0)) + c_term, n_boot=500, rng=6)
    expected = np.polyfit(np.log(HORIZONS), np.log(np.abs(gaps.mean(0)) + c_term), 1)[0]
    assert fit.slope == pytest.approx(expected, abs=1e-12)
    assert fit.covers(-1.0)


def test_rate_fit_input_validation():
    errors = synthetic_errors(np.random.default_rng(0), -1.0)
    with pytest.raises(InvalidParameterError, match=r"open interval \(0, 1\)"):
        fit_rate_exponent(HORIZONS, errors, confidence=1.0)
    with pytest.raises(InvalidParameterError):
        fit_rate_exponent(HORIZONS, errors, confidence=0.0)
    bad = errors.copy()
    bad[2, 3] = np.nan
    with pytest.raises(InvalidDataError, match="finite"):
        fit_rate_exponent(HORIZONS, bad)
    with pytest.raises(InvalidDataError, match=r"shape \(runs, 8\)"):
        fit_rate_exponent(HORIZONS, errors[:, :5])
    with pytest.raises(InvalidDataError, match=">= 2 independent runs"):
        fit_rate_exponent(HORIZONS, errors[:1])
    with pytest.raises(InvalidDataError, match=">= 3 horizons"):
        fit_rate_exponent(HORIZONS, errors, min_horizon=3000)
    with pytest.raises(InvalidDataError, match="> 0"):
        fit_rate_exponent(HORIZONS, -errors)
    with pytest.raises(InvalidDataError, match="at least"):
        fit_rate_exponent([], np.empty((3, 0)))
    with pytest.raises(InvalidDataError, match="distinct"):
        fit_rate_exponent(np.full(8, 10.0), errors)


# ------------------------------------------------------------------------------------------------ power


def test_analytic_power_matches_closed_form():
    log_t = np.log(HORIZONS)
    sxx = np.sum((log_t - log_t.mean()) ** 2)
    se = math.sqrt(math.expm1(0.5**2) / (30 * sxx))
    z = scipy.stats.norm.ppf(0.975)
    result = rate_power(-1.0, 0.5, HORIZONS, 30)
    assert result.slope_standard_error == pytest.approx(se, rel=1e-12)
    assert result.power == pytest.approx(scipy.stats.norm.cdf((-0.9 + 1.0) / se - z), rel=1e-12)
    # at the threshold itself the rule says "consistent" with probability 1 - 0.975
    assert rate_power_from_standard_error(-0.9, 0.05).power == pytest.approx(0.025, abs=1e-12)
    assert "iid" in result.assumptions and "delta method" in result.assumptions


def test_simulated_power_agrees_with_analytic():
    # fixed seed; 4 Monte-Carlo standard errors plus 0.03 for the normal/delta-method approximations
    for true_slope in (-1.0, -0.95):
        analytic = rate_power(true_slope, 0.5, HORIZONS, 30).power
        simulated = rate_power(true_slope, 0.5, HORIZONS, 30, method="simulation", n_sim=300, n_boot=400, rng=8)
        assert abs(simulated.power - analytic) <= 4 * max(simulated.monte_carlo_std_error, 0.01) + 0.03
    assert rate_power(-0.5, 0.5, HORIZONS, 30, method="simulation", n_sim=50, rng=9).power == 0.0
    assert rate_power(-1.5, 0.5, HORIZONS, 30, method="simulation", n_sim=50, rng=9).power == 1.0


def test_power_input_validation():
    with pytest.raises(InvalidParameterError, match="noise_sd"):
        rate_power(-1.0, 0.0, HORIZONS, 30)
    with pytest.raises(InvalidParameterError, match="n_runs"):
        rate_power(-1.0, 0.5, HORIZONS, 1)
    with pytest.raises(InvalidParameterError, match="method"):
        rate_power(-1.0, 0.5, HORIZONS, 30, method="exact")
    with pytest.raises(InvalidParameterError, match="confidence"):
        rate_power_from_standard_error(-1.0, 0.1, confidence=1.5)
    with pytest.raises(InvalidParameterError, match="slope_standard_error"):
        rate_power_from_standard_error(-1.0, -0.1)


# ------------------------------------------------------------------------------------------------ Mann-Kendall


def test_mann_kendall_strictly_decreasing_and_increasing():
    result = mann_kendall(np.exp(-np.arange(30) / 5.0))
    assert isinstance(result, MannKendallResult)
    tau, p_value, trend = result
    assert tau == -1.0 and p_value < 1e-6 and trend == "decreasing"
    assert mann_kendall(np.arange(30.0)).trend == "increasing"
    # exact null distribution: n = 4 strictly decreasing, two-sided p = 2/4! = 1/12
    assert mann_kendall([4.0, 3.0, 2.0, 1.0]).p_value == pytest.approx(1 / 12, abs=1e-12)
    assert mann_kendall([4.0, 3.0, 2.0, 1.0], alternative="less").p_value == pytest.approx(1 / 24, abs=1e-12)
    assert mann_kendall(np.full(10, 2.0)) == (0.0, 1.0, "no trend")


def test_mann_kendall_normal_approximation_matches_the_s_statistic_by_hand():
    x = np.random.default_rng(21).standard_normal(60)
    n = x.size
    s_stat = sum(np.sign(x[j] - x[i]) for i in range(n) for j in range(i + 1, n))
    z = s_stat / math.sqrt(n * (n - 1) * (2 * n + 5) / 18)
    tau, p_value, trend = mann_kendall(x)
    assert tau == pytest.approx(s_stat / (n * (n - 1) / 2), abs=1e-12)
    assert p_value == pytest.approx(2 * scipy.stats.norm.sf(abs(z)), rel=1e-10)


def test_mann_kendall_iid_noise_shows_no_trend():
    # fixed seed; nominal false-alarm probability 5% for a random seed
    noise = np.random.default_rng(22).standard_normal(100)
    tau, p_value, trend = mann_kendall(noise)
    assert p_value > 0.05 and trend == "no trend"
    assert mann_kendall(noise, correction="hamed_rao").trend == "no trend"


def test_hamed_rao_reduces_false_alarms_under_autocorrelation():
    """AR(1) noise (phi = 0.7, n = 100, no trend), 200 seeded series: the uncorrected test rejects far
    more often than its nominal 5% (serial correlation inflates Var S); the Hamed-Rao correction
    must reject markedly less often. (Observed with this seed: 0.445 vs 0.27.)"""
    rng = np.random.default_rng(5)
    rejections_plain = rejections_corrected = 0
    for _ in range(200):
        shocks = rng.standard_normal(150)
        series = np.zeros(150)
        for i in range(1, 150):
            series[i] = 0.7 * series[i - 1] + shocks[i]
        series = series[50:]
        rejections_plain += mann_kendall(series).p_value < 0.05
        rejections_corrected += mann_kendall(series, correction="hamed_rao").p_value < 0.05
    assert rejections_plain / 200 > 0.25  # far above the nominal 0.05: the problem the correction addresses
    assert rejections_corrected <= rejections_plain - 20


def test_hamed_rao_on_a_trend_with_correlated_noise_still_detects_it():
    rng = np.random.default_rng(31)
    shocks = rng.standard_normal(200)
    noise = np.zeros(200)
    for i in range(1, 200):
        noise[i] = 0.5 * noise[i - 1] + shocks[i]
    series = 1.0 / np.arange(1, 201) * 100 + 0.2 * noise  # decreasing tail of a learning curve + noise
    assert mann_kendall(series, correction="hamed_rao", alternative="less").trend == "decreasing"


def test_mann_kendall_input_validation():
    with pytest.raises(InvalidDataError, match="finite"):
        mann_kendall([1.0, np.nan, 2.0])
    with pytest.raises(InvalidDataError, match="at least 3"):
        mann_kendall([1.0, 2.0])
    with pytest.raises(InvalidParameterError, match="alpha"):
        mann_kendall([1.0, 2.0, 3.0], alpha=1.2)
    with pytest.raises(InvalidParameterError, match="correction"):
        mann_kendall([1.0, 2.0, 3.0], correction="yue_wang")


# ------------------------------------------------------------------------------------------------ upper mean bound


def test_t_upper_bound_matches_closed_form():
    x = np.array([0.2, 0.5, 0.1, 0.9, 0.4, 0.3])
    bound = one_sided_upper_mean_bound(x, confidence=0.95, method="t")
    expected = x.mean() + scipy.stats.t.ppf(0.95, 5) * x.std(ddof=1) / math.sqrt(6)
    assert isinstance(bound, float)
    assert bound == pytest.approx(expected, rel=1e-12)


def test_bootstrap_upper_bound_coverage():
    """BCa one-sided 95% bound of the mean of Exponential(1) samples (n = 50), 200 seeded samples.
    Binomial tolerance as for the rate CI: >= 180/200 covering (P ~ 1.2e-3 of failing at true 0.95)."""
    rng = np.random.default_rng(41)
    covered = 0
    for _ in range(200):
        sample = rng.exponential(1.0, size=50)
        covered += one_sided_upper_mean_bound(sample, confidence=0.95, n_boot=2000, rng=rng) >= 1.0
    assert covered >= 180


def test_upper_bound_is_above_the_mean_and_reproducible():
    x = np.random.default_rng(42).exponential(1e-3, size=100)
    first = one_sided_upper_mean_bound(x, rng=1)
    assert first > x.mean() and first == one_sided_upper_mean_bound(x, rng=1)
    percentile = one_sided_upper_mean_bound(x, method="percentile", rng=1)
    resampled_means = x[np.random.default_rng(0).integers(0, 100, size=(20000, 100))].mean(axis=1)
    assert percentile == pytest.approx(np.quantile(resampled_means, 0.95), rel=0.02)
    assert one_sided_upper_mean_bound(np.full(5, 0.25)) == 0.25


def test_upper_bound_validation():
    with pytest.raises(InvalidDataError, match="at least 2"):
        one_sided_upper_mean_bound([1.0])
    with pytest.raises(InvalidDataError, match="finite"):
        one_sided_upper_mean_bound([1.0, np.inf])
    with pytest.raises(InvalidParameterError, match="confidence"):
        one_sided_upper_mean_bound([1.0, 2.0], confidence=95)
    with pytest.raises(InvalidParameterError, match="method"):
        one_sided_upper_mean_bound([1.0, 2.0], method="bca")


# ------------------------------------------------------------------------------------------------ paired comparison


def test_paired_comparison_by_hand():
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    d = np.array([-1.0, -2.0, -3.0, -10.0, 0.5])
    result = paired_comparison(a, a - d)
    # ranks of |d|: 0.5 -> 1, 1 -> 2, 2 -> 3, 3 -> 4, 10 -> 5; W+ = 1.
    # exact null: P(W+ <= 1) = #{subsets of {1..5} with rank sum <= 1} / 2^5 = 2/32
    assert result.p_value == pytest.approx(2 / 32, abs=1e-12)
    assert result.median_difference == -2.0
    walsh = sorted((d[i] + d[j]) / 2 for i in range(5) for j in range(i, 5))
    assert len(walsh) == 15 and result.hodges_lehmann == walsh[7]
    assert result.hodges_lehmann == pytest.approx(-2.0)  # the 8th of the 15 sorted Walsh averages
    assert result.fraction_a_less == pytest.approx(0.8) and result.fraction_less == result.fraction_a_less
    assert (result.n_pairs, result.n_nonzero) == (5, 5)


def test_paired_comparison_detects_a_shift():
    rng = np.random.default_rng(51)
    b = rng.lognormal(size=100)
    a = b * np.exp(-0.3 + 0.1 * rng.standard_normal(100))  # a is smaller on ~99.9% of pairs
    result = paired_comparison(a, b)
    assert result.p_value < 1e-10 and result.fraction_a_less > 0.95
    assert paired_comparison(a, b, alternative="greater").p_value > 0.99
    assert paired_comparison(a, a).p_value == 1.0


def test_hodges_lehmann_of_symmetric_sample_is_its_centre():
    assert hodges_lehmann([1.0, 2.0, 3.0, 4.0, 5.0]) == 3.0


def test_paired_comparison_validation():
    with pytest.raises(InvalidDataError, match="equal length"):
        paired_comparison([1.0, 2.0], [1.0])
    with pytest.raises(InvalidDataError, match="finite"):
        paired_comparison([1.0, np.nan], [1.0, 2.0])
    with pytest.raises(InvalidDataError, match="at least 1"):
        paired_comparison([], [])
    with pytest.raises(InvalidParameterError, match="alternative"):
        paired_comparison([1.0], [2.0], alternative="smaller")


# ------------------------------------------------------------------------------------------------ Clopper-Pearson, Holm


def test_clopper_pearson_matches_beta_quantiles():
    x, n = 7, 20
    low, high = clopper_pearson(x, n, confidence=0.90)
    assert low == pytest.approx(scipy.stats.beta.ppf(0.05, x, n - x + 1), rel=1e-10)
    assert high == pytest.approx(scipy.stats.beta.ppf(0.95, x + 1, n - x), rel=1e-10)
    low, one = clopper_pearson(x, n, confidence=0.95, side="lower")
    assert one == 1.0 and low == pytest.approx(scipy.stats.beta.ppf(0.05, x, n - x + 1), rel=1e-10)
    zero, high = clopper_pearson(x, n, confidence=0.95, side="upper")
    assert zero == 0.0 and high == pytest.approx(scipy.stats.beta.ppf(0.95, x + 1, n - x), rel=1e-10)
    # edge cases in closed form: x = 0 -> upper = 1 - (a/2)^(1/n); x = n -> lower = (a/2)^(1/n)
    assert clopper_pearson(0, 50, 0.95) == pytest.approx((0.0, 1 - 0.025 ** (1 / 50)), rel=1e-10)
    assert clopper_pearson(50, 50, 0.95) == pytest.approx((0.025 ** (1 / 50), 1.0), rel=1e-10)
    assert clopper_pearson(0, 50, 0.95, side="upper")[1] == pytest.approx(1 - 0.05 ** (1 / 50), rel=1e-10)


def test_clopper_pearson_validation():
    with pytest.raises(InvalidDataError, match=r"\[0, trials=10\]"):
        clopper_pearson(11, 10)
    with pytest.raises(InvalidDataError, match="trials"):
        clopper_pearson(0, 0)
    with pytest.raises(InvalidDataError, match="integer"):
        clopper_pearson(2.5, 10)
    with pytest.raises(InvalidParameterError, match="confidence"):
        clopper_pearson(2, 10, confidence=1.0)
    with pytest.raises(InvalidParameterError, match="> 0.5"):
        clopper_pearson(2, 10, confidence=0.4, side="lower")
    with pytest.raises(InvalidParameterError, match="side"):
        clopper_pearson(2, 10, side="both")


def test_holm_matches_hand_computation():
    p_values = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, max(0.06, 0.04*1) = 0.06
    assert np.allclose(holm_adjusted_p_values(p_values), [0.03, 0.06, 0.06, 0.02], atol=1e-15)
    assert holm(p_values, alpha=0.05).tolist() == [True, False, False, True]
    assert holm(p_values, alpha=0.031).tolist() == [True, False, False, True]
    assert holm(p_values, alpha=0.029).tolist() == [False, False, False, True]
    assert holm_adjusted_p_values([0.5, 0.9]).tolist() == [1.0, 1.0]


def test_holm_validation():
    with pytest.raises(InvalidDataError, match=r"\[0, 1\]"):
        holm([0.1, 1.5])
    with pytest.raises(InvalidDataError, match="finite"):
        holm([0.1, np.nan])
    with pytest.raises(InvalidDataError, match="at least 1"):
        holm([])
    with pytest.raises(InvalidParameterError, match="alpha"):
        holm([0.1], alpha=0.0)
    with pytest.raises(InvalidDataError, match=r"\[0, 1\]"):
        holm_adjusted_p_values([-0.1])


def test_holm_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(11)
    for size in (1, 2, 5, 40):
        p_values = rng.uniform(0, 0.2, size=size) ** 2
        p_values[: size // 3] = p_values[0]   # ties
        reject, adjusted, _, _ = multipletests(p_values, alpha=0.05, method="holm")
        assert np.allclose(holm_adjusted_p_values(p_values), adjusted, rtol=0, atol=1e-15)
        assert holm(p_values, alpha=0.05).tolist() == reject.tolist()
