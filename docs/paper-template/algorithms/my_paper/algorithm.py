"""The template's toy algorithm: noisy average consensus, x_{k+1} = W (x_k + sigma xi_k) (seeds/NNN eq. (1)).
Replace it with your paper's algorithm; keep the state batched as (replicas, agents, dim)."""

from __future__ import annotations

import numpy as np


def noisy_averaging(values: np.ndarray, weights: np.ndarray, *, sigma: float, iterations: int,
                    noise: np.ndarray) -> np.ndarray:
    """Released messages x_k + sigma xi_k of every iteration; `noise` is (iterations, replicas, agents, dim)."""
    state, released = values.copy(), np.empty_like(noise)
    for k in range(iterations):
        released[k] = state + sigma * noise[k]                  # seeds/NNN eq. (1): what the agents send
        state = np.matmul(weights, released[k])                 # mixing with the doubly stochastic W
    return released
