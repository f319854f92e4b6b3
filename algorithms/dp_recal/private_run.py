"""The record every private decentralized algorithm of the DP-RECAL comparison returns (seeds/001
Sec. VII): what the figures and tables need, in one shape, whatever the algorithm."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class PrivateRunSummary:
    """algorithm: display name (e.g. "DP-EXTRA [27]").
    x_history: (K+1, R, q) the iterate the algorithm reports at each iteration (for RE and accuracy;
        synchronous algorithms: the choice of iterate is recorded in `settings["reported_iterate"]`).
    messages: (R,) messages sent in the whole run (one vector over one edge = 1; spec §5.4).
    plf: (R,) privacy leakage frequency max_i tau_i(K) (v1:L107-L113).
    iterations: (R,) iterations K run.
    sigma1: the first-activation noise standard deviation used.
    settings: every value the run used that the paper does not give, with its source (for the report).
    """

    algorithm: str
    x_history: np.ndarray
    messages: np.ndarray
    plf: np.ndarray
    iterations: np.ndarray
    sigma1: float
    settings: dict[str, Any] = field(default_factory=dict)
