"""A convex, beta-smooth VARIANT of Example 1 (not in the paper) for the two claims whose hypotheses the paper's
own instance does not meet: Remark 1's convex case (L111-L119) and Lemma 6 (25), whose first term needs a finite
beta (L71; Example 1 has none, dpdo-nc/assumption-3).

Variant: Example 1's moving target x_t^0 (L489-L493, same data seed) observed by each sensor as a position fix
y_t^i = x_t^0 + u_t^i, u_t^i ~ U[0, measurement_noise]^d (L497's error scale), with the cost
f_t^i(x) = (c/2) ||x - y_t^i||^2: convex for c >= 0, beta = |c| on R^d (Hessian c I), and on Omega
||grad f|| <= theta = |c| max_(t,i) max over the vertices of Omega of ||v - y_t^i|| (a convex function peaks at a
vertex). The checks use c = 1; c = -1 (concave) is the known-answer case where Remark 1's chain must fail.
Algorithm 1 runs on it unchanged (Fig. 1's schedule, mirror map, privacy levels), batched over replicas.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpverify.algorithms.core.projections import project_l1_ball
from dpverify.algorithms.dpdo_nc.algorithm import localization_instance, paper_schedule, run_dpdo_nc
from dpverify.theory.claims import Measurement
from dpverify.theory.dpdo_nc.instances import params_of
from dpverify.theory.dpdo_nc.numerics import ETA, FIGURE
from dpverify.theory.execution import CheckContext, task_seed_sequence
from dpverify.theory.instruments.stats import SIGNIFICANCE

REPLICAS = 200       # default: Monte-Carlo runs per privacy level (spec P6: 200 at T = 500)
N_BOOT = 2000        # default: bootstrap resamples over runs (the Bonferroni quantiles need a few thousand)
BOOT_SEED = 2025     # fixed seed of the bootstrap
LABEL = "variant (not in the paper): f_t^i(x) = ½||x - y_t^i||², y_t^i = x_t^0 + U[0, 0.001]^2 (Example 1's target)"


@dataclass(frozen=True, eq=False)
class QuadraticTracking:
    """f_t^i(x) = (curvature/2) ||x - y_t^i||^2 with targets y (T, N, d); the Costs protocol of Algorithm 1."""

    targets: np.ndarray
    curvature: float = 1.0

    @property
    def num_agents(self) -> int:
        return self.targets.shape[1]

    @property
    def beta(self) -> float:
        return abs(self.curvature)

    def own_gradient(self, t: int, x: np.ndarray) -> np.ndarray:
        return self.curvature * (x - self.targets[t - 1])

    def node_gradient(self, t: int, i: int, x: np.ndarray) -> np.ndarray:
        return self.curvature * (x - self.targets[t - 1, i])

    def global_gradient(self, t: int, x: np.ndarray) -> np.ndarray:
        """sum_j grad f_t^j(x^i) = c (N x^i - sum_j y_t^j) for points (..., N_i, d)."""
        return self.curvature * (self.num_agents * x - self.targets[t - 1].sum(0))

    def total_value(self, x: np.ndarray, horizon: int) -> np.ndarray:
        """sum_{t<=T} sum_j f_t^j(x_t) for paths x (T, ..., d), by sum_j ||x - y_j||^2 = N||x||^2 - 2<x, sum y> + sum ||y||^2."""
        y = self.targets[:horizon]
        shape = (horizon,) + (1,) * (x.ndim - 2) + (y.shape[-1],)
        squares = (self.num_agents * np.sum(x**2, -1) - 2 * np.sum(x * y.sum(1).reshape(shape), -1)
                   + np.sum(y**2, (-1, -2)).reshape(shape[:-1]))
        return 0.5 * self.curvature * squares.sum(0)

    def minimizer(self, horizon: int, radius: float) -> np.ndarray:
        """x* = argmin_{Omega} sum_{t<=T} sum_j f_t^j ((4), L115): the projection of the mean target when convex
        (the sum is (c N T/2)||x - mean y||^2 + const); a vertex of Omega when concave."""
        if self.curvature >= 0:
            return project_l1_ball(self.targets[:horizon].mean((0, 1)), radius)
        vertices = radius * np.concatenate([np.eye(self.targets.shape[-1]), -np.eye(self.targets.shape[-1])])
        return vertices[np.argmin(self.total_value(np.broadcast_to(vertices, (horizon, *vertices.shape)), horizon))]

    def gradient_bound(self, radius: float) -> float:
        """theta on Omega: |c| max over the vertices v and the targets of ||v - y||."""
        vertices = radius * np.concatenate([np.eye(self.targets.shape[-1]), -np.eye(self.targets.shape[-1])])
        return self.beta * float(np.linalg.norm(vertices[:, None, None] - self.targets[None], axis=-1).max())


def variant_instance(values, curvature: float = 1.0) -> QuadraticTracking:
    rng = np.random.default_rng(values["data_seed"])
    target = localization_instance(rng, values["horizon"], num_agents=values["num_agents"],
                                   measurement_noise=values["measurement_noise"]).target
    errors = rng.uniform(0, values["measurement_noise"], (values["horizon"], values["num_agents"], values["dim"]))
    return QuadraticTracking(target[:, None, :] + errors, curvature)


def variant_runs(context: CheckContext, curvature: float = 1.0) -> dict:
    """Algorithm 1 on the variant at every eps of Fig. 1 (its theta calibrating sigma_t), REPLICAS runs each, kept."""
    def compute():
        values = context.parameters[FIGURE]
        costs = variant_instance(values, curvature)
        theta = costs.gradient_bound(values["radius"])
        runs = {}
        for epsilon in values["epsilons"]:
            params = params_of(values, float(epsilon), values["mirrors"][0], theta=theta)
            rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"dpdo-nc/variant/{curvature}/{epsilon}"))
            runs[f"eps={epsilon:g}"] = (params, run_dpdo_nc(costs, paper_schedule(values["window"]), params,
                                                            horizon=values["horizon"], replicas=REPLICAS, rng=rng,
                                                            dim=values["dim"], keep=True))
        return {"costs": costs, "theta": theta, "runs": runs}
    return context.memoized(f"dpdo-nc/variant-runs/{curvature}", compute)


def _weights(runs: int) -> np.ndarray:
    return np.random.default_rng(BOOT_SEED).multinomial(runs, np.full(runs, 1 / runs), size=N_BOOT) / runs


def _interval(samples: np.ndarray, family: int) -> tuple[float, float]:
    """Bonferroni percentile interval of bootstrap samples: simultaneous 1 - SIGNIFICANCE over `family` intervals."""
    tail = SIGNIFICANCE / (2 * family)
    low, high = np.quantile(samples, [tail, 1 - tail])
    return float(low), float(high)


def _plug_in(weights: np.ndarray, dot: np.ndarray, sums: np.ndarray, radius: float) -> np.ndarray:
    """Plug-in E[R_T^i] of (2) under resampling weights (B, R): (B, N)."""
    return weights @ dot + radius * np.abs(np.einsum("br,rnd->bnd", weights, sums)).max(-1)


def remark_1_chain(costs: QuadraticTracking, run, radius: float) -> dict:
    """The two gaps of Remark 1 (L117) per node at T, with (B, N) bootstrap samples and point values:
    lower = E[sum_t sum_j <grad f_t^j(x_t^i), x_t^i - x*>] - (4), upper = E[R_T^i] (plug-in of (2)) - the middle."""
    horizon = run.iterates.shape[0] - 1
    x_star = costs.minimizer(horizon, radius)
    dot, sums = run.regret_dot[-1], run.regret_sum[-1]                 # (R, N), (R, N, d) at T
    middle = dot - sums @ x_star                                        # (R, N)
    function_regret = costs.total_value(run.iterates[:horizon], horizon) - costs.total_value(x_star[None], horizon)
    weights = np.vstack([np.full(dot.shape[0], 1 / dot.shape[0]), _weights(dot.shape[0])])   # row 0: the point values
    lower = weights @ (middle - function_regret)
    upper = _plug_in(weights, dot, sums, radius) - weights @ middle
    return {"x_star": x_star, "function_regret": function_regret.mean(0), "middle": middle.mean(0),
            "regret": _plug_in(weights[:1], dot, sums, radius)[0], "lower": lower, "upper": upper}


def check_remark_1(context: CheckContext) -> Measurement:
    """Remark 1 (L111-L119), convex costs: (4) <= E[sum_t sum_j <grad f_t^j(x_t^i), x_t^i - x*>] <= E[R_T^i], both
    gaps per node and eps as Bonferroni bootstrap intervals over runs (rule interval_above(0)). On the variant the
    first gap is (N/2) sum_t E||x_t^i - x*||^2 > 0 (curvature 1) and fails for concave costs; the second is
    r ||E S||_inf + <E S, x*>, zero only if x* maximizes the regret's linear part."""
    values, found = context.parameters[FIGURE], variant_runs(context)
    intervals, rows = {}, {}
    family = 2 * values["num_agents"] * len(found["runs"])
    for label, (_, run) in found["runs"].items():
        chain = remark_1_chain(found["costs"], run, values["radius"])
        for i in range(values["num_agents"]):
            intervals[f"{label}, node {i + 1}: middle - (4)"] = _interval(chain["lower"][1:, i], family)
            intervals[f"{label}, node {i + 1}: E[R_T] - middle"] = _interval(chain["upper"][1:, i], family)
        rows[label] = {k: float(chain[k][0]) for k in ("function_regret", "middle", "regret")}
        x_star = chain["x_star"]
    lows = {kind: min(v[0] for k, v in intervals.items() if k.endswith(kind)) for kind in ("(4)", "middle")}
    return Measurement(
        f"{LABEL}, x* = {np.round(x_star, 4).tolist()}, T = {values['horizon']}, {REPLICAS} runs per eps, node 1: " + "; ".join(
            f"{k}: (4) {v['function_regret']:.4g} <= middle {v['middle']:.4g} <= E[R_T^1] {v['regret']:.4g}"
            for k, v in rows.items())
        + f"; smallest lower interval end over all nodes of middle - (4): {lows['(4)']:.4g}, of E[R_T] - middle: "
        f"{lows['middle']:.4g} ({len(intervals)} intervals, simultaneous {1 - SIGNIFICANCE:.0%})",
        {"intervals": intervals, "per_epsilon": rows, "theta": found["theta"]})


