"""The reference algorithms compute what they computed before their performance work (issue 32: "verdicts and numbers
unchanged, except at rounding level"): small runs of each consensus paper's reference, at the paper's settings and on
the bench grid, against numbers recorded at f1570c2, before the blocked rounds and the partial-sort projection.

reference_numbers.json was written by this module at that commit (`python tests/reproductions/test_reference_numbers.py
FILE`). A change that computes the same sums in another order moves these numbers at rounding level (RTOL); a change
to what an algorithm computes moves them by far more. At b42e53e they agree bit for bit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from dpverify.algorithms.core.mirror import SquaredEuclidean
from dpverify.algorithms.dpdo_nc.algorithm import DpdoNcParams, localization_instance, paper_schedule, run_dpdo_nc
from dpverify.reproductions.dpdo_nc import bench as dpdo_bench
from dpverify.reproductions.wang_basar import bench as wang_bench
from dpverify.reproductions.zcdp_nfl import bench as zcdp_bench

RECORDED = Path(__file__).with_name("reference_numbers.json")
RTOL, ATOL = 1e-9, 1e-12   # rounding level: sums in another order move a 30-round run's numbers by ~1e-15 relative


def first_numbers(final) -> list[list[float]]:
    return [array.ravel()[:24].tolist() for array in (final if isinstance(final, tuple) else (final,))]


def dpdo_nc_paper() -> dict:
    """The paper's layout (six sensors at one point, the three graphs of L487) on 6000 replicas: two blocks a round."""
    costs = localization_instance(np.random.default_rng(11), 30)
    params = DpdoNcParams(1.0, 4.030198, SquaredEuclidean(0.5), 3.0)
    run = run_dpdo_nc(costs, paper_schedule(), params, horizon=30, replicas=6000, rng=np.random.default_rng(12),
                      checkpoints=[10, 30])
    return {"final_mean": run.final.mean(axis=0).ravel().tolist(), "final_first": run.final[0].ravel().tolist(),
            "regret": run.expected_regret(3.0).ravel().tolist()}


def dpdo_nc_grid() -> dict:
    """A d = 512 grid cell: the projection's partial sort."""
    final = dpdo_bench.grid_contenders(3, 10, 512).reference(np.random.default_rng(13), 8)
    return {"final_first": final[:, 0, :16].ravel().tolist(), "final_sum": float(final.sum())}


RUNS = {
    "dpdo-nc paper": dpdo_nc_paper,
    "dpdo-nc grid": dpdo_nc_grid,
    "zcdp-nfl grid": lambda: {"first": first_numbers(
        zcdp_bench.grid_contenders(3, 50, 64).reference(np.random.default_rng(14), 6))},
    "zcdp-nfl bench": lambda: {"first": first_numbers(
        zcdp_bench.contenders(20, 10).reference(np.random.default_rng(15), 10))},
    "wang-basar bench": lambda: {"first": first_numbers(
        wang_bench.contenders(30, 10).reference(np.random.default_rng(16), 10))},
}


@pytest.mark.parametrize("name", list(RUNS))
def test_the_reference_computes_the_recorded_numbers(name):
    recorded, computed = json.loads(RECORDED.read_text())[name], RUNS[name]()
    assert computed.keys() == recorded.keys()
    for key, values in recorded.items():
        np.testing.assert_allclose(np.array(computed[key], dtype=float), np.array(values, dtype=float),
                                   rtol=RTOL, atol=ATOL, err_msg=f"{name}: {key}")


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps({name: run() for name, run in RUNS.items()}, indent=0) + "\n")
