"""What an implementation of Wang & Basar's algorithms (seeds/003 Algorithms 1-2) exposes, ours and a user's.

Set up from the gradient oracle, the agents' initial states (replicas, agents, dim) and the parameters
(weights, stepsize and noise schedules); randomness arrives as one numpy Generator; it runs
`iterations` iterations and returns a Trajectory (network average, consensus error, final states).
`dpverify verify` (issue 13) builds on this door; the reference implementation is `run`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dpverify.algorithms.wang_basar.algorithm import Gradient, Trajectory, WangBasarParams, run


class WangBasarImplementation(Protocol):
    def __call__(self, gradient: Gradient, initial: np.ndarray, params: WangBasarParams, iterations: int,
                 rng: np.random.Generator) -> Trajectory: ...


REFERENCE: WangBasarImplementation = run
