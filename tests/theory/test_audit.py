"""dpverify.theory.audit: numbers against closed forms; statistical assertions run with fixed seeds and state
their level. The audit's own error rate (a false refutation) is at most 1 - confidence = 5% per audit
for an arbitrary seed; the tightness assertions leave >= 5 standard errors of margin."""

import math

import numpy as np
import pytest
from scipy import stats

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.privacy import gaussian_dp_delta
from dpverify.algorithms.core.reference_mechanisms import (
    gaussian_half_sensitivity,
    gaussian_sum,
    laplace_count,
    make_sampler,
)
from dpverify.theory.audit import (
    AuditResult,
    PrivacyClaim,
    audit,
    bounds,
    gaussian_log_likelihood_ratio,
    laplace_log_likelihood_ratio,
    sensitivity_probe,
)
from dpverify.theory.claims import Verdict
from dpverify.theory.instruments.stats import clopper_pearson

Z_975 = stats.norm.ppf(0.975)  # per-interval quantile of a 95% audit testing one event (union bound over 2)


def expected_laplace_bound(epsilon, samples):
    """Normal approximation of eps_lb for Laplace on the event {x >= Delta} (probability ratio exactly
    e^eps there; p1 = 1/2, p0 = e^-eps / 2) on the second half (n = samples / 2): returns (value, sd).
    eps_lb ~ eps - z (r1 + r0), r = sqrt((1 - p)/(n p)) the relative sd of each frequency."""
    n = samples // 2
    p1, p0 = 0.5, 0.5 * math.exp(-epsilon)
    r1, r0 = math.sqrt((1 - p1) / (n * p1)), math.sqrt((1 - p0) / (n * p0))
    return epsilon - Z_975 * (r1 + r0), math.hypot(r1, r0)


def laplace(epsilon, sensitivity=1.0):
    return make_sampler("laplace_count", epsilon=epsilon, sensitivity=sensitivity)


def randomized_response(epsilon):
    """Output 1 with probability e^eps/(1 + e^eps) on dataset 1, 1/(1 + e^eps) on dataset 0: exactly eps-DP,
    and both events {0}, {1} attain the ratio e^eps (the hardest case for coverage)."""
    high = math.exp(epsilon) / (1.0 + math.exp(epsilon))

    def sample(dataset, n, rng):
        return (rng.random(n) < (high if dataset == 1 else 1.0 - high)).astype(float)

    return sample


# ------------------------------------------------------------------------------------------------ bounds


@pytest.mark.parametrize("k, n, confidence", [(0, 50, 0.9), (7, 50, 0.99), (500, 1000, 0.975), (1000, 1000, 0.95), (3, 100_000, 0.999)])
def test_vectorized_clopper_pearson_matches_theory_stats(k, n, confidence):
    low = clopper_pearson(k, n, confidence, side="lower")[0]
    high = clopper_pearson(k, n, confidence, side="upper")[1]
    assert float(bounds.cp_lower(k, n, 1 - confidence)) == pytest.approx(low, rel=1e-10, abs=1e-300)
    assert float(bounds.cp_upper(k, n, 1 - confidence)) == pytest.approx(high, rel=1e-10)


def test_epsilon_bound_and_bernoulli_renyi_divergence_closed_forms():
    assert bounds.epsilon_lower_bound(0.5, 0.2) == pytest.approx(math.log(2.5))
    assert bounds.epsilon_lower_bound(0.5, 0.2, delta=0.1) == pytest.approx(math.log(2.0))
    assert bounds.epsilon_lower_bound(0.05, 0.2, delta=0.1) == -math.inf
    p, q, a = 0.3, 0.1, 2.0
    direct = math.log(p**a * q ** (1 - a) + (1 - p) ** a * (1 - q) ** (1 - a)) / (a - 1)
    assert bounds.bernoulli_renyi_divergence(p, q, a) == pytest.approx(direct, rel=1e-12)
    kl = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))  # D_alpha -> KL as alpha -> 1
    assert bounds.bernoulli_renyi_divergence(p, q, 1 + 1e-7) == pytest.approx(kl, rel=1e-5)
    assert bounds.bernoulli_renyi_divergence(0.4, 0.4, 3.0) == pytest.approx(0.0, abs=1e-15)


