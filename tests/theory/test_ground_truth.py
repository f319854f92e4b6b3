"""dpverify.theory.instruments.ground_truth: solutions are compared with closed forms and with independent solvers
(normal equations, proximal gradient, an LP solved by HiGHS, the median), and the certificate's
numbers are compared with independent computations of the same quantities."""

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import linprog

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.theory.instruments.ground_truth import (
    Certificate,
    GroundTruth,
    certify,
    ridge_closed_form,
    solve_regression,
)

K, M, P = 5, 20, 4


@pytest.fixture(scope="module")
def instance():
    rng = np.random.default_rng(20240221)
    features = rng.normal(size=(K, M, P))
    w_true = rng.normal(size=P)
    targets = features @ w_true + 0.1 * rng.normal(size=(K, M))
    return features, targets


def objective_by_hand(features, targets, w, loss, lam, reg_value):
    """sum_k [ l(X_k, y_k; w)/M_k + (lam/K) R(w) ] (seeds/004 eq. (1)) with an explicit loop over agents."""
    total = 0.0
    n_agents = len(features)
    for xk, yk in zip(features, targets):
        r = xk @ w - yk
        data = np.sum(r**2) if loss == "squared" else np.sum(np.abs(r))
        total += data / xk.shape[0] + lam / n_agents * reg_value
    return total


# ------------------------------------------------------------------------------------------------ ridge


def test_ridge_matches_closed_form_and_is_certified(instance):
    features, targets = instance
    lam = 0.7
    truth = solve_regression(features, targets, "squared", "l2", lam)
    closed = ridge_closed_form(features, targets, lam)
    assert isinstance(truth, GroundTruth) and isinstance(truth.certificate, Certificate)
    # the solver itself (before any polish) and the returned solution both agree with the normal equations
    assert np.max(np.abs(truth.raw_solution - closed)) < 1e-6
    assert np.max(np.abs(truth.solution - closed)) < 1e-9
    assert truth.certificate.stationarity_residual < 1e-6
    assert abs(truth.certificate.duality_gap) < 1e-6
    assert truth.certified(1e-6)
    # independent gradient: 2 sum_k X_k^T (X_k w - y_k)/M + 2 lam w = 0 at the optimum
    w = truth.solution
    gradient = sum(2 * xk.T @ (xk @ w - yk) / M for xk, yk in zip(features, targets)) + 2 * lam * w
    assert np.linalg.norm(gradient) < 1e-9
    assert truth.optimal_value == pytest.approx(objective_by_hand(features, targets, w, "squared", lam, w @ w), abs=1e-12)
    assert truth.certificate.primal_value == pytest.approx(truth.optimal_value, abs=1e-12)


def test_ridge_closed_form_by_hand_on_a_1d_instance():
    # K = 2 agents, P = 1: F(w) = sum_k sum_i (x w - y)^2 / M_k + lam w^2
    features = [np.array([[1.0], [2.0]]), np.array([[3.0]])]
    targets = [np.array([1.0, 1.0]), np.array([2.0])]
    lam = 0.5
    # (5/2 + 9 + 0.5) w = 3/2 + 6  ->  w = 7.5 / 12
    assert ridge_closed_form(features, targets, lam)[0] == pytest.approx(7.5 / 12, abs=1e-14)
    truth = solve_regression(features, targets, "squared", "l2", lam)
    assert truth.solution[0] == pytest.approx(7.5 / 12, abs=1e-10)
    assert truth.certified(1e-9)


def test_unequal_agent_sizes_use_their_own_scaling():
    rng = np.random.default_rng(3)
    features = [rng.normal(size=(m, 3)) for m in (4, 9, 15)]
    targets = [x @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=x.shape[0]) for x in features]
    truth = solve_regression(features, targets, "squared", "l2", 0.3)
    assert np.max(np.abs(truth.solution - ridge_closed_form(features, targets, 0.3))) < 1e-9
    assert truth.certified(1e-8)


# ------------------------------------------------------------------------------------------------ elastic net


def proximal_gradient_elastic_net(features, targets, c1, c2, iterations=20000):
    """Independent solver: ISTA on sum_i s_i (a_i w - b_i)^2 + c2||w||^2 + c1||w||_1."""
    a = np.vstack(features)
    b = np.concatenate(targets)
    s = np.concatenate([np.full(x.shape[0], 1.0 / x.shape[0]) for x in features])
    hessian = 2 * a.T @ (s[:, None] * a) + 2 * c2 * np.eye(a.shape[1])
    step = 1.0 / np.linalg.eigvalsh(hessian).max()
    w = np.zeros(a.shape[1])
    for _ in range(iterations):
        v = w - step * (2 * a.T @ (s * (a @ w - b)) + 2 * c2 * w)
        w = np.sign(v) * np.maximum(np.abs(v) - step * c1, 0.0)
    return w


