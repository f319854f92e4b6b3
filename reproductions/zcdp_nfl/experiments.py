"""Figures 1-3 of zCDP-NFL (seeds/004 Sec. 5): learning curves and privacy-accuracy trade-offs.

One task = one Monte-Carlo instance (a new random graph and dataset, spec Sec. 6) on which every
algorithm runs at every eps with `noise_replicas` batched noise draws, so algorithms are compared
on the same instances (paired tests in theory/zcdp_nfl/claims.py). The parameter `implementation` is
our batched reference, or a user's implementation of zCDP-NFL through the contract
(theory/door/implementations.py): `dpverify verify` re-runs the figures' claims with it in place of our
zCDP-NFL, the baselines staying ours.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from dpverify.algorithms.core.errors import NotInContract  # noqa: E402
from dpverify.algorithms.zcdp_nfl.algorithm import normalized_error  # noqa: E402
from dpverify.reproductions.run.experiments import Experiment, FigureOutput  # noqa: E402
from dpverify.reproductions.run.params import ExperimentConfig  # noqa: E402
from dpverify.theory.door.implementations import resolve  # noqa: E402
from dpverify.theory.execution import Task  # noqa: E402
from dpverify.theory.zcdp_nfl.instances import (  # noqa: E402
    ALGORITHM_LABELS,
    Settings,
    build_instance,
    run_algorithm,
    run_implementation,
)

HERE = Path(__file__).parent
CONFIDENCE = 0.95  # confidence of the error bars of the trade-off panels (t interval over runs)
BAND = (0.1, 0.9)  # quantile band of the learning curves


def simulate_instance(rng: np.random.Generator, *, instance: int, problem: str, algorithms: list[str],
                      epsilons: list[float], curve_epsilons: list[float], num_agents: int, num_edges: int,
                      num_samples: int, dim: int, lam: float, l2_weight: float, data_noise: str, rho: float,
                      eta0: float, eta_power: float, tau: float, delta: float, c1: float, horizon: int,
                      learning_rate: float, noise_replicas: int, implementation: object) -> pd.DataFrame:
    """Normalized error sum_k ||w_k^(n) - w_c||^2 / ||w_c||^2 (L304) of every algorithm and eps on
    one instance: the whole curve for `curve_epsilons`, the final iterate (n = T) for the others.
    zCDP-NFL is our batched reference, or `implementation`'s `noise_replicas` independent runs."""
    instance_rng, noise_rng = rng.spawn(2)
    setup = build_instance(instance_rng, problem=problem, num_agents=num_agents, num_edges=num_edges,
                           num_samples=num_samples, dim=dim, lam=lam, l2_weight=l2_weight, data_noise=data_noise)
    settings = Settings(rho, eta0, eta_power, tau, delta, c1, horizon, learning_rate)
    users = resolve(implementation)
    frames = []
    for algorithm, algorithm_rng in zip(algorithms, noise_rng.spawn(len(algorithms))):
        for epsilon, run_rng in zip(epsilons, algorithm_rng.spawn(len(epsilons))):
            if users is not None and algorithm == "zcdp-nfl":   # the paper's algorithm only; baselines stay ours
                try:
                    primal = run_implementation(users, setup, settings, epsilon, replicas=noise_replicas, rng=run_rng)
                except NotInContract:   # no run of Figs. 1-3 (they use the readings the contract states); left out
                    continue
                error = normalized_error(primal, setup.reference)  # (T+1, R)
            else:
                trajectory = run_algorithm(algorithm, setup, settings, epsilon, replicas=noise_replicas, rng=run_rng)
                error = trajectory.normalized_error(setup.reference)  # (T+1, R)
            iterations = np.arange(horizon + 1) if epsilon in curve_epsilons else np.array([horizon])
            grid_n, grid_r = np.meshgrid(iterations, np.arange(noise_replicas), indexing="ij")
            frames.append(pd.DataFrame({
                "algorithm": algorithm, "epsilon": epsilon, "instance": instance, "replica": grid_r.ravel(),
                "iteration": grid_n.ravel(), "normalized_error": error[iterations].ravel(),
                "certified": setup.truth.certified(1e-6)}))
    return pd.concat(frames, ignore_index=True)


