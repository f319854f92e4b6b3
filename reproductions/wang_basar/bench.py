"""`bench wang-basar`: Algorithm 2 (seeds/003 eqs. (8)-(9)) on the estimation problem of Sec. 6.1, the
reference (`run`, without the consensus moments it records for the figures: the baselines compute the iterates only, as
dpdo-nc's bench runs without the regret) against the baselines of
reproductions/bench/papers.py.

All consume the generator alike: one standard-normal block (R, m, d) per iteration, scaled by
lambda^k sqrt(sigma_var), as `gaussian_mechanism` draws it. `--grid` runs the problem's form in d dimensions
(`grid_problem`) for m agents on a ring.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpverify.algorithms.wang_basar.algorithm import (
    SECTION_61_SCHEDULE,
    WangBasarParams,
    graph_weights,
    run,
)
from dpverify.algorithms.wang_basar.problems import Estimation
from dpverify.reproductions.bench.papers import Contenders, release_share, run_grid, run_paper_bench
from dpverify.reproductions.bench.timing import DEFAULT_REPEATS

REPLICAS, ITERATIONS = 1000, 200    # the 1000 replicas; per-iteration times on 200 iterations
LOOP_ITERATIONS, VECTORIZED_ITERATIONS = 2, 3    # the slow baselines' time per iteration, on fewer
CHECK_ITERATIONS = 5
NUM_AGENTS, SIGMA_VAR = 5, 0.5      # Sec. 6.1 (L579)
GRID_ITERATIONS = 20
GRID_KAPPA = 0.0                    # --grid only: the cubic term off (grid_problem)


def grid_problem(agents: int, dim: int) -> Estimation:
    """The estimation problem's form (L556) in d dimensions for m agents: M = I_d, Y_i uniform in [-1, 1]^d, the box
    [-8, 4]^d, and kappa = GRID_KAPPA (the printed -0.1 makes the cubic term outgrow the extension's pull in high d:
    ||theta|| reaches sqrt(d) 8 inside the box)."""
    measurements = np.random.default_rng(0).uniform(-1.0, 1.0, size=(agents, dim))
    return Estimation(measurements, np.eye(dim), kappa=GRID_KAPPA, low=(-8.0,) * dim, high=(4.0,) * dim)


class Setting:
    def __init__(self, replicas: int, problem: Estimation | None = None):
        self.problem = Estimation.as_printed() if problem is None else problem
        agents, dim = self.problem.num_agents, self.problem.matrix.shape[1]
        self.weights = graph_weights("ring", agents)
        self.params = WangBasarParams(self.weights, SECTION_61_SCHEDULE, 2, SIGMA_VAR)
        self.initial = np.random.default_rng(0).uniform(self.problem.low, self.problem.high,
                                                        size=(replicas, agents, dim)) * 0.5   # inside the box
        # the constants of the gradient formula, read once (the vectorized baseline computes the formula itself)
        matrix, self.low, self.high = self.problem.matrix, np.array(self.problem.low), np.array(self.problem.high)
        self.offsets, self.curvature = -2.0 * self.problem.measurements @ matrix, 2.0 * matrix.T @ matrix

    def reference(self, rng: np.random.Generator, steps: int) -> np.ndarray:
        return run(self.problem.local_gradients, self.initial, self.params, steps + 1, rng,   # K = steps + 1
                   moments=False).final

    def loop(self, rng: np.random.Generator, steps: int) -> np.ndarray:
        """One replica, one agent at a time: each agent's gradient (the per-agent oracle) and message (8), then
        each agent's weighted sum of its neighbours' messages (9)."""
        states = self.initial.copy()
        replicas, agents, _ = states.shape
        senders = [np.flatnonzero(self.weights[i]) for i in range(agents)]
        for k in range(1, steps + 1):
            lam = SECTION_61_SCHEDULE(k)
            std = lam * math.sqrt(SIGMA_VAR)
            xi = rng.standard_normal(states.shape)
            new = np.empty_like(states)
            for r in range(replicas):
                messages = np.empty((agents, states.shape[2]))
                for j in range(agents):
                    messages[j] = (states[r, j] - lam * self.problem.agent_gradient(j, states[r, j])) + xi[r, j] * std
                for i in range(agents):
                    new[r, i] = self.weights[i, senders[i]] @ messages[senders[i]]
            states = new
        return states

    def vectorized(self, rng: np.random.Generator, steps: int) -> np.ndarray:
        """What a good researcher writes: one replica at a time, its m agents as one (m, d) array, the gradients
        inline in numpy and one product W @ messages per iteration (9); no dpverify kernel is called."""
        states = self.initial.copy()
        for k in range(1, steps + 1):
            lam = SECTION_61_SCHEDULE(k)
            noise = rng.standard_normal(states.shape) * (lam * math.sqrt(SIGMA_VAR))   # lambda^k n_j^k, every replica
            for x, n in zip(states, noise):
                x[...] = self.weights @ (x - lam * self.gradients(x) + n)              # seeds/003 eqs. (8)-(9)
        return states

    def gradients(self, x: np.ndarray) -> np.ndarray:
        """grad f~_i(x_i) of every agent, x (m, d): grad f_i at p = P_B x plus the linear extension
        c min(dist/delta_r, 1) (x - p)/dist outside the box B (spec P8)."""
        if not ((x < self.low) | (x > self.high)).any():   # every agent inside B, the usual case: p = x
            return self.gradients_inside(x)
        problem = self.problem
        inside = np.clip(x, self.low, self.high)
        outward = x - inside
        distance = np.sqrt((outward * outward).sum(axis=1, keepdims=True))
        slope = problem.ext_c * np.minimum(distance / problem.ext_delta_r, 1.0) / np.maximum(distance, 1e-300)
        return self.gradients_inside(inside) + slope * outward

    def gradients_inside(self, p: np.ndarray) -> np.ndarray:
        """-2 M^T Y_i + 2 M^T M p_i + 3 kappa ||p_i|| p_i for every agent, p (m, d) (seeds/003 L566)."""
        radius = np.sqrt((p * p).sum(axis=1, keepdims=True))
        return self.offsets + p @ self.curvature + (3.0 * self.problem.kappa) * radius * p

    def limit(self, rng: np.random.Generator, steps: int) -> None:
        """The floor per iteration: the normal draw, W @ (m, R*d) in one BLAS call, and the gradient
        -2 M^T Y_i + 2 theta M^T M + 3 kappa ||theta|| theta on a state laid out (m, R, d)."""
        replicas = self.initial.shape[0]
        state = np.ascontiguousarray(self.initial.transpose(1, 0, 2))
        flat, problem = state.reshape(NUM_AGENTS, -1), self.problem
        curvature, offsets = 2.0 * problem.matrix.T @ problem.matrix, (-2.0 * problem.measurements @ problem.matrix)[:, None, :]
        for _ in range(steps):
            rng.standard_normal((NUM_AGENTS, replicas, 2))
            self.weights @ flat
            offsets + state @ curvature + (3.0 * problem.kappa) * np.sqrt(np.einsum("mrd,mrd->mr", state, state))[..., None] * state


def contenders(replicas: int, iterations: int) -> Contenders:
    setting = Setting(replicas)
    return Contenders(f"Wang-Basar Algorithm 2, {NUM_AGENTS} agents on a ring, d = 2, R = {replicas}, {iterations} "
                      f"iterations (vectorized: {VECTORIZED_ITERATIONS}, loop: {LOOP_ITERATIONS})", replicas,
                      setting.reference, setting.loop, setting.vectorized, setting.limit,
                      rounds=iterations, loop_rounds=LOOP_ITERATIONS, check_rounds=CHECK_ITERATIONS,
                      vectorized_rounds=min(iterations, VECTORIZED_ITERATIONS),
                      labels={"reference": "algorithm.run, the iterates only (as the baselines)"})


def grid_contenders(replicas: int, agents: int, dim: int) -> Contenders:
    setting = Setting(replicas, grid_problem(agents, dim))
    return Contenders(f"Wang-Basar Algorithm 2, {agents} agents on a ring, d = {dim}, R = {replicas}", replicas,
                      setting.reference, setting.loop, setting.vectorized, None, rounds=GRID_ITERATIONS,
                      loop_rounds=LOOP_ITERATIONS, check_rounds=CHECK_ITERATIONS)


def run_grid_benchmarks(*, echo: Callable[[str], None] = print, **options) -> dict[str, float]:
    return run_grid("Wang-Basar", grid_contenders, echo=echo, **options)


def run_benchmarks(*, replicas: int | None = None, iterations: int | None = None, repeats: int = DEFAULT_REPEATS,
                   echo: Callable[[str], None] = print) -> dict[str, float]:
    setting = contenders(replicas or REPLICAS, iterations or ITERATIONS)
    results = run_paper_bench(setting, repeats=repeats, echo=echo)
    return results | release_share(setting, NUM_AGENTS, 2, repeats, echo)
