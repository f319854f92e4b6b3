import numpy as np
import pytest
from scipy import stats

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.noise import (
    PrivacyLedger,
    Release,
    gaussian_mechanism,
    gaussian_releases,
    laplace_mechanism,
    laplace_plan,
    laplace_release,
)
from dpverify.algorithms.core.mixing import agent_major

Z_999 = stats.norm.ppf(0.9995)  # two-sided 99.9% normal quantile


def test_gaussian_mechanism_noise_variance_matches_sigma_squared():
    # Statistical test, fixed seed: sum(xi^2)/sigma^2 ~ chi2(R d) per agent; two-sided 99.9% interval
    # per agent (3 agents: false-alarm rate 0.3% for an arbitrary seed).
    replicas, dim = 200, 50
    sigma = np.array([0.5, 1.0, 2.0])
    values = np.zeros((replicas, 3, dim))
    noise = gaussian_mechanism(values, 1.0, sigma, np.random.default_rng(11))
    samples = replicas * dim
    low, high = stats.chi2.ppf([0.0005, 0.9995], samples)
    for agent in range(3):
        statistic = np.sum(noise[:, agent] ** 2) / sigma[agent] ** 2
        assert low < statistic < high
        assert abs(noise[:, agent].mean()) < Z_999 * sigma[agent] / np.sqrt(samples)


def test_gaussian_mechanism_adds_noise_to_the_values_and_is_reproducible():
    values = np.arange(24, dtype=float).reshape(2, 3, 4)
    first = gaussian_mechanism(values, 1.0, 0.1, np.random.default_rng(5))
    second = gaussian_mechanism(values, 1.0, 0.1, np.random.default_rng(5))
    np.testing.assert_array_equal(first, second)
    expected = values + 0.1 * np.random.default_rng(5).standard_normal(values.shape)
    np.testing.assert_allclose(first, expected, rtol=0, atol=1e-15)


def test_gaussian_release_records_zcdp_of_bun_steinke_prop_1_6():
    ledger = PrivacyLedger()
    sensitivity = np.array([1.0, 2.0, 0.5])
    sigma = np.array([2.0, 1.0, 0.25])
    gaussian_mechanism(np.zeros((1, 3, 2)), sensitivity, sigma, np.random.default_rng(0), ledger=ledger,
                       iteration=4, label="unit")
    (release,) = ledger.releases
    assert (release.iteration, release.mechanism, release.label) == (4, "gaussian", "unit")
    np.testing.assert_allclose(release.zcdp, [1 / 8, 2.0, 2.0])  # Delta^2 / (2 sigma^2)
    assert release.epsilon is None
    np.testing.assert_array_equal(release.scale, sigma)


def test_ledger_totals_equal_closed_forms():
    # T releases with Delta = 1 and sigma_n^2 = 1/(2 phi_n), phi_n = 0.01 * 1.1^(n-1):
    # total zCDP = sum phi_n = 0.01 (1.1^T - 1)/0.1 (Bun-Steinke Lemma 1.7).
    ledger = PrivacyLedger()
    rng = np.random.default_rng(0)
    horizon = 20
    for n in range(1, horizon + 1):
        phi = 0.01 * 1.1 ** (n - 1)
        gaussian_mechanism(np.zeros((1, 2, 1)), 1.0, np.sqrt(1 / (2 * phi)), rng, ledger=ledger, iteration=n,
                           epsilon=0.05, delta=1e-4)
    np.testing.assert_allclose(ledger.total_zcdp(), 0.01 * (1.1**horizon - 1) / 0.1, rtol=1e-12)
    np.testing.assert_allclose(ledger.total_epsilon(), 20 * 0.05, rtol=1e-12)
    np.testing.assert_allclose(ledger.total_delta(), 20 * 1e-4, rtol=1e-12)
    frame = ledger.to_frame()
    assert len(frame) == horizon * 2
    np.testing.assert_allclose(frame.groupby("agent")["zcdp"].sum(), ledger.total_zcdp(), rtol=1e-12)
    assert list(frame.columns[:8]) == ["iteration", "agent", "mechanism", "sensitivity", "scale", "zcdp", "epsilon", "delta"]