def test_bernoulli_divergence_is_monotone_where_the_rho_bound_needs_it():
    # validity of rho_lb: D_alpha(Bern(p)||Bern(q)) increases in p on p >= q and decreases in q on q <= p
    grid = np.linspace(0.01, 0.99, 99)
    for alpha in (1.01, 2.0, 10.0, 1000.0):
        for q in (0.02, 0.2, 0.6):
            values = bounds.bernoulli_renyi_divergence(grid[grid >= q], q, alpha)
            assert np.all(np.diff(values) >= -1e-12)
        for p in (0.05, 0.5, 0.95):
            values = bounds.bernoulli_renyi_divergence(p, grid[grid <= p], alpha)
            assert np.all(np.diff(values) <= 1e-12)


def test_rho_lower_bound_maximizes_over_the_order_and_is_zero_without_separation():
    value, order = bounds.rho_lower_bound(0.5, 0.1)
    alphas = 1 + np.logspace(-4, 4, 20001)
    brute = np.max(bounds.bernoulli_renyi_divergence(0.5, 0.1, alphas) / alphas)
    assert value == pytest.approx(brute, rel=1e-6)
    assert bounds.bernoulli_renyi_divergence(0.5, 0.1, order) / order == pytest.approx(value, rel=1e-12)
    assert bounds.rho_lower_bound(0.1, 0.1) == (0.0, pytest.approx(math.nan, nan_ok=True))
    assert bounds.rho_lower_bound(0.1, 0.3)[0] == 0.0


def test_gdp_mu_estimate_closed_form():
    assert bounds.gdp_mu_estimate(0.0, 4.0, 3.0, 4.0) == pytest.approx(1.5)
    assert bounds.gdp_mu_estimate(1.0, 0.0, 1.0, 0.0) == 0.0
    assert bounds.gdp_mu_estimate(1.0, 0.0, 2.0, 0.0) == math.inf


# ------------------------------------------------------------------------------------------------ claims and summaries


def test_privacy_claim_validation():
    assert PrivacyClaim(epsilon=1).epsilon == 1.0
    assert PrivacyClaim(rho=0.5).describe() == "rho 0.5 (zCDP)"
    assert PrivacyClaim(epsilon=1, delta=1e-5).describe() == "eps 1, delta 1e-05"
    with pytest.raises(InvalidParameterError, match="epsilon .* rho .* or a trade-off curve"):
        PrivacyClaim()
    with pytest.raises(InvalidParameterError, match="tradeoff must be"):
        PrivacyClaim(tradeoff=0.5)
    with pytest.raises(InvalidParameterError, match="delta must lie in \\[0, 1\\)"):
        PrivacyClaim(epsilon=1, delta=1.0)
    with pytest.raises(InvalidParameterError, match="epsilon must be >= 0"):
        PrivacyClaim(epsilon=-0.1)
    with pytest.raises(InvalidParameterError, match="finite"):
        PrivacyClaim(rho=math.inf)
    with pytest.raises(InvalidParameterError, match="delta qualifies an epsilon claim"):
        PrivacyClaim(rho=1, delta=1e-6)


