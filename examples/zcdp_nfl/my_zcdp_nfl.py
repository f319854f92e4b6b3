"""zCDP-NFL (Gauthier, Gratton, Venkategowda & Werner, seeds/004 Algorithm 1) written the way a researcher
would: one run, a loop over the clients, plain numpy. It imports nothing from dpverify; dpverify checks it with

    dpverify verify zcdp-nfl --impl examples/zcdp_nfl/my_zcdp_nfl.py:run

`setting` carries the instance (docs/verify.md lists its fields); `rng` is where the noise comes from:
a numpy Generator, or dpverify's noise tape, which hands out the same draws to every implementation
that asks for them in the order (iteration, client, coordinate).
"""

import numpy as np


def clipped(gradients, bound):
    """Each row scaled to norm <= bound."""
    norms = np.linalg.norm(gradients, axis=1)
    return gradients * np.minimum(1.0, bound / np.maximum(norms, np.finfo(float).tiny))[:, None]


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
    degrees, samples = setting.degrees, setting.num_samples
    neighbors = [setting.neighbors(k) for k in range(K)]
    phi1 = first_budget(setting)
    w = [np.zeros(d) for _ in range(K)]              # w^(0) = 0
    sent = [np.zeros(d) for _ in range(K)]           # tilde w^(0) = w^(0): nothing private is sent at n = 0
    gamma = [np.zeros(d) for _ in range(K)]          # gamma^(0) = 0
    iterates, messages, scales = [np.array(w)], [], []
    for n in range(1, setting.horizon + 1):
        eta = setting.eta0 * n ** (-setting.eta_power)
        new_w = []
        for k in range(K):                                                     # eq. (7), closed form
            x = sent[k]                                                        # linearized at tilde w_k^(n-1)
            gradients = setting.sample_gradients(k, x)
            if setting.clip:
                gradients = clipped(gradients, setting.c1)
            g = gradients.sum(axis=0) / samples[k] + setting.lam / K * setting.regularizer_gradient(x)
            neighbour_sum = sum(sent[l] for l in neighbors[k])
            numerator = x / eta + rho * (degrees[k] * x + neighbour_sum) - gamma[k] - g
            new_w.append(numerator / (1.0 / eta + 2.0 * rho * degrees[k]))
        sigmas = np.zeros(K)
        for k in range(K):                                                     # eq. (8)
            sensitivity = 2.0 * setting.c1 / (samples[k] * (2.0 * rho * degrees[k] + 1.0 / eta))   # Lemma I (11)
            if phi1 is not None:
                phi = phi1 * setting.tau ** (-(n - 1))                         # varphi^(n) = varphi^(1) tau^-(n-1)
                sigmas[k] = sensitivity / np.sqrt(2.0 * phi)                   # Theorem I (12)
            noise = sigmas[k] * rng.standard_normal(d)                         # drawn even when sigma = 0
            sent[k] = new_w[k] + noise
        for k in range(K):                                                     # eq. (9), received messages only
            gamma[k] = gamma[k] + rho * sum(sent[k] - sent[l] for l in neighbors[k])
        w = new_w
        messages.append(np.array(sent))
        iterates.append(np.array(w))
        scales.append(sigmas)
    return {"messages": np.array(messages), "iterates": np.array(iterates), "noise_scales": np.array(scales)}