def test_zero_sigma_is_refused_unless_data_independent_or_explicitly_non_private():
    values = np.ones((2, 2, 3))
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidParameterError, match="sigma must be > 0 where sensitivity > 0"):
        gaussian_mechanism(values, 1.0, 0.0, rng)
    ledger = PrivacyLedger()
    released = gaussian_mechanism(values, 0.0, 0.0, rng, ledger=ledger)
    np.testing.assert_array_equal(released, values)
    released = gaussian_mechanism(values, 1.0, 0.0, rng, ledger=ledger, allow_non_private=True)
    np.testing.assert_array_equal(released, values)
    data_independent, non_private = ledger.releases
    np.testing.assert_array_equal(data_independent.zcdp, [0.0, 0.0])
    np.testing.assert_array_equal(data_independent.epsilon, [0.0, 0.0])
    np.testing.assert_array_equal(non_private.zcdp, [np.inf, np.inf])
    np.testing.assert_array_equal(ledger.total_epsilon(), [np.inf, np.inf])


@pytest.mark.parametrize(
    "values, sigma, error",
    [
        (np.zeros((2, 3)), 1.0, InvalidDataError),
        (np.full((1, 2, 2), np.nan), 1.0, InvalidDataError),
        (np.zeros((1, 2, 2)), [1.0, 1.0, 1.0], InvalidParameterError),
        (np.zeros((1, 2, 2)), -1.0, InvalidParameterError),
        (np.zeros((1, 2, 2)), np.inf, InvalidParameterError),
    ],
)
def test_gaussian_mechanism_rejects_bad_inputs(values, sigma, error):
    with pytest.raises(error):
        gaussian_mechanism(values, 1.0, sigma, np.random.default_rng(0))


def test_laplace_mechanism_scale_and_accounting():
    # E|xi| = b and Var|xi| = b^2 for Laplace(0, b): z-test on the mean absolute value at 99.9%.
    replicas, dim = 400, 25
    scale = np.array([0.5, 2.0])
    ledger = PrivacyLedger()
    noise = laplace_mechanism(np.zeros((replicas, 2, dim)), [1.0, 4.0], scale, np.random.default_rng(2),
                              ledger=ledger, iteration=1)
    samples = replicas * dim
    for agent in range(2):
        mean_abs = np.abs(noise[:, agent]).mean()
        assert abs(mean_abs - scale[agent]) < Z_999 * scale[agent] / np.sqrt(samples)
    (release,) = ledger.releases
    np.testing.assert_allclose(release.epsilon, [2.0, 2.0])  # Delta_1 / b
    np.testing.assert_allclose(release.zcdp, [2.0, 2.0])  # eps^2/2, Bun-Steinke Prop. 1.4
    with pytest.raises(InvalidParameterError):
        laplace_mechanism(np.zeros((1, 2, 1)), 1.0, 0.0, np.random.default_rng(0))


def test_laplace_release_in_blocks_of_replicas_draws_what_one_mechanism_call_draws():
    values = agent_major(np.random.default_rng(1).standard_normal((7, 3, 4)))   # blocks are strided views of it
    ledger, planned = PrivacyLedger(), PrivacyLedger()
    whole = laplace_mechanism(values, [1.0, 2.0, 3.0], 0.5, np.random.default_rng(2), ledger=ledger, iteration=4,
                              label="q")
    release = laplace_plan([1.0, 2.0, 3.0], 0.5, 3, 4, "q")
    planned.record(release)
    rng = np.random.default_rng(2)
    blocks = np.concatenate([laplace_release(values[s], release, rng) for s in (slice(0, 3), slice(3, 4), slice(4, 7))])
    np.testing.assert_array_equal(blocks, whole)
    (expected,), (got,) = ledger.releases, planned.releases
    assert (got.iteration, got.mechanism, got.label) == (expected.iteration, expected.mechanism, expected.label)
    for field in ("sensitivity", "scale", "zcdp", "epsilon"):
        np.testing.assert_array_equal(getattr(got, field), getattr(expected, field))
    np.testing.assert_array_equal(got.epsilon, [2.0, 4.0, 6.0])
    gaussian = gaussian_releases(np.ones((1, 3)), np.ones((1, 3)), [1], ["g"])[0]
    with pytest.raises(InvalidParameterError, match="laplace release planned for 3 agents"):
        laplace_release(values, gaussian, rng)
    with pytest.raises(InvalidParameterError, match="scale b must be > 0"):
        laplace_plan(1.0, 0.0, 3)


def test_ledger_refuses_releases_for_a_different_number_of_agents():
    ledger = PrivacyLedger()
    ledger.record(Release(1, "gaussian", np.ones(2), np.ones(2), np.ones(2), None, ""))
    with pytest.raises(InvalidDataError, match="3 agents"):
        ledger.record(Release(2, "gaussian", np.ones(3), np.ones(3), np.ones(3), None, ""))
    assert PrivacyLedger().total_zcdp().shape == (0,)
