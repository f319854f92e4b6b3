"""What an implementation of zCDP-NFL (seeds/004 Algorithm 1, eqs. (7)-(9)) exposes, ours and a user's.

Set up from the problem (loss and regularizer), the clients' data, the network and the parameters
(rho, step schedule, c1, noise calibration); randomness arrives as one numpy Generator; it runs
`horizon` iterations on `replicas` independent noise draws at once and returns a Trajectory: the
noisy broadcasts (the messages on the wire), the primal and dual states, and the privacy ledger.
`dpverify verify` (issue 13) builds on this door; the reference implementation is `run_zcdp_nfl`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.algorithms.zcdp_nfl.algorithm import Trajectory, ZcdpNflParams, run_zcdp_nfl


class ZcdpNflImplementation(Protocol):
    def __call__(self, problem: Problem, data: LocalData, network: Network, params: ZcdpNflParams, *,
                 horizon: int, replicas: int, rng: np.random.Generator) -> Trajectory: ...


REFERENCE: ZcdpNflImplementation = run_zcdp_nfl
