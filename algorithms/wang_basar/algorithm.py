"""Wang & Basar, "Decentralized Nonconvex Optimization with Guaranteed Privacy and Accuracy" (seeds/003).

Algorithm 1 (noise-free, eqs. (6)-(7), L148-L170) and Algorithm 2 (Gaussian noise on the shared
gradient step, eqs. (8)-(9), L174-L198), batched over replicas: the state is (R, m, d), one matmul
mixes all replicas, the noise of all replicas and agents is one draw per iteration.

Indexing (spec Sec. 2.3 item 3, harness default): x^1 = x_init and step k maps x^k -> x^{k+1} with
lambda^k, so a run of `iterations` K stores x^1 .. x^K.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from dpverify.algorithms.core.errors import (
    InvalidDataError,
    InvalidGraphError,
    InvalidParameterError,
)
from dpverify.algorithms.core.blocking import ROUND_BLOCK_ELEMENTS, row_blocks
from dpverify.algorithms.core.mixing import agent_major, mix, mix_per_link, mixing_operator
from dpverify.algorithms.core.network import Network, metropolis_weights
from dpverify.algorithms.core.noise import (
    PrivacyLedger,
    Release,
    gaussian_mechanism,
    gaussian_release,
    gaussian_releases,
)
from dpverify.algorithms.core.rowwise import row_sum
from dpverify.algorithms.core.validation import require_finite, require_positive_int

NOISE_DRAWS = ("per_agent", "per_link")   # spec Sec. 2.3 item 1: (8) indexes n_j^k by sender only (literal default)
WEIGHT_TOLERANCE = 1e-10                  # float tolerance of symmetry / stochasticity of W
RELEASE_LABEL = "wang-basar/eq-8"          # the ledger label of the eq. (8) release
GRAPHS = ("ring", "path", "star", "complete")


# ------------------------------------------------------------------------------------------------
# stepsizes (Theorems 1-3, Sec. 6)


@dataclass(frozen=True)
class StepSchedule:
    """lambda^k = initial for k <= switch, then scale * k^-power (k > switch).

    Sec. 6.1 (L579): (0.02, 500, 1, 1); Sec. 6.2 (L597): (0.003, 100, 0.3, 1); a constant stepsize is
    power = 0; a/k^v is switch = 0. The theorems' conditions are decided in closed form for this family:
    sum lambda = inf  iff power <= 1;  sum lambda^2 < inf  iff power > 1/2 (p-series);
    non-increasing iff power >= 0 and scale (switch+1)^-power <= initial.
    """

    initial: float
    switch: int
    scale: float
    power: float

    def __post_init__(self) -> None:
        for name in ("initial", "scale"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise InvalidParameterError(f"stepsize {name} must be a finite number > 0 (lambda^k >= 0, eq. (10)); got {value!r}")
        if isinstance(self.switch, bool) or not isinstance(self.switch, int) or self.switch < 0:
            raise InvalidParameterError(f"stepsize switch must be an integer >= 0; got {self.switch!r}")
        if not (isinstance(self.power, (int, float)) and math.isfinite(self.power)):
            raise InvalidParameterError(f"stepsize power must be finite; got {self.power!r}")

    def __call__(self, k):
        if isinstance(k, int) and k >= 1:   # the algorithm's per-iteration call, without the checks and np.where
            # a 0-d array, as below: numpy's power takes 1/k for power 1, which Python's pow can miss by an ulp
            return self.initial if k <= self.switch else float(self.scale * np.asarray(float(k)) ** (-float(self.power)))
        k = np.asarray(k, dtype=float)
        if np.any(k < 1):
            raise InvalidParameterError(f"iterations start at k = 1 (Algorithm 2, L176); got k = {k.min():g}")
        value = np.where(k <= self.switch, self.initial, self.scale * k ** (-float(self.power)))
        return float(value) if value.ndim == 0 else value

    @property
    def not_summable(self) -> bool:          # sum_k lambda^k = inf  (Theorem 2, L346)
        return self.power <= 1

    @property
    def square_summable(self) -> bool:       # sum_k (lambda^k)^2 < inf  (Theorems 1-2, L236, L346)
        return self.power > 0.5

    @property
    def non_increasing(self) -> bool:        # Theorem 2, L346
        return self.power >= 0 and self.scale * (self.switch + 1) ** (-float(self.power)) <= self.initial * (1 + 1e-12)

    def violations(self) -> tuple[str, ...]:
        """The conditions of Theorems 1-3 (second phase) this schedule violates."""
        found = []
        if not self.square_summable:
            found.append(f"sum (lambda^k)^2 = inf (power {self.power:g} <= 1/2; Theorems 1-2 need square summability)")
        if not self.not_summable:
            found.append(f"sum lambda^k < inf (power {self.power:g} > 1; Theorem 2 needs a non-summable stepsize)")
        if not self.non_increasing:
            found.append("lambda^k is not non-increasing (Theorem 2)")
        return tuple(found)


SECTION_61_SCHEDULE = StepSchedule(0.02, 500, 1.0, 1.0)    # seeds/003 L579
SECTION_62_SCHEDULE = StepSchedule(0.003, 100, 0.3, 1.0)   # seeds/003 L597: 3/(10k)


# ------------------------------------------------------------------------------------------------
# weights (Assumption 4)


def consensus_contraction(weights: np.ndarray) -> float:
    """eta = ||W - 11^T/m|| (Assumption 4, L100; spectral norm, spec Sec. 1.1 default)."""
    weights = np.asarray(weights, dtype=float)
    m = weights.shape[0]
    return float(np.linalg.norm(weights - np.ones((m, m)) / m, 2))


def validate_weights(weights: np.ndarray) -> np.ndarray:
    """Assumption 4 (L98-L100): W symmetric, nonnegative, 1^T W = 1^T, W 1 = 1, w_ii > 0 (L96), eta < 1."""
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2 or weights.shape[0] != weights.shape[1] or weights.shape[0] < 2:
        raise InvalidGraphError(f"W must be a square (m, m) matrix with m >= 2; got shape {weights.shape}")
    if not np.all(np.isfinite(weights)):
        raise InvalidGraphError("W contains NaN/inf entries")
    asymmetry = float(np.max(np.abs(weights - weights.T)))
    if asymmetry > WEIGHT_TOLERANCE:
        raise InvalidGraphError(f"W is not symmetric (max |W - W^T| = {asymmetry:.3g}); Assumption 4 (L100) requires it")
    if weights.min() < -WEIGHT_TOLERANCE:
        raise InvalidGraphError(f"W has a negative entry ({weights.min():.3g}); weights are >= 0 (L96)")
    deviation = float(np.max(np.abs(weights.sum(axis=1) - 1.0)))
    if deviation > WEIGHT_TOLERANCE:
        raise InvalidGraphError(f"W is not doubly stochastic (row sums deviate from 1 by {deviation:.3g}); Assumption 4 (L100)")
    if np.any(np.diag(weights) <= 0):
        raise InvalidGraphError(f"W needs w_ii > 0 for every agent (L96); got diagonal {np.diag(weights).tolist()}")
    eta = consensus_contraction(weights)
    if not eta < 1 - WEIGHT_TOLERANCE:
        raise InvalidGraphError(f"||W - 11^T/m|| = {eta:.6g} must be < 1 (Assumption 4, L100; the graph must be connected)")
    return weights


def graph_weights(graph: str, num_agents: int = 5) -> np.ndarray:
    """W of the named graph. 'ring': w_ii = w_{i,i+-1} = 1/3 (spec P1 default for Fig. 2, whose edges are
    not in the text); 'path', 'star': Metropolis weights; 'complete': 11^T/m."""
    num_agents = require_positive_int("num_agents", num_agents)
    if graph == "ring":
        weights = sum(np.roll(np.eye(num_agents), shift, axis=1) for shift in (-1, 0, 1)) / 3.0
    elif graph == "complete":
        weights = np.full((num_agents, num_agents), 1.0 / num_agents)
    elif graph in ("path", "star"):
        builder = nx.path_graph if graph == "path" else (lambda n: nx.star_graph(n - 1))
        weights = metropolis_weights(Network.from_networkx(builder(num_agents)))
    else:
        raise InvalidParameterError(f"unknown graph {graph!r}; expected one of {', '.join(GRAPHS)}")
    return validate_weights(weights)


# ------------------------------------------------------------------------------------------------
# parameters and one step


@dataclass(frozen=True, eq=False)
class WangBasarParams:
    """algorithm 1: noise-free (eq. (7)); algorithm 2: n_j^k ~ N(0, sigma_var I_d) added to g_j^k (eq. (8)),
    sigma_var the per-coordinate variance ("covariance matrix sigma I_d", L174). A stepsize outside the
    theorems' conditions raises unless allow_outside_conditions (then `outside_conditions` records it)."""

    weights: np.ndarray
    schedule: StepSchedule
    algorithm: int = 2
    sigma_var: float = 0.0
    noise_draw: str = "per_agent"
    allow_outside_conditions: bool = False
    outside_conditions: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", validate_weights(self.weights))
        if self.algorithm not in (1, 2):
            raise InvalidParameterError(f"algorithm must be 1 (noise-free) or 2 (DP noise); got {self.algorithm!r}")
        sigma = self.sigma_var
        if not (isinstance(sigma, (int, float)) and math.isfinite(sigma)):
            raise InvalidParameterError(f"sigma_var must be a finite number; got {sigma!r}")
        if self.algorithm == 2 and not sigma > 0:
            raise InvalidParameterError(f"Algorithm 2 needs a noise variance sigma_var > 0 (L174); got {sigma!r}")
        if self.algorithm == 1 and sigma != 0:
            raise InvalidParameterError(f"Algorithm 1 is noise-free (eq. (6)); got sigma_var = {sigma!r}")
        if self.noise_draw not in NOISE_DRAWS:
            raise InvalidParameterError(f"noise_draw must be one of {NOISE_DRAWS}; got {self.noise_draw!r}")
        violations = self.schedule.violations()
        if violations and not self.allow_outside_conditions:
            raise InvalidParameterError("stepsize schedule violates the theorems' conditions: " + "; ".join(violations)
                                        + " (pass allow_outside_conditions=True to probe a claim; it is recorded)")
        object.__setattr__(self, "outside_conditions", violations)

    @property
    def num_agents(self) -> int:
        return self.weights.shape[0]


