"""Wang & Basar checks against independent computations (scipy roots, closed forms)."""

import numpy as np
import pytest
from scipy import optimize

from dpverify.algorithms.wang_basar.problems import Estimation
from dpverify.theory.claims import Verdict
from dpverify.theory.execution import CheckContext
from dpverify.theory.papers import get_paper
from dpverify.theory.wang_basar import privacy, symbolic


def test_stationary_points_match_scipy_roots():
    problem = Estimation.as_printed(extension="none")
    exact = symbolic.stationary_points_closed_form()
    for start in ([1.3, 1.0], [-7.4, 1.4], [5.2, 1.2]):
        root = optimize.root(problem.gradient, start, tol=1e-14).x
        assert min(np.max(np.abs(root - p)) for p in exact) < 1e-9


def test_printed_hessian_is_refuted_and_true_hessian_matches_finite_differences():
    check = get_paper("wang-basar").claim("estimation-hessian").checks[0]
    assert check.execute(CheckContext()).verdict == Verdict.REFUTED
    problem = Estimation.as_printed(extension="none")
    point, h = np.array([-3.0, 1.5]), 1e-6
    fd = np.array([(problem.gradient(point + h * e) - problem.gradient(point - h * e)) / (2 * h) for e in np.eye(2)]).T
    assert np.allclose(problem.hessian(point), fd, atol=1e-6)


def test_privacy_condition_ratio_is_lambda_squared():
    lam = symbolic.lam
    assert symbolic.sp.simplify(symbolic.printed_sigma_var("theorem-5", "a") / symbolic.required_sigma_var("theorem-5") - lam**2) == 0
    assert symbolic.sp.simplify(symbolic.printed_sigma_var("theorem-6", "a") / symbolic.required_sigma_var("theorem-6") - 1) == 0


def test_state_sensitivity_equals_induced_l1_norm():
    # M(x) = x - lam grad f_i(x) changes by (I - lam Hess) dx to first order; over unit l1 steps on the grid the
    # probe must reach at least the induced l1 norm of I - lam Hess(x) at the witness region's corner minus curvature
    lam = 0.02
    measured = privacy.sensitivities(lam)["state (31)"]["measured"]
    problem = Estimation.as_printed()
    corner = np.array([-8.0, -3.0])
    induced = np.abs(np.eye(2) - lam * problem.hessian(corner)).sum(axis=0).max()
    assert measured > 1.0 and measured == pytest.approx(induced, rel=0.05)


def test_ica_numeric_classes_match_sympy():
    assert symbolic.ica_population_classes_numeric(3) == symbolic.ica_population_classes(3)


def test_every_claim_is_wired():
    paper = get_paper("wang-basar")
    assert len({c.id for c in paper.claims}) == len(paper.claims)
    assert all(c.checks or c.not_run_reason for c in paper.claims)
