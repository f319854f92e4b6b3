"""What an implementation of DPDO-NC (seeds/002 Algorithm 1, L159-L168) exposes, ours and a user's.

An implementation is a callable `implementation(setting, rng) -> transcript` for ONE run:
- `setting` (`DpdoNcSetting`) holds the instance in plain terms: the weights A(t), the gradient oracle
  of each node's cost, x_1, eps, theta, the mirror map phi = mirror_scale ||x||^2 (omega = 2
  mirror_scale) and the radius of Omega = {||x||_1 <= radius}, the horizon T. It needs nothing from
  dpverify.
- `rng` is where the noise comes from: a numpy Generator, or dpverify's noise tape
  (`dpverify.algorithms.core.tape`), which hands every implementation the same draws when it asks
  for them in the order (round, agent, coordinate), e.g. `rng.laplace(0.0, sigma_t, size=d)` per
  agent. The implementation draws nothing else from it.
- the transcript is a mapping (or an object with these attributes): "messages" (T, N, d), the
  broadcasts q_t = x_t + xi_t that go on the wire (line 4); "iterates" (T+1, N, d), x_1..x_{T+1};
  optionally "noise_scales" (T,), the sigma_t it calibrated. What node i mixes, z_t^i (line 5), follows from the
  messages and the public weights (`mixed`).

`REFERENCE` runs our batched `run_dpdo_nc` through this door; `dpverify verify dpdo-nc` runs a user's
implementation beside it (docs/verify.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from dpverify.algorithms.core.errors import NotInContract
from dpverify.algorithms.core.mirror import SquaredEuclidean
from dpverify.algorithms.dpdo_nc.algorithm import Costs, DpdoNcParams, NodeReplaced, Schedule, run_dpdo_nc


@dataclass(frozen=True, eq=False)
class DpdoNcSetting:
    """One DPDO-NC instance as an implementation receives it (module docstring). `costs` and `schedule`
    are dpverify's objects behind `gradient` and `weights`; an implementation need not touch them."""

    costs: Costs
    schedule: Schedule
    x1: np.ndarray            # (N, d), public (Definition 4, L190)
    epsilon: float | None     # None: without differential privacy (sigma_t = 0)
    theta: float              # the gradient bound that calibrates sigma_t (L75)
    mirror_scale: float       # phi(x) = mirror_scale ||x||^2; omega = 2 mirror_scale
    radius: float             # Omega = {||x||_1 <= radius}
    horizon: int              # T

    @property
    def num_agents(self) -> int:
        return self.schedule.num_agents

    @property
    def dim(self) -> int:
        return self.x1.shape[-1]

    @property
    def omega(self) -> float:
        return 2.0 * self.mirror_scale

    def weights(self, t: int) -> np.ndarray:
        """A(t), (N, N): row i holds node i's weights a_ij(t) on the broadcasts it receives (eq. (6))."""
        return self.schedule.at(t)

    def gradient(self, t: int, i: int, x: np.ndarray) -> np.ndarray:
        """grad f_t^i(x), (d,), node i's own cost at round t (line 6)."""
        return self.costs.node_gradient(t, i, np.asarray(x, dtype=float))

    def params(self) -> DpdoNcParams:
        """The reference's parameters (literal readings: noisy self copy, one broadcast per node)."""
        return DpdoNcParams(self.epsilon, self.theta, SquaredEuclidean(self.mirror_scale), self.radius)

    def with_costs(self, costs: Costs, horizon: int | None = None) -> DpdoNcSetting:
        return replace(self, costs=costs, horizon=self.horizon if horizon is None else horizon)


def setting_of(costs: Costs, schedule: Schedule, params: DpdoNcParams, horizon: int, x1: np.ndarray) -> DpdoNcSetting:
    """The setting of a reference run with these parameters (an experiment's curve, re-run on a user's
    implementation). The contract states the literal readings and phi = c||x||^2 only; other parameters raise."""
    if not isinstance(params.mirror, SquaredEuclidean):
        raise NotInContract(f"the contract's setting has phi = c ||x||^2 only, not {type(params.mirror).__name__}")
    if (params.self_copy, params.noise_draw) != ("noisy", "per_node"):
        raise NotInContract(f"the contract states the literal readings (self_copy 'noisy', noise_draw 'per_node'), "
                            f"not ({params.self_copy!r}, {params.noise_draw!r})")
    return DpdoNcSetting(costs, schedule, np.asarray(x1, dtype=float), params.epsilon, params.theta, params.mirror.scale,
                         params.radius, horizon)


class DpdoNcImplementation(Protocol):
    def __call__(self, setting: DpdoNcSetting, rng: Any) -> Any: ...


def reference(setting: DpdoNcSetting, rng: Any) -> dict[str, np.ndarray]:
    """Our run_dpdo_nc, one run, through the contract."""
    params = setting.params()
    run = run_dpdo_nc(setting.costs, setting.schedule, params, horizon=setting.horizon, replicas=1, rng=rng,
                      dim=setting.dim, x1=setting.x1, keep=True, regret=False)
    return {"messages": run.broadcasts[:, 0], "iterates": run.iterates[:, 0], "noise_scales": run.sigmas}


