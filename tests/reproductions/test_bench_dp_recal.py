"""`dpverify bench dp-recal`: its loop baselines compute the batched run's iterates (the benchmark's
validity check), on a small instance with always-zero columns like MNIST's border pixels."""

import networkx as nx
import numpy as np
import pytest

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.algorithm import (
    RecalParams,
    RelayNoise,
    paper_beta,
    run_recal,
)
from dpverify.algorithms.dp_recal.composite import ActiveGradients, CompositeProblem
from dpverify.reproductions.dp_recal.bench import (
    gram_gradient,
    loop_run,
    run_benchmarks,
    same_state,
)

N, M, Q = 4, 10, 6


def _instance():
    rng = np.random.default_rng(0)
    features = rng.uniform(0, 1, (N, M, Q))
    features[:, :, 0] = 0.0
    features[2, :, 3] = 0.0
    data = LocalData(features, rng.choice([-1.0, 1.0], (N, M)))
    problem = CompositeProblem("linear", lasso=0.02)  # x != 0 (with 1/2 ||x||_1 it stays 0 here, as on MNIST)
    return data, problem, Network.from_networkx(nx.cycle_graph(N)), 1 / (problem.lipschitz_constants(data) + 1)


@pytest.mark.parametrize("clip", [None, 0.5])
def test_loop_baselines_equal_the_batched_run(clip):
    data, problem, network, alpha = _instance()
    params = RecalParams(alpha, paper_beta(N), RelayNoise(0.05, 1.05), clip=clip)
    x1 = 0.1 * np.random.default_rng(1).standard_normal(Q)
    gradients = ActiveGradients(problem, data, clip)
    assert gradients.method == ("gram" if clip is None else "samples")
    run = run_recal(problem, data, network, params, replicas=7, rng=np.random.default_rng(2), horizon=60,
                    x1=x1, keep_transcript=False, keep_x=False, gradients=gradients)
    batched = run.x_final, run.y_final, run.lam_final
    assert min(np.abs(state).max() for state in batched) > 0.01
    looped = loop_run(problem, data, network, params, replicas=7, iterations=60, rng=np.random.default_rng(2), x1=x1)
    for a, b in zip(batched, looped, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-14)
    assert same_state(batched, looped)
    if clip is None:
        same = loop_run(problem, data, network, params, replicas=7, iterations=60, rng=np.random.default_rng(2),
                        x1=x1, local_gradient=gram_gradient(gradients))
        for a, b in zip(batched, same, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-14)
    # the check refuses a different state
    assert not same_state(batched, (looped[0], looped[1] * (1 + 1e-6), looped[2]))


def test_benchmark_without_mnist_says_so(monkeypatch, tmp_path, data_only_from_env):
    monkeypatch.setenv("DPVERIFY_DATA", str(tmp_path / "missing"))
    lines = []
    assert run_benchmarks(replicas=2, iterations=1, echo=lines.append) == {}
    assert "skipped" in lines[0]
