"""DPDO-NC (Zhou & Li, seeds/002 Algorithm 1) written the way a researcher would: one run, a loop over
the agents, plain numpy. It imports nothing from dpverify; dpverify checks it with

    dpverify verify dpdo-nc --impl examples/dpdo_nc/my_dpdo_nc.py:run

`setting` carries the instance (docs/verify.md lists its fields); `rng` is where the noise comes from:
a numpy Generator, or dpverify's noise tape, which hands out the same draws to every implementation
that asks for them in the order (round, agent, coordinate).
"""

import numpy as np


def project_l1_ball(v, radius):
    """Euclidean projection onto {||x||_1 <= radius} (Duchi et al. 2008)."""
    if np.abs(v).sum() <= radius:
        return v.copy()
    u = np.sort(np.abs(v))[::-1]
    cumulative = np.cumsum(u)
    k = np.arange(1, v.size + 1)
    rho = np.nonzero(u - (cumulative - radius) / k > 0)[0][-1]
    tau = (cumulative[rho] - radius) / (rho + 1)
    return np.sign(v) * np.maximum(np.abs(v) - tau, 0.0)


def run(setting, rng):
    n, d = setting.num_agents, setting.dim
    x = [setting.x1[i].copy() for i in range(n)]
    iterates, messages, scales = [np.array(x)], [], []
    for t in range(1, setting.horizon + 1):
        alpha = 1.0 / (n * np.sqrt(t))                                          # line 1
        if setting.epsilon is None:
            sigma = 0.0
        else:                                                                   # line 1: Lemma 1's bound / eps
            sigma = 2.0 * np.sqrt(d) * alpha * setting.theta / (setting.omega * setting.epsilon)
        q = [x[i] + rng.laplace(0.0, sigma, size=d) if sigma > 0 else x[i].copy() for i in range(n)]   # line 4
        weights = setting.weights(t)
        new_x = []
        for i in range(n):
            z = sum(weights[i, j] * q[j] for j in range(n))                      # line 5
            g = setting.gradient(t, i, x[i])
            new_x.append(project_l1_ball(z - alpha * g / (2.0 * setting.mirror_scale), setting.radius))  # line 6
        x = new_x
        messages.append(np.array(q))
        iterates.append(np.array(x))
        scales.append(sigma)
    return {"messages": np.array(messages), "iterates": np.array(iterates), "noise_scales": np.array(scales)}
