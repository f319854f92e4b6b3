"""What an eavesdropper learns from a RECAL / DP-RECAL transcript (seeds/001 App. A, v1:L695-L705).

Threat model (v1 §II-B, L59-L65): the adversary reads and stores everything passed between agents
(the baton (u~^{k+1}, x^{k+1}) and who sent it) and knows the structure of the model (alpha_i,
beta, the prox of r, the clipping level). It does not interfere.

Two inferences, both recursive over the iterations and batched over replicas:

* `infer_gradients` — the paper's own adversary (App. A). From the public lambda^1 = 0 and y^1
  (assumed known: App. A's induction starts from it; recorded), it recovers at iteration k
      lam_half = lam_i + beta (x^k - y_i^k)                                   (7a)
      lam_i+   = u^{k+1} - u^k + lam_i                                        (7e) with u~ for u
      y_i+     = y_i + x^{k+1} - x^k + (lam_half - lam_i+) / beta              (7d)
      grad     = (y_i - y_i+) / alpha_i + lam_half                            (7c)
  Under DP-RECAL the intercepted u~ replaces u, so the noise eps^k enters every quantity.

* `infer_gradients_from_x` — x^{k+1} is passed WITHOUT noise (v1:L264). The adversary knows its
  argument up to y_i^k: x^{k+1} = prox_{nr}(x^k - u~^k - beta (x^k - y_i^k)) ((7a)+(7b), u~^k is the
  message the holder received, read exactly by the eavesdropper). The prox
  soft(v, n lasso) / (1 + 2 n ridge) is invertible on every coordinate it does not set to 0, so
  y_i^k is recovered exactly there, noise-free. Two consecutive activations of agent i give
  y_i^k and y_i^{k+1}; (7a), (7c), (7d) then give the gradient and lambda_i, exactly, on the
  coordinates revealed at both (NaN elsewhere).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.dp_recal.algorithm import RelayRun
from dpverify.algorithms.dp_recal.composite import CompositeProblem

PIXEL_PEAK = 1.0  # features are normalized to [0, 1] (v1:L562), so the PSNR peak is 1


@dataclass(frozen=True)
class InferredGradients:
    """gradients[k-1] = the adversary's grad f_{i_k}(y_{i_k}^k), model_points[k-1] = its y_{i_k}^k, for
    k = 1..K (axis 0) and replicas (axis 1); revealed = coordinates known (all True for App. A)."""

    gradients: np.ndarray      # (K, R, q), NaN where not revealed
    model_points: np.ndarray   # (K, R, q), NaN where not revealed
    holders: np.ndarray        # (K, R)
    counts: np.ndarray         # (K, R): tau_{i_k}(k), the holder's activation number
    revealed: np.ndarray       # (K, R, q) bool


def _checked_transcript(run: RelayRun, alpha, beta: float) -> tuple[np.ndarray, float]:
    if run.u_sent.shape[0] == 0:
        raise InvalidDataError("the run kept no transcript (keep_transcript=False): nothing was intercepted")
    if not np.all(run.active):
        raise InvalidDataError("the run has frozen replicas (a plf_target stopped them): give a horizon-only run")
    n = run.y_initial.shape[1]
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (n,))
    if np.any(~np.isfinite(alpha)) or np.any(alpha <= 0):
        raise InvalidParameterError(f"alpha must be positive per-agent stepsizes (7c); got {alpha!r}")
    if not (np.isfinite(beta) and beta > 0):
        raise InvalidParameterError(f"beta must be > 0 (Algorithm 1 input); got {beta!r}")
    return alpha, float(beta)


def _received(run: RelayRun, u_initial: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """x^k and u~^k for k = 1..K+1 as the eavesdropper sees them: (K+1, R, q). x^1 = y^1's public
    start (run.x_initial); u~^1 = u^1 = 0 (spec §6) unless given."""
    u1 = np.zeros_like(run.x_initial) if u_initial is None else np.broadcast_to(u_initial, run.x_initial.shape)
    return (np.concatenate([run.x_initial[None], run.x_sent]), np.concatenate([u1[None], run.u_sent]))


def infer_gradients(run: RelayRun, alpha, beta: float, u_initial: np.ndarray | None = None) -> InferredGradients:
    """The App. A adversary (v1:L699-L703) on the intercepted transcript; exact for RECAL."""
    alpha, beta = _checked_transcript(run, alpha, beta)
    x, u = _received(run, u_initial)
    K, R, q = run.x_sent.shape
    rows = np.arange(R)
    y_known = run.y_initial.copy()            # y^1: public start (App. A induction hypothesis)
    lam_known = np.zeros_like(y_known)        # lambda^1 = 0 (Algorithm 1 line 1)
    gradients, points = np.empty((K, R, q)), np.empty((K, R, q))
    for k in range(K):
        holder = run.holders[k]
        y_i, lam_i = y_known[rows, holder], lam_known[rows, holder]
        lam_half = lam_i + beta * (x[k] - y_i)                                   # (7a)
        lam_next = u[k + 1] - u[k] + lam_i                                       # (7e)
        y_next = y_i + x[k + 1] - x[k] + (lam_half - lam_next) / beta            # (7d)
        gradients[k] = (y_i - y_next) / alpha[holder, None] + lam_half           # (7c)
        points[k] = y_i
        y_known[rows, holder], lam_known[rows, holder] = y_next, lam_next
    return InferredGradients(gradients, points, run.holders, run.counts, np.ones((K, R, q), dtype=bool))


def invert_prox(problem: CompositeProblem, z: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The v with prox_{scale r}(v) = z, where z != 0 (elsewhere v is only known to lie in
    [-scale lasso, scale lasso]): v = (1 + 2 scale ridge) z + scale lasso sign(z) (spec §2.6)."""
    revealed = (z != 0) | (problem.lasso == 0)
    v = (1.0 + 2.0 * scale * problem.prox_ridge) * z + scale * problem.lasso * np.sign(z)
    return v, revealed


