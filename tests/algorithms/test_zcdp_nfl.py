import math

import networkx as nx
import numpy as np
import pytest
from scipy import stats

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.network import Network, paper_matrices
from dpverify.algorithms.core.problems import LocalData, Problem, ridge_solution
from dpverify.algorithms.zcdp_nfl.algorithm import (
    ClassicalGaussianSchedule,
    NoNoise,
    StepSchedule,
    ZcdpNflParams,
    ZcdpSchedule,
    lemma1_sensitivity,
    normalized_error,
    primal_update,
    run_zcdp_nfl,
    sensitivity_bound,
)

RIDGE = Problem("squared", "l2", 1.0)
LAD = Problem("absolute", "none", 1.0)


def small_network() -> Network:
    graph = nx.cycle_graph(6)
    graph.add_edge(0, 3)  # degrees 3, 2, 2, 3, 2, 2
    return Network.from_networkx(graph)


def small_data(seed: int = 0, agents: int = 6, samples: int = 10, dim: int = 3) -> LocalData:
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((agents, samples, dim))
    features /= np.maximum(1.0, np.linalg.norm(features, axis=-1, keepdims=True))  # ||x|| <= 1 (spec §6)
    targets = features @ rng.standard_normal(dim) + 0.1 * rng.standard_normal((agents, samples))
    return LocalData(features, targets)


def private_params(**overrides) -> ZcdpNflParams:
    values = dict(rho=0.5, step=StepSchedule(0.5, 0.5), c1=1.0, noise=ZcdpSchedule(0.05, 0.98))
    values.update(overrides)
    return ZcdpNflParams(**values)


# ----- schedules and calibrations -----
def test_step_schedule_values():
    assert StepSchedule(0.5).eta(4) == pytest.approx(0.25)
    assert StepSchedule(2.0, 0.0).eta(7) == 2.0
    assert StepSchedule(1.0, -1.0).eta(3) == 3.0
    with pytest.raises(InvalidParameterError):
        StepSchedule(0.0)
    with pytest.raises(InvalidParameterError, match=">= 1"):
        StepSchedule(1.0).eta(0)


def test_zcdp_schedule_budget_and_variance():
    schedule = ZcdpSchedule(0.1, 0.5)
    assert schedule.phi(1) == pytest.approx(0.1)
    assert schedule.phi(3) == pytest.approx(0.4)  # phi^(n+1) = phi^(n)/tau (App. C L373)
    assert schedule.phi(0) == pytest.approx(0.05)  # phi^(0) = tau phi1 (spec §2.6)
    np.testing.assert_allclose(schedule.variance(3, np.array([1.0, 2.0])), [1 / 0.8, 4 / 0.8])  # Delta^2/(2 phi)
    # Corollary closed form (L375) equals the direct sum over n = 1..T
    assert schedule.total_zcdp(10) == pytest.approx(sum(schedule.phi(n) for n in range(1, 11)), rel=1e-13)
    with pytest.raises(InvalidParameterError, match="open interval"):
        ZcdpSchedule(0.1, 1.0)
    assert ZcdpSchedule(0.1, 1.0, allow_constant=True).total_zcdp(10) == pytest.approx(1.0)


@pytest.mark.parametrize("tau", [0.9, 0.99])
def test_zcdp_schedule_from_privacy_target_composes_back_to_epsilon(tau):
    epsilon, delta, horizon = 2.0, 1e-3, 200
    schedule = ZcdpSchedule.from_privacy_target(epsilon, delta, tau, horizon)
    rho_total = schedule.total_zcdp(horizon)
    # Bun-Steinke Prop. 1.3 / seeds/004 Corollary: eps = rho + 2 sqrt(rho log(1/delta))
    assert rho_total + 2 * math.sqrt(rho_total * math.log(1 / delta)) == pytest.approx(epsilon, rel=1e-12)