def test_summary_wording_for_both_outcomes():
    claim = PrivacyClaim(epsilon=1.0)
    kept = AuditResult(claim, 0.9734, 0.2, 0.7, 0.95, 100000, "x", 1.0, False)
    assert kept.summary() == "eps_lb = 0.973 (95% conf., 100000 samples/side) <= claimed eps 1: not refuted at 100000 samples"
    assert kept.verdict() == Verdict.INCONCLUSIVE  # never "confirmed": an audit only bounds from below
    broken = AuditResult(claim, 1.0004, 0.6, 1.0, 0.95, 5000, "x", 1.0, True)
    assert broken.summary() == "eps_lb = 1.0004 (95% conf., 5000 samples/side) > claimed eps 1: REFUTED"
    assert broken.verdict() == Verdict.REFUTED
    both = AuditResult(PrivacyClaim(epsilon=2.0, rho=0.5), 1.5, 0.61, 1.2, 0.9, 100, "x", 0.0, True)
    assert both.summary() == "eps_lb = 1.5 (90% conf., 100 samples/side) <= claimed eps 2; rho_lb = 0.61 > claimed rho 0.5: REFUTED"
    assert both.evidence().values["gdp_rho_estimate (model-based)"] == pytest.approx(0.72)


# ------------------------------------------------------------------------------------------------ correct mechanisms


@pytest.mark.parametrize("epsilon", [0.3, 2.0])
@pytest.mark.parametrize("sensitivity", [0.5, 3.0])
def test_correct_laplace_is_not_refuted_and_the_bound_is_tight(epsilon, sensitivity):
    samples = 200_000
    result = audit(laplace(epsilon, sensitivity), (np.array([0.0]), np.array([sensitivity])), PrivacyClaim(epsilon=epsilon), samples=samples, rng=101)
    assert not result.refuted
    assert result.epsilon_lower_bound <= epsilon
    expected, sd = expected_laplace_bound(epsilon, samples)  # eps=2: 1.968 (sd 0.0126); eps=0.3: 0.283 (sd 0.0061)
    assert result.epsilon_lower_bound >= expected - 5 * sd  # eps=2: >= 1.905 = 0.95 eps; eps=0.3: >= 0.253
    assert result.epsilon_lower_bound >= 0.9 * epsilon if epsilon == 2.0 else True
    assert result.details["tests"] == 1 and result.details["samples_second_part"] == samples // 2
    assert "not refuted at 200000 samples" in result.summary()


def test_laplace_audit_with_the_log_likelihood_ratio_score_matches_the_identity_score():
    # the LLR of Laplace(1) vs Laplace(0) is clip(x, 0, 1) * 2 - 1 (monotone in x): same events, same bound
    sampler = laplace(1.0)
    pair = (np.array([0.0]), np.array([1.0]))
    plain = audit(sampler, pair, PrivacyClaim(epsilon=1.0), samples=100_000, rng=4)
    llr = audit(sampler, pair, PrivacyClaim(epsilon=1.0), samples=100_000, rng=4, score=laplace_log_likelihood_ratio([0.0], [1.0], 1.0))
    assert llr.epsilon_lower_bound == pytest.approx(plain.epsilon_lower_bound, abs=0.02)
    assert not llr.refuted and llr.details["per_pair"][0]["score"]["score"] == "callable"


def test_a_score_reading_low_order_bits_finds_the_floating_point_side_channel_of_laplace():
    # Mironov 2012: the float output q + L keeps rounding traces of q. The literal LLR |x| - |x - 1|
    # equals -1 exactly for every x <= 0 computed as 1 + L, but rounds below -1 for ~7% of x <= 0 computed
    # as 0 + L: the event {score < -1} has probability ~0.034 under d0 and 0 under d1, so the FLOAT
    # implementation is not eps-DP for any eps -- a valid refutation (the mathematical mechanism is fine,
    # see the monotone LLR above, which cannot see it).
    def literal_llr(x):
        return np.abs(x - 0.0) - np.abs(x - 1.0)

    result = audit(laplace(1.0), (np.array([0.0]), np.array([1.0])), PrivacyClaim(epsilon=1.0), samples=100_000, rng=4, score=literal_llr)
    assert result.refuted and result.epsilon_lower_bound > 5.0
    event = result.details["events"][0]
    assert event["tail"] == "lower" and event["threshold"] == -1.0 and event["k_denominator"] == 0


