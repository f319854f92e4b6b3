"""zCDP-NFL, Algorithm 1 of seeds/004 (L83-L100): linearized decentralized ADMM with Gaussian
message perturbation calibrated by Lemma I and Theorem I.

Per iteration n = 1..T, for all replicas and agents at once:
  g      = l'(tilde w^(n-1))/M + (lam/K) R'(.)                     subgradient, spec §2.4
  w^(n)  = closed-form argmin of (7)                                 `primal_update`
  tilde w^(n) = w^(n) + xi^(n),  xi ~ N(0, sigma^2(n) I)             eqs. (6), (8); Lemma I, Theorem I
  gamma^(n)   = gamma^(n-1) + rho sum_{l in N_k} (tilde w_k - tilde w_l)   eq. (9), received messages only

This module also holds what the baselines share: the step schedule, the noise calibrations, and the
`Trajectory` every algorithm returns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from dpverify.algorithms.core.blocking import Scratch
from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.mixing import agent_major, mix, mixing_operator
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.noise import (
    PrivacyLedger,
    Release,
    gaussian_mechanism,
    gaussian_release,
    gaussian_releases,
)
from dpverify.algorithms.core.privacy import zcdp_from_dp
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.algorithms.core.validation import (
    require_open_unit,
    require_positive,
    require_positive_int,
)

INIT_BROADCASTS = ("zero", "noisy")  # spec §2.6 init_broadcast (a), (b)
SUBGRADIENT_POINTS = ("broadcast", "primal")  # spec §2.6 R_subgrad_point


@dataclass(frozen=True)
class StepSchedule:
    """eta^(n) = eta0 n^(-power), n >= 1 (spec §6: eta0/sqrt(n) default; power 0 constant, < 0 increasing).
    The paper gives no schedule (seeds/004 L77); Assumption 3 (L226) needs power > 0."""

    eta0: float
    power: float = 0.5

    def __post_init__(self) -> None:
        require_positive("eta0", self.eta0, "seeds/004 eq. (5), step size eta > 0")
        if not math.isfinite(self.power):
            raise InvalidParameterError(f"power must be finite; got {self.power!r}")

    def eta(self, n: int) -> float:
        n = require_positive_int("iteration n", n, "eta^(n) is defined for n >= 1, seeds/004 eq. (7)")
        return self.eta0 * float(n) ** (-self.power)


# ----------------------------------------------------------------------------------------------------
# Noise calibrations: sigma_k^2(n) from the sensitivity Delta_k(n) and a per-iteration privacy budget.
# ----------------------------------------------------------------------------------------------------
class NoiseCalibration:
    """Interface: `variance(n, sensitivity) -> (N,)`, `label`, and what each release claims."""

    label: str = ""
    non_private: bool = False

    def variance(self, n: int, sensitivity: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def declared_epsilon_delta(self, n: int) -> tuple[float | None, float | None]:
        """(eps_n, delta_n) claimed for release n by an (eps, delta) calibration; (None, None) otherwise."""
        return None, None


def check_iteration(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidParameterError(f"iteration index n must be an integer >= 0; got {n!r}")
    return int(n)


@dataclass(frozen=True)
class ZcdpSchedule(NoiseCalibration):
    """Dynamic zCDP: phi^(n) = phi1 tau^-(n-1) (App. C L373, spec §2.5 phi_index; phi^(0) = tau phi1),
    sigma^2(n) = Delta^2(n)/(2 phi^(n)) (Theorem I, eq. (12)). tau = 1 (constant budget) only with
    allow_constant=True: it is outside the Corollary's tau in (0, 1) (L136), used as a control."""

    phi1: float
    tau: float
    allow_constant: bool = False

    def __post_init__(self) -> None:
        require_positive("phi1", self.phi1, "seeds/004 Theorem I, phi > 0")
        if self.allow_constant and self.tau == 1:
            return
        require_open_unit("tau", self.tau, "seeds/004 Corollary L136 (pass allow_constant=True for tau = 1)")

    @property
    def label(self) -> str:
        return f"zCDP phi1={self.phi1:g} tau={self.tau:g}"

    def phi(self, n: int) -> float:
        return self.phi1 * self.tau ** (-(check_iteration(n) - 1))

    def variance(self, n: int, sensitivity: np.ndarray) -> np.ndarray:
        return np.asarray(sensitivity, dtype=float) ** 2 / (2.0 * self.phi(n))  # seeds/004 eq. (12)

    def total_zcdp(self, horizon: int) -> float:
        """sum_{n=1}^T phi^(n) = phi1 (1 - tau^T)/(tau^(T-1) - tau^T) (seeds/004 App. C L375; the printed
        index range "0 < n < T" has T-1 terms but the closed form is the T-term sum)."""
        horizon = require_positive_int("horizon", horizon)
        if self.tau == 1:
            return self.phi1 * horizon
        return self.phi1 * (1 - self.tau**horizon) / (self.tau ** (horizon - 1) - self.tau**horizon)

    @classmethod
    def from_privacy_target(cls, epsilon: float, delta: float, tau: float, horizon: int,
                            allow_constant: bool = False) -> "ZcdpSchedule":
        """phi1 such that T releases compose to the target (eps, delta) (spec §2.5 recipe, inverting the
        Corollary): rho_tot = (sqrt(log(1/delta) + eps) - sqrt(log(1/delta)))^2,
        phi1 = rho_tot (tau^(T-1) - tau^T)/(1 - tau^T)."""
        require_positive("epsilon", epsilon)
        require_open_unit("delta", delta, "seeds/004 Corollary, delta in (0, 1)")
        horizon = require_positive_int("horizon", horizon)
        rho_total = zcdp_from_dp(epsilon, delta)
        if tau == 1 and allow_constant:
            return cls(rho_total / horizon, 1.0, allow_constant=True)
        require_open_unit("tau", tau, "seeds/004 Corollary L136")
        phi1 = rho_total * (tau ** (horizon - 1) - tau**horizon) / (1 - tau**horizon)
        return cls(phi1, tau, allow_constant=allow_constant)