def test_classical_gaussian_schedule_splits_epsilon_and_uses_the_classical_sigma():
    schedule = ClassicalGaussianSchedule(epsilon=2.0, delta=1e-3, tau=0.98, horizon=50)
    epsilons = np.array([schedule.epsilon_at(n) for n in range(1, 51)])
    assert epsilons.sum() == pytest.approx(2.0, rel=1e-12)
    np.testing.assert_allclose(epsilons[1:] / epsilons[:-1], 0.98**-0.5, rtol=1e-12)  # variance decays by tau
    expected_sigma = 0.3 * math.sqrt(2 * math.log(1.25 / (1e-3 / 50))) / epsilons[9]
    assert schedule.variance(10, np.array([0.3]))[0] == pytest.approx(expected_sigma**2, rel=1e-12)
    assert ClassicalGaussianSchedule(2.0, 1e-3, 1.0, 50).epsilon_at(7) == pytest.approx(2.0 / 50)
    with pytest.raises(InvalidParameterError, match="eps_n < 1"):
        ClassicalGaussianSchedule(epsilon=50.0, delta=1e-3, tau=0.98, horizon=10)


# ----- one step: closed form of (7) and Lemma I -----
def test_primal_update_satisfies_the_first_order_condition_of_subproblem_7():
    network = small_network()
    rng = np.random.default_rng(1)
    broadcast, dual, subgradient = (rng.standard_normal((2, 6, 3)) for _ in range(3))
    rho, eta = 0.7, 0.3
    primal = primal_update(broadcast, dual, subgradient, network, rho, eta)
    for r in range(2):  # explicit loops only in the test
        for k in range(6):
            gradient = (primal[r, k] - broadcast[r, k]) / eta + subgradient[r, k] + dual[r, k]
            for l in network.neighbors(k):
                gradient += 2 * rho * (primal[r, k] - (broadcast[r, k] + broadcast[r, l]) / 2)
            np.testing.assert_allclose(gradient, 0, atol=1e-10)


def test_primal_update_is_a_preconditioned_subgradient_step():
    # second form of spec §2.4: w = wt - [rho sum_l (wt_k - wt_l) + gamma + g] / (1/eta + 2 rho |N_k|)
    network = small_network()
    rng = np.random.default_rng(2)
    broadcast, dual, subgradient = (rng.standard_normal((3, 6, 2)) for _ in range(3))
    eta = np.linspace(0.1, 1.0, 6)  # per-client steps
    rho = 0.4
    denominator = (1 / eta + 2 * rho * network.degrees)[:, None]
    disagreement = network.laplacian @ broadcast
    expected = broadcast - (rho * disagreement + dual + subgradient) / denominator
    np.testing.assert_allclose(primal_update(broadcast, dual, subgradient, network, rho, eta), expected, atol=1e-13)


def test_sensitivity_bound_is_lemma_1():
    network, params = small_network(), private_params(rho=0.5, step=StepSchedule(0.5, 0.5), c1=2.0)
    eta = 0.5 / math.sqrt(4)
    expected = 2 * 2.0 / (10 * (2 * 0.5 * network.degrees + 1 / eta))
    np.testing.assert_allclose(sensitivity_bound(params, network, 10, 4), expected, rtol=1e-14)
    # n = 0 uses eta^(1) (spec §2.6)
    np.testing.assert_allclose(sensitivity_bound(params, network, 10, 0), sensitivity_bound(params, network, 10, 1))
    np.testing.assert_allclose(lemma1_sensitivity(0.5, 2.0, network, eta, 10), expected, rtol=1e-14)


def test_lemma_1_bound_is_attained_by_an_lad_canary():
    # LAD with ||x|| <= c1 = 1: the canary (x_c, +Y) vs (x_c, -Y), ||x_c|| = 1, Y large, flips the
    # per-sample subgradient from -x_c to +x_c, so ||w_D - w_D'|| = 2 c1/(M(2 rho |N_k| + 1/eta)) exactly.
    network, params = small_network(), private_params()
    data = small_data(3)
    canary = np.array([0.6, 0.8, 0.0])
    data_plus = data.replace_sample(0, 9, canary, 100.0)
    data_minus = data.replace_sample(0, 9, canary, -100.0)
    rng = np.random.default_rng(4)
    broadcast, dual = rng.standard_normal((1, 6, 3)), rng.standard_normal((1, 6, 3))
    n = 5
    eta = params.step.eta(n)
    updates = [
        primal_update(broadcast, dual, LAD.local_subgradient(broadcast, d), network, params.rho, eta)
        for d in (data_plus, data_minus)
    ]
    difference = np.linalg.norm(updates[0] - updates[1], axis=-1)[0]
    bound = sensitivity_bound(params, network, data.num_samples, n)
    assert difference[0] == pytest.approx(bound[0], rel=1e-12)
    np.testing.assert_allclose(difference[1:], 0, atol=1e-15)  # other agents' updates do not depend on D_0


