import numpy as np
import pytest

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.problems import (
    LocalData,
    Problem,
    boyd_l1_weight,
    prox_elastic_net,
    prox_l1,
    prox_squared_l2,
    ridge_solution,
)


def random_data(seed: int = 0, agents: int = 4, samples: int = 6, dim: int = 3) -> LocalData:
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((agents, samples, dim))
    targets = features @ rng.standard_normal(dim) + 0.1 * rng.standard_normal((agents, samples))
    return LocalData(features, targets)


def tiny_data() -> LocalData:
    # agent 0: x = (1, 0), (0, 1), y = 1, 2; agent 1: x = (1, 1), (2, 0), y = 0, 1
    return LocalData(np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [2.0, 0.0]]]), np.array([[1.0, 2.0], [0.0, 1.0]]))


def test_local_data_validation_names_the_shapes():
    with pytest.raises(InvalidDataError, match=r"targets must have shape \(N, M\) = \(2, 3\).*got \(2, 4\)"):
        LocalData(np.zeros((2, 3, 4)), np.zeros((2, 4)))
    with pytest.raises(InvalidDataError, match="finite"):
        LocalData(np.full((2, 3, 4), np.nan), np.zeros((2, 3)))
    with pytest.raises(InvalidDataError, match=r"\(N, M, d\)"):
        LocalData(np.zeros((2, 3)), np.zeros((2, 3)))


def test_replace_sample_changes_exactly_one_sample_of_one_agent():
    data = random_data()
    neighbour = data.replace_sample(2, 5, np.array([1.0, 2.0, 3.0]), 7.0)
    changed = np.argwhere(np.any(data.features != neighbour.features, axis=-1) | (data.targets != neighbour.targets))
    np.testing.assert_array_equal(changed, [[2, 5]])
    np.testing.assert_array_equal(neighbour.features[2, 5], [1.0, 2.0, 3.0])
    assert neighbour.targets[2, 5] == 7.0
    assert data.targets[2, 5] != 7.0  # original untouched
    with pytest.raises(InvalidDataError):
        data.replace_sample(4, 0, np.zeros(3), 0.0)


