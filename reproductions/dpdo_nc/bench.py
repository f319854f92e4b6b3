"""`dpverify bench dpdo-nc`: batched Algorithm 1 of DPDO-NC against a per-node, per-replica Python loop.

The loop is a direct transcription of Algorithm 1 (seeds/002 L159-L168) written here on purpose; both
consume the same Laplace draws, and the benchmark asserts they give the same iterates before it
reports a speed-up.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from dpverify.algorithms.core.mirror import SquaredEuclidean
from dpverify.algorithms.core.projections import project_l1_ball
from dpverify.algorithms.dpdo_nc.algorithm import (
    DpdoNcParams,
    localization_instance,
    paper_schedule,
    run_dpdo_nc,
)
from dpverify.reproductions.bench import report_speedup

REPLICAS, ITERATIONS = 1000, 500   # the target sizes (6 nodes, T = 500)
LOOP_ITERATIONS = 5                # the loop is slow; its per-round time is measured on a few rounds
THETA, EPSILON, RADIUS = 4.030198, 1.0, 3.0
SPEEDUP_TARGET = 20.0


def _setup(horizon: int):
    instance = localization_instance(np.random.default_rng(0), horizon)
    params = DpdoNcParams(EPSILON, THETA, SquaredEuclidean(0.5), RADIUS)
    return instance, paper_schedule(), params


def batched_rounds(instance, schedule, params, noise: np.ndarray) -> np.ndarray:
    """Algorithm 1 with given standard-Laplace draws (T, R, N, d), all replicas and nodes at once."""
    x = np.zeros(noise.shape[1:])
    n, d = x.shape[1:]
    for t, xi in enumerate(noise, start=1):
        z = np.einsum("ij,rjd->rid", schedule.at(t), x + params.sigma(t, n, d) * xi)
        x = params.mirror.step(z, instance.own_gradient(t, x), params.alpha(t, n), RADIUS)
    return x


def loop_rounds(instance, schedule, params, noise: np.ndarray) -> np.ndarray:
    """The same rounds, one replica and one node at a time."""
    _, replicas, n, d = noise.shape
    x = np.zeros((replicas, n, d))
    for t, xi in enumerate(noise, start=1):
        a, sigma, alpha = schedule.at(t), params.sigma(t, n, d), params.alpha(t, n)
        new = np.empty_like(x)
        for r in range(replicas):
            q = [x[r, j] + sigma * xi[r, j] for j in range(n)]            # line 4
            for i in range(n):
                z = sum(a[i, j] * q[j] for j in range(n))                  # line 5
                gap = x[r, i] - instance.sensors[i]
                dist = np.linalg.norm(gap)
                g = (1 - instance.distances[t - 1, i] / dist) * gap if dist >= 1e-12 else np.zeros(d)
                new[r, i] = project_l1_ball(z - alpha * g, RADIUS)         # line 6, phi = 1/2 ||x||^2
        x = new
    return x


def run_benchmarks(*, replicas: int | None = None, iterations: int | None = None,
                   echo: Callable[[str], None] = print) -> dict[str, float]:
    replicas, iterations = replicas or REPLICAS, iterations or ITERATIONS
    instance, schedule, params = _setup(iterations)
    started = time.perf_counter()
    run_dpdo_nc(instance, schedule, params, horizon=iterations, replicas=replicas, rng=np.random.default_rng(1))
    batched_rate = iterations / (time.perf_counter() - started)
    noise = np.random.default_rng(2).laplace(size=(LOOP_ITERATIONS, replicas, 6, 2))
    started = time.perf_counter()
    looped = loop_rounds(instance, schedule, params, noise)
    loop_rate = LOOP_ITERATIONS / (time.perf_counter() - started)
    if not np.allclose(batched_rounds(instance, schedule, params, noise), looped, rtol=1e-10, atol=1e-12):
        raise AssertionError("the loop baseline and the batched rounds disagree; the benchmark is invalid")
    echo(f"DPDO-NC, 6 nodes, d = 2, {replicas} replicas, T = {iterations} (regret bookkeeping and ledger included)")
    return report_speedup(echo, batched_rate=batched_rate, loop_rate=loop_rate, replicas=replicas, target=SPEEDUP_TARGET,
                          unit="rounds", loop="per-node loop")
