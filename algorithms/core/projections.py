"""Projections onto the l1 ball {x : ||x||_1 <= r}, batched over leading axes.

Hand-written because no field library ships a vectorized exact l1-ball projection (CVXPY solves
one point at a time; the tests compare both).
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.rowwise import row_sum


def project_l1_ball(points: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto {||x||_1 <= radius} of every point (..., d) (Duchi, Shalev-Shwartz,
    Singer & Chandra 2008, Fig. 1): soft-threshold |v| at the tau that puts the result on the sphere."""
    if not radius > 0:
        raise InvalidParameterError(f"the l1-ball radius must be > 0; got {radius!r}")
    v = np.asarray(points, dtype=float)
    outside = row_sum(np.abs(v)) > radius
    if not np.any(outside):
        return v.copy(order="K")    # order K: keep the state's layout (core/mixing.py, agent_major)
    projected = v.copy(order="K")
    projected[outside] = _project_outside(v[outside], radius)   # sort only the points that need it (issue 17)
    return projected


def _project_outside(v: np.ndarray, radius: float) -> np.ndarray:
    """The projection of points (k, d) with ||v||_1 > radius onto the sphere ||x||_1 = radius."""
    magnitude = np.abs(v)
    u = -np.sort(-magnitude, axis=-1)                              # |v| sorted descending
    cumulative = np.cumsum(u, axis=-1)
    j = np.arange(1, v.shape[-1] + 1)
    positive = u - (cumulative - radius) / j > 0
    rho = v.shape[-1] - np.argmax(positive[..., ::-1], axis=-1)   # largest j with u_j - (c_j - r)/j > 0
    tau = (np.take_along_axis(cumulative, rho[..., None] - 1, axis=-1)[..., 0] - radius) / rho
    return np.sign(v) * np.maximum(magnitude - tau[..., None], 0.0)


def project_l1_ball_weighted(points: np.ndarray, weight: np.ndarray, radius: float) -> np.ndarray:
    """argmin_{||x||_1 <= r} (x - w)^T Q (x - w) for every w (..., 2), Q positive definite (spec 2.7).

    Exact in two dimensions: a point inside the ball is its own projection; otherwise the minimizer
    of the strictly convex quadratic lies on the boundary, the four edges of the diamond, and on each
    edge p0 + s e the 1-D minimizer is s* = clip(((w - p0)^T Q e)/(e^T Q e), 0, 1)."""
    w = np.asarray(points, dtype=float)
    if w.shape[-1] != 2:
        raise InvalidDataError(f"the Q-weighted l1-ball projection is exact for d = 2 only; got d = {w.shape[-1]}")
    if not radius > 0:
        raise InvalidParameterError(f"the l1-ball radius must be > 0; got {radius!r}")
    vertices = radius * np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    starts, edges = vertices, np.roll(vertices, -1, axis=0) - vertices          # (4, 2) each
    offset = w[..., None, :] - starts                                            # (..., 4, 2)
    qe = edges @ weight                                                          # rows e_k^T Q (Q symmetric)
    s = np.clip(np.einsum("...kd,kd->...k", offset, qe) / np.einsum("kd,kd->k", qe, edges), 0.0, 1.0)
    candidates = starts + s[..., None] * edges                                   # (..., 4, 2)
    gap = candidates - w[..., None, :]
    cost = np.einsum("...kd,de,...ke->...k", gap, weight, gap)
    best = np.take_along_axis(candidates, np.argmin(cost, axis=-1)[..., None, None], axis=-2)[..., 0, :]
    inside = np.abs(w).sum(axis=-1) <= radius
    return np.where(inside[..., None], w, best)
