"""What an implementation of DP-RECAL (seeds/001 Algorithm 1, v1:L248-L266) exposes, ours and a user's.

An implementation is a callable `implementation(setting, rng) -> transcript` for ONE run:
- `setting` (`DpRecalSetting`) holds the instance in plain terms: each agent's per-sample gradient oracle
  (the implementation clips and averages them: f_i is agent i's mean loss, Assumption 3's c is met by
  per-sample clipping, spec §6), the regularizer r(x) = ridge ||x||^2 + lasso ||x||_1 (so prox_{nr} has a
  closed form), x^1 and y^1, the uncoordinated stepsizes alpha_i, the budget (eps, delta) and the PLF xi
  it is spread over by Theorem 4, the noise decay R, the clipping bound c, the horizon K, and THE WALK:
  walk[k-1] = i_k, the agent that holds the baton at iteration k (walk[K] receives the last message).
  dpverify draws the walk from the relay's law (i_1 uniform over V, i_{k+1} from row i_k of P = I -
  D^{-1} L, Assumption 2) before the run; the implementation follows it instead of drawing the next
  holder itself (line 5), so that an implementation and the reference can be compared along the same
  walk. The walk's law is therefore not checked by `verify`. It needs nothing from dpverify.
- `setting.u_reading` says which u^k the holder adds its dual change to in (7e): "literal", the running sum
  u^k = sum_j lam_j^k as Algorithm 1 line 3 prints it (v1:L258), which no relay agent holds (the holder received
  only u~^k), or "received", u^{k+1} = u~^k + lam_i^{k+1} - lam_i^k, what a holder can compute (the noise of every
  release then stays in u). The reference runs the setting's reading; `replay` replays either.
- `rng` is where the noise comes from: a numpy Generator, or dpverify's noise tape
  (`dpverify.algorithms.core.tape`), which hands every implementation the same draws when it asks for
  them in the same order. At every iteration k the holder draws eps^k ~ N(0, sigma^2 I_q) from it, e.g.
  `rng.normal(0.0, sigma, size=q)`: q Gaussian variates per iteration, in iteration order, ALSO when
  sigma = 0 (eps = None: RECAL), because our reference draws its q standard normals at every iteration
  with or without noise. The implementation draws nothing else from it (the walk is given).
- the transcript is a mapping (or an object with these attributes): "messages" (K, 2, q), messages[k-1]
  = (u~^{k+1}, x^{k+1}), the baton holder i_k passes at iteration k (line 5), u~ first; "iterates"
  (K+1, 2, q), (u^k, x^k) for k = 1..K+1, with u^1 = 0 and u^{k+1} the u the holder i_k computed by (7e)
  before adding the noise (u~^{k+1} = u^{k+1} - eps^k; under the literal reading, the running sum
  sum_j lam_j^{k+1}); optionally "noise_scales" (K,), the sigma_{tau_{i_k}(k)} drawn with at iteration k. The
  agents' y_i and lam_i are not in the transcript: Algorithm 1 determines them from it (`replay`).

`REFERENCE` runs our batched `run_recal` through this door; `dpverify verify dp-recal` runs a user's
implementation beside it (docs/verify.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from dpverify.algorithms.core.errors import DpverifyError, InvalidParameterError
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.algorithm import (
    U_MODES,
    RecalParams,
    RelayNoise,
    calibrated_params,
    paper_beta,
    run_recal,
    uniform_transition_matrix,
)
from dpverify.algorithms.dp_recal.composite import ActiveGradients, CompositeProblem

U_READINGS = U_MODES      # ("literal", "received"): the readings of (7e) (module docstring), run_recal's u_mode
WORST_CASE_TARGET = 1e6   # default: |b| of the audit's worst-case records: every per-sample gradient is clipped, so grad f_a = -+c (1, ..., 1)/sqrt(q) exactly (any |b| >> c + ||y|| will do)


@dataclass(frozen=True, eq=False)
class DpRecalSetting:
    """One DP-RECAL instance as an implementation receives it (module docstring). `problem`, `data` and
    `network` are dpverify's objects behind `sample_gradients`, `lasso`, `ridge` and the walk's law, and
    `reference_params`, `reference_gradients` are our reference's; an implementation need not touch them."""

    problem: CompositeProblem   # the loss, and r(x) = ridge ||x||^2 + lasso ||x||_1 (mapping M1: f_i = mean loss)
    data: LocalData             # agent i's records (B_ij, b_ij): features (n, m, q), targets (n, m)
    network: Network            # the graph; the walk moves along its edges
    walk: np.ndarray            # (K+1,) walk[k-1] = i_k, the holder at iteration k; walk[K] receives the last baton
    x1: np.ndarray              # (q,) x^1 (Alg. 1 line 1)
    y1: np.ndarray              # (n, q) y_i^1
    alpha: np.ndarray           # (n,) alpha_i, uncoordinated, in (0, 2/(L_i + 1))
    epsilon: float | None       # the run's budget (Theorem 4); None: RECAL (sigma = 0)
    delta: float
    plf: int                    # xi: the PLF over which (epsilon, delta) is spent (Theorem 4)
    decay: float                # R > 1: sigma_tau^2 = R sigma_{tau+1}^2
    clip: float                 # c of Assumption 3, met by clipping every per-sample gradient to norm <= c
    horizon: int                # K
    u_reading: str = "literal"  # (7e)'s u^k: "literal" the running sum as printed, "received" the u~^k received

    def __post_init__(self) -> None:
        if self.u_reading not in U_READINGS:
            raise InvalidParameterError(f"u_reading must be one of {U_READINGS}; got {self.u_reading!r}")
        walk = np.asarray(self.walk, dtype=int)
        if walk.shape != (self.horizon + 1,):
            raise InvalidParameterError(f"the walk must list the K + 1 = {self.horizon + 1} holders i_1..i_(K+1); "
                                        f"got shape {walk.shape}")
        steps = self.network.adjacency[walk[:-1], walk[1:]]
        if not np.all(steps > 0):
            k = int(np.flatnonzero(steps == 0)[0])
            raise InvalidParameterError(f"the walk steps from {walk[k]} to {walk[k + 1]}, not an edge (iteration {k + 1})")
        if self.problem.mapping != "M1":
            raise InvalidParameterError("the contract passes r = ridge ||x||^2 + lasso ||x||_1 to the implementation "
                                        "(mapping M1); got mapping M2")
        object.__setattr__(self, "walk", walk)
        object.__setattr__(self, "alpha", np.asarray(self.alpha, dtype=float))

    @property
    def num_agents(self) -> int:
        return self.data.num_agents

    @property
    def dim(self) -> int:
        return self.data.dim

    @property
    def lasso(self) -> float:
        return self.problem.lasso

    @property
    def ridge(self) -> float:
        return self.problem.prox_ridge

    def sample_gradients(self, i: int, y: np.ndarray) -> np.ndarray:
        """(m, q): the gradient of the loss of each of agent i's records at y, unclipped (line 3 needs their
        clipped mean, grad f_i(y_i))."""
        features, targets = self.data.features[i], self.data.targets[i]
        return self.problem.sample_coefficients(features @ np.asarray(y, dtype=float), targets)[:, None] * features

    def transition(self) -> np.ndarray:
        """P = I - D^{-1} L (Assumption 2): the law of the next holder, of which `walk` is one draw."""
        return uniform_transition_matrix(self.network)

    def sensitivity(self) -> float:
        """Lemma 5's Delta = 4 alpha beta c with alpha = max_i alpha_i, beta = 1/(2(n+1))."""
        return self.reference_params.sensitivity_bound

    def sigma1(self) -> float:
        """sigma_1 that spends (epsilon, delta) over `plf` activations by Theorem 4 (seeds/001 v1); 0 for RECAL."""
        return self.reference_params.noise.sigma1

    @cached_property
    def reference_params(self) -> RecalParams:
        """The reference's parameters (the setting's reading of (7e), per-sample clipping to c)."""
        return calibrated_params(self.alpha, self.num_agents, epsilon=self.epsilon, delta=self.delta, plf=self.plf,
                                 decay=self.decay, clip=self.clip, u_mode=self.u_reading)

    @cached_property
    def reference_gradients(self) -> ActiveGradients:
        """The reference's clipped gradient oracle, built once per setting (the statistical checks run it 400 times)."""
        return ActiveGradients(self.problem, self.data, self.clip)