@dataclass(frozen=True)
class ClassicalGaussianSchedule(NoiseCalibration):
    """(eps,delta)DP-NFL default (spec §2.10 A3; the paper gives no formula, L300): classical Gaussian
    mechanism per release with eps_n = eps_1 tau^-((n-1)/2), eps_1 = eps (tau^-1/2 - 1)/(tau^-T/2 - 1)
    (so sum_{n=1}^T eps_n = eps, basic composition), delta_n = delta/T,
    sigma_n = Delta sqrt(2 ln(1.25/delta_n))/eps_n (Dwork & Roth 2014, Thm A.1, valid for eps_n < 1)."""

    epsilon: float
    delta: float
    tau: float
    horizon: int

    def __post_init__(self) -> None:
        require_positive("epsilon", self.epsilon)
        require_open_unit("delta", self.delta)
        require_positive_int("horizon", self.horizon)
        if not (isinstance(self.tau, (int, float)) and 0 < self.tau <= 1):
            raise InvalidParameterError(f"tau must lie in (0, 1] (variance decay rate, spec §2.10 A3); got {self.tau!r}")
        largest = max(self.epsilon_at(1), self.epsilon_at(self.horizon))
        if largest >= 1:
            raise InvalidParameterError(
                f"classical Gaussian mechanism requires every eps_n < 1 (Dwork & Roth 2014, Thm A.1); "
                f"eps = {self.epsilon:g}, tau = {self.tau:g}, T = {self.horizon} gives max eps_n = {largest:.4g}"
            )

    @property
    def label(self) -> str:
        return f"classical (eps={self.epsilon:g}, delta={self.delta:g}) tau={self.tau:g} T={self.horizon}"

    @property
    def first_epsilon(self) -> float:
        if self.tau == 1:
            return self.epsilon / self.horizon
        root = self.tau ** (-0.5)
        return self.epsilon * (root - 1) / (root**self.horizon - 1)

    @property
    def delta_per_release(self) -> float:
        return self.delta / self.horizon

    def epsilon_at(self, n: int) -> float:
        """eps_n for n = 1..T (n = 0 extends the geometric law; used only for a data-independent init)."""
        n = check_iteration(n)
        if n > self.horizon:
            raise InvalidParameterError(f"iteration {n} is beyond the horizon T = {self.horizon} the budget was split over")
        return self.first_epsilon * self.tau ** (-(n - 1) / 2)

    def variance(self, n: int, sensitivity: np.ndarray) -> np.ndarray:
        scale = math.sqrt(2.0 * math.log(1.25 / self.delta_per_release)) / self.epsilon_at(n)
        return (np.asarray(sensitivity, dtype=float) * scale) ** 2

    def declared_epsilon_delta(self, n: int) -> tuple[float | None, float | None]:
        return self.epsilon_at(n), self.delta_per_release