def infer_gradients_from_x(run: RelayRun, problem: CompositeProblem, alpha, beta: float,
                           u_initial: np.ndarray | None = None) -> InferredGradients:
    """Noise-free gradients from the un-noised x^{k+1} (module docstring). The gradient of an activation
    is completed at the holder's NEXT activation (which reveals y_i^{k+1}); activations not followed
    by another one within the transcript stay NaN. lambda^1 = 0 and y^1 are known as in App. A."""
    alpha, beta = _checked_transcript(run, alpha, beta)
    if problem.smooth_ridge:
        raise InvalidParameterError("infer_gradients_from_x reads prox_{nr} of mapping M1; got mapping M2")
    x, u = _received(run, u_initial)
    K, R, q = run.x_sent.shape
    n = run.y_initial.shape[1]
    rows = np.arange(R)
    lam = np.zeros((R, n, q))
    lam_known = np.ones((R, n, q), dtype=bool)
    y = run.y_initial.copy()
    y_known = np.ones((R, n, q), dtype=bool)
    last = np.full((R, n), -1)                 # the iteration index of each agent's pending activation
    gradients = np.full((K, R, q), np.nan)
    points = np.full((K, R, q), np.nan)
    revealed = np.zeros((K, R, q), dtype=bool)
    for k in range(K):
        holder = run.holders[k]
        v, shown = invert_prox(problem, x[k + 1], n)
        # (7a)+(7b): v = x^k - u~^k - beta (x^k - y_i^k)  =>  y_i^k = x^k - (x^k - u~^k - v) / beta
        y_now = x[k] - (x[k] - u[k] - v) / beta
        previous = last[rows, holder]
        pending = previous >= 0
        if np.any(pending):
            r, p = rows[pending], previous[pending]
            h = holder[pending]
            y_prev, known_prev = y[r, h], y_known[r, h] & lam_known[r, h]
            lam_half = lam[r, h] + beta * (x[p, r] - y_prev)                                      # (7a)
            both = known_prev & shown[pending]
            gradients[p, r] = np.where(both, (y_prev - y_now[pending]) / alpha[h, None] + lam_half, np.nan)  # (7c)
            revealed[p, r] = both
            lam[r, h] = lam_half + beta * ((x[p + 1, r] - x[p, r]) - (y_now[pending] - y_prev))      # (7d)
            lam_known[r, h] = both
        # y_i^k: recovered now where shown; at a first activation y^1 is already known everywhere
        first = ~pending
        y_known[rows, holder] = np.where(first[:, None], y_known[rows, holder] | shown, shown)
        y[rows, holder] = np.where(first[:, None] & ~shown, y[rows, holder], y_now)
        points[k] = np.where(y_known[rows, holder], y[rows, holder], np.nan)
        last[rows, holder] = k
    return InferredGradients(gradients, points, run.holders, run.counts, revealed)


