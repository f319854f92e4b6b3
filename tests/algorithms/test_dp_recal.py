"""RECAL / DP-RECAL (seeds/001 Algorithm 1): the batched run against a line-by-line transcription,
convergence to the certified x*, the noise schedule, PLF, stopping rule and input errors."""

import networkx as nx
import numpy as np
import pytest

from dpverify.algorithms.core.errors import InvalidGraphError, InvalidParameterError
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.algorithm import (
    RecalParams,
    RelayNoise,
    checked_stepsizes,
    paper_beta,
    run_recal,
    uniform_transition_matrix,
    validate_transition_matrix,
)
from dpverify.algorithms.dp_recal.composite import ActiveGradients, CompositeProblem
from dpverify.theory.dp_recal.composite_ground_truth import solve_composite

N, M, Q = 5, 12, 3


def _setup(seed=0, loss="linear", lasso=0.02):
    rng = np.random.default_rng(seed)
    data = LocalData(rng.uniform(0, 1, (N, M, Q)), rng.choice([-1.0, 1.0], (N, M), p=[0.2, 0.8]))
    problem = CompositeProblem(loss, lasso=lasso)
    network = Network.from_networkx(nx.cycle_graph(N))
    return data, problem, network


def _transcribed(problem, data, network, alpha, beta, sigma1, R, K, x1, u_mode, rng):
    """Algorithm 1 for ONE replica, written line by line (v1:L248-L262), consuming rng like run_recal."""
    n = data.num_agents
    x, y, lam = x1.copy(), np.tile(x1, (n, 1)), np.zeros((n, Q))
    u, u_tilde, tau = np.zeros(Q), np.zeros(Q), np.zeros(n, int)
    i = int(rng.integers(0, n, 1)[0])
    sent = []
    for _ in range(K):
        lam_half = lam[i] + beta * (x - y[i])
        x_new = problem.prox_scaled_r(x - (u_tilde + lam_half - lam[i]), n)
        grad = problem.local_gradients(np.tile(y[i], (n, 1)), data)[i]
        y_new = y[i] - alpha[i] * (grad - lam_half)
        lam_new = lam_half + beta * ((x_new - x) - (y_new - y[i]))
        tau[i] += 1
        eps = rng.standard_normal((1, Q))[0] * sigma1 * R ** (-(tau[i] - 1) / 2)
        u_next = (u if u_mode == "literal" else u_tilde) + lam_new - lam[i]
        u, u_tilde = u + lam_new - lam[i], u_next - eps
        nbrs = network.neighbors(i)
        j = nbrs[int(rng.random(1)[0] * len(nbrs))]
        lam[i], y[i], x = lam_new, y_new, x_new
        sent.append((i, u_tilde.copy(), x.copy()))
        i = j
    return sent


