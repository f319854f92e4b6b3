"""`dpverify bench`'s vectorized baselines as a good researcher writes them (issue 32 item 1): plain numpy, one
replica at a time, no call into dpverify's batched kernels, and the reference's numbers on the same draws to the
bench's tolerance (reproductions/bench/papers.py, CHECK_RTOL), including the branches the bench defaults rarely
reach (Wang-Basar's extension outside the box, DPDO-NC's projection onto Omega). No test times anything."""

import sys

import numpy as np
import pytest

from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.core.projections import project_l1_ball
from dpverify.reproductions.bench import papers as bench
from dpverify.reproductions.dp_recal import bench as recal_bench
from dpverify.reproductions.dpdo_nc import bench as dpdo_bench
from dpverify.reproductions.wang_basar import bench as wang_bench
from dpverify.reproductions.zcdp_nfl import bench as zcdp_bench

# the bench defaults' agents, graphs and dimensions, with fewer replicas
NEAR_DEFAULTS = {
    "wang-basar": lambda: wang_bench.contenders(20, 10),
    "dpdo-nc": lambda: dpdo_bench.contenders(20, 10),
    "dpdo-nc grid cell": lambda: dpdo_bench.grid_contenders(5, 50, 8),
    "zcdp-nfl": lambda: zcdp_bench.contenders(5, 10),
    "zcdp-nfl grid cell": lambda: zcdp_bench.grid_contenders(3, 200, 2),
}
# what a baseline may not call: dpverify's batched kernels and the problems' gradient oracles
KERNEL_MODULES = tuple(f"dpverify.algorithms.core.{name}" for name in
                       ("mixing", "rowwise", "noise", "blocking", "projections", "reference_mechanisms"))


def assert_same_numbers(expected, actual):
    np.testing.assert_allclose(actual, expected, rtol=bench.CHECK_RTOL, atol=bench.CHECK_ATOL)


def dpverify_calls(run) -> set[tuple[str, str]]:
    """(module, function) of every Python function of dpverify.algorithms that run() calls."""
    seen = set()

    def profiler(frame, event, _):
        module = frame.f_globals.get("__name__", "")
        if event == "call" and module.startswith("dpverify.algorithms"):
            seen.add((module, frame.f_code.co_qualname))

    sys.setprofile(profiler)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


def is_kernel(module: str, function: str) -> bool:
    name = function.rsplit(".", 1)[-1]
    return module in KERNEL_MODULES or "gradient" in name or name in ("step", "mix")


@pytest.mark.parametrize("name", list(NEAR_DEFAULTS))
def test_the_vectorized_baseline_gives_the_reference_numbers_and_draws(name):
    contenders = NEAR_DEFAULTS[name]()
    bench.check_same_numbers(contenders)   # the bench's own check, at its check_rounds
    for rounds in (1, 10):
        expected_rng, baseline_rng = np.random.default_rng(7), np.random.default_rng(7)
        expected = contenders.reference(expected_rng, rounds)
        assert_same_numbers(expected, contenders.vectorized(baseline_rng, rounds))
        # the same draws in the same order: both leave the generator in the same state
        assert baseline_rng.bit_generator.state == expected_rng.bit_generator.state
    assert not np.allclose(contenders.vectorized(np.random.default_rng(8), 10), expected, rtol=1e-6)


@pytest.mark.parametrize("name", list(NEAR_DEFAULTS))
def test_the_vectorized_baseline_calls_no_dpverify_kernel(name):
    contenders = NEAR_DEFAULTS[name]()
    called = dpverify_calls(lambda: contenders.vectorized(np.random.default_rng(0), 2))
    assert not [call for call in called if is_kernel(*call)]
    # the detector sees kernels: the reference calls them
    assert any(is_kernel(*call) for call in dpverify_calls(lambda: contenders.reference(np.random.default_rng(0), 2)))


def test_wang_basar_baseline_outside_the_box():
    """The linear extension of the gradient outside B = [-8,4]x[-3,3] (spec P8), which the bench's start inside the
    box does not reach."""
    setting = wang_bench.Setting(30)
    setting.initial = np.random.default_rng(3).uniform((-12.0, -6.0), (8.0, 6.0), size=setting.initial.shape)
    outside = np.any((setting.initial < setting.low) | (setting.initial > setting.high), axis=-1)
    assert 0.2 < outside.mean() < 0.9
    assert_same_numbers(setting.reference(np.random.default_rng(4), 6), setting.vectorized(np.random.default_rng(4), 6))


def test_dpdo_nc_baseline_projects_onto_omega():
    """On the grid's sensors (radius 4, outside Omega = {||x||_1 <= 3}) the step (7) projects every round."""
    contenders = dpdo_bench.grid_contenders(4, 10, 8)
    final = contenders.vectorized(np.random.default_rng(5), 6)
    on_sphere = np.isclose(np.abs(final).sum(axis=-1), dpdo_bench.RADIUS, rtol=0, atol=1e-9)
    assert on_sphere.mean() > 0.5
    assert_same_numbers(contenders.reference(np.random.default_rng(5), 6), final)


@pytest.mark.parametrize("dim", [1, 2, 8, 50])
def test_the_baselines_l1_projection_is_the_euclidean_one(dim):
    rng = np.random.default_rng(dim)
    points = rng.standard_normal((200, dim)) * rng.uniform(0.1, 8.0, (200, 1)) / dim   # ||x||_1 ~ 0.08 to 6.4
    projected = dpdo_bench.l1_ball_projection(points, 3.0)
    assert_same_numbers(project_l1_ball(points, 3.0), projected)
    inside = np.abs(points).sum(axis=1) <= 3.0
    assert 0 < inside.sum() < len(points)
    np.testing.assert_array_equal(projected[inside], points[inside])
    np.testing.assert_allclose(np.abs(projected[~inside]).sum(axis=1), 3.0, rtol=1e-12)
    unchanged = points[inside]
    assert dpdo_bench.l1_ball_projection(unchanged, 3.0) is unchanged   # nothing outside: nothing copied


def test_dp_recal_loop_gives_the_reference_numbers_with_its_gradient_built_once():
    """DP-RECAL has no vectorized baseline (one agent active per iteration); its per-replica loop, with the
    per-sample norms built once per setting, computes the reference's numbers in both timed settings."""
    rng = np.random.default_rng(0)
    features = rng.uniform(0, 1, (recal_bench.NUM_AGENTS, 12, 6))
    features[:, :, 0] = 0.0                       # an always-zero column, like MNIST's border pixels
    data = LocalData(features, rng.choice([-1.0, 1.0], (recal_bench.NUM_AGENTS, 12)))
    for params in recal_bench.settings(data).values():
        setting = recal_bench.Setting(data, params)
        contenders = bench.Contenders("dp-recal", 4, lambda rng, k, s=setting: s.reference(rng, k, 4),
                                      lambda rng, k, s=setting: s.loop(rng, k, 4), None, None,
                                      rounds=5, loop_rounds=5, check_rounds=5)
        bench.check_same_numbers(contenders)
        expected = contenders.reference(np.random.default_rng(9), 20)
        assert min(np.abs(state).max() for state in expected[1:]) > 0.01   # y and lam moved (x may stay 0)
        for a, b in zip(expected, contenders.loop(np.random.default_rng(9), 20), strict=True):
            assert_same_numbers(a, b)
