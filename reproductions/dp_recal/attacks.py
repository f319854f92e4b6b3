"""Gradient-leakage attacks on RECAL / DP-RECAL: seeds/001 Figs. 4, 7, 8 (images) and 9 (ijcnn1).

One task = one dataset and target kind: RECAL and DP-RECAL are run on an 8-agent ring (linear
regression of Sec. VII), an eavesdropper reads the whole transcript, infers each agent's gradient at
its first activation (the model point there is the public y^1) and inverts it with the figure's
attack. Three rows: RECAL + App. A inference, DP-RECAL + App. A inference (the paper's adversary,
u~ for u), DP-RECAL + x-leak inference (x^{k+1} is passed without noise, v1:L264).

Targets (spec §5.5): "record" = every agent holds ONE record (its local gradient is that record's
gradient, batch 1); "local" = the paper's split (the local gradient is a mean over m_i records; the
reconstruction is scored against the agent's closest record).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpverify.algorithms.core.network import Network  # noqa: E402
from dpverify.algorithms.core.problems import LocalData  # noqa: E402
from dpverify.algorithms.dp_recal.algorithm import RecalParams, calibrated_params, run_recal  # noqa: E402
from dpverify.algorithms.dp_recal.composite import CompositeProblem  # noqa: E402
from dpverify.algorithms.dp_recal.gradient_attacks import run_attack  # noqa: E402
from dpverify.algorithms.dp_recal.gradient_inversion import (  # noqa: E402
    first_activations,
    infer_gradients,
    infer_gradients_from_x,
    mse,
    psnr,
)
from dpverify.reproductions.data.datasets import (  # noqa: E402
    NOT_AVAILABLE,
    NOTHING_RUN,
    DatasetNotAvailableError,
    load_dataset,
    split_over_agents,
)
from dpverify.reproductions.dp_recal.workload import ATTACK_COST  # noqa: E402
from dpverify.reproductions.run.experiments import Experiment, FigureOutput  # noqa: E402
from dpverify.reproductions.run.params import ExperimentConfig  # noqa: E402
from dpverify.theory.execution import Task  # noqa: E402

HERE = Path(__file__).parent
IMAGE_SHAPES = {"mnist": (28, 28), "fashion-mnist": (28, 28), "cifar10": None}  # CIFAR-10 is 32x32x3: no 2-D TV
ROWS = (("recal", "app-a"), ("dp-recal", "app-a"), ("dp-recal", "x-leak"))
ROW_LABELS = {("recal", "app-a"): "RECAL (App. A)", ("dp-recal", "app-a"): "DP-RECAL (App. A)",
              ("dp-recal", "x-leak"): "DP-RECAL (x-leak)"}


def _targets_data(dataset, kind: str, num_agents: int, rng: np.random.Generator) -> LocalData:
    if kind == "record":
        chosen = rng.choice(dataset.num_samples, num_agents, replace=False)
        return LocalData(dataset.features[chosen][:, None, :], dataset.labels[chosen][:, None])
    return split_over_agents(dataset, num_agents, rng=rng, shuffle=True)


def simulate_attack(rng: np.random.Generator, *, dataset: str, attack: str, target_kind: str, loss: str,
                    num_agents: int, targets: int, clip: float, epsilon: float, delta: float, decay: float,
                    plf_calibration: int, horizon: int, x1_scale: float, iterations: int,
                    snapshots: list[int]) -> pd.DataFrame:
    try:
        source = load_dataset(dataset)
    except DatasetNotAvailableError as error:
        return pd.DataFrame([{"dataset": dataset, "target_kind": target_kind, "status": NOT_AVAILABLE,
                              "reason": str(error)}])
    data_rng, run_rng, attack_rng = rng.spawn(3)
    data = _targets_data(source, target_kind, num_agents, data_rng)
    problem = CompositeProblem(loss)
    network = Network.from_networkx(nx.cycle_graph(num_agents))
    alpha = 1.0 / (problem.lipschitz_constants(data) + 1.0)          # spec §6 default
    private = calibrated_params(alpha, num_agents, epsilon=epsilon, delta=delta, plf=plf_calibration, decay=decay,
                                clip=clip)
    beta, sigma1 = private.beta, private.noise.sigma1
    x1 = x1_scale * run_rng.standard_normal(data.dim)                  # spec §6: x^1 = 0.1 N(0, I), y_i^1 = x^1
    mechanisms = {"recal": RecalParams(alpha, beta),                    # eq. (7): no noise, no clipping
                  "dp-recal": private}
    rows = []
    for mechanism, params in mechanisms.items():
        run = run_recal(problem, data, network, params, replicas=1, rng=run_rng, horizon=horizon, x1=x1)
        first = first_activations(run.holders, num_agents)[0]
        twice = [i for i in range(num_agents) if np.sum(run.holders[:, 0] == i) >= 2]
        agents = np.array(twice[:targets])
        truth = problem.active_gradients(np.tile(x1, (agents.size, 1)), agents, data, params.clip)
        inferences = {"app-a": infer_gradients(run, alpha, beta)}
        if mechanism == "dp-recal":
            inferences["x-leak"] = infer_gradients_from_x(run, problem, alpha, beta)
        for inference, inferred in inferences.items():
            g = inferred.gradients[first[agents], 0]
            mask = inferred.revealed[first[agents], 0] & np.isfinite(g)
            error = np.where(mask, np.abs(np.nan_to_num(g) - truth), 0.0).max(axis=1) / np.abs(truth).max(axis=1)
            usable = mask.any(axis=1)
            result = (run_attack(attack, np.nan_to_num(g[usable]), np.tile(x1, (usable.sum(), 1)), loss=loss,
                                 clip=params.clip, rng=attack_rng, iterations=iterations, snapshot_iterations=snapshots,
                                 mask=mask[usable], image_shape=IMAGE_SHAPES.get(dataset))
                      if usable.any() else None)
            position = np.cumsum(usable) - 1
            originals = np.stack([data.features[a, 0] for a in agents]) if target_kind == "record" else None
            for t, agent in enumerate(agents):
                row = {"dataset": dataset, "target_kind": target_kind, "status": "ok", "attack": attack,
                       "mechanism": mechanism, "inference": inference, "agent": int(agent),
                       "first_activation": int(first[agent]) + 1, "sigma1": sigma1 if mechanism == "dp-recal" else 0.0,
                       "epsilon": epsilon if mechanism == "dp-recal" else np.inf, "clip": params.clip or 0.0,
                       "revealed_fraction": float(mask[t].mean()), "gradient_max_rel_error": float(error[t]),
                       "true_label": float(data.targets[agent, 0]) if target_kind == "record" else np.nan}
                if usable[t]:
                    p = position[t]
                    recon, trail = result.reconstruction[p], result.snapshots[:, p]
                    if target_kind == "record":
                        original = originals[t]
                        others = np.delete(originals, t, axis=0)
                        row["psnr_other"] = float(psnr(recon, others).mean())
                    else:  # the agent's record closest to the reconstruction (identification)
                        closest = int(np.argmin(mse(recon, data.features[agent])))
                        original = data.features[agent, closest]
                        row["psnr_other"] = float(psnr(recon, data.features[(agent + 1) % num_agents]).max())
                    row.update({"label": float(result.labels[p]), "matching_loss": float(result.matching_loss[p]),
                                "rescaled": bool(result.rescaled[p]), "mse": float(mse(recon, original)),
                                "psnr": float(psnr(recon, original)), "psnr_init": float(psnr(trail[0], original)),
                                "snapshot_iterations": result.snapshot_iterations.tolist(),
                                "mse_trace": mse(trail, original).tolist(),
                                "original": original.tolist(), "snapshot_images": trail.ravel().tolist()})
                rows.append(row)
    return pd.DataFrame(rows)


def build_tasks(config: ExperimentConfig) -> list[Task]:
    values = config.values()
    shared = {name: values[name] for name in (
        "attack", "loss", "num_agents", "targets", "clip", "epsilon", "delta", "decay", "plf_calibration",
        "horizon", "x1_scale", "iterations", "snapshots")}
    return [Task(f"dp-recal/{config.id}/{dataset}/{kind}", simulate_attack,
                 {"dataset": dataset, "target_kind": kind, **shared}, cost=ATTACK_COST)
            for dataset in values["datasets"] for kind in values["target_kinds"]]


def _reconstructions(results: pd.DataFrame, dataset: str, kind: str) -> pd.DataFrame:
    """The rows of `dataset` and `kind` with a reconstruction (none when no target was usable)."""
    if "psnr" not in results:
        return results.iloc[:0]
    return results[(results.dataset == dataset) & (results.target_kind == kind) & results.psnr.notna()]


def _image_panel(config: ExperimentConfig, results: pd.DataFrame, dataset: str, kind: str):
    shape = IMAGE_SHAPES[dataset]
    frame = _reconstructions(results, dataset, kind)
    figure, axes = None, None
    for r, key in enumerate(ROWS):
        rows = frame[(frame.mechanism == key[0]) & (frame.inference == key[1])]
        if rows.empty:
            continue
        row = rows.iloc[0]
        iterations = list(row.snapshot_iterations)
        images = np.asarray(row.snapshot_images).reshape(len(iterations), -1)
        columns = [("original", np.asarray(row.original))] + [
            ("dummy init" if it == 0 else ("final" if it == iterations[-1] else f"it {it}"), img)
            for it, img in zip(iterations, images)]
        if figure is None:
            figure, axes = plt.subplots(len(ROWS), len(columns), figsize=(1.3 * len(columns), 1.5 * len(ROWS)),
                                        squeeze=False)
        for c, (title, image) in enumerate(columns):
            axes[r, c].imshow(np.clip(image, 0, 1).reshape(shape), cmap="gray", vmin=0, vmax=1)
            axes[r, c].set_xticks([])
            axes[r, c].set_yticks([])
            if r == 0:
                axes[r, c].set_title(title, fontsize=7)
        axes[r, 0].set_ylabel(f"{ROW_LABELS[key]}\nPSNR {row.psnr:.1f} dB", fontsize=6)
    if figure is not None:
        figure.suptitle(f"{config.id} ({config['attack']}): {dataset}, target = {kind}", fontsize=8)
        figure.tight_layout()
    return figure


def _mse_panel(config: ExperimentConfig, results: pd.DataFrame, dataset: str, kind: str):
    frame = _reconstructions(results, dataset, kind)
    if frame.empty:
        return None
    figure, axis = plt.subplots(figsize=(5.0, 3.5))
    for key in ROWS:
        rows = frame[(frame.mechanism == key[0]) & (frame.inference == key[1])]
        if rows.empty:
            continue
        traces = np.stack([np.asarray(t) for t in rows.mse_trace])
        axis.plot(rows.snapshot_iterations.iloc[0], np.median(traces, axis=0), marker=".", label=ROW_LABELS[key])
    axis.set_yscale("log")
    axis.set_xlabel("DLG iteration")
    axis.set_ylabel("MSE(original, inferred) — median over targets")
    axis.set_title(f"{config.id}: {dataset}, target = {kind}", fontsize=9)
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=7)
    figure.tight_layout()
    return figure


def attack_table(results: pd.DataFrame) -> pd.DataFrame:
    """Median PSNR / MSE per dataset, target kind and row, with the number of targets."""
    ok = results[results.status == "ok"] if "status" in results else results
    if ok.empty:
        return pd.DataFrame()
    return (ok.groupby(["dataset", "target_kind", "mechanism", "inference"], sort=False)
            .agg(targets=("agent", "size"), median_psnr=("psnr", "median"), median_psnr_other=("psnr_other", "median"),
                 median_mse=("mse", "median"), median_revealed=("revealed_fraction", "median"),
                 max_gradient_rel_error=("gradient_max_rel_error", "max"), sigma1=("sigma1", "first"))
            .reset_index())


def summarize(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    table = attack_table(results)
    ok = results[results.status == "ok"]   # rows without data have no attack columns
    panels = {}
    for dataset in sorted(set(ok.dataset), key=list(config["datasets"]).index):
        for kind in config["target_kinds"]:
            panel = _image_panel if IMAGE_SHAPES.get(dataset) else _mse_panel
            if (figure := panel(config, ok, dataset, kind)) is not None:
                panels[f"{dataset}-{kind}"] = figure
    missing = sorted(set(results.dataset[results.status == NOT_AVAILABLE]))
    parts = [f"{r.dataset}/{r.target_kind} {ROW_LABELS[(r.mechanism, r.inference)]}: median PSNR {r.median_psnr:.1f} dB "
             f"(vs other records {r.median_psnr_other:.1f}), MSE {r.median_mse:.3g}, revealed {r.median_revealed:.0%}"
             for r in table.itertuples()]
    observed = ("; ".join(parts) if parts else NOTHING_RUN) + "." + "".join(f" {d}: data not available." for d in missing)
    return FigureOutput(panels, observed, table)


ATTACK_EXPERIMENTS = [
    Experiment("figure-4", "dp-recal", HERE / "figure_4_dlg.toml", build_tasks, summarize),
    Experiment("figure-7", "dp-recal", HERE / "figure_7_inverting_gradients.toml", build_tasks, summarize),
    Experiment("figure-8", "dp-recal", HERE / "figure_8_gradinversion.toml", build_tasks, summarize),
    Experiment("figure-9", "dp-recal", HERE / "figure_9_ijcnn1_dlg.toml", build_tasks, summarize),
]
