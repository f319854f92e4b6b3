"""DPDO-NC experiments: the TOMLs load with provenance, a small figure-1 task has the expected table
and the statistics on it run."""

import numpy as np

from dpverify.reproductions.run.experiments import experiments_of
from dpverify.theory.dpdo_nc.figures import growth_exponent
from dpverify.theory.dpdo_nc.instances import accumulators, plug_in_regret
from dpverify.theory.execution import run_task


def test_configs_have_provenance_and_small_run():
    experiments = {e.id: e for e in experiments_of("dpdo-nc")}
    assert set(experiments) == {"figure-1", "figure-2", "figure-3", "long-horizon"}
    config = experiments["figure-1"].config("quick")
    assert config.parameters["horizon"].source == "paper" and config.parameters["theta"].source == "default"
    small = {**config.values(), "runs": 6, "horizon": 60}
    task = experiments["figure-1"].build_tasks(config)[0]
    results = run_task(type(task)(task.key, task.function, small), 1)
    horizons, dot, sums = accumulators(results, "eps=1/half-euclidean")
    assert dot.shape == (6, horizons.size, 6) and horizons.max() == 60
    # the plug-in of (2) (max outside the expectation) is <= the mean of the per-run regrets (3)
    per_run = (dot + 3 * np.abs(sums).max(-1)).mean(0).max(-1)
    assert np.all(plug_in_regret(dot, sums, 3.0) <= per_run + 1e-12)   # ||mean S||_inf <= mean ||S||_inf
    fit = growth_exponent(results, "eps=1/half-euclidean", 3.0)
    assert fit["ci"][0] - 1e-9 <= fit["slope"] <= fit["ci"][1] + 1e-9 and fit["runs"] == 6
    deterministic = growth_exponent(results, "no-dp/half-euclidean", 3.0)   # no noise: every resample is the same
    assert deterministic["ci"][1] - deterministic["ci"][0] < 1e-9
