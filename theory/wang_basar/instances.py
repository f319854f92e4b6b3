"""Shared set-up of the Wang-Basar checks (seeds/003): the estimation instance built from the
experiment parameters, its stationary points (found numerically, classified by the Hessian), and
batched runs from given starts with destinations counted by stationary point. The runs are our batched
reference, or a user's implementation through the contract (`through_contract`; `dpverify verify`
re-runs the figures' claims on it, theory/implementations.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize

from dpverify.algorithms.wang_basar import contract
from dpverify.algorithms.wang_basar.algorithm import (
    Gradient,
    StepSchedule,
    Trajectory,
    WangBasarParams,
    graph_weights,
    run,
)
from dpverify.algorithms.wang_basar.problems import Estimation
from dpverify.theory.conformance import generators, independent_iterates

THETA_STAR_PRINTED = np.array([1.3478, 1.0690])    # L572
THETA_SADDLE_PRINTED = np.array([-7.4336, 1.3959])  # L572
ROOT_TOLERANCE = 1e-10        # ||grad F|| at an accepted root
DUPLICATE_RADIUS = 1e-4       # roots closer than this are one stationary point
FD_STEP = 1e-5                # finite-difference step of the Hessian of the (piecewise) extended oracle
ESCAPE_RADIUS = 0.5           # spec P27: T = min{k : ||xbar^k - theta_s|| > 0.5}
DESTINATION_RADIUS = 0.05     # a run "ends at" a stationary point when ||xbar^K - point|| < this


def estimation(values: dict[str, Any]) -> Estimation:
    return Estimation.as_printed(kappa=values["kappa"], extension=values["extension"], ext_c=values["ext_c"],
                                 ext_delta_r=values["ext_delta_r"])


def schedule(values: dict[str, Any]) -> StepSchedule:
    return StepSchedule(values["lam0"], values["switch"], values["lam_scale"], 1.0)


@dataclass(frozen=True)
class StationaryPoint:
    location: np.ndarray
    kind: str                 # minimum, saddle, maximum
    eigenvalues: np.ndarray
    value: float | None       # F at the point when it lies in B
    gradient_norm: float


def _classify(eigenvalues: np.ndarray) -> str:
    if np.all(eigenvalues > 0):
        return "minimum"
    if np.all(eigenvalues < 0):
        return "maximum"
    return "saddle"


def _fd_hessian(problem: Estimation, point: np.ndarray) -> np.ndarray:
    columns = [(problem.gradient(point + FD_STEP * e) - problem.gradient(point - FD_STEP * e)) / (2 * FD_STEP)
               for e in np.eye(point.size)]
    hessian = np.array(columns).T
    return (hessian + hessian.T) / 2


def stationary_points(problem: Estimation, low=(-12.0, -7.0), high=(8.0, 7.0), grid=(21, 15)) -> list[StationaryPoint]:
    """Every zero of the gradient oracle found by multi-start root finding (scipy hybr) from a grid of
    starts on [low, high] (including starts just outside the box), deduplicated, classified by the
    eigenvalues of the Hessian (analytic inside B, finite differences of the oracle elsewhere)."""
    starts = np.stack(np.meshgrid(np.linspace(low[0], high[0], grid[0]), np.linspace(low[1], high[1], grid[1])), -1).reshape(-1, 2)
    found: list[np.ndarray] = []
    for start in starts:  # a start-up computation, not a hot path: one small root problem each
        solution = optimize.root(problem.gradient, start, method="hybr", tol=1e-13)
        point = solution.x
        if np.linalg.norm(problem.gradient(point)) < ROOT_TOLERANCE and not any(np.linalg.norm(point - q) < DUPLICATE_RADIUS for q in found):
            found.append(point)
    points = []
    for point in sorted(found, key=lambda p: tuple(p)):
        inside = bool(np.all(point > np.array(problem.low) + FD_STEP) and np.all(point < np.array(problem.high) - FD_STEP))
        hessian = problem.hessian(point) if inside else _fd_hessian(problem, point)
        eigenvalues = np.linalg.eigvalsh(hessian)
        points.append(StationaryPoint(point, _classify(eigenvalues), eigenvalues,
                                      float(problem.objective(point)) if inside else None,
                                      float(np.linalg.norm(problem.gradient(point)))))
    return points


def nearest(points: list[StationaryPoint], ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of the nearest stationary point of each end point (R, d) and the distance to it."""
    locations = np.array([p.location for p in points])
    distances = np.linalg.norm(ends[:, None, :] - locations[None], axis=-1)
    return distances.argmin(axis=1), distances.min(axis=1)


