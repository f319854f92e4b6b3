"""dpverify.theory.zcdp_nfl.bounds: the stacking/matrix helpers against hand values on a 3-node path
graph (P = 2), the terms of (18)-(19) against an explicit per-iteration loop with matrices built by
hand (np.kron, scipy sqrtm), and the verdicts and key numbers of the checks on the experiments'
quick instances (fixed root seed: the default of dpverify.theory.execution)."""

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import sqrtm

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.reproductions.run.params import load_experiment
from dpverify.theory.claims import Verdict
from dpverify.theory.execution import CheckContext
from dpverify.theory.instruments.ground_truth import solve_regression
from dpverify.theory.zcdp_nfl import bounds
from dpverify.theory.zcdp_nfl.claims import PAPER
from dpverify.theory.zcdp_nfl.instances import Instance, Settings

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = {"figure-1": "figure_1_elastic_net.toml", "figure-2": "figure_2_lad.toml", "figure-3": "figure_3_ridge.toml"}

# 3-node path 0 - 1 - 2, P = 2: degrees (1, 2, 1); Laplacian eigenvalues 0, 1, 3 with eigenvectors
# (1,1,1)/sqrt3, (1,0,-1)/sqrt2, (1,-2,1)/sqrt6; the signless Laplacian of this bipartite graph has the
# same eigenvalues.
PATH_ADJACENCY = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float)
PATH_LAPLACIAN = np.array([[1, -1, 0], [-1, 2, -1], [0, -1, 1]], dtype=float)
PATH_SIGNLESS = np.array([[1, 1, 0], [1, 2, 1], [0, 1, 1]], dtype=float)
# Q = sqrt(L_-/2) = sqrt(1/2) v2 v2^T + sqrt(3/2) v3 v3^T  (L185)
PATH_Q = (math.sqrt(0.5) / 2 * np.array([[1, 0, -1], [0, 0, 0], [-1, 0, 1]])
          + math.sqrt(1.5) / 6 * np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]]))


def path_network() -> Network:
    return Network(PATH_ADJACENCY)


# ---- helpers: hand values ---------------------------------------------------------------------

def test_stack_is_agent_major():
    W = np.array([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])  # (R=1, K=3, P=2)
    np.testing.assert_array_equal(bounds.stack(W), [[1, 2, 3, 4, 5, 6]])
    np.testing.assert_array_equal(bounds.stack(np.zeros((4, 2, 3, 2))).shape, (4, 2, 6))


def test_step_matrix_diagonal_is_one_over_sqrt_two_eta_repeated_per_agent():
    # [D]_kk = 1/sqrt(2 eta_k) (L167): eta = 1/2 -> 1, 2 -> 1/2, 1/8 -> 2
    np.testing.assert_allclose(bounds.step_matrix_diagonal([0.5, 2.0, 0.125], 3, 2), [1, 1, 0.5, 0.5, 2, 2])
    np.testing.assert_allclose(bounds.step_matrix_diagonal(0.5, 3, 2), np.ones(6))
    with pytest.raises(InvalidParameterError, match="eta"):
        bounds.step_matrix_diagonal([0.5, 0.0, 1.0], 3, 2)


def test_network_operators_on_a_path_graph():
    ops = bounds.network_operators(path_network(), 2)
    identity = np.eye(2)
    np.testing.assert_allclose(ops.L_plus, np.kron(PATH_SIGNLESS, identity), atol=1e-14)
    np.testing.assert_allclose(ops.L_minus, np.kron(PATH_LAPLACIAN, identity), atol=1e-14)
    np.testing.assert_allclose(ops.M, np.kron(np.diag([1.0, 2.0, 1.0]), identity), atol=1e-14)
    np.testing.assert_allclose(ops.Q, np.kron(PATH_Q, identity), atol=1e-12)
    assert ops.phi_min_L_minus == pytest.approx(1.0)
    assert ops.phi_max_L_minus == pytest.approx(3.0)
    assert ops.phi_max_L_plus == pytest.approx(3.0)
    assert ops.noise_coefficient == pytest.approx(4 * (9 + 9) / 1)  # 4 (Phi_max(L_-)^2 + Phi_max(L_+)^2) / Phi_min(L_-)


