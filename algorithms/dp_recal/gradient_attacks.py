"""Gradient-leakage attacks of seeds/001 Figs. 4, 7, 8, 9, adapted to the paper's linear/logistic model.

The adversary holds an inferred gradient g of one agent (dpverify.algorithms.dp_recal.gradient_inversion) and the model
point x it was taken at, and searches dummy data B' (and a label b' = +-1) whose gradient matches:

* DLG [3] (Zhu et al. 2019): min ||grad(B', b'; x) - g||^2 by L-BFGS from a random dummy.
* Inverting Gradients [19] (Geiping et al. 2020): 1 - cos(grad(B'), g) + tv TV(B'), in the image box.
* GradInversion [20] (Yin et al. 2021): ||grad(B') - g||^2 + tv TV + l2 ||B'||^2 + group consistency
  (G restarts pulled to their mean in later rounds); its label restoration (from the gradient's sign,
  exact for non-negative features: sign(s) = -b when |B^T x| < 1) replaces the label search. A linear
  model has no batch-norm layers, so [20]'s BN-statistics prior does not exist here.

Optimizers as in the cited works, with analytic gradients: DLG by scipy's L-BFGS-B (one solve per
target and label candidate); [19] and [20] by Adam (written here, batched over all blocks, because
Adam is what [19] and [20] use and scipy has none). Losses are divided by ||g||^2 per target (same minimizer, comparable scales). Dummy data live
in the feature box [0, 1] (v1:L562), as [19]'s image-space constraint.

Where the model gradient fixes only the direction of B' (clipped gradient g = c sign(s) B'/||B'||, or
[19]'s scale-free cosine), the adversary applies the public range prior: features are normalized to
[0, 1] and images attain 1 (x/255), so the reconstruction is rescaled to max 1 (recorded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.dp_recal.gradient_inversion import (
    _clip_factor,
    _coefficient,
    record_gradients,
    record_gradients_vjp,
)

ATTACKS = ("dlg", "inverting-gradients", "gradinversion")
LABELS = (-1.0, 1.0)
FEATURE_BOX = (0.0, 1.0)   # v1:L562: all features normalized to [0, 1]
TV_SMOOTHING = 1e-3        # default: sqrt(d^2 + eta^2) - eta makes TV differentiable for L-BFGS
IG_TV_WEIGHT = 1e-2        # default: [19] uses a small TV weight (1e-4 .. 1e-1 by setting); one value, recorded
GI_TV_WEIGHT = 1e-3        # default: [20] alpha_TV order, relative to the normalized matching loss
GI_L2_WEIGHT = 1e-4        # default: [20] alpha_l2 order
GI_GROUP_WEIGHT = 1e-2     # default: [20] alpha_group order
GI_RESTARTS = 4            # default: [20] uses several seeds per group
GI_ROUNDS = 3              # default: rounds of (optimize, re-average the group)
ADAM_LEARNING_RATE = 0.1   # [19]: Adam with step size 0.1 (and its step decay, see _adam)
ADAM_BETAS, ADAM_EPS = (0.9, 0.999), 1e-8  # Adam's standard constants


@dataclass(frozen=True)
class AttackResult:
    reconstruction: np.ndarray        # (T, q) final dummy data (after the range prior if applied)
    labels: np.ndarray                # (T,) the label the attack settled on
    initial: np.ndarray               # (T, q) the dummy init of the chosen candidate
    snapshots: np.ndarray             # (S, T, q) the dummy at `snapshot_iterations`
    snapshot_iterations: np.ndarray   # (S,)
    matching_loss: np.ndarray         # (T,) final normalized loss of the chosen candidate
    rescaled: np.ndarray              # (T,) bool: range prior applied


def total_variation(images: np.ndarray, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Smoothed anisotropic TV (mean over neighbour differences) of (..., q) rows seen as `shape`
    images, and its gradient (..., q)."""
    img = images.reshape(images.shape[:-1] + tuple(shape))
    grad = np.zeros_like(img)
    value = 0.0
    for axis in (-2, -1):
        d = np.diff(img, axis=axis)
        smooth = np.sqrt(d**2 + TV_SMOOTHING**2)
        count = d.shape[-2] * d.shape[-1]
        value = value + (smooth - TV_SMOOTHING).sum(axis=(-2, -1)) / count
        dd = d / smooth / count
        pad = [(0, 0)] * img.ndim
        pad[axis] = (1, 0)
        grad += np.pad(dd, pad)
        pad[axis] = (0, 1)
        grad -= np.pad(dd, pad)
    return value, grad.reshape(images.shape)


