"""DPDO-NC algorithm: projections and steps vs CVXPY, stacked form vs per-node loop, regret vs the
CVXPY comparator, schedule validation and bad input."""

import cvxpy as cp
import numpy as np
import pytest

from dpverify.algorithms.core.errors import (
    InvalidDataError,
    InvalidGraphError,
    InvalidParameterError,
)
from dpverify.algorithms.core.mirror import (
    Mahalanobis,
    SquaredEuclidean,
    entropic_remark_2,
    entropic_step,
)
from dpverify.algorithms.core import projections
from dpverify.algorithms.core.projections import (
    project_l1_ball,
    project_l1_ball_weighted,
)
from dpverify.algorithms.dpdo_nc import algorithm as dpdo_nc_algorithm
from dpverify.algorithms.dpdo_nc.algorithm import (
    GRADIENT_AT_SENSOR,
    PAPER_MATRICES,
    DpdoNcParams,
    Localization,
    NodeReplaced,
    Schedule,
    localization_instance,
    paper_schedule,
    regret_of_iterates,
    replay,
    run_dpdo_nc,
)

THETA = 4.030198
Q = np.array([[2.0, 0.5], [0.5, 1.0]])


@pytest.mark.parametrize("dim", [2, 5])
def test_l1_projection_matches_cvxpy(dim):
    rng = np.random.default_rng(0)
    points = rng.normal(scale=3, size=(30, dim))
    ours = project_l1_ball(points, 3.0)
    for v, p in zip(points, ours):
        x = cp.Variable(dim)
        cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [cp.norm1(x) <= 3]).solve(solver=cp.CLARABEL)
        assert np.abs(p - x.value).max() < 1e-5
        assert np.abs(p).sum() <= 3 + 1e-12


def test_l1_projection_from_the_largest_values_equals_the_full_sort_bit_for_bit(monkeypatch):
    """Points of d >= PARTIAL_SORT_MIN_DIM: those far outside the ball (few coordinates kept) take the threshold from
    their d/8 largest values, those just outside (most kept) fall back to the full sort; both as the full sort."""
    rng = np.random.default_rng(5)
    dim = projections.PARTIAL_SORT_MIN_DIM * 2
    far = rng.laplace(scale=2.0, size=(40, dim))                              # rho ~ a few of 256
    near = rng.uniform(-1, 1, size=(40, dim))
    near *= 3.3 / np.abs(near).sum(-1, keepdims=True)                         # ||v||_1 = 3.3: most coordinates kept
    points = np.concatenate([far, near])
    positive = []
    threshold = projections._threshold
    monkeypatch.setattr(projections, "_threshold", lambda m, r: positive.append(m.shape) or threshold(m, r))
    partial = project_l1_ball(points, 3.0)
    assert positive[0][-1] == dim // projections.PARTIAL_SORT_SHARE and positive[1][-1] == dim   # both branches ran
    assert 0 < positive[1][0] < len(points)
    monkeypatch.setattr(projections, "PARTIAL_SORT_MIN_DIM", 10**9)
    np.testing.assert_array_equal(partial, project_l1_ball(points, 3.0))
    np.testing.assert_allclose(np.abs(partial).sum(-1), 3.0, rtol=1e-12)


@pytest.mark.parametrize("self_copy", ["noisy", "clean"])
def test_a_round_in_blocks_of_replicas_computes_what_one_block_computes(monkeypatch, self_copy):
    """run_dpdo_nc runs each round a block of replicas at a time (core/blocking.py ROUND_BLOCK_ELEMENTS): blocks of 2
    and 1 replicas and one block give the same draws, broadcasts, iterates and ledger (the products are the same sums,
    here bit for bit), in place or, when kept, into fresh arrays."""
    costs = localization_instance(np.random.default_rng(0), 6, num_agents=6, sensor_layout="distinct")
    params = DpdoNcParams(1.0, THETA, SquaredEuclidean(0.5), 3.0, self_copy=self_copy)
    runs = {}
    for elements in (10**9, 24, 1):   # N d = 12 per replica: one block of 5 replicas; blocks of 2, 2, 1; five of 1
        monkeypatch.setattr(dpdo_nc_algorithm, "ROUND_BLOCK_ELEMENTS", elements)
        kept = run_dpdo_nc(costs, paper_schedule(), params, horizon=6, replicas=5, rng=np.random.default_rng(3),
                           keep=True, regret=False)
        final = run_dpdo_nc(costs, paper_schedule(), params, horizon=6, replicas=5, rng=np.random.default_rng(3),
                            regret=False).final
        runs[elements] = (kept, final)
    (one, one_final), *others = runs.values()
    for run, final in others:
        for name in ("iterates", "broadcasts", "mixed", "own_gradients"):
            np.testing.assert_array_equal(getattr(run, name), getattr(one, name))
        np.testing.assert_array_equal(final, one_final)
        np.testing.assert_array_equal(run.iterates[-1], final)
        assert len(run.ledger.releases) == 6
    np.testing.assert_array_equal(replay(costs, paper_schedule(), params, one.broadcasts, one.iterates[0]),
                                  one.iterates)