REFERENCE: DpdoNcImplementation = reference


def shapes(setting: DpdoNcSetting) -> dict[str, tuple[int, ...]]:
    """The transcript's arrays: messages (T, N, d), iterates (T+1, N, d), noise_scales (T,) (optional)."""
    t, n, d = setting.horizon, setting.num_agents, setting.dim
    return {"messages": (t, n, d), "iterates": (t + 1, n, d), "noise_scales": (t,)}


def added_noise(transcript: dict[str, np.ndarray]) -> np.ndarray:
    """xi_t = q_t - x_t (line 4): the noise each broadcast carries, (T, N, d)."""
    return transcript["messages"] - transcript["iterates"][:-1]


def mixed(weights: Callable[[int], np.ndarray], messages: np.ndarray) -> np.ndarray:
    """z_t^i = sum_j a_ij(t) q_t^j (line 5, eq. (6)), t = 1..T: what each node mixes from the broadcasts it receives,
    computed from the messages (T, ..., N, d) (one run's, or runs stacked on axis 1) and the public weights A(t)
    (`setting.weights`, or a Schedule's `at`). One batched product; bit for bit run_dpdo_nc's own z_t (literal
    readings)."""
    messages = np.asarray(messages, dtype=float)
    stacked = np.stack([weights(t) for t in range(1, len(messages) + 1)])   # (T, N, N), a loop over rounds
    return np.matmul(stacked.reshape(stacked.shape[:1] + (1,) * (messages.ndim - 3) + stacked.shape[1:]), messages)


def calibration(setting: DpdoNcSetting) -> np.ndarray:
    """sigma_t = 2 sqrt(d) alpha_t theta / (omega eps), t = 1..T (Algorithm 1 line 1 with Lemma 1's bound (8))."""
    params = setting.params()
    return np.array([params.sigma(t, setting.num_agents, setting.dim) for t in range(1, setting.horizon + 1)])


def neighbours(setting: DpdoNcSetting, node: int = 0, horizon: int = 2, alternating: bool = False
               ) -> tuple[DpdoNcSetting, DpdoNcSetting]:
    """Neighbouring settings (Definition 3, L186): node `node`'s cost replaced by <c, x> and by <-c, x>, ||c|| =
    theta along (1, ..., 1), the worst case of Lemma 1's bound (`alternating`: the sign flips every round,
    NodeReplaced); `horizon` rounds (x_2 is the first state that depends on the costs, so q_2 is the first release
    that can leak them)."""
    c = np.full(setting.dim, setting.theta / np.sqrt(setting.dim))
    return (setting.with_costs(NodeReplaced(setting.costs, node, c, alternating), horizon),
            setting.with_costs(NodeReplaced(setting.costs, node, -c, alternating), horizon))


def replay(setting: DpdoNcSetting, transcript: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each state as Algorithm 1 computes it from what the node held and received (`dpverify verify`'s replay):
    x_1 = the public start, and x_{t+1}^i = P_Omega(z_t^i - alpha_t grad f_t^i(x_t^i) / (2 mirror_scale)) (lines
    5-7, eq. (7)) from the transcript's own x_t and z_t = A(t) q_t of its own messages, t = 1..T. Nothing is carried
    from one step to the next, so round-off never accumulates."""
    iterates, params, n = transcript["iterates"], setting.params(), setting.num_agents
    z = mixed(setting.weights, transcript["messages"])                    # (T, N, d)
    predicted = np.empty_like(iterates)
    predicted[0] = setting.x1
    for t in range(1, setting.horizon + 1):   # a loop over rounds; the nodes are one batch
        gradient = setting.costs.own_gradient(t, iterates[t - 1][None])[0]
        predicted[t] = params.mirror.step(z[t - 1], gradient, params.alpha(t, n), params.radius)
    return {"iterates": predicted}


def implied_noise(setting: DpdoNcSetting, messages: np.ndarray) -> np.ndarray:
    """xi_t = q_t - x_t that runs on `setting` with these broadcasts (R, T, N, d) carried, with x_t replayed from the
    broadcasts alone (x_1 public, then lines 5-7 from the replayed x_t, the runs as one batch): what an adversary
    who knows the setting infers from the messages (`dpverify verify`'s privacy audit)."""
    broadcasts = np.moveaxis(np.asarray(messages, dtype=float), 0, 1)               # (T, R, N, d)
    params, n = setting.params(), setting.num_agents
    z = mixed(setting.weights, broadcasts)
    states = np.empty_like(broadcasts)
    states[0] = setting.x1
    for t in range(1, setting.horizon):   # a loop over rounds; runs and nodes are one batch
        gradient = setting.costs.own_gradient(t, states[t - 1])
        states[t] = params.mirror.step(z[t - 1], gradient, params.alpha(t, n), params.radius)
    return np.moveaxis(broadcasts - states, 1, 0)
