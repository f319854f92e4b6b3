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


def test_printed_sensitivities_are_decided_by_the_one_worst_case_rule():
    # (28): the instance stays below nu lambda (data-Lipschitz 4 < nu = 7.97), and the quadratic loss of Assumption 1
    # attains it, so it is the supremum; (30) is attained on the instance; (31) is exceeded there
    attained, witness = privacy.data_sensitivity_attained()
    assert attained and witness.endswith("lambda*nu/n_i")
    paper, context = get_paper("wang-basar"), CheckContext()
    verdicts = {name: paper.claim(name).checks[0].execute(context) for name in
                ("sensitivity-28", "sensitivity-30", "sensitivity-31")}
    assert {n: str(r.verdict) for n, r in verdicts.items()} == {
        "sensitivity-28": "confirmed", "sensitivity-30": "confirmed", "sensitivity-31": "refuted"}
    assert all(r.rule.name == "worst-case-equality" for r in verdicts.values())
    assert (verdicts["sensitivity-28"].evidence.values["exceeded"], verdicts["sensitivity-31"].evidence.values["exceeded"]) \
        == (False, True)


def test_theorem_6_fails_exactly_below_the_computed_delta():
    # independent arithmetic: mpmath at 60 digits evaluates the exact Gaussian delta(eps) (Dong, Roth & Su Cor. 2.13)
    # just above and just below the threshold; at sensitivity 1 the printed calibration is DP at every delta
    import mpmath as mp
    mp.mp.dps = 60
    assert privacy.failing_delta(1.0, 0.5) == 0.0
    sensitivity, epsilon = 1.0623, 0.5
    threshold = privacy.failing_delta(sensitivity, epsilon)

    def exact_delta(delta):
        mu = mp.mpf(sensitivity) * epsilon / mp.sqrt(2 * mp.log(mp.mpf("1.25") / delta))
        return mp.ncdf(-epsilon / mu + mu / 2) - mp.exp(epsilon) * mp.ncdf(-epsilon / mu - mu / 2)

    assert 1e-36 < threshold < 1e-33
    for factor, fails in ((0.9, True), (1.1, False)):
        delta = mp.mpf(threshold) * factor
        assert (exact_delta(delta) > delta) == fails


def test_ica_numeric_classes_match_sympy():
    assert symbolic.ica_population_classes_numeric(3) == symbolic.ica_population_classes(3)


def test_every_claim_is_wired():
    paper = get_paper("wang-basar")
    assert len({c.id for c in paper.claims}) == len(paper.claims)
    assert all(c.checks or c.not_run_reason for c in paper.claims)


def _ramp_minimum(problem: Estimation) -> np.ndarray:
    """Closed form of the zero of the extended oracle in the ramp left of B: theta2 zeroes dF/dtheta2 on the
    edge theta1 = -8 (brentq on the printed gradient), and the ramp c t/delta_r cancels dF/dtheta1 there."""
    inside = Estimation.as_printed(extension="none")
    theta2 = optimize.brentq(lambda t: inside.gradient(np.array([-8.0, t]))[1], 0.5, 2.5, xtol=1e-14)
    slope = inside.gradient(np.array([-8.0, theta2]))[0]
    return np.array([-8.0 - problem.ext_delta_r * slope / problem.ext_c, theta2])


def test_minimum_search_finds_a_planted_ramp_minimum():
    # ~2 s. ext_c = 5 plants a minimum 0.015 outside the edge theta1 = -8 (F decreases outward with slope 1.51 < c),
    # inside a strip narrower than the grid's spacing; the search must find it, certify it and converge everywhere
    from dpverify.theory.wang_basar.instances import minimum_search
    problem = Estimation.as_printed(ext_c=5.0)
    search = minimum_search(problem, privacy.gradient_lipschitz(problem))
    planted = _ramp_minimum(problem)
    assert planted[0] == pytest.approx(-8.01508, abs=1e-5)
    assert len(search.minima) == 2 and search.converged == search.starts
    found = min(search.minima, key=lambda p: np.linalg.norm(p.location - planted))
    assert np.linalg.norm(found.location - planted) < 1e-8 and found.gradient_norm < 1e-10
    assert found.kind == "minimum" and found.eigenvalues.max() == pytest.approx(problem.ext_c / problem.ext_delta_r, rel=1e-4)
    # a coercivity failure is reported, not hidden: with c = 1 < slope, descents left of B do not converge
    weak = minimum_search(Estimation.as_printed(ext_c=1.0), privacy.gradient_lipschitz(problem))
    assert 0 < weak.converged < weak.starts and len(weak.minima) == 1


