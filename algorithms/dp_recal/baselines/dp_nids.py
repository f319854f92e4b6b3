"""DP-NIDS [28]: NIDS (Li, Shi, Yan, IEEE TSP 2019) with Gaussian message noise, the compared
algorithm of seeds/001 Sec. VII (v1:L568). Update rule as spec §5.6 (stacked X (n, q)):

    Z^1 = X^0 - alpha grad F(X^0),  X^1 = prox_{alpha r}(Z^1)                     (local, no message)
    Z^{k+1} = Z^k - X^k + W~ [2 X^k - X^{k-1} - alpha grad F(X^k) + alpha grad F(X^{k-1})],
    X^{k+1} = prox_{alpha r}(Z^{k+1})

W~ = (I + W)/2, W Metropolis (spec §6); r per agent (eq. (8)).
Messages: in iteration k every agent sends v_i^k = 2 x_i^k - x_i^{k-1} - alpha (grad f_i(x_i^k) -
grad f_i(x_i^{k-1})) to each neighbour (all W~ needs): 2|E| messages, one release per agent, PLF = K.
x_history[k] = X^{k+1}, the iterate after k communication rounds (x_history[0] = X^0).
Noise: v~_i^k = v_i^k + N(0, sigma_k^2 I) is sent, and the agent uses its own v~_i^k in W~ V~ too.
Sensitivity: v_i^k depends on the data through the fresh gradient alpha grad f_i(x_i^k) (x_i^k, x_i^{k-1}
and the stored older gradient held fixed, Lemma 5's reading): Delta = 2 alpha c (or 2 alpha c/m).
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.core.mixing import mix
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.baselines import dp_common as common
from dpverify.algorithms.dp_recal.composite import CompositeProblem

NAME = "DP-NIDS [28]"
# L = dp_common.smoothness = max_i L_i + 2 ridge. Tuned on the non-private problem (reproductions/dp_recal/tune_baselines.py): alpha = fraction / L;
# NIDS converges for alpha < 2/L (Li et al. 2019, with W~ = (I + W)/2).
STEPSIZE_FRACTION = {"linear": 0.5, "logistic": 0.3}


def default_stepsize(problem: CompositeProblem, data: LocalData) -> float:
    return common.fraction_stepsize(STEPSIZE_FRACTION, problem, data)


def run(problem: CompositeProblem, data: LocalData, network: Network, *, epsilon, delta=common.DEFAULT_DELTA, plf: int,
        decay: float, clip, replicas: int, rng: np.random.Generator, x1=None, stepsize=None, keep_history=True,
        sensitivity_reading: str = "assumption3"):
    alpha, X_old, sensitivity, sigma1 = common.start_gradient(
        problem, data, default_stepsize, epsilon=epsilon, delta=delta, plf=plf, decay=decay, clip=clip,
        replicas=replicas, stepsize=stepsize, x1=x1, sensitivity_reading=sensitivity_reading)
    _, W_tilde = common.mixing_matrices(network)

    grad_old = problem.local_gradients(X_old, data, clip)
    Z = X_old - alpha * grad_old                                                # Z^1
    X = problem.prox_scaled_r(Z, alpha)                                         # X^1
    history = [X_old.mean(axis=1)]
    for k in range(1, plf + 1):
        grad = problem.local_gradients(X, data, clip)
        V = 2.0 * X - X_old - alpha * (grad - grad_old)                         # the message v^k
        if sigma1 > 0:
            V = V + rng.standard_normal(V.shape) * common.noise_std(sigma1, decay, k)
        Z = Z - X + mix(W_tilde, V)                        # Z^{k+1}
        X_old, grad_old = X, grad
        X = problem.prox_scaled_r(Z, alpha)                                     # X^{k+1}
        history.append(X.mean(axis=1))
    settings = {"stepsize": alpha, "stepsize_rule": f"{STEPSIZE_FRACTION[problem.loss]} / L" if stepsize is None else "given",
                "W_tilde": "(I + W)/2, W Metropolis-Hastings", "x_history": "X^{k+1} after k communication rounds",
                **common.broadcast_settings(network, "v_i^k"),
                **common.privacy_settings(epsilon, delta, decay, clip, sensitivity_reading, sensitivity, sigma1)}
    return common.synchronous_summary(NAME, network, history, plf, replicas, sigma1, settings, keep_history)