@pytest.mark.parametrize("u_mode", ["literal", "received"])
def test_batched_run_equals_line_by_line_transcription(u_mode):
    data, problem, network = _setup()
    alpha = 1 / (problem.lipschitz_constants(data) + 1)
    beta, x1 = paper_beta(N), 0.1 * np.arange(1, Q + 1)
    params = RecalParams(alpha, beta, RelayNoise(0.3, 1.05), u_mode=u_mode)
    run = run_recal(problem, data, network, params, replicas=1, rng=np.random.default_rng(7), horizon=40, x1=x1)
    sent = _transcribed(problem, data, network, alpha, beta, 0.3, 1.05, 40, x1, u_mode, np.random.default_rng(7))
    np.testing.assert_array_equal(run.holders[:, 0], [s[0] for s in sent])
    np.testing.assert_allclose(run.u_sent[:, 0], [s[1] for s in sent], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(run.x_sent[:, 0], [s[2] for s in sent], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("clip", [None, 0.5])
def test_gram_and_support_forms_give_the_iterates_of_the_printed_gradient(clip):
    """The precomputed gradient forms (Gram matrix on the nonzero columns; per-sample on the nonzero
    columns) against B_i^T (B_i y - b_i)/m_i on all columns, over a whole DP-RECAL run."""
    data, problem, network = _setup(4)
    features = data.features.copy()
    features[1, :, 0] = features[3, :, 2] = 0.0
    data = LocalData(features, data.targets)
    alpha = 1 / (problem.lipschitz_constants(data) + 1)
    params = RecalParams(alpha, paper_beta(N), RelayNoise(0.3, 1.05), clip=clip)

    class Printed(ActiveGradients):  # the reference: problem.active_gradients on the full features
        def __call__(self, x, agents):
            return problem.active_gradients(x, agents, data, clip)

    runs = {}
    for method in ["auto", "samples", "printed"]:
        gradients = (Printed if method == "printed" else ActiveGradients)(
            problem, data, clip, method="samples" if method == "printed" else method)
        runs[method] = run_recal(problem, data, network, params, replicas=6, rng=np.random.default_rng(8),
                                 horizon=300, x1=0.1 * np.arange(1, Q + 1), gradients=gradients)
    assert runs["auto"].x_sent.shape == (300, 6, Q) and np.abs(runs["auto"].x_final).max() > 0.05
    for method in ["auto", "samples"]:
        np.testing.assert_array_equal(runs[method].holders, runs["printed"].holders)
        for field in ["x_sent", "u_sent", "y_final", "lam_final"]:
            np.testing.assert_allclose(getattr(runs[method], field), getattr(runs["printed"], field),
                                       rtol=1e-11, atol=1e-13)
    # a run must be given gradients built for its own problem, data and clipping
    with pytest.raises(InvalidParameterError, match="gradients"):
        run_recal(problem, data, network, params, replicas=1, rng=np.random.default_rng(0), horizon=1,
                  gradients=ActiveGradients(problem, data, None if clip else 1.0))


@pytest.mark.parametrize("loss", ["linear", "logistic"])
def test_recal_converges_to_the_certified_minimizer(loss):
    data, problem, network = _setup(1, loss)
    truth = solve_composite(problem, data)
    assert truth.certified(1e-10) and np.linalg.norm(truth.x) > 0.05
    alpha = 1 / (problem.lipschitz_constants(data) + 1)
    x1 = 0.1 * np.random.default_rng(2).standard_normal(Q)
    run = run_recal(problem, data, network, RecalParams(alpha, paper_beta(N)), replicas=4,
                    rng=np.random.default_rng(3), horizon=4000, x1=x1)
    error = np.linalg.norm(run.x_final - truth.x, axis=-1) / np.linalg.norm(x1 - truth.x)
    assert np.all(error < 1e-10)


def test_noise_schedule_and_privacy_spent_follow_the_activation_counts():
    data, problem, network = _setup(2)
    alpha = 1 / (problem.lipschitz_constants(data) + 1)
    params = RecalParams(alpha, paper_beta(N), RelayNoise(2.0, 1.1), sensitivity_bound=0.5)
    run = run_recal(problem, data, network, params, replicas=6, rng=np.random.default_rng(4), horizon=300)
    np.testing.assert_allclose(run.noise_std, 2.0 * 1.1 ** (-(run.counts - 1) / 2))       # sigma_tau^2 = sigma_1^2 R^(1-tau)
    tau = run.activations
    expected = 0.5**2 / (2 * 4.0) * (1.1**tau - 1) / (1.1 - 1)                            # sum_t rho_1 R^(t-1)
    np.testing.assert_allclose(run.rho_spent, expected, rtol=1e-10)
    np.testing.assert_array_equal(run.plf, tau.max(axis=1))
    assert np.all(tau.sum(axis=1) == 300)
    # the baton moves along edges only
    assert np.all(network.adjacency[run.holders, run.receivers] == 1)
    np.testing.assert_array_equal(run.holders[1:], run.receivers[:-1])


def test_plf_stopping_rule_stops_each_replica_at_its_first_hit():
    data, problem, network = _setup(3)
    alpha = 1 / (problem.lipschitz_constants(data) + 1)
    run = run_recal(problem, data, network, RecalParams(alpha, paper_beta(N)), replicas=8,
                    rng=np.random.default_rng(5), plf_target=20)
    assert np.all(run.plf == 20)
    for r in range(8):
        K = run.iterations[r]
        counts = np.bincount(run.holders[:K - 1, r], minlength=N)
        assert counts.max() == 19  # one iteration earlier the target was not yet reached


def test_bad_input_is_refused_with_a_reason():
    data, problem, network = _setup()
    with pytest.raises(InvalidParameterError, match="outside"):
        checked_stepsizes(10.0, problem, data)
    assert checked_stepsizes(10.0, problem, data, allow_outside=True).shape == (N,)
    with pytest.raises(InvalidParameterError, match="R must be > 1"):
        RelayNoise(1.0, 1.0)
    with pytest.raises(InvalidParameterError, match="u_mode"):
        RecalParams(np.ones(N), 0.1, u_mode="other")
    P = uniform_transition_matrix(network)
    P[0] = 0
    P[0, 1] = 1
    P[1] = 0
    P[1, 0] = 1  # 0 <-> 1 only: agents 2..4 never receive the baton from {0, 1}
    with pytest.raises(InvalidGraphError, match="not irreducible"):
        validate_transition_matrix(P, network)
    with pytest.raises(InvalidGraphError, match="not an edge"):
        validate_transition_matrix(np.full((N, N), 1 / N), network)
