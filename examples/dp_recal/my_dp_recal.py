"""DP-RECAL (Wang, Guo, Yang & Shi, seeds/001 Algorithm 1) written the way a researcher would: one run, the
baton passed from agent to agent along the walk, plain numpy. It imports nothing from dpverify; dpverify
checks it with

    dpverify verify dp-recal --impl examples/dp_recal/my_dp_recal.py:run

`setting` carries the instance and the walk (docs/verify.md lists its fields); `rng` is where the noise
comes from: a numpy Generator, or dpverify's noise tape, which hands out the same draws to every
implementation that asks for them in the same order (q Gaussian variates per iteration).
"""

import numpy as np


def prox_nr(v, n, lasso, ridge):
    """prox of n r, r(x) = ridge ||x||^2 + lasso ||x||_1: soft thresholding at n lasso, then shrinking."""
    return np.sign(v) * np.maximum(np.abs(v) - n * lasso, 0.0) / (1.0 + 2.0 * n * ridge)


def clipped_gradient(per_sample, c):
    """Mean of the per-sample gradients, each clipped to norm <= c (Assumption 3 with c)."""
    norms = np.linalg.norm(per_sample, axis=1)
    factors = np.minimum(1.0, c / np.where(norms > 0, norms, 1.0))
    return (per_sample * factors[:, None]).mean(axis=0)


def run(setting, rng):
    n, q = setting.num_agents, setting.dim
    alpha = np.asarray(setting.alpha, dtype=float)
    beta = 1.0 / (2.0 * (n + 1))                                              # input: beta = 1/2(n+1)
    c, decay = setting.clip, setting.decay
    if setting.epsilon is not None:                                           # Theorem 4 solved for rho_1
        log_inv_delta = np.log(1.0 / setting.delta)
        total = (np.sqrt(log_inv_delta + setting.epsilon) - np.sqrt(log_inv_delta)) ** 2   # Prop. 3 solved for rho
        rho1 = total * (decay - 1.0) / (decay ** setting.plf - 1.0)           # sum_{t<=xi} rho_1 R^(t-1) = total
    x = np.array(setting.x1, dtype=float)                                     # line 1
    y = np.array(setting.y1, dtype=float)
    lam = np.zeros((n, q))
    u = np.zeros(q)                                                           # u^1 = sum_i lam_i^1 = 0
    u_tilde = np.zeros(q)
    tau = np.zeros(n, dtype=int)                                              # activation counters
    messages, iterates, scales = [], [np.array([u, x])], []
    for k in range(setting.horizon):
        i = setting.walk[k]                                                   # i_k holds the baton
        lam_half = lam[i] + beta * (x - y[i])                                 # line 3
        x_new = prox_nr(x - (u_tilde + lam_half - lam[i]), n, setting.lasso, setting.ridge)
        g = clipped_gradient(setting.sample_gradients(i, y[i]), c)
        y_new = y[i] - alpha[i] * (g - lam_half)
        lam_new = lam_half + beta * ((x_new - x) - (y_new - y[i]))
        u_new = u + lam_new - lam[i]
        tau[i] += 1
        if setting.epsilon is None:
            sigma = 0.0
        else:
            sensitivity = 4.0 * alpha.max() * beta * c                        # Lemma 5: alpha = max_j alpha_j
            sigma = np.sqrt(sensitivity ** 2 / (2.0 * rho1)) * decay ** (-(tau[i] - 1) / 2.0)   # sigma_tau (L264)
        noise = rng.normal(0.0, sigma, size=q)                                # drawn also when sigma = 0
        u_tilde = u_new - noise                                               # u~^{k+1} = u^{k+1} - eps^k
        lam[i], y[i] = lam_new, y_new                                         # line 4: the others keep theirs
        x, u = x_new, u_new
        messages.append(np.array([u_tilde, x]))                               # line 5: the baton passed
        iterates.append(np.array([u, x]))
        scales.append(sigma)
    return {"messages": np.array(messages), "iterates": np.array(iterates), "noise_scales": np.array(scales)}
