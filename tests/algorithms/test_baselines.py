import networkx as nx
import numpy as np
import pytest

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.network import Network, metropolis_weights
from dpverify.algorithms.core.problems import LocalData, Problem, ridge_solution
from dpverify.algorithms.zcdp_nfl.algorithm import NoNoise, ZcdpSchedule
from dpverify.algorithms.zcdp_nfl.baselines.p_admm import (
    IMPLEMENTATION,
    LinearDecayZcdpSchedule,
    PAdmmParams,
    p_admm_sensitivity,
    run_p_admm,
)
from dpverify.algorithms.zcdp_nfl.baselines.subgradient_nfl import (
    SubgradientNflParams,
    run_subgradient_nfl,
)

RIDGE = Problem("squared", "l2", 1.0)
LAD = Problem("absolute", "none", 1.0)


def small_network() -> Network:
    graph = nx.cycle_graph(6)
    graph.add_edge(0, 3)
    return Network.from_networkx(graph)


def small_data(seed: int = 0, agents: int = 6, samples: int = 10, dim: int = 3) -> LocalData:
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((agents, samples, dim))
    features /= np.maximum(1.0, np.linalg.norm(features, axis=-1, keepdims=True))
    targets = features @ rng.standard_normal(dim) + 0.1 * rng.standard_normal((agents, samples))
    return LocalData(features, targets)


# ----- zCDP-grad-NFL -----
def test_subgradient_nfl_first_two_steps_by_hand():
    network, data = small_network(), small_data()
    alpha = 0.1
    trajectory = run_subgradient_nfl(LAD, data, network, SubgradientNflParams(alpha, 1.0, NoNoise()), horizon=2,
                                     replicas=1, rng=np.random.default_rng(0))
    zero = np.zeros((1, 6, 3))
    first = -alpha * LAD.local_subgradient(zero, data)  # mixing of zeros is zero
    np.testing.assert_allclose(trajectory.primal[1], first, rtol=1e-15)
    weights = metropolis_weights(network)
    second = np.stack([weights @ first[0]]) - alpha * LAD.local_subgradient(first, data)
    np.testing.assert_allclose(trajectory.primal[2], second, rtol=1e-14)


def test_subgradient_nfl_noise_calibration_and_ledger():
    network, data = small_network(), small_data()
    alpha, c1, phi1, tau, horizon = 0.05, 1.0, 0.02, 0.95, 10
    params = SubgradientNflParams(alpha, c1, ZcdpSchedule(phi1, tau))
    trajectory = run_subgradient_nfl(LAD, data, network, params, horizon=horizon, replicas=2, rng=np.random.default_rng(0))
    sensitivity = 2 * alpha * c1 / data.num_samples  # spec §2.10 A4
    for n in range(1, horizon + 1):
        np.testing.assert_allclose(trajectory.variances[n], sensitivity**2 / (2 * phi1 * tau ** -(n - 1)), rtol=1e-12)
    np.testing.assert_allclose(trajectory.ledger.total_zcdp(), ZcdpSchedule(phi1, tau).total_zcdp(horizon), rtol=1e-12)
    assert trajectory.final_dual is None
    assert trajectory.algorithm == "zcdp-grad-nfl"


def test_subgradient_nfl_decaying_step():
    params = SubgradientNflParams(0.4, 1.0, NoNoise(), power=0.5)
    assert params.alpha(4) == pytest.approx(0.2)
    with pytest.raises(InvalidParameterError):
        SubgradientNflParams(0.0, 1.0, NoNoise())


# ----- P-ADMM (surrogate) -----
def test_p_admm_is_labelled_as_the_surrogate():
    assert IMPLEMENTATION == "surrogate"
    trajectory = run_p_admm(RIDGE, small_data(), small_network(), PAdmmParams(0.5, 1.0, NoNoise()), horizon=1,
                            replicas=1, rng=np.random.default_rng(0))
    assert trajectory.algorithm == "p-admm (surrogate)"
    assert "surrogate" in trajectory.ledger.releases[0].label


def test_non_private_p_admm_converges_to_the_centralized_ridge_solution():
    network, data = small_network(), small_data()
    trajectory = run_p_admm(RIDGE, data, network, PAdmmParams(0.5, 1.0, NoNoise()), horizon=300, replicas=1,
                            rng=np.random.default_rng(0))
    w_c = ridge_solution(RIDGE, data)
    np.testing.assert_allclose(trajectory.final_primal[0], np.tile(w_c, (6, 1)), atol=1e-8)


