"""The test problems of seeds/003 Sec. 6: decentralized estimation (6.1) and ICA (6.2), plus the
harness's synthetic maximum-avoidance test (spec Sec. 7.3). Gradients are batched (R, m, d)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.rowwise import clip_rows, row_norms, scale_rows, shifted, times_matrix

EXTENSIONS = ("radial_linear", "none")
BOX_TEST_BY_COLUMN_BELOW = 16   # d from which the box test reduces all coordinates at once (equal at 16, measured)


@dataclass(frozen=True, eq=False)
class Estimation:
    """f_i(theta) = ||Y_i - M theta||^2 + kappa ||theta||^3 (L556), kappa = -0.1 (L560), M and Y_i of L562.

    Outside the box B = [-8,4]x[-3,3] the paper "manipulates f_i to increase linearly with ||theta||"
    without giving the construction (L574). Harness default (spec P8), as a gradient oracle:
    grad f~_i(theta) = grad f_i(P_B theta) + c min(dist/delta_r, 1) (theta - P_B theta)/dist."""

    measurements: np.ndarray   # (m, s): Y_i
    matrix: np.ndarray         # (s, d): M
    kappa: float = -0.1
    low: tuple = (-8.0, -3.0)
    high: tuple = (4.0, 3.0)
    extension: str = "radial_linear"
    ext_c: float = 30.0
    ext_delta_r: float = 0.05

    def __post_init__(self) -> None:
        if self.extension not in EXTENSIONS:
            raise InvalidParameterError(f"extension must be one of {EXTENSIONS}; got {self.extension!r}")
        if not (self.ext_c > 0 and self.ext_delta_r > 0):
            raise InvalidParameterError(f"ext_c and ext_delta_r must be > 0; got {self.ext_c}, {self.ext_delta_r}")

    @classmethod
    def as_printed(cls, **options) -> "Estimation":
        matrix = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])                     # L562
        measurements = np.arange(1, 6)[:, None] * np.array([1 / 3, 2 / 3, 0.0])      # Y_i = i [1/3, 2/3, 0]
        return cls(measurements, matrix, **options)

    @property
    def num_agents(self) -> int:
        return self.measurements.shape[0]

    def local_gradients_inside(self, theta: np.ndarray) -> np.ndarray:
        """grad f_i(theta_i) = -2 M^T Y_i + 2 M^T M theta + 3 kappa ||theta|| theta (L566); theta (..., m, d)."""
        radius = row_norms(theta)
        curvature, offsets = self._gradient_terms
        gradient = times_matrix(theta, curvature)   # a fresh array: the offsets are added in place
        shifted(gradient, offsets, out=gradient)
        gradient += scale_rows(theta, 3.0 * self.kappa * radius)
        return gradient

    def local_gradients(self, states: np.ndarray) -> np.ndarray:
        """The oracle of the algorithms: (R, m, d) -> (R, m, d), with the extension outside B."""
        if self.extension == "none" or self._inside_box(states):   # p = theta: the extension adds nothing
            return self.local_gradients_inside(states)
        projected = clip_rows(states, self.low, self.high)
        gradient = self.local_gradients_inside(projected)
        outward = states - projected
        if not np.any(outward):   # every point inside B: the extension adds zeros
            return gradient
        distance = row_norms(outward)
        scale = self.ext_c * np.minimum(distance / self.ext_delta_r, 1.0) / np.maximum(distance, 1e-300)
        return gradient + scale_rows(outward, scale)

    def _inside_box(self, states: np.ndarray) -> bool:
        """Whether every point lies in B (False for a NaN): each coordinate's least and largest value, reductions
        without temporaries, where projecting and differencing cost 16x more at (R, m, d) = (2, 50, 512), measured.
        Below BOX_TEST_BY_COLUMN_BELOW coordinates a column at a time: a reduction over the leading axes of a short
        last axis runs numpy's inner loop d elements long (6 against 133 us at (1000, 5, 2); 35 against 173 at d = 8)."""
        if self._cube is not None:   # one reduction over everything: 4.7x faster than one per coordinate at d = 64
            return bool(states.min() >= self._cube[0] and states.max() <= self._cube[1])
        low, high = self._box
        if states.shape[-1] < BOX_TEST_BY_COLUMN_BELOW:
            return all(states[..., k].min() >= low[k] and states[..., k].max() <= high[k]
                       for k in range(states.shape[-1]))
        axes = tuple(range(states.ndim - 1))
        return bool(np.all(states.min(axis=axes) >= low) and np.all(states.max(axis=axes) <= high))

    @cached_property
    def _box(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array(self.low, dtype=float), np.array(self.high, dtype=float)

    @cached_property
    def _cube(self) -> tuple[float, float] | None:
        """(low, high) when B is a cube (every lower bound equal, every upper bound equal), else None."""
        low, high = self._box
        return (float(low[0]), float(high[0])) if np.all(low == low[0]) and np.all(high == high[0]) else None

    @cached_property
    def _gradient_terms(self) -> tuple[np.ndarray, np.ndarray]:
        """2 M^T M and -2 M^T Y_i (row i), computed once: a run calls local_gradients_inside once per block of replicas
        and iteration, and at d = 512 the product M^T M cost more than the gradient itself. The factor 2 is exact, so
        theta (2 M^T M) has the bits of 2 (theta M^T M) without a pass over the product."""
        return 2.0 * self.matrix.T @ self.matrix, -2.0 * self.measurements @ self.matrix

    @cached_property
    def _agent_terms(self) -> tuple[list, list, list, list]:
        """-2 M^T Y_i (row i), 2 M^T M, and the box, as Python floats for agent_gradient."""
        curvature, offsets = self._gradient_terms
        return offsets.tolist(), curvature.tolist(), [float(v) for v in self.low], [float(v) for v in self.high]

    def agent_gradient(self, i: int, theta: np.ndarray) -> np.ndarray:
        """Row i of local_gradients for agent i alone at theta (d,): the same formulas (L566 and the extension), in
        the same order, on Python floats (a d = 2 vector is cheaper so than as arrays). The per-agent oracle of an
        implementation that calls one agent at a time (contract.WangBasarSetting.gradient); it equals
        local_gradients up to rounding (a test compares them)."""
        offsets, curvature, low, high = self._agent_terms
        point = np.asarray(theta, dtype=float).tolist()
        projected = point if self.extension == "none" else [min(max(t, lo), hi) for t, lo, hi in zip(point, low, high)]
        cubic = 3.0 * self.kappa * math.sqrt(sum(p * p for p in projected))
        dims = range(len(projected))
        gradient = [offsets[i][b] + sum(projected[a] * curvature[a][b] for a in dims) + cubic * projected[b]
                    for b in dims]
        outward = [t - p for t, p in zip(point, projected)]
        distance = math.sqrt(sum(w * w for w in outward))
        if distance > 0.0:
            scale = self.ext_c * min(distance / self.ext_delta_r, 1.0) / distance
            gradient = [g + scale * w for g, w in zip(gradient, outward)]
        return np.array(gradient)

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        """grad F~ of the aggregate F = (1/m) sum_i f_i (L572) at points theta (..., d)."""
        theta = np.asarray(theta, dtype=float)
        stacked = np.broadcast_to(theta[..., None, :], theta.shape[:-1] + (self.num_agents, theta.shape[-1]))
        return self.local_gradients(stacked).mean(axis=-2)

    def objective(self, theta: np.ndarray) -> np.ndarray:
        """F(theta) on B (the unmodified function), theta (..., d)."""
        theta = np.asarray(theta, dtype=float)
        fitted = theta @ self.matrix.T                                                     # (..., s)
        residual = self.measurements - fitted[..., None, :]                                 # (..., m, s)
        return np.mean(np.sum(residual**2, axis=-1), axis=-1) + self.kappa * np.linalg.norm(theta, axis=-1) ** 3

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        """The true Hessian of F on B: 2 M^T M + 3 kappa (||theta|| I + theta theta^T/||theta||) (theta != 0)."""
        theta = np.asarray(theta, dtype=float)
        radius = np.linalg.norm(theta)
        return 2.0 * self.matrix.T @ self.matrix + 3.0 * self.kappa * (radius * np.eye(theta.size) + np.outer(theta, theta) / radius)

    def printed_hessian(self, theta: np.ndarray) -> np.ndarray:
        """L570 as printed: 2 M^T M - 3 kappa ||theta|| I_2 + 3 kappa theta theta^T / ||theta||."""
        theta = np.asarray(theta, dtype=float)
        radius = np.linalg.norm(theta)
        return 2.0 * self.matrix.T @ self.matrix - 3.0 * self.kappa * radius * np.eye(theta.size) + 3.0 * self.kappa * np.outer(theta, theta) / radius


@dataclass(frozen=True, eq=False)
class Ica:
    """min_{||u|| = 1} -sign(mu4 - 3) E[(u^T Y)^4] (L593-L597) on agent i's samples Y (m, n_i, d).
    With Rademacher sources mu4 = 1, so the task is min (1/n_i) sum (u^T Y_j)^4. The sphere constraint is
    handled by the Riemannian gradient (I - u u^T) grad f_i and a renormalization after mixing (spec P15)."""

    samples: np.ndarray   # (m, n_i, d)
    sign: float = 1.0     # -sign(mu4 - 3)

    def local_gradients(self, states: np.ndarray) -> np.ndarray:
        projections = np.einsum("mnd,rmd->rmn", self.samples, states)
        cubes = projections * projections * projections   # not **3: numpy's pow() is ~50x slower than two products
        euclidean = self.sign * 4.0 * np.einsum("rmn,mnd->rmd", cubes, self.samples) / self.samples.shape[1]
        radial = np.sum(euclidean * states, axis=-1, keepdims=True)
        return euclidean - radial * states

    @staticmethod
    def renormalize(states: np.ndarray) -> np.ndarray:
        return states / np.linalg.norm(states, axis=-1, keepdims=True)


@dataclass(frozen=True, eq=False)
class QuarticMaximumTest:
    """Harness test (spec Sec. 7.3): f_i(theta) = sum_j (theta_j^4/4 - theta_j^2/2) + b_i^T theta with
    sum_i b_i = 0: F has a strict local maximum at 0, strict saddles at (0, +-1), (+-1, 0), minima at (+-1, +-1)."""

    offsets: np.ndarray   # (m, d), rows sum to zero

    def local_gradients(self, states: np.ndarray) -> np.ndarray:
        return states * states * states - states + self.offsets   # theta^3 as products: pow() is ~50x slower