@pytest.mark.parametrize("rho, sensitivity", [(0.125, 0.5), (0.5, 3.0), (2.0, 0.5)])
def test_correct_gaussian_with_rho_claim_is_not_refuted_and_gdp_estimate_is_close(rho, sensitivity):
    sampler = make_sampler("gaussian_sum", rho=rho, sensitivity=sensitivity)
    result = audit(sampler, (np.array([0.0]), np.array([sensitivity])), PrivacyClaim(rho=rho), samples=200_000, rng=202)
    assert not result.refuted and result.rho_lower_bound <= rho
    # power of the Bernoulli-Renyi bound at 1e5 test samples: rho_lb ~ 0.68-0.7 rho here (measured)
    assert result.rho_lower_bound >= 0.5 * rho
    mu = math.sqrt(2 * rho)  # Bun & Steinke Prop. 1.6: rho = mu^2 / 2
    sd = math.sqrt((2 + mu**2 / 4) / 100_000)  # delta-method sd of the plug-in mu at n = 1e5 per side
    assert abs(result.gdp_mu_estimate - mu) < 5 * sd
    assert result.gdp_rho_estimate == pytest.approx(rho, rel=0.05)


def test_gaussian_with_exact_eps_delta_curve_tight_claim_kept_smaller_eps_refuted():
    # mu = 1 Gaussian pair: (1.5, delta(1.5))-DP exactly (Dong, Roth & Su 2019 Cor. 2.13), attained by
    # the event {x >= eps/mu + mu/2}; a claim of eps = 1 at that delta is false (delta(1) = 0.127 > delta(1.5))
    delta = float(gaussian_dp_delta(1.5, 1.0))
    sampler = make_sampler("gaussian_sum", sigma=1.0)
    pair = (np.array([0.0]), np.array([1.0]))
    tight = audit(sampler, pair, PrivacyClaim(epsilon=1.5, delta=delta), samples=200_000, rng=303)
    assert not tight.refuted and 1.3 < tight.epsilon_lower_bound <= 1.5
    false_claim = audit(sampler, pair, PrivacyClaim(epsilon=1.0, delta=delta), samples=200_000, rng=304)
    assert false_claim.refuted and false_claim.epsilon_lower_bound > 1.3
    assert "(delta 0.0566962)" in false_claim.summary()


# ------------------------------------------------------------------------------------------------ broken mechanisms


@pytest.mark.parametrize(
    "name, parameters, pair, true_epsilon",
    [
        ("laplace_scale_epsilon", {"epsilon": 0.5}, ([0.0], [1.0]), 2.0),  # scale eps instead of 1/eps: true eps = 1/eps = 2
        ("laplace_half_sensitivity", {"epsilon": 0.3, "sensitivity": 3.0}, ([0.0], [3.0]), 0.6),
        ("laplace_half_sensitivity", {"epsilon": 2.0, "sensitivity": 0.5}, ([0.0], [0.5]), 4.0),
    ],
)
def test_broken_laplace_mechanisms_are_refuted_at_their_claimed_epsilon(name, parameters, pair, true_epsilon):
    result = audit(make_sampler(name, **parameters), tuple(map(np.array, pair)), PrivacyClaim(epsilon=parameters["epsilon"]), samples=100_000, rng=7)
    assert result.refuted and "REFUTED" in result.summary()
    expected, sd = expected_laplace_bound(true_epsilon, 100_000)
    assert expected - 5 * sd <= result.epsilon_lower_bound <= true_epsilon


def test_zcdp_claim_with_sigma_halved_is_refuted_via_rho_lower_bound():
    rho = 0.5  # claimed; sigma halved -> true rho = 2 (mu = 2)
    sampler = make_sampler("gaussian_half_sensitivity", rho=rho, sensitivity=3.0)
    result = audit(sampler, (np.array([0.0]), np.array([3.0])), PrivacyClaim(rho=rho), samples=200_000, rng=505)
    assert result.refuted and result.details["refuted_by"] == ["rho"]
    assert 1.0 < result.rho_lower_bound <= 2.0  # measured 1.37 (the Bernoulli bound captures ~ 0.7 of rho)
    assert abs(result.gdp_mu_estimate - 2.0) < 5 * math.sqrt((2 + 1) / 100_000)
    assert result.gdp_rho_estimate == pytest.approx(2.0, rel=0.05)
    assert "rho_lb = " in result.summary() and result.summary().endswith("REFUTED")


