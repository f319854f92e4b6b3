"""DP-RWADMM [30] (Shah & Avrachenkov, "Linearly convergent asynchronous distributed ADMM via Markov
sampling", arXiv:1810.05067), the compared algorithm of seeds/001 Sec. VII, reconstructed WITHOUT the
paper's update equations (only its abstract: "only one node/processor is updated at each iteration
... The selection of the node to be updated is decided by simulating a Markov chain"): the
decentralized ADMM of [12]/[43] in which only the agent i_k visited by a random walk (P = I - D^{-1} L,
the walk of Assumption 2) updates, with edge duals kept antisymmetric so that sum_i alpha_i = 0:

    x_i = argmin_x f_i(x) + r(x) + <alpha_i, x> + c sum_{j in N_i} ||x - (x~_i + x~_j)/2||^2   (i = i_k)
    x~_i = x_i + N(0, sigma_t^2 I),  t = agent i's activation count                   (adopted)
    alpha_i += c sum_{j in N_i} (x~_i - x~_j);   alpha_j -= c (x~_i - x~_j) for j in N_i
    i_{k+1} ~ P[i_k, :]

Messages per iteration: i_k pulls x~_j from its d_i neighbours and pushes its new x~_i to them (their
duals need it): 2 d_{i_k}. The pulled values were released before (no new privacy loss).
PLF = max_i activations; the run stops at the first k where it reaches `plf` (as `run_recal`).
Sensitivity as [12]: Delta = g / (2 c d_min + 2 ridge_r), g = 2c_clip (Assumption 3) or 2c_clip/m.
`stepsize` = 1/c. First active agent uniform over V; x_history[k] = mean over agents after k iterations
(replicas that reached the PLF keep their state, so all histories have the longest run's length).
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.algorithm import uniform_transition_matrix
from dpverify.algorithms.dp_recal.baselines import dp_common as common
from dpverify.algorithms.dp_recal.baselines.dp_admm_zhang import argmin_sensitivity
from dpverify.algorithms.dp_recal.composite import CompositeProblem

NAME = "DP-RWADMM [30]"
# L = dp_common.smoothness = max_i L_i + 2 ridge. Tuned on the non-private problem (reproductions/dp_recal/tune_baselines.py): penalty c = factor * L.
PENALTY_FACTOR = {"linear": 0.2, "logistic": 0.3}


def default_stepsize(problem: CompositeProblem, data: LocalData) -> float:
    """1/c with c = PENALTY_FACTOR * L."""
    return common.penalty_stepsize(PENALTY_FACTOR, problem, data)


def run(problem: CompositeProblem, data: LocalData, network: Network, *, epsilon, delta=common.DEFAULT_DELTA, plf: int,
        decay: float, clip, replicas: int, rng: np.random.Generator, x1=None, stepsize=None, keep_history=True,
        sensitivity_reading: str = "assumption3"):
    step, X = common.start(problem, data, default_stepsize,
                           epsilon=epsilon, delta=delta, plf=plf, decay=decay, clip=clip, replicas=replicas,
                           stepsize=stepsize, x1=x1)
    c = 1.0 / step
    sensitivity = argmin_sensitivity(problem, data, network, c, clip, sensitivity_reading)
    sigma1 = common.calibrated_sigma1(epsilon, delta, decay, np.full(plf, sensitivity))
    n = data.num_agents
    adjacency, degrees = network.adjacency, network.degrees
    cumulative = np.cumsum(uniform_transition_matrix(network), axis=1)
    cumulative[:, -1] = np.inf  # guards the last bin against rounding in the row sums

    engine = common.subproblem_engine(problem, data, clip)
    alpha = np.zeros_like(X)
    counts = np.zeros((replicas, n), dtype=np.int64)
    messages = np.zeros(replicas, dtype=np.int64)
    iterations = np.zeros(replicas, dtype=np.int64)
    rows = np.arange(replicas)
    holder = rng.integers(0, n, replicas)
    running = np.ones(replicas, dtype=bool)
    history = [X.mean(axis=1)]
    while np.any(running):
        neighbours = adjacency[holder]                                               # (R, n) 0/1
        x_i, d_i = X[rows, holder], degrees[holder]
        linear = alpha[rows, holder] - c * (d_i[:, None] * x_i + (neighbours[:, None, :] @ X)[:, 0])
        counts[rows, holder] += running
        std = common.noise_std(sigma1, decay, counts[rows, holder])
        x_new = common.solve_admm_subproblem(problem, data, linear, c * d_i, x_i, clip, agents=holder,
                                      noise_std=float(np.min(std[running])), engine=engine)
        if sigma1 > 0:
            x_new = x_new + rng.standard_normal(x_new.shape) * std[:, None]
        x_new = np.where(running[:, None], x_new, x_i)
        gaps = x_new[:, None, :] - X                                                 # x~_i - x~_j for every j
        alpha = alpha - c * (neighbours * running[:, None])[..., None] * gaps
        alpha[rows, holder] += running[:, None] * c * (neighbours[:, None, :] @ gaps)[:, 0]
        X[rows, holder] = x_new
        messages += running * 2 * d_i.astype(np.int64)
        iterations += running
        history.append(X.mean(axis=1))
        receiver = (rng.random(replicas)[:, None] < cumulative[holder]).argmax(axis=1)
        holder = np.where(running, receiver, holder)
        running = running & (counts.max(axis=1) < plf)
    settings = {"stepsize": step, "penalty": c,
                "stepsize_rule": f"1/c, c = {PENALTY_FACTOR[problem.loss]} L" if stepsize is None else "given (= 1/penalty)",
                "walk": "P = I - D^-1 L (uniform over neighbours), first agent uniform",
                "subproblem": common.subproblem_description(problem, data, clip), "reconstructed_without_source": True,
                "messages_per_iteration": "2 d_{i_k} (pull d_i + push d_i)",
                "message_count": "one vector over one edge = 1", "plf": "max_i activation count",
                **common.privacy_settings(epsilon, delta, decay, clip, sensitivity_reading, sensitivity, sigma1)}
    return common.summary(NAME, history, messages, counts.max(axis=1), iterations, sigma1, settings, keep_history)