def test_landscape_summary_lists_exactly_the_search_minima(monkeypatch):
    # ~6 s (one variant: the search and the hybr zeros). The evidence must be the search's own numbers.
    from dpverify.reproductions.run.experiments import parameters_of
    from dpverify.theory.wang_basar import numerics
    monkeypatch.setattr(numerics, "LANDSCAPE_VARIANTS", (("ext_c = 5", {"ext_c": 5.0}),))
    context = CheckContext(parameters=parameters_of("wang-basar", "quick"))
    measurement = numerics.check_modified_landscape(context)
    search = context.memo["minimum-search/radial_linear/5.0/0.05"]
    listed = [p.location.round(4).tolist() for p in search.minima]
    assert measurement.values["minima"] == {"ext_c = 5": listed}
    assert listed[0] == np.round(_ramp_minimum(Estimation.as_printed(ext_c=5.0)), 4).tolist()
    assert f"ext_c = 5: 2 minima {listed[0]}" in measurement.summary and str(listed[1]) in measurement.summary
    assert measurement.values["holds"] is False and f"{search.converged}/{search.starts} descents converged" in measurement.summary


def test_aggregate_oracle_equals_the_mean_of_the_agents_oracles():
    from dpverify.theory.wang_basar.instances import _aggregate
    problem = Estimation.as_printed(ext_c=5.0)
    points = np.random.default_rng(0).uniform([-12, -7], [8, 7], size=(500, 2))
    assert np.allclose(_aggregate(problem).gradient(points), problem.gradient(points), rtol=0, atol=1e-12)


def _figure_5_frame(shift: float, spread: float = 0.002, converged: bool = True, runs: int = 60):
    """A Fig. 5 results table: noise-free errors e, DP errors e + shift + N(0, spread^2), at k = 100, 300, 1000 (= K)."""
    import pandas as pd
    rng = np.random.default_rng(7)
    rows = []
    for k in (100, 300, 1000):
        base = rng.uniform(0.05, 0.3, runs) if converged else np.ones(runs)
        for sigma, error in ((0.0, base), (0.5, base + shift + spread * rng.standard_normal(runs))):
            rows.append(pd.DataFrame({"row": "final" if k == 1000 else "curve", "sigma": sigma, "iteration": k, "replica": np.arange(runs),
                                      "error_a1": np.sqrt(2.0), "error_nearest_column": error, "trapped": error > 0.5}))
    return pd.concat(rows, ignore_index=True)