def test_vector_gaussian_transcripts_lda_logistic_and_likelihood_ratio_agree():
    k, rho, sensitivity = 5, 0.5, 3.0
    d0, d1 = np.zeros(k), np.full(k, sensitivity / math.sqrt(k))  # l2 distance = sensitivity
    sigma = sensitivity / math.sqrt(2 * rho)
    correct = make_sampler("gaussian_sum", rho=rho, sensitivity=sensitivity)
    broken = make_sampler("gaussian_half_sensitivity", rho=rho, sensitivity=sensitivity)
    claim = PrivacyClaim(rho=rho)
    for score in (None, "logistic", gaussian_log_likelihood_ratio(d0, d1, sigma)):
        kept = audit(correct, (d0, d1), claim, samples=100_000, rng=606, score=score)
        assert not kept.refuted and 0.25 < kept.rho_lower_bound <= rho
        assert abs(kept.gdp_mu_estimate - 1.0) < 0.03  # sd ~ 0.005 at 5e4 per side
        flagged = audit(broken, (d0, d1), claim, samples=100_000, rng=607, score=score)
        assert flagged.refuted and flagged.rho_lower_bound > 1.0
    assert kept.details["per_pair"][0]["score"]["score"] == "callable"
    auto = audit(correct, (d0, d1), claim, samples=20_000, rng=1)
    assert auto.details["per_pair"][0]["score"]["score"] == "lda"  # continuous vectors -> LDA
    assert auto.details["per_pair"][0]["fit_samples"] == 5_000


def test_lda_with_a_known_mean_difference_fits_only_the_scatter_and_sees_a_shift_the_fitted_one_blurs():
    """LdaScore(difference): w = S^-1 difference, S fitted on the fit part; in 400 dimensions with 2,000 rows to fit,
    the fitted difference's noise (norm about 0.9) swamps a shift of norm 0.5, the known one does not. Gaussian
    shift of mu = 0.5 claimed as 0.25-GDP (rho = mu^2 / 2): refuted with the known difference, not with the fitted."""
    from dpverify.theory.audit.scores import LdaScore

    k, mu = 400, 0.5
    shift = np.full(k, mu / math.sqrt(k))

    def sample(mean, n, rng):
        return rng.standard_normal((n, k)) + mean
    claim = PrivacyClaim(rho=0.25 ** 2 / 2)
    known = audit(sample, (np.zeros(k), shift), claim, samples=8_000, rng=11, score=LdaScore(shift))
    fitted = audit(sample, (np.zeros(k), shift), claim, samples=8_000, rng=11, score="lda")
    assert known.refuted and not fitted.refuted
    assert known.details["per_pair"][0]["score"]["score"] == "lda, known mean difference"
    scorer = LdaScore(shift)
    rows = np.random.default_rng(0).standard_normal((4_000, k))
    scorer.partial_fit(rows[:2_000], rows[2_000:])
    scorer.finalize()
    covariance = np.cov(np.concatenate([rows[:2_000] - rows[:2_000].mean(0), rows[2_000:] - rows[2_000:].mean(0)]).T,
                        ddof=2)
    np.testing.assert_allclose(scorer.weights, np.linalg.solve(covariance + 1e-6 * np.mean(np.diag(covariance))
                                                               * np.eye(k), shift), rtol=1e-6)
    with pytest.raises(InvalidParameterError, match="known mean difference has 3 entries; the observations have 400"):
        audit(sample, (np.zeros(k), shift), claim, samples=8_000, rng=11, score=LdaScore(np.ones(3)))


# ------------------------------------------------------------------------------------------------ coverage


