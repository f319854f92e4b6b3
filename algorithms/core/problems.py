"""Local data, losses, regularizers, their (sub)gradients and proximal operators.

Conventions of seeds/004 eqs. (1), (4): the loss l(X_k, y_k; w) is a SUM over the agent's samples,
f_k(w) = l(X_k, y_k; w)/M_k + lam R(w)/K, and f(W) = sum_k f_k(w_k).
All functions take batched iterates W of shape (..., N, d) (typically (R, N, d)) and loop over no agent.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from dpverify.algorithms.core.blocking import SCRATCH_ELEMENTS, Scratch, row_blocks
from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.mixing import copy_vectors
from dpverify.algorithms.core.validation import require_finite, require_positive

LOSSES = ("squared", "absolute")
REGULARIZERS = ("none", "l2", "elastic_net")

# seeds/004 L306: lambda_1 = 0.001 ||X^T y||_inf "as in Boyd2010".
BOYD_L1_FRACTION = 0.001


@dataclass(frozen=True, eq=False)
class LocalData:
    """D_k = (X_k, y_k) for every agent (seeds/004 L44), with equal M_k = M: features (N, M, d), targets (N, M)."""

    features: np.ndarray
    targets: np.ndarray

    def __post_init__(self) -> None:
        features = np.array(require_finite("features", self.features), dtype=float, copy=True)
        targets = np.array(require_finite("targets", self.targets), dtype=float, copy=True)
        if features.ndim != 3:
            raise InvalidDataError(f"features must have shape (N, M, d); got shape {features.shape}")
        if targets.shape != features.shape[:2]:
            raise InvalidDataError(
                f"targets must have shape (N, M) = {features.shape[:2]} to match features {features.shape}; "
                f"got {targets.shape}"
            )
        if min(features.shape) < 1:
            raise InvalidDataError(f"features must have N, M, d >= 1; got shape {features.shape}")
        features.setflags(write=False)
        targets.setflags(write=False)
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "targets", targets)

    @property
    def num_agents(self) -> int:
        return self.features.shape[0]

    @functools.cached_property
    def feature_norms(self) -> np.ndarray:
        """||B_ij|| per agent and sample (N, M), computed once: per-sample clipping needs it at every
        gradient evaluation (the data are immutable)."""
        return np.linalg.norm(self.features, axis=-1)

    @functools.cached_property
    def affine_features(self) -> np.ndarray:
        """[X_k^T; -y_k^T] per agent, contiguous (N, d + 1, M), computed once: the residuals x_kj^T w_k - y_kj are then
        one product [w_k^T, 1] [X_k^T; -y_k^T], with no pass of their own to subtract y (which took as long as the
        product at N = M = 50, d = 8, R = 100)."""
        affine = np.concatenate([self.features, -self.targets[:, :, None]], axis=2)
        return np.ascontiguousarray(affine.transpose(0, 2, 1))

    @functools.cached_property
    def averaging_features(self) -> np.ndarray:
        """X_k / M per agent (N, M, d), computed once: sum_j l'_kj x_kj / M is then one product, with no pass of its
        own to divide by M."""
        return self.features / self.num_samples

    def _gram(self) -> np.ndarray:
        """B_i^T B_i / M per agent: (N, d, d)."""
        return np.swapaxes(self.features, 1, 2) @ self.features / self.num_samples

    @functools.cached_property
    def gram_eigenvalues(self) -> np.ndarray:
        """Eigenvalues of B_i^T B_i / M per agent, ascending: (N, d), computed once."""
        return np.linalg.eigvalsh(self._gram())

    @functools.cached_property
    def gram_eigh(self) -> tuple[np.ndarray, np.ndarray]:
        """(eigenvalues (N, d) ascending, orthonormal eigenvectors (N, d, d)) of B_i^T B_i / M, computed once."""
        return np.linalg.eigh(self._gram())

    @property
    def num_samples(self) -> int:
        """M_k (equal for all agents)."""
        return self.features.shape[1]

    @property
    def dim(self) -> int:
        return self.features.shape[2]

    def replace_sample(self, agent: int, index: int, x, y: float) -> "LocalData":
        """Neighbouring dataset under replace-one adjacency on agent `agent` (seeds/004 Def. I, L104-L110)."""
        if not (0 <= agent < self.num_agents and 0 <= index < self.num_samples):
            raise InvalidDataError(
                f"(agent, index) must lie in [0, {self.num_agents - 1}] x [0, {self.num_samples - 1}]; got ({agent}, {index})"
            )
        x = require_finite("x", x)
        if x.shape != (self.dim,):
            raise InvalidDataError(f"replacement features must have shape ({self.dim},); got {x.shape}")
        features = np.array(self.features)
        targets = np.array(self.targets)
        features[agent, index] = x
        targets[agent, index] = float(require_finite("y", y))
        return LocalData(features, targets)

    def stacked(self) -> tuple[np.ndarray, np.ndarray]:
        """Global data X (N*M, d), y (N*M,), agent-major."""
        return self.features.reshape(-1, self.dim), self.targets.reshape(-1)


@dataclass(frozen=True)
class Problem:
    """min sum_k [ l(X_k, y_k; w_k)/M_k + lam R(w_k)/K ]  (seeds/004 eqs. (1), (4); Sec. 5 L306-L317).

    loss: 'squared' l = ||Xw - y||^2 | 'absolute' l = ||Xw - y||_1 (LAD).
    regularizer: 'none' | 'l2' R = ||w||^2 | 'elastic_net' R = l1 ||w||_1 + l2 ||w||^2 (L306).
    """

    loss: str
    regularizer: str
    lam: float
    l1: float = 0.0
    l2: float = 0.0

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise InvalidParameterError(f"loss must be one of {LOSSES}; got {self.loss!r}")
        if self.regularizer not in REGULARIZERS:
            raise InvalidParameterError(f"regularizer must be one of {REGULARIZERS}; got {self.regularizer!r}")
        require_positive("lam", self.lam, "seeds/004 eq. (1), lambda > 0")
        for name in ("l1", "l2"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise InvalidParameterError(f"{name} must be finite and >= 0 (elastic net weight, seeds/004 L306); got {value!r}")
        if self.regularizer != "elastic_net" and (self.l1 != 0 or self.l2 != 0):
            raise InvalidParameterError(
                f"l1/l2 weights only apply to regularizer='elastic_net'; got l1={self.l1}, l2={self.l2} "
                f"with regularizer={self.regularizer!r}"
            )
        if self.regularizer == "elastic_net" and self.l1 == 0 and self.l2 == 0:
            raise InvalidParameterError("elastic_net needs l1 > 0 or l2 > 0; got l1 = l2 = 0")

    @property
    def name(self) -> str:
        known = {("squared", "l2"): "ridge", ("squared", "elastic_net"): "elastic_net",
                 ("absolute", "none"): "lad", ("squared", "none"): "least_squares"}
        return known.get((self.loss, self.regularizer), f"{self.loss}+{self.regularizer}")

    @property
    def smooth(self) -> bool:
        return self.loss == "squared" and self.regularizer in ("none", "l2")

    # ----- values -----
    def objective(self, W: np.ndarray, data: LocalData) -> np.ndarray:
        """f(W) = sum_k [ l(X_k,y_k;w_k)/M + lam R(w_k)/K ]; W (..., N, d) -> (...)."""
        W = _check_iterates(W, data)
        residual = _residuals(W, data)
        per_sample = residual**2 if self.loss == "squared" else np.abs(residual)
        loss = per_sample.sum(axis=-1) / data.num_samples  # (..., N)
        return (loss + self.lam * self.regularizer_value(W) / data.num_agents).sum(axis=-1)

    def centralized_objective(self, w: np.ndarray, data: LocalData) -> np.ndarray:
        """sum_k f_k(w) at a common w (..., d) -> (...); the objective of the centralized problem."""
        w = np.asarray(w, dtype=float)
        W = np.broadcast_to(w[..., None, :], w.shape[:-1] + (data.num_agents, w.shape[-1]))
        return self.objective(W, data)

    def regularizer_value(self, W: np.ndarray) -> np.ndarray:
        """R(w_k) for every agent: (..., N, d) -> (..., N)."""
        W = np.asarray(W, dtype=float)
        if self.regularizer == "none":
            return np.zeros(W.shape[:-1])
        if self.regularizer == "l2":
            return (W**2).sum(axis=-1)
        return self.l1 * np.abs(W).sum(axis=-1) + self.l2 * (W**2).sum(axis=-1)

    # ----- subgradients -----
    def per_sample_subgradients(self, W: np.ndarray, data: LocalData) -> np.ndarray:
        """l'(x_kj, y_kj; w_k): (..., N, d) -> (..., N, M, d). Squared: 2(x^T w - y) x; absolute: sign(x^T w - y) x
        with sign(0) = 0 (spec §2.6 sign0). Materializes (..., N, M, d): for audits/tests, not hot loops."""
        W = _check_iterates(W, data)
        return self._sample_coefficients(W, data)[..., None] * data.features

    def loss_subgradient(self, W: np.ndarray, data: LocalData, clip: float | None = None,
                         scratch: Scratch | None = None) -> np.ndarray:
        """l'(X_k, y_k; w_k)/M_k = mean_j l'(x_kj, y_kj; w_k): (..., N, d) -> (..., N, d).

        clip: if given, each per-sample subgradient is scaled to norm <= clip before averaging
        (spec §2.6 `clip`). Per-sample subgradients are coefficient * x, so clipping only rescales the
        (..., N, M) coefficients; nothing of size (..., N, M, d) is formed.
        scratch: buffers a run passes to every call (core/blocking.py): the (N, rows, M) residuals are then written
        into them in large blocks instead of fresh small ones.
        """
        W = _check_iterates(W, data)
        if clip is not None:
            clip = require_positive("clip", clip, "per-sample clipping to c1, spec §2.6")
        rows = W.reshape(-1, data.num_agents, data.dim)
        by_agent = rows.swapaxes(0, 1)              # (N, rows, d): contiguous for an agent-major state (core/mixing.py)
        total = np.empty(by_agent.shape)            # agent-major, as the state
        per_row = data.num_agents * data.num_samples
        for block in row_blocks(rows.shape[0], per_row, None if scratch is None else SCRATCH_ELEMENTS):
            shape = (data.num_agents, block.stop - block.start, data.num_samples)
            affine_shape = shape[:2] + (data.dim + 1,)                              # [w_k^T, 1] per row
            affine = np.empty(affine_shape) if scratch is None else scratch.array("affine", affine_shape)
            copy_vectors(affine[..., :-1], by_agent[:, block])
            affine[..., -1] = 1.0
            residual = np.matmul(affine, data.affine_features,                      # (N, rows, M): x_kj^T w_k - y_kj
                                 out=None if scratch is None else scratch.array("residual", shape))
            coefficients = self._coefficients(residual, None if scratch is None else scratch.array("coefficients", shape))
            if clip is not None:
                norms = np.abs(coefficients) * data.feature_norms[:, None, :]
                coefficients *= np.minimum(1.0, clip / np.maximum(norms, np.finfo(float).tiny))
            np.matmul(coefficients, data.averaging_features, out=total[:, block])  # sum_j coeff_kj x_kj / M
        return total.swapaxes(0, 1).reshape(W.shape)

    def regularizer_subgradient(self, W: np.ndarray) -> np.ndarray:
        """R'(w_k): l2: 2w; elastic_net: l1 sign(w) + 2 l2 w (sign(0) = 0); none: 0."""
        W = np.asarray(W, dtype=float)
        if self.regularizer == "none":
            return np.zeros_like(W)
        if self.regularizer == "l2":
            return 2.0 * W
        return self.l1 * np.sign(W) + 2.0 * self.l2 * W

    def local_subgradient(self, W: np.ndarray, data: LocalData, clip: float | None = None) -> np.ndarray:
        """g_k = (1/M) sum_j l'(x_kj, y_kj; w_k) + (lam/K) R'(w_k)  (spec §2.4; seeds/004 eq. (5))."""
        return self.loss_subgradient(W, data, clip) + self.lam / data.num_agents * self.regularizer_subgradient(W)

    def _sample_coefficients(self, W: np.ndarray, data: LocalData) -> np.ndarray:
        return self._coefficients(_residuals(W, data))

    def _coefficients(self, residual: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """l'(r) per sample from the residuals r = x^T w - y: 2r (squared, overwriting them) or sign(r) (absolute,
        into `out` or a new array: numpy 2.4's sign written in place ran 6x slower than into another array)."""
        if self.loss == "squared":
            return np.multiply(residual, 2.0, out=residual)
        return np.sign(residual, out=out)


def _residuals(W: np.ndarray, data: LocalData) -> np.ndarray:
    """x_kj^T w_k - y_kj: (..., N, d) -> (..., N, M), a fresh array."""
    residual = np.einsum("nmd,...nd->...nm", data.features, W, optimize=True)
    residual -= data.targets
    return residual


def _check_iterates(W, data: LocalData) -> np.ndarray:
    W = np.asarray(W, dtype=float)
    if W.ndim < 2 or W.shape[-2:] != (data.num_agents, data.dim):
        raise InvalidDataError(
            f"iterates must have shape (..., N, d) = (..., {data.num_agents}, {data.dim}); got {W.shape}"
        )
    return W


# ----- proximal operators -----
def prox_l1(v: np.ndarray, t: float) -> np.ndarray:
    """argmin_x t||x||_1 + ||x - v||^2/2 (soft thresholding)."""
    t = _require_nonnegative("t", t)
    v = np.asarray(v, dtype=float)
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def prox_squared_l2(v: np.ndarray, t: float) -> np.ndarray:
    """argmin_x t||x||^2 + ||x - v||^2/2 = v/(1 + 2t)."""
    t = _require_nonnegative("t", t)
    return np.asarray(v, dtype=float) / (1.0 + 2.0 * t)


def prox_elastic_net(v: np.ndarray, t: float, l1: float, l2: float) -> np.ndarray:
    """argmin_x t(l1||x||_1 + l2||x||^2) + ||x - v||^2/2 = soft(v, t l1)/(1 + 2 t l2)."""
    t = _require_nonnegative("t", t)
    l1 = _require_nonnegative("l1", l1)
    l2 = _require_nonnegative("l2", l2)
    return prox_l1(v, t * l1) / (1.0 + 2.0 * t * l2)


def boyd_l1_weight(data: LocalData) -> float:
    """lambda_1 = 0.001 ||X^T y||_inf over the stacked global data (seeds/004 L306, "as in Boyd2010")."""
    X, y = data.stacked()
    return float(BOYD_L1_FRACTION * np.max(np.abs(X.T @ y)))


def ridge_solution(problem: Problem, data: LocalData) -> np.ndarray:
    """Exact minimizer of sum_k [||X_k w - y_k||^2/M + lam ||w||^2/K] (ridge only):
    (sum_k 2 X_k^T X_k/M + 2 lam I) w = sum_k 2 X_k^T y_k/M. Ground truth for tests and cross-checks."""
    if problem.name != "ridge":
        raise InvalidParameterError(f"ridge_solution needs loss='squared', regularizer='l2'; got {problem.name!r}")
    gram = np.einsum("nmd,nme->de", data.features, data.features) / data.num_samples
    moment = np.einsum("nmd,nm->d", data.features, data.targets) / data.num_samples
    return np.linalg.solve(2.0 * gram + 2.0 * problem.lam * np.eye(data.dim), 2.0 * moment)


def _require_nonnegative(name: str, value: float) -> float:
    if not (np.isscalar(value) and np.isfinite(value) and value >= 0):
        raise InvalidParameterError(f"{name} must be a finite number >= 0; got {value!r}")
    return float(value)
