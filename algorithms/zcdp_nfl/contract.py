"""What an implementation of zCDP-NFL (seeds/004 Algorithm 1, eqs. (7)-(9), L83-L100) exposes, ours and a user's.

An implementation is a callable `implementation(setting, rng) -> transcript` for ONE run:
- `setting` (`ZcdpNflSetting`) holds the instance in plain terms: the graph (adjacency, degrees |N_k|,
  neighbours), each client's per-sample loss subgradients l'(x_kj, y_kj; w) and the regularizer's
  subgradient R'(w) as oracles, lambda, M_k, the ADMM penalty rho, the step eta^(n) = eta0 n^-eta_power,
  the gradient bound c1 of Assumption 1 (and whether per-sample subgradients are clipped to it), the
  zCDP schedule varphi^(n) = phi1 tau^-(n-1) (phi1 None: no noise), the horizon T, and the budget in the
  paper's own terms (`epsilon`, `delta`: (eps, delta)-DP over the T iterations, of which phi1 is dpverify's
  conversion; converting it yourself is what the accounting check then judges). It needs nothing
  from dpverify. Readings of Algorithm 1 (specs/zcdp_nfl.md 2.6, the reference's defaults):
  tilde w^(0) = w^(0) = 0 and gamma^(0) = 0 (no initial broadcast); at iteration n the subgradient
  of loss and regularizer is taken at the client's own broadcast tilde w_k^(n-1); one common step
  eta^(n) for every client, the same one in Lemma I's sensitivity.
- `rng` is where the noise comes from: a numpy Generator, or dpverify's noise tape
  (`dpverify.algorithms.core.tape`), which hands every implementation the same draws when it asks
  for them in the order (iteration, client, coordinate), e.g. `rng.standard_normal(d)` (or
  `rng.normal(0.0, sigma_k, size=d)`) per client. Our reference draws the noise of every client at
  every iteration, EVEN WHEN sigma = 0 (phi1 None: the non-private control), so an implementation
  that conforms exactly draws them too; it draws nothing else from rng.
- the transcript is a mapping (or an object with these attributes): "messages" (T, N, d), the
  broadcasts tilde w^(n) = w^(n) + xi^(n), n = 1..T, that go on the wire (eq. (8)); "iterates"
  (T+1, N, d), the un-noised primal states w^(0) = 0, w^(1), ..., w^(T) (eq. (7)); optionally
  "noise_scales" (T, N), the sigma_k(n) it calibrated (per client: Lemma I's bound depends on |N_k|
  and M_k).

`REFERENCE` runs our batched `run_zcdp_nfl` (replicas=1) through this door; `dpverify verify zcdp-nfl`
runs a user's implementation beside it (docs/verify.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from dpverify.algorithms.core.errors import DpverifyError, InvalidParameterError, NotInContract
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.privacy import phi1_from_total, zcdp_from_dp
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.algorithms.core.tape import NoiseTape
from dpverify.algorithms.zcdp_nfl.algorithm import (
    NoNoise,
    StepSchedule,
    ZcdpNflParams,
    ZcdpSchedule,
    dual_update,
    primal_update,
    run_zcdp_nfl,
)

NEIGHBOUR_AGENT = 0        # the client whose record differs between the neighbouring settings
CANARY_TARGET = 10.0       # default: |y| of the replaced record; at every iterate of a short run its squared-loss subgradient exceeds c1 (plausible 5-1e6)
AUDIT_HORIZON = 1          # default: iterations of a neighbouring run: tilde w^(1) already depends on the data (w^(0) = 0 is public)


@dataclass(frozen=True, eq=False)
class ZcdpNflSetting:
    """One zCDP-NFL instance as an implementation receives it (module docstring). `problem`, `data` and
    `network` are dpverify's objects behind the oracles and the graph; an implementation need not touch them."""

    problem: Problem          # loss l and regularizer R, weight lambda (seeds/004 eqs. (1), (4))
    data: LocalData           # D_k = (X_k, y_k) of every client (L44)
    network: Network          # the connected undirected graph (L42)
    rho: float                # ADMM penalty (eq. (2))
    eta0: float               # eta^(n) = eta0 n^-eta_power (L77 gives no schedule; specs/zcdp_nfl.md 6)
    eta_power: float
    c1: float                 # Assumption 1's bound on a per-sample subgradient (L114), calibrates the noise
    clip: bool                # per-sample subgradients clipped to norm c1 before averaging (enforces Assumption 1)
    phi1: float | None        # varphi^(1) of the dynamic zCDP schedule (App. C L373); None: no noise (sigma = 0)
    tau: float                # varphi^(n+1) = varphi^(n) / tau (L112, Corollary L136)
    delta: float              # the delta of the (eps, delta) guarantee derived from zCDP (Corollary); not used by a run
    horizon: int              # T
    # the budget in the paper's own terms: (epsilon, delta)-DP for the whole run of `horizon` iterations, as the
    # experiments state it (L302); phi1 is dpverify's conversion of it (Bun & Steinke Prop. 1.3 inverted, then the
    # Corollary's split, L136), so code that converts epsilon itself has its conversion and split judged by the
    # accounting check. None: no total stated (the non-private control, or a run shorter than the budget's)
    epsilon: float | None = None

    def __post_init__(self) -> None:
        if self.epsilon is None:
            return
        spent = phi1_of_budget(self.epsilon, self.delta, self.tau, self.horizon)
        if not np.isclose(self.phi1 or 0.0, spent, rtol=1e-12, atol=0.0):
            raise InvalidParameterError(f"phi1 = {self.phi1!r} does not spend epsilon = {self.epsilon!r} (delta "
                                        f"{self.delta!r}) over {self.horizon} iterations (phi1 = {spent!r} does); "
                                        "leave epsilon None or give the Corollary's phi1")

    @property
    def num_agents(self) -> int:
        return self.network.num_agents

    @property
    def dim(self) -> int:
        return self.data.dim

    @property
    def adjacency(self) -> np.ndarray:
        """(N, N) 0/1, symmetric, zero diagonal."""
        return np.array(self.network.adjacency)

    @property
    def degrees(self) -> np.ndarray:
        """|N_k|, (N,)."""
        return np.array(self.network.degrees)

    def neighbors(self, k: int) -> np.ndarray:
        """N_k: the clients k exchanges messages with, in increasing order."""
        return self.network.neighbors(k)

    @property
    def num_samples(self) -> np.ndarray:
        """M_k, (N,)."""
        return np.full(self.num_agents, self.data.num_samples)

    @property
    def lam(self) -> float:
        """lambda of eq. (1): client k's objective is l(X_k, y_k; w)/M_k + lambda R(w)/K."""
        return self.problem.lam

    def sample_gradients(self, k: int, w: np.ndarray) -> np.ndarray:
        """l'(x_kj, y_kj; w) for every sample j of client k, (M_k, d), unclipped (squared loss: 2 (x^T w - y) x;
        absolute loss: sign(x^T w - y) x with sign(0) = 0; specs/zcdp_nfl.md 2.8)."""
        features, targets = self.data.features[k], self.data.targets[k]
        residuals = features @ np.asarray(w, dtype=float) - targets
        coefficients = 2.0 * residuals if self.problem.loss == "squared" else np.sign(residuals)
        return coefficients[:, None] * features

    def regularizer_gradient(self, w: np.ndarray) -> np.ndarray:
        """R'(w), (d,) (elastic net: l1 sign(w) + 2 l2 w with sign(0) = 0; ridge: 2w; none: 0)."""
        return self.problem.regularizer_subgradient(np.asarray(w, dtype=float))

    def params(self) -> ZcdpNflParams:
        """The reference's parameters (the default readings of the module docstring)."""
        noise = NoNoise() if self.phi1 is None else ZcdpSchedule(self.phi1, self.tau, allow_constant=self.tau == 1)
        return ZcdpNflParams(self.rho, StepSchedule(self.eta0, self.eta_power), self.c1, noise, clip=self.clip)

    def with_data(self, data: LocalData, horizon: int | None = None) -> ZcdpNflSetting:
        """Other data; another horizon keeps phi1 and states no total budget (the run spends another one)."""
        horizon = self.horizon if horizon is None else horizon
        return replace(self, data=data, horizon=horizon, epsilon=self.epsilon if horizon == self.horizon else None)