def test_coverage_false_refutations_stay_below_the_nominal_rate():
    # 200 independent audits per mechanism at confidence 0.9 (nominal error 10%) with modest samples.
    # X = #runs with eps_lb > true eps ~ Bin(200, p), p <= 0.1 if the audit is valid. We assert
    # X <= binom.ppf(0.999, 200, 0.1) = 35: if p were exactly 0.1, this assertion would fail with
    # probability <= 0.1% (its false-alarm rate); the observed counts are far lower (CP is conservative).
    limit = stats.binom.ppf(0.999, 200, 0.1)
    epsilon = 0.7
    for sampler, pair, samples in ((randomized_response(epsilon), (0, 1), 2_000), (laplace(epsilon), (0.0, 1.0), 1_000)):
        exceed = sum(
            audit(sampler, pair, PrivacyClaim(epsilon=epsilon), samples=samples, confidence=0.9, rng=seed).epsilon_lower_bound > epsilon
            for seed in range(200)
        )
        assert exceed <= limit
        assert exceed <= 20  # below the nominal rate: 10% of 200


# ------------------------------------------------------------------------------------------------ futility stop


def test_futility_stops_a_mechanism_well_inside_its_claim_at_the_first_look():
    # Laplace at eps 0.5 audited against a claim of 1: the second part's 50,000 samples stop after 1/8 of them
    result = audit(laplace(0.5), (0.0, 1.0), PrivacyClaim(epsilon=1.0), samples=100_000, rng=1, futility=0.01)
    (pair,) = result.details["futility"]["per_pair"]
    assert pair["looks"] == [6_250, 12_500, 25_000] and pair["stopped_at"] == 6_250
    assert result.samples_per_side == 56_250 and not result.refuted
    assert result.epsilon_lower_bound < pair["upper_bounds"]["eps"] <= 1.0
    assert "stopped for futility" in result.summary() and "at 99%" in result.summary()


def test_futility_leaves_an_audit_it_does_not_stop_unchanged():
    # Laplace at eps 1 against a claim of 0.5: no look can rule out a refutation, so the test runs to the end on the
    # same draws (the stream does not depend on the chunking) and every number is that of the audit without it
    plain, stopping = (audit(laplace(1.0), (0.0, 1.0), PrivacyClaim(epsilon=0.5), samples=40_000, rng=2, futility=beta)
                       for beta in (None, 0.01))
    assert stopping.details["futility"]["stopped"] is False and stopping.samples_per_side == 40_000
    assert (stopping.epsilon_lower_bound, stopping.threshold, stopping.refuted) == \
           (plain.epsilon_lower_bound, plain.threshold, plain.refuted) and plain.refuted


def test_futility_loses_at_most_beta_of_the_power_measured_over_seeds():
    # Randomized response at eps 1 against a claim of 0.9, 4,000 samples per side: the audit refutes about half
    # the time. Paired by seed, a futility stop can only remove refutations (a stop never refutes). Each removal
    # needs the violating event to look harmless at a look: probability <= beta = 0.01, so the removals over
    # 200 seeds are at most Bin(200, 0.01); this fails with probability <= 0.1% (binom.ppf(0.999) = 7). A rule
    # with point estimates in place of the upper bounds removes 10 here; this rule removes none.
    sampler, claim = randomized_response(1.0), PrivacyClaim(epsilon=0.9)
    refuted, removed = 0, 0
    for seed in range(200):
        plain = audit(sampler, (0, 1), claim, samples=4_000, rng=seed).refuted
        stopping = audit(sampler, (0, 1), claim, samples=4_000, rng=seed, futility=0.01).refuted
        assert plain or not stopping
        refuted, removed = refuted + plain, removed + (plain and not stopping)
    assert 60 <= refuted <= 140 and removed <= stats.binom.ppf(0.999, 200, 0.01)


# ------------------------------------------------------------------------------------------------ several pairs, streaming


