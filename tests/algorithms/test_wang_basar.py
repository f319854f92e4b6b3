"""Algorithms 1-2 of Wang & Basar (seeds/003): stepsizes, Assumption 4, one step against closed forms."""

import numpy as np
import pytest

from dpverify.algorithms.core.errors import InvalidGraphError, InvalidParameterError
from dpverify.algorithms.core.noise import PrivacyLedger
from dpverify.algorithms.wang_basar.algorithm import (
    SECTION_61_SCHEDULE,
    StepSchedule,
    WangBasarParams,
    consensus_contraction,
    graph_weights,
    run,
    step,
)
from dpverify.algorithms.wang_basar import algorithm as wang_basar_algorithm
from dpverify.algorithms.wang_basar.problems import Estimation


def test_section_61_schedule_and_conditions():
    assert SECTION_61_SCHEDULE(500) == 0.02 and SECTION_61_SCHEDULE(501) == pytest.approx(1 / 501)
    assert SECTION_61_SCHEDULE.violations() == ()
    slow = StepSchedule(0.1, 0, 0.1, 0.5)        # a/sqrt(k): sum of squares diverges
    with pytest.raises(InvalidParameterError, match="square summability"):
        WangBasarParams(graph_weights("ring"), slow, 2, 0.5)
    allowed = WangBasarParams(graph_weights("ring"), slow, 2, 0.5, allow_outside_conditions=True)
    assert len(allowed.outside_conditions) == 1
    with pytest.raises(InvalidParameterError, match="non-summable"):
        WangBasarParams(graph_weights("ring"), StepSchedule(0.1, 0, 0.1, 1.5), 2, 0.5)


def test_ring_eta_matches_circulant_eigenvalues():
    # eigenvalues of the 1/3 ring are (1 + 2 cos(2 pi j/5))/3; the largest |.| for j != 0 is at j = 1
    assert consensus_contraction(graph_weights("ring")) == pytest.approx((1 + 2 * np.cos(2 * np.pi / 5)) / 3, rel=1e-12)


@pytest.mark.parametrize("weights, message", [
    (np.array([[0.5, 0.5, 0], [0.3, 0.4, 0.3], [0, 0.3, 0.7]]), "not symmetric"),
    (np.array([[0.5, 0.4], [0.4, 0.5]]), "doubly stochastic"),
    (np.eye(4), "must be < 1"),
])
def test_invalid_weights_are_named(weights, message):
    with pytest.raises(InvalidGraphError, match=message):
        WangBasarParams(weights, SECTION_61_SCHEDULE, 1, 0.0)


def test_noise_variance_required_for_algorithm_2():
    with pytest.raises(InvalidParameterError, match="sigma_var > 0"):
        WangBasarParams(graph_weights("ring"), SECTION_61_SCHEDULE, 2, 0.0)
    with pytest.raises(InvalidParameterError, match="sigma_var > 0"):
        WangBasarParams(graph_weights("ring"), SECTION_61_SCHEDULE, 2, -1.0)


def test_algorithm_1_step_is_eq_7():
    problem = Estimation.as_printed()
    rng = np.random.default_rng(1)
    states = rng.uniform(-2, 2, size=(3, 5, 2))
    params = WangBasarParams(graph_weights("ring"), SECTION_61_SCHEDULE, 1, 0.0)
    following, messages = step(states, 7, problem.local_gradients, params, rng)
    for r in range(3):   # eq. (7), written out per agent
        for i in range(5):
            g = [-2 * problem.matrix.T @ problem.measurements[j] + 2 * problem.matrix.T @ problem.matrix @ states[r, j]
                 - 0.3 * np.linalg.norm(states[r, j]) * states[r, j] for j in range(5)]
            expected = sum(params.weights[i, j] * (states[r, j] - 0.02 * g[j]) for j in range(5))
            assert np.allclose(following[r, i], expected, atol=1e-13)


def test_released_noise_variance_is_lambda_squared_sigma():
    # 400k draws: the sample variance of a chi-square has relative sd sqrt(2/400k) = 0.22%, so a 2% band
    # is a > 9-sigma event (false-alarm rate < 1e-18) with this fixed seed.
    params = WangBasarParams(graph_weights("ring"), SECTION_61_SCHEDULE, 2, 0.5)
    zero = lambda x: np.zeros_like(x)
    _, messages = step(np.zeros((40_000, 5, 2)), 1, zero, params, np.random.default_rng(2))
    assert messages.var() == pytest.approx(0.02**2 * 0.5, rel=0.02)


