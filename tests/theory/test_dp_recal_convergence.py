"""Building blocks of the DP-RECAL convergence checks (seeds/001 Sec. IV; spec §2.1, §2.7, §4.2)."""

import networkx as nx
import numpy as np
import pytest

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.algorithm import paper_beta, uniform_transition_matrix
from dpverify.algorithms.dp_recal.composite import CompositeProblem
from dpverify.theory.claims import Verdict
from dpverify.theory.dp_recal.claims import PAPER
from dpverify.theory.dp_recal.operators import (
    Instance,
    all_active_step,
    lemma1_g,
    noise_vector,
    operator_matrices,
    select_blocks,
    stationary_distribution,
    v0_stepsize_matrix,
    walk_marginals,
)
from dpverify.theory.execution import CheckContext


@pytest.fixture
def matrices():
    return operator_matrices(np.array([0.3, 0.5, 0.2]), np.array([1.0, 2.0, 3.0]), 2, paper_beta(3))


def test_printed_blocks_satisfy_the_identities_of_appendix_c(matrices):
    M = matrices
    assert np.allclose(M.J + M.K, M.H)                       # App. C: J + K = H
    assert np.allclose(M.K.T, -M.K) and np.allclose(M.A.T, -M.A)
    assert np.allclose(2 * M.J_hat - M.S, M.S_hat)            # S^ = 2 J^ - S
    assert np.allclose(M.H1 + M.A, M.H)                      # v1 (5) and v0 (5) share the resolvent
    assert np.allclose(np.linalg.solve(M.S, M.H + M.A.T), M.H2)


def test_printed_s_hat_entries(matrices):
    S_hat, q = matrices.S_hat, 2
    assert S_hat[0, 0] == pytest.approx(8.0)                  # 1/beta = 2(n+1) = 8
    assert S_hat[0, 6] == -1.0 and S_hat[0, 8] == 1.0         # -U and I blocks of the lam row
    assert S_hat[8, 8] == pytest.approx(1 / 0.3 - 0.5)        # Gamma^-1 - Q/2 for agent 1
    assert S_hat.shape == (2 * 3 * q + q,) * 2


def test_stepsize_matrices_at_the_boundary_a_equal_half():
    # a_i = 1/alpha_i - L_i/2 = 1/2 (alpha_i = 2/(L_i+1)): leading minors 7/24... stay positive (sympy: 7, 2)
    alpha, L = np.array([0.5, 0.5]), np.array([3.0, 3.0])
    assert np.linalg.eigvalsh(operator_matrices(alpha, L, 1, 1 / 6).S_hat)[0] > 0.05
    assert np.linalg.det(v0_stepsize_matrix(alpha, L, 1, 1 / 6)) == pytest.approx(2 / 36)


def test_lemma1_formula_is_the_stationary_law():
    ring = Network.from_networkx(nx.cycle_graph(6))
    assert np.allclose(lemma1_g(ring), np.full(6, 1 / 6))
    star = Network.from_networkx(nx.star_graph(4))
    assert lemma1_g(star) == pytest.approx([0.5, 0.125, 0.125, 0.125, 0.125])
    assert np.allclose(lemma1_g(star), stationary_distribution(star))


def test_walk_marginals_on_the_star_oscillate():
    star = Network.from_networkx(nx.star_graph(4))
    marginals = walk_marginals(uniform_transition_matrix(star), np.full(5, 0.2), 4)
    assert marginals[:, 0] == pytest.approx([0.2, 0.8, 0.2, 0.8])


def test_noise_vector_placement():
    eps = np.array([[1.0, 2.0]])
    assert noise_vector(eps, 3, 2, "x")[0].tolist() == [0] * 6 + [1, 2] + [0] * 6
    assert noise_vector(eps, 3, 2, "lambda_broadcast")[0, :6].tolist() == [1, 2] * 3


def test_analysis_model_with_all_agents_active_is_scheme_6():
    rng = np.random.default_rng(3)
    n, q = 3, 2
    data = LocalData(rng.standard_normal((n, 4, q)), rng.standard_normal((n, 4)))
    problem = CompositeProblem(ridge=0.5, lasso=0.02)
    instance = Instance(problem, data, Network.from_networkx(nx.path_graph(n)), np.zeros(q), 0.0)
    alpha, beta = np.array([0.2, 0.3, 0.4]), paper_beta(n)
    lam, x, y = rng.standard_normal((1, n, q)), rng.standard_normal((1, q)), rng.standard_normal((1, n, q))
    _, x_hat, y_hat, lam_hat = all_active_step(instance, alpha, beta, lam, x, y)
    # (6a)-(6d) agent by agent
    lam_half = [lam[0, i] + beta * (x[0] - y[0, i]) for i in range(n)]
    v = x[0] - sum(lam_half)
    x_new = np.sign(v) * np.maximum(np.abs(v) - n * 0.02, 0) / (1 + 2 * n * 0.5)
    for i in range(n):
        B, b = data.features[i], data.targets[i]
        y_new = y[0, i] - alpha[i] * (B.T @ (B @ y[0, i] - b) / 4 - lam_half[i])
        lam_new = lam_half[i] + beta * ((x_new - x[0]) - (y_new - y[0, i]))
        assert np.allclose(y_hat[0, i], y_new) and np.allclose(lam_hat[0, i], lam_new)
    assert np.allclose(x_hat[0], x_new)
    lam_s, x_s, y_s = select_blocks(np.array([1]), lam, x, y, lam_hat, x_hat, y_hat)
    assert np.allclose(lam_s[0, 0], lam[0, 0]) and np.allclose(y_s[0, 1], y_hat[0, 1]) and np.allclose(x_s, x_hat)


def test_activation_checks_decide_as_computed():
    context = CheckContext(profile="quick")
    assert PAPER.claim("lemma-1").checks[0].execute(context).verdict == Verdict.CONFIRMED    # formula (exact)
    result = PAPER.claim("lemma-2").checks[1].execute(context)                               # conditional law
    assert result.verdict == Verdict.REFUTED and result.evidence.values["self_transitions"] == 0
    result = PAPER.claim("stepsize-condition").checks[1].execute(context)                    # Sylvester (rule proof)
    assert result.verdict == Verdict.CONFIRMED and result.evidence.values["leading_minors"][3] == "24*s1 + 7"