def test_weighted_norms_apply_and_inner_on_the_path_graph():
    ops = bounds.network_operators(path_network(), 2)
    first_coordinate_of_agent_0 = bounds.stack(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]))
    consensus = bounds.stack(np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]))
    assert bounds.weighted_squared_norm(first_coordinate_of_agent_0, ops.L_plus) == pytest.approx(1.0)
    assert bounds.weighted_squared_norm(consensus, ops.L_plus) == pytest.approx(8.0)  # sum of entries of D + A
    assert bounds.weighted_squared_norm(consensus, ops.L_minus) == pytest.approx(0.0, abs=1e-14)  # Null(L_-) = span{1}
    np.testing.assert_allclose(bounds.apply(ops.Q, consensus), 0.0, atol=1e-14)  # Null(Q) = span{1} (L185)
    batch = np.stack([first_coordinate_of_agent_0, consensus])[None]  # (1, 2, 6)
    np.testing.assert_allclose(bounds.apply(ops.L_minus, batch)[0, 0], [1, 0, -1, 0, 0, 0])
    np.testing.assert_allclose(bounds.inner(batch, batch), [[1.0, 3.0]])


def test_relative_residual():
    assert bounds.relative_residual(np.array([3.0, 4.0]), np.array([-3.0, -4.0])) == 0.0
    assert bounds.relative_residual(np.array([3.0, 4.0]), np.zeros(2)) == pytest.approx(1.0)
    assert bounds.relative_residual(np.array([3.0, 4.0]), np.array([0.0, -4.0])) == pytest.approx(3.0 / 5.0)


def test_printed_subgradient_of_14_equals_the_gradient_only_at_eta_one_half():
    step = np.array([[[1.0, -2.0]]])
    base = {"W_next": step, "tW": np.zeros_like(step), "g": np.array([[[0.5, 0.5]]])}
    # eta = 1/2: D = 1, 2D = 2D^2 = 2
    printed, gradient = bounds.subgradients_14({**base, "d": bounds.step_matrix_diagonal(0.5, 1, 2)})
    np.testing.assert_allclose(printed, [[[2.5, -3.5]]])
    np.testing.assert_allclose(gradient, printed)
    # eta = 2: D = 1/2 -> printed 2D (W - tW) = (1, -2); gradient 2 D^2 (W - tW) = (W - tW)/eta = (0.5, -1)
    printed, gradient = bounds.subgradients_14({**base, "d": bounds.step_matrix_diagonal(2.0, 1, 2)})
    np.testing.assert_allclose(printed, [[[1.5, -1.5]]])
    np.testing.assert_allclose(gradient, [[[1.0, -0.5]]])
    # (14) at W: f(tW) + ||D (W - tW)||^2 + <W - tW, f'(tW)> = 7 + (0.25 + 1) + (0.5 - 1)
    value = bounds.linearized_objective_14(step, {**base, "f_tW": np.array([[7.0]]),
                                                  "d": bounds.step_matrix_diagonal(2.0, 1, 2)})
    np.testing.assert_allclose(value, [[7.75]])


# ---- the terms of (16)-(19) against an explicit loop on a small run ---------------------------

@pytest.fixture(scope="module")
def small_run():
    rng = np.random.default_rng(5)
    K, M, P = 3, 6, 2
    features = rng.standard_normal((K, M, P))
    features /= np.maximum(1.0, np.linalg.norm(features, axis=-1, keepdims=True))
    targets = features @ np.array([1.0, -0.5]) + 0.1 * rng.standard_normal((K, M))
    data, problem = LocalData(features, targets), Problem("squared", "l2", 1.0)
    truth = solve_regression(features, targets, "squared", "l2", 1.0)
    instance = Instance(path_network(), data, problem, truth)
    settings = Settings(rho=0.5, eta0=1.5, eta_power=0.5, tau=0.9, delta=1e-3, c1=1.0, horizon=6)
    return bounds.stacked_run(instance, settings, 5.0, replicas=2, rng=np.random.default_rng(11))