def test_weighted_projection_matches_cvxpy():
    rng = np.random.default_rng(1)
    for w in rng.normal(scale=4, size=(30, 2)):
        x = cp.Variable(2)
        cp.Problem(cp.Minimize(cp.quad_form(x - w, Q)), [cp.norm1(x) <= 3]).solve(solver=cp.CLARABEL)
        ours = project_l1_ball_weighted(w, Q, 3.0)
        objective = lambda v: (v - w) @ Q @ (v - w)  # noqa: E731
        assert objective(ours) <= objective(x.value) + 1e-7 and np.abs(ours).sum() <= 3 + 1e-12


def test_mahalanobis_constants_and_step_stationarity():
    mirror = Mahalanobis(Q)
    eigenvalues = np.linalg.eigvalsh(Q)
    assert mirror.omega == pytest.approx(2 * eigenvalues[0]) and mirror.smoothness == pytest.approx(2 * eigenvalues[1])
    z, g = np.array([0.1, -0.2]), np.array([1.0, 2.0])   # interior: the step solves 2Q(x - z) + alpha g = 0
    x = mirror.step(z, g, 0.3, 3.0)
    assert np.allclose(2 * Q @ (x - z) + 0.3 * g, 0, atol=1e-12)


def test_entropic_maps():
    y, g = np.log(np.array([0.2, 0.3, 0.5])) + 1, np.array([1.0, -2.0, 0.5])
    _, printed = entropic_remark_2(y, g, 0.1)
    assert np.allclose(printed, entropic_step(np.exp(y - 1), g, 0.1)) and printed.sum() == pytest.approx(1)
    with pytest.raises(InvalidDataError, match="z > 0"):
        entropic_step(np.array([0.5, -0.1]), np.zeros(2), 0.1)


def test_replay_reproduces_run_and_iterates_stay_in_omega():
    instance, schedule = localization_instance(np.random.default_rng(5), 40), paper_schedule()
    params = DpdoNcParams(0.5, THETA, Mahalanobis(Q))
    run = run_dpdo_nc(instance, schedule, params, horizon=40, replicas=4, rng=np.random.default_rng(6), keep=True)
    assert np.array_equal(replay(instance, schedule, params, run.broadcasts, run.iterates[0]), run.iterates)
    assert np.abs(run.iterates).sum(-1).max() <= 3 + 1e-9
    # the ledger holds the paper's accounting: eps per release = (8)/sigma_t = eps
    assert run.ledger.total_epsilon() == pytest.approx(np.full(6, 40 * 0.5))


def test_regret_at_first_round_and_comparator_vs_cvxpy():
    instance, schedule = localization_instance(np.random.default_rng(7), 30), paper_schedule()
    params = DpdoNcParams(5.0, THETA, SquaredEuclidean(0.5))
    run = run_dpdo_nc(instance, schedule, params, horizon=30, replicas=2, rng=np.random.default_rng(8), checkpoints=[1, 30])
    g1 = instance.global_gradient(1, np.zeros((1, 6, 2)))[0]
    assert np.allclose(run.regret(3.0)[0], 3 * np.abs(g1).max(-1))      # X_1 = 0: R_1 = r ||sum_j grad f_1^j(0)||_inf
    s = run.regret_sum[1, 0, 0]
    x = cp.Variable(2)
    best = cp.Problem(cp.Maximize(-s @ x), [cp.norm1(x) <= 3]).solve(solver=cp.CLARABEL)
    assert run.regret(3.0)[1, 0, 0] == pytest.approx(run.regret_dot[1, 0, 0] + best, abs=1e-6)


