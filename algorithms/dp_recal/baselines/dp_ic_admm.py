"""DP-IC-ADMM: IC-ADMM (inexact consensus ADMM; Chang, Hong & Wang, "Multi-agent distributed optimization
via inexact consensus ADMM", IEEE TSP 63(2), 2015; ref. [20] of seeds/000, [25] of seeds/001) with
Gaussian message noise, a compared algorithm of the v0 experiments (v0:L520-L522, Fig. 4, Table V).

RECONSTRUCTED WITHOUT THE SOURCE (the paper is not in the harness's sources; `settings` says so): the
decentralized consensus ADMM of [12]/[43] (as `dp_admm_zhang`) whose local argmin is made inexact by
linearizing f_i at the agent's current (released) iterate and adding a proximal term (beta_i/2)||x - x_i||^2,
so that each update is one gradient and one prox. Per agent i, with x~ the released iterates:

    x_i^{k+1} = argmin_x <grad f_i(x~_i^k) + p_i^k, x> + beta_i/2 ||x - x~_i^k||^2
                         + c sum_{j in N_i} ||x - (x~_i^k + x~_j^k)/2||^2 + r(x)
              = prox_{r/mu_i}( [beta_i x~_i^k + c (d_i x~_i^k + sum_{j in N_i} x~_j^k) - grad f_i(x~_i^k) - p_i^k] / mu_i ),
                mu_i = beta_i + 2 c d_i
    x~_i^{k+1} = x_i^{k+1} + N(0, sigma_{k+1}^2 I)                (sent to the neighbours and adopted)
    p_i^{k+1}  = p_i^k + c sum_{j in N_i} (x~_i^{k+1} - x~_j^{k+1})   (p^0 = 0, so sum_i p_i = 0)

A fixed point has x_i = x* for all i and 0 in grad f_i(x*) + p_i + d r(x*) with sum_i p_i = 0, i.e. x*
minimizes sum_i f_i + n r (r per agent, eq. (8)).
Choices (defaults, recorded): beta_i = L_i (the proximal weight that makes the linearization a
majorization of f_i; keyword `proximal_weight` overrides it); penalty c = PENALTY_FACTOR * L
(L = `dp_common.smoothness`), tuned on the non-private problem like the other baselines; `stepsize` = 1/c.
Like every stepsize of the harness, beta and c are computed from the data once and then treated as public
constants (the sensitivity below holds them fixed).
Noise, sensitivity and accounting as the other baselines (`dp_common`): primal variable perturbation,
sigma_t^2 = sigma_1^2 R^{1-t}, zCDP over the PLF. Sensitivity (Lemma 5's one-step reading: the released
x~'s and p held fixed, only the fresh gradient depends on the record): the argmin's objective is
(mu_i + 2 ridge_r)-strongly convex and the data enter through the linear term, so
Delta = g / min_i (beta_i + 2 c d_i + 2 ridge_r), g = 2 c_clip (Assumption 3) or 2 c_clip/m (per sample).
Messages: every agent sends x~_i^{k+1} to each neighbour: 2|E| per iteration, one release per agent,
PLF = K (v0:L79: "for IC-ADMM ... LCI = the number of iterations"). x^0 is common and data-free (no message).
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.core.mixing import mix
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.baselines import dp_common as common
from dpverify.algorithms.dp_recal.composite import CompositeProblem

NAME = "DP-IC-ADMM [25]"
# L = dp_common.smoothness = max_i L_i + 2 ridge. Tuned on the non-private problem (reproductions/dp_recal/tune_baselines.py):
# penalty c = factor * L, beta_i = L_i.
PENALTY_FACTOR = {"linear": 0.3, "logistic": 0.5}


def default_stepsize(problem: CompositeProblem, data: LocalData) -> float:
    return common.penalty_stepsize(PENALTY_FACTOR, problem, data)


def linearized_sensitivity(problem: CompositeProblem, data: LocalData, network: Network, penalty: float, clip,
                           sensitivity_reading: str, proximal_weight=None) -> float:
    """g / min_i (beta_i + 2 c d_i + 2 ridge_r), beta_i = L_i by default (module docstring)."""
    beta = problem.lipschitz_constants(data) if proximal_weight is None else np.asarray(proximal_weight, dtype=float)
    modulus = beta + 2.0 * penalty * network.degrees + 2.0 * problem.prox_ridge
    return common.gradient_change(clip, data.num_samples, sensitivity_reading) / float(np.min(modulus))


def run(problem: CompositeProblem, data: LocalData, network: Network, *, epsilon, delta=common.DEFAULT_DELTA, plf: int,
        decay: float, clip, replicas: int, rng: np.random.Generator, x1=None, stepsize=None, keep_history=True,
        sensitivity_reading: str = "assumption3", proximal_weight=None):
    step, X = common.start(problem, data, default_stepsize,
                           epsilon=epsilon, delta=delta, plf=plf, decay=decay, clip=clip, replicas=replicas,
                           stepsize=stepsize, x1=x1)
    c = 1.0 / step
    beta = problem.lipschitz_constants(data) if proximal_weight is None else np.asarray(proximal_weight, dtype=float)
    sensitivity = linearized_sensitivity(problem, data, network, c, clip, sensitivity_reading, beta)
    sigma1 = common.calibrated_sigma1(epsilon, delta, decay, np.full(plf, sensitivity))
    degrees, adjacency, laplacian = network.degrees, network.adjacency, network.laplacian
    modulus = (beta + 2.0 * c * degrees)[:, None]                                   # mu_i

    dual = np.zeros_like(X)
    history = [X.mean(axis=1)]
    for k in range(1, plf + 1):
        gradient = problem.local_gradients(X, data, clip)
        pull = beta[:, None] * X + c * (degrees[:, None] * X + mix(adjacency, X))
        X = common.prox_per_row(problem, (pull - gradient - dual) / modulus, 1.0 / modulus)
        if sigma1 > 0:
            X = X + rng.standard_normal(X.shape) * common.noise_std(sigma1, decay, k)            # PVP
        dual = dual + c * mix(laplacian, X)
        history.append(X.mean(axis=1))
    settings = {"stepsize": step, "penalty": c, "proximal_weight": "beta_i = L_i" if proximal_weight is None else "given",
                "stepsize_rule": f"1/c, c = {PENALTY_FACTOR[problem.loss]} L" if stepsize is None else "given (= 1/penalty)",
                "dual_step": "c", "perturbation": "primal variable (PVP), Gaussian",
                "update": "linearized (one gradient + one prox per iteration), reconstructed",
                "reconstructed_without_source": True,
                **common.privacy_settings(epsilon, delta, decay, clip, sensitivity_reading, sensitivity, sigma1),
                **common.broadcast_settings(network, "x~_i")}
    return common.synchronous_summary(NAME, network, history, plf, replicas, sigma1, settings, keep_history)