def phi1_of_budget(epsilon: float, delta: float, tau: float, horizon: int) -> float:
    """varphi^(1) that spends (epsilon, delta)-DP over `horizon` releases: rho = Prop. 1.3 inverted, split by the
    Corollary (L136) with varphi^(n+1) = varphi^(n) / tau."""
    return float(phi1_from_total(zcdp_from_dp(epsilon, delta), tau, horizon))


def setting_of(problem: Problem, data: LocalData, network: Network, params: ZcdpNflParams, horizon: int,
               delta: float) -> ZcdpNflSetting:
    """The setting of a reference run with these parameters (an experiment's run of zCDP-NFL, re-run on a user's
    implementation). The contract states the default readings (no initial broadcast, subgradient at the
    broadcast) and the dynamic zCDP schedule or no noise; other parameters raise NotInContract."""
    if (params.init_broadcast, params.subgradient_point) != ("zero", "broadcast"):
        raise NotInContract(f"the contract states the default readings (init_broadcast 'zero', subgradient_point "
                            f"'broadcast'), not ({params.init_broadcast!r}, {params.subgradient_point!r})")
    if isinstance(params.noise, NoNoise):
        phi1, tau = None, 1.0
    elif type(params.noise) is ZcdpSchedule:
        phi1, tau = params.noise.phi1, params.noise.tau
    else:
        raise NotInContract(f"the contract's setting has the zCDP schedule varphi^(n) = phi1 tau^-(n-1) or no noise, "
                            f"not {type(params.noise).__name__}")
    return ZcdpNflSetting(problem, data, network, params.rho, params.step.eta0, params.step.power, params.c1, params.clip,
                          phi1, tau, delta, horizon)