def test_per_link_noise_shapes_and_average():
    params = WangBasarParams(graph_weights("ring"), SECTION_61_SCHEDULE, 2, 0.5, noise_draw="per_link")
    following, messages = step(np.ones((2, 5, 2)), 1, lambda x: np.zeros_like(x), params, np.random.default_rng(3))
    assert messages.shape == (2, 5, 5, 2)
    assert np.allclose(following, np.einsum("ij,rijd->rid", params.weights, messages))


def test_consensus_on_quadratic():
    # f_i(x) = ||x - c_i||^2/2, noise-free: all agents converge to mean(c) (the minimizer of F)
    centres = np.arange(10.0).reshape(5, 2)
    params = WangBasarParams(graph_weights("ring"), StepSchedule(0.5, 50, 5.0, 1.0), 1, 0.0)
    trajectory = run(lambda x: x - centres, np.zeros((1, 5, 2)), params, 4000, np.random.default_rng(0))
    assert np.allclose(trajectory.mean[-1], centres.mean(0), atol=1e-9)          # (11): the average does GD on F
    # disagreement bounded as in (24): eta lam^K max||g|| / (1 - eta) = 0.54 * 1.25e-3 * 5.7 / 0.46 ~ 0.0084
    assert 0 < np.abs(trajectory.final - centres.mean(0)).max() < 0.0084


@pytest.mark.parametrize("algorithm, sigma_var", [(2, 0.5), (1, 0.0)])
def test_iterations_in_blocks_of_replicas_compute_what_one_block_computes(monkeypatch, algorithm, sigma_var):
    """run's iterations a block of replicas at a time (core/blocking.py ROUND_BLOCK_ELEMENTS): blocks of 2, 2, 1 and
    of 1 replica give the draws, moments, snapshots, final states and ledger of one block (blocks=False), bit for bit;
    each snapshot is a copy, which later iterations leave intact."""
    problem = Estimation.as_printed()
    params = WangBasarParams(graph_weights("ring", 5), SECTION_61_SCHEDULE, algorithm, sigma_var)
    initial = np.random.default_rng(0).uniform(problem.low, problem.high, size=(5, 5, 2)) * 0.5

    def trajectory(blocks: bool):
        ledger = PrivacyLedger()
        result = run(problem.local_gradients, initial, params, 7, np.random.default_rng(4), ledger=ledger,
                     snapshot_at=(2, 5), blocks=blocks)
        return result, ledger

    whole, whole_ledger = trajectory(False)
    for elements in (20, 1):   # m d = 10 per replica
        monkeypatch.setattr(wang_basar_algorithm, "ROUND_BLOCK_ELEMENTS", elements)
        blocked, ledger = trajectory(True)
        for name in ("mean", "consensus", "final"):
            np.testing.assert_array_equal(getattr(blocked, name), getattr(whole, name))
        assert blocked.snapshots.keys() == whole.snapshots.keys() == {2, 5}
        for k in (2, 5):
            np.testing.assert_array_equal(blocked.snapshots[k], whole.snapshots[k])
        assert [r.iteration for r in ledger.releases] == [r.iteration for r in whole_ledger.releases]
        assert len(ledger.releases) == (6 if algorithm == 2 else 0)
    assert not np.array_equal(whole.snapshots[2], whole.snapshots[5])
    iterates_only = run(problem.local_gradients, initial, params, 7, np.random.default_rng(4), moments=False)
    np.testing.assert_array_equal(iterates_only.final, whole.final)
    assert iterates_only.mean.shape == (0, 5, 2) and iterates_only.consensus.shape == (0, 5)


@pytest.mark.parametrize("low, high", [((-8.0,) * 64, (4.0,) * 64), ((-8.0,) * 63 + (-7.0,), (4.0,) * 64),
                                       ((-8.0, -3.0), (4.0, 3.0))])
def test_box_test_is_every_coordinate_inside(low, high):
    """The extension is skipped only when every point lies in B: the cube's one reduction over all coordinates
    decides as the per-coordinate test does, on the bounds, one step outside each face, and with a NaN."""
    problem = Estimation(np.zeros((5, len(low))), np.eye(len(low)), low=low, high=high)
    lows, highs = np.array(low), np.array(high)
    rng = np.random.default_rng(0)
    states = rng.uniform(lows, highs, size=(3, 5, len(low)))
    cases = [states, np.broadcast_to(lows, states.shape), np.broadcast_to(highs, states.shape)]
    for side, bound in ((-1, lows), (1, highs)):
        for k in range(len(low)):
            outside = states.copy()
            outside[2, 4, k] = np.nextafter(bound[k], side * np.inf)
            cases.append(outside)
    with_nan = states.copy()
    with_nan[1, 2, 0] = np.nan
    cases.append(with_nan)
    decided = [problem._inside_box(case) for case in cases]
    assert decided == [bool(np.all((case >= lows) & (case <= highs))) for case in cases]
    assert decided[:3] == [True, True, True] and not any(decided[3:])
