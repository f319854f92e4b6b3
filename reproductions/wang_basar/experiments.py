"""Figures 1, 3-5 and Table 1 of Wang & Basar (seeds/003 Sec. 6). One task = one configuration with its
runs batched as replicas (R, m, d). Figs. 3-4 and Table 1 declare the parameter `implementation`: our
batched reference, or (`dpverify verify wang-basar --impl ...`) a user's Algorithm 2 through the contract,
one run per replica (theory/wang_basar/instances.through_contract); Algorithm 1 stays ours."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from dpverify.algorithms.wang_basar.algorithm import (  # noqa: E402
    StepSchedule,
    WangBasarParams,
    graph_weights,
    run,
)
from dpverify.algorithms.wang_basar.problems import Ica  # noqa: E402
from dpverify.reproductions.run.experiments import Experiment, FigureOutput  # noqa: E402
from dpverify.reproductions.run.params import ExperimentConfig  # noqa: E402
from dpverify.theory.door.implementations import resolve  # noqa: E402
from dpverify.theory.execution import Task  # noqa: E402
from dpverify.theory.wang_basar.figures import TABLE_1  # noqa: E402
from dpverify.theory.wang_basar.instances import (  # noqa: E402
    DESTINATION_RADIUS,
    THETA_SADDLE_PRINTED,
    THETA_STAR_PRINTED,
    estimation,
    refined_minimum,
    simulate,
    stationary_points,
    through_contract,
)

HERE = Path(__file__).parent
CURVE_STRIDE = 10   # iterations between stored points of the plotted curves


def _final_rows(values, runs, **labels) -> pd.DataFrame:
    star = refined_minimum(estimation(values))
    final = runs["final"]
    errors = np.linalg.norm(final - star, axis=-1)
    mean_error = np.linalg.norm(runs["mean"][-1] - star, axis=-1)
    return pd.DataFrame({**labels, "row": "final", "replica": np.arange(final.shape[0]), "error_agents": errors.mean(1),
                         "error_mean": mean_error, "error_max": errors.max(1), "at_star": mean_error < DESTINATION_RADIUS,
                         "x1": runs["mean"][-1][:, 0], "x2": runs["mean"][-1][:, 1],
                         "consensus_final": np.sqrt(runs["consensus"][-1])})


def simulate_estimation(rng, *, values: dict, case: str, start: str, sigma_var: float, replicas: int, graph: str,
                        init: str = "uniform_box") -> pd.DataFrame:
    """Runs of Algorithm 2 (Algorithm 1 if sigma_var = 0) on the Sec. 6.1 instance; final rows per run and
    per-agent error curves of run 0."""
    values = {**values, "graph": graph}
    runs = simulate(rng, values=values, start=start, sigma_var=sigma_var, replicas=replicas, iterations=values["iterations"],
                    implementation=resolve(values["implementation"]))
    frame = _final_rows(values, runs, case=case, sigma=sigma_var, graph=graph, init=init)
    return frame


def simulate_curves(rng, *, values: dict, case: str, start: str, sigma_var: float) -> pd.DataFrame:
    """Per-agent errors ||x_i^k - theta*|| of one plotted run (snapshots every CURVE_STRIDE iterations)."""
    problem = estimation(values)
    star = refined_minimum(problem)
    params = WangBasarParams(graph_weights(values["graph"]), StepSchedule(values["lam0"], values["switch"], values["lam_scale"], 1.0),
                             1 if sigma_var == 0 else 2, sigma_var)
    if start == "uniform":
        initial = rng.uniform(problem.low, problem.high, size=(1, values["num_agents"], 2))
    else:
        initial = np.broadcast_to(THETA_SADDLE_PRINTED, (1, values["num_agents"], 2)).copy()
    wanted = list(range(1, values["iterations"] + 1, CURVE_STRIDE))
    implementation = resolve(values["implementation"])
    if implementation is None or params.algorithm == 1:   # Algorithm 1, the noise-free baseline, is always ours
        trajectory = run(problem.local_gradients, initial, params, values["iterations"], rng, snapshot_at=wanted)
    else:
        trajectory = through_contract(implementation, problem.local_gradients, initial, params, values["iterations"], rng,
                                      snapshot_at=wanted, agent_oracle=problem.agent_gradient)
    rows = [{"row": "curve", "case": case, "sigma": sigma_var, "iteration": k, "agent": i,
             "error": float(np.linalg.norm(trajectory.snapshots[k][0, i] - star))}
            for k in wanted for i in range(values["num_agents"])]
    return pd.DataFrame(rows)


# ---- Figure 1 -----------------------------------------------------------------------------------

def stationary_table(rng, *, values: dict) -> pd.DataFrame:
    rows = [{"x1": p.location[0], "x2": p.location[1], "kind": p.kind, "eig_min": p.eigenvalues.min(), "eig_max": p.eigenvalues.max(),
             "F": p.value} for p in stationary_points(estimation(values))]
    return pd.DataFrame(rows)


def build_figure_1(config: ExperimentConfig) -> list[Task]:
    return [Task("wang-basar/figure-1/stationary-points", stationary_table, {"values": config.values()})]


def summarize_figure_1(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    problem = estimation(config.values())
    nx_, ny = config["grid"]
    x1, x2 = np.meshgrid(np.linspace(-8, 4, nx_), np.linspace(-3, 3, ny))
    values = problem.objective(np.stack([x1, x2], -1))
    figure, axis = plt.subplots(figsize=(7, 3.8))
    contour = axis.contour(x1, x2, values, levels=40)
    figure.colorbar(contour, ax=axis)
    markers = {"minimum": "o", "saddle": "x", "maximum": "^"}
    for row in results.itertuples():
        axis.plot(row.x1, row.x2, markers[row.kind], color="red", label=f"{row.kind} ({row.x1:.4f}, {row.x2:.4f})")
    axis.plot(*THETA_STAR_PRINTED, "+", color="black", label="printed theta*")
    axis.plot(*THETA_SADDLE_PRINTED, "+", color="black")
    axis.set_xlim(-8.5, 4.5)
    axis.set_title("F on [-8,4]x[-3,3]; all stationary points of the extended oracle")
    axis.legend(fontsize=7)
    figure.tight_layout()
    observed = "Stationary points of the extended oracle (default extension): " + "; ".join(
        f"({r.x1:.4f}, {r.x2:.4f}) {r.kind} (Hessian eig {r.eig_min:.3g}, {r.eig_max:.3g})" for r in results.itertuples())
    return FigureOutput({"contour": figure}, observed, results)


# ---- Figures 3-4 --------------------------------------------------------------------------------

def build_figures_3_4(config: ExperimentConfig) -> list[Task]:
    values = config.values()
    tasks = []
    for case, start, sigma in (("random", "uniform", values["sigma_var"]), ("saddle", "saddle_printed", values["sigma_var"]),
                               ("saddle-noise-free", "saddle_printed", 0.0)):
        replicas = 1 if sigma == 0 else values["runs"]
        tasks.append(Task(f"wang-basar/figures-3-4/{case}", simulate_estimation,
                          {"values": values, "case": case, "start": start, "sigma_var": sigma, "replicas": replicas, "graph": values["graph"]}))
        tasks.append(Task(f"wang-basar/figures-3-4/{case}/curve", simulate_curves, {"values": values, "case": case, "start": start, "sigma_var": sigma}))
    return tasks


def summarize_figures_3_4(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    curves = results[results.row == "curve"]
    panels = {}
    for case in ("random", "saddle", "saddle-noise-free"):
        figure, axis = plt.subplots(figsize=(5.2, 3.6))
        for agent, group in curves[curves.case == case].groupby("agent"):
            axis.plot(group.iteration, group.error, label=f"agent {int(agent) + 1}")
        axis.set_yscale("log")
        axis.set_xlabel("iteration k")
        axis.set_ylabel("||x_i^k - theta*||")
        axis.set_title({"random": "Fig. 3: random starts", "saddle": "Fig. 4: from the saddle (noise)",
                        "saddle-noise-free": "from the saddle, noise-free"}[case])
        axis.legend(fontsize=7)
        figure.tight_layout()
        panels[case] = figure
    final = results[results.row == "final"]
    parts = []
    table = []
    for case, group in final.groupby("case", sort=False):
        left = int(((group.x1 < -7.9) & (group.error_mean > 1)).sum())
        parts.append(f"{case}: {int(group.at_star.sum())}/{len(group)} runs at theta*, {left} at the edge minimum near (-8.00, 1.44), "
                     f"max consensus error {group.consensus_final.max():.2e}")
        table.append({"case": case, "runs": len(group), "at_theta_star": int(group.at_star.sum()), "at_edge_minimum": left,
                      "median_error_agents": float(group.error_agents.median())})
    return FigureOutput(panels, "; ".join(parts) + ".", pd.DataFrame(table))


# ---- Table 1 --------------------------------------------------------------------------------------

def build_table_1(config: ExperimentConfig) -> list[Task]:
    values = config.values()
    return [Task(f"wang-basar/table-1/{graph}/{init}/sigma-{sigma}", simulate_estimation,
                 {"values": values, "case": "table", "start": "uniform" if init == "uniform_box" else "standard_normal",
                  "sigma_var": sigma, "replicas": values["runs"], "graph": graph, "init": init})
            for graph, init in values["variants"] for sigma in values["sigmas"]]


def summarize_table_1(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    rows = []
    for (graph, init, sigma), group in results.groupby(["graph", "init", "sigma"], sort=False):
        row = {"graph": graph, "init": init, "sigma": sigma, "printed": TABLE_1.get(sigma), "runs": len(group),
               "at_theta_star": int(group.at_star.sum())}
        for metric in ("error_agents", "error_mean", "error_max"):
            values = group[metric].to_numpy()
            half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
            row[f"{metric}_mean"], row[f"{metric}_ci"] = float(values.mean()), float(half)
            row[f"{metric}_median"] = float(np.median(values))
        at_star = group[group.at_star]
        row["error_agents_mean_at_star"] = float(at_star.error_agents.mean()) if len(at_star) else float("nan")
        rows.append(row)
    table = pd.DataFrame(rows)
    figure, axis = plt.subplots(figsize=(5.5, 3.8))
    axis.plot(list(TABLE_1), list(TABLE_1.values()), "ks--", label="paper (Table 1)")
    for (graph, init), group in table.groupby(["graph", "init"], sort=False):
        axis.errorbar(group.sigma, group.error_agents_mean_at_star, fmt="o-", capsize=3, label=f"ours {graph}/{init}, runs at theta*")
    axis.set_yscale("log")
    axis.set_xlabel("sigma")
    axis.set_ylabel("mean error at k = 3000")
    axis.legend(fontsize=7)
    figure.tight_layout()
    default = table[(table.graph == table.graph.iloc[0]) & (table.init == "uniform_box")]
    observed = ("Default (ring, uniform on B), mean over agents of ||x_i^3000 - theta*||: " + ", ".join(
        f"sigma {r.sigma}: {r.error_agents_mean:.3g} (paper {r.printed}; {r.at_theta_star}/{r.runs} at theta*, "
        f"{r.error_agents_mean_at_star:.3g} over those)" for r in default.itertuples())
        + ". Other variants in the table.")
    return FigureOutput({"table-1": figure}, observed, table)


# ---- Figure 5 (ICA) ---------------------------------------------------------------------------------

def simulate_ica(rng, *, values: dict) -> pd.DataFrame:
    """Every sigma_var on common random numbers: the same A, Z and initial points per replica (spec P20
    variant: paired comparison), noise drawn per case."""
    m, d, n = values["num_agents"], values["dim"], values["samples"]
    replicas = values["runs"]
    data_rng, init_rng, *noise_rngs = rng.spawn(2 + len(values["sigma_vars"]))
    mixing = [np.linalg.qr(data_rng.normal(size=(d, d))) for _ in range(replicas)]
    columns = np.array([q * np.sign(np.diag(r)) for q, r in mixing])                      # Haar orthonormal A per run
    sources = data_rng.choice([-1.0, 1.0], size=(replicas, n, d))                          # Rademacher Z (mu4 = 1)
    observed = np.einsum("rnd,red->rne", sources, columns).reshape(replicas, m, n // m, d)   # Y = A Z
    initial = init_rng.normal(size=(replicas, m, d))
    initial /= np.linalg.norm(initial, axis=-1, keepdims=True)
    frames = []
    for sigma_var, noise_rng in zip(values["sigma_vars"], noise_rngs):
        params = WangBasarParams(graph_weights(values["graph"], m), StepSchedule(values["lam0"], values["switch"], values["lam_scale"], 1.0),
                                 1 if sigma_var == 0 else 2, float(sigma_var))
        # per-replica data: the gradient oracle is batched over replicas with their own samples
        def gradient(states):
            projections = np.einsum("rmnd,rmd->rmn", observed, states)
            euclidean = 4.0 * np.einsum("rmn,rmnd->rmd", projections**3, observed) / observed.shape[2]
            return euclidean - np.sum(euclidean * states, -1, keepdims=True) * states
        wanted = [1, 10, 50, 100, 300] + list(range(500, values["iterations"] + 1, 500))
        trajectory = run(gradient, initial, params, values["iterations"], noise_rng, snapshot_at=wanted, post_mix=Ica.renormalize,
                         blocks=False)   # the oracle holds every replica's samples
        for k in wanted:
            states = trajectory.snapshots[k] if k in trajectory.snapshots else trajectory.final
            distance = np.minimum(np.linalg.norm(states[:, :, None, :] - np.swapaxes(columns, 1, 2)[:, None], axis=-1),
                                  np.linalg.norm(states[:, :, None, :] + np.swapaxes(columns, 1, 2)[:, None], axis=-1))  # (R, m, d columns)
            error_a1 = distance[:, :, 0].max(1)
            nearest_column = distance.min(2).max(1)
            frames.append(pd.DataFrame({"row": "final" if k == values["iterations"] else "curve", "sigma": sigma_var,
                                        "iteration": k, "replica": np.arange(replicas), "error_a1": error_a1,
                                        "error_nearest_column": nearest_column, "trapped": nearest_column > values["trap_radius"]}))
    return pd.concat(frames, ignore_index=True)


def build_figure_5(config: ExperimentConfig) -> list[Task]:
    return [Task("wang-basar/figure-5/ica", simulate_ica, {"values": config.values()})]


def summarize_figure_5(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for axis, metric in zip(axes, ("error_a1", "error_nearest_column")):
        for sigma, group in results.groupby("sigma"):
            curve = group.groupby("iteration")[metric].mean()
            axis.plot(curve.index, curve.values, "o-", label="noise-free" if sigma == 0 else f"sigma_var {sigma}")
        axis.set_xscale("log")
        axis.set_xlabel("iteration k")
        axis.set_ylabel(f"mean over runs of max_i {metric}")
        axis.legend(fontsize=7)
    figure.tight_layout()
    final = results[results.row == "final"]
    table = final.groupby("sigma").agg(runs=("replica", "size"), error_a1_mean=("error_a1", "mean"),
                                       nearest_column_mean=("error_nearest_column", "mean"), trapped=("trapped", "sum")).reset_index()
    observed = "; ".join(f"{'noise-free' if r.sigma == 0 else f'sigma_var {r.sigma}'}: error(a_1) {r.error_a1_mean:.3g}, "
                         f"nearest column {r.nearest_column_mean:.3g}, trapped {r.trapped}/{r.runs}" for r in table.itertuples())
    return FigureOutput({"figure-5": figure}, observed + " (error of a_1 is large whenever a run recovers another column a_j: "
                        "which column is reached depends on the start)", table)


EXPERIMENTS = [
    Experiment("figure-1", "wang-basar", HERE / "figure_1.toml", build_figure_1, summarize_figure_1),
    Experiment("figures-3-4", "wang-basar", HERE / "figures_3_4.toml", build_figures_3_4, summarize_figures_3_4),
    Experiment("table-1", "wang-basar", HERE / "table_1.toml", build_table_1, summarize_table_1),
    Experiment("figure-5", "wang-basar", HERE / "figure_5.toml", build_figure_5, summarize_figure_5),
]
