"""Composite problems min_x sum_i f_i(x) + n r(x) of the DP-RECAL paper (seeds/001 eq. (1), Sec. VII).

Sec. VII (v1:L554-L558, L944-L950) prints the experiment objectives as
    (1/n) sum_i (1/m_i) sum_j loss(B_ij^T x, b_ij) + 1/2 ||x||^2 + 1/2 ||x||_1,
with loss = 1/2 (B^T x - b)^2 (linear regression) or ln(1 + exp(-b B^T x)) (logistic regression).
Multiplying by n maps it onto (1) (spec §5.1, mapping "M1", the default): f_i(x) is agent i's mean
loss and r(x) = ridge ||x||^2 + lasso ||x||_1 with ridge = lasso = 1/2. Under mapping "M2" the ridge
term moves into f_i (f_i += ridge ||x||^2, r = lasso ||x||_1): same objective, different split
between the smooth part that agents evaluate and the prox the baton holder applies.

Data are `dpverify.algorithms.core.problems.LocalData` (features (n, m, q), targets (n, m) with labels +-1).
Every function is batched over leading axes and loops over no agent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.core.validation import require_positive

LOSSES = ("linear", "logistic")
MAPPINGS = ("M1", "M2")
PAPER_RIDGE = PAPER_LASSO = 0.5  # seeds/001 v1:L556, L948: + 1/2 ||x||^2 + 1/2 ||x||_1


def soft_threshold(v: np.ndarray, threshold: float) -> np.ndarray:
    """sign(v) max(|v| - t, 0), computed as v - clip(v, -t, t): the same number in every case (one
    rounding of |v| - t, or a zero) in two passes over v instead of five."""
    return v - np.clip(v, -threshold, threshold)


@dataclass(frozen=True)
class CompositeProblem:
    """sum_i f_i(x) + n r(x) (seeds/001 eq. (1)) with the Sec. VII losses and regularizer."""

    loss: str = "linear"
    ridge: float = PAPER_RIDGE   # coefficient of ||x||^2 in the printed objective (0 for the r = 0 rows)
    lasso: float = PAPER_LASSO   # coefficient of ||x||_1
    mapping: str = "M1"

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise InvalidParameterError(f"loss must be one of {LOSSES}; got {self.loss!r}")
        if self.mapping not in MAPPINGS:
            raise InvalidParameterError(f"mapping must be one of {MAPPINGS} (spec §5.1); got {self.mapping!r}")
        for name in ("ridge", "lasso"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise InvalidParameterError(f"{name} must be finite and >= 0; got {value!r}")

    @property
    def smooth_ridge(self) -> float:
        """Coefficient of ||x||^2 inside each f_i (mapping M2) — 0 under M1."""
        return self.ridge if self.mapping == "M2" else 0.0

    @property
    def prox_ridge(self) -> float:
        """Coefficient of ||x||^2 inside r (mapping M1) — 0 under M2."""
        return 0.0 if self.mapping == "M2" else self.ridge

    # ----- smooth part f_i -----
    def sample_coefficients(self, margins: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """d loss / d (B^T x) per sample: linear B^T x - b; logistic -b sigmoid(-b B^T x)."""
        if self.loss == "linear":
            return margins - targets
        return -targets * expit(-targets * margins)

    def clipped_sample_losses(self, margins: np.ndarray, targets: np.ndarray, feature_norms: np.ndarray,
                              clip: float | None) -> np.ndarray:
        """The per-sample loss whose derivative in the margin is the CLIPPED coefficient (`_clip_coefficients`):
        the loss itself where clipping does not bind, continued linearly with slope +-clip/||B_ij|| where it does
        (the Huber loss for the linear loss). It is what the exact ADMM argmin of the baselines minimizes when their
        gradients are clipped (dp_common.solve_admm_subproblem); without clip it is the loss."""
        if self.loss == "linear":
            residual = margins - targets
            if clip is None:
                return 0.5 * residual**2
            with np.errstate(divide="ignore", invalid="ignore"):   # a zero feature vector: bound inf, never binds
                bound = clip / feature_norms
            size = np.abs(residual)
            inside = size <= bound
            outside = np.where(inside, 0.0, bound)
            return np.where(inside, 0.5 * residual**2, outside * size - 0.5 * outside**2)
        exponent = -targets * margins                       # loss = softplus(exponent), |coefficient| = sigmoid(exponent)
        if clip is None:
            return np.logaddexp(0.0, exponent)
        with np.errstate(divide="ignore"):
            bound = np.minimum(clip / feature_norms, 1.0)   # sigmoid < 1: a bound >= 1 never binds
            knee = np.log(bound) - np.log1p(-bound)         # sigmoid(knee) = bound (+inf where it never binds)
        beyond = exponent > knee
        at = np.where(beyond, knee, exponent)
        return np.logaddexp(0.0, at) + np.where(beyond, bound * (exponent - at), 0.0)

    def local_losses(self, X: np.ndarray, data: LocalData) -> np.ndarray:
        """f_i(x_i) for every agent: (..., n, q) -> (..., n)."""
        X = _check_agent_iterates(X, data)
        margins = agent_margins(data.features, X)
        if self.loss == "linear":
            per_sample = 0.5 * (margins - data.targets) ** 2
        else:
            per_sample = np.logaddexp(0.0, -data.targets * margins)
        return per_sample.mean(axis=-1) + self.smooth_ridge * (X**2).sum(axis=-1)

    def local_gradients(self, X: np.ndarray, data: LocalData, clip: float | None = None) -> np.ndarray:
        """grad f_i(x_i) for every agent: (..., n, q) -> (..., n, q).

        clip: per-sample gradient clipping to norm <= clip before averaging (spec §6, the default
        way to make Assumption 3's constant c hold); a per-sample gradient is coefficient * B_ij, so
        only the (..., n, m) coefficients are rescaled."""
        X = _check_agent_iterates(X, data)
        n, q = X.shape[-2:]
        columns = X.reshape(-1, n, q).transpose(1, 2, 0)                    # (n, q, P): the replicas as columns
        margins = data.features @ columns                                    # (n, m, P), features read once
        coefficients = self._clipped(self.sample_coefficients(margins, data.targets[..., None]),
                                     data.feature_norms[..., None], clip)
        gradient = (np.swapaxes(data.features, 1, 2) @ coefficients).transpose(2, 0, 1).reshape(X.shape)
        return gradient / data.num_samples + 2.0 * self.smooth_ridge * X

    def active_gradients(self, x: np.ndarray, agents: np.ndarray, data: LocalData,
                         clip: float | None = None) -> np.ndarray:
        """grad f_{agents[r]}(x[r]) for a batch: x (R, q), agents (R,) -> (R, q).

        Only one agent per replica is active (a relay algorithm), so computing all n gradients would
        waste a factor n; gathering each replica's (m, q) block would copy R*m*q floats. Instead the
        replicas are grouped by active agent: one matrix product per DISTINCT agent (at most n, each
        batched over its replicas). Called at every iteration on the same data, `ActiveGradients`
        gives the same numbers with the per-agent work precomputed."""
        x = np.asarray(x, dtype=float)
        agents = np.asarray(agents)
        if x.ndim != 2 or x.shape[1] != data.dim or agents.shape != x.shape[:1]:
            raise InvalidDataError(f"x must be (R, q = {data.dim}) with agents (R,); got {x.shape}, {agents.shape}")
        out = np.empty_like(x)
        for agent in np.unique(agents):
            rows = np.flatnonzero(agents == agent)
            B, b = data.features[agent], data.targets[agent]
            coefficients = self._clipped(self.sample_coefficients(x[rows] @ B.T, b), data.feature_norms[agent], clip)
            out[rows] = coefficients @ B / data.num_samples + 2.0 * self.smooth_ridge * x[rows]
        return out

    def per_sample_gradient_norms(self, X: np.ndarray, data: LocalData) -> np.ndarray:
        """||grad loss(B_ij, b_ij; x_i)|| (without the M2 ridge term): (..., n, q) -> (..., n, m)."""
        X = _check_agent_iterates(X, data)
        margins = agent_margins(data.features, X)
        return np.abs(self.sample_coefficients(margins, data.targets)) * data.feature_norms

    def lipschitz_constants(self, data: LocalData) -> np.ndarray:
        """L_i of grad f_i (Assumption 1, v1:L53): lambda_max(B_i^T B_i)/m_i, /4 for the logistic loss
        (sigmoid' <= 1/4), + 2 * smooth_ridge."""
        return self.curvature_scale * data.gram_eigenvalues[:, -1] + 2.0 * self.smooth_ridge

    @property
    def curvature_scale(self) -> float:
        """sup of the per-sample loss' second derivative in the margin: 1 (linear), 1/4 (logistic); also a bound
        for the clipped losses (clipping makes the derivative constant where it binds)."""
        return 1.0 if self.loss == "linear" else 0.25

    # ----- nonsmooth part r -----
    def regularizer(self, x: np.ndarray) -> np.ndarray:
        """r(x) (..., q) -> (...)."""
        x = np.asarray(x, dtype=float)
        return self.prox_ridge * (x**2).sum(axis=-1) + self.lasso * np.abs(x).sum(axis=-1)

    def prox_scaled_r(self, v: np.ndarray, scale: float) -> np.ndarray:
        """prox_{scale r}(v) = argmin_z scale r(z) + 1/2 ||z - v||^2 = soft(v, scale lasso)/(1 + 2 scale ridge)
        (spec §2.6). RECAL uses scale = n (prox_{nr}, eq. (7b)); per-agent baselines use their stepsize."""
        require_positive("scale", scale, "a proximal operator")
        shrunk = soft_threshold(np.asarray(v, dtype=float), scale * self.lasso)
        denominator = 1.0 + 2.0 * scale * self.prox_ridge
        if denominator != 1.0:  # dividing by 1 changes no number
            shrunk /= denominator
        return shrunk

    # ----- the whole objective -----
    def objective(self, x: np.ndarray, data: LocalData) -> np.ndarray:
        """sum_i f_i(x) + n r(x) at a common x: (..., q) -> (...)."""
        x = np.asarray(x, dtype=float)
        X = np.broadcast_to(x[..., None, :], x.shape[:-1] + (data.num_agents, data.dim))
        return self.local_losses(X, data).sum(axis=-1) + data.num_agents * self.regularizer(x)

    def gradient_sum(self, x: np.ndarray, data: LocalData) -> np.ndarray:
        """sum_i grad f_i(x) at a common x: (..., q) -> (..., q)."""
        x = np.asarray(x, dtype=float)
        X = np.broadcast_to(x[..., None, :], x.shape[:-1] + (data.num_agents, data.dim))
        return self.local_gradients(X, data).sum(axis=-2)

    def natural_residual(self, x: np.ndarray, data: LocalData) -> np.ndarray:
        """||x - prox_{nr}(x - sum_i grad f_i(x))||: zero exactly at the minimizer (a certificate)."""
        x = np.asarray(x, dtype=float)
        step = x - self.gradient_sum(x, data)
        return np.linalg.norm(x - self.prox_scaled_r(step, data.num_agents), axis=-1)

    @staticmethod
    def _clipped(coefficients: np.ndarray, feature_norms: np.ndarray, clip: float | None) -> np.ndarray:
        """Per-sample clipping (spec §6) if clip is given; feature_norms broadcasts against `coefficients`
        (LocalData.feature_norms)."""
        if clip is None:
            return coefficients
        return _clip_coefficients(coefficients, feature_norms, clip)


GRADIENT_METHODS = ("auto", "gram", "samples")


class ActiveGradients:
    """`CompositeProblem.active_gradients(x, agents, data, clip)` with what does not change during a run
    computed once: the same numbers up to the order of floating-point sums.

    - Support: the gradient of f_i and the margins B_i x only involve the columns of B_i that are not
      identically zero (MNIST 0/1: ~515 of 784 pixels per agent). The other columns contribute exact
      zeros, so they are dropped: grad f_i is zero there (plus the M2 ridge term).
    - "gram" (the linear loss without clipping): grad f_i(y) = B_i^T (B_i y - b_i)/m_i = G_i y - h_i with
      G_i = B_i^T B_i/m_i and h_i = B_i^T b_i/m_i on the support: 2 s_i^2 flops per replica instead of
      4 m_i s_i. Not used with clipping: clipping rescales each sample by a factor that depends on its
      residual B_ij y - b_ij, which the Gram matrix does not give.
    - "samples" (any loss, with or without per-sample clipping): margins and coefficients per sample on
      the support-restricted B_i, with the row norms ||B_ij|| (the clipping scale) computed once.
    "auto" picks "gram" when it applies and every support s_i <= m_i (fewer flops by a factor >= 2 and
    no more memory than the data); "gram" where it does not apply is an error.
    """

    def __init__(self, problem: CompositeProblem, data: LocalData, clip: float | None = None, method: str = "auto"):
        if method not in GRADIENT_METHODS:
            raise InvalidParameterError(f"method must be one of {GRADIENT_METHODS}; got {method!r}")
        if clip is not None:
            clip = require_positive("clip", clip, "per-sample gradient clipping (spec §6, c = G)")
        self.problem, self.data, self.clip = problem, data, clip
        features, targets, m = data.features, data.targets, data.num_samples
        self.supports = [np.flatnonzero(np.any(B != 0, axis=0)) for B in features]
        gram_applies = problem.loss == "linear" and clip is None
        if method == "gram" and not gram_applies:
            raise InvalidParameterError("the Gram form of the gradient is exact only for the linear loss without clipping")
        self.method = method if method != "auto" else (
            "gram" if gram_applies and all(S.size <= m for S in self.supports) else "samples")
        restricted = [B if S.size == data.dim else np.ascontiguousarray(B[:, S]) for B, S in zip(features, self.supports)]
        if self.method == "gram":
            self.gram = [B.T @ B / m for B in restricted]
            self.shift = [B.T @ b / m for B, b in zip(restricted, targets)]
        else:
            self.features = restricted
            self.sparse = [_sparse_pair(B) for B in restricted]
            self.row_norms = None if clip is None else data.feature_norms

    def __call__(self, x: np.ndarray, agents: np.ndarray) -> np.ndarray:
        """grad f_{agents[r]}(x[r]): x (R, q), agents (R,) -> (R, q), grouped by active agent (one matrix
        product per distinct agent, batched over its replicas)."""
        data = self.data
        x, agents = self._checked(x, agents)
        out = np.empty_like(x)  # every row belongs to one agent's group
        for agent in np.unique(agents):
            rows, support = np.flatnonzero(agents == agent), self.supports[agent]
            restricted = support.size < data.dim
            block = x.take(rows, axis=0)
            if restricted:
                block = block.take(support, axis=1)
            if self.method == "gram":
                gradient = _few_rows_product(block, self.gram[agent])
                gradient -= self.shift[agent]
            else:
                coefficients = self.problem.sample_coefficients(self._forward(agent, block), data.targets[agent])
                if self.clip is not None:
                    coefficients = _clip_coefficients(coefficients, self.row_norms[agent], self.clip)
                gradient = self._backward(agent, coefficients)
                gradient /= data.num_samples
            if restricted:
                full = np.zeros((rows.size, data.dim))
                full[:, support] = gradient
                gradient = full
            out[rows] = gradient
        if self.problem.smooth_ridge:
            out += 2.0 * self.problem.smooth_ridge * x
        return out

    def _checked(self, x, agents) -> tuple[np.ndarray, np.ndarray]:
        x, agents = np.asarray(x, dtype=float), np.asarray(agents)
        if x.ndim != 2 or x.shape[1] != self.data.dim or agents.shape != x.shape[:1]:
            raise InvalidDataError(f"x must be (R, q = {self.data.dim}) with agents (R,); got {x.shape}, {agents.shape}")
        return x, agents

    # The two halves of a "samples" gradient, for a solver that also needs the loss at the points whose margins it
    # computes (dp_common.solve_admm_subproblem): each reads every active agent's data once.
    def margins(self, x: np.ndarray, agents: np.ndarray) -> np.ndarray:
        """B_{agents[r]} x[r] per sample: (R, q) -> (R, m)."""
        x, agents = self._checked(x, agents)
        self._require_samples()
        out = np.empty((x.shape[0], self.data.num_samples))
        for agent in np.unique(agents):
            rows, support = np.flatnonzero(agents == agent), self.supports[agent]
            block = x.take(rows, axis=0)
            if support.size < self.data.dim:
                block = block.take(support, axis=1)
            out[rows] = self._forward(agent, block)
        return out

    def coefficients_and_losses(self, margins: np.ndarray, agents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """From `margins`: the (clipped) per-sample coefficients (R, m), and f_{agents[r]} at those margins with the
        clipped losses (`clipped_sample_losses`; without the M2 ridge term), (R,)."""
        targets = self.data.targets[agents]
        norms = None if self.clip is None else self.row_norms[agents]
        coefficients = self.problem.sample_coefficients(margins, targets)
        if self.clip is not None:
            coefficients = _clip_coefficients(coefficients, norms, self.clip)
        losses = self.problem.clipped_sample_losses(margins, targets, norms, self.clip).mean(axis=-1)
        return coefficients, losses

    def data_gradients(self, coefficients: np.ndarray, agents: np.ndarray) -> np.ndarray:
        """sum_j coefficients[r, j] B_ij / m for i = agents[r]: (R, m) -> (R, q) (without the M2 ridge term)."""
        self._require_samples()
        out = np.zeros((coefficients.shape[0], self.data.dim))
        for agent in np.unique(agents):
            rows, support = np.flatnonzero(agents == agent), self.supports[agent]
            out[np.ix_(rows, support)] = self._backward(agent, coefficients.take(rows, axis=0)) / self.data.num_samples
        return out

    def reads_csr(self, agents) -> bool:
        """Whether any of these agents' blocks is read as CSR (`_sparse_pair`)."""
        self._require_samples()
        return any(self.sparse[agent] is not None for agent in agents)

    def _forward(self, agent: int, block: np.ndarray) -> np.ndarray:
        """block @ B_i^T on agent i's restricted block: (k, s) -> (k, m)."""
        if self.sparse[agent] is None:
            return _few_rows_product(block, self.features[agent].T)
        return _sparse_product(self.sparse[agent][0], block)

    def _backward(self, agent: int, coefficients: np.ndarray) -> np.ndarray:
        """coefficients @ B_i: (k, m) -> (k, s)."""
        if self.sparse[agent] is None:
            return _few_rows_product(coefficients, self.features[agent])
        return _sparse_product(self.sparse[agent][1], coefficients)

    def _require_samples(self) -> None:
        if self.method != "samples":
            raise InvalidParameterError("margins and coefficients need the per-sample form (method='samples')")


SPARSE_DENSITY = 0.25          # a block at most this dense is read as CSR; measured with 20 replicas on one core
SPARSE_MIN_ENTRIES = 1_000_000  # ... if it is large enough that scipy's per-call cost does not matter


FEW_ROWS = 6   # a product with at most this many rows runs one row at a time (`_few_rows_product`)


def _few_rows_product(rows: np.ndarray, block: np.ndarray) -> np.ndarray:
    """rows @ block (an agent's data block, or its Gram matrix), one row at a time when there are 2..FEW_ROWS of them.
    A relay run has a few replicas per active agent (20 over 8 agents: ~2.5), and for so few rows OpenBLAS's matrix
    product costs about what it costs for 8. Measured on one core, one agent's Fashion-MNIST block (1500 x 784) in
    cache: 3 rows take 0.51 ms row by row against 1.48 ms at once (2 rows: 0.35 against 1.09; 8 rows: 1.39 against
    1.22, hence FEW_ROWS). Each row gets the bits of its own product, so a replica's numbers do not depend on how
    many others share its agent."""
    count = rows.shape[0]
    if count == 1 or count > FEW_ROWS:
        return rows @ block
    out = np.empty((count, block.shape[1]))
    for row in range(count):
        np.matmul(rows[row:row + 1], block, out=out[row:row + 1])
    return out


FEW_SPARSE_ROWS = 3   # a CSR product with at most this many rows runs one row at a time (`_sparse_product`)


def _sparse_product(matrix: sp.csr_array, rows: np.ndarray) -> np.ndarray:
    """rows @ matrix^T: (k, n) -> (k, matrix rows), one row at a time when k <= FEW_SPARSE_ROWS. scipy's kernel for
    several vectors (csr_matvecs) runs an inner loop of length k per nonzero, slow for k = 2 or 3, which are a relay
    run's replicas per active agent. Measured on one core (Intel Xeon), one agent's MNIST-v0 block (7,500 x 670,
    1.1 M nonzeros) and its transpose in cache, forward and backward: 2 rows 2.8 ms one at a time against 6.5 ms at
    once, 3 rows 4.2 against 7.1, 4 rows 5.7 against 6.4, 6 rows 9.0 against 7.2. With all 8 agents' blocks cycled,
    as a relay run's gradient reads them (out of cache), per agent: 2 rows 4.2 against 5.3 ms, 3 rows 5.4 against
    5.2, hence 3. Both add each output entry's products in the order of its nonzeros, so the bits are the same
    either way."""
    if 1 < rows.shape[0] <= FEW_SPARSE_ROWS:
        return np.stack([matrix @ row for row in rows])
    return (matrix @ rows.T).T


def _sparse_pair(block: np.ndarray) -> tuple[sp.csr_array, sp.csr_array] | None:
    """(B, B^T) as CSR when reading B's nonzeros only is faster than reading B: the gradients are memory-bound (a few
    replicas per agent), and CSR reads 12 bytes per nonzero against 8 per entry. Measured per gradient over all of
    MNIST 0-9 (v0, density 0.22 on the support): 58 ms against 83 ms dense; Fashion-MNIST (0.47): 28 against 19 ms.
    The same products up to the order of the sums (~1e-15 relative)."""
    if block.size < SPARSE_MIN_ENTRIES or np.count_nonzero(block) > SPARSE_DENSITY * block.size:
        return None
    return sp.csr_array(block), sp.csr_array(block.T)


def _clip_coefficients(coefficients: np.ndarray, feature_norms: np.ndarray, clip: float) -> np.ndarray:
    """A per-sample gradient coefficient * B_ij rescaled to norm <= clip: the coefficient clipped to
    +-clip/||B_ij|| (one pass; a zero feature vector is never clipped)."""
    clip = require_positive("clip", clip, "per-sample gradient clipping (spec §6, c = G)")
    with np.errstate(divide="ignore"):
        bound = clip / feature_norms
    return np.clip(coefficients, -bound, bound)


ACCURACY_BLOCK = 64   # points scored per matrix product: the (n m, 64) margins stay ~30 MB on MNIST's 60,000 samples


def accuracy(x: np.ndarray, data: LocalData) -> np.ndarray:
    """Fraction of samples with sign(B_ij^T x) = b_ij over all agents (v1:L568); x (..., q) -> (...).
    The points are scored in blocks, each block against all samples in one matrix product (a product per point
    re-read the whole data set for each of a curve's ~1000 points: 60 s on MNIST 0-9 instead of a few)."""
    x = np.asarray(x, dtype=float)
    points = x.reshape(-1, data.dim)
    samples, labels = data.features.reshape(-1, data.dim), data.targets.reshape(-1, 1)
    correct = np.empty(len(points))
    for start in range(0, len(points), ACCURACY_BLOCK):
        margins = samples @ points[start:start + ACCURACY_BLOCK].T                       # (n m, block)
        correct[start:start + ACCURACY_BLOCK] = (np.where(margins >= 0, 1.0, -1.0) == labels).sum(axis=0)
    return (correct / labels.size).reshape(x.shape[:-1])


def agent_margins(features: np.ndarray, X: np.ndarray) -> np.ndarray:
    """B_i x_i for every agent: features (n, m, q), X (..., n, q) -> (..., n, m). One matrix product per agent
    with the replicas as columns (each B_i is read once): several times faster than the equivalent einsum with
    optimize=True on (R, n, q) iterates."""
    n, q = X.shape[-2:]
    margins = features @ X.reshape(-1, n, q).transpose(1, 2, 0)             # (n, m, P)
    return margins.transpose(2, 0, 1).reshape(X.shape[:-2] + margins.shape[:2])


def _check_agent_iterates(X, data: LocalData) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim < 2 or X.shape[-2:] != (data.num_agents, data.dim):
        raise InvalidDataError(f"iterates must have shape (..., n, q) = (..., {data.num_agents}, {data.dim}); got {X.shape}")
    return X