@pytest.mark.parametrize("shift, converged, verdict, reading_verdicts", [
    (0.0, True, Verdict.CONFIRMED, None),                     # the same curves: comparable under every reading and margin
    (0.3, True, Verdict.REFUTED, None),                       # DP worse by 0.3 > every margin
    (-0.3, True, Verdict.INCONCLUSIVE, {"non-inferior, margin 0.05": "confirmed", "equivalent, margin 0.05": "refuted"}),
    (0.0, False, Verdict.INCONCLUSIVE, {"non-inferior, margin 0.05": "inconclusive"}),   # no run converges: cannot confirm
])
def test_figure_5_comparable_known_answers(shift, converged, verdict, reading_verdicts):
    # < 0.1 s; deterministic tables, so no false-alarm rate is involved
    from scipy import stats
    check = get_paper("wang-basar").claim("figure-5-comparable").checks[0]
    frame = _figure_5_frame(shift, converged=converged)
    result = check.execute(CheckContext(experiments={"figure-5": frame}))
    assert result.verdict == verdict
    readings = result.evidence.values["readings"]
    for name, expected in (reading_verdicts or {}).items():
        assert readings[name]["verdict"] == expected
    # the interval is the Student interval of the paired mean at the Bonferroni level 1 - 2 * 0.05 / 3
    d = frame[(frame.sigma == 0.5) & (frame.iteration == 300)].error_nearest_column.to_numpy() - \
        frame[(frame.sigma == 0.0) & (frame.iteration == 300)].error_nearest_column.to_numpy()
    low, high = stats.t.interval(1 - 0.1 / 3, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    assert readings["non-inferior, margin 0.05"]["intervals"]["sigma_var 0.5, k = 300"] == pytest.approx((low / 0.05, high / 0.05))


def test_coupled_noise_differs_only_in_the_sign_of_its_e1_component():
    from dpverify.theory.wang_basar.coupling import CoupledNormals
    e1 = np.array([3.0, 4.0]) / 5
    normals = CoupledNormals(np.random.default_rng(1), e1)
    draw = normals.standard_normal((8, 5, 2))
    first, second = draw[:4], draw[4:]
    assert np.allclose(second @ e1, -(first @ e1), atol=1e-15)
    orthogonal = np.array([-4.0, 3.0]) / 5
    assert np.allclose(second @ orthogonal, first @ orthogonal, atol=1e-15)


def test_identical_quadratic_agents_are_always_dominated():
    # < 1 s. f_i = theta^T H theta / 2 for every i: q(k, x) = H xbar - mean_i H x_i = 0 exactly, so the noise dominates
    # the coupling difference at every k >= 2 on every pair, and xbar' - xbar'' stays on e_1 (the -1 eigenvector).
    from dpverify.algorithms.wang_basar.algorithm import StepSchedule, WangBasarParams, graph_weights
    from dpverify.theory.wang_basar.coupling import coupled_runs, hypothesis
    hessian = np.diag([-1.0, 2.0])
    params = WangBasarParams(graph_weights("ring"), StepSchedule(0.05, 10**9, 1.0, 1.0), 2, 5.0)
    coupling = coupled_runs(lambda x: x @ hessian, lambda x: x @ hessian, np.zeros(2), params, 50, 200, np.random.default_rng(3))
    near = coupling.near[1:]
    assert near.any() and coupling.dominated[1:][near].all() and not coupling.dominated[0].any()
    found = hypothesis(coupling)
    assert found["each iteration"]["pooled"] == 1.0 and found["whole path"]["pairs"] == found["whole path"]["of"] > 0
    assert np.isfinite(coupling.escape).all()   # unstable direction with noise: every pair escapes radius 0.5 in 200 steps
    # heterogeneous agents (zero-sum curvature shifts of 10): q no longer vanishes and the whole-path hypothesis fails
    shifts = 10 * np.array([2, -1, -1, 1, -1.0])[:, None]
    mixed = coupled_runs(lambda x: x @ hessian + shifts * x, lambda x: x @ hessian, np.zeros(2), params, 50, 200,
                         np.random.default_rng(3))
    found = hypothesis(mixed)
    assert found["each iteration"]["pooled"] < 0.8 and not found["whole path"]["witnessed"]


def test_the_noise_free_escape_is_not_round_off(monkeypatch):
    # Algorithm 1 from the saddle at 30 and 60 digits leaves at the same iterate as the float64 run from the refined
    # saddle: a round-off cause would move with the precision. With identical agents (every gradient vanishes at
    # the saddle of F) the exact replay stays: the check can confirm.
    from dpverify.reproductions.run.experiments import parameters_of
    from dpverify.theory.wang_basar import numerics
    context = CheckContext(parameters=parameters_of("wang-basar", "quick"))
    measurement = numerics.check_noise_free_trapped(context)
    precise = measurement.values["precise"]
    assert precise["30 digits"]["escape_iteration"] == precise["60 digits"]["escape_iteration"] \
        == measurement.values["saddle_refined"]["escape_iteration"] == 156
    assert measurement.values["holds"] is False and "not round-off" in measurement.summary
    printed = Estimation.as_printed()
    same = Estimation(np.repeat(printed.measurements.mean(axis=0, keepdims=True), 5, axis=0), printed.matrix)
    monkeypatch.setattr(numerics, "estimation", lambda values: same)
    alike = numerics.precise_escape(context.parameters["figures-3-4"], 30, 400)
    assert alike["escape_iteration"] is None and alike["agent_gradient"] < 1e-20
