"""What an implementation of Wang & Basar's Algorithm 2 (seeds/003 eqs. (8)-(9), L174-L198) exposes, ours and a user's.

An implementation is a callable `implementation(setting, rng) -> transcript` for ONE run:
- `setting` (`WangBasarSetting`) holds the instance in plain terms: the weights W (Assumption 4), the
  gradient oracle of each agent's cost f_j, the starting points x^1, the per-coordinate variance
  sigma_var of the noise n_j^k (L174), the stepsize schedule lambda^k = lam0 for k <= switch, then
  lam_scale / k (Sec. 6), the horizon T. It needs nothing from dpverify.
- `rng` is where the noise comes from: a numpy Generator, or dpverify's noise tape
  (`dpverify.algorithms.core.tape`), which hands every implementation the same draws when it asks
  for them in the order (round, agent, coordinate). Per round k and agent j (in agent order) the
  implementation draws n_j^k = rng.normal(0.0, sqrt(sigma_var), size=d) and sends x_j^k - lambda^k
  (g_j^k + n_j^k), eq. (8): one draw per agent and round, used in every copy it sends and in its own
  self-term (the literal `noise_draw` reading, spec Sec. 2.3 item 1). Drawing the released noise
  lambda^k n_j^k = rng.normal(0.0, lambda^k sqrt(sigma_var), size=d) and sending M_j^k minus it is the
  same. It draws at every round (sigma_var > 0: Algorithm 2 has no noise-free round) and nothing else.
- the transcript is a mapping (or an object with these attributes): "messages" (T, N, d), what agent j
  puts on the wire at round k, x_j^k - lambda^k (g_j^k + n_j^k) (eq. (8), before the public factor
  w_ij); "iterates" (T+1, N, d), x^1..x^{T+1} (eq. (9)); "mechanism" (T, N, d), M_j^k = x_j^k -
  lambda^k g_j^k, the message before its noise (the paper's mechanism, L496), from which the noise the
  messages carry is measured; optionally "noise_scales" (T,), lambda^k sqrt(sigma_var), the standard
  deviation of the released noise lambda^k n_j^k it calibrated (L528).

`REFERENCE` runs our batched `algorithm.step` (the iteration `algorithm.run` repeats; run keeps no
messages) on one replica through this door; `dpverify verify wang-basar` runs a user's implementation
beside it (docs/verify.md). The reference's gaussian_mechanism adds + sigma z; REFERENCE hands it the
negated standard normals, -z, so that the draw z of the tape is n_j^k / sqrt(sigma_var) in eq. (8)'s
x - lambda (g + n) as printed (the law is the same: the Gaussian is symmetric).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from dpverify.algorithms.core.errors import NotInContract
from dpverify.algorithms.core.mixing import mix
from dpverify.algorithms.core.noise import PrivacyLedger
from dpverify.algorithms.wang_basar.algorithm import Gradient, StepSchedule, WangBasarParams, step

NOISE_DRAW = "per_agent"   # spec Sec. 2.3 item 1: (8) indexes n_j^k by the sender only (literal reading of NOISE_DRAWS)


@dataclass(frozen=True, eq=False)
class WangBasarSetting:
    """One instance of Algorithm 2 as an implementation receives it (module docstring). `oracle` is
    dpverify's batched gradient behind `gradient`; an implementation need not touch it."""

    oracle: Gradient          # (R, N, d) -> (R, N, d): row j is grad f_j(x_j)
    weights: np.ndarray       # W (N, N), symmetric, doubly stochastic, w_ii > 0 (Assumption 4, L98-L100)
    x1: np.ndarray            # (N, d), the starting points x^1 (spec Sec. 2.3 item 3: the loop starts at k = 1)
    sigma_var: float          # per-coordinate variance of n_j^k ("covariance matrix sigma I_d", L174)
    lam0: float               # lambda^k = lam0 for k <= switch ...
    switch: int
    lam_scale: float          # ... then lam_scale / k (Sec. 6.1, L579: 0.02, 500, 1)
    horizon: int              # T
    agent_oracle: Callable[[int, np.ndarray], np.ndarray] | None = None   # row j of `oracle` for agent j alone, (d,)

    @property
    def num_agents(self) -> int:
        return self.x1.shape[0]

    @property
    def dim(self) -> int:
        return self.x1.shape[-1]

    @property
    def schedule(self) -> StepSchedule:
        return StepSchedule(self.lam0, self.switch, self.lam_scale, 1.0)

    def gradient(self, j: int, x: np.ndarray) -> np.ndarray:
        """g_j = grad f_j(x), (d,), agent j's own cost (L134: g_j^k = grad f_j(x_j^k)); from `agent_oracle` when the
        setting has one (fewer array operations for an implementation that calls one agent at a time)."""
        if self.agent_oracle is not None:
            return self.agent_oracle(j, np.asarray(x, dtype=float))
        points = np.zeros((1, self.num_agents, self.dim))
        points[0, j] = x
        return self.oracle(points)[0, j]

    def params(self) -> WangBasarParams:
        """The reference's parameters (Algorithm 2, the literal per-agent noise draw)."""
        return WangBasarParams(self.weights, self.schedule, algorithm=2, sigma_var=float(self.sigma_var),
                               noise_draw=NOISE_DRAW)


