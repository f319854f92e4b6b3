"""DP-MRADMM [17] (Zhang, Khalili, Liu, "Recycled ADMM: improve privacy and accuracy with less computation
in distributed algorithms", Allerton 2018; modified variant in IEEE TIFS 2020), the compared algorithm of
seeds/001 Tables IV-V, run with r = 0 ("not applicable to ... non-smooth terms", v1:L568). Reconstructed
WITHOUT access to the paper, from its abstract: the decentralized ADMM of [12]/[43] whose odd iterations
are exact (and private) and whose even iterations replace f_i by its linear approximation at the odd
iterate, with the gradient recycled from the odd step's optimality condition, so they use no data.

    odd k:  x_i^k = argmin_x f_i(x) + r(x) + <alpha_i, x> + c_k sum_j ||x - (x~_i + x~_j)/2||^2  (as [12])
            x~_i^k = x_i^k + N(0, sigma_t^2 I), t = (k+1)/2                        (sent and adopted)
            g~_i = -alpha_i - 2 c_k d_i x~_i^k + c_k (d_i x~_i^{k-1} + sum_j x~_j^{k-1})
                   (= grad (f_i + r)(x_i^k) from the KKT condition when there is no noise)
    even k: x_i^k = [c_k (d_i x~_i^{k-1} + sum_j x~_j^{k-1}) - alpha_i - g~_i] / (2 c_k d_i)
            (the argmin with f_i + r replaced by <g~_i, x>; a function of released values only, so it
            is sent without noise: post-processing, [17]'s "half of the updates incur no privacy loss")
    both:   alpha_i += c_0 sum_j (x~_i^k - x~_j^k)

Penalty c_k = 1/alpha_k with the stepsize alpha_k = alpha_0 gamma^{k-1} (gamma = `stepsize_decay`;
1 = the fixed row of Tables IV-V, 0.999 = the decaying row): a decaying stepsize is MR-ADMM's increasing
penalty; the dual step stays c_0 ("decouples [the penalty] from the dual updating step size").
r must have no l1 part (lasso = 0); a ridge in r is smooth and enters the argmin and the recycled gradient.
Messages: 2|E| per iteration (odd and even). PLF = number of odd iterations = K/2 (K = 2 * plf).
Sensitivity (odd iterations, as [12]): Delta_t = g / (2 c_k d_min + 2 ridge_r), g = 2c (Assumption 3) or 2c/m.
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.mixing import mix
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.baselines import dp_common as common
from dpverify.algorithms.dp_recal.baselines.dp_admm_huang import check_decay
from dpverify.algorithms.dp_recal.composite import CompositeProblem

NAME = "DP-MRADMM [17]"
# L = dp_common.smoothness = max_i L_i + 2 ridge. Tuned on the non-private problem with r = 0 (reproductions/dp_recal/tune_baselines.py): c_0 = factor * L.
PENALTY_FACTOR = {"linear": 0.3, "logistic": 0.5}


def default_stepsize(problem: CompositeProblem, data: LocalData) -> float:
    """alpha_0 = 1/c_0, c_0 = PENALTY_FACTOR * L."""
    return common.penalty_stepsize(PENALTY_FACTOR, problem, data)


def run(problem: CompositeProblem, data: LocalData, network: Network, *, epsilon, delta=common.DEFAULT_DELTA, plf: int,
        decay: float, clip, replicas: int, rng: np.random.Generator, x1=None, stepsize=None, keep_history=True,
        sensitivity_reading: str = "assumption3", stepsize_decay: float = 1.0):
    alpha0, X = common.start(problem, data, default_stepsize,
                             epsilon=epsilon, delta=delta, plf=plf, decay=decay, clip=clip, replicas=replicas,
                             stepsize=stepsize, x1=x1)
    if problem.lasso != 0:
        raise InvalidParameterError(f"DP-MRADMM [17] needs a smooth r (v1:L568 runs it with r = 0); got lasso = {problem.lasso!r}")
    gamma = check_decay(stepsize_decay)
    iterations = 2 * plf
    penalties = 1.0 / (alpha0 * gamma ** np.arange(iterations))                  # c_k, k = 1..K
    g = common.gradient_change(clip, data.num_samples, sensitivity_reading)
    sensitivities = g / (2.0 * penalties[0::2] * np.min(network.degrees) + 2.0 * problem.prox_ridge)
    sigma1 = common.calibrated_sigma1(epsilon, delta, decay, sensitivities)
    degrees, adjacency, laplacian = network.degrees[:, None], network.adjacency, network.laplacian
    dual_step = penalties[0]

    engine = common.subproblem_engine(problem, data, clip)
    alpha = np.zeros_like(X)
    history = [X.mean(axis=1)]
    for k in range(1, iterations + 1):
        c = penalties[k - 1]
        pull = c * (degrees * X + mix(adjacency, X))
        if k % 2 == 1:
            std = common.noise_std(sigma1, decay, (k + 1) // 2)
            X = common.solve_admm_subproblem(problem, data, alpha - pull, c * network.degrees, X, clip, noise_std=std,
                                             engine=engine)
            if sigma1 > 0:
                X = X + rng.standard_normal(X.shape) * std
            recycled = -alpha - 2.0 * c * degrees * X + pull                      # KKT of the odd step
        else:
            X = (pull - alpha - recycled) / (2.0 * c * degrees)
        alpha = alpha + dual_step * mix(laplacian, X)
        history.append(X.mean(axis=1))
    settings = {"stepsize": alpha0, "stepsize_decay": gamma, "penalty_schedule": "c_k = 1/(alpha_0 gamma^(k-1))",
                "stepsize_rule": f"alpha_0 = 1/c_0, c_0 = {PENALTY_FACTOR[problem.loss]} L" if stepsize is None else "given",
                "dual_step": dual_step, "even_iterations": "linearized with the recycled gradient, sent without noise",
                "subproblem": common.subproblem_description(problem, data, clip), "reconstructed_without_source": True,
                "messages_per_iteration": common.broadcast_messages(network),
                "message_count": "one vector over one edge = 1; every agent sends x_i to each neighbour every iteration",
                "plf_per_iteration": 0.5, "sensitivity_first_last": (sensitivities[0], sensitivities[-1]),
                **common.privacy_settings(epsilon, delta, decay, clip, sensitivity_reading,
                                          "see sensitivity_first_last", sigma1)}
    messages = np.full(replicas, iterations * common.broadcast_messages(network))
    return common.summary(NAME, history, messages, np.full(replicas, plf),
                          np.full(replicas, iterations), sigma1, settings, keep_history)