def simulate(rng: np.random.Generator, *, values: dict[str, Any], start: str, sigma_var: float, replicas: int,
             iterations: int, graph: str | None = None, noise_draw: str = "per_agent", lam_override: float | None = None,
             implementation: Callable | None = None) -> dict[str, np.ndarray]:
    """Runs of Algorithm 2 (Algorithm 1 when sigma_var == 0) on the estimation instance.
    start: 'uniform' (x_i ~ U(B) i.i.d., spec P2), 'saddle_printed' (L572's 4 decimals), or
    'saddle_refined' (the root refined to machine precision, spec P3), 'standard_normal' (P2 variant).
    implementation: None, our batched reference; else a user's Algorithm 2 (contract.py), one run per replica
    from the same starts (`through_contract`). Algorithm 1, the noise-free baseline, is always ours."""
    problem = estimation(values)
    weights = graph_weights(graph or values["graph"], values["num_agents"])
    sched = schedule(values) if lam_override is None else StepSchedule(lam_override, 10**9, 1.0, 1.0)
    params = WangBasarParams(weights, sched, 1 if sigma_var == 0 else 2, float(sigma_var), noise_draw,
                             allow_outside_conditions=lam_override is not None)
    m = values["num_agents"]
    if start == "uniform":
        initial = rng.uniform(problem.low, problem.high, size=(replicas, m, 2))
    elif start == "standard_normal":   # variant of spec P2: x_i ~ N(0, I) i.i.d.
        initial = rng.standard_normal((replicas, m, 2))
    else:
        point = THETA_SADDLE_PRINTED if start == "saddle_printed" else refined_saddle(problem)
        initial = np.broadcast_to(point, (replicas, m, 2)).copy()
    if implementation is None or params.algorithm == 1:
        trajectory = run(problem.local_gradients, initial, params, iterations, rng)
    else:
        trajectory = through_contract(implementation, problem.local_gradients, initial, params, iterations, rng,
                                      agent_oracle=problem.agent_gradient)
    return {"mean": trajectory.mean, "consensus": trajectory.consensus, "final": trajectory.final}


def through_contract(implementation: Callable, oracle: Gradient, initial: np.ndarray, params: WangBasarParams,
                     iterations: int, rng: np.random.Generator, snapshot_at=(),
                     agent_oracle: Callable[[int, np.ndarray], np.ndarray] | None = None) -> Trajectory:
    """What `run(oracle, initial, params, iterations, rng, snapshot_at=...)` returns, from R = len(initial) runs
    of a user's implementation of Algorithm 2 (contract.py): replica r starts at initial[r] (N, d) and runs
    iterations - 1 rounds (x^1..x^K, as `run`), with its own Generator spawned from one seed drawn from `rng`.
    agent_oracle: `oracle` one agent at a time, for the setting's per-agent gradient (contract.setting_of)."""
    noise_seed = int(rng.integers(2**63 - 1))
    settings = [contract.setting_of(oracle, params, start, iterations - 1, agent_oracle) for start in initial]
    iterates = independent_iterates(implementation, settings, generators(noise_seed, initial.shape[0]), contract.shapes)
    return Trajectory.of_iterates(iterates, snapshot_at)


def refined_saddle(problem: Estimation) -> np.ndarray:
    return optimize.root(problem.gradient, THETA_SADDLE_PRINTED, method="hybr", tol=1e-15).x


def refined_minimum(problem: Estimation) -> np.ndarray:
    return optimize.root(problem.gradient, THETA_STAR_PRINTED, method="hybr", tol=1e-15).x


def destination_table(points: list[StationaryPoint], ends: np.ndarray) -> pd.DataFrame:
    index, distance = nearest(points, ends)
    rows = []
    for i, point in enumerate(points):
        hit = (index == i) & (distance < DESTINATION_RADIUS)
        rows.append({"point": f"({point.location[0]:.4f}, {point.location[1]:.4f})", "kind": point.kind,
                     "runs": int(hit.sum())})
    rows.append({"point": "none within radius", "kind": "-", "runs": int((distance >= DESTINATION_RADIUS).sum())})
    return pd.DataFrame(rows)


def escape_times(mean: np.ndarray, saddle: np.ndarray) -> np.ndarray:
    """T = min{k : ||xbar^k - theta_s|| > ESCAPE_RADIUS} per run (k = 1..K), np.inf when never."""
    escaped = np.linalg.norm(mean - saddle, axis=-1) > ESCAPE_RADIUS
    first = np.argmax(escaped, axis=0) + 1.0
    return np.where(escaped.any(axis=0), first, np.inf)
