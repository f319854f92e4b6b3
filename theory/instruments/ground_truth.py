"""Centralized ground truth for the regression problems of the papers, returned WITH an optimality
certificate that is computed here, independently of the solver: ground truth is checked, not
trusted.

The problem is the centralized form of seeds/004 eq. (1) (spec zcdp_nfl.md §1.4, §5.1-§5.4): data
split over K agents, agent k holding X_k (M_k, P) and y_k (M_k,),

    F(w) = sum_k [ l(X_k, y_k; w) / M_k + (lam / K) R(w) ]                       seeds/004 eq. (1), (4)
         = sum_i s_i phi(a_i^T w - b_i) + c2 ||w||^2 + c1 ||w||_1

with (a_i, b_i) the stacked samples, s_i = 1/M_k for a sample of agent k, phi(r) = r^2 (squared
loss, l = ||Xw - y||^2) or |r| (absolute loss / LAD, l = ||Xw - y||_1), and
R = 0 ('none'): c1 = c2 = 0; R = ||w||^2 ('l2', ridge): c2 = lam; R = l1 ||w||_1 + l2 ||w||^2
('elastic_net'): c1 = lam l1, c2 = lam l2  (sum_k lam/K R(w) = lam R(w)).

The certificate (`Certificate`) has two independent parts, both computed in numpy from the returned
point:
* stationarity_residual = dist(0, dF(w)), the distance from 0 to the subdifferential of F at w.
  The smooth part of dF is a single vector g; each |.| term at a kink (a residual r_i, or a
  coordinate w_j for the l1 term, whose absolute value is <= kink_tolerance) contributes a segment
  s_i [-1, 1] a_i (resp. c1 [-1, 1] e_j). The distance is then min_{t in [-1,1]^m} ||g + B t||_2,
  a box-constrained least-squares problem solved EXACTLY: in closed form when only l1 kinks are
  present (the segments are coordinate-aligned: the residual of coordinate j is
  max(|g_j| - c1, 0)), otherwise by the bounded-variable least-squares active-set algorithm
  (scipy.optimize.lsq_linear, method='bvls'), which terminates at the exact minimizer. The value
  reported is ||g + B t|| re-evaluated at the returned t clipped to the box, so it is attained by an
  actual subgradient and never under-states the distance. Terms treated as being at a kink are
  counted (n_kink_terms) and their largest distance to the kink is reported (max_kink_offset): the
  residual is that of the subdifferential in which those terms may take any subgradient of their
  kink. After the active-set polish (below) the returned point sits on its kinks to rounding error.
* duality_gap = F(w) - D(z) for the Fenchel dual
      D(z) = -f*(z) - b^T z - h*(-A^T z),   f(r) = sum_i s_i phi(r_i),  h(w) = c2||w||^2 + c1||w||_1,
      f*(z) = sum_i z_i^2 / (4 s_i) (squared) or the indicator of |z_i| <= s_i (absolute),
      h*(v) = sum_j max(|v_j| - c1, 0)^2 / (4 c2) if c2 > 0, else the indicator of ||v||_inf <= c1.
  Weak duality F(w) >= D(z) holds for EVERY dual-feasible z, so a small gap bounds the
  suboptimality F(w) - F* whatever the solver did. Dual candidates: the solver's multiplier of the
  constraint r = A w - b, and the subgradient selection found by the stationarity computation
  (z_i = 2 s_i r_i for the squared loss; s_i sign(r_i), or s_i t_i at a kink, for the absolute loss).
  Each candidate is first made exactly feasible (clipped to the box |z_i| <= s_i; projected on the
  null space of A^T when h = 0; scaled into ||A^T z||_inf <= c1 when c2 = 0 < c1) and the largest
  dual value is used. When h = 0, "A^T z = 0" holds to floating-point rounding (after an orthogonal
  projection), which is the only approximation.

Refinement: the solver's point is always followed by an active-set polish that solves the KKT
system of the smooth problem obtained by fixing the kinks (squared loss: the normal equations
restricted to the support, with the signs of the l1 term fixed; absolute loss: the kink equations
a_i^T w = b_i with an exact minimal-norm correction, or the equality-constrained QP when c2 > 0).
If no candidate is certified at the requested tolerance, the problem is re-solved with tight solver
tolerances and polished again. The candidate with the smallest max(stationarity, |gap|) is returned;
`certified(tol)` is True only if its computed residual and gap are below tol.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.optimize import lsq_linear

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.validation import require_float_array

LOSSES = ("squared", "absolute")
REGULARIZERS = ("none", "l2", "elastic_net")

# default: absolute tolerance at which the returned solution is asked to be certified; far below the
# accuracy of any statistical check of the harness (normalized errors >= 1e-6), well above rounding.
DEFAULT_CERTIFICATE_TOLERANCE = 1e-8
# default: a residual r_i or a coordinate w_j with |.| <= this value is treated as sitting at the kink
# of its |.| term. Interior-point solvers return kinks to ~1e-9; genuine nonzero residuals of the
# papers' data (unit-scale features, noise sd 0.1) are many orders of magnitude larger.
DEFAULT_KINK_TOLERANCE = 1e-7
# default: solver preference (Clarabel: interior point for SOCP/QP, bundled with cvxpy >= 1.4).
SOLVER_PREFERENCE = ("CLARABEL", "ECOS", "SCS")
# default: settings of the tight re-solve used when the first solve and its polish are not certified.
TIGHT_SOLVER_SETTINGS = {
    "CLARABEL": {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "tol_ktratio": 1e-10, "max_iter": 500},
    "ECOS": {"abstol": 1e-12, "reltol": 1e-12, "feastol": 1e-12, "max_iters": 500},
    "SCS": {"eps_abs": 1e-11, "eps_rel": 1e-11, "max_iters": 200_000},
}


class SolverFailureError(RuntimeError):
    """No available conic solver returned a point for a problem that always has a solution."""


@dataclass(frozen=True)
class Certificate:
    """Optimality certificate of a point w, computed independently of the solver (module docstring).

    stationarity_residual: dist(0, dF(w)) (exact box-constrained least squares over the subgradient
        choices of the terms at a kink); duality_gap: F(w) - D(z) >= F(w) - F* for the best
        dual-feasible z found; primal_value: F(w); dual_value: D(z); solver, status: of the solve that
        produced w ('none'/'not-solved' when a given point is certified); kink_tolerance,
        n_kink_terms, max_kink_offset: how the kinks were identified; dual_source: which dual
        candidate gave dual_value; refinement: how w was obtained ('solver', 'active-set-polish',
        'tight-resolve', 'tight-resolve+active-set-polish', 'given').
    """

    stationarity_residual: float
    duality_gap: float
    primal_value: float
    dual_value: float
    solver: str
    status: str
    kink_tolerance: float
    n_kink_terms: int
    max_kink_offset: float
    dual_source: str
    refinement: str

    def certified(self, tol: float = DEFAULT_CERTIFICATE_TOLERANCE) -> bool:
        """True iff stationarity_residual <= tol and -tol <= duality_gap <= tol (absolute; a negative
        gap beyond rounding would reveal an error, since weak duality makes the exact gap >= 0)."""
        tol = _require_positive("tol", tol)
        values = (self.stationarity_residual, self.duality_gap)
        if not all(math.isfinite(v) for v in values):
            return False
        return self.stationarity_residual <= tol and -tol <= self.duality_gap <= tol

    @property
    def score(self) -> float:
        """max(stationarity_residual, |duality_gap|): the quantity minimized over candidates."""
        return max(self.stationarity_residual, abs(self.duality_gap))


@dataclass(frozen=True, eq=False)
class GroundTruth:
    """A certified solution of min_w F(w). `solution` (P,), `optimal_value` = F(solution) (evaluated in
    numpy, not taken from the solver), `certificate`, the problem description, and `raw_solution`,
    the solver's point before any refinement (kept so that tests can check the solver itself)."""

    solution: np.ndarray
    optimal_value: float
    certificate: Certificate
    loss: str
    regularizer: str
    lam: float
    l1: float
    l2: float
    raw_solution: np.ndarray

    def certified(self, tol: float = DEFAULT_CERTIFICATE_TOLERANCE) -> bool:
        return self.certificate.certified(tol)


