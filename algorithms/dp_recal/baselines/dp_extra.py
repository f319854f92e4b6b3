"""DP-EXTRA [27]: PG-EXTRA (Shi, Ling, Wu, Yin, IEEE TSP 2015) with Gaussian message noise, the
compared algorithm of seeds/001 Sec. VII (v1:L568). Update rule as spec §5.6 (stacked X (n, q)):

    X^{1/2}   = W X^0 - alpha grad F(X^0),                                  X^1     = prox_{alpha r}(X^{1/2})
    X^{k+3/2} = W X^{k+1} + X^{k+1/2} - W~ X^k - alpha [grad F(X^{k+1}) - grad F(X^k)],
                                                                             X^{k+2} = prox_{alpha r}(X^{k+3/2})

W Metropolis, W~ = (I + W)/2 (spec §6); r per agent (eq. (8)).
Messages: iteration k computes X^k and every agent sends x_i^k to each neighbour (W X^k is what the
next step needs; W~ X^k = (X^k + W X^k)/2 needs nothing more). X^0 is the common, data-free start, so
W X^0 = X^0 needs no message: 2|E| messages and one release per agent per iteration, PLF = K.
Noise: x~_i^k = x_i^k + N(0, sigma_k^2 I) is sent and adopted (primal variable perturbation).
Sensitivity: given the released X's, x_i^{k+1} = prox(public - alpha grad f_i(x~_i^k)) (the older
gradient in X^{k+1/2} is held fixed, Lemma 5's reading); prox is nonexpansive, so
Delta = alpha ||grad f_i(D) - grad f_i(D')|| = 2 alpha c ("assumption3") or 2 alpha c/m ("per_sample").
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.core.mixing import mix
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.baselines import dp_common as common
from dpverify.algorithms.dp_recal.composite import CompositeProblem

NAME = "DP-EXTRA [27]"
# L = dp_common.smoothness = max_i L_i + 2 ridge. Tuned on the non-private problem (reproductions/dp_recal/tune_baselines.py): alpha = fraction / L.
# PG-EXTRA converges for alpha < 2 lambda_min(W~)/L (Shi et al. 2015); on the Metropolis ring
# lambda_min(W~) = 1/3 for even n, so the bound is 0.67/max_i L_i (> 0.5/L).
STEPSIZE_FRACTION = {"linear": 0.5, "logistic": 0.3}


def default_stepsize(problem: CompositeProblem, data: LocalData) -> float:
    return common.fraction_stepsize(STEPSIZE_FRACTION, problem, data)


def run(problem: CompositeProblem, data: LocalData, network: Network, *, epsilon, delta=common.DEFAULT_DELTA, plf: int,
        decay: float, clip, replicas: int, rng: np.random.Generator, x1=None, stepsize=None, keep_history=True,
        sensitivity_reading: str = "assumption3"):
    alpha, X_old, sensitivity, sigma1 = common.start_gradient(
        problem, data, default_stepsize, epsilon=epsilon, delta=delta, plf=plf, decay=decay, clip=clip,
        replicas=replicas, stepsize=stepsize, x1=x1, sensitivity_reading=sensitivity_reading)
    W, W_tilde = common.mixing_matrices(network)

    def released(X, k):
        return X + rng.standard_normal(X.shape) * common.noise_std(sigma1, decay, k) if sigma1 > 0 else X

    grad_old = problem.local_gradients(X_old, data, clip)
    Z = mix(W, X_old) - alpha * grad_old                                        # X^{1/2}
    X = released(problem.prox_scaled_r(Z, alpha), 1)                            # X^1
    history = [X_old.mean(axis=1), X.mean(axis=1)]
    for k in range(2, plf + 1):
        grad = problem.local_gradients(X, data, clip)
        Z = mix(W, X) + Z - mix(W_tilde, X_old) - alpha * (grad - grad_old)     # X^{k+1/2}
        X_old, grad_old = X, grad
        X = released(problem.prox_scaled_r(Z, alpha), k)                        # X^{k}
        history.append(X.mean(axis=1))
    settings = {"stepsize": alpha, "stepsize_rule": f"{STEPSIZE_FRACTION[problem.loss]} / L" if stepsize is None else "given",
                "W": "Metropolis-Hastings", "W_tilde": "(I + W)/2", "x1": "common to all agents (W X^0 = X^0, no message)",
                **common.broadcast_settings(network, "x_i^k"),
                **common.privacy_settings(epsilon, delta, decay, clip, sensitivity_reading, sensitivity, sigma1)}
    return common.synchronous_summary(NAME, network, history, plf, replicas, sigma1, settings, keep_history)
