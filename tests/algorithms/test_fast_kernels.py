"""The hot-path kernels of issue 17 against straightforward formulations (loops, einsum, x**3) on small random
instances, to 1e-12: mixing, blocked regret gradients and loss subgradients, the shared neighbour product of
zCDP-NFL, cubes as products, consensus moments, and the cheap validation of the noise mechanisms."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse

from dpverify.algorithms.core import blocking, mixing
from dpverify.algorithms.core.blocking import row_blocks
from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.mixing import agent_major, mix, mix_per_link, mixing_operator
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.noise import (
    PrivacyLedger,
    gaussian_mechanism,
    gaussian_release,
    gaussian_releases,
    laplace_mechanism,
)
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.algorithms.dpdo_nc.algorithm import localization_instance
from dpverify.algorithms.wang_basar.algorithm import consensus_moments
from dpverify.algorithms.wang_basar.problems import Estimation, Ica, QuarticMaximumTest
from dpverify.algorithms.zcdp_nfl.algorithm import (
    StepSchedule,
    ZcdpNflParams,
    ZcdpSchedule,
    dual_update,
    neighbour_pull,
    noisy_broadcast,
    primal_update,
    run_zcdp_nfl,
    sensitivity_bound,
)

RTOL = 1e-12


def close(fast, slow):
    """Agreement to 1e-12 relative to the array's scale (elementwise relative error is meaningless near 0)."""
    fast, slow = np.asarray(fast), np.asarray(slow)
    assert fast.shape == slow.shape
    assert np.max(np.abs(fast - slow), initial=0.0) <= RTOL * max(np.max(np.abs(slow), initial=0.0), 1e-300)


def weight_matrices(rng, n):
    """A dense random matrix and a sparse one (a ring: most weights are exact zeros)."""
    ring = sum(np.roll(np.eye(n), shift, axis=1) for shift in (-1, 0, 1)) / 3.0
    return [rng.random((n, n)), ring]


@pytest.fixture(autouse=True)
def tiny_blocks(monkeypatch):
    """Blocks of a few rows, so every blocked kernel here runs over several blocks and a partial last one."""
    monkeypatch.setattr(blocking, "BLOCK_ELEMENTS", 50)


@pytest.mark.parametrize("n", [2, 5, 13])
def test_mix_is_the_neighbour_sum(n):
    rng = np.random.default_rng(n)
    states = rng.standard_normal((7, n, 3))
    for weights in weight_matrices(rng, n):
        loop = np.array([[sum(weights[i, j] * states[r, j] for j in range(n)) for i in range(n)] for r in range(7)])
        close(mix(weights, states), loop)
        close(mix(weights, states), np.einsum("ij,rjd->rid", weights, states))
        sparse = scipy.sparse.csr_array(weights)
        close(mix(sparse, states), loop)                                       # state stored replica-major
        close(mix(sparse, agent_major(states)), loop)                          # agent-major: views, no copy
        close(mix(sparse, states[None]), loop[None])                           # any leading axes
        out = np.empty_like(states)
        assert mix(sparse, states, out=out) is out
        close(out, loop)


def test_mixing_operator_is_sparse_only_for_sparse_weights_and_large_products(monkeypatch):
    monkeypatch.setattr(mixing, "SPARSE_MIN_SIZE", 100)
    rng = np.random.default_rng(1)
    ring = sum(np.roll(np.eye(20), shift, axis=1) for shift in (-1, 1))     # 40 of 400 weights nonzero: 10%
    assert scipy.sparse.issparse(mixing_operator(ring, columns=5))            # 20 * 5 = 100 entries
    assert not scipy.sparse.issparse(mixing_operator(ring, columns=4))        # 80 < 100: dense
    ring[0, 10] = 1.0                                                         # 41 nonzero: above 10%
    assert not scipy.sparse.issparse(mixing_operator(ring, columns=5))
    dense = rng.random((20, 20))
    operator = mixing_operator(dense, columns=1000)
    assert not scipy.sparse.issparse(operator)
    np.testing.assert_array_equal(operator, dense)


@pytest.mark.parametrize("n", [2, 6])
def test_mix_per_link_weighs_what_each_receiver_got(n):
    rng = np.random.default_rng(n)
    messages = rng.standard_normal((4, n, n, 2))   # (R, receiver, sender, d)
    for weights in weight_matrices(rng, n):
        loop = np.array([[sum(weights[i, j] * messages[r, i, j] for j in range(n)) for i in range(n)] for r in range(4)])
        close(mix_per_link(weights, messages), loop)


