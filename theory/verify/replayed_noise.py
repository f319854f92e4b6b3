"""The noise the messages imply, replayed under each neighbour: two scores of verify's privacy audit.

An adversary who knows the setting up to the one record or cost that differs (the neighbouring pair) replays each
agent's states from the messages alone (the paper's update; contract.implied_noise) and reads off the noise every
message carried, once per neighbour. Two scores of it:
- the repetition: under the neighbour the run was on, noise reused across rounds shows as the same vector in
  consecutive rounds (or the same standard draw, rescaled by the round's calibration); under the other neighbour the
  implied noise also carries the difference of the two neighbours' updates, which changes from round to round
  wherever the paper's update weighs it differently (zCDP-NFL: Lemma I's step 1/(2 rho |N_k| + 1/eta^(n)) and the
  schedule varphi^(n)). With fresh noise it is as noisy under both neighbours; with reused noise it separates them;
- the likelihood ratio of the whole run under the paper's mechanism, the exact one of the paper's own transcript.
Each is a fixed function of the messages (non-finite values mapped to finite ones), so the audit's bound stays
valid whatever it scores (theory/audit/scores.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def repetition(noise: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """How far each agent's noise is from being drawn once and reused, per run: noise (R, T, N, ...), its
    calibration scale (T,) or (T, N). Of the two ways to reuse a draw, the smaller of
    sum_n ||xi^(n) / s_n - xi^(n-1) / s_(n-1)||^2 (the standard draw kept, rescaled each round) and
    sum_n ||xi^(n) - xi^(n-1)||^2 / (s_n s_(n-1)) (the noise vector kept): (R, N). An agent with no noise scores 0."""
    scale = _per_entry(noise, scale)
    positive = scale > 0
    standard = _standard(noise, scale)
    products = scale[1:] * scale[:-1]
    steps = (noise.shape[0], noise.shape[1] - 1, noise.shape[2], -1)    # (R, T - 1, N, the rest)
    kept_standard = ((standard[:, 1:] - standard[:, :-1]) ** 2 * positive[1:]).reshape(steps)
    kept_vector = ((noise[:, 1:] - noise[:, :-1]) ** 2 / np.where(products > 0, products, 1.0) * (products > 0)
                   ).reshape(steps)
    return np.minimum(kept_standard.sum(axis=(1, 3)), kept_vector.sum(axis=(1, 3)))


def repetition_score(implied_noise: Callable[[Any, np.ndarray], np.ndarray], calibration: Callable[[Any], np.ndarray],
                     neighbours: tuple[Any, Any], message_shape: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """observations (n, k), each run's messages flattened (T, N, d) -> (n,): the repetition summed over the agents
    under the second neighbour minus under the first. Agents whose implied noise is the same under both cancel,
    so the score reads the audited agent's. Larger where the run was on the first neighbour and reused its noise."""
    scales = [np.asarray(calibration(setting), dtype=float) for setting in neighbours]

    def score(observations: np.ndarray) -> np.ndarray:
        messages = np.asarray(observations, dtype=float).reshape((-1,) + tuple(message_shape))
        first, second = (repetition(implied_noise(setting, messages), scale).sum(axis=1)
                         for setting, scale in zip(neighbours, scales))
        return _finite(second - first)
    score.__name__ = "implied-noise repetition"
    return score


def likelihood_ratio_score(implied_noise: Callable[[Any, np.ndarray], np.ndarray],
                           calibration: Callable[[Any], np.ndarray], family: str, neighbours: tuple[Any, Any],
                           message_shape: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """observations (n, k) -> (n,): ln p_first - ln p_second of the whole run under the paper's mechanism (fresh noise
    of the calibrated scale, `family` "laplace" or "normal"), the noise under each neighbour implied by the messages.
    The paper's adaptive composition makes this the exact likelihood ratio of its own algorithm's transcript, the
    Neyman-Pearson score against a mechanism with less noise (where a linear score is not, for Laplace noise)."""
    penalty = {"laplace": np.abs, "normal": lambda u: u * u / 2.0}[family]        # -ln density of a standard draw
    scales = [np.asarray(calibration(setting), dtype=float) for setting in neighbours]

    def score(observations: np.ndarray) -> np.ndarray:
        messages = np.asarray(observations, dtype=float).reshape((-1,) + tuple(message_shape))
        first, second = (_standard(implied_noise(setting, messages), scale)
                         for setting, scale in zip(neighbours, scales))
        return _finite((penalty(second) - penalty(first)).reshape(messages.shape[0], -1).sum(axis=1))
    score.__name__ = "implied-noise likelihood ratio"
    return score


def _per_entry(noise: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The calibration scale (T,) or (T, N) shaped to broadcast against noise (R, T, N, ...)."""
    scale = np.broadcast_to(np.asarray(scale, dtype=float).reshape(noise.shape[1], -1), noise.shape[1:3])
    return scale.reshape(scale.shape + (1,) * (noise.ndim - 3))


def _standard(noise: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """noise (R, T, N, ...) / its calibration scale (T,) or (T, N); 0 where the scale is 0."""
    scale = _per_entry(noise, scale)
    return np.where(scale > 0, noise / np.where(scale > 0, scale, 1.0), 0.0)


def _finite(values: np.ndarray) -> np.ndarray:
    """A score for every run, whatever messages an implementation sent (the auditor takes finite scores only)."""
    return np.nan_to_num(values, nan=0.0, posinf=np.finfo(float).max, neginf=-np.finfo(float).max)