def test_several_pairs_bonferroni_and_strongest_pair_reported():
    sampler = laplace(1.0)
    pairs = [(np.array([0.0]), np.array([0.0])), (np.array([0.0]), np.array([1.0]))]
    result = audit(sampler, pairs, PrivacyClaim(epsilon=1.0), samples=50_000, rng=9)
    assert result.details["tests"] == 2 and result.details["interval_confidence"] == pytest.approx(1 - 0.05 / 4)
    assert result.direction.startswith("pair 1: ")
    assert result.details["events"][0]["epsilon_lower_bound"] < 0.1  # identical datasets: nothing to find
    from_generator = audit(sampler, (pair for pair in pairs), PrivacyClaim(epsilon=1.0), samples=50_000, rng=9, events_per_pair=4)
    assert from_generator.details["tests"] == 8 and not from_generator.refuted


def test_result_does_not_depend_on_the_chunk_size():
    # numpy's Laplace stream is the same whatever the chunking; with samples small enough that the pilot
    # holds the whole search part the audit is bit-for-bit identical
    sampler = laplace(1.0)
    results = [audit(sampler, (0.0, 1.0), PrivacyClaim(epsilon=1.0), samples=20_000, rng=3, chunk_size=size) for size in (777, 100_000)]
    assert results[0].epsilon_lower_bound == results[1].epsilon_lower_bound
    assert results[0].threshold == results[1].threshold


def test_discrete_vector_outputs_use_the_categorical_score():
    def two_bits(dataset, n, rng):  # randomized response twice, eps = 0.5 each -> eps = 1 on the pair of bits
        high = math.exp(0.5) / (1 + math.exp(0.5))
        return (rng.random((n, 2)) < (high if dataset == 1 else 1 - high)).astype(float)

    result = audit(two_bits, (0, 1), PrivacyClaim(epsilon=1.0), samples=100_000, rng=12)
    assert result.details["per_pair"][0]["score"] == {"score": "categorical", "distinct_outputs": 4}
    assert not result.refuted and result.epsilon_lower_bound > 0.9  # event {(1, 1)}: ratio exactly e


# ------------------------------------------------------------------------------------------------ sensitivity probe


def test_sensitivity_probe_measures_the_distance_and_finds_the_witness():
    def pre_noise(dataset):  # (replicas, agents, d) pre-noise gradients; agent 2 of replica 1 differs
        return np.asarray(dataset, dtype=float)

    d0 = np.zeros((2, 3, 2))
    d1 = d0.copy()
    d1[1, 2] = [3.0, 4.0]
    result = sensitivity_probe(pre_noise, (d0, d1), 5.0, norm="l2")
    assert result.max_distance == 5.0 and result.witness_index == (0, 1, 2) and not result.refuted
    assert sensitivity_probe(pre_noise, (d0, d1), 6.9, norm="l1").refuted
    assert sensitivity_probe(pre_noise, [(d0, d0), (d0, d1)], 4.0, norm="linf").witness_index == (1, 1, 2)
    assert "REFUTED" in sensitivity_probe(pre_noise, (d0, d1), 4.99).summary()
    with pytest.raises(InvalidDataError, match="same shape"):
        sensitivity_probe(pre_noise, (d0, d1[:1]), 1.0)
    with pytest.raises(InvalidParameterError, match="norm must be one of"):
        sensitivity_probe(pre_noise, (d0, d1), 1.0, norm="l3")


# ------------------------------------------------------------------------------------------------ bad inputs


def _nan_sampler(dataset, n, rng):
    values = rng.standard_normal(n)
    values[-1] = np.nan
    return values


@pytest.mark.parametrize(
    "sampler, error, message",
    [
        (_nan_sampler, InvalidDataError, "1 NaN/inf value"),
        (lambda d, n, rng: rng.standard_normal(n + 1), InvalidDataError, r"must return an array of shape \(\d+,\) or \(\d+, k\)"),
        (lambda d, n, rng: rng.standard_normal((n, 2, 2)), InvalidDataError, "must return an array of shape"),
        (lambda d, n, rng: rng.standard_normal((n, 2)) if d == 0 else rng.standard_normal((n, 3)), InvalidDataError, "same shape"),
        (lambda d, n, rng: ["a"] * n, InvalidDataError, "numeric array"),
    ],
)
def test_bad_samplers_raise_specific_errors(sampler, error, message):
    with pytest.raises(error, match=message):
        audit(sampler, (0, 1), PrivacyClaim(epsilon=1.0), samples=1_000, rng=0)