Gradient = Callable[[np.ndarray], np.ndarray]   # (R, m, d) -> (R, m, d): row i is grad f_i(x_i)


def step(states: np.ndarray, k: int, gradient: Gradient, params: WangBasarParams, rng: np.random.Generator,
         ledger: PrivacyLedger | None = None, release: Release | None = None, operator=None
         ) -> tuple[np.ndarray, np.ndarray]:
    """One iteration: returns (x^{k+1}, messages). messages are what is on the wire before the public
    factor w_ij: (R, m, d) x_j^k - lambda^k (g_j^k + n_j^k) per sender (per_agent), or (R, m_receiver,
    m_sender, d) (per_link). operator: W as core/mixing.py `mixing_operator` built it (by default W)."""
    lam = params.schedule(k)
    mechanism = states - lam * gradient(states)          # M_j^k = x_j^k - lambda^k g_j^k (L496)
    if params.algorithm == 1:
        messages = mechanism                             # eq. (6)
    else:
        # eq. (8): lambda^k n_j^k ~ N(0, (lambda^k)^2 sigma_var I) is the released noise (L528); assumed
        # l2 sensitivity lambda^k is that of the gradient (eq. (30), Theorem 5).
        noise_std = lam * math.sqrt(params.sigma_var)
        if release is not None:                          # planned by `planned_releases`: the same draw and record
            messages = gaussian_release(mechanism, release, rng, ledger)
        elif params.noise_draw == "per_agent":
            messages = gaussian_mechanism(mechanism, lam, noise_std, rng, ledger=ledger, iteration=k,
                                          label=RELEASE_LABEL)
        else:
            replicas, m, d = mechanism.shape
            copies = np.broadcast_to(mechanism[:, None], (replicas, m, m, d)).reshape(replicas * m, m, d)
            messages = gaussian_mechanism(copies, lam, noise_std, rng, ledger=ledger, iteration=k,
                                          label="wang-basar/eq-8 per link").reshape(replicas, m, m, d)
    if messages.ndim == 3:
        return mix(params.weights if operator is None else operator, messages), messages   # eq. (9)
    return mix_per_link(params.weights, messages), messages


