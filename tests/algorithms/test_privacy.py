"""dpverify.algorithms.core.privacy: closed forms, validators, and cross-checks against dp_accounting (test-only).

dp_accounting 0.6 is independent of dpverify; theory/ never imports it. Its RdpAccountant evaluates
eps = r + log1p(-1/a) - log(delta a)/(a - 1) over a finite order list (compute_epsilon, Canonne,
Kamath & Steinke 2020 Prop. 12); its PLDAccountant discretizes the privacy-loss distribution.
"""

import ast
import math
import pathlib

import dp_accounting
import numpy as np
import pytest
import sympy as sp
from dp_accounting import pld, rdp
from dp_accounting.pld import privacy_loss_mechanism
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.algorithms.core import privacy as acc
from dpverify.algorithms.core.errors import InvalidParameterError

NOISE_MULTIPLIERS = (0.8, 1.5, 3.0)


# ------------------------------------------------------------------------------------------------
# closed forms


def test_gaussian_zcdp_is_delta_squared_over_two_sigma_squared():
    assert acc.gaussian_zcdp(1.0, 2.0) == 0.125
    np.testing.assert_allclose(acc.gaussian_zcdp([1.0, 2.0], [1.0, 4.0]), [0.5, 0.125])
    assert acc.gaussian_zcdp(0.0, 1.0) == 0.0


def test_compose_zcdp_adds():
    assert acc.compose_zcdp([0.1, 0.2, 0.3]) == pytest.approx(0.6, rel=1e-15)
    assert acc.compose_zcdp(np.full(200, 0.005)) == pytest.approx(1.0, rel=1e-14)


def test_zcdp_to_dp_bun_steinke_value():
    expected = 0.5 + 2 * math.sqrt(0.5 * math.log(1e5))
    assert acc.zcdp_to_dp(0.5, 1e-5) == pytest.approx(expected, rel=1e-15)
    assert acc.zcdp_to_dp(0.5, 1e-5) == pytest.approx(5.298525912188081, rel=1e-14)
    assert acc.zcdp_to_dp(0.0, 1e-5) == 0.0


def test_zcdp_from_dp_value_and_round_trip():
    log_inv = math.log(1e3)
    assert acc.zcdp_from_dp(1.0, 1e-3) == pytest.approx((math.sqrt(log_inv + 1) - math.sqrt(log_inv)) ** 2, rel=1e-13)
    rhos = np.array([1e-6, 1e-3, 0.37, 5.0, 300.0])
    np.testing.assert_allclose(acc.zcdp_from_dp(acc.zcdp_to_dp(rhos, 1e-5), 1e-5), rhos, rtol=1e-12)


def test_rdp_classic_minimum_is_bun_steinke_closed_form_symbolically():
    """min_alpha rho alpha + L/(alpha - 1): stationary at alpha* = 1 + sqrt(L/rho) (convex in alpha),
    value rho + 2 sqrt(rho L) = zcdp_to_dp."""
    rho, L, alpha = sp.symbols("rho L alpha", positive=True)
    objective = rho * alpha + L / (alpha - 1)
    stationary = [a for a in sp.solve(sp.diff(objective, alpha), alpha) if sp.simplify(a - 1).is_positive]
    assert len(stationary) == 1
    assert sp.simplify(stationary[0] - (1 + sp.sqrt(L / rho))) == 0
    assert sp.simplify(sp.diff(objective, alpha, 2).subs(alpha, stationary[0])).is_positive
    assert sp.simplify(objective.subs(alpha, stationary[0]) - (rho + 2 * sp.sqrt(rho * L))) == 0


@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.5, 3.0, 50.0])
@pytest.mark.parametrize("delta", [1e-8, 1e-5, 1e-2])
def test_rdp_classic_numeric_minimum_equals_bun_steinke(rho, delta):
    assert acc.zcdp_to_dp_rdp_classic(rho, delta) == pytest.approx(acc.zcdp_to_dp(rho, delta), rel=1e-9)