def test_elastic_net_certified_and_matches_proximal_gradient(instance):
    features, targets = instance
    lam, l1, l2 = 1.0, 0.4, 1.0
    truth = solve_regression(features, targets, "squared", "elastic_net", lam, l1=l1, l2=l2)
    assert truth.certified(1e-6)
    assert truth.certificate.stationarity_residual < 1e-6
    assert 0 <= truth.certificate.duality_gap + 1e-12 and truth.certificate.duality_gap < 1e-6
    reference = proximal_gradient_elastic_net(features, targets, lam * l1, lam * l2)
    assert np.max(np.abs(truth.solution - reference)) < 1e-8
    # optimality conditions written out by hand: g_j + c1 sign(w_j) = 0 on the support, |g_j| <= c1 off it
    w = truth.solution
    g = sum(2 * xk.T @ (xk @ w - yk) / M for xk, yk in zip(features, targets)) + 2 * lam * l2 * w
    support = w != 0
    assert np.all(np.abs(g[support] + lam * l1 * np.sign(w[support])) < 1e-9)
    assert np.all(np.abs(g[~support]) <= lam * l1 + 1e-12)


def test_elastic_net_paper_instance_with_boyd_lambda1():
    # spec §5.2: lambda_1 = 0.001 ||X^T y||_inf, lambda_2 = 1; data model of spec §6 at the paper's size
    rng = np.random.default_rng(11)
    k, m, p = 50, 50, 8
    x = rng.normal(size=(k, m, p))
    x = x / np.maximum(1.0, np.linalg.norm(x, axis=2, keepdims=True))
    y = x @ rng.normal(size=p) + 0.1 * rng.normal(size=(k, m))
    l1 = 0.001 * np.max(np.abs(x.reshape(-1, p).T @ y.reshape(-1)))
    truth = solve_regression(x, y, "squared", "elastic_net", 1.0, l1=l1, l2=1.0)
    assert truth.certified(1e-8)
    assert np.max(np.abs(truth.solution - proximal_gradient_elastic_net(list(x), list(y), l1, 1.0, 5000))) < 1e-8


def test_elastic_net_with_huge_l1_is_exactly_zero_with_certificate(instance):
    features, targets = instance
    lam = 2.0
    # w = 0 is optimal iff ||grad of the smooth part at 0||_inf = ||2 sum_k X_k^T y_k / M||_inf <= lam l1
    threshold = np.max(np.abs(sum(2 * xk.T @ yk / M for xk, yk in zip(features, targets)))) / lam
    truth = solve_regression(features, targets, "squared", "elastic_net", lam, l1=1.01 * threshold, l2=0.5)
    assert np.all(truth.solution == 0.0)
    assert truth.certificate.stationarity_residual == 0.0
    assert abs(truth.certificate.duality_gap) < 1e-12
    assert truth.certified(1e-10)
    assert truth.certificate.n_kink_terms == P
    assert truth.optimal_value == pytest.approx(sum(np.sum(yk**2) / M for yk in targets), abs=1e-12)
    # a partially sparse solution: exact zeros where |g_j| <= lam l1, certified, equal to proximal gradient
    partial = solve_regression(features, targets, "squared", "elastic_net", lam, l1=0.6 * threshold, l2=0.5)
    assert 1 <= np.count_nonzero(partial.solution == 0.0) <= P - 1
    assert partial.certified(1e-9)
    reference = proximal_gradient_elastic_net(list(features), list(targets), lam * 0.6 * threshold, lam * 0.5)
    assert np.array_equal(partial.solution == 0.0, reference == 0.0)
    assert np.max(np.abs(partial.solution - reference)) < 1e-8
    # just below the threshold the solution is not zero
    below = solve_regression(features, targets, "squared", "elastic_net", lam, l1=0.99 * threshold, l2=0.5)
    assert np.count_nonzero(below.solution) >= 1 and below.certified(1e-8)


# ------------------------------------------------------------------------------------------------ LAD


def lad_by_linear_program(features, targets):
    """Independent solver: min sum_i s_i u_i s.t. -u <= A w - b <= u, solved by HiGHS through scipy."""
    a = np.vstack(features)
    b = np.concatenate(targets)
    s = np.concatenate([np.full(x.shape[0], 1.0 / x.shape[0]) for x in features])
    n, p = a.shape
    cost = np.concatenate([np.zeros(p), s])
    upper = np.block([[a, -np.eye(n)], [-a, -np.eye(n)]])
    result = linprog(cost, A_ub=upper, b_ub=np.concatenate([b, -b]), bounds=[(None, None)] * p + [(0, None)] * n, method="highs")
    assert result.status == 0
    return result.fun