@dataclass(frozen=True, eq=False)
class GradientShifted:
    """Agent `agent`'s cost f + <shift, x> (+ the wiggle): its gradient moved by `shift` at every x (the audit's
    neighbours), and by wiggle (1 + sin(frequency x_1)) / 2 along e_1, the gradient of
    wiggle/2 (x_1 - cos(frequency x_1) / frequency): a term that differs from round to round as x moves."""

    oracle: Gradient
    agent: int
    shift: np.ndarray
    wiggle: float = 0.0
    frequency: float = 0.0

    def __call__(self, states: np.ndarray) -> np.ndarray:
        gradients = np.array(self.oracle(states), dtype=float)
        gradients[..., self.agent, :] += self.shift
        if self.wiggle:
            gradients[..., self.agent, 0] += wiggle_term(self.wiggle, self.frequency, states[..., self.agent, 0])
        return gradients


@dataclass(frozen=True, eq=False)
class AgentGradientShifted:
    """`GradientShifted` one agent at a time (WangBasarSetting.agent_oracle): agent `agent`'s gradient moved by `shift`
    (and the wiggle), the others' as `agent_oracle` gives them."""

    agent_oracle: Callable[[int, np.ndarray], np.ndarray]
    agent: int
    shift: np.ndarray
    wiggle: float = 0.0
    frequency: float = 0.0

    def __call__(self, j: int, x: np.ndarray) -> np.ndarray:
        gradient = self.agent_oracle(j, x)
        if j != self.agent:
            return gradient
        gradient = gradient + self.shift
        if self.wiggle:
            gradient[0] += wiggle_term(self.wiggle, self.frequency, x[0])
        return gradient


def wiggle_term(wiggle: float, frequency: float, first_coordinate):
    """wiggle (1 + sin(frequency x_1)) / 2: the gradient, along e_1, of wiggle/2 (x_1 - cos(frequency x_1) / frequency)."""
    return wiggle * (1.0 + np.sin(frequency * first_coordinate)) / 2.0


def setting_of(oracle: Gradient, params: WangBasarParams, x1: np.ndarray, horizon: int,
               agent_oracle: Callable[[int, np.ndarray], np.ndarray] | None = None) -> WangBasarSetting:
    """The setting of one reference run with these parameters from x1 (N, d) over `horizon` rounds: an experiment's
    run, re-run on a user's implementation (`dpverify verify`). The contract states Algorithm 2 with the literal
    per-agent draw and lambda^k = lam0 (k <= switch), then lam_scale / k; other runs raise NotInContract.
    agent_oracle: the same gradients one agent at a time (WangBasarSetting.gradient), or None."""
    if params.algorithm != 2:
        raise NotInContract("the contract states Algorithm 2 (eq. (8)); Algorithm 1 (noise-free, eq. (7)) is not in it")
    if params.noise_draw != NOISE_DRAW:
        raise NotInContract(f"the contract states the literal noise draw {NOISE_DRAW!r}, not {params.noise_draw!r}")
    if params.schedule.power != 1:
        raise NotInContract(f"the contract's stepsize is lam0, then lam_scale / k; not k^-{params.schedule.power:g}")
    return WangBasarSetting(oracle, params.weights, np.array(x1, dtype=float), float(params.sigma_var),
                            float(params.schedule.initial), params.schedule.switch, float(params.schedule.scale), horizon,
                            agent_oracle)


class WangBasarImplementation(Protocol):
    def __call__(self, setting: WangBasarSetting, rng: Any) -> Any: ...


class _Negated:
    """The draws of `rng` with the sign flipped: gaussian_mechanism adds + sigma z, eq. (8) subtracts lambda n."""

    def __init__(self, rng: Any):
        self._rng = rng

    def standard_normal(self, size=None):
        return -self._rng.standard_normal(size)


def reference(setting: WangBasarSetting, rng: Any) -> dict[str, np.ndarray]:
    """Our algorithm.step, one replica, T rounds, through the contract (module docstring)."""
    params = setting.params()
    ledger = PrivacyLedger()
    draws = _Negated(rng)
    gradients = []

    def oracle(states: np.ndarray) -> np.ndarray:      # the setting's oracle, its answers kept for M_j^k
        gradients.append(setting.oracle(states))
        return gradients[-1]

    states = np.array(setting.x1, dtype=float)[None]
    iterates, messages, mechanism = [states[0]], [], []
    for k in range(1, setting.horizon + 1):
        before = states
        states, sent = step(states, k, oracle, params, draws, ledger)
        mechanism.append((before - params.schedule(k) * gradients[-1])[0])        # M_j^k as step forms it (L496)
        messages.append(sent[0])
        iterates.append(states[0])
    scales = np.array([release.scale for release in ledger.releases])               # (T, N), one sigma_var for all
    return {"messages": np.array(messages), "iterates": np.array(iterates), "mechanism": np.array(mechanism),
            "noise_scales": scales[:, 0]}


