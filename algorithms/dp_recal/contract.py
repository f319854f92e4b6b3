"""What an implementation of DP-RECAL (seeds/001 Algorithm 1) exposes, ours and a user's.

Set up from the composite problem, the agents' data, the network and the parameters (stepsizes,
noise schedule, clipping); randomness (the random walk and the noise) arrives as one numpy Generator;
it runs `replicas` independent walks at once and returns a RelayRun: the holders and receivers of
every message, u~ and x as sent (the messages on the wire, what an eavesdropper reads), activation
counts and noise scales. `dpverify verify` (issue 13) builds on this door; the reference
implementation is `run_recal`. The compared algorithms share one signature of their own
(baselines/comparison.py).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.algorithm import RecalParams, RelayRun, run_recal
from dpverify.algorithms.dp_recal.composite import CompositeProblem


class DpRecalImplementation(Protocol):
    def __call__(self, problem: CompositeProblem, data: LocalData, network: Network, params: RecalParams, *,
                 replicas: int, rng: np.random.Generator) -> RelayRun: ...


REFERENCE: DpRecalImplementation = run_recal