def test_small_run_satisfies_16_with_the_corrected_subgradient_and_17_in_its_corrected_form(small_run):
    ops, rho = small_run.operators, small_run.settings.rho
    q = bounds._one_step_quantities(small_run, 2)
    printed, gradient = bounds.subgradients_14(q)
    common = (q["alpha"], 2 * rho * bounds.apply(ops.M, q["W_next"]), -rho * bounds.apply(ops.L_plus, q["tW"]))
    assert bounds.relative_residual(gradient, *common).max() < 1e-12
    assert bounds.relative_residual(printed, *common).max() > 1e-2  # eta^(n+1) = 1.5/sqrt(n+1) != 1/2
    r = np.cumsum(bounds.apply(ops.Q, small_run.broadcast), axis=0)
    corrected = bounds.relative_residual(gradient / rho, 2 * bounds.apply(ops.Q, r[1:]),
                                         bounds.apply(ops.L_plus, q["W_next"] - q["tW"]),
                                         -bounds.apply(ops.L_minus, q["xi_next"]))
    assert corrected.max() < 1e-10
    assert np.all(small_run.noise[1:] != 0)  # the run is private: the printed 2 M xi^(n+1) is then off by L_+ xi


def test_bound_terms_match_an_explicit_loop(small_run):
    run = small_run
    K, P = 3, 2
    identity = np.eye(P)
    L_plus, L_minus = np.kron(PATH_SIGNLESS, identity), np.kron(PATH_LAPLACIAN, identity)
    Q = np.real(sqrtm(L_minus / 2))
    coefficient = 4 * (3.0**2 + 3.0**2) / 1.0
    rho, settings = run.settings.rho, run.settings
    terms = bounds.iteration_terms(run)
    W_star = np.tile(run.instance.reference, K)
    r = np.array([0.3, -1.0, 0.2, 0.5, -0.4, 1.1])
    lhs, rhs, _ = bounds.lemma_2_sides(run, r, terms)
    for replica in range(2):
        tW = lambda n: run.broadcast[n, replica]  # noqa: E731
        xi = lambda n: run.broadcast[n, replica] - run.primal[n, replica]  # noqa: E731
        r_seq = lambda n: sum(Q @ tW(s) for s in range(n + 1))  # noqa: E731
        G = lambda n: rho * np.sum((r_seq(n) - r) ** 2) + (tW(n) - W_star) @ (rho * L_plus / 2) @ (tW(n) - W_star)  # noqa: E731
        cumulative = 0.0
        for n in range(1, run.horizon):
            D = np.full(K * P, 1 / math.sqrt(2 * settings.eta0 * (n + 1) ** -settings.eta_power))  # [D^(n+1)]_kk
            Aq = -2 * (Q @ tW(n)) @ (Q @ tW(n + 1))
            Bp = (tW(n) - tW(n - 1)) @ (L_plus / 2) @ (tW(n) - tW(n - 1))
            Cp = (tW(n) - W_star) @ L_plus @ (2 * tW(n) - tW(n - 1) - tW(n + 1))
            Cs = W_star @ L_plus @ (2 * tW(n) - tW(n - 1) - tW(n + 1))
            Nz = coefficient * np.sum(xi(n + 1) ** 2)
            Dt = (tW(n) - W_star) @ ((2 / rho) * D * (tW(n) - tW(n + 1)))
            Ep = (tW(n + 1) - tW(n)) @ L_plus @ (tW(n + 1) - tW(n))
            for name, expected in dict(Aq=Aq, Bp=Bp, Cp=Cp, Cs=Cs, Nz=Nz, Dt=Dt, Ep=Ep).items():
                assert getattr(terms, name)[n - 1, replica] == pytest.approx(expected, rel=1e-10, abs=1e-12), name
            f_n = run.instance.problem.objective(tW(n).reshape(K, P), run.instance.data)
            f_star = run.instance.problem.centralized_objective(run.instance.reference, run.instance.data)
            expected_lhs = (f_n - f_star) / rho + tW(n) @ (2 * Q @ r)
            expected_rhs = (G(n - 1) - G(n)) / rho + Aq - Bp + Cp + Nz + Dt
            assert lhs[n - 1, replica] == pytest.approx(expected_lhs, rel=1e-10)
            assert rhs[n - 1, replica] == pytest.approx(expected_rhs, rel=1e-10)
            cumulative += Aq - Bp + Dt - Cs + Ep
            # (19) at T = n
            sigma2_0 = run.sigma2_0.sum()
            expected_19 = (rho / n * cumulative
                           + rho * P * coefficient * sigma2_0 / (1.0 * (1 - settings.tau)) / n
                           + tW(1) @ L_plus @ (tW(1) - tW(0)) / n + rho * np.sum((Q @ tW(0)) ** 2) / n
                           + rho * (tW(0) - W_star) @ (L_minus / 2) @ (tW(0) - W_star) / n)
            average = np.mean([tW(s) for s in range(1, n + 1)], axis=0).reshape(K, P)
            expected_gap = run.instance.problem.objective(average, run.instance.data) - f_star
            gap, bound = bounds.theorem_2_sides(run, terms, n)
            assert bound[replica] == pytest.approx(expected_19, rel=1e-10)
            assert gap[replica] == pytest.approx(expected_gap, rel=1e-10, abs=1e-12)
    with pytest.raises(InvalidParameterError, match="tW"):
        bounds.theorem_2_sides(run, terms, run.horizon)


