"""`bench wang-basar`: batched Algorithm 2 (seeds/003 eq. (9)) against a per-agent, per-replica loop.

The loop is a direct transcription of (8)-(9): each agent computes its gradient and message, each agent
sums the messages of its neighbours, one replica at a time. Both consume the same noise; the benchmark
asserts they give the same iterates before it reports the speed-up.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpverify.algorithms.wang_basar.algorithm import (
    SECTION_61_SCHEDULE,
    WangBasarParams,
    graph_weights,
    run,
)
from dpverify.algorithms.wang_basar.problems import Estimation
from dpverify.reproductions.bench import report_speedup, timed

REPLICAS, ITERATIONS = 1000, 3000   # the target sizes
NUM_AGENTS, SIGMA_VAR = 5, 0.5      # Sec. 6.1 (L579)
SPEEDUP_TARGET = 20.0
LOOP_ITERATIONS = 20                # the loop's rate is measured on a few iterations


def batched_iterations(problem: Estimation, weights: np.ndarray, initial: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """eq. (9) on all replicas and agents at once, with given noise n^k (K, R, m, d)."""
    states = initial.copy()
    for k, n in enumerate(noise, start=1):
        lam = SECTION_61_SCHEDULE(k)
        states = np.einsum("ij,rjd->rid", weights, states - lam * (problem.local_gradients(states) + n))
    return states


def loop_iterations(problem: Estimation, weights: np.ndarray, initial: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """The same iterations, one replica and one agent at a time (the baseline)."""
    states = initial.copy()
    _, replicas, agents, _ = noise.shape
    for k, n in enumerate(noise, start=1):
        lam = SECTION_61_SCHEDULE(k)
        new = np.empty_like(states)
        for r in range(replicas):
            messages = []
            for j in range(agents):
                x = states[r, j]
                g = -2 * problem.matrix.T @ problem.measurements[j] + 2 * problem.matrix.T @ problem.matrix @ x \
                    + 3 * problem.kappa * np.linalg.norm(x) * x                      # L566 (inside the box)
                messages.append(x - lam * (g + n[r, j]))                             # eq. (8)
            for i in range(agents):
                new[r, i] = sum(weights[i, j] * messages[j] for j in range(agents) if weights[i, j] > 0)   # eq. (9)
        states = new
    return states


def run_benchmarks(*, replicas: int | None = None, iterations: int | None = None,
                   echo: Callable[[str], None] = print) -> dict[str, float]:
    replicas, iterations = replicas or REPLICAS, iterations or ITERATIONS
    rng = np.random.default_rng(0)
    problem = Estimation.as_printed()
    weights = graph_weights("ring", NUM_AGENTS)
    params = WangBasarParams(weights, SECTION_61_SCHEDULE, 2, SIGMA_VAR)
    initial = rng.uniform(problem.low, problem.high, size=(replicas, NUM_AGENTS, 2)) * 0.5   # inside the box
    batched_seconds, _ = timed(lambda: run(problem.local_gradients, initial, params, iterations, rng))
    noise = np.sqrt(SIGMA_VAR) * rng.standard_normal((LOOP_ITERATIONS, replicas, NUM_AGENTS, 2))
    loop_seconds, loop_result = timed(lambda: loop_iterations(problem, weights, initial, noise))
    if not np.allclose(batched_iterations(problem, weights, initial, noise), loop_result, rtol=1e-10, atol=1e-12):
        raise AssertionError("the loop baseline and the batched update disagree; the benchmark is invalid")
    batched_rate = (iterations - 1) / batched_seconds
    loop_rate = LOOP_ITERATIONS / loop_seconds
    echo(f"Wang-Basar Algorithm 2, {NUM_AGENTS} agents, d = 2, {replicas} replicas, {iterations} iterations")
    return report_speedup(echo, batched_rate=batched_rate, loop_rate=loop_rate, replicas=replicas, target=SPEEDUP_TARGET)
