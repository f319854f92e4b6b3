"""DP-ADMM [12] (Zhang & Zhu, "Dynamic differential privacy for ADMM-based distributed classification
learning", IEEE TIFS 2017), the compared algorithm of seeds/001 Sec. VII, reconstructed WITHOUT access
to the paper (not in the harness's sources): decentralized consensus ADMM (Forero et al. 2010; the
framework of [43], which v1:L500 says [12] is rooted in) with primal variable perturbation (PVP) and a
fixed penalty. With alpha_i = 2 lambda_i of [12]'s form (x - (x_i + x_j)/2 penalties), per agent i:

    x_i^{k+1} = argmin_x f_i(x) + r(x) + <alpha_i^k, x> + c sum_{j in N_i} ||x - (x~_i^k + x~_j^k)/2||^2
    x~_i^{k+1} = x_i^{k+1} + N(0, sigma_{k+1}^2 I)           (PVP; sent to the neighbours and adopted)
    alpha_i^{k+1} = alpha_i^k + c sum_{j in N_i} (x~_i^{k+1} - x~_j^{k+1})

Choices where [12] is not followed or not known: Gaussian instead of Laplace noise and the spec §6
schedule sigma_t^2 = sigma_1^2 R^{1-t} (instead of [12]'s own variance decay); r per agent (eq. (8));
the argmin is solved to SUBPROBLEM_TOLERANCE (`solve_admm_subproblem`: majorize-minimize with the Gram bound or proximal gradient).
`stepsize` = 1/c (the inverse penalty; the dual step equals c).
Messages: x~_i^{k+1} to each neighbour, 2|E| per iteration, one release per agent, PLF = K.
Sensitivity: the argmin's objective is mu_i = 2 c d_i + 2 ridge_r strongly convex (ridge_r = the ridge
coefficient inside r under mapping M1); replacing one record changes its gradient by at most
||grad f_i(D) - grad f_i(D')|| =: g, so ||x_D - x_D'|| <= g / mu_i (strong monotonicity);
Delta = g / min_i mu_i with g = 2c (Assumption 3) or 2c/m (per-sample clipping). Per-sample clipping
keeps f_i convex (the clipped GLM loss is a Huber-type loss), so the argument applies.
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.core.mixing import mix
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.baselines import dp_common as common
from dpverify.algorithms.dp_recal.composite import CompositeProblem

NAME = "DP-ADMM [12]"
# L = dp_common.smoothness = max_i L_i + 2 ridge. Tuned on the non-private problem (reproductions/dp_recal/tune_baselines.py): penalty c = factor * L.
PENALTY_FACTOR = {"linear": 0.3, "logistic": 0.5}


def default_stepsize(problem: CompositeProblem, data: LocalData) -> float:
    """1/c with c = PENALTY_FACTOR * L."""
    return common.penalty_stepsize(PENALTY_FACTOR, problem, data)


def argmin_sensitivity(problem: CompositeProblem, data: LocalData, network: Network, penalty: float, clip,
                       sensitivity_reading: str) -> float:
    """g / min_i (2 c d_i + 2 ridge_r) (module docstring)."""
    strong_convexity = 2.0 * penalty * network.degrees + 2.0 * problem.prox_ridge
    return common.gradient_change(clip, data.num_samples, sensitivity_reading) / float(np.min(strong_convexity))


def run(problem: CompositeProblem, data: LocalData, network: Network, *, epsilon, delta=common.DEFAULT_DELTA, plf: int,
        decay: float, clip, replicas: int, rng: np.random.Generator, x1=None, stepsize=None, keep_history=True,
        sensitivity_reading: str = "assumption3"):
    step, X = common.start(problem, data, default_stepsize,
                           epsilon=epsilon, delta=delta, plf=plf, decay=decay, clip=clip, replicas=replicas,
                           stepsize=stepsize, x1=x1)
    c = 1.0 / step
    sensitivity = argmin_sensitivity(problem, data, network, c, clip, sensitivity_reading)
    sigma1 = common.calibrated_sigma1(epsilon, delta, decay, np.full(plf, sensitivity))
    degrees, adjacency, laplacian = network.degrees, network.adjacency, network.laplacian

    engine = common.subproblem_engine(problem, data, clip)
    alpha = np.zeros_like(X)
    history = [X.mean(axis=1)]
    for k in range(1, plf + 1):
        linear = alpha - c * (degrees[:, None] * X + mix(adjacency, X))
        std = common.noise_std(sigma1, decay, k)
        X = common.solve_admm_subproblem(problem, data, linear, c * degrees, X, clip, noise_std=std, engine=engine)
        if sigma1 > 0:
            X = X + rng.standard_normal(X.shape) * std                                  # PVP
        alpha = alpha + c * mix(laplacian, X)
        history.append(X.mean(axis=1))
    settings = {"stepsize": step, "penalty": c,
                "stepsize_rule": f"1/(c), c = {PENALTY_FACTOR[problem.loss]} L" if stepsize is None else "given (= 1/penalty)",
                "dual_step": "c", "perturbation": "primal variable (PVP), Gaussian",
                "subproblem": common.subproblem_description(problem, data, clip),
                "reconstructed_without_source": True,
                **common.privacy_settings(epsilon, delta, decay, clip, sensitivity_reading, sensitivity, sigma1),
                **common.broadcast_settings(network, "x~_i")}
    return common.synchronous_summary(NAME, network, history, plf, replicas, sigma1, settings, keep_history)