def test_tight_conversion_is_never_worse_than_bun_steinke():
    rhos = np.geomspace(1e-5, 1e3, 25)
    for delta in (1e-9, 1e-5, 1e-2):
        tight = acc.zcdp_to_dp_tight(rhos, delta)
        assert np.all(tight <= acc.zcdp_to_dp(rhos, delta) + 1e-12)
        assert np.all(np.diff(tight) >= 0)  # nondecreasing in rho, strictly where eps > 0
        assert np.all(np.diff(tight[tight > 0]) > 0)
    # eps = 0 exactly when the KL shortcut applies: TV <= sqrt(1 - exp(-rho)) < delta (Bretagnolle-Huber)
    assert acc.zcdp_to_dp_tight(1e-5, 1e-2) == 0.0 and acc.zcdp_to_dp_tight(1e-3, 1e-2) > 0.0


# ------------------------------------------------------------------------------------------------
# cross-checks against dp_accounting's RDP accountant


def _rdp_accountant(orders, event):
    accountant = rdp.RdpAccountant(orders=orders)
    accountant.compose(event)
    return accountant


def test_tight_conversion_equals_rdp_accountant_at_matching_orders():
    """Same orders, same RDP curve rho*alpha -> the same formula; agreement to floating-point error."""
    orders = rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS
    rho = sum(1 / (2 * z**2) for z in NOISE_MULTIPLIERS)
    event = dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(z) for z in NOISE_MULTIPLIERS])
    for delta in (1e-7, 1e-5, 1e-3):
        theirs = _rdp_accountant(orders, event).get_epsilon(delta)
        ours = acc.zcdp_to_dp_tight(rho, delta, orders=orders)
        assert abs(theirs - ours) <= 1e-10
    self_composed = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2.0), 50)
    assert _rdp_accountant(orders, self_composed).get_epsilon(1e-5) == pytest.approx(
        acc.zcdp_to_dp_tight(50 / 8, 1e-5, orders=orders), abs=1e-10)
    assert acc.zcdp_to_dp_tight(50 / 8, 1e-5, orders=orders) == pytest.approx(22.019852327713252, abs=1e-9)


def test_continuous_tight_conversion_vs_dense_rdp_accountant_grid():
    """Our continuous minimization vs RdpAccountant on 100001 orders in [1.02, 50] (spacing 4.9e-4).
    The grid minimum exceeds the continuous one by at most f''(alpha*) h^2/8 ~ 3e-8 here (f'' <= 1
    near alpha* ~ 4), so a 1e-6 agreement is an honest bound, and the continuous value must not
    exceed the grid value."""
    orders = np.linspace(1.02, 50.0, 100001)
    event = dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(z) for z in NOISE_MULTIPLIERS])
    accountant = _rdp_accountant(orders, event)
    rho = sum(1 / (2 * z**2) for z in NOISE_MULTIPLIERS)
    theirs, order = accountant.get_epsilon_and_optimal_order(1e-5)
    ours = acc.zcdp_to_dp_tight(rho, 1e-5)
    assert 1.02 < order < 50.0  # the optimum is interior to the grid
    assert ours <= theirs + 1e-12
    assert abs(ours - theirs) <= 1e-6
    assert ours == pytest.approx(7.321075368, abs=1e-8)


def test_rdp_to_dp_improved_matches_dp_accounting_compute_epsilon():
    orders = [1.5, 2.0, 3.5, 8.0, 32.0]
    values = [0.02, 0.05, 0.4, 1.3, 7.0]
    for delta in (1e-6, 1e-3):
        theirs = rdp.rdp_privacy_accountant.compute_epsilon(orders, values, delta)
        ours = acc.rdp_to_dp_improved(orders, values, delta)
        assert ours[0] == pytest.approx(theirs[0], abs=1e-12)
        assert ours[1] == theirs[1]


# ------------------------------------------------------------------------------------------------
# Gaussian DP vs dp_accounting's PLD accountant


def test_gaussian_dp_delta_matches_exact_gaussian_privacy_loss():
    """dp_accounting's GaussianPrivacyLoss evaluates the hockey-stick divergence analytically."""
    for sigma in (0.5, 1.25, 4.0):
        loss = privacy_loss_mechanism.GaussianPrivacyLoss(sigma)
        for epsilon in (0.0, 0.1, 1.0, 3.0):
            assert acc.gaussian_dp_delta(epsilon, 1 / sigma) == pytest.approx(loss.get_delta_for_epsilon(epsilon), abs=1e-13)