def test_lad_certified_and_matches_linear_program(instance):
    features, targets = instance
    truth = solve_regression(features, targets, "absolute", "none", 1.0)
    assert truth.certified(1e-6)
    assert truth.certificate.stationarity_residual < 1e-6
    assert abs(truth.certificate.duality_gap) < 1e-6
    assert truth.optimal_value == pytest.approx(lad_by_linear_program(features, targets), abs=1e-8)
    assert truth.optimal_value == pytest.approx(
        objective_by_hand(features, targets, truth.solution, "absolute", 1.0, 0.0), abs=1e-12
    )
    # a LAD solution in general position interpolates P samples (a vertex of the LP); they sit at their kink
    assert truth.certificate.n_kink_terms >= P
    assert truth.certificate.max_kink_offset < 1e-12


def test_lad_with_elastic_net_is_certified(instance):
    features, targets = instance
    truth = solve_regression(features, targets, "absolute", "elastic_net", 1.0, l1=0.05, l2=0.5)
    assert truth.certified(1e-6)
    assert abs(truth.certificate.duality_gap) < 1e-6


@pytest.mark.parametrize(
    "values",
    [
        [[3.0, -1.0, 7.0], [0.5, 2.0, 10.0], [4.0, -6.0, 1.5]],  # 9 values, median 2.0
        [[5.0, 1.0, 9.0, 2.0, 8.0]],  # K = 1, 5 values, median 5.0
    ],
)
def test_lad_one_dimensional_median(values):
    # min_w sum_k sum_i |w - y_ki| / M: with x_i = 1 the solution is the median of y (odd count: unique)
    targets = np.array(values)
    features = np.ones(targets.shape + (1,))
    truth = solve_regression(features, targets, "absolute", "none", 1.0)
    median = float(np.median(targets))
    assert truth.solution[0] == pytest.approx(median, abs=1e-10)
    assert truth.optimal_value == pytest.approx(np.sum(np.abs(targets - median)) / targets.shape[1], abs=1e-12)
    assert truth.certified(1e-9)
    assert truth.certificate.n_kink_terms == 1


def test_lad_even_count_optimal_value():
    # 4 values: every w in [2, 5] is optimal with value (|1-w| + |2-w| + |5-w| + |9-w|)/4 = 11/4
    targets = np.array([[1.0, 9.0, 2.0, 5.0]])
    truth = solve_regression(np.ones((1, 4, 1)), targets, "absolute", "none", 1.0)
    assert 2.0 - 1e-9 <= truth.solution[0] <= 5.0 + 1e-9
    assert truth.optimal_value == pytest.approx(11 / 4, abs=1e-9)
    assert truth.certified(1e-8)


# ------------------------------------------------------------------------------------------------ the certificate itself


def test_certificate_of_a_perturbed_point_is_the_gradient_norm(instance):
    features, targets = instance
    lam = 0.7
    w_star = ridge_closed_form(features, targets, lam)
    delta = np.array([1e-3, -2e-3, 0.0, 5e-4])
    certificate = certify(features, targets, "squared", "l2", lam, w_star + delta)
    a = features.reshape(-1, P)
    hessian = 2 * a.T @ a / M + 2 * lam * np.eye(P)  # F is quadratic: grad F(w* + d) = H d
    assert certificate.stationarity_residual == pytest.approx(np.linalg.norm(hessian @ delta), rel=1e-6)
    suboptimality = 0.5 * delta @ hessian @ delta
    assert certificate.duality_gap >= suboptimality - 1e-12  # weak duality: the gap bounds F(w) - F*
    assert not certificate.certified(1e-6)
    assert certify(features, targets, "squared", "l2", lam, w_star).certified(1e-9)


def test_stationarity_residual_equals_independent_distance_computation(instance):
    """dist(0, dF(w)) at a point with kinks in both the loss and the l1 term, where the distance is
    nonzero, against a CVXPY solution of min_{t in box} ||g + B t|| built here from the definitions."""
    features, targets = instance
    lad = solve_regression(features, targets, "absolute", "none", 1.0).solution
    w = lad.copy()
    w[0] = 0.0  # a coordinate at the l1 kink (the LAD kinks of the other samples move, some stay)
    a = features.reshape(-1, P)
    b = targets.reshape(-1)
    s = 1.0 / M
    lam, l1, l2 = 1.0, 0.05, 0.3
    kink_tol = 1e-7
    # make some residuals sit exactly at the kink by re-centering the targets of the first 3 samples
    b = b.copy()
    b[:3] = a[:3] @ w
    targets2 = b.reshape(K, M)
    r = a @ w - b
    loss_kink = np.abs(r) <= kink_tol
    zero = np.abs(w) <= kink_tol
    g = a[~loss_kink].T @ (s * np.sign(r[~loss_kink])) + 2 * lam * l2 * w + lam * l1 * np.where(zero, 0, np.sign(w))
    columns = np.hstack([(s * a[loss_kink]).T, (lam * l1 * np.eye(P))[:, zero]])
    t = cp.Variable(columns.shape[1])
    problem = cp.Problem(cp.Minimize(cp.norm(g + columns @ t)), [t >= -1, t <= 1])
    problem.solve(solver=cp.CLARABEL)
    certificate = certify(features, targets2, "absolute", "elastic_net", lam, w, l1=l1, l2=l2, kink_tol=kink_tol)
    assert certificate.n_kink_terms == int(loss_kink.sum() + zero.sum())
    assert certificate.n_kink_terms >= 4
    assert certificate.stationarity_residual > 1e-3
    assert certificate.stationarity_residual == pytest.approx(problem.value, abs=1e-7)


