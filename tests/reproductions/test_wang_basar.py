"""Wang & Basar reproductions: parameters with provenance, and the benchmark's equality check."""

import numpy as np
import pytest

from dpverify.algorithms.wang_basar.algorithm import graph_weights
from dpverify.algorithms.wang_basar.problems import Estimation
from dpverify.reproductions.experiments import experiments_of
from dpverify.reproductions.wang_basar.bench import (
    batched_iterations,
    loop_iterations,
    run_benchmarks,
)


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_parameters_have_provenance(profile):
    for experiment in experiments_of("wang-basar"):
        config = experiment.config(profile)
        assert all(p.source in ("paper", "default") and p.note for p in config.parameters.values())
    assert experiments_of("wang-basar")[2].config(profile)["sigmas"] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]


def test_loop_baseline_equals_batched():
    rng = np.random.default_rng(0)
    problem = Estimation.as_printed()
    initial = rng.uniform(-2, 2, size=(3, 5, 2))
    noise = rng.standard_normal((15, 3, 5, 2))
    weights = graph_weights("ring")
    assert np.allclose(batched_iterations(problem, weights, initial, noise), loop_iterations(problem, weights, initial, noise), atol=1e-12)


def test_small_benchmark_reports_numbers():
    lines = []
    result = run_benchmarks(replicas=4, iterations=30, echo=lines.append)
    assert result["speedup"] > 0 and len(lines) == 4