REFERENCE: WangBasarImplementation = reference


def shapes(setting: WangBasarSetting) -> dict[str, tuple[int, ...]]:
    """The transcript's arrays: messages (T, N, d), iterates (T+1, N, d), mechanism (T, N, d), noise_scales (T,)
    (optional)."""
    t, n, d = setting.horizon, setting.num_agents, setting.dim
    return {"messages": (t, n, d), "iterates": (t + 1, n, d), "mechanism": (t, n, d), "noise_scales": (t,)}


def added_noise(transcript: dict[str, np.ndarray]) -> np.ndarray:
    """-lambda^k n_j^k = messages - M_j^k (eq. (8)): the noise each message carries, (T, N, d)."""
    return transcript["messages"] - transcript["mechanism"]


def calibration(setting: WangBasarSetting) -> np.ndarray:
    """lambda^k sqrt(sigma_var), k = 1..T: the standard deviation of the released noise lambda^k n_j^k (L528)."""
    return setting.schedule(np.arange(1, setting.horizon + 1)) * math.sqrt(setting.sigma_var)


def neighbours(setting: WangBasarSetting, agent: int = 0, horizon: int = 1, sigma_var: float | None = None,
               wiggle: float = 0.0, frequency: float = 0.0) -> tuple[WangBasarSetting, WangBasarSetting]:
    """Neighbouring settings for Theorem 5 (gradients, L518-L524): agent `agent`'s cost f + <c, x> and f - <c, x>,
    c = e_1 / 2, so its gradient differs by e_1 at every x (l1 distance 1, Definition 1; l2 distance 1, the worst
    l2 case of (30)); `horizon` rounds (x^1 is public, so the message of round 1 releases g^1 through one Gaussian
    mechanism); `sigma_var` (None: the setting's) the noise variance of the audited run. `wiggle` in [0, 1]: the
    second cost also gets `GradientShifted`'s wiggle, so the difference is e_1 (1 - wiggle (1 + sin(frequency
    x_1)) / 2), of l1 norm in [1 - wiggle, 1] (still neighbours) and changing as x moves."""
    c = np.zeros(setting.dim)
    c[0] = 0.5
    variance = setting.sigma_var if sigma_var is None else sigma_var
    # a per-agent oracle is kept, shifted as well: the audit runs a per-agent loop 20,000 times (`dpverify verify`)
    return tuple(replace(setting, oracle=GradientShifted(setting.oracle, agent, sign * c, extra, frequency),
                         agent_oracle=None if setting.agent_oracle is None else
                         AgentGradientShifted(setting.agent_oracle, agent, sign * c, extra, frequency),
                         horizon=horizon, sigma_var=variance) for sign, extra in ((1.0, 0.0), (-1.0, wiggle)))


def replay(setting: WangBasarSetting, transcript: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each array Algorithm 2 determines from what an agent held and received (`dpverify verify`'s replay), from the
    transcript's own x^k and messages, k = 1..T:
    - "iterates": x^1 = the public start, x_i^{k+1} = sum_j w_ij m_j^k (eq. (9)) of the messages m_j^k it received
      (eq. (8) is m_j^k = x_j^k - lambda^k (g_j^k + n_j^k), so mixing the messages IS mixing x - lambda (g + n));
    - "mechanism": M_j^k = x_j^k - lambda^k grad f_j(x_j^k) (eq. (8) without n_j^k, L496), where a wrong stepsize or
      gradient shows, since the messages themselves carry unknown noise (they are not predicted).
    Both with algorithm.step's own formulas, all rounds as one batch: nothing is carried from one step to the next,
    so round-off never accumulates."""
    iterates, messages = transcript["iterates"], transcript["messages"]
    predicted = np.empty_like(iterates)
    predicted[0] = setting.x1
    predicted[1:] = mix(setting.weights, messages)                   # eq. (9), the rounds as step's replicas
    lam = setting.schedule(np.arange(1, setting.horizon + 1))[:, None, None]
    states = iterates[:-1]                                            # x^1..x^T, (T, N, d)
    return {"iterates": predicted, "mechanism": states - lam * setting.oracle(states)}   # step's M_j^k (L496)


def implied_noise(setting: WangBasarSetting, messages: np.ndarray) -> np.ndarray:
    """-lambda^k n_j^k = m_j^k - M_j^k that runs on `setting` with these messages (R, T, N, d) carried, with x^k
    replayed from the messages alone (x^1 public, then eq. (9); `replay`, the runs as one batch): what an adversary
    who knows the setting infers from the messages (`dpverify verify`'s privacy audit)."""
    by_round = np.moveaxis(np.asarray(messages, dtype=float), 0, 1)                    # (T, R, N, d)
    states = np.empty_like(by_round)
    states[0] = setting.x1
    states[1:] = mix(setting.weights, by_round[:-1])                                    # eq. (9)
    lam = setting.schedule(np.arange(1, setting.horizon + 1))[:, None, None, None]
    gradients = setting.oracle(states.reshape(-1, *states.shape[2:])).reshape(states.shape)
    return np.moveaxis(by_round - (states - lam * gradients), 1, 0)