def consensus_moments(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """xbar = the average over agents and ||x - 1 (x) xbar||^2 of states (..., m, d): (..., d) and (...)."""
    average = states.sum(axis=-2) / states.shape[-2]   # = mean(axis=-2), without its per-call overhead
    deviation = states - average[..., None, :]
    return average, row_sum(row_sum(deviation * deviation))   # over d, then over agents (core/rowwise.py)


@dataclass(frozen=True)
class Trajectory:
    """mean[k-1] = xbar^k (R, d); consensus[k-1] = ||x^k - 1 (x) xbar^k||^2 (R,), k = 1..K; final = x^K;
    snapshots: {k: x^k} at the requested iterations."""

    mean: np.ndarray
    consensus: np.ndarray
    final: np.ndarray
    snapshots: dict

    @classmethod
    def of_iterates(cls, iterates: np.ndarray, snapshot_at=()) -> Trajectory:
        """The trajectory of given iterates x^1..x^K, (K, R, m, d): e.g. R runs of a user's implementation
        (their transcripts' `iterates`), summarized as `run` summarizes its own."""
        if not np.all(np.isfinite(iterates[-1])):
            raise InvalidDataError("the iterates diverged (NaN/inf); check the stepsize against 1/L")
        mean, consensus = consensus_moments(iterates)
        wanted = sorted({int(k) for k in snapshot_at} & set(range(1, iterates.shape[0] + 1)))
        return cls(mean, consensus, iterates[-1].copy(), {k: iterates[k - 1].copy() for k in wanted})


def planned_releases(params: WangBasarParams, steps: int) -> list[Release] | None:
    """The Gaussian releases of eq. (8) at k = 1..steps, planned and checked once (core/noise.py,
    gaussian_releases): step's per_agent release with the same sensitivity lambda^k and noise lambda^k sqrt(sigma_var)
    without planning it again every round (the planning was half of what the release added to the draw at R = 1000,
    m = 5, d = 2, measured). None where step does not release per agent (Algorithm 1, per_link)."""
    if params.algorithm != 2 or params.noise_draw != "per_agent" or steps < 1:
        return None
    lams = np.array([params.schedule(k) for k in range(1, steps + 1)])
    sensitivity = np.repeat(lams[:, None], params.num_agents, axis=1)
    return gaussian_releases(sensitivity, sensitivity * math.sqrt(params.sigma_var), range(1, steps + 1),
                             [RELEASE_LABEL] * steps)


def run(gradient: Gradient, initial: np.ndarray, params: WangBasarParams, iterations: int, rng: np.random.Generator,
        *, ledger: PrivacyLedger | None = None, snapshot_at=(), post_mix: Callable[[np.ndarray], np.ndarray] | None = None,
        blocks: bool = True, moments: bool = True) -> Trajectory:
    """Algorithm 1 or 2 for iterations K (x^1 = initial, K-1 steps). post_mix: optional map of the whole state applied
    after mixing (the ICA renormalization, spec P15; not part of the printed algorithm; with it the run is one block).
    blocks: run each iteration a block of replicas at a time (core/blocking.py ROUND_BLOCK_ELEMENTS), so that its
    passes stay in cache, the same numbers; False for a gradient oracle that holds data of every replica (it is then
    called on all replicas at once).
    moments: record the consensus moments of every iteration (False: the iterates only, `mean` and `consensus` empty)."""
    iterations = require_positive_int("iterations", iterations)
    states = agent_major(require_finite("initial states", initial))   # mixing is then one product (core/mixing.py)
    if states.ndim != 3 or states.shape[1] != params.num_agents:
        raise InvalidDataError(f"initial states must have shape (R, m={params.num_agents}, d); got {states.shape}")
    replicas, agents, dim = states.shape
    mean = np.empty((iterations if moments else 0, replicas, dim))
    consensus = np.empty((iterations if moments else 0, replicas))
    wanted = set(int(k) for k in snapshot_at)
    snapshots = {}
    releases = planned_releases(params, iterations - 1)
    # one release per link is drawn on the whole state, and post_mix maps the whole state: one block each
    in_blocks = blocks and params.noise_draw == "per_agent" and post_mix is None
    parts = row_blocks(replicas, agents * dim, ROUND_BLOCK_ELEMENTS if in_blocks else states.size)
    # each block an agent-major array of its own, so that its gradient and its mixing are one product each (a block
    # viewed in the whole state is not: 6% slower a round at R = 10, N = 50, d = 512, measured)
    state_blocks = [states] if len(parts) == 1 else [agent_major(states[part]) for part in parts]
    operator = mixing_operator(params.weights, (parts[0].stop - parts[0].start) * dim)
    for k in range(1, iterations + 1):   # a loop over time steps; replicas and agents are batched
        if k in wanted:
            snapshots[k] = np.concatenate(state_blocks)
        if k == iterations:
            break
        release = None if releases is None else releases[k - 1]
        if ledger is not None and release is not None:   # planned: recorded once, drawn block by block
            ledger.record(release)
        for index, part in enumerate(parts):   # a block's next states depend on its own replicas only
            if moments:
                mean[k - 1, part], consensus[k - 1, part] = consensus_moments(state_blocks[index])
            state_blocks[index] = step(state_blocks[index], k, gradient, params, rng,
                                       ledger if release is None else None, release, operator)[0]
        if post_mix is not None:
            state_blocks = [post_mix(block) for block in state_blocks]
    states = state_blocks[0] if len(parts) == 1 else np.concatenate(state_blocks)
    if moments:
        mean[-1], consensus[-1] = consensus_moments(states)
    if not np.all(np.isfinite(states)):
        raise InvalidDataError("the iterates diverged (NaN/inf); check the stepsize against 1/L")
    return Trajectory(mean, consensus, states, snapshots)
