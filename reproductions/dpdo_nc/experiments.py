"""Figures 1-3 of DPDO-NC (seeds/002 Sec. 5) and the long-horizon variant used by the rate test.

One task per figure: every curve runs on the same data sequence with common random numbers
(theory/dpdo_nc/instances.py), so the privacy levels are compared pairwise run by run.
Plotted: max_i of the plug-in E[R_T^i]/T (spec 5.2, max outside the expectation as in eq. (2)).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpverify.reproductions.run.experiments import Experiment, FigureOutput  # noqa: E402
from dpverify.reproductions.run.params import ExperimentConfig  # noqa: E402
from dpverify.theory.dpdo_nc.instances import accumulators, simulate_curves  # noqa: E402
from dpverify.theory.execution import Task  # noqa: E402

HERE = Path(__file__).parent


def build_tasks(config: ExperimentConfig) -> list[Task]:
    return [Task(f"dpdo-nc/{config.id}", simulate_curves, config.values())]


def _regret_table(config: ExperimentConfig, results: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for curve in results.curve.unique():
        horizons, dot, sums = accumulators(results, curve)
        per_node = dot.mean(0) + config["radius"] * np.abs(sums.mean(0)).max(-1)   # (K, N)
        for k, horizon in enumerate(horizons):
            rows.append({"curve": curve, "T": int(horizon), "max_i E[R_T^i]/T": per_node[k].max() / horizon,
                         **{f"node {i + 1}": per_node[k, i] / horizon for i in range(per_node.shape[1])}})
    return pd.DataFrame(rows)


def summarize(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    table = _regret_table(config, results)
    figure, axes = plt.subplots(1, 2, figsize=(10.4, 3.8))
    per_node = config.id == "figure-2"
    for curve, group in table.groupby("curve", sort=False):
        columns = [c for c in group.columns if c.startswith("node ")] if per_node else ["max_i E[R_T^i]/T"]
        for column in columns:
            label = column if per_node else curve
            for axis in axes:
                axis.plot(group["T"], group[column], label=label)
    for axis, scale in zip(axes, ("linear", "log")):
        axis.set_xscale(scale)
        axis.set_yscale(scale)
        axis.set_xlabel("T")
        axis.set_ylabel("E[R_T^i]/T per node" if per_node else "max_i E[R_T^i]/T (plug-in)")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7)
    axes[0].set_title(f"{config.id} ({config['runs']} runs, T = {config['horizon']})")
    figure.tight_layout()
    final = table[table["T"] == config["horizon"]]
    observed = "At T = {}: ".format(config["horizon"]) + "; ".join(
        f"{r.curve}: max_i E[R_T^i]/T = {r._3:.3g}" for r in final.itertuples()) + (
        ". Node range: " + ", ".join(f"{v:.3g}" for v in final.iloc[0, 3:].to_numpy()) if per_node else "")
    return FigureOutput({"regret": figure}, observed, final.reset_index(drop=True))


EXPERIMENTS = [
    Experiment("figure-1", "dpdo-nc", HERE / "figure_1_privacy_levels.toml", build_tasks, summarize),
    Experiment("figure-2", "dpdo-nc", HERE / "figure_2_nodes.toml", build_tasks, summarize),
    Experiment("figure-3", "dpdo-nc", HERE / "figure_3_bregman.toml", build_tasks, summarize),
    Experiment("long-horizon", "dpdo-nc", HERE / "long_horizon.toml", build_tasks, summarize),
]
