"""P-ADMM baseline of seeds/004 Sec. 5 (ref. (24), L477; Ding et al., arXiv:1901.02094).

IMPLEMENTATION = "surrogate": the update rules of arXiv:1901.02094 were not available to the harness
(only its abstract: "dynamic zCDP, by inserting Gaussian noise with linearly decaying variance").
This module implements the labelled surrogate of spec §2.10 A5 instead; every Trajectory it returns
is tagged "p-admm (surrogate)". Ridge only (the paper uses P-ADMM only for Fig. 3, L317-L321).

Per iteration n = 1..T (exact decentralized ADMM, seeds/004 eq. (3), on received noisy messages):
  w_k^(n)       = argmin_w f_k(w) + w^T gamma_k + rho sum_{l in N_k} ||w - (tilde w_k + tilde w_l)/2||^2
               = solve( 2 X_k^T X_k/M + (2 lam/K) I + 2 rho |N_k| I ,
                        2 X_k^T y_k/M - gamma_k + rho (|N_k| tilde w_k + sum_l tilde w_l) )     (spec §2.1)
  tilde w_k^(n) = w_k^(n) + xi_k^(n)   (output perturbation)
  gamma_k^(n)   = gamma_k^(n-1) + rho sum_{l in N_k} (tilde w_k^(n) - tilde w_l^(n))

Sensitivity (derivation). Given the (public) history, the objective of the argmin on D is
G(w) = l(X_k, y_k; w)/M + lam||w||^2/K + w^T gamma + rho sum_l ||...||^2, mu-strongly convex with
mu = 2 lam/K + 2 rho |N_k| (the loss part is convex). On a replace-one neighbour D',
G'(w) = G(w) + [l(x', y'; w) - l(x, y; w)]/M. With w* = argmin G, w'* = argmin G':
mu ||w* - w'*|| <= ||grad G'(w*) - grad G'(w'*)|| = ||grad G'(w*)|| = ||l'(x', y'; w*) - l'(x, y; w*)||/M
<= 2 c1/M under Assumption 1 (per-sample gradient norm <= c1, as in Lemma I). Hence
Delta_k = 2 c1 / (M_k (2 lam/K + 2 rho |N_k|)).

Noise: sigma_k^2(n) decays linearly in n (`LinearDecayZcdpSchedule`), with a total zCDP budget that
the caller matches to zCDP-NFL's (Corollary of seeds/004, via ZcdpSchedule.total_zcdp).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.noise import PrivacyLedger
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.algorithms.core.validation import require_positive, require_positive_int
from dpverify.algorithms.zcdp_nfl.algorithm import (
    IterateRecorder,
    NoiseCalibration,
    Observer,
    Trajectory,
    ZcdpSchedule,
    check_iteration,
    check_run_inputs,
    dual_update,
    neighbour_pull,
    noisy_broadcast,
)

IMPLEMENTATION = "surrogate"


@dataclass(frozen=True)
class LinearDecayZcdpSchedule(NoiseCalibration):
    """sigma^2(n) proportional to (T - n + 1): linear decay from sigma^2(1) to sigma^2(1)/T [harness
    default standing in for P-ADMM's "linearly decaying variance"]. With Delta constant in n, the
    per-release budget is phi(n) = total_zcdp / (H_T (T - n + 1)), H_T = sum_{j=1}^T 1/j, so that
    sum_{n=1}^T phi(n) = total_zcdp (Bun-Steinke Lemma 1.7) and sigma^2(n) = Delta^2/(2 phi(n))."""

    total_zcdp: float
    horizon: int

    def __post_init__(self) -> None:
        require_positive("total_zcdp", self.total_zcdp)
        require_positive_int("horizon", self.horizon)

    @classmethod
    def matching(cls, schedule: ZcdpSchedule, horizon: int) -> "LinearDecayZcdpSchedule":
        """Same total zCDP over T releases as a zCDP-NFL schedule (seeds/004 L302: equal total privacy)."""
        return cls(schedule.total_zcdp(horizon), horizon)

    @property
    def label(self) -> str:
        return f"linear-decay zCDP total={self.total_zcdp:g} T={self.horizon}"

    def phi(self, n: int) -> float:
        n = check_iteration(n)
        if not 1 <= n <= self.horizon:
            raise InvalidParameterError(f"iteration must lie in [1, T = {self.horizon}] for this budget split; got {n}")
        harmonic = float(np.sum(1.0 / np.arange(1, self.horizon + 1)))
        return self.total_zcdp / (harmonic * (self.horizon - n + 1))

    def variance(self, n: int, sensitivity: np.ndarray) -> np.ndarray:
        return np.asarray(sensitivity, dtype=float) ** 2 / (2.0 * self.phi(n))


@dataclass(frozen=True)
class PAdmmParams:
    rho: float
    c1: float
    noise: NoiseCalibration

    def __post_init__(self) -> None:
        require_positive("rho", self.rho, "ADMM penalty, seeds/004 eq. (3)")
        require_positive("c1", self.c1, "seeds/004 Assumption 1 (L114)")
        if not isinstance(self.noise, NoiseCalibration):
            raise InvalidParameterError(f"noise must be a NoiseCalibration; got {type(self.noise).__name__}")


def p_admm_sensitivity(params: PAdmmParams, problem: Problem, network: Network, num_samples) -> np.ndarray:
    """Delta_k = 2 c1 / (M_k (2 lam/K + 2 rho |N_k|)) (derivation in the module docstring)."""
    strong_convexity = 2.0 * problem.lam / network.num_agents + 2.0 * params.rho * network.degrees
    return 2.0 * params.c1 / (float(num_samples) * strong_convexity)


def run_p_admm(
    problem: Problem,
    data: LocalData,
    network: Network,
    params: PAdmmParams,
    *,
    horizon: int,
    replicas: int,
    rng: np.random.Generator,
    keep_iterates: bool = True,
    observer: Observer | None = None,
) -> Trajectory:
    if problem.name != "ridge":
        raise InvalidParameterError(
            f"P-ADMM ({IMPLEMENTATION}) is implemented for ridge regression only (seeds/004 Fig. 3, L317); "
            f"got problem {problem.name!r}"
        )
    horizon, replicas = check_run_inputs(data, network, horizon, replicas, rng)
    shape = (replicas, network.num_agents, data.dim)
    num_samples, dim = data.num_samples, data.dim
    # Per-agent system matrices of the exact ridge argmin, inverted once for all iterations (N, d, d).
    gram = np.einsum("nmd,nme->nde", data.features, data.features) / num_samples
    diagonal = 2.0 * problem.lam / network.num_agents + 2.0 * params.rho * network.degrees
    system_inverse = np.linalg.inv(2.0 * gram + diagonal[:, None, None] * np.eye(dim))
    data_term = 2.0 * np.einsum("nmd,nm->nd", data.features, data.targets) / num_samples
    sensitivity = p_admm_sensitivity(params, problem, network, num_samples)

    ledger = PrivacyLedger()
    variances = np.zeros((horizon + 1, network.num_agents))
    record = IterateRecorder(keep_iterates, horizon, shape, observer)
    primal, broadcast, dual = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    record(0, primal, broadcast, dual)
    label = f"p-admm ({IMPLEMENTATION})"
    weights = params.rho * network.adjacency   # rho A, once per run
    pull = neighbour_pull(network, params.rho, broadcast, weights)
    for n in range(1, horizon + 1):
        rhs = data_term - dual + (params.rho * network.degrees[:, None] * broadcast + pull)
        primal = np.einsum("nde,rne->rnd", system_inverse, rhs)
        broadcast, variances[n] = noisy_broadcast(primal, sensitivity, n, params.noise, rng, ledger, label)
        pull = neighbour_pull(network, params.rho, broadcast, weights)   # used by (9) now and by the argmin at n + 1
        dual = dual_update(dual, broadcast, network, params.rho, pull)
        record(n, primal, broadcast, dual)

    return Trajectory(
        algorithm=label, network=network, ledger=ledger, variances=variances,
        final_primal=primal, final_broadcast=broadcast, final_dual=dual,
        primal=record.primal, broadcast=record.broadcast,
    )
