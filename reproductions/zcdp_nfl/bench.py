"""`dpverify bench zcdp-nfl`: Algorithm 1 of seeds/004 (eqs. (7)-(9)) on LAD regression, the reference
(`run_zcdp_nfl`, ledger included, iterates not kept) against the baselines of reproductions/bench/papers.py.

All consume the generator alike: one standard-normal block (R, N, d) per iteration, scaled by the
calibrated sigma_k(n) of each agent (Lemma I, Theorem I), as `gaussian_mechanism` draws it.
"""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx
import numpy as np

from dpverify.algorithms.core.mixing import mixing_operator
from dpverify.algorithms.core.network import Network, random_connected_network
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.algorithms.core.synthetic import noisy_linear_observations
from dpverify.algorithms.zcdp_nfl.algorithm import (
    StepSchedule,
    ZcdpNflParams,
    ZcdpSchedule,
    run_zcdp_nfl,
    sensitivity_bound,
)
from dpverify.reproductions.bench.papers import Contenders, release_share, run_grid, run_paper_bench
from dpverify.reproductions.bench.timing import DEFAULT_REPEATS

NUM_AGENTS, NUM_SAMPLES, DIM = 50, 50, 8                 # seeds/004 L304
EDGES_PER_AGENT = 1.5                                    # L304: 75 edges for 50 clients (a sparse graph)
RHO, ETA0 = 0.05, 1.0                                    # any fixed values: speed does not depend on them
PHI1, TAU, C1 = 1e-3, 0.99, 1.0
REPLICAS, ITERATIONS = 100, 50                           # defaults of `dpverify bench zcdp-nfl`
LOOP_ITERATIONS = 2                                      # the loop's time per iteration is measured on a few
CHECK_ITERATIONS = 3
GRID_ITERATIONS = 20