class _Objective:
    """Per-block loss and gradient of one attack on blocks (C, T, q): C candidates (labels or restarts)."""

    def __init__(self, attack, targets, models, labels, loss, clip, mask, image_shape, group_center=None):
        self.attack, self.targets, self.models = attack, targets, models
        self.labels = np.asarray(labels, dtype=float)  # (C, T)
        self.loss, self.clip, self.mask, self.image_shape = loss, clip, mask, image_shape
        self.norm2 = ((mask * targets) ** 2).sum(axis=-1)  # (T,)
        self.group_center = group_center

    def block(self, c: int, t: int):
        """The loss of block (c, t) alone, as a function of its dummy row (q,)."""
        sub = _Objective(self.attack, self.targets[t:t + 1], self.models[t:t + 1], self.labels[c:c + 1, t:t + 1],
                         self.loss, self.clip, self.mask[t:t + 1], self.image_shape,
                         None if self.group_center is None else self.group_center[t:t + 1])

        def evaluate(z):
            value, grad = sub.per_block(z[None, None])
            return float(value[0, 0]), grad[0, 0]

        return evaluate

    def per_block(self, dummy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        C, T, q = dummy.shape
        flat = dummy.reshape(C * T, q)
        labels = self.labels.reshape(-1)
        models = np.broadcast_to(self.models, (C, T, q)).reshape(-1, q)
        g = record_gradients(flat, labels, models, self.loss, self.clip).reshape(C, T, q)
        residual = self.mask * (g - self.targets)
        if self.attack == "inverting-gradients":
            mg, mt = self.mask * g, self.mask * self.targets
            nt = np.sqrt(self.norm2)
            ng = np.maximum(np.linalg.norm(mg, axis=-1), 1e-12 * nt)  # a zero dummy gradient has no direction
            cosine = (mg * mt).sum(-1) / (ng * nt)
            value = 1.0 - cosine
            cotangent = -(mt / (ng * nt)[..., None] - cosine[..., None] * mg / (ng**2)[..., None]) * self.mask
        else:
            value = (residual**2).sum(-1) / self.norm2
            cotangent = 2.0 * residual * self.mask / self.norm2[:, None]
        grad = record_gradients_vjp(flat, labels, models, self.loss, self.clip, cotangent.reshape(C * T, q)).reshape(C, T, q)
        if self.attack in ("inverting-gradients", "gradinversion") and self.image_shape is not None:
            weight = IG_TV_WEIGHT if self.attack == "inverting-gradients" else GI_TV_WEIGHT
            tv, tv_grad = total_variation(dummy, self.image_shape)
            value, grad = value + weight * tv, grad + weight * tv_grad
        if self.attack == "gradinversion":
            value = value + GI_L2_WEIGHT * (dummy**2).mean(-1)
            grad = grad + GI_L2_WEIGHT * 2.0 * dummy / q
            if self.group_center is not None:
                diff = dummy - self.group_center
                value = value + GI_GROUP_WEIGHT * (diff**2).mean(-1)
                grad = grad + GI_GROUP_WEIGHT * 2.0 * diff / q
        return value, grad


def _lbfgs(objective: _Objective, start: np.ndarray, iterations: int, record: set[int]) -> tuple[np.ndarray, dict]:
    """DLG's optimizer [3]: L-BFGS (scipy L-BFGS-B), in the feature box: [3] optimizes unconstrained
    dummies, but both models' gradients are invariant under (B, b) -> (-B, -b), a symmetry the public
    range [0, 1] removes. One solver per block (candidate c, target t): the blocks are independent problems, each keeps its
    own curvature pairs and line search."""
    C, T, q = start.shape
    final = np.empty_like(start)
    snaps = {it: np.empty_like(start) for it in record}
    for c in range(C):
        for t in range(T):
            block = objective.block(c, t)
            trajectory = [start[c, t].copy()]
            result = minimize(block, start[c, t], jac=True, method="L-BFGS-B",
                              callback=lambda z, trajectory=trajectory: trajectory.append(z.copy()),
                              bounds=[FEATURE_BOX] * q, options={"maxiter": iterations, "maxfun": 4 * iterations, "ftol": 0.0, "gtol": 1e-14})
            final[c, t] = result.x
            for it in record:  # a solver that stopped early keeps its final point for later snapshots
                snaps[it][c, t] = trajectory[it] if it < len(trajectory) else result.x
    return final, snaps


def _adam(objective: _Objective, start: np.ndarray, iterations: int, record: set[int],
          learning_rate: float) -> tuple[np.ndarray, dict]:
    """[19]'s optimizer (also [20]'s): Adam, step size divided by 10 at 3/8, 5/8, 7/8 of the run, and
    projection onto the image box after every step; batched over all blocks at once."""
    z, first, second = start.copy(), np.zeros_like(start), np.zeros_like(start)
    snaps = {0: z.copy()} if 0 in record else {}
    milestones = [int(iterations * f) for f in (3 / 8, 5 / 8, 7 / 8)]
    for step in range(1, iterations + 1):
        _, grad = objective.per_block(z)
        first = ADAM_BETAS[0] * first + (1 - ADAM_BETAS[0]) * grad
        second = ADAM_BETAS[1] * second + (1 - ADAM_BETAS[1]) * grad**2
        rate = learning_rate * 0.1 ** sum(step > m for m in milestones)
        corrected = (first / (1 - ADAM_BETAS[0]**step)) / (np.sqrt(second / (1 - ADAM_BETAS[1]**step)) + ADAM_EPS)
        z = np.clip(z - rate * corrected, *FEATURE_BOX)
        if step in record:
            snaps[step] = z.copy()
    return z, snaps


def _checked(targets, models, mask, loss, attack, iterations, image_shape):
    targets, models = np.asarray(targets, dtype=float), np.asarray(models, dtype=float)
    if targets.ndim != 2 or models.shape != targets.shape:
        raise InvalidDataError(f"targets and model points must both be (T, q); got {targets.shape}, {models.shape}")
    if attack not in ATTACKS:
        raise InvalidParameterError(f"attack must be one of {ATTACKS}; got {attack!r}")
    if loss not in ("linear", "logistic"):
        raise InvalidParameterError(f"loss must be 'linear' or 'logistic'; got {loss!r}")
    if not (isinstance(iterations, int) and iterations >= 1):
        raise InvalidParameterError(f"iterations must be a positive integer; got {iterations!r}")
    mask = np.ones_like(targets, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if mask.shape != targets.shape:
        raise InvalidDataError(f"mask must be (T, q) = {targets.shape}; got {mask.shape}")
    clean_targets = np.where(mask, targets, 0.0)
    if not np.all(np.isfinite(clean_targets)) or not np.all(np.isfinite(models)):
        raise InvalidDataError("targets (on the mask) and model points must be finite")
    if np.any((mask * clean_targets).any(axis=1) == 0):
        raise InvalidDataError("a target gradient is zero on its mask: nothing to invert")
    if attack != "dlg" and image_shape is not None and int(np.prod(image_shape)) != targets.shape[1]:
        raise InvalidParameterError(f"image_shape {image_shape} does not hold q = {targets.shape[1]} features")
    return clean_targets, models, mask


def run_attack(attack: str, targets, models, *, loss: str, clip: float | None, rng: np.random.Generator,
               iterations: int, snapshot_iterations=(), mask=None, image_shape=None) -> AttackResult:
    """Invert each target gradient (T, q) taken at model points (T, q). mask: (T, q) coordinates of the
    target that are known (the x-leak reveals only some); the loss is computed on them only."""
    targets, models, mask = _checked(targets, models, mask, loss, attack, iterations, image_shape)
    T, q = targets.shape
    record = {int(i) for i in snapshot_iterations if 0 <= int(i) <= iterations} | {0, iterations}
    if attack == "gradinversion":
        final, snaps, labels, losses = _group_consistent(targets, models, mask, loss, clip, rng, iterations, record, image_shape)
    else:
        labels_grid = np.broadcast_to(np.array(LABELS)[:, None], (len(LABELS), T))
        start = rng.uniform(*FEATURE_BOX, (len(LABELS), T, q))
        objective = _Objective(attack, targets, models, labels_grid, loss, clip, mask, image_shape)
        final_all, snaps_all = (_lbfgs(objective, start, iterations, record) if attack == "dlg"
                                else _adam(objective, start, iterations, record, ADAM_LEARNING_RATE))
        losses_all, _ = objective.per_block(final_all)
        pick = losses_all.argmin(axis=0)                       # the label whose dummy matches best (DLG)
        rows = np.arange(T)
        final, labels, losses = final_all[pick, rows], np.array(LABELS)[pick], losses_all[pick, rows]
        snaps = {it: s[pick, rows] for it, s in snaps_all.items()}
    order = sorted(snaps)
    stack = np.stack([snaps[it] for it in order])              # (S, T, q)
    scale_free = np.full(T, attack == "inverting-gradients")
    if clip is not None:
        s, _ = _coefficient(final, labels, models, loss)
        scale_free |= _clip_factor(s, final, clip) < 1.0
    stack = np.where(scale_free[None, :, None], range_prior(stack), stack)
    return AttackResult(stack[-1], labels, stack[0], stack, np.array(order), losses, scale_free)


def range_prior(dummy: np.ndarray) -> np.ndarray:
    """Rescale each row to max FEATURE_BOX[1] (the images' known peak), rows that are all 0 unchanged."""
    peak = dummy.max(axis=-1, keepdims=True)
    return np.where(peak > 0, dummy * (FEATURE_BOX[1] / np.where(peak > 0, peak, 1.0)), dummy)


def gradient_sign_labels(targets: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """[20]'s label restoration adapted: with features >= 0 the gradient is s B, sign(s) = -b for
    |B^T x| < 1 (linear) and always (logistic), so b = -sign(sum of the gradient)."""
    return np.where((mask * targets).sum(axis=1) > 0, -1.0, 1.0)


def _group_consistent(targets, models, mask, loss, clip, rng, iterations, record, image_shape):
    T, q = targets.shape
    labels = gradient_sign_labels(targets, mask)
    dummy = rng.uniform(*FEATURE_BOX, (GI_RESTARTS, T, q))
    per_round = max(1, iterations // GI_ROUNDS)
    center, snaps, done = None, {}, 0
    for round_ in range(GI_ROUNDS):
        objective = _Objective("gradinversion", targets, models, np.broadcast_to(labels, (GI_RESTARTS, T)), loss, clip,
                               mask, image_shape, center)
        local = {it - done for it in record if done <= it <= done + per_round}
        dummy, round_snaps = _adam(objective, dummy, per_round, local, ADAM_LEARNING_RATE)
        snaps.update({done + it: s.mean(axis=0) for it, s in round_snaps.items()})
        done += per_round
        center = dummy.mean(axis=0)                            # group consensus ([20]: no registration needed)
    snaps[max(record)] = center
    final_objective = _Objective("gradinversion", targets, models, labels[None], loss, clip, mask, image_shape)
    losses, _ = final_objective.per_block(center[None])
    snaps = {it: s for it, s in snaps.items() if it in record}
    return center, snaps, labels, losses[0]