def test_gaussian_dp_delta_vs_pld_accountant_single_and_composed():
    """PLD with value_discretization_interval 1e-4 (pessimistic rounding, connect-the-dots). The
    discretization moves privacy losses by at most 1e-4, which changes delta(eps) by at most about
    1e-4 * e^eps * (density of the loss near eps) ~ 1e-5 in the worst case; observed differences are
    <= 1e-9. We assert 1e-6 and that the PLD value is not below ours (pessimistic estimate)."""
    single = pld.PLDAccountant(value_discretization_interval=1e-4)
    single.compose(dp_accounting.GaussianDpEvent(1.25))
    composed = pld.PLDAccountant(value_discretization_interval=1e-4)
    composed.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(z) for z in NOISE_MULTIPLIERS]))
    mu_composed = acc.gdp_mu_of_gaussians([1.0] * 3, NOISE_MULTIPLIERS)
    for accountant, mu in ((single, 0.8), (composed, mu_composed)):
        for epsilon in (0.1, 0.5, 1.0, 2.0, 4.0):
            theirs, ours = accountant.get_delta(epsilon), acc.gaussian_dp_delta(epsilon, mu)
            assert abs(theirs - ours) <= 1e-6
            assert theirs >= ours - 1e-12
        assert abs(accountant.get_epsilon(1e-5) - acc.gaussian_dp_epsilon(1e-5, mu)) <= 1e-6


def test_gdp_mu_and_epsilon_inversion():
    assert acc.gdp_mu_of_gaussians([1.0, 1.0], [1.0, 1.0]) == pytest.approx(math.sqrt(2), rel=1e-15)
    assert acc.gdp_mu_of_gaussians([2.0, 1.0, 1.0], [1.0, 2.0, 0.5]) == pytest.approx(math.sqrt(4 + 0.25 + 4), rel=1e-15)
    assert acc.gaussian_dp_delta(1.0, 1.0) == pytest.approx(0.12693673750664392, rel=1e-12)
    for mu in (0.3, 1.0, 4.0):
        for epsilon in (0.2, 1.0, 5.0):
            delta = acc.gaussian_dp_delta(epsilon, mu)
            if delta > 1e-300:
                assert acc.gaussian_dp_epsilon(delta, mu) == pytest.approx(epsilon, rel=1e-8)
    assert acc.gaussian_dp_epsilon(0.9, 0.5) == 0.0  # delta(0) = 2 Phi(1/4) - 1 = 0.197 < 0.9


# ------------------------------------------------------------------------------------------------
# dynamic zCDP of zCDP-NFL


def test_dynamic_total_sum_and_closed_form():
    assert acc.dynamic_zcdp_total(1.0, 0.5, 3) == 7.0  # 1 + 2 + 4
    assert acc.dynamic_zcdp_total(1.0, 0.5, 3, method="closed-form") == pytest.approx(7.0, rel=1e-15)
    for phi1, tau, horizon in ((1e-3, 0.99, 200), (0.02, 0.9, 50), (0.5, 0.3, 1)):
        assert acc.dynamic_zcdp_total(phi1, tau, horizon) == pytest.approx(
            acc.dynamic_zcdp_total(phi1, tau, horizon, method="closed-form"), rel=1e-12)
    np.testing.assert_allclose(acc.dynamic_zcdp_schedule(1.0, 0.5, 4), [1.0, 2.0, 4.0, 8.0])


def test_phi1_from_total_inverts_the_closed_form():
    for rho_total, tau, horizon in ((1.0, 0.99, 200), (0.05, 0.95, 10), (3.0, 0.5, 1)):
        phi1 = acc.phi1_from_total(rho_total, tau, horizon)
        assert acc.dynamic_zcdp_total(phi1, tau, horizon) == pytest.approx(rho_total, rel=1e-12)
    assert acc.phi1_from_total(7.0, 0.5, 3) == pytest.approx(1.0, rel=1e-15)


