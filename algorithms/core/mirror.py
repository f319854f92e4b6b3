"""Mirror maps phi, their Bregman divergences D_phi(x, y) = phi(x) - phi(y) - <grad phi(y), x - y>
(seeds/002 eq. (5), L131) and the mirror-descent step of seeds/002 eq. (7), L153:

    x+ = argmin_{x in Omega} D_phi(x, z) + <alpha g, x>,   Omega = {||x||_1 <= radius},

batched over leading axes (..., d). Each map carries its strong-convexity modulus omega
(Definition 2, L127) and the smoothness constant M of D_phi(x, .) (Assumption 4(ii), L141), both
re-derived in theory/dpdo_nc/symbolic.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.projections import (
    project_l1_ball,
    project_l1_ball_weighted,
)


@dataclass(frozen=True)
class SquaredEuclidean:
    """phi(x) = scale ||x||^2: scale 1/2 in Figs. 1-2 (L501), scale 1 in Fig. 3 (L513).
    D = scale ||x - y||^2, omega = M = 2 scale; step (7) = P_Omega(z - alpha g / (2 scale))."""

    scale: float = 0.5

    def __post_init__(self) -> None:
        if not self.scale > 0:
            raise InvalidParameterError(f"phi = scale ||x||^2 needs scale > 0 (omega-strong convexity, L127); got {self.scale!r}")

    @property
    def omega(self) -> float:
        return 2.0 * self.scale

    @property
    def smoothness(self) -> float:
        return 2.0 * self.scale

    @property
    def label(self) -> str:
        return "½||x||²" if self.scale == 0.5 else f"{self.scale:g}||x||²"

    def divergence(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.scale * np.sum((np.asarray(x) - y) ** 2, axis=-1)

    def step(self, z: np.ndarray, gradient: np.ndarray, alpha: float, radius: float) -> np.ndarray:
        return project_l1_ball(z - alpha * gradient / (2.0 * self.scale), radius)


@dataclass(frozen=True, eq=False)
class Mahalanobis:
    """phi(x) = x^T Q x (Fig. 3, L513). D = (x - y)^T Q (x - y), omega = 2 lambda_min(Q),
    M = 2 lambda_max(Q); step (7) = Q-projection of w = z - (alpha/2) Q^{-1} g onto Omega."""

    weight: np.ndarray

    def __post_init__(self) -> None:
        q = np.array(self.weight, dtype=float)
        if q.ndim != 2 or q.shape[0] != q.shape[1] or not np.all(np.isfinite(q)):
            raise InvalidParameterError(f"Q must be a finite square matrix; got shape {q.shape}")
        if not np.allclose(q, q.T, rtol=0, atol=1e-12):
            raise InvalidParameterError(f"Q must be symmetric; got {q.tolist()}")
        eigenvalues = np.linalg.eigvalsh(q)
        if eigenvalues[0] <= 0:
            raise InvalidParameterError(
                f"Q must be positive definite (phi = x^T Q x omega-strongly convex, Definition 2, L127); "
                f"got eigenvalues {eigenvalues.tolist()}")
        q.setflags(write=False)
        object.__setattr__(self, "weight", q)

    @property
    def omega(self) -> float:
        return 2.0 * float(np.linalg.eigvalsh(self.weight)[0])

    @property
    def smoothness(self) -> float:
        return 2.0 * float(np.linalg.eigvalsh(self.weight)[-1])

    @property
    def label(self) -> str:
        return "xᵀQx"

    def divergence(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        gap = np.asarray(x) - y
        return np.einsum("...d,de,...e->...", gap, self.weight, gap)

    def step(self, z: np.ndarray, gradient: np.ndarray, alpha: float, radius: float) -> np.ndarray:
        w = z - 0.5 * alpha * gradient @ np.linalg.inv(self.weight)  # Q symmetric: (Q^{-1} g)^T = g^T Q^{-1}
        return project_l1_ball_weighted(w, self.weight, radius)


def entropic_step(z: np.ndarray, gradient: np.ndarray, alpha: float) -> np.ndarray:
    """Remark 2 (L169-L171): phi(x) = sum x_k log x_k on the probability simplex; (7) is
    x+ = z * exp(-alpha g) / normalizer. D_phi(., z) needs z > 0 componentwise: a Laplace-perturbed
    mixture z can leave the positive orthant, where this map does not apply (error)."""
    z = np.asarray(z, dtype=float)
    if np.any(z <= 0):
        raise InvalidDataError("the entropic map of Remark 2 needs z > 0 componentwise (D_phi(x, z) = sum x log(x/z) - x + z); "
                               f"got min z = {z.min():.3g}")
    logits = np.log(z) - alpha * np.asarray(gradient, dtype=float)
    logits -= logits.max(axis=-1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=-1, keepdims=True)


def entropic_remark_2(y: np.ndarray, gradient: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Remark 2 as printed (L169): y+ = y - alpha grad f(x); [x+]_j = exp([y+]_j - 1) / sum_i exp([y+]_i - 1)."""
    y_next = np.asarray(y, dtype=float) - alpha * np.asarray(gradient, dtype=float)
    shifted = np.exp(y_next - 1 - (y_next - 1).max(axis=-1, keepdims=True))
    return y_next, shifted / shifted.sum(axis=-1, keepdims=True)
