"""The agent-major layout and the short-axis kernels of issue 17's second pass: each gives numpy's own expression
bit for bit (assert_array_equal, not a tolerance), the layout survives a whole run of every batched algorithm, and
the runs give the numbers of a state stored replica-major."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.algorithms.core import blocking, problems
from dpverify.algorithms.core.blocking import Scratch, row_blocks
from dpverify.algorithms.core.mixing import agent_major, mix
from dpverify.algorithms.core.noise import gaussian_mechanism, laplace_mechanism
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.algorithms.core.projections import project_l1_ball
from dpverify.algorithms.core.rowwise import clip_rows, row_norms, row_sum, scale_rows, shifted, times_matrix
from dpverify.reproductions.run.allocator import settle_allocator


def is_agent_major(state: np.ndarray) -> bool:
    return state.swapaxes(0, 1).flags.c_contiguous


def states(dim: int, seed: int = 0, replicas: int = 30, agents: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """The same values stored replica-major (C order) and agent-major."""
    values = np.random.default_rng(seed).standard_normal((replicas, agents, dim)) * 3
    return values, agent_major(values)


@pytest.mark.parametrize("dim", [1, 2, 3, 7, 8, 11])
def test_short_axis_kernels_give_numpys_bits(dim):
    values, stored = states(dim)
    factors = np.random.default_rng(1).standard_normal(values.shape[:-1])
    offsets = np.random.default_rng(2).standard_normal((values.shape[1], dim))
    matrix = np.random.default_rng(3).standard_normal((dim, dim))
    low, high = -np.ones(dim), 2 * np.ones(dim)
    for x in (values, stored):
        np.testing.assert_array_equal(row_sum(x), x.sum(axis=-1))
        exact = np.sqrt(np.einsum("...d,...d->...", x, x) if dim >= 8 else (x * x).sum(axis=-1))
        np.testing.assert_array_equal(row_norms(x), exact)
        np.testing.assert_allclose(row_norms(x), np.linalg.norm(x, axis=-1), rtol=1e-15)
        np.testing.assert_array_equal(scale_rows(x, factors), x * factors[..., None])
        np.testing.assert_array_equal(shifted(x, offsets), x + offsets)
        np.testing.assert_array_equal(clip_rows(x, low, high), np.clip(x, low, high))
        np.testing.assert_allclose(times_matrix(x, matrix), x @ matrix, rtol=1e-13, atol=1e-13)
    assert is_agent_major(scale_rows(stored, factors)) and is_agent_major(shifted(stored, offsets))


def test_shifted_broadcasts_to_a_larger_shape():
    points = np.random.default_rng(0).standard_normal((4, 5, 1, 2))
    sensors = np.random.default_rng(1).standard_normal((5, 2))
    np.testing.assert_array_equal(shifted(points, -sensors), points - sensors)


def test_agent_major_mix_is_one_product_with_the_same_sums():
    values, stored = states(3, agents=9)
    weights = np.random.default_rng(4).random((9, 9))
    mixed = mix(weights, stored)
    assert is_agent_major(mixed)
    np.testing.assert_allclose(mixed, np.matmul(weights, values), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("mechanism", [gaussian_mechanism, laplace_mechanism])
@pytest.mark.parametrize("scale", [0.7, np.array([0.5, 1.0, 1.5, 2.0, 2.5, 3.0])])
def test_mechanisms_draw_in_replica_order_and_keep_the_layout(mechanism, scale):
    values, stored = states(2)
    plain = mechanism(values, 1.0, scale, np.random.default_rng(5))
    kept = mechanism(stored, 1.0, scale, np.random.default_rng(5))
    np.testing.assert_array_equal(kept, plain)     # the same draws land on the same (replica, agent, coordinate)
    assert is_agent_major(kept) and plain.flags.c_contiguous


def test_projection_keeps_the_layout_and_projects_only_outside_points():
    values, stored = states(3)
    projected = project_l1_ball(stored, 2.0)
    assert is_agent_major(projected)
    np.testing.assert_array_equal(projected, project_l1_ball(values, 2.0))
    inside = np.abs(values).sum(-1) <= 2.0
    assert inside.any() and (~inside).any()
    np.testing.assert_array_equal(projected[inside], values[inside])
    np.testing.assert_allclose(np.abs(projected[~inside]).sum(-1), 2.0, rtol=1e-12)


@pytest.mark.parametrize("loss", ["absolute", "squared"])
@pytest.mark.parametrize("block_elements", [50, 1 << 22])
def test_subgradient_into_scratch_equals_fresh_blocks(monkeypatch, loss, block_elements):
    monkeypatch.setattr(problems, "SCRATCH_ELEMENTS", block_elements)   # several blocks and a partial one, or one
    rng = np.random.default_rng(6)
    data = LocalData(rng.uniform(-1, 1, (4, 6, 3)), rng.standard_normal((4, 6)))
    problem = Problem(loss, "none", 1.0)
    values, stored = states(3, seed=7, replicas=11, agents=4)
    scratch = Scratch()
    for _ in range(2):   # the second call reuses the buffers
        with_scratch = problem.loss_subgradient(stored, data, scratch=scratch)
        fresh = problem.loss_subgradient(values, data)
        # products of other block shapes: the same sums to rounding (a sign flipped by it would move a value by
        # 2 |x_kj| / M, some 0.05 here)
        np.testing.assert_allclose(with_scratch, fresh, rtol=1e-14, atol=1e-15)
    assert is_agent_major(with_scratch)


def test_scratch_reuses_and_grows_its_buffers():
    scratch = Scratch()
    first = scratch.array("a", (2, 3))
    assert scratch.array("a", (3, 2)).base is first.base     # reused
    assert scratch.array("a", (4, 5)).size == 20             # grown


def test_row_blocks_hold_about_the_elements_asked(monkeypatch):
    monkeypatch.setattr(blocking, "BLOCK_ELEMENTS", 10)
    assert [b.stop - b.start for b in row_blocks(20, 5)] == [2] * 10            # the default, looked up at the call
    assert [(b.start, b.stop) for b in row_blocks(20, 5, 35)] == [(0, 7), (7, 14), (14, 20)]
    assert len(row_blocks(20, 5, 100)) == 1 and len(row_blocks(3, 50, 10)) == 3   # one row at least


def test_every_batched_algorithm_keeps_its_state_agent_major():
    from dpverify.reproductions.dpdo_nc.bench import contenders as dpdo
    from dpverify.reproductions.wang_basar.bench import contenders as wang
    from dpverify.reproductions.zcdp_nfl.bench import contenders as zcdp

    for final in (dpdo(20, 5).reference(np.random.default_rng(0), 5),
                  wang(20, 5).reference(np.random.default_rng(0), 5),
                  zcdp(20, 5, agents=10, dim=3).reference(np.random.default_rng(0), 5)):
        assert is_agent_major(final)


def test_allocator_is_settled_for_this_process_and_its_children(monkeypatch):
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", str(64 << 20))   # a value already set is kept
    line = settle_allocator()
    import os

    assert os.environ["MALLOC_MMAP_THRESHOLD_"] == str(32 << 20)
    assert os.environ["MALLOC_TRIM_THRESHOLD_"] == str(64 << 20)
    assert line.startswith("allocator: ")