# ------------------------------------------------------------------------------------------------
# validation and problem assembly


def _require_positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not (
        math.isfinite(value) and value > 0
    ):
        raise InvalidParameterError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def _require_nonnegative(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not (
        math.isfinite(value) and value >= 0
    ):
        raise InvalidParameterError(f"{name} must be a finite number >= 0; got {value!r}")
    return float(value)


def _block_list(name: str, value, stacked_shape: str, block_shape: str) -> list[np.ndarray]:
    """A (K, ...) array or a sequence of K per-agent blocks, each with the dimensions of `block_shape`
    ('(M_k, P)' for features, '(M_k,)' for targets), as a list of float arrays."""
    block_ndim = block_shape.count(",") + (0 if block_shape.endswith(",)") else 1)
    if isinstance(value, np.ndarray) or not isinstance(value, Sequence):
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InvalidDataError(f"{name} must be a numeric array with per-agent blocks {block_shape}; "
                                   f"got {type(value).__name__}") from exc
        if array.ndim != block_ndim + 1:
            raise InvalidDataError(f"{name} must have shape {stacked_shape} (seeds/004 Sec. 1.3: blocks "
                                   f"{block_shape} per agent); got shape {array.shape}")
        return [array[k] for k in range(array.shape[0])]
    return [require_float_array(f"{name}[{k}]", block, block_ndim, block_shape) for k, block in enumerate(value)]


def _as_blocks(features, targets) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Features as a (K, M, P) array or a sequence of K arrays (M_k, P); targets as (K, M) or a
    sequence of K arrays (M_k,)."""
    x_blocks = _block_list("features", features, "(K, M, P)", "(M_k, P)")
    y_blocks = _block_list("targets", targets, "(K, M)", "(M_k,)")
    if len(x_blocks) == 0:
        raise InvalidDataError("features must hold at least one agent (K >= 1); got K = 0")
    if len(x_blocks) != len(y_blocks):
        raise InvalidDataError(f"features and targets must have the same number of agents K; got {len(x_blocks)} and {len(y_blocks)}")
    p = x_blocks[0].shape[1]
    if p == 0:
        raise InvalidDataError("features must have at least one column (P >= 1); got P = 0")
    for k, (xb, yb) in enumerate(zip(x_blocks, y_blocks)):
        if xb.shape[1] != p:
            raise InvalidDataError(f"every agent must have P = {p} features; agent {k} has {xb.shape[1]}")
        if xb.shape[0] == 0:
            raise InvalidDataError(f"every agent must hold at least one sample (M_k >= 1); agent {k} has 0")
        if yb.shape[0] != xb.shape[0]:
            raise InvalidDataError(f"agent {k}: targets must have M_k = {xb.shape[0]} entries (one per row of features); got {yb.shape[0]}")
        for name, arr in (("features", xb), ("targets", yb)):
            if not np.all(np.isfinite(arr)):
                bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
                raise InvalidDataError(f"{name} of agent {k} must be finite; found {bad} NaN/inf value(s)")
    return x_blocks, y_blocks


@dataclass(frozen=True, eq=False)
class _Problem:
    A: np.ndarray  # (N, P) stacked features
    b: np.ndarray  # (N,) stacked targets
    s: np.ndarray  # (N,) per-sample weights 1/M_k
    loss: str
    c1: float  # weight of ||w||_1
    c2: float  # weight of ||w||^2

    def objective(self, w: np.ndarray) -> float:
        r = self.A @ w - self.b
        data = float(np.sum(self.s * r * r)) if self.loss == "squared" else float(np.sum(self.s * np.abs(r)))
        return data + self.c2 * float(w @ w) + self.c1 * float(np.sum(np.abs(w)))


def _build_problem(features, targets, loss, regularizer, lam, l1, l2) -> _Problem:
    if loss not in LOSSES:
        raise InvalidParameterError(f"loss must be one of {LOSSES}; got {loss!r}")
    if regularizer not in REGULARIZERS:
        raise InvalidParameterError(f"regularizer must be one of {REGULARIZERS}; got {regularizer!r}")
    lam = _require_positive("lam (lambda of seeds/004 eq. (1), 'lambda > 0', L51)", lam)
    l1 = _require_nonnegative("l1", l1)
    l2 = _require_nonnegative("l2", l2)
    if regularizer != "elastic_net" and (l1 != 0.0 or l2 != 0.0):
        raise InvalidParameterError(
            f"l1 and l2 are the weights of the elastic net R(w) = l1||w||_1 + l2||w||^2 (seeds/004 §5, Fig. 1) and "
            f"must be 0 for regularizer={regularizer!r}; got l1={l1}, l2={l2}"
        )
    x_blocks, y_blocks = _as_blocks(features, targets)
    A = np.vstack(x_blocks)
    b = np.concatenate(y_blocks)
    s = np.concatenate([np.full(xb.shape[0], 1.0 / xb.shape[0]) for xb in x_blocks])
    if regularizer == "none":
        c1, c2 = 0.0, 0.0
    elif regularizer == "l2":
        c1, c2 = 0.0, lam
    else:
        c1, c2 = lam * l1, lam * l2
    return _Problem(A=A, b=b, s=s, loss=loss, c1=c1, c2=c2)


# ------------------------------------------------------------------------------------------------
# the certificate


def _stationarity(prob: _Problem, w: np.ndarray, kink_tol: float) -> tuple[float, np.ndarray, int, float]:
    """Exact dist(0, dF(w)) (module docstring). Returns (residual, z, n_kinks, max_kink_offset), z the
    loss-part subgradient selection (a dual candidate)."""
    A, b, s = prob.A, prob.b, prob.s
    r = A @ w - b
    p = w.shape[0]
    columns = []
    offsets = [0.0]
    if prob.loss == "squared":
        z = 2.0 * s * r
        g = A.T @ z
        loss_kink = np.zeros(r.shape[0], dtype=bool)
    else:
        loss_kink = np.abs(r) <= kink_tol
        z = s * np.sign(r)
        z[loss_kink] = 0.0
        g = A.T @ z
        if np.any(loss_kink):
            columns.append((A[loss_kink] * s[loss_kink, None]).T)
            offsets.append(float(np.max(np.abs(r[loss_kink]))))
    g = g + 2.0 * prob.c2 * w
    if prob.c1 > 0:
        zero = np.abs(w) <= kink_tol
        g = g + prob.c1 * np.where(zero, 0.0, np.sign(w))
        if np.any(zero):
            offsets.append(float(np.max(np.abs(w[zero]))))
    else:
        zero = np.zeros(p, dtype=bool)
    n_loss_kinks = int(np.count_nonzero(loss_kink))
    n_kinks = n_loss_kinks + int(np.count_nonzero(zero))
    if n_loss_kinks == 0:
        # only l1 kinks: coordinate-aligned segments, closed form
        residual_vector = g.copy()
        residual_vector[zero] = np.sign(g[zero]) * np.maximum(np.abs(g[zero]) - prob.c1, 0.0)
        return float(np.linalg.norm(residual_vector)), z, n_kinks, max(offsets)
    if np.any(zero):
        columns.append((prob.c1 * np.eye(p))[:, zero])
    B = np.hstack(columns)
    result = lsq_linear(B, -g, bounds=(-1.0, 1.0), method="bvls", tol=1e-15, lsmr_tol=None)
    t = np.clip(result.x, -1.0, 1.0)
    residual = float(np.linalg.norm(g + B @ t))
    z = z.copy()
    z[loss_kink] = s[loss_kink] * t[:n_loss_kinks]
    return residual, z, n_kinks, max(offsets)


def _dual_value(prob: _Problem, z: np.ndarray) -> float:
    """D(z) after making z exactly dual feasible (module docstring)."""
    A, b, s = prob.A, prob.b, prob.s
    z = np.array(z, dtype=float, copy=True)
    if not np.all(np.isfinite(z)):
        return -math.inf
    if prob.loss == "absolute":
        z = np.clip(z, -s, s)
    if prob.c2 == 0.0:
        if prob.c1 == 0.0:
            # h = 0: h* is the indicator of {0}; project z on null(A^T)
            coefficients = np.linalg.lstsq(A, z, rcond=None)[0]
            z = z - A @ coefficients
            if prob.loss == "absolute":
                big = np.abs(z) > s
                if np.any(big):
                    z = z * float(np.min(s[big] / np.abs(z[big])))
        else:
            v_max = float(np.max(np.abs(A.T @ z)))
            if v_max > prob.c1:
                z = z * (prob.c1 / v_max)
    f_conjugate = float(np.sum(z * z / (4.0 * s))) if prob.loss == "squared" else 0.0
    if prob.c2 > 0.0:
        v = -(A.T @ z)
        h_conjugate = float(np.sum(np.maximum(np.abs(v) - prob.c1, 0.0) ** 2)) / (4.0 * prob.c2)
    else:
        h_conjugate = 0.0
    return -f_conjugate - float(b @ z) - h_conjugate


def _certificate(
    prob: _Problem,
    w: np.ndarray,
    kink_tol: float,
    solver: str,
    status: str,
    refinement: str,
    solver_dual: np.ndarray | None,
) -> Certificate:
    residual, z, n_kinks, max_offset = _stationarity(prob, w, kink_tol)
    candidates = [("subgradient-selection", z)]
    if solver_dual is not None:
        candidates.append(("solver-multiplier", solver_dual))
    best_source, best_value = "none", -math.inf
    for source, candidate in candidates:
        value = _dual_value(prob, candidate)
        if value > best_value:
            best_source, best_value = source, value
    primal = prob.objective(w)
    return Certificate(
        stationarity_residual=residual,
        duality_gap=primal - best_value,
        primal_value=primal,
        dual_value=best_value,
        solver=solver,
        status=status,
        kink_tolerance=kink_tol,
        n_kink_terms=n_kinks,
        max_kink_offset=max_offset,
        dual_source=best_source,
        refinement=refinement,
    )


# ------------------------------------------------------------------------------------------------
# solving and refining


def _available_solvers() -> list[str]:
    import cvxpy as cp

    installed = set(cp.installed_solvers())
    chosen = [name for name in SOLVER_PREFERENCE if name in installed]
    if not chosen:
        raise SolverFailureError(f"none of the solvers {SOLVER_PREFERENCE} is installed; cvxpy reports {sorted(installed)}")
    return chosen


def _solve_cvxpy(prob: _Problem, tight: bool) -> tuple[np.ndarray, np.ndarray | None, str, str]:
    """Solve with CVXPY using exactly the scalings of seeds/004 eq. (1). Returns (w, z, solver,
    status), z = the multiplier of r = A w - b in the sign convention of the dual D(z)."""
    import cvxpy as cp

    n, p = prob.A.shape
    w = cp.Variable(p)
    r = cp.Variable(n)
    link = r == prob.A @ w - prob.b
    if prob.loss == "squared":
        data = cp.sum(cp.multiply(prob.s, cp.square(r)))
    else:
        data = cp.sum(cp.multiply(prob.s, cp.abs(r)))
    objective = data
    if prob.c2 > 0:
        objective = objective + prob.c2 * cp.sum_squares(w)
    if prob.c1 > 0:
        objective = objective + prob.c1 * cp.norm1(w)
    problem = cp.Problem(cp.Minimize(objective), [link])
    failures = []
    for solver in _available_solvers():
        settings = TIGHT_SOLVER_SETTINGS.get(solver, {}) if tight else {}
        try:
            problem.solve(solver=solver, **settings)
        except cp.error.SolverError as exc:
            failures.append(f"{solver}: {exc}")
            continue
        if w.value is not None and problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            # CVXPY's Lagrangian adds +nu^T (r - A w + b); stationarity in r gives nu = -f'(r) = -z.
            dual = None if link.dual_value is None else -np.asarray(link.dual_value, dtype=float).reshape(n)
            return np.asarray(w.value, dtype=float).reshape(p), dual, solver, str(problem.status)
        failures.append(f"{solver}: status {problem.status}")
    raise SolverFailureError(f"no solver returned an optimal point: {'; '.join(failures)}")


def _polish(prob: _Problem, w: np.ndarray, kink_tol: float) -> np.ndarray:
    """Active-set polish: fix the kinks identified at kink_tol and solve the KKT system of the
    remaining smooth problem exactly (module docstring)."""
    A, b, s = prob.A, prob.b, prob.s
    p = w.shape[0]
    free = np.abs(w) > kink_tol if prob.c1 > 0 else np.ones(p, dtype=bool)
    sign_w = np.sign(w[free])
    new = np.zeros(p)
    if not np.any(free):
        return new
    a_free = A[:, free]
    if prob.loss == "squared":
        # normal equations on the support: (2 A_F^T S A_F + 2 c2 I) w_F = 2 A_F^T S b - c1 sign(w_F)
        hessian = 2.0 * a_free.T @ (s[:, None] * a_free) + 2.0 * prob.c2 * np.eye(a_free.shape[1])
        rhs = 2.0 * a_free.T @ (s * b) - prob.c1 * sign_w
        try:
            solution = scipy.linalg.solve(hessian, rhs, assume_a="sym")
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgError, ValueError):
            solution = np.linalg.lstsq(hessian, rhs, rcond=None)[0]
        if not np.all(np.isfinite(solution)):
            solution = np.linalg.lstsq(hessian, rhs, rcond=None)[0]
        new[free] = solution
        return new
    r = A @ w - b
    kink = np.abs(r) <= kink_tol
    constraint = a_free[kink]
    target = b[kink]  # the fixed coordinates are 0
    if prob.c2 > 0:
        # equality-constrained QP: min c2||w_F||^2 + lin^T w_F  s.t.  C w_F = d
        lin = a_free[~kink].T @ (s[~kink] * np.sign(r[~kink])) + prob.c1 * sign_w
        m = constraint.shape[0]
        kkt = np.block([[2.0 * prob.c2 * np.eye(a_free.shape[1]), constraint.T], [constraint, np.zeros((m, m))]])
        rhs = np.concatenate([-lin, target])
        solution = np.linalg.lstsq(kkt, rhs, rcond=None)[0][: a_free.shape[1]]
        new[free] = solution
        return new
    # c2 = 0: minimal-norm correction onto the kink equations C w_F = d
    current = w[free].copy()
    if constraint.shape[0] > 0:
        current = current + np.linalg.lstsq(constraint, target - constraint @ current, rcond=None)[0]
    new[free] = current
    return new


def solve_regression(
    features,
    targets,
    loss: str,
    regularizer: str,
    lam: float,
    l1: float = 0.0,
    l2: float = 0.0,
    *,
    tol: float = DEFAULT_CERTIFICATE_TOLERANCE,
    kink_tol: float = DEFAULT_KINK_TOLERANCE,
) -> GroundTruth:
    """Solve min_w sum_k [ l(X_k, y_k; w)/M_k + (lam/K) R(w) ]  (seeds/004 eq. (1); spec §1.4, §5.5
    step 1) with CVXPY and return the solution with its certificate.

    features: (K, M, P) array or sequence of (M_k, P) arrays; targets: (K, M) or sequence of (M_k,).
    loss: 'squared' (||Xw - y||^2) | 'absolute' (||Xw - y||_1, LAD); regularizer: 'none' | 'l2'
    (||w||^2) | 'elastic_net' (l1||w||_1 + l2||w||^2). lam > 0. tol: the certification tolerance that
    triggers the tight re-solve; the returned GroundTruth is certified at tol only if
    `ground_truth.certified(tol)` says so (never assumed).
    """
    prob = _build_problem(features, targets, loss, regularizer, lam, l1, l2)
    tol = _require_positive("tol", tol)
    kink_tol = _require_positive("kink_tol", kink_tol)

    raw, dual, solver, status = _solve_cvxpy(prob, tight=False)
    candidates = [(raw, _certificate(prob, raw, kink_tol, solver, status, "solver", dual))]

    def add_polished(point: np.ndarray, solver: str, status: str, label: str, dual) -> None:
        current = point
        for _ in range(2):  # a second pass settles a kink set that changed in the first
            polished = _polish(prob, current, kink_tol)
            if not np.all(np.isfinite(polished)):
                return
            candidates.append((polished, _certificate(prob, polished, kink_tol, solver, status, label, dual)))
            current = polished

    add_polished(raw, solver, status, "active-set-polish", dual)
    best = min(candidates, key=lambda item: item[1].score)
    if not best[1].certified(tol):
        tight, tight_dual, tight_solver, tight_status = _solve_cvxpy(prob, tight=True)
        candidates.append((tight, _certificate(prob, tight, kink_tol, tight_solver, tight_status, "tight-resolve", tight_dual)))
        add_polished(tight, tight_solver, tight_status, "tight-resolve+active-set-polish", tight_dual)
        best = min(candidates, key=lambda item: item[1].score)
    solution, certificate = best
    return GroundTruth(
        solution=solution,
        optimal_value=prob.objective(solution),
        certificate=certificate,
        loss=loss,
        regularizer=regularizer,
        lam=float(lam),
        l1=float(l1),
        l2=float(l2),
        raw_solution=raw,
    )


def certify(
    features,
    targets,
    loss: str,
    regularizer: str,
    lam: float,
    solution,
    l1: float = 0.0,
    l2: float = 0.0,
    *,
    kink_tol: float = DEFAULT_KINK_TOLERANCE,
) -> Certificate:
    """The certificate of a GIVEN point (e.g. an algorithm's output) for the same problem as
    `solve_regression`: its stationarity residual and the duality gap against the dual point built
    from its own subgradients. The duality gap bounds F(solution) - F*."""
    prob = _build_problem(features, targets, loss, regularizer, lam, l1, l2)
    kink_tol = _require_positive("kink_tol", kink_tol)
    w = np.asarray(solution, dtype=float)
    p = prob.A.shape[1]
    if w.shape != (p,):
        raise InvalidDataError(f"solution must have shape ({p},) (P features); got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise InvalidDataError("solution must be finite; found NaN/inf")
    return _certificate(prob, w, kink_tol, "none", "not-solved", "given", None)


def ridge_closed_form(features, targets, lam: float) -> np.ndarray:
    """The ridge solution from the normal equations of the same objective (seeds/004 §5.4, Fig. 3):
    F(w) = sum_k ||X_k w - y_k||^2 / M_k + lam ||w||^2, so
    (sum_k X_k^T X_k / M_k + lam I) w = sum_k X_k^T y_k / M_k."""
    lam = _require_positive("lam (lambda of seeds/004 eq. (1))", lam)
    x_blocks, y_blocks = _as_blocks(features, targets)
    p = x_blocks[0].shape[1]
    gram = lam * np.eye(p)
    moment = np.zeros(p)
    for xb, yb in zip(x_blocks, y_blocks):
        gram += xb.T @ xb / xb.shape[0]
        moment += xb.T @ yb / xb.shape[0]
    return scipy.linalg.solve(gram, moment, assume_a="pos")