class ZcdpNflImplementation(Protocol):
    def __call__(self, setting: ZcdpNflSetting, rng: Any) -> Any: ...


class _TapeGenerator(np.random.Generator):
    """A numpy Generator (what run_zcdp_nfl accepts) whose Gaussian draws come from a noise tape. Its own
    bit generator must stay untouched: a draw of any other kind would not be the tape's, and is refused
    after the run."""

    def __init__(self, tape: NoiseTape):
        super().__init__(np.random.PCG64(0))
        self.tape = tape
        self.initial_state = self.bit_generator.state

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return self.tape.standard_normal(size)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return self.tape.normal(loc, scale, size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        return self.tape.laplace(loc, scale, size)

    def untouched(self) -> bool:
        return self.bit_generator.state == self.initial_state


def reference(setting: ZcdpNflSetting, rng: Any) -> dict[str, np.ndarray]:
    """Our run_zcdp_nfl, one run, through the contract. It draws rng.standard_normal((1, N, d)) once per
    iteration (gaussian_mechanism), which the noise tape serves in the order (iteration, client, coordinate)."""
    generator = _TapeGenerator(rng) if isinstance(rng, NoiseTape) else rng
    run = run_zcdp_nfl(setting.problem, setting.data, setting.network, setting.params(), horizon=setting.horizon,
                       replicas=1, rng=generator, keep_iterates=True)
    if isinstance(generator, _TapeGenerator) and not generator.untouched():
        raise DpverifyError("run_zcdp_nfl drew randomness other than Gaussian noise from its generator; the noise tape "
                            "cannot serve it, so exact conformance would compare different draws")
    return {"messages": run.broadcast[1:, 0], "iterates": run.primal[:, 0], "noise_scales": np.sqrt(run.variances[1:])}


REFERENCE: ZcdpNflImplementation = reference


def shapes(setting: ZcdpNflSetting) -> dict[str, tuple[int, ...]]:
    """The transcript's arrays: messages (T, N, d), iterates (T+1, N, d), noise_scales (T, N) (optional)."""
    t, n, d = setting.horizon, setting.num_agents, setting.dim
    return {"messages": (t, n, d), "iterates": (t + 1, n, d), "noise_scales": (t, n)}


def added_noise(transcript: dict[str, np.ndarray]) -> np.ndarray:
    """xi^(n) = tilde w^(n) - w^(n), n = 1..T (eq. (8)): the noise each broadcast carries, (T, N, d)."""
    return transcript["messages"] - transcript["iterates"][1:]


def calibration(setting: ZcdpNflSetting) -> np.ndarray:
    """sigma_k(n), (T, N): Theorem I (12) sigma_k^2(n) = Delta_k^2(n) / (2 varphi^(n)) with Lemma I's bound (11)
    Delta_k(n) = 2 c1 / (M_k (2 rho |N_k| + 1/eta^(n))) and varphi^(n) = phi1 tau^-(n-1) (App. C L373)."""
    n = np.arange(1, setting.horizon + 1, dtype=float)
    if setting.phi1 is None:
        return np.zeros((setting.horizon, setting.num_agents))
    eta = setting.eta0 * n ** (-setting.eta_power)
    sensitivity = 2.0 * setting.c1 / (setting.num_samples[None, :] * (2.0 * setting.rho * setting.degrees[None, :]
                                                                       + 1.0 / eta[:, None]))   # seeds/004 eq. (11)
    phi = setting.phi1 * setting.tau ** (-(n - 1.0))
    return sensitivity / np.sqrt(2.0 * phi)[:, None]                                             # seeds/004 eq. (12)


def neighbours(setting: ZcdpNflSetting, agent: int = NEIGHBOUR_AGENT, horizon: int = AUDIT_HORIZON,
               target: float = CANARY_TARGET) -> tuple[ZcdpNflSetting, ZcdpNflSetting]:
    """Neighbouring settings (Definition I, L104-L110: one record of one client replaced): client `agent`'s last
    record replaced by (x_c, +target) and by (x_c, -target), ||x_c|| = c1 along (1, ..., 1). At tilde w = 0 the two
    per-sample subgradients are -/+ 2 target x_c; clipped to c1 they differ by 2 c1, Lemma I's worst case (App. A
    eq. (27)). `horizon` iterations: tilde w^(1) is the first release, and it depends on the data."""
    canary = np.full(setting.dim, setting.c1 / np.sqrt(setting.dim))
    last = setting.data.num_samples - 1
    return (setting.with_data(setting.data.replace_sample(agent, last, canary, target), horizon),
            setting.with_data(setting.data.replace_sample(agent, last, canary, -target), horizon))


def replay(setting: ZcdpNflSetting, transcript: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each state as Algorithm 1 computes it from what the client held and received (`dpverify verify`'s replay):
    w^(0) = 0, and w_k^(n) by the closed form of (7) from the transcript's own broadcasts tilde w^(n-1) of client k
    and its neighbours (tilde w^(0) = 0: nothing is broadcast at n = 0) and gamma_k^(n-1), rebuilt from the received
    broadcasts by (9) (gamma^(0) = 0): the dual is post-processing of the messages, so no implementation need report
    it. The subgradient is taken at tilde w_k^(n-1), clipped as the setting says. Only gamma is carried from one
    step to the next, and it is a sum of the messages: round-off never accumulates in the predicted states."""
    messages, params, data = transcript["messages"], setting.params(), setting.data
    broadcasts = np.concatenate([np.zeros((1,) + messages.shape[1:]), messages])    # tilde w^(0..T)
    # g_k at every tilde w^(n-1) at once, the iterations as the batch's replica axis (seeds/004 eq. (5))
    subgradients = setting.problem.local_subgradient(broadcasts[:-1], data, setting.c1 if setting.clip else None)
    predicted = np.zeros((messages.shape[0] + 1,) + messages.shape[1:])               # w^(0) = 0
    dual = np.zeros(messages.shape[1:])                                               # gamma^(0) = 0
    for n in range(1, setting.horizon + 1):   # a loop over iterations; the clients are one batch
        predicted[n] = primal_update(broadcasts[n - 1], dual, subgradients[n - 1], setting.network, params.rho,
                                     params.step.eta(n))                              # seeds/004 eq. (7)
        dual = dual_update(dual, broadcasts[n], setting.network, params.rho)          # seeds/004 eq. (9)
    return {"iterates": predicted}


def implied_noise(setting: ZcdpNflSetting, messages: np.ndarray) -> np.ndarray:
    """The noise xi^(n) = tilde w^(n) - w^(n) that runs on `setting` with these broadcasts (R, T, N, d) carried, with
    w^(n) replayed from the broadcasts alone (`replay`, the runs as one batch): what an adversary who knows the
    setting infers from the messages (`dpverify verify`'s privacy audit)."""
    by_iteration = np.moveaxis(np.asarray(messages, dtype=float), 0, 1)               # (T, R, N, d)
    states = replay(setting, {"messages": by_iteration})["iterates"]
    return np.moveaxis(by_iteration - states[1:], 1, 0)