@dataclass(frozen=True)
class NoNoise(NoiseCalibration):
    """Non-private control (spec §2.7 A1): sigma = 0; releases are recorded with zcdp = inf."""

    non_private = True  # class attribute, not a field

    @property
    def label(self) -> str:
        return "non-private"

    def variance(self, n: int, sensitivity: np.ndarray) -> np.ndarray:
        check_iteration(n)
        return np.zeros_like(np.asarray(sensitivity, dtype=float))


def noisy_broadcast(
    primal: np.ndarray,
    sensitivity: np.ndarray,
    n: int,
    calibration: NoiseCalibration,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    label: str,
) -> tuple[np.ndarray, np.ndarray]:
    """tilde w^(n) = w^(n) + xi^(n) with sigma^2 from the calibration (eq. (8)); returns (broadcast, variance)."""
    sensitivity = np.broadcast_to(np.asarray(sensitivity, dtype=float), (np.shape(primal)[-2],))
    variances, (release,) = planned_broadcasts(sensitivity[None], [n], calibration, label)
    return gaussian_release(primal, release, rng, ledger), variances[0]


def planned_broadcasts(sensitivity: np.ndarray, iterations, calibration: NoiseCalibration,
                       label: str) -> tuple[np.ndarray, list[Release]]:
    """Eq. (8)'s calibration at the given iterations, planned and validated at once (core/noise.py
    `gaussian_releases`): sensitivity (T, N) (Lemma I) -> the variances (T, N) and each broadcast's Release."""
    variances = np.array([calibration.variance(n, row) for n, row in zip(iterations, sensitivity)])
    declared = [calibration.declared_epsilon_delta(n) for n in iterations]   # (None, None) or (eps_n, delta_n) each
    epsilon = None if declared[0][0] is None else [eps for eps, _ in declared]
    delta = None if declared[0][1] is None else [delta for _, delta in declared]
    labels = [f"{label} [{calibration.label}]"] * len(variances)
    releases = gaussian_releases(sensitivity, np.sqrt(variances), iterations, labels, epsilon, delta,
                                 allow_non_private=calibration.non_private)
    return variances, releases


# ----------------------------------------------------------------------------------------------------
# Algorithm 1
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ZcdpNflParams:
    """rho: ADMM penalty (eq. (2)); step: eta^(n); c1: Assumption 1 bound used for calibration (L114);
    noise: calibration; init_broadcast / subgradient_point / clip: reading switches of spec §2.6."""

    rho: float
    step: StepSchedule
    c1: float
    noise: NoiseCalibration
    init_broadcast: str = "zero"
    subgradient_point: str = "broadcast"
    clip: bool = False

    def __post_init__(self) -> None:
        require_positive("rho", self.rho, "seeds/004 eq. (2), penalty rho > 0")
        require_positive("c1", self.c1, "seeds/004 Assumption 1 (L114)")
        if not isinstance(self.step, StepSchedule):
            raise InvalidParameterError(f"step must be a StepSchedule; got {type(self.step).__name__}")
        if not isinstance(self.noise, NoiseCalibration):
            raise InvalidParameterError(
                f"noise must be a NoiseCalibration (ZcdpSchedule, ClassicalGaussianSchedule, NoNoise); "
                f"got {type(self.noise).__name__}"
            )
        if self.init_broadcast not in INIT_BROADCASTS:
            raise InvalidParameterError(f"init_broadcast must be one of {INIT_BROADCASTS} (spec §2.6); got {self.init_broadcast!r}")
        if self.subgradient_point not in SUBGRADIENT_POINTS:
            raise InvalidParameterError(
                f"subgradient_point must be one of {SUBGRADIENT_POINTS} (spec §2.6); got {self.subgradient_point!r}"
            )
        if not isinstance(self.clip, bool):
            raise InvalidParameterError(f"clip must be a bool; got {self.clip!r}")


