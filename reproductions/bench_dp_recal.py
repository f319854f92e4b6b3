"""`dpverify bench dp-recal`: DP-RECAL iterations on MNIST 0/1 (784 features, 8 agents, v1:L552-L560)
with batched replicas, against a straightforward loop over replicas (one holder at a time, as a direct
transcription of Algorithm 1 would run them). Both consume the same noise and walk; the benchmark
checks they compute the same iterates before it reports a speed-up. If MNIST is not available the
benchmark says so and stops (no substitute data)."""

from __future__ import annotations

import time
from collections.abc import Callable

import networkx as nx
import numpy as np

from algorithms.composite import CompositeProblem
from algorithms.dp_recal import RecalParams, RelayNoise, paper_beta, run_recal, uniform_transition_matrix
from algorithms.network import Network
from reproductions.datasets import DatasetNotAvailableError, load_dataset, split_over_agents

REPLICAS, ITERATIONS = 100, 200     # issue target: 100 replicas batched
LOOP_ITERATIONS = 20                # the loop's per-iteration time is measured on fewer iterations
SPEEDUP_TARGET = 10.0
NUM_AGENTS, SIGMA1, DECAY = 8, 0.05, 1.05


def loop_run(problem, data, network, params, *, replicas, iterations, rng, x1) -> np.ndarray:
    """Algorithm 1 one replica at a time, consuming rng exactly like run_recal (same draws, same order)."""
    n, q = data.num_agents, data.dim
    cumulative = np.cumsum(uniform_transition_matrix(network), axis=1)
    cumulative[:, -1] = np.inf
    x = np.tile(x1, (replicas, 1))
    y = np.tile(x1, (replicas, n, 1))
    lam = np.zeros((replicas, n, q))
    u, u_tilde = np.zeros((replicas, q)), np.zeros((replicas, q))
    counts = np.zeros((replicas, n), dtype=int)
    holder = rng.integers(0, n, replicas)
    for _ in range(iterations):
        eps = rng.standard_normal((replicas, q))
        move = rng.random(replicas)
        for r in range(replicas):
            i = holder[r]
            B, b = data.features[i], data.targets[i]
            lam_half = lam[r, i] + params.beta * (x[r] - y[r, i])
            x_new = problem.prox_scaled_r(x[r] - (u_tilde[r] + lam_half - lam[r, i]), n)
            grad = B.T @ (B @ y[r, i] - b) / len(b)
            y_new = y[r, i] - params.alpha[i] * (grad - lam_half)
            lam_new = lam_half + params.beta * ((x_new - x[r]) - (y_new - y[r, i]))
            counts[r, i] += 1
            u[r] = u[r] + lam_new - lam[r, i]
            u_tilde[r] = u[r] - eps[r] * params.noise.std(counts[r, i])
            lam[r, i], y[r, i], x[r] = lam_new, y_new, x_new
            holder[r] = int(np.argmax(move[r] < cumulative[i]))
    return x


def run_benchmarks(*, replicas: int | None = None, iterations: int | None = None,
                   echo: Callable[[str], None] = print) -> dict[str, float]:
    replicas, iterations = replicas or REPLICAS, iterations or ITERATIONS
    try:
        data = split_over_agents(load_dataset("mnist"), NUM_AGENTS, rng=0, shuffle=True)
    except DatasetNotAvailableError as missing:
        echo(f"DP-RECAL benchmark skipped: {missing}")
        return {}
    problem = CompositeProblem("linear")
    network = Network.from_networkx(nx.cycle_graph(NUM_AGENTS))
    alpha = 1.0 / (problem.lipschitz_constants(data) + 1.0)
    params = RecalParams(alpha, paper_beta(NUM_AGENTS), RelayNoise(SIGMA1, DECAY))
    x1 = 0.1 * np.random.default_rng(1).standard_normal(data.dim)

    def batched(count: int, seed: int):
        return run_recal(problem, data, network, params, replicas=replicas, rng=np.random.default_rng(seed),
                         horizon=count, x1=x1, keep_transcript=False, keep_x=False).x_final

    started = time.perf_counter()
    batched(iterations, 0)
    batched_rate = iterations / (time.perf_counter() - started)
    started = time.perf_counter()
    looped = loop_run(problem, data, network, params, replicas=replicas, iterations=LOOP_ITERATIONS,
                      rng=np.random.default_rng(2), x1=x1)
    loop_rate = LOOP_ITERATIONS / (time.perf_counter() - started)
    if not np.allclose(batched(LOOP_ITERATIONS, 2), looped, rtol=1e-9, atol=1e-12):
        raise AssertionError("the loop baseline and the batched DP-RECAL disagree; the benchmark is invalid")
    speedup = batched_rate / loop_rate
    echo(f"DP-RECAL, MNIST 0/1 ({data.dim} features), {NUM_AGENTS} agents on a ring, {replicas} replicas")
    echo(f"  batched:           {batched_rate:10.1f} iterations/s  ({batched_rate * replicas:,.0f} replica-iterations/s)")
    echo(f"  per-replica loop:  {loop_rate:10.2f} iterations/s  (same numbers, checked)")
    echo(f"  speed-up:          {speedup:10.1f}x  (target >= {SPEEDUP_TARGET:g}x: {'met' if speedup >= SPEEDUP_TARGET else 'NOT met'})")
    return {"batched_iterations_per_second": batched_rate, "loop_iterations_per_second": loop_rate, "speedup": speedup}