def relay_walk(network: Network, rng: np.random.Generator, *, horizon: int, plf: int | None = None) -> np.ndarray:
    """The holders i_1..i_{K+1} of one walk (a setting's `walk`): i_1 uniform over V (spec §6), i_{k+1} from row
    i_k of P = I - D^{-1} L (Assumption 2, Alg. 1 line 5). K = horizon, or (if `plf`) the first K at which some
    agent has held the baton plf times (the stopping rule of spec §6, as run_recal's plf_target), at most horizon."""
    transition = uniform_transition_matrix(network)
    walk = [int(rng.integers(network.num_agents))]
    counts = np.zeros(network.num_agents, dtype=int)
    for _ in range(horizon):
        counts[walk[-1]] += 1
        walk.append(int(rng.choice(network.num_agents, p=transition[walk[-1]])))
        if plf is not None and counts[walk[-2]] == plf:
            break
    return np.array(walk)


def along_walks(walks: list[np.ndarray], problem: CompositeProblem, data: LocalData, network: Network, x1: np.ndarray,
                alpha: np.ndarray, *, epsilon: float | None, delta: float, plf: int, decay: float,
                clip: float) -> list[DpRecalSetting]:
    """One setting per walk, the same instance otherwise (y_i^1 = x^1, K = the walk's length - 1): the runs a
    curve or a convergence check sends through a user's implementation, one walk per replica."""
    y1 = np.tile(x1, (data.num_agents, 1))
    return [DpRecalSetting(problem, data, network, walk, x1, y1, alpha, epsilon, delta, plf, decay, clip, len(walk) - 1)
            for walk in walks]


