"""What an implementation of My Paper's algorithm exposes (DESIGN.md: one door for ours and the user's)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dpverify.algorithms.my_paper.algorithm import noisy_averaging


class NoisyAveraging(Protocol):
    def __call__(self, values: np.ndarray, weights: np.ndarray, *, sigma: float, iterations: int,
                 noise: np.ndarray) -> np.ndarray:
        """values (replicas, agents, dim); weights (agents, agents); noise (iterations, replicas, agents,
        dim) of standard normal draws supplied by the harness. Returns the released messages,
        (iterations, replicas, agents, dim)."""


REFERENCE: NoisyAveraging = noisy_averaging   # the reference implementation goes through the same door