def test_regret_of_a_transcripts_iterates_equals_the_runs_and_node_gradients_match():
    """regret_of_iterates (a user's transcripts, dpverify verify) against run_dpdo_nc's own accumulators; the
    contract's per-node gradient oracle against the batched one, also on audit neighbours."""
    instance, schedule = localization_instance(np.random.default_rng(9), 25), paper_schedule()
    params = DpdoNcParams(1.0, THETA, SquaredEuclidean(0.5))
    run = run_dpdo_nc(instance, schedule, params, horizon=25, replicas=3, rng=np.random.default_rng(10),
                      checkpoints=[1, 7, 25], keep=True)
    dot, sums = regret_of_iterates(instance, run.iterates, [1, 7, 25])
    assert np.allclose(dot, run.regret_dot, rtol=1e-13) and np.allclose(sums, run.regret_sum, rtol=1e-13)
    points = np.random.default_rng(11).normal(size=(6, 2))
    neighbour = NodeReplaced(instance, 2, np.array([1.0, -2.0]))
    alternating = NodeReplaced(instance, 2, np.array([1.0, -2.0]), alternating=True)
    for costs in (instance, neighbour, alternating):
        for t in (3, 4):
            batched = costs.own_gradient(t, points[None])[0]
            assert np.allclose([costs.node_gradient(t, i, points[i]) for i in range(6)], batched, rtol=1e-14)
    # the per-node oracle on Python floats gives the batched gradient's bits, also with distinct sensors, in 3
    # dimensions and at a sensor (gradient 0 there, GRADIENT_AT_SENSOR)
    rng = np.random.default_rng(12)
    for dim in (2, 3):
        spread = Localization(rng.normal(size=(6, dim)), rng.uniform(0.5, 2.0, size=(5, 6)), np.zeros((5, dim)))
        at = rng.normal(size=(6, dim))
        at[4] = spread.sensors[4]
        batched = spread.own_gradient(2, at[None])[0]
        assert np.array_equal(np.array([spread.node_gradient(2, i, at[i]) for i in range(6)]), batched)
        assert not np.any(batched[4])
    # the audit's alternating neighbour: <c, x> at odd rounds, <-c, x> at even ones, the others' costs unchanged
    assert np.array_equal(alternating.node_gradient(3, 2, points[2]), [1.0, -2.0])
    assert np.array_equal(alternating.node_gradient(4, 2, points[2]), [-1.0, 2.0])
    assert np.array_equal(alternating.own_gradient(4, points[None])[0, 1], instance.own_gradient(4, points[None])[0, 1])


def test_paper_schedule_is_valid_for_b2_not_b1():
    paper_schedule(2)
    with pytest.raises(InvalidGraphError, match=r"window 3 \(rounds 3-3\) is not strongly connected"):
        paper_schedule(1)


def test_bad_input():
    bad = PAPER_MATRICES.copy()
    bad[0, 0, 0] = 0.6
    with pytest.raises(InvalidGraphError, match="row 0 sums to 1.1"):
        Schedule(bad, np.arange(3), 2)
    with pytest.raises(InvalidParameterError, match="positive definite"):
        Mahalanobis(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(InvalidParameterError, match="eps"):
        DpdoNcParams(0.0, THETA, SquaredEuclidean())
    instance = localization_instance(np.random.default_rng(0), 5)
    with pytest.raises(InvalidDataError, match="outside Omega"):
        run_dpdo_nc(instance, paper_schedule(), DpdoNcParams(1.0, THETA, SquaredEuclidean()), horizon=5, replicas=1,
                    rng=np.random.default_rng(0), x1=np.array([3.0, 1.0]))


@pytest.mark.parametrize("layout", ["paper", "distinct", "pairs"])
def test_global_gradient_sums_every_nodes_gradient_term_by_term_to_rounding(layout):
    """sum_j grad f_t^j(x^i) against the direct (R, N, N, d) sum of (1 - d_j / r_ij)(x_i - s_j) (0 at a sensor): nodes
    that share a sensor are summed as one term (the paper's layout: all six at one point), to 1e-12 relative; the
    distinct layout bit for bit."""
    rng = np.random.default_rng(7)
    costs = localization_instance(rng, 5, sensor_layout="distinct" if layout == "distinct" else "paper")
    if layout == "pairs":   # three sensors, each shared by two nodes
        costs = Localization(np.repeat(rng.normal(size=(3, 2)), 2, axis=0), costs.distances, costs.target)
    x = rng.normal(size=(40, 6, 2))
    x[0, 2] = costs.sensors[1]                                        # a point at a sensor: its terms are 0 there
    gap = x[:, :, None, :] - costs.sensors[None, None]
    r = np.linalg.norm(gap, axis=-1)
    factor = np.where(r < GRADIENT_AT_SENSOR, 0.0, 1.0 - costs.distances[2] / np.maximum(r, GRADIENT_AT_SENSOR))
    direct = np.einsum("rij,rijd->rid", factor, gap)
    ours = costs.global_gradient(3, x)
    if layout == "distinct":
        np.testing.assert_array_equal(ours, direct)
    else:
        np.testing.assert_allclose(ours, direct, rtol=1e-12, atol=1e-14)
