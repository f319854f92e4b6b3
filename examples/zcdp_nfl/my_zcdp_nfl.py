"""zCDP-NFL (Gauthier, Gratton, Venkategowda & Werner, seeds/004 Algorithm 1) written the way a researcher
would: one run, plain numpy, the clients as the rows of one (K, d) array (the setting's oracles answer one client
at a time). It imports nothing from dpverify; dpverify checks it with

    dpverify verify zcdp-nfl --impl examples/zcdp_nfl/my_zcdp_nfl.py:run

`setting` carries the instance (docs/verify.md lists its fields); `rng` is where the noise comes from:
a numpy Generator, or dpverify's noise tape, which hands out the same draws to every implementation
that asks for them in the order (iteration, client, coordinate).
"""

import numpy as np


def clipped(gradients, bound):
    """Each per-sample subgradient (the last axis) scaled to norm <= bound."""
    norms = np.linalg.norm(gradients, axis=-1, keepdims=True)
    return gradients * np.minimum(1.0, bound / np.maximum(norms, np.finfo(float).tiny))


def first_budget(setting):
    """varphi^(1) from the total (eps, delta) over T iterations: rho from eps = rho + 2 sqrt(rho ln(1/delta)) (Bun &
    Steinke Prop. 1.3, the Corollary's conversion), split as varphi^(n) = varphi^(1) tau^-(n-1) summing to rho (L136)."""
    if setting.epsilon is None:                      # no total budget stated: the setting's own schedule
        return setting.phi1
    log_term = np.log(1.0 / setting.delta)
    rho = (np.sqrt(log_term + setting.epsilon) - np.sqrt(log_term)) ** 2
    return rho / sum(setting.tau ** (-(n - 1)) for n in range(1, setting.horizon + 1))


def run(setting, rng):
    K, d, rho = setting.num_agents, setting.dim, setting.rho
    adjacency = setting.adjacency                    # (K, K), 0/1
    degrees = setting.degrees[:, None]               # |N_k|, a column: one row per client
    samples = setting.num_samples[:, None]           # M_k, a column
    phi1 = first_budget(setting)
    w = np.zeros((K, d))                             # w^(0) = 0
    sent = np.zeros((K, d))                          # tilde w^(0) = w^(0): nothing private is sent at n = 0
    gamma = np.zeros((K, d))                         # gamma^(0) = 0
    iterates, messages, scales = [w], [], []
    for n in range(1, setting.horizon + 1):
        eta = setting.eta0 * n ** (-setting.eta_power)
        x = sent                                                               # (7) linearized at tilde w^(n-1)
        gradients = np.stack([setting.sample_gradients(k, x[k]) for k in range(K)])   # (K, M, d)
        if setting.clip:
            gradients = clipped(gradients, setting.c1)
        g = gradients.sum(axis=1) / samples + setting.lam / K * setting.regularizer_gradient(x)
        neighbour_sum = adjacency @ sent
        numerator = x / eta + rho * (degrees * x + neighbour_sum) - gamma - g
        new_w = numerator / (1.0 / eta + 2.0 * rho * degrees)                  # eq. (7), closed form
        sensitivity = 2.0 * setting.c1 / (samples * (2.0 * rho * degrees + 1.0 / eta))   # Lemma I (11)
        sigmas = np.zeros((K, 1))
        if phi1 is not None:
            phi = phi1 * setting.tau ** (-(n - 1))                             # varphi^(n) = varphi^(1) tau^-(n-1)
            sigmas = sensitivity / np.sqrt(2.0 * phi)                          # Theorem I (12)
        noise = sigmas * rng.standard_normal((K, d))                           # drawn even when sigma = 0
        sent = new_w + noise                                                   # eq. (8)
        gamma = gamma + rho * (degrees * sent - adjacency @ sent)              # eq. (9), received messages only
        w = new_w
        messages.append(sent)
        iterates.append(w)
        scales.append(sigmas[:, 0])
    return {"messages": np.array(messages), "iterates": np.array(iterates), "noise_scales": np.array(scales)}