def test_stationarity_with_only_l1_kinks_uses_the_soft_threshold_closed_form(instance):
    features, targets = instance
    lam, l1, l2 = 1.0, 0.4, 1.0
    w = np.array([0.0, 0.3, 0.0, -0.2])
    a = features.reshape(-1, P)
    g = 2 * a.T @ (a @ w - targets.reshape(-1)) / M + 2 * l2 * w + l1 * np.sign(w)
    expected = np.linalg.norm(np.where(w == 0, np.sign(g) * np.maximum(np.abs(g) - l1, 0), g))
    certificate = certify(features, targets, "squared", "elastic_net", lam, w, l1=l1, l2=l2)
    assert certificate.stationarity_residual == pytest.approx(expected, rel=1e-12)
    assert certificate.n_kink_terms == 2


def test_certified_is_exactly_the_stated_rule(instance):
    features, targets = instance
    truth = solve_regression(features, targets, "absolute", "none", 1.0)
    c = truth.certificate
    for tol in (1e-3, 1e-9, 1e-14, 1e-17, 1e-30):
        expected = c.stationarity_residual <= tol and -tol <= c.duality_gap <= tol
        assert truth.certified(tol) == expected
    assert not truth.certified(1e-30)


# ------------------------------------------------------------------------------------------------ bad input


def test_bad_inputs_raise_specific_errors(instance):
    features, targets = instance
    bad = features.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(InvalidDataError, match="finite"):
        solve_regression(bad, targets, "squared", "l2", 1.0)
    bad_targets = targets.copy()
    bad_targets[1, 2] = np.inf
    with pytest.raises(InvalidDataError, match="finite"):
        solve_regression(features, bad_targets, "squared", "l2", 1.0)
    with pytest.raises(InvalidDataError, match="M_k = 20"):
        solve_regression(features, targets[:, :10], "squared", "l2", 1.0)
    with pytest.raises(InvalidDataError, match="same number of agents"):
        solve_regression(features, targets[:3], "squared", "l2", 1.0)
    with pytest.raises(InvalidDataError, match=r"\(K, M, P\)"):
        solve_regression(features[0], targets, "squared", "l2", 1.0)
    for lam in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(InvalidParameterError, match="lam"):
            solve_regression(features, targets, "squared", "l2", lam)
    with pytest.raises(InvalidParameterError, match="loss must be one of"):
        solve_regression(features, targets, "huber", "l2", 1.0)
    with pytest.raises(InvalidParameterError, match="regularizer must be one of"):
        solve_regression(features, targets, "squared", "lasso", 1.0)
    with pytest.raises(InvalidParameterError, match="l1 and l2"):
        solve_regression(features, targets, "squared", "l2", 1.0, l1=0.1)
    with pytest.raises(InvalidParameterError, match=">= 0"):
        solve_regression(features, targets, "squared", "elastic_net", 1.0, l1=-0.1)
    with pytest.raises(InvalidParameterError, match="lam"):
        ridge_closed_form(features, targets, 0.0)
    with pytest.raises(InvalidDataError, match=r"shape \(4,\)"):
        certify(features, targets, "squared", "l2", 1.0, np.zeros(3))
    with pytest.raises(InvalidParameterError):
        solve_regression(features, targets, "squared", "l2", 1.0).certified(0.0)
    # both are ValueErrors, as promised by dpverify.algorithms.core.errors
    assert issubclass(InvalidDataError, ValueError) and issubclass(InvalidParameterError, ValueError)


def test_unreachable_tolerance_runs_the_tight_resolve_and_is_reported_honestly(instance):
    # nothing reaches 1e-30 in floating point: the tight re-solve runs, and certified() says no
    features, targets = instance
    truth = solve_regression(features, targets, "absolute", "none", 1.0, tol=1e-30)
    assert not truth.certified(1e-30)
    assert truth.certified(1e-9)
    assert truth.optimal_value == pytest.approx(lad_by_linear_program(features, targets), abs=1e-8)
