"""Checks of My Paper's claims: each measures and returns a Measurement; the claim's rule decides."""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.my_paper.algorithm import noisy_averaging
from dpverify.theory.claims import Measurement
from dpverify.theory.execution import CheckContext
from dpverify.theory.instruments.stats import SIGNIFICANCE, mean_interval

RING_WEIGHTS = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])  # default: any doubly stochastic W


def average_is_preserved(context: CheckContext) -> Measurement:
    """Lemma 1: with noise off, W doubly stochastic keeps the network average."""
    values = np.random.default_rng(context.root_seed).normal(size=(4, 3, 2))
    released = noisy_averaging(values, RING_WEIGHTS, sigma=0.0, iterations=20, noise=np.zeros((20, 4, 3, 2)))
    drift = float(np.abs(released.mean(axis=2) - values.mean(axis=1)).max())
    return Measurement(f"largest drift of the network average over 20 iterations: {drift:.3g}",
                       {"excess": drift, "scale": 1.0}, paper="the average is invariant (Lemma 1)")


def released_noise_is_unbiased(context: CheckContext) -> Measurement:
    """Theorem 1: the released message is the state plus zero-mean noise (equivalence within 0.05)."""
    rng = np.random.default_rng(context.root_seed)
    noise = rng.standard_normal((1, 2000, 3, 1))
    released = noisy_averaging(np.zeros((2000, 3, 1)), RING_WEIGHTS, sigma=1.0, iterations=1, noise=noise)
    low, high = mean_interval(released.ravel(), 2 * SIGNIFICANCE)
    return Measurement(f"mean of the released noise: [{low:.3g}, {high:.3g}] (90% interval, 6000 draws)",
                       {"intervals": {"mean": (low, high)}}, paper="zero-mean noise")


def figure_1_error_decays(context: CheckContext) -> Measurement:
    """Figure 1: the consensus error at the last iteration is below the first (every replica)."""
    results = context.experiments["figure-1"]
    first, last = results.error[results.iteration == 0], results.error[results.iteration == results.iteration.max()]
    ratio = float(np.median(last.to_numpy() / first.to_numpy()))
    return Measurement(f"median ratio of the last to the first consensus error: {ratio:.3g}",
                       {"holds": ratio < 1.0, "ratio": ratio}, paper="the error decays (Fig. 1)")