# ----- full runs -----
def test_non_private_run_converges_to_the_centralized_ridge_solution():
    network, data = small_network(), small_data()
    params = ZcdpNflParams(rho=0.5, step=StepSchedule(0.5, 0.0), c1=1.0, noise=NoNoise())
    trajectory = run_zcdp_nfl(RIDGE, data, network, params, horizon=400, replicas=1, rng=np.random.default_rng(0))
    w_c = ridge_solution(RIDGE, data)
    np.testing.assert_allclose(trajectory.final_primal[0], np.tile(w_c, (6, 1)), atol=1e-6)
    errors = trajectory.normalized_error(w_c)
    assert errors[0, 0] == pytest.approx(6.0)  # w^(0) = 0: sum over K = 6 clients of ||w_c||^2/||w_c||^2
    assert errors[-1, 0] < 1e-12
    np.testing.assert_array_equal(trajectory.variances, 0)
    np.testing.assert_array_equal(trajectory.ledger.total_zcdp(), np.inf)  # non-private is recorded as such


def test_noise_variance_follows_the_explicit_schedule_of_spec_2_5():
    network, data = small_network(), small_data()
    phi1, tau, rho, c1, horizon = 0.05, 0.9, 0.5, 1.5, 12
    params = private_params(rho=rho, c1=c1, noise=ZcdpSchedule(phi1, tau))
    trajectory = run_zcdp_nfl(RIDGE, data, network, params, horizon=horizon, replicas=2, rng=np.random.default_rng(0))
    M = data.num_samples
    for n in range(1, horizon + 1):
        eta = params.step.eta(n)
        expected = 2 * c1**2 * tau ** (n - 1) / (phi1 * M**2 * (2 * rho * network.degrees + 1 / eta) ** 2)
        np.testing.assert_allclose(trajectory.variances[n], expected, rtol=1e-12)
    np.testing.assert_array_equal(trajectory.variances[0], 0)  # init_broadcast 'zero'
    # ledger: phi^(n) per release, total = phi1 (1 - tau^T)/(tau^(T-1) - tau^T) (App. C L375)
    expected_total = phi1 * (1 - tau**horizon) / (tau ** (horizon - 1) - tau**horizon)
    np.testing.assert_allclose(trajectory.ledger.total_zcdp(), expected_total, rtol=1e-12)
    assert [release.iteration for release in trajectory.ledger.releases] == list(range(1, horizon + 1))


def test_broadcast_noise_has_the_calibrated_variance():
    # chi-square test at 99.9% (two-sided, fixed seed) per agent at iteration 1, R d = 8000 draws.
    network, data = small_network(), small_data(dim=4)
    params = private_params()
    trajectory = run_zcdp_nfl(RIDGE, data, network, params, horizon=1, replicas=2000, rng=np.random.default_rng(8))
    noise = trajectory.broadcast[1] - trajectory.primal[1]
    samples = 2000 * 4
    low, high = stats.chi2.ppf([0.0005, 0.9995], samples)
    for agent in range(6):
        statistic = np.sum(noise[:, agent] ** 2) / trajectory.variances[1, agent]
        assert low < statistic < high