def test_stacked_is_agent_major():
    data = tiny_data()
    X, y = data.stacked()
    np.testing.assert_array_equal(X, [[1, 0], [0, 1], [1, 1], [2, 0]])
    np.testing.assert_array_equal(y, [1, 2, 0, 1])
    assert (data.num_agents, data.num_samples, data.dim) == (2, 2, 2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(loss="hinge", regularizer="none", lam=1.0), "loss must be one of"),
        (dict(loss="squared", regularizer="l3", lam=1.0), "regularizer must be one of"),
        (dict(loss="squared", regularizer="l2", lam=0.0), "lam must be a finite number > 0"),
        (dict(loss="squared", regularizer="elastic_net", lam=1.0, l1=-1.0, l2=1.0), "l1 must be finite and >= 0"),
        (dict(loss="squared", regularizer="l2", lam=1.0, l1=0.5), "only apply to regularizer='elastic_net'"),
        (dict(loss="squared", regularizer="elastic_net", lam=1.0), "l1 > 0 or l2 > 0"),
    ],
)
def test_problem_validation(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        Problem(**kwargs)


def test_problem_names_and_smoothness():
    assert Problem("squared", "l2", 1.0).name == "ridge"
    assert Problem("absolute", "none", 1.0).name == "lad"
    assert Problem("squared", "elastic_net", 1.0, l1=0.1, l2=1.0).name == "elastic_net"
    assert Problem("squared", "l2", 1.0).smooth
    assert not Problem("absolute", "none", 1.0).smooth
    assert not Problem("squared", "elastic_net", 1.0, l1=0.1, l2=1.0).smooth


def test_objective_hand_values():
    data = tiny_data()
    W = np.array([[1.0, 1.0], [0.5, -1.0]])
    # agent 0: residuals (1-1, 1-2) = (0, -1); agent 1: residuals (0.5-1-0, 1-1) = (-0.5, 0)
    # ridge, lam = 2, K = 2: f = (0 + 1)/2 + 2*2/2 + (0.25 + 0)/2 + 2*1.25/2 = 0.5 + 2 + 0.125 + 1.25
    assert Problem("squared", "l2", 2.0).objective(W, data) == pytest.approx(3.875, abs=1e-14)
    # LAD: (0 + 1)/2 + (0.5 + 0)/2 = 0.75
    assert Problem("absolute", "none", 1.0).objective(W, data) == pytest.approx(0.75, abs=1e-14)
    # elastic net lam = 1, l1 = 0.5, l2 = 2: R(w0) = 0.5*2 + 2*2 = 5, R(w1) = 0.5*1.5 + 2*1.25 = 3.25
    elastic = Problem("squared", "elastic_net", 1.0, l1=0.5, l2=2.0)
    assert elastic.objective(W, data) == pytest.approx(0.5 + 0.125 + (5 + 3.25) / 2, abs=1e-14)
    # batched: (R, N, d) -> (R,)
    np.testing.assert_allclose(Problem("absolute", "none", 1.0).objective(np.stack([W, 0 * W]), data), [0.75, 2.0])


def test_centralized_objective_equals_objective_at_consensus():
    data, problem = random_data(), Problem("squared", "l2", 0.7)
    w = np.random.default_rng(1).standard_normal((5, 3))
    consensus = np.repeat(w[:, None, :], data.num_agents, axis=1)
    np.testing.assert_allclose(problem.centralized_objective(w, data), problem.objective(consensus, data), rtol=1e-14)


@pytest.mark.parametrize(
    "problem",
    [Problem("squared", "l2", 0.7), Problem("squared", "elastic_net", 0.7, l1=0.3, l2=1.0), Problem("squared", "none", 1.0)],
)
def test_subgradient_matches_central_finite_differences_on_smooth_points(problem):
    data = random_data(2)
    W = np.random.default_rng(3).uniform(0.5, 1.5, size=(data.num_agents, data.dim))  # away from w_i = 0
    gradient = problem.local_subgradient(W, data)
    step = 1e-6
    numeric = np.zeros_like(W)
    for index in np.ndindex(W.shape):  # loop only in the test
        shift = np.zeros_like(W)
        shift[index] = step
        numeric[index] = (problem.objective(W + shift, data) - problem.objective(W - shift, data)) / (2 * step)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-7, atol=1e-7)


def test_lad_per_sample_subgradient_hand_values():
    data = LocalData(np.array([[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]]), np.array([[1.0, 3.0, 5.0]]))
    W = np.array([[[1.0, 1.0]]])  # x^T w = 3: residuals 2, 0, -2
    per_sample = Problem("absolute", "none", 1.0).per_sample_subgradients(W, data)
    np.testing.assert_array_equal(per_sample[0, 0], [[1.0, 2.0], [0.0, 0.0], [-1.0, -2.0]])  # sign(0) = 0
    np.testing.assert_array_equal(Problem("absolute", "none", 1.0).local_subgradient(W, data), [[[0.0, 0.0]]])


def test_regularizer_subgradients_hand_values():
    W = np.array([[[2.0, -1.0, 0.0]]])
    np.testing.assert_array_equal(Problem("squared", "l2", 1.0).regularizer_subgradient(W), [[[4.0, -2.0, 0.0]]])
    np.testing.assert_array_equal(
        Problem("squared", "elastic_net", 1.0, l1=0.5, l2=1.0).regularizer_subgradient(W), [[[4.5, -2.5, 0.0]]]
    )
    np.testing.assert_array_equal(Problem("absolute", "none", 1.0).regularizer_subgradient(W), np.zeros((1, 1, 3)))