def first_activations(holders: np.ndarray, num_agents: int) -> np.ndarray:
    """Iteration index (0-based) of each agent's first activation per replica: (R, n), -1 if never."""
    K, R = holders.shape
    hit = holders[..., None] == np.arange(num_agents)                     # (K, R, n)
    return np.where(hit.any(axis=0), hit.argmax(axis=0), -1)


# ----- the per-record model gradient the attacks invert (paper's linear and logistic models) -----
def record_gradients(features: np.ndarray, labels: np.ndarray, model: np.ndarray, loss: str,
                     clip: float | None = None) -> np.ndarray:
    """grad of loss(B^T x, b) w.r.t. x at model point x for each record: (T, q). linear: (B^T x - b) B;
    logistic: -b sigmoid(-b B^T x) B (spec §5.5); clipped to norm <= clip if given (spec §6)."""
    coefficient, _ = _coefficient(features, labels, model, loss)
    scale = _clip_factor(coefficient, features, clip)
    return (coefficient * scale)[:, None] * features


def _coefficient(features, labels, model, loss):
    """d loss / d margin and its derivative w.r.t. the margin B^T x."""
    margin = np.einsum("tq,tq->t", features, model)
    if loss == "linear":
        return margin - labels, np.ones_like(margin)
    if loss == "logistic":
        p = expit(-labels * margin)
        return -labels * p, p * (1.0 - p)
    raise InvalidParameterError(f"loss must be 'linear' or 'logistic'; got {loss!r}")


def _clip_factor(coefficient, features, clip):
    if clip is None:
        return np.ones_like(coefficient)
    norms = np.abs(coefficient) * np.linalg.norm(features, axis=1)
    return np.minimum(1.0, clip / np.maximum(norms, np.finfo(float).tiny))


def record_gradients_vjp(features, labels, model, loss: str, clip: float | None, cotangent: np.ndarray) -> np.ndarray:
    """(d record_gradients / d features)^T cotangent, row by row: (T, q). Unclipped g = s B with
    s = s(B^T x): J^T r = s r + s'(B^T r) x. Clipped (|s| ||B|| > c): g = c sign(s) B/||B||:
    J^T r = c sign(s) (r - B^ (B^ . r)) / ||B||."""
    s, ds = _coefficient(features, labels, model, loss)
    inner = np.einsum("tq,tq->t", features, cotangent)
    unclipped = s[:, None] * cotangent + (ds * inner)[:, None] * model
    if clip is None:
        return unclipped
    squared = np.maximum(np.einsum("tq,tq->t", features, features), np.finfo(float).tiny)  # a zero record is never clipped
    norm = np.sqrt(squared)
    clipped_rows = np.abs(s) * norm > clip
    projected = cotangent - features * (inner / squared)[:, None]
    clipped = (clip * np.sign(s) / norm)[:, None] * projected
    return np.where(clipped_rows[:, None], clipped, unclipped)


# ----- image-quality metrics -----
def mse(reconstruction: np.ndarray, original: np.ndarray) -> np.ndarray:
    """Mean squared error over the last axis."""
    return np.mean((np.asarray(reconstruction) - np.asarray(original)) ** 2, axis=-1)


def psnr(reconstruction: np.ndarray, original: np.ndarray, peak: float = PIXEL_PEAK) -> np.ndarray:
    """10 log10(peak^2 / MSE) in dB (inf for an exact reconstruction)."""
    with np.errstate(divide="ignore"):
        return 10.0 * np.log10(peak**2 / mse(reconstruction, original))
