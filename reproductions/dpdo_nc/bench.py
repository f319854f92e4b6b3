"""`dpverify bench dpdo-nc`: Algorithm 1 of seeds/002 (L159-L168) on the localization costs of Sec. 5, the
reference (`run_dpdo_nc`, ledger included, regret not tracked: the baselines compute the iterates only)
against the baselines of reproductions/bench/papers.py.

All consume the generator alike: one standard-Laplace block (R, N, d) per round, scaled by sigma_t, as
`laplace_mechanism` draws it. The defaults are the issue's sizes (6 nodes, the three graphs of L487,
d = 2, 1000 replicas); `--grid` runs a lazy ring (a_ii = a_i,i+-1 = 1/3, doubly stochastic) of N nodes
with sensors in d dimensions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpverify.algorithms.core.mirror import SquaredEuclidean
from dpverify.algorithms.core.projections import project_l1_ball
from dpverify.algorithms.dpdo_nc.algorithm import (
    GRADIENT_AT_SENSOR,
    DpdoNcParams,
    Localization,
    Schedule,
    localization_instance,
    paper_schedule,
    run_dpdo_nc,
)
from dpverify.reproductions.bench.papers import TIMING_SEED, Contenders, run_grid, run_paper_bench
from dpverify.reproductions.bench.timing import (
    DEFAULT_REPEATS,
    Target,
    interleaved_seconds,
    load_average,
    paired_ratio,
    verdict_number,
)
from dpverify.reproductions.run.threads import limit_blas_threads

REPLICAS, ITERATIONS = 1000, 100   # the 1000 replicas (6 nodes); per-round times on 100 rounds
LOOP_ITERATIONS = 2                # the loop's time per round, on fewer rounds
# The vectorized baseline runs the reference's rounds: early rounds cost more (sigma_t ~ 1/sqrt(t) sends more points
# out of Omega, to be projected), so a per-round time taken on fewer rounds would be inflated.
CHECK_ITERATIONS = 3
GRID_ITERATIONS = 20
THETA, EPSILON, RADIUS = 4.030198, 1.0, 3.0
SENSOR_RADIUS = 4.0                # grid sensors on a sphere of this radius (as the `distinct` layout)
REGRET_SHARE = Target("regret_tracker_share", "regret tracker / regret-on round", 0.25, at_most=True)   # issue 32


def ring_schedule(agents: int) -> Schedule:
    """A(t) = the lazy ring: a_ii = a_i,i+1 = a_i,i-1 = 1/3, the same every round (B = 1)."""
    shift = np.roll(np.eye(agents), 1, axis=1)
    return Schedule(((np.eye(agents) + shift + shift.T) / 3.0)[None], np.array([0]), 1)


def grid_costs(agents: int, dim: int, horizon: int) -> Localization:
    """Localization costs (the form of L83) with sensors spread on a sphere in d dimensions."""
    rng = np.random.default_rng(0)
    sensors = rng.standard_normal((agents, dim))
    sensors *= SENSOR_RADIUS / np.linalg.norm(sensors, axis=1, keepdims=True)
    target = np.zeros((horizon, dim))
    distances = np.linalg.norm(sensors[None] - target[:, None], axis=-1) + rng.uniform(0, 0.001, (horizon, agents))
    return Localization(sensors, distances, target)


def l1_ball_projection(points: np.ndarray, radius: float) -> np.ndarray:
    """The Euclidean projection of the rows of points (N, d) onto {||x||_1 <= radius} (Duchi, Shalev-Shwartz, Singer
    & Chandra 2008, Fig. 1), in plain numpy; rows inside the ball are kept (points itself when all are)."""
    outside = np.abs(points).sum(axis=1) > radius
    if not outside.any():
        return points
    v = points[outside]
    magnitude = np.abs(v)
    descending = -np.sort(-magnitude, axis=1)
    excess = np.cumsum(descending, axis=1) - radius
    # rho = the largest j with u_j - (sum_{i<=j} u_i - r)/j > 0; once false it stays false (u descends): a count
    rho = np.count_nonzero(descending - excess / np.arange(1, v.shape[1] + 1) > 0, axis=1)
    tau = excess[np.arange(v.shape[0]), rho - 1] / rho
    projected = points.copy()
    projected[outside] = np.sign(v) * np.maximum(magnitude - tau[:, None], 0.0)
    return projected


class Setting:
    def __init__(self, costs: Localization, schedule: Schedule):
        self.costs, self.schedule = costs, schedule
        self.params = DpdoNcParams(EPSILON, THETA, SquaredEuclidean(0.5), RADIUS)
        self.agents, self.dim = costs.sensors.shape

    def reference(self, rng: np.random.Generator, rounds: int, replicas: int) -> np.ndarray:
        return run_dpdo_nc(self.costs, self.schedule, self.params, horizon=rounds, replicas=replicas, rng=rng,
                           dim=self.dim, regret=False).final

    def loop(self, rng: np.random.Generator, rounds: int, replicas: int) -> np.ndarray:
        """One replica, one node at a time: line 4 (q_t^j), line 5 (z_t^i over i's in-neighbours), line 6 with
        phi = scale ||x||^2: P_Omega(z - alpha g / (2 scale)), projecting only a point outside Omega."""
        n, d, params, costs = self.agents, self.dim, self.params, self.costs
        sensors, radius, omega = costs.sensors, params.radius, 2.0 * params.mirror.scale
        x = np.zeros((replicas, n, d))
        for t in range(1, rounds + 1):
            a, sigma, alpha = self.schedule.at(t), params.sigma(t, n, d), params.alpha(t, n)
            senders, distances = [np.flatnonzero(a[i]) for i in range(n)], costs.distances[t - 1]
            xi = rng.laplace(0.0, 1.0, size=x.shape)
            new = np.empty_like(x)
            for r in range(replicas):
                q = x[r] + xi[r] * sigma                                               # line 4, every sender
                for i in range(n):
                    z = a[i, senders[i]] @ q[senders[i]]                               # line 5
                    gap = x[r, i] - sensors[i]
                    norm = math.sqrt(gap @ gap)
                    g = (1.0 - distances[i] / norm) * gap if norm >= GRADIENT_AT_SENSOR else 0.0 * gap
                    v = z - alpha * g / omega                                          # line 6
                    new[r, i] = v if np.abs(v).sum() <= radius else project_l1_ball(v, radius)
            x = new
        return x

    def vectorized(self, rng: np.random.Generator, rounds: int, replicas: int) -> np.ndarray:
        """What a good researcher writes: one replica at a time, its N nodes as one (N, d) array, one product
        A(t) @ Q per round (line 5), the gradient and the step (line 6) inline in numpy; no dpverify kernel is
        called. phi = scale ||x||^2, so line 6 is P_Omega(z - alpha g / omega) with omega = 2 scale."""
        n, d, params, costs = self.agents, self.dim, self.params, self.costs
        sensors, omega = costs.sensors, 2.0 * params.mirror.scale
        x = np.zeros((replicas, n, d))
        for t in range(1, rounds + 1):
            a, alpha, distances = self.schedule.at(t), params.alpha(t, n), costs.distances[t - 1][:, None]
            noise = rng.laplace(0.0, 1.0, size=x.shape) * params.sigma(t, n, d)   # xi_t, every replica (line 4)
            for state, xi in zip(x, noise):
                z = a @ (state + xi)                                                  # lines 4-5
                gap = state - sensors                                                 # grad = (1 - d/r) gap (L83)
                norm = np.sqrt((gap * gap).sum(axis=1, keepdims=True))
                at_sensor = norm < GRADIENT_AT_SENSOR                                 # grad := 0 there (spec P17)
                factor = np.where(at_sensor, 0.0, 1.0 - distances / np.maximum(norm, GRADIENT_AT_SENSOR))
                state[...] = l1_ball_projection(z - alpha * (factor * gap) / omega, params.radius)   # line 6, (7)
        return x

    def limit(self, rng: np.random.Generator, rounds: int, replicas: int) -> None:
        """The floor per round: the Laplace draw, A(t) @ (N, R*d) in one BLAS call, and the localization
        gradient (1 - d/||x - s||)(x - s) as elementwise code, on a state laid out (N, R, d)."""
        n, d = self.agents, self.dim
        state = np.random.default_rng(0).standard_normal((n, replicas, d))
        flat, sensors = state.reshape(n, replicas * d), self.costs.sensors[:, None, :]
        for t in range(1, rounds + 1):
            rng.laplace(0.0, 1.0, size=(n, replicas, d))
            self.schedule.at(t) @ flat
            gap = state - sensors
            gap * (1.0 - self.costs.distances[t - 1][:, None, None] / np.sqrt(np.einsum("nrd,nrd->nr", gap, gap))[..., None])


def _contenders(setting: Setting, replicas: int, iterations: int, what: str) -> Contenders:
    def bind(method: Callable) -> Callable[[np.random.Generator, int], object]:
        return lambda rng, rounds: method(rng, rounds, replicas)

    return Contenders(f"DPDO-NC, {setting.agents} nodes ({what}), d = {setting.dim}, R = {replicas}, {iterations} rounds "
                      f"(loop: {LOOP_ITERATIONS})", replicas,
                      bind(setting.reference), bind(setting.loop), bind(setting.vectorized), bind(setting.limit),
                      rounds=iterations, loop_rounds=LOOP_ITERATIONS, check_rounds=CHECK_ITERATIONS,
                      labels={"reference": "run_dpdo_nc, ledger included, regret off"})


def contenders(replicas: int, iterations: int) -> Contenders:
    setting = Setting(localization_instance(np.random.default_rng(0), max(iterations, CHECK_ITERATIONS)),
                      paper_schedule())
    return _contenders(setting, replicas, iterations, "the three graphs of L487")


def grid_contenders(replicas: int, agents: int, dim: int) -> Contenders:
    setting = Setting(grid_costs(agents, dim, max(GRID_ITERATIONS, CHECK_ITERATIONS)), ring_schedule(agents))
    return _contenders(setting, replicas, GRID_ITERATIONS, "lazy ring")


def run_benchmarks(*, replicas: int | None = None, iterations: int | None = None, repeats: int = DEFAULT_REPEATS,
                   echo: Callable[[str], None] = print) -> dict[str, float]:
    replicas, iterations = replicas or REPLICAS, iterations or ITERATIONS
    results = run_paper_bench(contenders(replicas, iterations), repeats=repeats, echo=echo)
    return results | regret_share(replicas, iterations, repeats, echo)


def regret_share(replicas: int, iterations: int, repeats: int, echo: Callable[[str], None]) -> dict[str, float]:
    """The regret tracker's share of a regret-on round (issue 32 item 3): run_dpdo_nc with regret on and off,
    interleaved, on the same draws; the share (on - off) / on paired within each repeat."""
    setting = Setting(localization_instance(np.random.default_rng(0), iterations), paper_schedule())

    def run(regret: bool) -> Callable[[], object]:
        return lambda: run_dpdo_nc(setting.costs, setting.schedule, setting.params, horizon=iterations,
                                   replicas=replicas, rng=np.random.default_rng(TIMING_SEED), dim=setting.dim,
                                   regret=regret)
    with limit_blas_threads():
        seconds = interleaved_seconds({"on": run(True), "off": run(False)}, repeats=repeats,
                                      description="regret share")
    share = paired_ratio(seconds["on"] - seconds["off"], seconds["on"])
    echo(f"  {REGRET_SHARE.line(share, unit='')} (R = {replicas}, {iterations} rounds, load average {load_average()})")
    return {REGRET_SHARE.key: share.value, f"{REGRET_SHARE.key}_ci_low": share.low,
            f"{REGRET_SHARE.key}_ci_high": share.high, f"{REGRET_SHARE.key}_met": verdict_number(REGRET_SHARE, share)}


def run_grid_benchmarks(*, echo: Callable[[str], None] = print, **options) -> dict[str, float]:
    return run_grid("DPDO-NC", grid_contenders, echo=echo, **options)