class DpRecalImplementation(Protocol):
    def __call__(self, setting: DpRecalSetting, rng: Any) -> Any: ...


class WalkNotFollowed(DpverifyError):
    """The reference did not move along the setting's walk (a harness error)."""


class _AlongTheWalk:
    """What run_recal draws from its rng, for one replica: the noise comes from `rng` (a Generator or the noise
    tape) and is recorded; the receiver draw `random(1)` is answered with a point inside the bin of the next
    holder of the setting's walk on the cumulative row of P (run_recal picks the first j with u < cumsum(P_i)_j),
    so that run_recal, which takes a first holder but no holders, follows the given walk."""

    def __init__(self, rng: Any, setting: DpRecalSetting):
        self._rng, self._walk, self._step = rng, setting.walk, 0
        cumulative = np.cumsum(setting.transition(), axis=1)
        self._lower = np.concatenate([np.zeros((len(cumulative), 1)), cumulative[:, :-1]], axis=1)
        self._upper = np.minimum(cumulative, 1.0)
        self.normals: list[np.ndarray] = []

    def standard_normal(self, size=None, out=None):
        shape = out.shape if out is not None else size
        drawn = np.asarray(self._rng.standard_normal(shape), dtype=float)
        self.normals.append(drawn.copy())
        if out is None:
            return drawn
        out[...] = drawn
        return out

    def random(self, size=None):
        holder, receiver = self._walk[self._step], self._walk[self._step + 1]
        self._step += 1
        point = 0.5 * (self._lower[holder, receiver] + self._upper[holder, receiver])
        return np.full(1 if size is None else size, point)


