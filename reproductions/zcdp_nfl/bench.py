"""`dpverify bench`: speed of the batched algorithms against a straightforward per-client loop.

The loop baseline is written here on purpose: it is what a direct transcription of Algorithm 1
(seeds/004 eqs. (7)-(9)) looks like, one client and one Monte-Carlo run at a time. Both versions
consume the same noise draws, and the benchmark asserts they produce the same iterates before it
reports a speed-up.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpverify.algorithms.core.network import random_connected_network
from dpverify.algorithms.core.problems import Problem
from dpverify.algorithms.core.synthetic import noisy_linear_observations
from dpverify.algorithms.zcdp_nfl.algorithm import (
    StepSchedule,
    ZcdpNflParams,
    ZcdpSchedule,
    dual_update,
    primal_update,
    run_zcdp_nfl,
)
from dpverify.reproductions.bench import report_speedup, timed

NUM_AGENTS, NUM_EDGES, NUM_SAMPLES, DIM = 50, 75, 50, 8  # seeds/004 L304
RHO, ETA0, SIGMA = 0.05, 1.0, 0.01                       # any fixed values: speed does not depend on them
PHI1, TAU, C1 = 1e-3, 0.99, 1.0
SPEEDUP_TARGET = 20.0
REPLICAS, ITERATIONS = 100, 200  # defaults of `dpverify bench zcdp-nfl`
LOOP_ITERATIONS = 5  # the loop is slow; its per-iteration time is measured on a few iterations


def _setup(replicas: int):
    rng = np.random.default_rng(0)
    network = random_connected_network(NUM_AGENTS, NUM_EDGES, rng)
    data, _ = noisy_linear_observations(NUM_AGENTS, NUM_SAMPLES, DIM, rng)
    problem = Problem("absolute", "none", 1.0)
    return network, data, problem, rng


def batched_iterations(problem, data, network, noise: np.ndarray) -> np.ndarray:
    """Algorithm 1 on all replicas and clients at once, from the library's update functions, with
    given noise (to check the loop baseline computes the same thing)."""
    broadcast = np.zeros(noise.shape[1:])
    dual = np.zeros_like(broadcast)
    for n, xi in enumerate(noise, start=1):
        g = problem.local_subgradient(broadcast, data)
        primal = primal_update(broadcast, dual, g, network, RHO, ETA0 / np.sqrt(n))
        broadcast = primal + xi
        dual = dual_update(dual, broadcast, network, RHO)
    return broadcast


def loop_iterations(problem, data, network, noise: np.ndarray) -> np.ndarray:
    """The same iterations, one replica and one client at a time (the benchmark's baseline)."""
    _, replicas, agents, dim = noise.shape
    broadcast = np.zeros((replicas, agents, dim))
    dual = np.zeros_like(broadcast)
    neighbours = [network.neighbors(k) for k in range(agents)]
    for n, xi in enumerate(noise, start=1):
        eta = ETA0 / np.sqrt(n)
        new = np.empty_like(broadcast)
        for r in range(replicas):
            for k in range(agents):
                X, y, w = data.features[k], data.targets[k], broadcast[r, k]
                g = X.T @ np.sign(X @ w - y) / len(y)  # LAD subgradient, seeds/004 Sec. 5 (lam R = 0)
                pull = sum(broadcast[r, k] + broadcast[r, l] for l in neighbours[k])
                new[r, k] = (w / eta + RHO * pull - dual[r, k] - g) / (1 / eta + 2 * RHO * len(neighbours[k]))
        broadcast = new + xi
        for r in range(replicas):
            for k in range(agents):
                dual[r, k] = dual[r, k] + RHO * sum(broadcast[r, k] - broadcast[r, l] for l in neighbours[k])
    return broadcast


def run_benchmarks(*, replicas: int | None = None, iterations: int | None = None,
                   echo: Callable[[str], None] = print) -> dict[str, float]:
    replicas, iterations = replicas or REPLICAS, iterations or ITERATIONS
    network, data, problem, rng = _setup(replicas)
    # timed: the library's run (noise through the mechanism, ledger, observer off)
    params = ZcdpNflParams(rho=RHO, step=StepSchedule(ETA0, 0.5), c1=C1, noise=ZcdpSchedule(PHI1, TAU))
    batched_seconds, _ = timed(lambda: run_zcdp_nfl(problem, data, network, params, horizon=iterations,
                                                     replicas=replicas, rng=rng, keep_iterates=False))
    short = SIGMA * rng.standard_normal((LOOP_ITERATIONS, replicas, NUM_AGENTS, DIM))
    loop_seconds, loop_result = timed(lambda: loop_iterations(problem, data, network, short))
    if not np.allclose(batched_iterations(problem, data, network, short), loop_result, rtol=1e-10, atol=1e-12):
        raise AssertionError("the loop baseline and the batched update disagree; the benchmark is invalid")
    batched_rate = iterations / batched_seconds
    loop_rate = LOOP_ITERATIONS / loop_seconds
    echo(f"zCDP-NFL, {NUM_AGENTS} clients, dimension {DIM}, {NUM_SAMPLES} samples/client, {replicas} replicas")
    return report_speedup(echo, batched_rate=batched_rate, loop_rate=loop_rate, replicas=replicas, target=SPEEDUP_TARGET,
                          loop="per-client loop")