def test_sigma2_0_follows_the_phi_index_convention(small_run):
    # sigma_k^2(0) = Delta_k(0)^2/(2 phi^(0)), phi^(0) = tau phi^(1), Delta_k(0) = 2c1/(M_k(2 rho |N_k| + 1/eta^(1)))
    settings, degrees = small_run.settings, np.array([1.0, 2.0, 1.0])
    delta = 2 * settings.c1 / (6 * (2 * settings.rho * degrees + 1 / settings.eta0))
    np.testing.assert_allclose(small_run.sigma2_0, delta**2 / (2 * settings.tau * small_run.phi1), rtol=1e-12)


# ---- the checks on the experiments' quick instances --------------------------------------------

@pytest.fixture(scope="module")
def context():
    parameters = {figure: load_experiment(ROOT / "reproductions" / "zcdp_nfl" / name, "quick").values()
                  for figure, name in EXPERIMENTS.items()}
    return CheckContext(profile="quick", parameters=parameters)


def execute(run, context):
    """The check as declared in claims.py (its rule decides): (verdict, evidence)."""
    result = next(c for claim in PAPER.claims for c in claim.checks if c.run is run).execute(context)
    return result.verdict, result.evidence


def test_missing_parameters_give_not_run():
    """The harness, not the check, turns unsupplied experiment parameters into not-run."""
    for check in (bounds.check_subgradient_14, bounds.check_representation_16, bounds.check_representation_17,
                  bounds.check_lemma_2, bounds.check_theorem_2):
        verdict, evidence = execute(check, CheckContext())
        assert verdict == Verdict.NOT_RUN and "parameters of experiment 'figure-" in evidence.summary
        assert "not supplied" in evidence.summary


def test_check_subgradient_14_refutes_the_printed_formula(context):
    verdict, evidence = execute(bounds.check_subgradient_14, context)
    assert verdict == Verdict.REFUTED
    for problem in ("elastic_net", "lad", "ridge"):
        values = evidence.values[problem]
        assert values["gradient_D2_vs_finite_difference_max"] < 1e-12
        assert values["printed_relative_residual_max"] > 0.5
        assert values["printed_vs_finite_difference_max"] > 1e-3
        # eta^(n) = 3/sqrt(n) = 1/2 at n = 36: there 2D = 2D^2 and the printed formula is exact
        assert values["smallest_residual_at_n_plus_1"] == 36 and values["eta_there"] == 0.5
        assert values["smallest_residual"] < 1e-15


