"""Trade-off curves of theory/audit/tradeoff.py against closed forms from the literature, and the audit's
f-DP bound on mechanisms whose curve is known exactly."""

import numpy as np
import pytest
from scipy import special, stats

from dpverify.theory.audit import PrivacyClaim, audit
from dpverify.theory.audit.tradeoff import ComposedPureDP, GaussianDP, Tradeoff
from dpverify.theory.dpdo_nc.conformance import AUDIT_EPSILON, VERIFY_HORIZON

LEVELS = np.linspace(0.0, 1.0, 200_001)


def delta_of(curve: Tradeoff, epsilon: float) -> float:
    """The (eps, delta) point of an f-DP curve: sup_a max_power(a) - e^eps a (Dong, Roth & Su 2022, Prop. 2.12)."""
    return float(np.max(curve.max_power(LEVELS) - np.exp(epsilon) * LEVELS))


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 2.0])
def test_one_pure_release_is_the_eps_dp_curve(epsilon):
    levels = np.array([0.0, 1e-4, 0.01, 0.2, 0.5, 0.9, 1.0])
    expected = np.minimum(np.exp(epsilon) * levels, 1.0 - np.exp(-epsilon) * (1.0 - levels))
    assert np.allclose(ComposedPureDP(epsilon, 1).max_power(levels), expected, atol=1e-12)


@pytest.mark.parametrize("epsilon, releases", [(0.5, 5), (0.2, 12)])
def test_composed_pure_releases_give_kairouz_oh_viswanath_deltas(epsilon, releases):
    """Optimal composition (Kairouz, Oh & Viswanath 2015, Thm 3.3): at eps_i = (k - 2i) eps,
    delta_i = sum_{l < i} C(k, l) (e^{(k-l) eps} - e^{(k-2i+l) eps}) / (1 + e^eps)^k."""
    curve = ComposedPureDP(epsilon, releases)
    for i in range(1, releases // 2):
        ls = np.arange(i)
        delta = np.sum(special.comb(releases, ls) * (np.exp((releases - ls) * epsilon)
                                                     - np.exp((releases - 2 * i + ls) * epsilon))) / (1 + np.exp(epsilon)) ** releases
        assert delta_of(curve, (releases - 2 * i) * epsilon) == pytest.approx(delta, abs=2e-5)


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_the_gaussian_curve_gives_the_gdp_deltas(mu):
    """mu-GDP is (eps, Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2))-DP for every eps (Dong, Roth & Su, Cor. 2.13)."""
    for epsilon in (0.0, 0.5, 1.5):
        expected = stats.norm.cdf(-epsilon / mu + mu / 2) - np.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2)
        assert delta_of(GaussianDP(mu), epsilon) == pytest.approx(expected, abs=2e-5)


def test_the_closed_form_factor_agrees_with_the_bisection():
    low, high = np.array([0.3, 0.8, 0.99, 0.1]), np.array([0.1, 0.2, 0.5, 0.3])
    curve = GaussianDP(0.7)
    assert np.allclose(curve.factor_lower_bound(low, high), Tradeoff.factor_lower_bound(curve, low, high), rtol=1e-9)
    assert curve.factor_lower_bound(0.1, 0.3) == 0.0               # no more power than the level: no information


def gaussian_pair(mu):
    def sample(dataset, n, rng):
        return rng.normal(mu * dataset, 1.0, size=n)
    return sample


def test_the_audit_refutes_twice_the_gaussian_mechanism_and_spares_the_exact_one():
    """Fixed seed, 99.75%: a 1.0-GDP mechanism audited against 0.5-GDP is refuted with a factor between 1 and 2
    (the bound is a lower bound); the 0.5-GDP mechanism itself is not (the bound is valid at 99.75%)."""
    claim = PrivacyClaim(tradeoff=GaussianDP(0.5))
    doubled = audit(gaussian_pair(1.0), (0, 1), claim, samples=20_000, confidence=0.9975, rng=3)
    assert doubled.refuted and 1.0 < doubled.tradeoff_factor_lower_bound <= 2.0, doubled.summary()
    exact = audit(gaussian_pair(0.5), (0, 1), claim, samples=20_000, confidence=0.9975, rng=3)
    assert not exact.refuted and exact.tradeoff_factor_lower_bound <= 1.0, exact.summary()


def test_gaussian_noise_of_the_laplace_variance_stays_inside_composed_pure_dp_down_to_level_1e_8():
    """docs/verify.md: why no audit refutes dpdo-nc's Gaussian-for-Laplace bug. T releases of eps-DP Laplace noise,
    replaced by Gaussian noise of the same variance, are at most sqrt(T eps^2 / 2)-GDP; its most powerful test is
    weaker than the composed claim at every level from 1e-8 to 0.5, and stronger below (Gaussian noise is not pure DP)."""
    claim = ComposedPureDP(AUDIT_EPSILON, VERIFY_HORIZON)
    gaussian = GaussianDP(np.sqrt(VERIFY_HORIZON * AUDIT_EPSILON**2 / 2.0))
    levels = np.logspace(-8, np.log10(0.5), 401)
    assert np.all(gaussian.max_power(levels) < claim.max_power(levels))
    tiny = np.array([1e-40])
    assert gaussian.max_power(tiny) > claim.max_power(tiny)