def lemma_6_terms(costs: QuadraticTracking, params, run, radius: float) -> dict:
    """The five terms of (25) (L392) per run and node i, computed from the iterates, and its left side maximized over
    x in Omega (the plug-in E[R_T^i], max outside the expectation; the right side does not depend on x)."""
    x, z = run.iterates[:-1], run.mixed                                     # x_1..x_T, z_1..z_T: (T, R, N, d)
    horizon, _, n, _ = x.shape
    noise = run.broadcasts - x                                              # xi_t^j
    m = params.mirror.smoothness
    terms = {
        "beta eta E||x^i - x^j||": costs.beta * ETA * np.linalg.norm(x[:, :, :, None] - x[:, :, None], axis=-1).sum((0, 3)),
        "theta E||x^i - z^j||": params.theta * np.linalg.norm(x[:, :, :, None] - z[:, :, None], axis=-1).sum((0, 3)),
        "N M eta^2/(2 alpha_T)": np.full(x.shape[1:3], n * m * ETA**2 / (2 * run.alphas[-1])),
        "E<grad f^j(x^j), z^j - x_(t+1)^j>": np.repeat(np.einsum("trnd,trnd->r", run.own_gradients, z - run.iterates[1:])[:, None], n, 1),
        "M/(2 alpha_t) E||xi^j||^2": np.repeat(np.einsum("t,trnd->r", m / (2 * run.alphas), noise**2)[:, None], n, 1),
    }
    weights = np.vstack([np.full(x.shape[1], 1 / x.shape[1]), _weights(x.shape[1])])   # row 0: the point values
    right = weights @ sum(terms.values())
    left = _plug_in(weights, run.regret_dot[-1], run.regret_sum[-1], radius)
    return {"terms": {k: v.mean(0) for k, v in terms.items()}, "left": left[0], "gap": right - left}