def reference(setting: DpRecalSetting, rng: Any) -> dict[str, np.ndarray]:
    """Our run_recal, one run along the setting's walk and in its reading of (7e), through the contract. u^{k+1}
    (never released) is u~^{k+1} + eps^k, with eps^k = sigma z^k from the recorded draws z^k (as run_recal
    computes it)."""
    along = _AlongTheWalk(rng, setting)
    run = run_recal(setting.problem, setting.data, setting.network, setting.reference_params, replicas=1, rng=along,
                    horizon=setting.horizon, x1=setting.x1, y1=setting.y1, first_holder=int(setting.walk[0]),
                    keep_x=True, gradients=setting.reference_gradients)
    if not (np.array_equal(run.holders[:, 0], setting.walk[:-1]) and np.array_equal(run.receivers[:, 0], setting.walk[1:])):
        raise WalkNotFollowed(f"run_recal's holders {run.holders[:, 0].tolist()} and receivers {run.receivers[:, 0].tolist()} "
                              f"are not the walk {setting.walk.tolist()}")
    sigmas = run.noise_std[:, 0]
    noise = np.concatenate(along.normals) * sigmas[:, None]          # (K, q): eps^k, as run_recal scales it
    u_sent, x_sent = run.u_sent[:, 0], run.x_sent[:, 0]
    u = np.concatenate([np.zeros((1, setting.dim)), u_sent + noise])
    return {"messages": np.stack([u_sent, x_sent], axis=1), "iterates": np.stack([u, run.x_history[:, 0]], axis=1),
            "noise_scales": sigmas}


REFERENCE: DpRecalImplementation = reference


def shapes(setting: DpRecalSetting) -> dict[str, tuple[int, ...]]:
    """The transcript's arrays: messages (K, 2, q), iterates (K+1, 2, q), noise_scales (K,) (optional)."""
    k, q = setting.horizon, setting.dim
    return {"messages": (k, 2, q), "iterates": (k + 1, 2, q), "noise_scales": (k,)}


def added_noise(transcript: dict[str, np.ndarray]) -> np.ndarray:
    """eps^k = u^{k+1} - u~^{k+1} (line 3): the noise each passed u~ carries, (K, q). x^{k+1} is passed without
    noise (v1:L264), so one round carries q noisy coordinates and there is no agent axis (one holder)."""
    return transcript["iterates"][1:, 0] - transcript["messages"][:, 0]


def activation_counts(setting: DpRecalSetting) -> np.ndarray:
    """tau_{i_k}(k), k = 1..K: the holder's own activation count, this activation included."""
    holders = setting.walk[:-1]
    return np.array([np.count_nonzero(holders[: k + 1] == holders[k]) for k in range(setting.horizon)])


def calibration(setting: DpRecalSetting) -> np.ndarray:
    """sigma_{tau_{i_k}(k)} = sigma_1 R^{-(tau - 1)/2}, k = 1..K (v1:L264), sigma_1 from Theorem 4 inverted (spec
    §3.6) with Lemma 5's Delta = 4 max_i alpha_i beta c."""
    return RelayNoise(setting.sigma1(), setting.decay).std(activation_counts(setting))


def neighbours(setting: DpRecalSetting, horizon: int = 1) -> tuple[DpRecalSetting, DpRecalSetting]:
    """Neighbouring settings (Lemma 5's worst case): the records of agent a, the one with the largest stepsize
    (Lemma 5's alpha = max_i alpha_i), all replaced by ((1, ..., 1) / sqrt(q), +-WORST_CASE_TARGET), so that every
    clipped per-sample gradient, hence grad f_a, is -+c (1, ..., 1) / sqrt(q): ||grad f_a - grad f^_a|| = 2c, the
    largest Assumption 3 allows. The other agents' data and every parameter (sigma_1 and the PLF included) are
    shared; the walk starts at a and steps to a neighbour of a, for `horizon` iterations (u~^2, a's first release,
    is the first message that depends on its data; the receiver does not change it)."""
    agent, m, q = int(np.argmax(setting.alpha)), setting.data.num_samples, setting.dim
    walk = [agent]
    for _ in range(horizon):
        walk.append(int(np.flatnonzero(setting.network.adjacency[walk[-1]])[0]))
    features = np.array(setting.data.features)
    features[agent] = np.full((m, q), 1.0 / np.sqrt(q))

    def with_sign(sign: float) -> DpRecalSetting:
        targets = np.array(setting.data.targets)
        targets[agent] = sign * WORST_CASE_TARGET
        return replace(setting, data=LocalData(features, targets), walk=np.array(walk), horizon=horizon)
    return with_sign(1.0), with_sign(-1.0)