@pytest.mark.parametrize("rows, per_row", [(0, 3), (1, 3), (17, 3), (17, 1000), (5, 0)])
def test_row_blocks_cover_every_row_once(rows, per_row):
    blocks = row_blocks(rows, per_row)
    covered = np.concatenate([np.arange(rows)[b] for b in blocks]) if blocks else np.array([], dtype=int)
    np.testing.assert_array_equal(covered, np.arange(rows))
    assert all(b.stop - b.start <= max(1, blocking.BLOCK_ELEMENTS // max(1, per_row)) for b in blocks)


@pytest.mark.parametrize("layout", ["paper", "distinct"])
def test_localization_gradients_equal_per_node_sums(layout):
    instance = localization_instance(np.random.default_rng(3), 4, num_agents=5, sensor_layout=layout)
    x = np.random.default_rng(4).uniform(-1, 2, (9, 5, 2))
    x[0, 0] = instance.sensors[0]                      # at a sensor: the gradient is 0 there (spec P17)
    t = 3
    loop = np.array([[sum(instance.node_gradient(t, j, x[r, i]) for j in range(5)) for i in range(5)] for r in range(9)])
    close(instance.global_gradient(t, x), loop)
    close(instance.global_gradient(t, x[None]), loop[None])          # any leading axes
    own = np.array([[instance.node_gradient(t, i, x[r, i]) for i in range(5)] for r in range(9)])
    close(instance.own_gradient(t, x), own)


def _data(rng, agents=4, samples=6, dim=3):
    return LocalData(rng.uniform(-1, 1, (agents, samples, dim)), rng.standard_normal((agents, samples)))


@pytest.mark.parametrize("problem", [Problem("absolute", "none", 1.0), Problem("squared", "l2", 0.5)])
@pytest.mark.parametrize("clip", [None, 0.3])
def test_loss_subgradient_is_the_mean_of_per_sample_subgradients(problem, clip):
    rng = np.random.default_rng(5)
    data = _data(rng)
    W = rng.standard_normal((2, 5, 4, 3))            # (T, R, N, d): blocks cut across the leading axes
    expected = np.zeros_like(W)
    for index in np.ndindex(W.shape[:2]):
        for k in range(4):
            for j in range(6):
                residual = data.features[k, j] @ W[index][k] - data.targets[k, j]
                g = (2 * residual if problem.loss == "squared" else np.sign(residual)) * data.features[k, j]
                if clip is not None:
                    g = g * min(1.0, clip / max(np.linalg.norm(g), np.finfo(float).tiny))
                expected[index][k] += g / 6
    close(problem.loss_subgradient(W, data, clip), expected)


def test_shared_neighbour_product_gives_the_updates_that_compute_their_own():
    rng = np.random.default_rng(6)
    network = Network.from_networkx(nx.cycle_graph(6))
    broadcast, dual, g = (rng.standard_normal((3, 6, 2)) for _ in range(3))
    loop = np.array([[0.3 * sum(broadcast[r, l] for l in network.neighbors(k)) for k in range(6)] for r in range(3)])
    close(neighbour_pull(network, 0.3, broadcast), loop)
    close(neighbour_pull(network, 0.3, broadcast, scipy.sparse.csr_array(0.3 * network.adjacency)), loop)
    close(primal_update(broadcast, dual, g, network, 0.3, 0.7, loop), primal_update(broadcast, dual, g, network, 0.3, 0.7))
    close(dual_update(dual, broadcast, network, 0.3, loop), dual_update(dual, broadcast, network, 0.3))


@pytest.mark.parametrize("sparse", [False, True])
def test_run_zcdp_nfl_equals_algorithm_1_with_each_product_recomputed(monkeypatch, sparse):
    """The reference run (one rho A tilde W per iteration, with rho A sparse or dense) against eqs. (7)-(9) written
    out, same draws in the same order."""
    if sparse:   # a CSR rho A whatever the graph's density and the product's size
        monkeypatch.setattr(mixing, "SPARSE_MAX_DENSITY", 1.0)
        monkeypatch.setattr(mixing, "SPARSE_MIN_SIZE", 0)
    rng = np.random.default_rng(7)
    network = Network.from_networkx(nx.random_regular_graph(3, 8, seed=1))
    data = _data(rng, agents=8, samples=5, dim=3)
    problem = Problem("absolute", "none", 1.0)
    params = ZcdpNflParams(rho=0.2, step=StepSchedule(1.0, 0.5), c1=1.0, noise=ZcdpSchedule(1e-2, 0.99))
    run = run_zcdp_nfl(problem, data, network, params, horizon=12, replicas=4, rng=np.random.default_rng(8))
    draws = np.random.default_rng(8)
    broadcast, dual = np.zeros((4, 8, 3)), np.zeros((4, 8, 3))
    for n in range(1, 13):
        g = problem.local_subgradient(broadcast, data)
        primal = primal_update(broadcast, dual, g, network, params.rho, params.step.eta(n))
        close(run.primal[n], primal)
        broadcast, _ = noisy_broadcast(primal, sensitivity_bound(params, network, data.num_samples, n), n,
                                       params.noise, draws, PrivacyLedger(), "")
        close(run.broadcast[n], broadcast)
        dual = dual_update(dual, broadcast, network, params.rho)
    close(run.final_dual, dual)


def test_cubes_are_the_power_three():
    rng = np.random.default_rng(9)
    states = rng.standard_normal((3, 5, 2))
    offsets = rng.standard_normal((5, 2))
    close(QuarticMaximumTest(offsets).local_gradients(states), states**3 - states + offsets)
    samples = rng.choice([-1.0, 1.0], size=(5, 7, 2))
    ica = Ica(samples)
    loop = np.zeros_like(states)
    for r in range(3):
        for i in range(5):
            u = states[r, i]
            euclidean = 4.0 * sum((u @ y) ** 3 * y for y in samples[i]) / 7
            loop[r, i] = euclidean - (euclidean @ u) * u
    close(ica.local_gradients(states), loop)


@pytest.mark.parametrize("dim", [2, 32])   # the box test a column at a time, and over all coordinates at once
def test_estimation_gradients_equal_the_per_agent_oracle(dim):
    rng = np.random.default_rng(10)
    problem = Estimation.as_printed() if dim == 2 else Estimation(rng.uniform(-1, 1, (5, dim)), np.eye(dim),
                                                                  low=(-8.0,) * dim, high=(4.0,) * dim)
    low, high = np.array(problem.low), np.array(problem.high)
    inside = rng.uniform(low, high, (4, 5, dim))
    outside = inside.copy()
    outside[2, 3, dim - 1] = high[-1] + 0.5                             # one coordinate of one point out of the box
    outside[1, 0, 0] = low[0] - 3.0
    for states in (inside, outside):
        loop = np.array([[problem.agent_gradient(i, states[r, i]) for i in range(5)] for r in range(4)])
        close(problem.local_gradients(states), loop)
    assert not np.allclose(problem.local_gradients(outside)[2, 3], problem.local_gradients_inside(outside)[2, 3])


def test_consensus_moments_are_the_mean_and_the_squared_spread():
    states = np.random.default_rng(11).standard_normal((6, 5, 3))
    average, spread = consensus_moments(states)
    close(average, states.mean(axis=1))
    close(spread, np.array([sum(np.sum((x - x.mean(axis=0)) ** 2) for x in [states[r]]) for r in range(6)]))


@pytest.mark.parametrize("mechanism", [gaussian_mechanism, laplace_mechanism])
def test_mechanisms_still_refuse_non_finite_values_and_accept_huge_finite_ones(mechanism):
    values = np.zeros((2, 3, 2))
    for bad in (np.nan, np.inf, -np.inf):
        values[1, 2, 0] = bad
        with pytest.raises(InvalidDataError, match="NaN/inf"):
            mechanism(values, 1.0, 1.0, np.random.default_rng(0))
    values[1, 2, 0] = np.nan
    with pytest.raises(InvalidDataError, match="NaN/inf"):                # a state stored agent-major
        mechanism(agent_major(values), 1.0, 1.0, np.random.default_rng(0))
    huge = np.full((2, 3, 2), 1e308)                     # the sum overflows; no value is non-finite
    assert np.all(np.isfinite(mechanism(huge, 1.0, 1.0, np.random.default_rng(0))))


@pytest.mark.parametrize("bad", [np.nan, -1.0, np.inf, [1.0, 2.0], np.array([1.0, np.nan, 1.0]),
                                 np.array([1.0, -1.0, 1.0]), np.array([1.0, np.inf, 1.0])])
def test_mechanisms_still_refuse_bad_scales(bad):
    with pytest.raises(InvalidParameterError, match="sigma must"):
        gaussian_mechanism(np.zeros((2, 3, 2)), 1.0, bad, np.random.default_rng(0))


def test_recorded_privacy_equals_the_general_formula():
    sensitivity, sigma = np.array([0.0, 1.0, 2.0]), np.array([0.5, 0.5, 0.0])
    ledger = PrivacyLedger()
    gaussian_mechanism(np.zeros((1, 3, 2)), sensitivity, sigma, np.random.default_rng(0), ledger=ledger,
                       allow_non_private=True)
    gaussian_mechanism(np.zeros((1, 3, 2)), sensitivity, 0.5 + sigma, np.random.default_rng(0), ledger=ledger)
    laplace_mechanism(np.zeros((1, 3, 2)), sensitivity, 0.5 + sigma, np.random.default_rng(0), ledger=ledger)
    first, second, third = ledger.releases
    np.testing.assert_array_equal(first.zcdp, [0.0, 2.0, np.inf])          # Delta^2/(2 sigma^2), 0 when Delta = 0
    close(second.zcdp, sensitivity**2 / (2 * (0.5 + sigma) ** 2))
    close(third.epsilon, sensitivity / (0.5 + sigma))


def test_planned_releases_give_the_mechanism_s_draws_and_ledger():
    """Releases planned and checked once per run (`gaussian_releases`), then released one per iteration, against
    `gaussian_mechanism` called each iteration: the same values, draws and ledger entries."""
    rng = np.random.default_rng(12)
    values = [rng.standard_normal((4, 3, 2)) for _ in range(3)]
    sensitivity = rng.uniform(0.5, 1.0, (3, 3))
    sigma = rng.uniform(0.5, 2.0, (3, 3))
    epsilon = [0.1 * (t + 1) for t in range(3)]
    planned = gaussian_releases(sensitivity, sigma, [1, 2, 3], ["a", "b", "c"], epsilon=epsilon)
    each, ahead = PrivacyLedger(), PrivacyLedger()
    draws_each, draws_ahead = np.random.default_rng(13), np.random.default_rng(13)
    for t in range(3):
        expected = gaussian_mechanism(values[t], sensitivity[t], sigma[t], draws_each, ledger=each, iteration=t + 1,
                                      label="abc"[t], epsilon=epsilon[t])
        released = gaussian_release(agent_major(values[t]), planned[t], draws_ahead, ahead)
        np.testing.assert_array_equal(released, expected)
    for one, other in zip(each.releases, ahead.releases):
        assert (one.iteration, one.mechanism, one.label) == (other.iteration, other.mechanism, other.label)
        for field in ("sensitivity", "scale", "zcdp", "epsilon"):
            np.testing.assert_array_equal(getattr(one, field), getattr(other, field))
    close(ahead.total_zcdp(), (sensitivity**2 / (2 * sigma**2)).sum(axis=0))


@pytest.mark.parametrize("sensitivity, sigma, message", [
    (np.ones((2, 3)), np.ones((2, 4)), "one shape"),
    (np.ones((2, 3)), np.full((2, 3), np.nan), "sigma must be finite"),
    (-np.ones((2, 3)), np.ones((2, 3)), "sensitivity must be finite"),
    (np.ones((2, 3)), np.array([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0]]), "agents \\[1\\] have sigma = 0"),
])
def test_planned_releases_refuse_what_the_mechanism_refuses(sensitivity, sigma, message):
    with pytest.raises(InvalidParameterError, match=message):
        gaussian_releases(sensitivity, sigma, [1, 2], ["", ""])


def test_a_planned_release_is_only_released_for_its_agents():
    (release,) = gaussian_releases(np.ones((1, 3)), np.ones((1, 3)), [1], [""])
    with pytest.raises(InvalidParameterError, match="planned for 4 agents"):
        gaussian_release(np.zeros((2, 4, 1)), release, np.random.default_rng(0))
    with pytest.raises(InvalidDataError, match="NaN/inf"):
        gaussian_release(np.full((2, 3, 1), np.nan), release, np.random.default_rng(0))