def lemma1_sensitivity(rho: float, c1: float, network: Network, eta, num_samples) -> np.ndarray:
    """Lemma I, eq. (11): Delta_k <= 2 c1 / (M_k (2 rho |N_k| + 1/eta)), per agent (N,); eta scalar or (N,),
    or (T, 1) for T iterations at once, which gives (T, N) (`sensitivity_bounds`)."""
    num_samples = np.asarray(num_samples, dtype=float)
    if np.any(num_samples < 1):
        raise InvalidParameterError(f"num_samples M_k must be >= 1; got {num_samples}")
    return 2.0 * c1 / (num_samples * (2.0 * rho * network.degrees + 1.0 / np.asarray(eta, dtype=float)))


def sensitivity_bound(params: ZcdpNflParams, network: Network, num_samples, n: int) -> np.ndarray:
    """Lemma I at iteration n, with eta^(n) from the params' schedule. For n = 0 (noisy init) eta^(1)
    is used (spec §2.6 phi_index)."""
    return sensitivity_bounds(params, network, num_samples, [n])[0]


def sensitivity_bounds(params: ZcdpNflParams, network: Network, num_samples, iterations) -> np.ndarray:
    """Lemma I at each of the iterations at once, (T, N): a run plans all its releases before the first."""
    etas = np.array([params.step.eta(max(check_iteration(n), 1)) for n in iterations])
    return lemma1_sensitivity(params.rho, params.c1, network, etas[:, None], num_samples)


def primal_update(
    broadcast_prev: np.ndarray,
    dual_prev: np.ndarray,
    subgradient: np.ndarray,
    network: Network,
    rho: float,
    eta,
    pull: np.ndarray | None = None,
) -> np.ndarray:
    """Closed form of (7) (spec §2.4): setting the gradient of the strongly convex quadratic
    (w - wt_k)/eta + g + gamma + 2 rho sum_l (w - (wt_k + wt_l)/2) to zero gives
    w_k = [wt_k (1/eta + rho |N_k|) + rho sum_l wt_l - gamma_k - g_k] / (1/eta + 2 rho |N_k|).
    eta: scalar or (N,) (per-client step). pull: rho sum_l wt_l (`neighbour_pull`) if already computed."""
    inverse_eta = 1.0 / np.broadcast_to(np.asarray(eta, dtype=float), (network.num_agents,))[:, None]
    rho_degrees = rho * network.degrees[:, None]
    if pull is None:
        pull = neighbour_pull(network, rho, broadcast_prev)
    # the numerator term by term in place in one fresh array: five passes over (R, N, d), no temporaries
    numerator = broadcast_prev * (inverse_eta + rho_degrees)
    numerator += pull
    numerator -= dual_prev
    numerator -= subgradient
    numerator /= inverse_eta + 2.0 * rho_degrees
    return numerator


def dual_update(dual_prev: np.ndarray, broadcast: np.ndarray, network: Network, rho: float,
                pull: np.ndarray | None = None) -> np.ndarray:
    """eq. (9): gamma_k += rho sum_{l in N_k} (tilde w_k - tilde w_l), from received (noisy) messages only, as
    gamma_k + rho |N_k| wt_k - rho sum_l wt_l. pull: rho sum_l wt_l (`neighbour_pull`) if already computed."""
    if pull is None:
        pull = neighbour_pull(network, rho, broadcast)
    change = broadcast * (rho * network.degrees[:, None])   # in place in one array: three passes
    change -= pull
    change += dual_prev
    return change


def neighbour_pull(network: Network, rho: float, broadcast: np.ndarray, weights=None) -> np.ndarray:
    """rho sum_{l in N_k} tilde w_l for every agent and replica: (rho A) tilde W. Eq. (9) at n and (7) at n + 1 both
    need it for the same broadcast, so run_zcdp_nfl computes it once per iteration. weights: rho A as built once per
    run by `mixing_operator` (sparse for a sparse graph, core/mixing.py); by default the dense rho A."""
    return mix(rho * network.adjacency if weights is None else weights, broadcast)


# ----------------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MessageBatch:
    """Everything put on the wire at one iteration: message m goes from senders[m] to receivers[m]
    and carries payload[:, m] (one row per replica)."""

    iteration: int
    senders: np.ndarray
    receivers: np.ndarray
    payload: np.ndarray

    @property
    def pairs(self) -> np.ndarray:
        return np.stack([self.senders, self.receivers], axis=1)

    @property
    def count(self) -> int:
        return int(self.senders.shape[0])