def test_bad_parameters_raise_specific_errors():
    sampler, claim = laplace(1.0), PrivacyClaim(epsilon=1.0)
    cases = [
        ({"samples": 30}, InvalidParameterError, "too few"),
        ({"samples": 1_000, "split": 0.01}, InvalidParameterError, "too few"),
        ({"samples": 1_000, "confidence": 1.0}, InvalidParameterError, r"open interval \(0, 1\)"),
        ({"samples": 1_000, "confidence": 0.0}, InvalidParameterError, r"open interval \(0, 1\)"),
        ({"samples": 1_000, "split": 1.0}, InvalidParameterError, "split"),
        ({"samples": 1_000, "chunk_size": 0}, InvalidParameterError, "chunk_size"),
        ({"samples": 1_000.5}, InvalidParameterError, "samples must be a positive integer"),
        ({"samples": 1_000, "events_per_pair": 5}, InvalidParameterError, "events_per_pair"),
        ({"samples": 1_000, "futility": 1.0}, InvalidParameterError, "futility"),
        ({"samples": 1_000, "score": "forest"}, InvalidParameterError, "score must be"),
        ({"samples": 1_000, "rng": "seed"}, InvalidParameterError, "rng must be"),
        ({"samples": 1_000, "score": lambda x: x[:-1]}, InvalidDataError, r"score\(observations\) must return shape"),
        ({"samples": 1_000, "score": lambda x: x * np.nan}, InvalidDataError, "NaN/inf"),
    ]
    for keywords, error, message in cases:
        keywords = {"rng": 0, **keywords}
        with pytest.raises(error, match=message):
            audit(sampler, (0.0, 1.0), claim, **keywords)
    with pytest.raises(InvalidParameterError, match="PrivacyClaim"):
        audit(sampler, (0.0, 1.0), {"epsilon": 1.0}, samples=1_000, rng=0)
    with pytest.raises(InvalidParameterError, match="at least one pair"):
        audit(sampler, [], claim, samples=1_000, rng=0)
    with pytest.raises(InvalidParameterError, match=r"neighbours\[0\] must be a pair"):
        audit(sampler, [(0.0, 1.0, 2.0)], claim, samples=1_000, rng=0)
    with pytest.raises(InvalidParameterError, match="identity score needs scalar"):
        audit(lambda d, n, rng: rng.standard_normal((n, 3)), (0, 1), claim, samples=1_000, rng=0, score="identity")


def test_non_neighbouring_pair_is_rejected_before_sampling():
    calls = []

    def sampler(dataset, n, rng):
        calls.append(n)
        return rng.standard_normal(n)

    def adjacent(d0, d1):
        return abs(d1 - d0) <= 1.0

    with pytest.raises(InvalidDataError, match="pair 1 is not neighbouring"):
        audit(sampler, [(0.0, 1.0), (0.0, 2.5)], PrivacyClaim(epsilon=1.0), samples=1_000, rng=0, adjacency=adjacent)
    assert calls == []
    assert not audit(sampler, (0.0, 1.0), PrivacyClaim(epsilon=1.0), samples=1_000, rng=0, adjacency=adjacent).refuted


def test_samplers_from_reference_module_are_plain_functions_of_the_documented_signature():
    rng = np.random.default_rng(0)
    assert laplace_count([0.0], 4, rng, 1.0).shape == (4,)
    assert gaussian_sum([0.0, 1.0], 4, rng, rho=0.5).shape == (4, 2)
    assert gaussian_half_sensitivity([0.0], 3, rng, rho=0.5).shape == (3,)