def observe(transcript: dict[str, np.ndarray], release: int = 2) -> np.ndarray:
    """What the paper's adversary observes of the neighbours' difference: u~^release, passed at iteration release - 1
    (by default u~^2, the audited agent's first release; x^2 does not depend on the data: (7b) uses no gradient)."""
    return transcript["messages"][release - 2, 0]


def replay(setting: DpRecalSetting, transcript: dict[str, np.ndarray], reading: str | None = None
           ) -> dict[str, np.ndarray]:
    """x^{k+1} and u^{k+1} as Algorithm 1 line 3 computes them (v1:L248-L262) from what the holder i = i_k received
    and held (`dpverify verify`'s replay), in `reading` of (7e) (default: the setting's). It received the baton
    (u~^k, x^k), messages[k-2] (u~^1 = 0 and the public x^1 at k = 1). Its own lam_i^k, y_i^k are not in the
    transcript, but Algorithm 1 determines them from it, as the paper's Appendix A derives them (v1:L701-L703): from
    lam^1 = 0 and y^1, at each of i's activations t, lam_i^{t+1} - lam_i^t = u^{t+1} - u^t (literal; u~^t received)
    by (7e), and y_i^{t+1} = x^{t+1} - (lam_i^{t+1} - lam_i^t)/beta by (7a) and (7d). From them, (7a)-(7d) give x^{k+1}
    (the iterate and the x passed) and (7e) u^{k+1}, with the transcript's own x^{k+1} in (7d), so that a wrong x is
    reported at x and not also at u; u~^{k+1} carries the noise: NaN. A transcript passes iff it is a run of
    Algorithm 1 with the noise eps^k = u^{k+1} - u~^{k+1}. Every prediction is computed from the transcript's own
    numbers, so round-off never accumulates; the K iterations are one batch, with the reference's prox and
    clipped-gradient oracle."""
    reading = setting.u_reading if reading is None else reading
    if reading not in U_READINGS:
        raise InvalidParameterError(f"reading must be one of {U_READINGS}; got {reading!r}")
    iterates, messages = (np.asarray(transcript[name], dtype=float) for name in ("iterates", "messages"))
    k, q, beta = setting.horizon, setting.dim, paper_beta(setting.num_agents)
    holders, steps = setting.walk[:-1], np.arange(setting.horizon)
    u_received = np.concatenate([np.zeros((1, q)), messages[:-1, 0]])            # u~^k, k = 1..K
    x_received = np.concatenate([np.asarray(setting.x1, dtype=float)[None], messages[:-1, 1]])   # x^k as passed
    base = iterates[:-1, 0] if reading == "literal" else u_received              # the u^k of (7e)
    change = iterates[1:, 0] - base                                              # lam_i^{k+1} - lam_i^k, (7e) solved
    earlier = (holders[None, :] == holders[:, None]) & (steps[None, :] < steps[:, None])   # [k, t]: i_t = i_k, t < k
    lam = earlier.astype(float) @ change                                         # lam_{i_k}^k (lam^1 = 0)
    last = np.where(earlier, steps[None, :], -1).max(axis=1)                     # i_k's previous activation, -1: none
    y = np.where((last >= 0)[:, None], iterates[last + 1, 1] - change[last] / beta,
                 np.asarray(setting.y1, dtype=float)[holders])                   # y_{i_k}^k (Appendix A)
    lam_half = lam + beta * (x_received - y)                                                       # (7a)
    x_next = setting.problem.prox_scaled_r(x_received - (u_received + lam_half - lam), setting.num_agents)  # (7b), u~^k
    y_next = y - setting.alpha[holders, None] * (setting.reference_gradients(y, holders) - lam_half)     # (7c), clipped
    lam_next = lam_half + beta * ((iterates[1:, 1] - x_received) - (y_next - y))                   # (7d)
    u_next = base + lam_next - lam                                                                 # (7e)
    predicted_iterates = np.stack([np.concatenate([np.zeros((1, q)), u_next]),
                                   np.concatenate([x_received[:1], x_next])], axis=1)
    return {"iterates": predicted_iterates, "messages": np.stack([np.full((k, q), np.nan), x_next], axis=1)}
