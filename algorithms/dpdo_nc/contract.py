"""What an implementation of DPDO-NC (seeds/002 Algorithm 1) exposes, ours and a user's.

Set up from the time-varying costs, the graph schedule and the parameters (eps, theta, mirror map,
radius); randomness arrives as one numpy Generator; it runs `horizon` rounds on `replicas`
independent Laplace draws at once and returns a DpdoNcRun: the regret accumulators, the noise scales,
the ledger and, when kept, the broadcasts q_t (the messages on the wire) and the iterates.
`dpverify verify` (issue 13) builds on this door; the reference implementation is `run_dpdo_nc`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dpverify.algorithms.dpdo_nc.algorithm import Costs, DpdoNcParams, DpdoNcRun, Schedule, run_dpdo_nc


class DpdoNcImplementation(Protocol):
    def __call__(self, costs: Costs, schedule: Schedule, params: DpdoNcParams, *, horizon: int, replicas: int,
                 rng: np.random.Generator) -> DpdoNcRun: ...


REFERENCE: DpdoNcImplementation = run_dpdo_nc
