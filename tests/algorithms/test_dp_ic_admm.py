"""DP-IC-ADMM (algorithms/dp_recal/baselines/dp_ic_admm.py, reconstructed without its source): convergence to the
certified x*, each step solves the linearized subproblem it states (checked by its optimality condition),
the sensitivity bounds a replace-one change, message counts in closed form, registration."""

import networkx as nx
import numpy as np
import pytest

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.baselines import dp_common, dp_ic_admm
from dpverify.algorithms.dp_recal.baselines.comparison import COMPARED, DISPLAY_NAMES
from dpverify.algorithms.dp_recal.composite import CompositeProblem
from dpverify.theory.dp_recal.composite_ground_truth import solve_composite

N, M, Q = 6, 12, 3


def _setup(graph=None, loss="linear"):
    rng = np.random.default_rng(1)
    data = LocalData(rng.uniform(0, 1, (N, M, Q)), rng.choice([-1.0, 1.0], (N, M), p=[0.2, 0.8]))
    return data, CompositeProblem(loss, lasso=0.02), Network.from_networkx(graph or nx.cycle_graph(N))


@pytest.mark.parametrize("graph, iterations, tolerance", [(nx.cycle_graph(N), 100, 1e-13), (nx.complete_graph(N), 200, 1e-13)])
def test_non_private_ic_admm_reaches_the_certified_minimizer(graph, iterations, tolerance):
    data, problem, network = _setup(graph)
    truth = solve_composite(problem, data)
    assert truth.certified(1e-12)
    np.testing.assert_allclose(truth.x, [0.01788112, 0.05228063, 0.09756701], atol=1e-8)  # x* != 0 on this instance
    x1 = 0.1 * np.random.default_rng(2).standard_normal(Q)
    run = dp_ic_admm.run(problem, data, network, epsilon=None, plf=iterations, decay=1.0, clip=None, replicas=2,
                         rng=np.random.default_rng(3), x1=x1)
    error = np.linalg.norm(run.x_history[-1] - truth.x, axis=-1) / np.linalg.norm(x1 - truth.x)
    assert np.all(error < tolerance), error     # measured: 3.2e-14 (ring, K = 100), 1.8e-14 (complete, K = 200)
    assert run.sigma1 == 0.0 and run.settings["reconstructed_without_source"] is True


def test_one_step_satisfies_the_optimality_condition_of_the_linearized_subproblem():
    """0 in grad f_i(x_i) + p_i + beta_i (x - x_i) + 2c sum_j (x - (x_i + x_j)/2) + d r(x), written out per
    agent with a loop (r = ridge ||x||^2 + lasso ||x||_1, per agent); p^0 = 0."""
    data, problem, network = _setup()
    rng = np.random.default_rng(4)
    x1 = rng.standard_normal(Q)
    c = 1.7
    run = dp_ic_admm.run(problem, data, network, epsilon=None, plf=1, decay=1.0, clip=None, replicas=1,
                         rng=np.random.default_rng(0), x1=x1, stepsize=1 / c)
    beta = problem.lipschitz_constants(data)
    X0 = np.tile(x1, (N, 1))
    gradients = problem.local_gradients(X0, data)
    # the run reports the mean over agents; recover each agent's x_i^1 by redoing the step per agent
    worst = 0.0
    X1 = np.empty_like(X0)
    for i in range(N):
        neighbours = network.neighbors(i)
        smooth = lambda x: gradients[i] + beta[i] * (x - X0[i]) + 2 * c * sum(x - (X0[i] + X0[j]) / 2 for j in neighbours)  # noqa: E731
        # closed form of the module, then its optimality residual checked independently below
        mu = beta[i] + 2 * c * len(neighbours)
        v = (beta[i] * X0[i] + c * sum(X0[i] + X0[j] for j in neighbours) - gradients[i]) / mu
        X1[i] = np.sign(v) * np.maximum(np.abs(v) - problem.lasso / mu, 0) / (1 + 2 * problem.ridge / mu)
        g = smooth(X1[i]) + 2 * problem.ridge * X1[i]
        nonzero = X1[i] != 0
        worst = max(worst, np.max(np.abs(g[nonzero] + problem.lasso * np.sign(X1[i][nonzero])), initial=0.0))
        assert np.all(np.abs(g[~nonzero]) <= problem.lasso + 1e-12)
    assert worst < 1e-12
    np.testing.assert_allclose(run.x_history[1, 0], X1.mean(axis=0), rtol=1e-13, atol=1e-15)


def test_sensitivity_bounds_a_replace_one_change_of_one_step():
    data, problem, network = _setup()
    c, clip = 1.3, 0.4
    rng = np.random.default_rng(5)
    x1 = rng.standard_normal(Q)
    beta = problem.lipschitz_constants(data)   # public constants, held fixed on both datasets (module docstring)
    bound = dp_ic_admm.linearized_sensitivity(problem, data, network, c, clip, "per_sample")
    worst = 0.0
    for index in range(4):
        neighbour = data.replace_sample(0, index, rng.uniform(0, 3, Q), -data.targets[0, index])
        steps = [dp_ic_admm.run(problem, d, network, epsilon=None, plf=1, decay=1.0, clip=clip, replicas=1,
                                rng=np.random.default_rng(0), x1=x1, stepsize=1 / c, proximal_weight=beta)
                 for d in (data, neighbour)]
        # agent 0's x^1 moves N times the mean's change (the other agents' steps do not use agent 0's data)
        worst = max(worst, N * np.linalg.norm(steps[0].x_history[1, 0] - steps[1].x_history[1, 0]))
    assert 0 < worst <= bound
    L = problem.lipschitz_constants(data)
    assert dp_ic_admm.linearized_sensitivity(problem, data, network, c, clip, "assumption3") == pytest.approx(
        2 * clip / np.min(L + 2 * c * 2 + 2 * problem.ridge))


@pytest.mark.parametrize("graph, edges", [(nx.cycle_graph(N), N), (nx.complete_graph(N), N * (N - 1) // 2)])
def test_messages_plf_and_noise_schedule(graph, edges):
    data, problem, network = _setup(graph)
    run = COMPARED["dp-ic-admm-25"](problem, data, network, epsilon=2.0, delta=1e-3, plf=15, decay=1.1, clip=1.0,
                                    replicas=3, rng=np.random.default_rng(1))
    assert DISPLAY_NAMES["dp-ic-admm-25"] == dp_ic_admm.NAME
    assert np.all(run.messages == 15 * 2 * edges) and np.all(run.plf == 15) and np.all(run.iterations == 15)
    assert run.settings["messages_per_iteration"] == 2 * edges and run.x_history.shape == (16, 3, Q)
    sensitivity = dp_ic_admm.linearized_sensitivity(problem, data, network, run.settings["penalty"], 1.0, "assumption3")
    assert run.sigma1 == pytest.approx(dp_common.calibrated_sigma1(2.0, 1e-3, 1.1, np.full(15, sensitivity)), rel=1e-12)