def test_corollary_epsilon_is_conversion_of_total():
    for phi1, tau, horizon, delta in ((1e-3, 0.99, 200, 1e-3), (0.01, 0.9, 20, 1e-5)):
        total = acc.dynamic_zcdp_total(phi1, tau, horizon)
        assert acc.corollary_epsilon(phi1, tau, horizon, delta) == pytest.approx(acc.zcdp_to_dp(total, delta), rel=1e-13)
    assert acc.corollary_epsilon(1.0, 0.5, 3, math.exp(-1)) == pytest.approx(7 + 2 * math.sqrt(7), rel=1e-14)


def test_classical_gaussian_sigma():
    assert acc.classical_gaussian_sigma(1.0, 0.5, 1e-5) == pytest.approx(2 * math.sqrt(2 * math.log(1.25e5)), rel=1e-15)
    with pytest.raises(InvalidParameterError, match=r"open interval \(0, 1\)"):
        acc.classical_gaussian_sigma(1.0, 1.0, 1e-5)


def test_theory_does_not_import_dp_accounting():
    tree = ast.parse(pathlib.Path(acc.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert "dp_accounting" not in imported


# ------------------------------------------------------------------------------------------------
# validators (hypothesis)

outside_unit = st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not (0 < x < 1))


@settings(deadline=None, max_examples=60)
@given(delta=outside_unit)
def test_any_delta_outside_unit_interval_raises(delta):
    for call in (lambda: acc.zcdp_to_dp(0.1, delta), lambda: acc.zcdp_to_dp_tight(0.1, delta),
                 lambda: acc.zcdp_from_dp(1.0, delta), lambda: acc.gaussian_dp_epsilon(delta, 1.0),
                 lambda: acc.corollary_epsilon(0.01, 0.9, 10, delta), lambda: acc.classical_gaussian_sigma(1.0, 0.5, delta),
                 lambda: acc.zcdp_to_dp_rdp_classic(0.1, delta)):
        with pytest.raises(InvalidParameterError, match="delta"):
            call()


@settings(deadline=None, max_examples=60)
@given(tau=outside_unit)
def test_any_tau_outside_unit_interval_raises(tau):
    for call in (lambda: acc.dynamic_zcdp_total(0.01, tau, 10), lambda: acc.phi1_from_total(1.0, tau, 10),
                 lambda: acc.corollary_epsilon(0.01, tau, 10, 1e-3)):
        with pytest.raises(InvalidParameterError, match="tau"):
            call()


@settings(deadline=None, max_examples=60)
@given(rho=st.floats(min_value=-1e6, max_value=-1e-300))
def test_negative_rho_raises(rho):
    with pytest.raises(InvalidParameterError, match=r"rho must be >= 0"):
        acc.zcdp_to_dp(rho, 1e-3)


@settings(deadline=None, max_examples=60)
@given(epsilon=st.floats(max_value=0.0, allow_nan=False, allow_infinity=False))
def test_nonpositive_epsilon_raises(epsilon):
    with pytest.raises(InvalidParameterError, match=r"epsilon must be > 0"):
        acc.zcdp_from_dp(epsilon, 1e-3)


@settings(deadline=None, max_examples=200)
@given(rho=st.floats(min_value=1e-10, max_value=1e6), delta=st.floats(min_value=1e-12, max_value=0.5))
def test_any_positive_rho_round_trips(rho, delta):
    assert acc.zcdp_from_dp(acc.zcdp_to_dp(rho, delta), delta) == pytest.approx(rho, rel=1e-9)


def test_error_message_says_expected_and_given():
    with pytest.raises(InvalidParameterError) as error:
        acc.zcdp_to_dp(0.1, 1.5)
    assert "open interval (0, 1)" in str(error.value) and "1.5" in str(error.value)
    with pytest.raises(InvalidParameterError, match="horizon must be an integer >= 1"):
        acc.dynamic_zcdp_total(0.1, 0.9, 0)
    with pytest.raises(InvalidParameterError, match="sigma must be > 0"):
        acc.gaussian_zcdp(1.0, 0.0)
