"""zCDP-grad-NFL: private decentralized subgradient method (Nedic & Ozdaglar 2009) with zCDP message
perturbation, the comparison baseline of seeds/004 Sec. 5 (L300). The paper gives no formula; this is
the harness default of spec §2.10 A4:

  w_k^(n)       = sum_{l in N_k u {k}} a_kl tilde w_l^(n-1) - alpha_n g_k(tilde w_k^(n-1))   (Metropolis a_kl)
  tilde w_k^(n) = w_k^(n) + xi_k^(n),  Delta_k = 2 alpha_n c1 / M_k

Delta: replacing one sample changes g_k by at most 2 c1/M_k (Assumption 1 per sample, as in Lemma I),
and the mixing term depends only on received messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.network import Network, metropolis_weights
from dpverify.algorithms.core.noise import PrivacyLedger
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.algorithms.core.validation import require_positive
from dpverify.algorithms.zcdp_nfl.algorithm import (
    IterateRecorder,
    NoiseCalibration,
    Observer,
    Trajectory,
    check_run_inputs,
    noisy_broadcast,
)


@dataclass(frozen=True)
class SubgradientNflParams:
    """learning_rate alpha_n = learning_rate * n^(-power) (spec §2.10 A4: constant by default, power 0;
    alternative alpha0/sqrt(n), power 0.5)."""

    learning_rate: float
    c1: float
    noise: NoiseCalibration
    clip: bool = False
    power: float = 0.0

    def __post_init__(self) -> None:
        require_positive("learning_rate", self.learning_rate, "spec §2.10 A4")
        require_positive("c1", self.c1, "seeds/004 Assumption 1 (L114)")
        if not isinstance(self.noise, NoiseCalibration):
            raise InvalidParameterError(f"noise must be a NoiseCalibration; got {type(self.noise).__name__}")
        if not isinstance(self.clip, bool):
            raise InvalidParameterError(f"clip must be a bool; got {self.clip!r}")
        if not math.isfinite(self.power):
            raise InvalidParameterError(f"power must be finite; got {self.power!r}")

    def alpha(self, n: int) -> float:
        return self.learning_rate * float(n) ** (-self.power)


def subgradient_sensitivity(params: SubgradientNflParams, num_samples, n: int) -> float:
    """Delta_k(n) = 2 alpha_n c1 / M_k (spec §2.10 A4)."""
    return 2.0 * params.alpha(n) * params.c1 / float(num_samples)


def run_subgradient_nfl(
    problem: Problem,
    data: LocalData,
    network: Network,
    params: SubgradientNflParams,
    *,
    horizon: int,
    replicas: int,
    rng: np.random.Generator,
    keep_iterates: bool = True,
    observer: Observer | None = None,
) -> Trajectory:
    horizon, replicas = check_run_inputs(data, network, horizon, replicas, rng)
    shape = (replicas, network.num_agents, data.dim)
    weights = metropolis_weights(network)
    ledger = PrivacyLedger()
    variances = np.zeros((horizon + 1, network.num_agents))
    clip = params.c1 if params.clip else None
    record = IterateRecorder(keep_iterates, horizon, shape, observer)

    primal = np.zeros(shape)  # w^(0) = tilde w^(0) = 0, as in Algorithm 1
    broadcast = np.zeros(shape)
    record(0, primal, broadcast, None)
    for n in range(1, horizon + 1):
        subgradient = problem.local_subgradient(broadcast, data, clip)
        primal = weights @ broadcast - params.alpha(n) * subgradient  # one matmul over all replicas
        sensitivity = np.full(network.num_agents, subgradient_sensitivity(params, data.num_samples, n))
        broadcast, variances[n] = noisy_broadcast(primal, sensitivity, n, params.noise, rng, ledger, "zcdp-grad-nfl")
        record(n, primal, broadcast, None)

    return Trajectory(
        algorithm="zcdp-grad-nfl", network=network, ledger=ledger, variances=variances,
        final_primal=primal, final_broadcast=broadcast, final_dual=None,
        primal=record.primal, broadcast=record.broadcast,
    )