def test_p_admm_primal_is_the_exact_argmin_of_eq_3():
    # gradient of f_k(w) + w^T gamma + rho sum_l ||w - (wt_k + wt_l)/2||^2 vanishes at w_k^(n)
    network, data = small_network(), small_data()
    rho = 0.5
    duals = []
    trajectory = run_p_admm(RIDGE, data, network, PAdmmParams(rho, 1.0, ZcdpSchedule(0.05, 0.9)), horizon=3, replicas=1,
                            rng=np.random.default_rng(0), observer=lambda n, w, wt, gamma: duals.append(gamma.copy()))
    for n in range(1, 4):
        primal, broadcast, dual = trajectory.primal[n][0], trajectory.broadcast[n - 1][0], duals[n - 1][0]
        gradient = RIDGE.local_subgradient(primal[None], data)[0] + dual
        for k in range(6):  # loop only in the test
            for l in network.neighbors(k):
                gradient[k] += 2 * rho * (primal[k] - (broadcast[k] + broadcast[l]) / 2)
        np.testing.assert_allclose(gradient, 0, atol=1e-12)


def test_p_admm_sensitivity_derivation_holds_on_neighbouring_datasets():
    # ||w_D - w_D'|| <= ||l'(x', y'; w_D) - l'(x, y; w_D)|| / (M mu), mu = 2 lam/K + 2 rho |N_k|,
    # the step of the module docstring before Assumption 1 is applied.
    network, data = small_network(), small_data()
    neighbour = data.replace_sample(2, 4, np.array([0.0, 0.6, 0.8]), 3.0)
    params = PAdmmParams(0.5, 1.0, NoNoise())
    runs = [run_p_admm(RIDGE, d, network, params, horizon=1, replicas=1, rng=np.random.default_rng(0)) for d in (data, neighbour)]
    w_data, w_neighbour = runs[0].primal[1][0, 2], runs[1].primal[1][0, 2]
    W = runs[0].primal[1]
    gradient_gap = np.linalg.norm(
        RIDGE.per_sample_subgradients(W, neighbour)[0, 2, 4] - RIDGE.per_sample_subgradients(W, data)[0, 2, 4]
    )
    mu = 2 * RIDGE.lam / 6 + 2 * params.rho * network.degrees[2]
    assert 0 < np.linalg.norm(w_data - w_neighbour) <= gradient_gap / (data.num_samples * mu) * (1 + 1e-12)
    np.testing.assert_allclose(
        p_admm_sensitivity(params, RIDGE, network, data.num_samples),
        2 * 1.0 / (data.num_samples * (2 * RIDGE.lam / 6 + 2 * params.rho * network.degrees)),
        rtol=1e-14,
    )


def test_linear_decay_schedule_spends_the_matched_total_with_linear_variance():
    zcdp_schedule, horizon = ZcdpSchedule(0.01, 0.95), 20
    schedule = LinearDecayZcdpSchedule.matching(zcdp_schedule, horizon)
    assert sum(schedule.phi(n) for n in range(1, horizon + 1)) == pytest.approx(zcdp_schedule.total_zcdp(horizon), rel=1e-12)
    variances = np.array([schedule.variance(n, np.array([0.3]))[0] for n in range(1, horizon + 1)])
    steps = np.diff(variances)
    np.testing.assert_allclose(steps, steps[0], rtol=1e-10)  # linear in n
    assert steps[0] < 0 and variances[-1] == pytest.approx(variances[0] / horizon)
    with pytest.raises(InvalidParameterError, match="iteration must lie in"):
        schedule.phi(horizon + 1)


def test_private_p_admm_ledger_matches_the_budget():
    network, data = small_network(), small_data()
    schedule = LinearDecayZcdpSchedule(0.5, 10)
    params = PAdmmParams(0.5, 1.0, schedule)
    trajectory = run_p_admm(RIDGE, data, network, params, horizon=10, replicas=2, rng=np.random.default_rng(0))
    np.testing.assert_allclose(trajectory.ledger.total_zcdp(), 0.5, rtol=1e-12)
    sensitivity = p_admm_sensitivity(params, RIDGE, network, data.num_samples)
    np.testing.assert_allclose(trajectory.variances[10], sensitivity**2 / (2 * schedule.phi(10)), rtol=1e-12)


def test_p_admm_rejects_non_ridge_problems():
    with pytest.raises(InvalidParameterError, match="ridge regression only"):
        run_p_admm(LAD, small_data(), small_network(), PAdmmParams(0.5, 1.0, NoNoise()), horizon=1, replicas=1,
                   rng=np.random.default_rng(0))
