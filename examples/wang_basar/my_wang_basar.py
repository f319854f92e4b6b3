"""Wang & Basar's Algorithm 2 (seeds/003, eqs. (8)-(9)) written the way a researcher would: one run, a loop
over the agents, plain numpy. It imports nothing from dpverify; dpverify checks it with

    dpverify verify wang-basar --impl examples/wang_basar/my_wang_basar.py:run

`setting` carries the instance (docs/verify.md lists its fields); `rng` is where the noise comes from:
a numpy Generator, or dpverify's noise tape, which hands out the same draws to every implementation
that asks for them in the order (round, agent, coordinate).
"""

import numpy as np


def stepsize(setting, k):
    """lambda^k: constant lam0 for k <= switch, then lam_scale / k (Sec. 6.1, L579)."""
    return setting.lam0 if k <= setting.switch else setting.lam_scale / k


def run(setting, rng):
    n, d = setting.num_agents, setting.dim
    weights = np.asarray(setting.weights)
    std = np.sqrt(setting.sigma_var)                   # n_j^k ~ N(0, sigma I_d): sigma is a variance (L174)
    x = np.array(setting.x1, dtype=float)              # x[j] = x_j^k
    iterates, messages, mechanism, scales = [x.copy()], [], [], []
    for k in range(1, setting.horizon + 1):
        lam = stepsize(setting, k)
        sent, unnoised = np.empty((n, d)), np.empty((n, d))
        for j in range(n):                                                      # step (a): agent j sends
            g = setting.gradient(j, x[j])                                       # g_j^k = grad f_j(x_j^k)
            noise = rng.normal(0.0, std, size=d)                                # n_j^k
            unnoised[j] = x[j] - lam * g                                        # M_j^k (L496)
            sent[j] = x[j] - lam * (g + noise)                                  # eq. (8), before the factor w_ij
        x = weights @ sent                                                      # step (b), eq. (9): x_i = sum_j w_ij M_j
        messages.append(sent)
        mechanism.append(unnoised)
        iterates.append(x)
        scales.append(lam * std)                                     # std of the released noise lambda^k n_j^k (L528)
    return {"messages": np.array(messages), "iterates": np.array(iterates), "mechanism": np.array(mechanism),
            "noise_scales": np.array(scales)}
