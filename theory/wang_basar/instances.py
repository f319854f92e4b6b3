"""Shared set-up of the Wang-Basar checks (seeds/003): the estimation instance built from the
experiment parameters, its stationary points (found numerically, classified by the Hessian), and
batched runs from given starts with destinations counted by stationary point. The runs are our batched
reference, or a user's implementation through the contract (`through_contract`; `dpverify verify`
re-runs the figures' claims on it, theory/door/implementations.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
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
    consensus_moments,
    graph_weights,
    run,
)
from dpverify.algorithms.wang_basar.problems import Estimation
from dpverify.theory.door.implementations import resolve
from dpverify.theory.verify.conformance import generators, independent_iterates

THETA_STAR_PRINTED = np.array([1.3478, 1.0690])    # L572
THETA_SADDLE_PRINTED = np.array([-7.4336, 1.3959])  # L572
ROOT_TOLERANCE = 1e-10        # ||grad F|| at an accepted root
DUPLICATE_RADIUS = 1e-4       # roots closer than this are one stationary point
FD_STEP = 1e-5                # finite-difference step of the Hessian of the (piecewise) extended oracle
ESCAPE_RADIUS = 0.5           # spec P27: T = min{k : ||xbar^k - theta_s|| > 0.5}
DESTINATION_RADIUS = 0.05     # a run "ends at" a stationary point when ||xbar^K - point|| < this
SEARCH_LOW, SEARCH_HIGH = (-12.0, -7.0), (8.0, 7.0)   # B = [-8,4]x[-3,3] and 4 beyond each side (spec Sec. 7.5)
SEARCH_GRID = (41, 29)        # descent starts on [SEARCH_LOW, SEARCH_HIGH]: spacing 0.5
DESCENT_ITERATIONS = 1500     # heavy-ball iterations; convergence is certified per start (DESCENT_TOLERANCE), never assumed
DESCENT_MOMENTUM = 0.9        # Polyak momentum: rate ~ sqrt(0.9) per step in the slowest direction (eigenvalue ~1.16 at theta*)
DESCENT_TOLERANCE = 1e-6      # a descent end point with ||grad F~|| below this has converged
CLUSTER_RADIUS = 1e-3         # converged end points this close to a refined zero belong to it


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


def fd_hessian(gradient: Callable[[np.ndarray], np.ndarray], point: np.ndarray) -> np.ndarray:
    """The symmetrized central-difference Jacobian of a gradient oracle at a point."""
    columns = [(gradient(point + FD_STEP * e) - gradient(point - FD_STEP * e)) / (2 * FD_STEP) for e in np.eye(point.size)]
    hessian = np.array(columns).T
    return (hessian + hessian.T) / 2


def _aggregate(problem: Estimation) -> Estimation:
    """One agent with Y = mean Y_i: its oracle is grad F~ at 1/m the cost, since grad f_i is affine in Y_i (L566)
    and the extension does not depend on i."""
    return replace(problem, measurements=problem.measurements.mean(axis=0, keepdims=True))


def _grid_starts(low, high, grid) -> np.ndarray:
    axes = [np.linspace(lo, hi, n) for lo, hi, n in zip(low, high, grid)]
    return np.stack(np.meshgrid(*axes), -1).reshape(-1, 2)


def _boundary_starts(problem: Estimation, per_edge: int) -> np.ndarray:
    """Starts half a ramp width outside every edge of B: a zero of the extended oracle in the ramp
    (dist < ext_delta_r) is a thin strip that a coarse grid can step over."""
    offset = problem.ext_delta_r / 2
    (x_lo, y_lo), (x_hi, y_hi) = problem.low, problem.high
    xs, ys = np.linspace(x_lo, x_hi, per_edge), np.linspace(y_lo, y_hi, per_edge)
    return np.concatenate([np.stack([np.full_like(ys, x_lo - offset), ys], 1), np.stack([np.full_like(ys, x_hi + offset), ys], 1),
                           np.stack([xs, np.full_like(xs, y_lo - offset)], 1), np.stack([xs, np.full_like(xs, y_hi + offset)], 1)])


def _describe(problem: Estimation, point: np.ndarray) -> StationaryPoint:
    """The certificate of a zero: ||grad F~|| there and the Hessian's eigenvalues (analytic inside B,
    finite differences of the oracle elsewhere), which classify it."""
    inside = bool(np.all(point > np.array(problem.low) + FD_STEP) and np.all(point < np.array(problem.high) - FD_STEP))
    hessian = problem.hessian(point) if inside else fd_hessian(problem.gradient, point)
    eigenvalues = np.linalg.eigvalsh(hessian)
    return StationaryPoint(point, _classify(eigenvalues), eigenvalues, float(problem.objective(point)) if inside else None,
                           float(np.linalg.norm(problem.gradient(point))))


def _refine(gradient: Gradient, point: np.ndarray) -> np.ndarray:
    """hybr from a descent end point; kept only if it lowers ||grad|| (the oracle has kinks on the ramp's edges)."""
    refined = optimize.root(gradient, point, method="hybr", tol=1e-15).x
    return refined if np.linalg.norm(gradient(refined)) < np.linalg.norm(gradient(point)) else point


@dataclass(frozen=True)
class MinimumSearch:
    """Multi-start descent on the extended oracle: every start, where it ended, and the minima found."""

    minima: list[StationaryPoint]
    starts: int
    converged: int            # starts whose end point has ||grad F~|| < DESCENT_TOLERANCE
    basins: list[int]         # starts ending within CLUSTER_RADIUS of each minimum
    other_ends: int           # converged starts ending at a zero that is not a minimum (a saddle's stable curve)
    step: float
    iterations: int


def minimum_search(problem: Estimation, gradient_lipschitz: float, low=SEARCH_LOW, high=SEARCH_HIGH, grid=SEARCH_GRID,
                   iterations: int = DESCENT_ITERATIONS) -> MinimumSearch:
    """Local minima of F~ by gradient descent from every start of a grid on [low, high] (B and 4 beyond each
    side) plus starts just outside each edge of B, batched. The oracle is not the gradient of a function
    outside B, so there is no line search: the step 1/(nu_B + c/delta_r) is below 2/(largest curvature), nu_B
    the gradient-Lipschitz constant on B and c/delta_r that of the ramp. End points are clustered, refined
    (hybr) and certified (_describe); starts that do not converge are counted, never dropped."""
    starts = np.concatenate([_grid_starts(low, high, grid), _boundary_starts(problem, grid[1])])
    step = 1.0 / (gradient_lipschitz + problem.ext_c / problem.ext_delta_r)
    aggregate = _aggregate(problem)
    ends, velocity = starts.copy(), np.zeros_like(starts)
    for _ in range(iterations):   # heavy ball: condition number ~ (c/delta_r)/1.16 ~ 500 makes plain descent slow
        velocity = DESCENT_MOMENTUM * velocity - step * aggregate.gradient(ends)
        ends += velocity
    norms = np.linalg.norm(problem.gradient(ends), axis=1)
    converged = norms < DESCENT_TOLERANCE
    found: list[StationaryPoint] = []
    owner = np.full(len(ends), -1)
    for i in np.flatnonzero(converged):
        if owner[i] >= 0:
            continue
        point = _describe(problem, _refine(problem.gradient, ends[i]))
        near = converged & (np.linalg.norm(ends - point.location, axis=1) < CLUSTER_RADIUS)
        owner[near] = len(found)
        found.append(point)
    minima = [(p, int(np.sum(owner == j))) for j, p in enumerate(found) if p.kind == "minimum"]
    minima.sort(key=lambda item: tuple(item[0].location))
    return MinimumSearch([p for p, _ in minima], len(starts), int(converged.sum()), [n for _, n in minima],
                         int(sum(np.sum(owner == j) for j, p in enumerate(found) if p.kind != "minimum")), step, iterations)


def stationary_points(problem: Estimation, low=SEARCH_LOW, high=SEARCH_HIGH, grid=(21, 15),
                      search: MinimumSearch | None = None) -> list[StationaryPoint]:
    """Every zero of the gradient oracle found by multi-start root finding (scipy hybr) from a grid of
    starts on [low, high] and just outside each edge of B, together with the minima of `search` (descent
    reaches zeros in the ramp that hybr, a Newton method, steps over at its kinks); deduplicated and
    classified by the eigenvalues of the Hessian (analytic inside B, finite differences elsewhere)."""
    found: list[np.ndarray] = [p.location for p in (search.minima if search else [])]
    gradient = _aggregate(problem).gradient
    for start in np.concatenate([_grid_starts(low, high, grid), _boundary_starts(problem, grid[1])]):  # start-up, not a hot path
        point = optimize.root(gradient, start, method="hybr", tol=1e-13).x
        if np.linalg.norm(problem.gradient(point)) < ROOT_TOLERANCE and not any(np.linalg.norm(point - q) < DUPLICATE_RADIUS for q in found):
            found.append(point)
    return [_describe(problem, point) for point in sorted(found, key=lambda p: tuple(p))]


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
    params = parameters(values, sigma_var, graph=graph, noise_draw=noise_draw, lam_override=lam_override)
    initial = initial_states(rng, values, start, replicas)
    if implementation is None or params.algorithm == 1:
        trajectory = run(problem.local_gradients, initial, params, iterations, rng)
    else:
        trajectory = through_contract(implementation, problem.local_gradients, initial, params, iterations, rng,
                                      agent_oracle=problem.agent_gradient)
    return {"mean": trajectory.mean, "consensus": trajectory.consensus, "final": trajectory.final}


def parameters(values: dict[str, Any], sigma_var: float, *, graph: str | None = None, noise_draw: str = "per_agent",
               lam_override: float | None = None) -> WangBasarParams:
    """Algorithm 2 (Algorithm 1 when sigma_var == 0) with the experiment's W and stepsizes; lam_override: the constant
    stepsize lambda^k = lam_override for every k (switch 10^9, past any horizon; outside Theorems 1-2's conditions)."""
    weights = graph_weights(graph or values["graph"], values["num_agents"])
    sched = schedule(values) if lam_override is None else StepSchedule(lam_override, 10**9, 1.0, 1.0)
    return WangBasarParams(weights, sched, 1 if sigma_var == 0 else 2, float(sigma_var), noise_draw,
                           allow_outside_conditions=lam_override is not None)


def initial_states(rng: np.random.Generator, values: dict[str, Any], start: str, replicas: int) -> np.ndarray:
    """x^1 of `replicas` runs, (R, m, 2), for a start of `simulate`."""
    problem = estimation(values)
    m = values["num_agents"]
    if start == "uniform":
        return rng.uniform(problem.low, problem.high, size=(replicas, m, 2))
    if start == "standard_normal":   # variant of spec P2: x_i ~ N(0, I) i.i.d.
        return rng.standard_normal((replicas, m, 2))
    point = THETA_SADDLE_PRINTED if start == "saddle_printed" else refined_saddle(problem)
    return np.broadcast_to(point, (replicas, m, 2)).copy()


def through_contract(implementation: Callable, oracle: Gradient, initial: np.ndarray, params: WangBasarParams,
                     iterations: int, rng: np.random.Generator, snapshot_at=(),
                     agent_oracle: Callable[[int, np.ndarray], np.ndarray] | None = None) -> Trajectory:
    """What `run(oracle, initial, params, iterations, rng, snapshot_at=...)` returns, from R = len(initial) runs
    of a user's implementation of Algorithm 2 (contract.py): replica r starts at initial[r] (N, d) and runs
    iterations - 1 rounds (x^1..x^K, as `run`), with its own Generator spawned from one seed drawn from `rng`.
    agent_oracle: `oracle` one agent at a time, for the setting's per-agent gradient (contract.setting_of)."""
    iterates = contract_iterates(implementation, oracle, initial, params, iterations, rng, agent_oracle)
    return Trajectory.of_iterates(iterates, snapshot_at)


def contract_iterates(implementation: Callable, oracle: Gradient, initial: np.ndarray, params: WangBasarParams,
                      iterations: int, rng: np.random.Generator,
                      agent_oracle: Callable[[int, np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """x^1..x^K of the runs of `through_contract`, (K, R, N, d), as the implementation returned them (not checked
    for divergence: a diverging run is a finding of the checks that read it)."""
    noise_seed = int(rng.integers(2**63 - 1))
    settings = [contract.setting_of(oracle, params, start, iterations - 1, agent_oracle) for start in initial]
    return independent_iterates(implementation, settings, generators(noise_seed, initial.shape[0]), contract.shapes)


@dataclass(frozen=True)
class RunSummary:
    """What the checks read of R runs of K iterations, the reference's or an implementation's (computed by the same
    `summarize`): xbar^K, the escape time T from a saddle (escape_times; NaN without a saddle), and
    ||x^k - 1 xbar^k||^2 at the iterations `rows` (0-based: row k - 1 holds x^k)."""

    final_mean: np.ndarray   # (R, d)
    escape: np.ndarray       # (R,)
    consensus: np.ndarray    # (len(rows), R)
    rows: tuple[int, ...]
    iterations: int

    def consensus_at(self, row: int) -> np.ndarray:
        return self.consensus[self.rows.index(row)]


def summarize(mean: np.ndarray, consensus: np.ndarray, saddle: np.ndarray | None, rows) -> RunSummary:
    """The summary of runs given as xbar^k (K, R, d) and ||x^k - 1 xbar^k||^2 (K, R)."""
    rows = tuple(int(r) for r in rows)
    escape = np.full(mean.shape[1], np.nan) if saddle is None else escape_times(mean, saddle)
    return RunSummary(mean[-1].copy(), escape, consensus[list(rows)], rows, mean.shape[0])


def summary_frame(summary: RunSummary) -> pd.DataFrame:
    """A summary as a task's result: one row per run."""
    columns = {f"final_mean_{i}": summary.final_mean[:, i] for i in range(summary.final_mean.shape[1])}
    columns.update({"escape": summary.escape, **{f"consensus_{row}": c for row, c in zip(summary.rows, summary.consensus)}})
    return pd.DataFrame(columns)


def summary_of(frames: list[pd.DataFrame], rows, iterations: int) -> RunSummary:
    """The summary of the runs of several tasks' `summary_frame`s, in order."""
    frame = pd.concat(frames, ignore_index=True)
    rows = tuple(int(r) for r in rows)
    final = frame[[c for c in frame.columns if c.startswith("final_mean_")]].to_numpy()
    consensus = frame[[f"consensus_{row}" for row in rows]].to_numpy().T.reshape(len(rows), len(frame))
    return RunSummary(final, frame["escape"].to_numpy(), np.ascontiguousarray(consensus), rows, iterations)


def contract_summary(rng: np.random.Generator, *, values: dict[str, Any], initial: np.ndarray, sigma_var: float,
                     iterations: int, lam_override: float | None, rows: list[int], implementation: Any) -> pd.DataFrame:
    """Task: the summary (escape from the refined saddle) of runs of a user's Algorithm 2 (`implementation`, the value
    of theory/door/implementations.py) on the estimation instance from `initial` (R, m, 2), one Generator per run spawned
    from `rng`; `values` holds the instance's and the schedule's parameters (`parameters`)."""
    problem = estimation(values)
    params = parameters(values, sigma_var, lam_override=lam_override)
    iterates = contract_iterates(resolve(implementation), problem.local_gradients, np.asarray(initial, dtype=float), params,
                                 iterations, rng, agent_oracle=problem.agent_gradient)
    with np.errstate(all="ignore"):   # a diverging run: NaN/inf, which the checks count as not converged
        mean, consensus = consensus_moments(iterates)
    return summary_frame(summarize(mean, consensus, refined_saddle(problem), rows))


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