def test_check_representation_16_holds_only_with_d_squared(context):
    verdict, evidence = execute(bounds.check_representation_16, context)
    assert verdict == Verdict.REFUTED
    for problem in ("elastic_net", "lad", "ridge"):
        values = evidence.values[problem]
        assert values["line_1_D2_max"] < 1e-8
        assert values["line_1_printed_D_max"] > 1e-3
        assert values["line_2_max"] < 1e-12
    assert "2EP = 1200" in evidence.values["alpha_note"]


def test_check_representation_17_right_side_should_be_l_minus_xi(context):
    verdict, evidence = execute(bounds.check_representation_17, context)
    assert verdict == Verdict.REFUTED
    for problem in ("elastic_net", "lad", "ridge"):
        values = evidence.values[problem]
        assert values["printed_D_max"] > 1e-3
        assert values["printed_with_D2_median"] > 1e-2  # fails even with the corrected subgradient
        assert values["printed_with_D2_plus_L_plus_xi_max"] < 1e-8  # ... by exactly -L_+ xi^(n+1)
        assert values["corrected_17a_max"] < 1e-8
        assert values["corrected_17b_max"] < 1e-8


def test_check_lemma_2_is_refuted_by_the_weak_noise_probe_only(context):
    verdict, evidence = execute(bounds.check_lemma_2, context)
    values = evidence.values
    assert verdict == Verdict.REFUTED
    witness = values["witness"]
    assert witness["problem"] == "lad" and witness["epsilon"] == bounds.WEAK_NOISE_EPSILON
    assert witness["lhs"] > witness["rhs"] and witness["relative_margin"] < -1e-6
    assert 1 <= witness["n"] <= 200
    for key, entry in values.items():
        if not isinstance(entry, dict) or "fraction_held" not in entry:
            continue
        assert entry["max_r_dependence_relative"] < 1e-12  # (18) does not depend on r
        assert entry["fraction_held_with_D2_step"] == 1.0  # D^2 in the last term removes every violation
        if key != "lad, weak-noise probe":
            assert entry["fraction_held"] == 1.0, key
        if key.endswith("reference"):
            assert entry["worst_relative_margin"] > 0.5  # Nz dominates at eps = 1
            assert entry["median_abs_terms"]["Nz"] > 100 * entry["median_abs_terms"]["Dt"]
    assert values["lad, weak-noise probe"]["fraction_held"] < 1.0
    assert values["violations"] > 0


def test_check_theorem_2_holds_with_slack_at_experiment_budgets_and_fails_at_weak_noise(context):
    verdict, evidence = execute(bounds.check_theorem_2, context)
    values = evidence.values
    assert verdict == Verdict.REFUTED
    for key, entry in values.items():
        if not isinstance(entry, dict) or "per_T" not in entry:  # e.g. the rule's "intervals"
            continue
        for row in entry["per_T"]:
            assert row["fraction_negative_gap"] == 0.0  # L216: E[f(hW) - f(W*)] > 0 on these runs
            if key != "lad, weak-noise probe":
                assert row["outcome"] == "confirmed", (key, row["T"])
            if key.endswith("reference"):
                assert row["rhs_over_lhs"] > 1e3
    first = values["lad, weak-noise probe"]["per_T"][0]
    assert first["T"] == 10 and first["outcome"] == "refuted"
    assert first["lhs_ci"][0] > first["rhs_ci"][1]
    assert values["intervals"]["lad, weak-noise probe, T = 10"][0] > 0  # LHS - RHS entirely above 0: refutes
    assert first["lhs_mean"] == pytest.approx(24.0, rel=0.02)
    assert first["rhs_mean"] == pytest.approx(17.8, rel=0.02)