def test_dual_and_primal_updates_satisfy_the_network_form_16():
    # (16): fhat'(W^(n+1)) + alpha^(n) + 2 rho M W^(n+1) - rho L_+ tW^(n) = 0 and
    #       alpha^(n+1) - alpha^(n) - rho L_- tW^(n+1) = 0, alpha = stacked gamma (spec §2.6),
    # with fhat'(W) = (1/eta)(W - tW) + f'(tW): the gradient of (14) is 2 D^2 (x) I_P (W - tW), not 2 D (L172).
    network, data = small_network(), small_data()
    params = private_params()
    rho, horizon = params.rho, 6
    duals = []
    trajectory = run_zcdp_nfl(RIDGE, data, network, params, horizon=horizon, replicas=1, rng=np.random.default_rng(3),
                              observer=lambda n, w, wt, gamma: duals.append(gamma.copy()))
    matrices = paper_matrices(network, data.dim)
    stack = lambda array: array[0].reshape(-1)  # (1, N, d) -> (N d,), agent-major as in L150
    for n in range(horizon):
        W_next, tW, tW_next = stack(trajectory.primal[n + 1]), stack(trajectory.broadcast[n]), stack(trajectory.broadcast[n + 1])
        gradient = stack(RIDGE.local_subgradient(trajectory.broadcast[n], data))
        fhat_prime = (W_next - tW) / params.step.eta(n + 1) + gradient
        first = fhat_prime + stack(duals[n]) + 2 * rho * matrices.M @ W_next - rho * matrices.L_plus @ tW
        second = stack(duals[n + 1]) - stack(duals[n]) - rho * matrices.L_minus @ tW_next
        np.testing.assert_allclose(first, 0, atol=1e-10)
        np.testing.assert_allclose(second, 0, atol=1e-10)


def test_same_seed_reproduces_and_replicas_are_independent():
    network, data = small_network(), small_data()
    params = private_params()
    first = run_zcdp_nfl(LAD, data, network, params, horizon=20, replicas=3, rng=np.random.default_rng(42))
    second = run_zcdp_nfl(LAD, data, network, params, horizon=20, replicas=3, rng=np.random.default_rng(42))
    np.testing.assert_array_equal(first.broadcast, second.broadcast)
    np.testing.assert_array_equal(first.final_dual, second.final_dual)
    # Independence across replicas: standardized noise of replicas 0 and 1 over all (n, k, i), 20*6*3 = 360
    # pairs; under independence sqrt(360) * correlation ~ N(0, 1): two-sided 99.9% z-test.
    noise = (first.broadcast[1:] - first.primal[1:]) / np.sqrt(first.variances[1:, None, :, None])
    correlation = np.corrcoef(noise[:, 0].ravel(), noise[:, 1].ravel())[0, 1]
    assert abs(correlation) * math.sqrt(noise[:, 0].size) < stats.norm.ppf(0.9995)
    assert not np.allclose(first.broadcast[:, 0], first.broadcast[:, 1])


def test_keep_iterates_false_gives_the_same_final_state_and_feeds_the_observer():
    network, data = small_network(), small_data()
    params = private_params()
    kept = run_zcdp_nfl(RIDGE, data, network, params, horizon=8, replicas=2, rng=np.random.default_rng(9))
    seen = []
    lean = run_zcdp_nfl(RIDGE, data, network, params, horizon=8, replicas=2, rng=np.random.default_rng(9),
                        keep_iterates=False, observer=lambda n, w, wt, gamma: seen.append((n, w.copy(), wt.copy())))
    np.testing.assert_array_equal(kept.final_broadcast, lean.final_broadcast)
    assert [n for n, _, _ in seen] == list(range(9))
    for n, w, wt in seen:
        np.testing.assert_array_equal(w, kept.primal[n])
        np.testing.assert_array_equal(wt, kept.broadcast[n])
    with pytest.raises(InvalidParameterError, match="keep_iterates"):
        lean.transcript(0)