@dataclass
class Trajectory:
    """Output of a run. primal/broadcast: (T+1, R, N, d), index n = 0..T (None unless keep_iterates).
    variances: (T+1, N) noise variance sigma_k^2(n) actually used (0 at n = 0 without a noisy init)."""

    algorithm: str
    network: Network
    ledger: PrivacyLedger
    variances: np.ndarray
    final_primal: np.ndarray
    final_broadcast: np.ndarray
    final_dual: np.ndarray | None = None
    primal: np.ndarray | None = None
    broadcast: np.ndarray | None = None
    initial_broadcast_sent: bool = False

    @property
    def horizon(self) -> int:
        return self.variances.shape[0] - 1

    @property
    def replicas(self) -> int:
        return self.final_primal.shape[0]

    def _require(self, name: str) -> np.ndarray:
        history = getattr(self, name)
        if history is None:
            raise InvalidParameterError(f"the run did not keep its iterates ({name}); rerun with keep_iterates=True or use an observer")
        return history

    def transcript(self, agent: int) -> np.ndarray:
        """(R, T, d): everything `agent` sent, n = 1..T (the eavesdropper's view of that agent)."""
        broadcast = self._require("broadcast")
        if not 0 <= agent < self.network.num_agents:
            raise InvalidParameterError(f"agent must lie in [0, {self.network.num_agents - 1}]; got {agent}")
        return np.ascontiguousarray(broadcast[1:, :, agent, :].transpose(1, 0, 2))

    def messages(self, n: int) -> MessageBatch:
        """Messages of iteration n: each agent's broadcast to every neighbour (2E messages). At n = 0
        messages exist only with a noisy initial broadcast (the zero init is known to all)."""
        broadcast = self._require("broadcast")
        if not 0 <= n <= self.horizon:
            raise InvalidParameterError(f"iteration must lie in [0, {self.horizon}]; got {n}")
        pairs = self.network.directed_pairs
        if n == 0 and not self.initial_broadcast_sent:
            pairs = pairs[:0]
        return MessageBatch(n, pairs[:, 0].copy(), pairs[:, 1].copy(), broadcast[n][:, pairs[:, 0], :])

    def normalized_error(self, reference_w: np.ndarray) -> np.ndarray:
        """(T+1, R): sum_k ||w_k^(n) - w_c||^2 / ||w_c||^2 of the un-noised primal (seeds/004 L304)."""
        return normalized_error(self._require("primal"), reference_w)

    def ergodic_average(self, horizon: int | None = None) -> np.ndarray:
        """(R, N, d): hat W^(T) = (1/T) sum_{n=1}^T tilde W^(n) (seeds/004 L216)."""
        broadcast = self._require("broadcast")
        horizon = self.horizon if horizon is None else require_positive_int("horizon", horizon)
        if horizon > self.horizon:
            raise InvalidParameterError(f"ergodic average over T = {horizon} needs T <= run horizon {self.horizon}")
        return broadcast[1 : horizon + 1].mean(axis=0)


def normalized_error(primal: np.ndarray, reference_w: np.ndarray) -> np.ndarray:
    """sum_k ||w_k - w_c||^2 / ||w_c||^2 over the agent axis (-2): (..., N, d) -> (...) (seeds/004 L304)."""
    reference_w = np.asarray(reference_w, dtype=float)
    scale = float(reference_w @ reference_w)
    if scale == 0:
        raise InvalidParameterError("normalized error needs a nonzero reference w_c (it divides by ||w_c||^2, L304)")
    return ((np.asarray(primal) - reference_w) ** 2).sum(axis=(-2, -1)) / scale


Observer = Callable[[int, np.ndarray, np.ndarray, np.ndarray | None], None]


class IterateRecorder:
    """Keeps (T+1, R, N, d) histories when asked and forwards every state to an observer."""

    def __init__(self, keep: bool, horizon: int, shape: tuple[int, ...], observer: Observer | None):
        self.primal = np.empty((horizon + 1,) + shape) if keep else None
        self.broadcast = np.empty((horizon + 1,) + shape) if keep else None
        self.observer = observer

    def __call__(self, n: int, primal: np.ndarray, broadcast: np.ndarray, dual: np.ndarray | None) -> None:
        if self.primal is not None:
            self.primal[n] = primal
            self.broadcast[n] = broadcast
        if self.observer is not None:
            self.observer(n, primal, broadcast, dual)