def build_tasks(config: ExperimentConfig) -> list[Task]:
    values = config.values()
    shared = {name: values[name] for name in (
        "problem", "algorithms", "epsilons", "curve_epsilons", "num_agents", "num_edges", "num_samples", "dim",
        "lam", "data_noise", "rho", "eta0", "eta_power", "tau", "delta", "c1", "horizon", "noise_replicas",
        "l2_weight", "learning_rate", "implementation")}
    shared["curve_epsilons"] = sorted(set(shared["curve_epsilons"]) & set(shared["epsilons"]) or shared["epsilons"])
    return [Task(f"zcdp-nfl/{config.id}/instance-{i}", simulate_instance, {"instance": i, **shared})
            for i in range(values["instances"])]


def final_errors(config: ExperimentConfig, results: pd.DataFrame) -> pd.DataFrame:
    """Mean normalized error at n = T per algorithm and eps, with a t confidence interval over runs."""
    final = results[results.iteration == config["horizon"]]
    rows = []
    for (algorithm, epsilon), group in final.groupby(["algorithm", "epsilon"], sort=True):
        values = group.normalized_error.to_numpy()
        half = stats.t.ppf(0.5 + CONFIDENCE / 2, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
        rows.append({"algorithm": algorithm, "epsilon": epsilon, "runs": len(values), "mean": values.mean(),
                     "ci_low": values.mean() - half, "ci_high": values.mean() + half, "median": np.median(values)})
    return pd.DataFrame(rows)


def _learning_curves(config: ExperimentConfig, results: pd.DataFrame):
    curve_eps = sorted(results[results.iteration == 0].epsilon.unique())
    figure, axes = plt.subplots(1, len(curve_eps), figsize=(5.2 * len(curve_eps), 3.8), squeeze=False)
    for axis, epsilon in zip(axes[0], curve_eps):
        for algorithm in config["algorithms"]:
            curves = results[(results.epsilon == epsilon) & (results.algorithm == algorithm)]
            grouped = curves.groupby("iteration").normalized_error
            mean, low, high = grouped.mean(), grouped.quantile(BAND[0]), grouped.quantile(BAND[1])
            axis.plot(mean.index, mean.values, label=ALGORITHM_LABELS[algorithm])
            axis.fill_between(mean.index, low.values, high.values, alpha=0.2)
        axis.set_yscale("log")
        axis.set_xlabel("iteration n")
        axis.set_ylabel("normalized error")
        axis.set_title(f"{config.id}: ε = {epsilon:g}, δ = {config['delta']:g}")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    return figure


def _tradeoff(config: ExperimentConfig, table: pd.DataFrame):
    figure, axis = plt.subplots(figsize=(5.2, 3.8))
    for algorithm in config["algorithms"]:
        rows = table[table.algorithm == algorithm]
        errors = np.vstack([rows["mean"] - rows.ci_low.clip(lower=1e-300), rows.ci_high - rows["mean"]])
        axis.errorbar(rows.epsilon, rows["mean"], yerr=errors, marker="o", capsize=3, label=ALGORITHM_LABELS[algorithm])
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("total privacy loss ε")
    axis.set_ylabel(f"normalized error at n = {config['horizon']}")
    axis.set_title(f"{config.id}: trade-off (mean, {CONFIDENCE:.0%} CI)")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    return figure


def summarize(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    table = final_errors(config, results)
    panels = {"learning-curves": _learning_curves(config, results)}
    if len(config["epsilons"]) > len(config["curve_epsilons"]):
        panels["tradeoff"] = _tradeoff(config, table)
    runs = int(table.runs.max())
    parts = []
    for epsilon, group in table.groupby("epsilon"):
        best = group.sort_values("mean")
        parts.append(f"ε={epsilon:g}: " + " < ".join(f"{ALGORITHM_LABELS[r.algorithm]} {r.mean:.3g}" for r in best.itertuples()))
    uncertified = int((~results.certified).sum())
    observed = (f"Mean normalized error at n = {config['horizon']} over {runs} runs (w = 0 scores K = "
                f"{config['num_agents']}), ordered best first — "
                + "; ".join(parts) + "." + (f" WARNING: {uncertified} rows use an uncertified reference." if uncertified else ""))
    return FigureOutput(panels, observed, table)


EXPERIMENTS = [
    Experiment("figure-1", "zcdp-nfl", HERE / "figure_1_elastic_net.toml", build_tasks, summarize),
    Experiment("figure-2", "zcdp-nfl", HERE / "figure_2_lad.toml", build_tasks, summarize),
    Experiment("figure-3", "zcdp-nfl", HERE / "figure_3_ridge.toml", build_tasks, summarize),
]