def check_lemma_6(context: CheckContext) -> Measurement:
    """Lemma 6 (25), L390-L392, on the beta-smooth variant (beta = 1): for node i and the worst x in Omega,
    E[sum_t sum_j <grad f_t^j(x_t^i), x_t^i - x>] <= the five terms, each from the iterates (E over runs), the gap
    right - left per node and eps as a Bonferroni bootstrap interval over runs (rule interval_above(0))."""
    values, found = context.parameters[FIGURE], variant_runs(context)
    intervals, rows = {}, {}
    family = values["num_agents"] * len(found["runs"])
    for label, (params, run) in found["runs"].items():
        parts = lemma_6_terms(found["costs"], params, run, values["radius"])
        for i in range(values["num_agents"]):
            intervals[f"{label}, node {i + 1}"] = _interval(parts["gap"][1:, i], family)
        rows[label] = {"left": float(parts["left"][0]), **{k: float(v[0]) for k, v in parts["terms"].items()}}
    return Measurement(
        f"{LABEL}, beta = {found['costs'].beta:g}, eta = {ETA:g}, theta = {found['theta']:.4g}, T = {values['horizon']}, "
        f"{REPLICAS} runs per eps, node 1: " + "; ".join(
            f"{k}: left (max over x) {v['left']:.4g} <= " + " + ".join(f"{t} {v[t]:.4g}" for t in v if t != "left")
            for k, v in rows.items())
        + f"; smallest lower interval end of right - left over all nodes: {min(v[0] for v in intervals.values()):.4g} "
        f"({len(intervals)} intervals, simultaneous {1 - SIGNIFICANCE:.0%})",
        {"intervals": intervals, "per_epsilon": rows, "theta": found["theta"]})
