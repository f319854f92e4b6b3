"""The zCDP-NFL experiment setup (seeds/004 Sec. 5), shared by the figures and the statistical checks.

An `Instance` is one random network + dataset + problem with its certified centralized solution;
`Settings` are the algorithm parameters (most are harness defaults, see the experiment TOMLs);
`run_algorithm` calibrates an algorithm to a total (eps, delta) budget and runs it batched;
`run_implementation` runs a user's implementation of zCDP-NFL (the paper's algorithm only) with the same
calibration through the contract (algorithms/zcdp_nfl/contract.py), one independent run per replica
(`dpverify verify` re-runs the figures' claims on it); `contract_runs` does so for any parameters the contract
states (the checks that run the algorithm themselves).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.network import Network, random_connected_network
from dpverify.algorithms.core.privacy import phi1_from_total, zcdp_from_dp
from dpverify.algorithms.core.problems import LocalData, Problem, boyd_l1_weight
from dpverify.algorithms.core.synthetic import noisy_linear_observations
from dpverify.algorithms.zcdp_nfl import contract
from dpverify.algorithms.zcdp_nfl.algorithm import (
    ClassicalGaussianSchedule,
    NoiseCalibration,
    NoNoise,
    StepSchedule,
    Trajectory,
    ZcdpNflParams,
    ZcdpSchedule,
    run_zcdp_nfl,
)
from dpverify.algorithms.zcdp_nfl.baselines.p_admm import (
    LinearDecayZcdpSchedule,
    PAdmmParams,
    run_p_admm,
)
from dpverify.algorithms.zcdp_nfl.baselines.subgradient_nfl import (
    SubgradientNflParams,
    run_subgradient_nfl,
)
from dpverify.theory.claims import NothingToMeasure
from dpverify.theory.instruments.ground_truth import GroundTruth, solve_regression
from dpverify.theory.verify.conformance import independent_transcripts

PROBLEMS = ("elastic_net", "lad", "ridge")  # seeds/004 Sec. 5: elastic net (L306), LAD (L313), ridge (L319)
# seeds/004 L300: zCDP-NFL and its baselines ((eps,delta)DP-NFL, zCDP-grad-NFL, P-ADMM); non-private NFL is a reference
ALGORITHMS = ("zcdp-nfl", "eps-delta-nfl", "zcdp-grad-nfl", "p-admm", "nonprivate-nfl")
ALGORITHM_LABELS = {"zcdp-nfl": "zCDP-NFL", "eps-delta-nfl": "(ε,δ)DP-NFL", "zcdp-grad-nfl": "zCDP-grad-NFL",
                    "p-admm": "P-ADMM", "nonprivate-nfl": "non-private NFL"}
CERTIFICATE_TOLERANCE = 1e-6  # ground truth is used only when its optimality certificate holds to this


@dataclass(frozen=True)
class Instance:
    network: Network
    data: LocalData
    problem: Problem
    truth: GroundTruth

    @property
    def reference(self) -> np.ndarray:
        return self.truth.solution


@dataclass(frozen=True)
class Settings:
    rho: float
    eta0: float
    eta_power: float
    tau: float
    delta: float
    c1: float
    horizon: int
    learning_rate: float = 0.05


def make_problem(name: str, data: LocalData, lam: float, l2_weight: float = 1.0) -> Problem:
    """seeds/004 Sec. 5: elastic net (L306), least absolute deviation (L313), ridge (L319)."""
    if name == "elastic_net":  # lambda_1 = 0.001 ||X^T y||_inf "as in Boyd2010" (L306)
        return Problem("squared", "elastic_net", lam, l1=boyd_l1_weight(data), l2=l2_weight)
    if name == "lad":
        return Problem("absolute", "none", lam)
    if name == "ridge":
        return Problem("squared", "l2", lam)
    raise InvalidParameterError(f"unknown problem {name!r}; expected one of {', '.join(PROBLEMS)}")


def build_instance(rng: np.random.Generator, *, problem: str, num_agents: int, num_edges: int, num_samples: int,
                   dim: int, lam: float, l2_weight: float = 1.0, data_noise: str = "gaussian") -> Instance:
    graph_rng, data_rng = rng.spawn(2)
    network = random_connected_network(num_agents, num_edges, graph_rng)
    data, _ = noisy_linear_observations(num_agents, num_samples, dim, data_rng, noise=data_noise)
    task = make_problem(problem, data, lam, l2_weight)
    truth = solve_regression(data.features, data.targets, task.loss, task.regularizer, task.lam, task.l1, task.l2)
    return Instance(network, data, task, truth)


def zcdp_budget(epsilon: float, settings: Settings) -> tuple[float, float]:
    """Total rho for a target (eps, delta) (inverse of Bun-Steinke Prop. 1.3) and the phi^(1) that
    spends it over T releases with phi^(n+1) = phi^(n)/tau (Corollary, L136)."""
    rho_total = zcdp_from_dp(epsilon, settings.delta)
    return rho_total, phi1_from_total(rho_total, settings.tau, settings.horizon)


def _noise_of(name: str, settings: Settings, epsilon: float | None) -> NoiseCalibration:
    """The calibration of algorithm `name` to the total (eps, delta) (L302); NoNoise for the non-private control
    or epsilon None."""
    if name == "nonprivate-nfl" or epsilon is None:
        return NoNoise()
    if name == "eps-delta-nfl":
        return ClassicalGaussianSchedule(epsilon, settings.delta, settings.tau, settings.horizon)
    return ZcdpSchedule(zcdp_budget(epsilon, settings)[1], settings.tau)


def _nfl_params(settings: Settings, noise: NoiseCalibration) -> ZcdpNflParams:
    return ZcdpNflParams(rho=settings.rho, step=StepSchedule(settings.eta0, settings.eta_power), c1=settings.c1,
                         noise=noise)


def zcdp_nfl_params(settings: Settings, epsilon: float | None) -> ZcdpNflParams:
    """The parameters run_algorithm("zcdp-nfl", ...) runs with: varphi^(1) spending the total (eps, delta) over T
    releases (Corollary, L136); no noise for epsilon None."""
    return _nfl_params(settings, _noise_of("zcdp-nfl", settings, epsilon))


def run_algorithm(name: str, instance: Instance, settings: Settings, epsilon: float | None, *, replicas: int,
                  rng: np.random.Generator, keep_iterates: bool = True, observer=None) -> Trajectory:
    """Run one algorithm of Sec. 5, calibrated to the same total (eps, delta) (L302)."""
    common = dict(horizon=settings.horizon, replicas=replicas, rng=rng, keep_iterates=keep_iterates)
    noise = _noise_of(name, settings, epsilon)
    if name in ("zcdp-nfl", "eps-delta-nfl", "nonprivate-nfl"):
        params = _nfl_params(settings, noise)
        return run_zcdp_nfl(instance.problem, instance.data, instance.network, params, observer=observer, **common)
    if name == "zcdp-grad-nfl":
        params = SubgradientNflParams(learning_rate=settings.learning_rate, c1=settings.c1, noise=noise)
        return run_subgradient_nfl(instance.problem, instance.data, instance.network, params, **common)
    if name == "p-admm":
        if isinstance(noise, ZcdpSchedule):  # linearly decaying variance, same total zCDP (spec Sec. 2.10 A5)
            noise = LinearDecayZcdpSchedule.matching(noise, settings.horizon)
        params = PAdmmParams(rho=settings.rho, c1=settings.c1, noise=noise)
        return run_p_admm(instance.problem, instance.data, instance.network, params, **common)
    raise InvalidParameterError(f"unknown algorithm {name!r}; expected one of {', '.join(ALGORITHMS)}")


def contract_runs(implementation: Callable, instance: Instance, params: ZcdpNflParams, *, horizon: int, delta: float,
                  replicas: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """`replicas` independent runs of `implementation` through the contract (contract.py) with the reference's
    parameters `params`, each with its own Generator spawned from `rng`, stacked like the reference's Trajectory
    (rounds first, then runs): iterates w^(0..T) (T+1, R, N, d); broadcast tilde w^(0..T) (T+1, R, N, d), the
    transcript's messages after tilde w^(0) = 0 (the contract's reading: nothing is broadcast at n = 0); and
    noise_scales sigma_k(n) (T, R, N) when every run reports them (optional in the transcript). A run the
    contract cannot state raises NotInContract."""
    setting = contract.setting_of(instance.problem, instance.data, instance.network, params, horizon, delta)
    runs = independent_transcripts(implementation, setting, rng.spawn(replicas), contract.shapes)
    stacked = {key: np.stack([run[key] for run in runs], axis=1) for key in runs[0] if all(key in run for run in runs)}
    messages = stacked.pop("messages")
    stacked["broadcast"] = np.concatenate([np.zeros((1,) + messages.shape[1:]), messages])
    return stacked


def finite(runs: dict[str, np.ndarray], what: str) -> dict[str, np.ndarray]:
    """`runs` (contract_runs) if every iterate and broadcast is finite; else NothingToMeasure naming the first
    iteration that is not: a check that evaluates `what` at every iteration has nothing to evaluate there (a
    diverging implementation is judged by the checks of convergence and by conformance)."""
    bad = ~(np.isfinite(runs["iterates"]) & np.isfinite(runs["broadcast"])).reshape(len(runs["iterates"]), -1).all(axis=1)
    if bad.any():
        raise NothingToMeasure(f"the implementation's iterates are not finite from iteration {int(np.argmax(bad))} on: "
                               f"{what} cannot be evaluated there")
    return runs


def run_implementation(implementation: Callable, instance: Instance, settings: Settings, epsilon: float | None, *,
                       replicas: int, rng: np.random.Generator) -> np.ndarray:
    """The primal iterates w^(0..T) (T+1, R, N, d) of `replicas` independent runs of a user's implementation of
    zCDP-NFL (contract.py), calibrated as run_algorithm("zcdp-nfl", ...) calibrates ours: varphi^(1) spending the
    total (eps, delta) over T releases (Corollary, L136). Each run has its own Generator, spawned from `rng`.
    A run the contract cannot state raises NotInContract."""
    return contract_runs(implementation, instance, zcdp_nfl_params(settings, epsilon), horizon=settings.horizon,
                         delta=settings.delta, replicas=replicas, rng=rng)["iterates"]
