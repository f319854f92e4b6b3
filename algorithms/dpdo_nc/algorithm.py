"""DPDO-NC: differentially private distributed online mirror descent (Zhou & Li, seeds/002).

Algorithm 1 (L159-L168), batched over replicas: state X_t of shape (R, N, d). One round t:

    q_t^j = x_t^j + xi_t^j,  xi_t^j ~ Lap(sigma_t)^d                 (line 4; eq. (6))
    z_t^i = sum_j a_ij(t) q_t^j                                       (line 5; eq. (6))
    x_{t+1}^i = argmin_{x in Omega} D_phi(x, z_t^i) + <alpha_t grad f_t^i(x_t^i), x>   (line 6; eq. (7))

with alpha_t = 1/(N sqrt t) and sigma_t = 2 sqrt(d) alpha_t theta / (omega eps) (line 1). Every
noisy broadcast goes through dpverify.algorithms.core.noise.laplace_mechanism and is recorded in the ledger with
the sensitivity of Lemma 1's bound (8), so the ledger holds the paper's own accounting.

Regret of Definition 1 (eq. (2), L95) is accumulated online: G_t^i = sum_j grad f_t^j(x_t^i),
dot_T^i = sum_{t<=T} <G_t^i, x_t^i>, S_T^i = sum_{t<=T} G_t^i; over the l1 ball
max_x <-S, x> = r ||S||_inf, so R_T^i = dot_T^i + r ||S_T^i||_inf (spec 5.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import networkx as nx
import numpy as np

from dpverify.algorithms.core.blocking import ROUND_BLOCK_ELEMENTS, row_blocks
from dpverify.algorithms.core.errors import (
    InvalidDataError,
    InvalidGraphError,
    InvalidParameterError,
)
from dpverify.algorithms.core.mixing import agent_major, mixing_operator
from dpverify.algorithms.core.mixing import mix as mix_neighbours
from dpverify.algorithms.core.mixing import mix_per_link
from dpverify.algorithms.core.noise import PrivacyLedger, laplace_mechanism, laplace_plan, laplace_release
from dpverify.algorithms.core.rowwise import SEQUENTIAL_BELOW, row_norms, scale_rows, shifted
from dpverify.algorithms.core.validation import require_positive, require_positive_int

DOUBLY_STOCHASTIC_ATOL = 1e-12
SELF_COPY = ("noisy", "clean")       # spec 2.4 reading 3: node i's own term a_ii q_t^i (literal) or a_ii x_t^i
NOISE_DRAW = ("per_node", "per_link")  # spec 2.4 reading 4: one broadcast per node (literal) or one draw per link
GRADIENT_AT_SENSOR = 1e-12           # default (spec P17): grad f := 0 when ||x - s_i|| < this (f is not differentiable there)

# seeds/002 L487: the three weight matrices (row i = receiver i).
PAPER_MATRICES = np.array([
    [[1/2, 0, 0, 0, 0, 1/2], [1/2, 1/2, 0, 0, 0, 0], [0, 1/2, 1/2, 0, 0, 0],
     [0, 0, 1/2, 1/2, 0, 0], [0, 0, 0, 1/2, 1/2, 0], [0, 0, 0, 0, 1/2, 1/2]],
    (np.ones((6, 6)) - np.eye(6)) / 5,
    [[1/3, 0, 1/3, 0, 1/3, 0], [0, 1/3, 0, 1/3, 0, 1/3], [1/3, 0, 1/3, 0, 1/3, 0],
     [0, 1/3, 0, 1/3, 0, 1/3], [1/3, 0, 1/3, 0, 1/3, 0], [0, 1/3, 0, 1/3, 0, 1/3]],
])


# ------------------------------------------------------------------------------------------------
# time-varying graphs (Sec. 2.1, Assumption 1)


def check_doubly_stochastic(matrix: np.ndarray, name: str = "A(t)") -> None:
    """Nonnegative, A 1 = 1 and 1^T A = 1^T (L51); raises InvalidGraphError naming the first violation."""
    a = np.asarray(matrix, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or not np.all(np.isfinite(a)):
        raise InvalidGraphError(f"{name} must be a finite square matrix; got shape {a.shape}")
    if np.any(a < 0):
        i, j = np.argwhere(a < 0)[0]
        raise InvalidGraphError(f"{name} has a negative weight a[{i},{j}] = {a[i, j]:g} (Assumption 1, L63)")
    for axis, what in ((1, "row"), (0, "column")):
        sums = a.sum(axis=axis)
        bad = np.flatnonzero(np.abs(sums - 1) > DOUBLY_STOCHASTIC_ATOL)
        if bad.size:
            raise InvalidGraphError(f"{name} is not doubly stochastic: {what} {bad[0]} sums to {sums[bad[0]]:.12g}, "
                                    "expected 1 (Assumption 1, L63)")


def union_digraph(matrices: np.ndarray) -> nx.DiGraph:
    """(V, union of E(k)): edge j -> i when a_ij(k) > 0 for some k (row i mixes i's in-neighbours, L51)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(matrices.shape[-1]))
    receivers, senders = np.nonzero(np.any(np.asarray(matrices) > 0, axis=0))
    graph.add_edges_from((int(j), int(i)) for i, j in zip(receivers, senders) if i != j)
    return graph


@dataclass(frozen=True, eq=False)
class Schedule:
    """A(t) = matrices[order[(t - 1) mod len(order)]], validated for Assumption 1 with window length B:
    every A(t) doubly stochastic, and the union graph of every window of B consecutive rounds
    ((k-1)B+1 .. kB, L53) strongly connected. A periodic order is checked over a full period of windows."""

    matrices: np.ndarray
    order: np.ndarray
    window: int

    def __post_init__(self) -> None:
        matrices = np.array(self.matrices, dtype=float)
        order = np.array(self.order, dtype=int)
        require_positive_int("B", self.window, "B-strong connectivity, L53")
        if matrices.ndim != 3 or matrices.shape[1] != matrices.shape[2]:
            raise InvalidGraphError(f"matrices must have shape (K, N, N); got {matrices.shape}")
        if order.ndim != 1 or order.size == 0 or order.min() < 0 or order.max() >= len(matrices):
            raise InvalidGraphError(f"order must index the {len(matrices)} matrices; got {order.tolist()[:10]}")
        for k, a in enumerate(matrices):
            check_doubly_stochastic(a, f"A_{k + 1}")
        period = order.size * self.window // np.gcd(order.size, self.window)
        for k in range(period // self.window):
            rounds = np.arange(k * self.window, (k + 1) * self.window)
            graph = union_digraph(matrices[order[rounds % order.size]])
            if not nx.is_strongly_connected(graph):
                parts = [sorted(c) for c in nx.strongly_connected_components(graph)]
                raise InvalidGraphError(
                    f"window {k + 1} (rounds {rounds[0] + 1}-{rounds[-1] + 1}) is not strongly connected: components "
                    f"{parts} (Assumption 1 with B = {self.window}, L53)")
        matrices.setflags(write=False)
        order.setflags(write=False)
        object.__setattr__(self, "matrices", matrices)
        object.__setattr__(self, "order", order)

    @property
    def num_agents(self) -> int:
        return self.matrices.shape[-1]

    def position(self, t: int) -> int:
        """The index k of A(t) = matrices[k]."""
        return int(self.order[(t - 1) % self.order.size])

    def at(self, t: int) -> np.ndarray:
        return self.matrices[self.position(t)]


def paper_schedule(window: int = 2, switching: str = "cyclic", horizon: int | None = None,
                   rng: np.random.Generator | None = None) -> Schedule:
    """The three graphs of L487 switched cyclically (default, spec P2) or i.i.d. uniformly."""
    if switching == "cyclic":
        return Schedule(PAPER_MATRICES, np.arange(3), window)
    if switching == "iid":
        if horizon is None or rng is None:
            raise InvalidParameterError("i.i.d. switching needs a horizon and a generator")
        return Schedule(PAPER_MATRICES, rng.integers(0, 3, size=horizon), window)
    raise InvalidParameterError(f"switching must be 'cyclic' or 'iid'; got {switching!r}")


# ------------------------------------------------------------------------------------------------
# costs (Example 1, Sec. 5)


class Costs(Protocol):
    num_agents: int

    def own_gradient(self, t: int, x: np.ndarray) -> np.ndarray: ...      # (R, N, d): grad f_t^i(x^i)

    def node_gradient(self, t: int, i: int, x: np.ndarray) -> np.ndarray: ...   # (d,): grad f_t^i(x), node i alone

    def global_gradient(self, t: int, x: np.ndarray) -> np.ndarray: ...   # (R, N, d): sum_j grad f_t^j(x^i)


@dataclass(frozen=True, eq=False)
class Localization:
    """f_t^i(x) = 1/2 (||s_i - x|| - d_t^i)^2 (L83, L499); grad = (1 - d/r)(x - s_i), r = ||x - s_i||."""

    sensors: np.ndarray      # (N, d)
    distances: np.ndarray    # (T, N): d_t^i, t = 1..T
    target: np.ndarray       # (T, d): x_t^0

    @property
    def num_agents(self) -> int:
        return self.sensors.shape[0]

    @staticmethod
    def _factors(points: np.ndarray, sensors: np.ndarray, distances: np.ndarray,
                 counts=1.0) -> tuple[np.ndarray, np.ndarray]:
        """(1 - d/r, x - s) with r = ||x - s||, the factor 0 where r < GRADIENT_AT_SENSOR: grad = factor * gap.
        For sensors standing for `counts` identical ones, the summed factor counts - (their d summed)/r."""
        gap = shifted(points, -sensors)   # points - sensors
        r = row_norms(gap)
        factor = np.asarray(counts - distances / np.maximum(r, GRADIENT_AT_SENSOR))   # an array also for one point
        at_sensor = r < GRADIENT_AT_SENSOR
        if np.any(at_sensor):   # rare: a masked write instead of np.where's three temporaries every round
            factor[at_sensor] = 0.0
        return factor, gap

    def _gradients(self, points: np.ndarray, sensors: np.ndarray, distances: np.ndarray, counts=1.0) -> np.ndarray:
        factor, gap = self._factors(points, sensors, distances, counts)
        return scale_rows(gap, factor)

    def own_gradient(self, t: int, x: np.ndarray) -> np.ndarray:
        return self._gradients(x, self.sensors, self.distances[t - 1])

    def node_gradient(self, t: int, i: int, x: np.ndarray) -> np.ndarray:
        """grad f_t^i(x) of node i alone, x (d,): the contract's gradient oracle, called once per agent and round. A
        short vector is done on Python floats, the formulas of `_factors` in their order (the squares summed left to
        right, as row_norms does below SEQUENTIAL_BELOW): the same bits, 1.6 against 12.7 us a call at d = 2
        (measured; the oracle was a third of a per-agent-loop implementation's run)."""
        point = np.asarray(x, dtype=float)
        if point.ndim != 1 or point.size >= SEQUENTIAL_BELOW:
            return self._gradients(point, self.sensors[i], self.distances[t - 1, i])
        gap = [p - s for p, s in zip(point.tolist(), self._sensor_rows[i])]
        squares = 0.0
        for g in gap:
            squares += g * g
        r = math.sqrt(squares)
        factor = 0.0 if r < GRADIENT_AT_SENSOR else 1.0 - float(self.distances[t - 1, i]) / r
        return np.array([g * factor for g in gap])

    @cached_property
    def _sensor_rows(self) -> list[list[float]]:
        return self.sensors.tolist()

    @cached_property
    def _sensor_groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(distinct sensors (U, d), how many nodes share each (U,), each node's group (N,)) where two or more nodes
        share a sensor (the paper's layout: all six at one point, L501); None when all are distinct."""
        distinct, group, counts = np.unique(self.sensors, axis=0, return_inverse=True, return_counts=True)
        return None if len(distinct) == self.num_agents else (distinct, counts.astype(float), group.ravel())

    def global_gradient(self, t: int, x: np.ndarray) -> np.ndarray:
        """sum_j grad f_t^j(x^i) for points x (..., N_i, d). The (..., N_i, N_j, d) terms are formed a block of
        leading rows at a time (core/blocking.py), so its temporaries stay small. Nodes that share a sensor s share
        the gap x - s and r, so their terms are summed as one: (count - sum_j d_j / r)(x - s), equal to the sum term
        by term up to rounding (for the paper's layout one term instead of six: the tracker took 69% of a regret-on
        round at R = 1000, N = 6, d = 2, measured)."""
        x = np.asarray(x, dtype=float)
        rows = x.reshape(-1, *x.shape[-2:])
        total = np.empty_like(rows)
        sensors, distances, counts = self.sensors, self.distances[t - 1], 1.0
        if self._sensor_groups is not None:
            sensors, counts, group = self._sensor_groups
            distances = np.bincount(group, weights=distances, minlength=len(sensors))
            if len(sensors) == 1:   # one term per point: no (..., N_i, 1, d) temporaries, no sum
                return self._gradients(x, sensors[0], distances[0], counts[0])
        for block in row_blocks(rows.shape[0], rows[0].size * len(sensors)):
            factor, gap = self._factors(rows[block, :, None, :], sensors, distances, counts)
            np.einsum("rij,rijd->rid", factor, gap, out=total[block])   # sum over senders j
        return total.reshape(x.shape)

    def value(self, t: int, x: np.ndarray) -> np.ndarray:
        """sum_j f_t^j(x) for points (..., d)."""
        r = np.linalg.norm(np.asarray(x)[..., None, :] - self.sensors, axis=-1)
        return 0.5 * np.sum((r - self.distances[t - 1]) ** 2, axis=-1)


def localization_instance(rng: np.random.Generator, horizon: int, *, num_agents: int = 6,
                          sensor_layout: str = "paper", measurement_noise: float = 0.001) -> Localization:
    """Example 1 as run in Sec. 5 (L489-L501): x_1^0 = (0.8, 0.95); x_{t+1}^0 = x_t^0 +
    ((-1)^q sin(t/50)/(10 t), -q cos(t/70)/(40 t)), q ~ Bernoulli(1/2); d_t^i = ||s_i - x_t^0|| + U[0, 0.001];
    s_i = (0.8, 0.95) for every i (L501, literal) or on a circle of radius 4 (`distinct`, not in the paper)."""
    start = np.array([0.8, 0.95])
    if sensor_layout == "paper":
        sensors = np.tile(start, (num_agents, 1))
    elif sensor_layout == "distinct":
        angles = 2 * np.pi * np.arange(1, num_agents + 1) / num_agents
        sensors = 4.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    else:
        raise InvalidParameterError(f"sensor_layout must be 'paper' or 'distinct'; got {sensor_layout!r}")
    t = np.arange(1, horizon)
    q = rng.integers(0, 2, size=horizon - 1)
    steps = np.stack([(-1.0) ** q * np.sin(t / 50) / (10 * t), -q * np.cos(t / 70) / (40 * t)], axis=1)
    target = np.vstack([start, start + np.cumsum(steps, axis=0)])
    distances = np.linalg.norm(sensors[None] - target[:, None], axis=-1) + rng.uniform(0, measurement_noise, (horizon, num_agents))
    return Localization(sensors, distances, target)


@dataclass(frozen=True, eq=False)
class NodeReplaced:
    """Neighbouring costs (Definition 3, L186): node `node`'s cost replaced by <c, x> at every round
    (spec P13 default), the others unchanged. With ||c|| = theta this is the worst case of Lemma 1. `alternating`:
    <(-1)^(t+1) c, x> at round t instead (the costs are online, so each round's may differ): the same worst case at
    every round, and a difference between neighbours that changes from round to round, which noise reused across
    rounds cannot hide."""

    base: Costs
    node: int
    direction: np.ndarray
    alternating: bool = False

    def _direction(self, t: int) -> np.ndarray:
        return -self.direction if self.alternating and t % 2 == 0 else self.direction

    @property
    def num_agents(self) -> int:
        return self.base.num_agents

    def own_gradient(self, t: int, x: np.ndarray) -> np.ndarray:
        gradient = self.base.own_gradient(t, x).copy()
        gradient[..., self.node, :] = self._direction(t)
        return gradient

    def node_gradient(self, t: int, i: int, x: np.ndarray) -> np.ndarray:
        return self._direction(t).copy() if i == self.node else self.base.node_gradient(t, i, x)

    def global_gradient(self, t: int, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError("regret is measured on the experiment's costs, not on audit neighbours")


# ------------------------------------------------------------------------------------------------
# Algorithm 1


@dataclass(frozen=True)
class DpdoNcParams:
    """epsilon None = "without differential privacy" (sigma_t = 0, Fig. 1); theta: gradient bound on
    Omega (L75) that calibrates sigma_t; mirror: a map of dpverify.algorithms.core.mirror; radius of Omega."""

    epsilon: float | None
    theta: float
    mirror: object
    radius: float = 3.0
    self_copy: str = "noisy"
    noise_draw: str = "per_node"
    noise_omega: float | None = None  # omega used in sigma_t (spec P5); None: the map's own

    def __post_init__(self) -> None:
        if self.epsilon is not None:
            require_positive("eps", self.epsilon, "Theorem 1, L253: eps > 0")
        require_positive("theta", self.theta, "the gradient bound of L75")
        require_positive("radius", self.radius, "a bounded Omega, Assumption 2")
        if self.self_copy not in SELF_COPY:
            raise InvalidParameterError(f"self_copy must be one of {SELF_COPY}; got {self.self_copy!r}")
        if self.noise_draw not in NOISE_DRAW:
            raise InvalidParameterError(f"noise_draw must be one of {NOISE_DRAW}; got {self.noise_draw!r}")

    @property
    def omega(self) -> float:
        return self.noise_omega if self.noise_omega is not None else self.mirror.omega

    def alpha(self, t: int, num_agents: int) -> float:
        return 1.0 / (num_agents * np.sqrt(t))  # Algorithm 1 line 1, Theorem 2

    def sensitivity_bound(self, t: int, num_agents: int, dim: int) -> float:
        return 2.0 * np.sqrt(dim) * self.alpha(t, num_agents) * self.theta / self.omega  # Lemma 1, eq. (8)

    def sigma(self, t: int, num_agents: int, dim: int) -> float:
        if self.epsilon is None:
            return 0.0
        return self.sensitivity_bound(t, num_agents, dim) / self.epsilon  # Algorithm 1 line 1 = (8)/eps


@dataclass
class DpdoNcRun:
    """checkpoints (K,) horizons T'; regret_dot (K, R, N) = sum_{t<=T'} <G_t^i, x_t^i>; regret_sum
    (K, R, N, d) = sum_{t<=T'} G_t^i. With keep: iterates (T+1, R, N, d) = x_1..x_{T+1},
    broadcasts / mixed (T, R, N, d) = q_t, z_t (per_node reading), own_gradients (T, R, N, d)."""

    checkpoints: np.ndarray
    regret_dot: np.ndarray
    regret_sum: np.ndarray
    sigmas: np.ndarray
    alphas: np.ndarray
    final: np.ndarray
    ledger: PrivacyLedger
    iterates: np.ndarray | None = None
    broadcasts: np.ndarray | None = None
    mixed: np.ndarray | None = None
    own_gradients: np.ndarray | None = None
    extra: dict = field(default_factory=dict)

    def regret(self, radius: float) -> np.ndarray:
        """Per-run regret (3) at every checkpoint: (K, R, N)."""
        return self.regret_dot + radius * np.abs(self.regret_sum).max(axis=-1)

    def expected_regret(self, radius: float) -> np.ndarray:
        """Plug-in of (2) (max outside the expectation, L95): (K, N)."""
        return self.regret_dot.mean(axis=1) + radius * np.abs(self.regret_sum.mean(axis=1)).max(axis=-1)


class RegretTracker:
    """The regret accumulators of (3) at the checkpoints `marks`: sum_{t<=T'} <G_t^i, x_t^i> and
    sum_{t<=T'} G_t^i, with G_t^i = sum_j grad f_t^j(x_t^i). Fed one round at a time (the state x_t, (R, N, d)),
    by run_dpdo_nc as it runs and by regret_of_iterates for a transcript."""

    def __init__(self, costs: Costs, marks: np.ndarray, replicas: int, num_agents: int, dim: int) -> None:
        self.costs, self.marks = costs, marks
        self.dot, self.sum = np.zeros((replicas, num_agents)), np.zeros((replicas, num_agents, dim))
        self.dots: list[np.ndarray] = []
        self.sums: list[np.ndarray] = []

    def add(self, t: int, x: np.ndarray) -> None:
        g_all = self.costs.global_gradient(t, x)
        if self.sum.strides != g_all.strides:   # accumulate in the state's layout (agent-major in run_dpdo_nc): the
            self.sum = _laid_out_as(g_all, self.sum)   # sums then run contiguous, 3 instead of 34 us at R = 1000,
            self.dot = _laid_out_as(g_all[..., 0], self.dot)   # N = 6, d = 2 (the same values)
        self.dot += np.einsum("rnd,rnd->rn", g_all, x)
        self.sum += g_all
        if len(self.dots) < self.marks.size and t == self.marks[len(self.dots)]:
            self.dots.append(self.dot.copy())
            self.sums.append(self.sum.copy())

    def accumulators(self) -> tuple[np.ndarray, np.ndarray]:
        """regret_dot (K, R, N) and regret_sum (K, R, N, d); K = 0 when regret was not tracked."""
        if not self.dots:
            return np.zeros((0, *self.dot.shape)), np.zeros((0, *self.sum.shape))
        return np.stack(self.dots), np.stack(self.sums)


def _laid_out_as(template: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A copy of values in template's memory layout."""
    copy = np.empty_like(template)
    copy[...] = values
    return copy


def regret_of_iterates(costs: Costs, iterates: np.ndarray, checkpoints) -> tuple[np.ndarray, np.ndarray]:
    """The regret accumulators (RegretTracker) of given iterates x_1..x_T (T' <= T, R, N, d), e.g. a user
    implementation's transcripts: regret_dot (K, R, N), regret_sum (K, R, N, d)."""
    marks = np.array(sorted({int(c) for c in checkpoints}))
    tracker = RegretTracker(costs, marks, *iterates.shape[1:])
    for t in range(1, int(marks.max()) + 1):
        tracker.add(t, iterates[t - 1])
    return tracker.accumulators()


def mix(schedule_matrix: np.ndarray, broadcasts: np.ndarray, iterates: np.ndarray, self_copy: str,
        operator=None) -> np.ndarray:
    """z_t^i = sum_j a_ij(t) q_t^j (eq. (6)); `clean`: node i's own term uses x_t^i. operator: A(t) as
    core/mixing.py `mixing_operator` built it (sparse for a sparse graph), by default A(t) itself."""
    z = mix_neighbours(schedule_matrix if operator is None else operator, broadcasts)
    if self_copy == "clean":
        z = z + np.diagonal(schedule_matrix)[None, :, None] * (iterates - broadcasts)
    return z


def check_start(x1: np.ndarray, radius: float) -> None:
    outside = np.abs(x1).sum(axis=-1) > radius * (1 + 1e-12)
    if np.any(outside):
        index = tuple(int(i) for i in np.argwhere(outside)[0])
        raise InvalidDataError(f"starting point x_1 at {index} = {x1[index].tolist()} lies outside Omega = {{||x||_1 <= {radius:g}}} "
                               "(Algorithm 1 line 1 requires x_1^i in Omega)")


def _per_node_round(costs: Costs, params: DpdoNcParams, t: int, alpha: float, weights, release, rng, x, x_next,
                    blocks: list[slice], keep: bool):
    """Lines 4-6 of round t, written into x_next (x itself when nothing is kept), a block of replicas at a time
    (core/blocking.py ROUND_BLOCK_ELEMENTS) so that the round's passes run in cache; the blocks draw in turn what one
    draw for all replicas would (core/noise.py laplace_release). weights: (A(t), its mixing operator). Returns (q_t,
    z_t, own gradients) when keep, else Nones."""
    a, operator = weights
    kept = tuple(np.empty_like(x) for _ in range(3)) if keep else None
    for block in blocks:
        xb = x[block]
        qb = xb.copy() if release is None else laplace_release(xb, release, rng)      # line 4
        zb = mix(a, qb, xb, params.self_copy, operator)                                # line 5
        gb = costs.own_gradient(t, xb)
        x_next[block] = params.mirror.step(zb, gb, alpha, params.radius)              # line 6
        if keep:
            for array, value in zip(kept, (qb, zb, gb)):
                array[block] = value
    return kept if keep else (None, None, None)


def _per_link_round(costs: Costs, params: DpdoNcParams, t: int, alpha: float, a, sigma, bound, rng, ledger, x):
    """Round t with one draw per (receiver, sender) (spec 2.4 reading 4): (q_t, z_t, own gradients, x_{t+1})."""
    replicas, n, dim = x.shape
    copies = np.repeat(x, n, axis=0)  # (R*N_receivers, N_senders, d)
    q_links = copies.copy() if sigma == 0 else laplace_mechanism(copies, bound, sigma, rng, ledger=ledger,
                                                                 iteration=t, label="per-link q_t^{j->i}")
    q_links = q_links.reshape(replicas, n, n, dim)  # (R, receiver, sender, d)
    z = mix_per_link(a, q_links)
    q = q_links[:, np.arange(n), np.arange(n)]
    if params.self_copy == "clean":
        z = z + np.diagonal(a)[None, :, None] * (x - q)
    g_own = costs.own_gradient(t, x)
    return q, z, g_own, params.mirror.step(z, g_own, alpha, params.radius)


def run_dpdo_nc(costs: Costs, schedule: Schedule, params: DpdoNcParams, *, horizon: int, replicas: int,
                rng: np.random.Generator, dim: int = 2, x1: np.ndarray | None = None,
                checkpoints=None, keep: bool = False, regret: bool = True) -> DpdoNcRun:
    """Algorithm 1 for `horizon` rounds on `replicas` independent noise draws (batched)."""
    horizon = require_positive_int("horizon", horizon)
    replicas = require_positive_int("replicas", replicas)
    n = schedule.num_agents
    if costs.num_agents != n:
        raise InvalidDataError(f"costs are defined for {costs.num_agents} nodes but the schedule has {n}")
    start = np.zeros(dim) if x1 is None else np.asarray(x1, float)
    x = agent_major(np.broadcast_to(start, (replicas, n, dim)))   # stored node-major: mixing is one product
    check_start(x, params.radius)
    marks = np.array(sorted({int(c) for c in (checkpoints if checkpoints is not None else [horizon])}))
    if marks.min() < 1 or marks.max() > horizon:
        raise InvalidParameterError(f"checkpoints must lie in 1..{horizon}; got {marks.min()}..{marks.max()}")
    ledger = PrivacyLedger()
    tracker = RegretTracker(costs, marks, replicas, n, dim)
    alphas = np.array([params.alpha(t, n) for t in range(1, horizon + 1)])
    sigmas = np.array([params.sigma(t, n, dim) for t in range(1, horizon + 1)])
    kept = {"iterates": [x], "broadcasts": [], "mixed": [], "own_gradients": []} if keep else None
    blocks = row_blocks(replicas, n * dim, ROUND_BLOCK_ELEMENTS)
    operators = [mixing_operator(m, (blocks[0].stop - blocks[0].start) * dim) for m in schedule.matrices]
    for t in range(1, horizon + 1):  # a loop over rounds; replicas and nodes are batched
        if regret:
            tracker.add(t, x)
        a, alpha = schedule.at(t), alphas[t - 1]
        sigma, bound = sigmas[t - 1], params.sensitivity_bound(t, n, dim)
        if params.noise_draw == "per_node":
            release = None if sigma == 0 else laplace_plan(bound, sigma, n, t, "q_t = x_t + xi_t (Algorithm 1 line 4)")
            if release is not None:
                ledger.record(release)
            x_next = np.empty_like(x) if keep else x   # in place: a block's next state depends on its own replicas only
            q, z, g_own = _per_node_round(costs, params, t, alpha, (a, operators[schedule.position(t)]), release, rng,
                                          x, x_next, blocks, keep)
        else:  # one draw per (receiver, sender): the sender's iterate released once per receiver
            q, z, g_own, x_next = _per_link_round(costs, params, t, alpha, a, sigma, bound, rng, ledger, x)
        if keep:
            for name, value in zip(("broadcasts", "mixed", "own_gradients", "iterates"), (q, z, g_own, x_next)):
                kept[name].append(value)
        x = x_next
    if not np.all(np.isfinite(x)):
        raise InvalidDataError("iterates became non-finite")
    stacked = {k: np.stack(v) for k, v in kept.items()} if keep else {}
    return DpdoNcRun(marks, *tracker.accumulators(), sigmas, alphas, x, ledger, **stacked)


def replay(costs: Costs, schedule: Schedule, params: DpdoNcParams, broadcasts: np.ndarray,
           x1: np.ndarray) -> np.ndarray:
    """The execution A^{-1}(F, O, X_1) of L190: iterates x_1..x_{T+1} (T+1, R, N, d) given the observed
    broadcasts O = (q_1..q_T) (T, R, N, d) and the public X_1, on costs F (per_node reading)."""
    x, path = np.asarray(x1, dtype=float), [np.asarray(x1, dtype=float)]
    n = schedule.num_agents
    for t, q in enumerate(broadcasts, start=1):
        z = mix(schedule.at(t), q, x, params.self_copy)
        x = params.mirror.step(z, costs.own_gradient(t, x), params.alpha(t, n), params.radius)
        path.append(x)
    return np.stack(path)