def check_run_inputs(data: LocalData, network: Network, horizon: int, replicas: int, rng) -> tuple[int, int]:
    if not isinstance(data, LocalData):
        raise InvalidDataError(f"data must be LocalData; got {type(data).__name__}")
    if not isinstance(network, Network):
        raise InvalidParameterError(f"network must be a Network; got {type(network).__name__}")
    if data.num_agents != network.num_agents:
        raise InvalidDataError(
            f"data has N = {data.num_agents} agents but the network has {network.num_agents}; they must match"
        )
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    return require_positive_int("horizon", horizon), require_positive_int("replicas", replicas)


def run_zcdp_nfl(
    problem: Problem,
    data: LocalData,
    network: Network,
    params: ZcdpNflParams,
    *,
    horizon: int,
    replicas: int,
    rng: np.random.Generator,
    keep_iterates: bool = True,
    observer: Observer | None = None,
) -> Trajectory:
    """Run Algorithm 1 for T = horizon iterations on `replicas` independent noise realizations.
    observer(n, primal, broadcast, dual), if given, is called for n = 0 (initial state) .. T."""
    horizon, replicas = check_run_inputs(data, network, horizon, replicas, rng)
    shape = (replicas, network.num_agents, data.dim)
    ledger = PrivacyLedger()
    variances = np.zeros((horizon + 1, network.num_agents))
    clip = params.c1 if params.clip else None
    record = IterateRecorder(keep_iterates, horizon, shape, observer)

    primal = agent_major(np.zeros(shape))  # Algorithm 1: w^(0) = 0, gamma^(0) = 0; stored agent-major (core/mixing.py)
    dual = agent_major(np.zeros(shape))
    if params.init_broadcast == "noisy":
        # spec §2.6 (b): tilde w^(0) = xi^(0); w^(0) = 0 carries no data, so the release costs nothing.
        initial_sensitivity = sensitivity_bound(params, network, data.num_samples, 0)
        variances[0] = params.noise.variance(0, initial_sensitivity)
        broadcast = gaussian_mechanism(
            primal, 0.0, np.sqrt(variances[0]), rng, ledger=ledger, iteration=0,
            label=f"zcdp-nfl initial broadcast (data-independent) [{params.noise.label}]",
        )
    else:
        broadcast = agent_major(np.zeros(shape))
    record(0, primal, broadcast, dual)

    weights = mixing_operator(params.rho * network.adjacency, replicas * data.dim)   # rho A, once per run
    iterations = range(1, horizon + 1)   # Lemma I and the calibration of every release, checked once per run
    variances[1:], releases = planned_broadcasts(
        sensitivity_bounds(params, network, data.num_samples, iterations), iterations, params.noise, "zcdp-nfl")
    pull = neighbour_pull(network, params.rho, broadcast, weights)
    scratch = Scratch()   # the subgradient's residuals, allocated once per run (core/blocking.py)
    for n in range(1, horizon + 1):
        reg_point = broadcast if params.subgradient_point == "broadcast" else primal
        subgradient = problem.loss_subgradient(broadcast, data, clip, scratch)
        if problem.regularizer != "none":   # R = 0 (LAD, least squares) adds nothing
            subgradient += problem.lam / network.num_agents * problem.regularizer_subgradient(reg_point)
        primal = primal_update(broadcast, dual, subgradient, network, params.rho, params.step.eta(n), pull)  # eq. (7)
        broadcast = gaussian_release(primal, releases[n - 1], rng, ledger)  # eq. (8)
        pull = neighbour_pull(network, params.rho, broadcast, weights)   # used by (9) now and by (7) at n + 1
        dual = dual_update(dual, broadcast, network, params.rho, pull)  # eq. (9)
        record(n, primal, broadcast, dual)

    return Trajectory(
        algorithm="zcdp-nfl", network=network, ledger=ledger, variances=variances,
        final_primal=primal, final_broadcast=broadcast, final_dual=dual,
        primal=record.primal, broadcast=record.broadcast,
        initial_broadcast_sent=params.init_broadcast == "noisy",
    )