def ring_with_chords(agents: int, rng: np.random.Generator) -> Network:
    """A sparse connected graph for the grid: the ring plus random chords up to EDGES_PER_AGENT * N edges (G(N, E)
    itself is rarely connected at N = 200, E = 300)."""
    graph = nx.cycle_graph(agents)
    while graph.number_of_edges() < min(int(EDGES_PER_AGENT * agents), agents * (agents - 1) // 2):
        graph.add_edge(*(int(k) for k in rng.choice(agents, 2, replace=False)))
    return Network.from_networkx(graph)


class Setting:
    """The instance and everything the baselines need per iteration, computed once."""

    def __init__(self, agents: int, dim: int, graph: str = "random"):
        rng = np.random.default_rng(0)
        edges = int(EDGES_PER_AGENT * agents)
        self.network: Network = (random_connected_network(agents, edges, rng) if graph == "random"
                                 else ring_with_chords(agents, rng))
        self.data: LocalData = noisy_linear_observations(agents, NUM_SAMPLES, dim, rng)[0]
        self.problem = Problem("absolute", "none", 1.0)   # LAD: l'(r) = sign(r); no regularizer
        self.params = ZcdpNflParams(rho=RHO, step=StepSchedule(ETA0, 0.5), c1=C1, noise=ZcdpSchedule(PHI1, TAU))
        self.neighbours = [self.network.neighbors(k) for k in range(agents)]
        self.degrees = self.network.degrees

    def sigmas(self, rounds: int) -> np.ndarray:
        """(rounds, N): sigma_k(n) = sqrt(Delta_k(n)^2 / (2 phi(n))) (Lemma I, Theorem I eq. (12))."""
        return np.sqrt([self.params.noise.variance(n, sensitivity_bound(self.params, self.network,
                                                                         self.data.num_samples, n))
                        for n in range(1, rounds + 1)])

    def reference(self, rng: np.random.Generator, rounds: int, replicas: int) -> np.ndarray:
        return run_zcdp_nfl(self.problem, self.data, self.network, self.params, horizon=rounds, replicas=replicas,
                            rng=rng, keep_iterates=False).final_broadcast

    def loop(self, rng: np.random.Generator, rounds: int, replicas: int) -> np.ndarray:
        """One replica, one client at a time: eq. (7) in closed form (spec §2.4), eq. (8), eq. (9)."""
        X, y, M = self.data.features, self.data.targets, self.data.num_samples
        agents, dim = X.shape[0], X.shape[2]
        broadcast = np.zeros((replicas, agents, dim))
        dual = np.zeros_like(broadcast)
        sigmas = self.sigmas(rounds)
        rho, degrees, neighbours = self.params.rho, self.degrees, self.neighbours
        for n in range(1, rounds + 1):
            inverse_eta = 1.0 / self.params.step.eta(n)
            xi = rng.standard_normal(broadcast.shape)
            for r in range(replicas):
                w, new = broadcast[r], np.empty((agents, dim))
                for k in range(agents):
                    g = np.sign(X[k] @ w[k] - y[k]) @ X[k] / M                            # LAD subgradient
                    pull = degrees[k] * w[k] + w[neighbours[k]].sum(axis=0)
                    new[k] = (w[k] * inverse_eta + rho * pull - dual[r, k] - g) / (inverse_eta + 2.0 * rho * degrees[k])
                for k in range(agents):
                    new[k] = new[k] + xi[r, k] * sigmas[n - 1, k]                      # eq. (8)
                for k in range(agents):
                    dual[r, k] = dual[r, k] + rho * (degrees[k] * new[k] - new[neighbours[k]].sum(axis=0))  # eq. (9)
                broadcast[r] = new
        return broadcast

    def vectorized(self, rng: np.random.Generator, rounds: int, replicas: int) -> np.ndarray:
        """What a good researcher writes: one replica at a time, its N clients as one (N, d) array, the LAD
        subgradient as batched products over clients and one product A @ W~ per iteration: the neighbour sums of a
        broadcast serve eq. (9) now and eq. (7) at the next iteration. No dpverify kernel is called."""
        X, y, M = self.data.features, self.data.targets, self.data.num_samples
        A, rho, degrees = self.network.adjacency, self.params.rho, self.degrees[:, None]
        broadcast = np.zeros((replicas, X.shape[0], X.shape[2]))   # tilde w^(0) = 0, gamma^(0) = 0
        dual, neighbour_sums = np.zeros_like(broadcast), np.zeros_like(broadcast)   # A @ tilde w^(0) = 0
        sigmas = self.sigmas(rounds)
        for n in range(1, rounds + 1):
            inverse_eta = 1.0 / self.params.step.eta(n)
            own, denominator = inverse_eta + rho * degrees, inverse_eta + 2.0 * rho * degrees   # (7) in closed form
            noise = rng.standard_normal(broadcast.shape) * sigmas[n - 1][:, None]   # xi^(n), every replica
            for w, gamma, pull, xi in zip(broadcast, dual, neighbour_sums, noise):
                residual = np.matmul(X, w[:, :, None])[:, :, 0] - y
                g = np.matmul(np.sign(residual)[:, None, :], X)[:, 0, :] / M          # LAD: l'(r) = sign(r)
                w[...] = (w * own + rho * pull - gamma - g) / denominator + xi          # eqs. (7)-(8)
                pull[...] = A @ w
                gamma += rho * (degrees * w - pull)                                     # eq. (9)
        return broadcast

    def limit(self, rng: np.random.Generator, rounds: int, replicas: int) -> None:
        """The floor per iteration: the noise draw, the neighbour sum A @ (N, R*d) in one call (sparse where that is
        cheaper, core/mixing.py), and the LAD subgradient as two batched products with the sign between them, the
        first taking y in as an extra column ([w, 1] [X^T; -y^T], `LocalData.affine_features`), on a state laid out
        (N, R, d). Every array is allocated once: a fresh (N, R, M) temporary each iteration is page-faulted back in
        (core/blocking.py), which a floor must not pay."""
        X = self.data.features
        agents, samples, dim = X.shape
        affine = np.ones((agents, replicas, dim + 1))     # [w, 1]: the ones column is set once here
        affine[..., :dim] = np.random.default_rng(0).standard_normal((agents, replicas, dim))
        flat = np.ascontiguousarray(affine[..., :dim]).reshape(agents, replicas * dim)
        A, features = mixing_operator(self.network.adjacency, replicas * dim), self.data.affine_features
        noise, gradient = np.empty((replicas, agents, dim)), np.empty((agents, replicas, dim))
        residual, signs = np.empty((agents, replicas, samples)), np.empty((agents, replicas, samples))
        for _ in range(rounds):
            rng.standard_normal(out=noise)
            A @ flat
            np.matmul(affine, features, out=residual)
            np.sign(residual, out=signs)   # into another array: numpy's sign in place is 6x slower
            np.matmul(signs, X, out=gradient)


def contenders(replicas: int, iterations: int, agents: int = NUM_AGENTS, dim: int = DIM,
               loop_iterations: int = LOOP_ITERATIONS, graph: str = "random") -> Contenders:
    """graph: "random" (G(N, 1.5 N) conditioned on connected, seeds/004 L304) or "ring+chords" (the grid's)."""
    setting = Setting(agents, dim, graph)

    def bind(method: Callable) -> Callable[[np.random.Generator, int], object]:
        return lambda rng, rounds: method(rng, rounds, replicas)

    edges = setting.network.num_edges
    return Contenders(
        f"zCDP-NFL, {agents} clients, {edges} edges ({graph}), d = {dim}, {NUM_SAMPLES} samples/client, R = {replicas}, "
        f"{iterations} iterations (loop: {loop_iterations})", replicas,
        bind(setting.reference), bind(setting.loop), bind(setting.vectorized), bind(setting.limit),
        rounds=iterations, loop_rounds=loop_iterations, check_rounds=CHECK_ITERATIONS,
        labels={"reference": "run_zcdp_nfl, ledger included"})


def grid_contenders(replicas: int, agents: int, dim: int) -> Contenders:
    return contenders(replicas, GRID_ITERATIONS, agents, dim, graph="ring+chords")


def run_benchmarks(*, replicas: int | None = None, iterations: int | None = None, repeats: int = DEFAULT_REPEATS,
                   echo: Callable[[str], None] = print) -> dict[str, float]:
    setting = contenders(replicas or REPLICAS, iterations or ITERATIONS)
    results = run_paper_bench(setting, repeats=repeats, echo=echo)
    return results | release_share(setting, NUM_AGENTS, DIM, repeats, echo)


def run_grid_benchmarks(*, echo: Callable[[str], None] = print, **options) -> dict[str, float]:
    return run_grid("zCDP-NFL", grid_contenders, echo=echo, **options)