def test_transcript_messages_and_ergodic_average_come_from_the_broadcasts():
    network, data = small_network(), small_data()
    trajectory = run_zcdp_nfl(RIDGE, data, network, private_params(), horizon=5, replicas=2, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(trajectory.transcript(3), trajectory.broadcast[1:, :, 3].transpose(1, 0, 2))
    batch = trajectory.messages(2)
    assert batch.count == 2 * network.num_edges == 14
    for m, (sender, receiver) in enumerate(batch.pairs):
        assert network.adjacency[sender, receiver] == 1
        np.testing.assert_array_equal(batch.payload[:, m], trajectory.broadcast[2][:, sender])
    assert trajectory.messages(0).count == 0  # zero init is known to everyone: nothing is sent
    np.testing.assert_allclose(trajectory.ergodic_average(4), trajectory.broadcast[1:5].mean(axis=0), rtol=1e-15)
    np.testing.assert_allclose(
        trajectory.normalized_error(np.ones(3)), normalized_error(trajectory.primal, np.ones(3)), rtol=1e-15
    )


def test_noisy_initial_broadcast_uses_phi0_and_costs_no_privacy():
    network, data = small_network(), small_data()
    phi1, tau = 0.05, 0.9
    params = private_params(noise=ZcdpSchedule(phi1, tau), init_broadcast="noisy")
    trajectory = run_zcdp_nfl(RIDGE, data, network, params, horizon=3, replicas=2, rng=np.random.default_rng(1))
    initial_sensitivity = 2 * params.c1 / (data.num_samples * (2 * params.rho * network.degrees + 1 / params.step.eta(1)))
    np.testing.assert_allclose(trajectory.variances[0], initial_sensitivity**2 / (2 * tau * phi1), rtol=1e-12)
    assert not np.allclose(trajectory.broadcast[0], 0)
    initial_release = trajectory.ledger.releases[0]
    assert initial_release.iteration == 0
    np.testing.assert_array_equal(initial_release.zcdp, 0)  # w^(0) = 0 is data-independent
    np.testing.assert_allclose(trajectory.ledger.total_zcdp(), ZcdpSchedule(phi1, tau).total_zcdp(3), rtol=1e-12)
    assert trajectory.messages(0).count == 14


def test_subgradient_point_switch_only_matters_with_noise():
    network, data = small_network(), small_data()
    problem = Problem("squared", "elastic_net", 1.0, l1=0.1, l2=1.0)
    runs = {}
    for noise in ("none", "private"):
        for point in ("broadcast", "primal"):
            params = private_params(noise=NoNoise() if noise == "none" else ZcdpSchedule(0.05, 0.98), subgradient_point=point)
            runs[noise, point] = run_zcdp_nfl(problem, data, network, params, horizon=10, replicas=1,
                                              rng=np.random.default_rng(0)).final_primal
    np.testing.assert_array_equal(runs["none", "broadcast"], runs["none", "primal"])  # w = tilde w without noise
    assert np.abs(runs["private", "broadcast"] - runs["private", "primal"]).max() > 1e-6


def test_clip_switch_clips_per_sample_subgradients_to_c1():
    network, data = small_network(), small_data()
    data = LocalData(data.features, data.targets * 50)  # large residuals at w = 0
    c1 = 0.5
    params = private_params(c1=c1, noise=NoNoise(), clip=True)
    trajectory = run_zcdp_nfl(RIDGE, data, network, params, horizon=1, replicas=1, rng=np.random.default_rng(0))
    zero = np.zeros((1, 6, 3))
    expected = primal_update(zero, zero, RIDGE.local_subgradient(zero, data, clip=c1), network, params.rho, params.step.eta(1))
    np.testing.assert_allclose(trajectory.primal[1], expected, rtol=1e-14)


def test_classical_calibration_records_declared_epsilons_summing_to_epsilon():
    network, data = small_network(), small_data()
    schedule = ClassicalGaussianSchedule(epsilon=2.0, delta=1e-3, tau=0.98, horizon=15)
    trajectory = run_zcdp_nfl(LAD, data, network, private_params(noise=schedule), horizon=15, replicas=1,
                              rng=np.random.default_rng(0))
    np.testing.assert_allclose(trajectory.ledger.total_epsilon(), 2.0, rtol=1e-12)
    np.testing.assert_allclose(trajectory.ledger.total_delta(), 1e-3, rtol=1e-12)


def test_invalid_inputs_are_rejected():
    network, data = small_network(), small_data(agents=5)
    with pytest.raises(InvalidDataError, match="N = 5 agents but the network has 6"):
        run_zcdp_nfl(RIDGE, data, network, private_params(), horizon=2, replicas=1, rng=np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="rho"):
        private_params(rho=-1.0)
    with pytest.raises(InvalidParameterError, match="init_broadcast"):
        private_params(init_broadcast="random")
    with pytest.raises(InvalidParameterError, match="NoiseCalibration"):
        private_params(noise=0.1)
    with pytest.raises(InvalidParameterError, match="horizon"):
        run_zcdp_nfl(RIDGE, small_data(), network, private_params(), horizon=0, replicas=1, rng=np.random.default_rng(0))