def loop_local_subgradient(problem, W, data, clip=None):
    """Reference implementation with explicit loops over replicas, agents and samples."""
    result = np.zeros_like(W)
    for r in range(W.shape[0]):
        for k in range(data.num_agents):
            total = np.zeros(data.dim)
            for j in range(data.num_samples):
                x, y = data.features[k, j], data.targets[k, j]
                residual = x @ W[r, k] - y
                sample = 2 * residual * x if problem.loss == "squared" else np.sign(residual) * x
                norm = np.linalg.norm(sample)
                if clip is not None and norm > clip:
                    sample = sample * clip / norm
                total += sample
            w = W[r, k]
            reg = {"none": 0 * w, "l2": 2 * w, "elastic_net": problem.l1 * np.sign(w) + 2 * problem.l2 * w}[problem.regularizer]
            result[r, k] = total / data.num_samples + problem.lam / data.num_agents * reg
    return result


@pytest.mark.parametrize(
    "problem",
    [Problem("squared", "l2", 0.7), Problem("absolute", "none", 1.0), Problem("squared", "elastic_net", 2.0, l1=0.3, l2=1.0)],
)
@pytest.mark.parametrize("clip", [None, 0.5])
def test_local_subgradient_equals_explicit_loop(problem, clip):
    data = random_data(4)
    W = np.random.default_rng(5).standard_normal((3, data.num_agents, data.dim))
    np.testing.assert_allclose(problem.local_subgradient(W, data, clip), loop_local_subgradient(problem, W, data, clip),
                               rtol=1e-12, atol=1e-13)


def test_clipped_per_sample_norms_do_not_exceed_clip():
    data = random_data(6)
    problem = Problem("squared", "none", 1.0)
    W = 10 * np.ones((1, data.num_agents, data.dim))
    unclipped_norms = np.linalg.norm(problem.per_sample_subgradients(W, data), axis=-1)
    assert unclipped_norms.min() > 0.5  # every sample is clipped at this W
    # with every sample clipped to 0.5, each agent's mean has norm <= 0.5
    assert np.linalg.norm(problem.loss_subgradient(W, data, clip=0.5), axis=-1).max() <= 0.5 + 1e-12


def test_proximal_operators_hand_values_and_optimality():
    v = np.array([3.0, -0.5, 1.0])
    np.testing.assert_allclose(prox_l1(v, 1.0), [2.0, 0.0, 0.0])
    np.testing.assert_allclose(prox_squared_l2(v, 1.0), v / 3)
    x = prox_elastic_net(v, 1.0, 1.0, 1.0)
    np.testing.assert_allclose(x, [2 / 3, 0.0, 0.0])
    # optimality: 0 in t(l1 d|x| + 2 l2 x) + x - v; for x = 0 need |v| <= t l1
    np.testing.assert_allclose(1.0 * (1.0 * np.sign(x[0]) + 2 * x[0]) + x[0] - v[0], 0, atol=1e-15)
    assert np.all(np.abs(v[1:]) <= 1.0)
    with pytest.raises(InvalidParameterError):
        prox_l1(v, -1.0)


def test_boyd_l1_weight_is_one_thousandth_of_the_sup_norm_of_Xty():
    data = tiny_data()
    # X^T y = (1*1 + 0 + 0 + 2*1, 0 + 1*2 + 0 + 0) = (3, 2)
    assert boyd_l1_weight(data) == pytest.approx(0.003, abs=1e-16)


def test_ridge_solution_zeroes_the_gradient_of_the_centralized_objective():
    data, problem = random_data(7), Problem("squared", "l2", 0.3)
    w = ridge_solution(problem, data)
    consensus = np.repeat(w[None, None, :], data.num_agents, axis=1)
    np.testing.assert_allclose(problem.local_subgradient(consensus, data).sum(axis=1), 0, atol=1e-12)
    with pytest.raises(InvalidParameterError):
        ridge_solution(Problem("absolute", "none", 1.0), data)
