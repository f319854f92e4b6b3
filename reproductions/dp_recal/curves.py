"""Figures 2, 3, 5, 6 and Tables IV, V of DP-RECAL (seeds/001 Sec. VII, App. F): convergence of
DP-RECAL at several budgets and the comparison of private algorithms at eps = 12, on real data.

One task = one (dataset, loss) pair: the data are loaded (checksums verified), split equally over the
8 agents of a ring (v1:L552; `graph="complete"` for the v0 experiments, v0:L520), x* is computed with a
certificate, and every algorithm runs with `replicas` batched walks/noise draws. A dataset that is not
available (CIFAR-10 unless a directory is given) yields a row saying so; nothing is substituted.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpverify.algorithms.core.network import Network  # noqa: E402
from dpverify.algorithms.core.problems import LocalData  # noqa: E402
from dpverify.algorithms.dp_recal import contract  # noqa: E402
from dpverify.algorithms.dp_recal.algorithm import RecalParams, RelayRun, calibrated_params, run_recal  # noqa: E402
from dpverify.algorithms.dp_recal.baselines.dp_common import gradient_change  # noqa: E402
from dpverify.algorithms.dp_recal.composite import CompositeProblem, accuracy  # noqa: E402
from dpverify.reproductions.data.datasets import (  # noqa: E402
    DATA_ENV,
    NOT_AVAILABLE,
    NOTHING_RUN,
    DatasetNotAvailableError,
    load_dataset,
    split_over_agents,
)
from dpverify.reproductions.dp_recal.workload import curves_cost  # noqa: E402
from dpverify.reproductions.run.experiments import Experiment, FigureOutput  # noqa: E402
from dpverify.reproductions.run.params import ExperimentConfig  # noqa: E402
from dpverify.theory.door.implementations import REFERENCE, resolve  # noqa: E402
from dpverify.theory.dp_recal.composite_ground_truth import solve_composite  # noqa: E402
from dpverify.theory.execution import Task  # noqa: E402
from dpverify.theory.verify.conformance import independent_transcripts  # noqa: E402

HERE = Path(__file__).parent
NUM_AGENTS = 8           # v1:L552
SPLIT_SEED = 0           # default: shuffle with a fixed seed, then equal split (spec §5.1)
INIT_SCALE = 0.1         # default: x^1 = 0.1 N(0, I), y_i^1 = x^1 (spec §6)
CURVE_POINTS = 60        # iterations at which RE is stored (log-spaced)
RUN_CAP_FACTOR = 4       # DP-RECAL stops at PLF = target; the iteration cap is this x n x PLF (never reached in practice)
LABELS = {"recal": "RECAL (non-private)", "dp-recal": "DP-RECAL"}
ALL_SAMPLES = "all"      # samples_per_agent: the whole equal split (the paper)
GRAPHS = {"ring": nx.cycle_graph, "complete": nx.complete_graph}   # v1:L552 ring; v0:L520 circular and complete


def _label(algorithm: str) -> str:
    if algorithm in LABELS:
        return LABELS[algorithm]
    from dpverify.algorithms.dp_recal.baselines.comparison import DISPLAY_NAMES
    return DISPLAY_NAMES.get(algorithm, algorithm)


def _grid(last: int) -> np.ndarray:
    return np.unique(np.round(np.geomspace(1, last, CURVE_POINTS)).astype(int))


def _rows(algorithm, epsilon, plf_target, dataset, loss, x_points, iterations, x_history, truth, data, x1, messages,
          plf, seconds, settings, cpu_seconds=np.nan, graph="ring") -> pd.DataFrame:
    """RE_k = ||x^k - x*|| / ||x^1 - x*|| (v1:L568, x^0 read as the initial point) at the stored iterations."""
    start = np.linalg.norm(x1 - truth.x)
    re = np.linalg.norm(x_history - truth.x, axis=-1) / start           # (points, R)
    acc = accuracy(x_history, data)                                       # (points, R)
    points, replicas = re.shape
    grid_k, grid_r = np.meshgrid(x_points, np.arange(replicas), indexing="ij")
    return pd.DataFrame({
        "dataset": dataset, "loss": loss, "algorithm": algorithm, "epsilon": epsilon, "plf_target": plf_target,
        "replica": grid_r.ravel(), "iteration": grid_k.ravel(), "relative_error": re.ravel(), "accuracy": acc.ravel(),
        "final": (grid_k == x_points[-1]).ravel(), "iterations": np.tile(iterations, points), "messages": np.tile(messages, points),
        "plf": np.tile(plf, points), "seconds": seconds, "cpu_seconds": cpu_seconds, "graph": graph,
        "x_star_norm": float(np.linalg.norm(truth.x)),
        "x_star_bound": truth.distance_bound, "settings": str(settings), "status": "ok"})


@functools.lru_cache(maxsize=1)
def _local_data(dataset: str, samples_per_agent: int | None, data_dir: str) -> LocalData:
    """The dataset split over the agents, memoized: consecutive tasks on one dataset (e.g. the two graphs of
    v0 Fig. 4) load it once. samples_per_agent keeps the first rows of each agent's share (a uniform
    subsample of the shuffled data); data_dir (the $DPVERIFY_DATA setting) is part of the key."""
    data = split_over_agents(load_dataset(dataset), NUM_AGENTS, rng=SPLIT_SEED, shuffle=True)
    if samples_per_agent is None:
        return data
    return LocalData(np.ascontiguousarray(data.features[:, :samples_per_agent]),
                     np.ascontiguousarray(data.targets[:, :samples_per_agent]))


def relay_run(problem: CompositeProblem, data: LocalData, network: Network, *, epsilon: float | None, delta: float,
              plf: int, decay: float, clip: float, replicas: int, rng: np.random.Generator, x1: np.ndarray,
              keep_x=False, sensitivity_reading: str = "assumption3") -> tuple[RelayRun, dict]:
    """DP-RECAL (RECAL if epsilon is None) stopped at the first K with PLF = plf (spec §6), with the spec §6 defaults:
    alpha_i = 1/(L_i + 1), beta = 1/(2(n+1)), sigma_1 from Theorem 4 inverted with Lemma 5's Delta = 4 alpha beta c
    (c = clip; `sensitivity_reading` "per_sample" takes the gradient change 2c/m instead of 2c, as the baselines).
    Returns the run and the settings it used."""
    alpha = 1.0 / (problem.lipschitz_constants(data) + 1.0)              # spec §6 default alpha_i = 1/(L_i+1)
    params = calibrated_params(alpha, data.num_agents, epsilon=epsilon, delta=delta, plf=plf, decay=decay, clip=clip,
                               gradient_bound=gradient_change(clip, data.num_samples, sensitivity_reading) / 2.0)
    run = run_recal(problem, data, network, params, replicas=replicas, rng=rng, plf_target=plf,
                    horizon=RUN_CAP_FACTOR * data.num_agents * plf, x1=x1, keep_transcript=False, keep_x=keep_x)
    return run, _settings(params, sensitivity_reading)


def relay_through_contract(implementation, problem: CompositeProblem, data: LocalData, network: Network, *,
                           epsilon: float | None, delta: float, plf: int, decay: float, clip: float, replicas: int,
                           rng: np.random.Generator, x1: np.ndarray, points: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
    """What the curves take from relay_run (the kept iterations, x^k there (points, R, q), K and the PLF per
    replica, the settings), from `replicas` runs of a user's implementation of Algorithm 1 (contract.py) with
    relay_run's defaults. Each run follows its own walk, drawn from the relay's law until PLF = plf (the same
    stopping rule and cap), and draws its noise from its own Generator. A run stopped at K keeps x^{K+1}, as
    relay_run freezes it."""
    alpha = 1.0 / (problem.lipschitz_constants(data) + 1.0)              # spec §6 default alpha_i = 1/(L_i+1)
    walk_rng, noise_rng = rng.spawn(2)
    walks = [contract.relay_walk(network, walk_rng, horizon=RUN_CAP_FACTOR * data.num_agents * plf, plf=plf)
             for _ in range(replicas)]
    settings = contract.along_walks(walks, problem, data, network, x1, alpha, epsilon=epsilon, delta=delta, plf=plf,
                                    decay=decay, clip=clip)
    runs = independent_transcripts(implementation, settings, noise_rng.spawn(replicas), contract.shapes)
    iterations = np.array([setting.horizon for setting in settings])
    last = int(iterations.max()) + 1
    kept = points[points <= last]
    if kept[-1] != last:
        kept = np.append(kept, last)
    history = np.stack([run["iterates"][np.minimum(kept, len(run["iterates"])) - 1, 1] for run in runs], axis=1)
    reached = np.array([np.bincount(setting.walk[:-1], minlength=data.num_agents).max() for setting in settings])
    return kept, history, iterations, reached, _settings(settings[0].reference_params, "assumption3")


def _settings(params: RecalParams, sensitivity_reading: str) -> dict:
    """The settings a curve records (str() of this dict goes into its rows)."""
    return {"alpha": "1/(L_i+1)", "beta": params.beta, "sigma1": params.noise.sigma1, "R": params.noise.decay,
            "c": params.clip, "u_mode": params.u_mode, "sensitivity": params.sensitivity_bound,
            "sensitivity_reading": sensitivity_reading}


def simulate_dataset(rng: np.random.Generator, *, dataset: str, loss: str, lasso: float, ridge: float,
                     algorithms: list[str], epsilons: list[float], plf: int, delta: float, decay: float, clip: float,
                     replicas: int, graph: str = "ring", samples_per_agent: int | None = None,
                     implementation=REFERENCE) -> pd.DataFrame:
    """samples_per_agent: keep the first that many rows of each agent's share of the shuffled split (a
    uniform subsample, for quick profiles); None keeps them all. implementation: REFERENCE (our batched
    run_recal), or a user's implementation of Algorithm 1 for the RECAL and DP-RECAL curves (`dpverify
    verify`; the baselines are always ours)."""
    user = resolve(implementation)
    try:
        data = _local_data(dataset, samples_per_agent, os.environ.get(DATA_ENV, ""))
    except DatasetNotAvailableError as missing:
        return pd.DataFrame([{"dataset": dataset, "loss": loss, "graph": graph, "status": f"{NOT_AVAILABLE}: {missing}"}])
    problem = CompositeProblem(loss, ridge=ridge, lasso=lasso)
    truth = solve_composite(problem, data, use_cvxpy=False)
    network = Network.from_networkx(GRAPHS[graph](NUM_AGENTS))
    x1 = INIT_SCALE * rng.standard_normal(data.dim)
    frames = []
    for algorithm, algorithm_rng in zip(algorithms, rng.spawn(len(algorithms))):
        for epsilon, run_rng in zip(epsilons if algorithm != "recal" else [None], algorithm_rng.spawn(len(epsilons))):
            started, cpu_started = time.perf_counter(), time.process_time()
            if algorithm in ("recal", "dp-recal"):
                points = _grid(RUN_CAP_FACTOR * NUM_AGENTS * plf + 1)
                relay = dict(epsilon=epsilon, delta=delta, plf=plf, decay=decay, clip=clip, replicas=replicas, rng=run_rng, x1=x1)
                if user is None:
                    run, settings = relay_run(problem, data, network, **relay, keep_x=points)
                    last = int(run.iterations.max()) + 1          # x^{K+1}: every replica has stopped (frozen) by then
                    kept = points[: run.x_history.shape[0]]
                    history, iterations, reached = run.x_history, run.iterations, run.plf
                    if kept[-1] != last:
                        kept, history = np.append(kept, last), np.concatenate([history, run.x_final[None]])
                else:
                    kept, history, iterations, reached, settings = relay_through_contract(
                        user, problem, data, network, **relay, points=points)
                frames.append(_rows(algorithm, epsilon, plf, dataset, loss, kept, iterations,
                                    history, truth, data, x1, iterations, reached,
                                    time.perf_counter() - started, settings, time.process_time() - cpu_started, graph))
            else:
                from dpverify.algorithms.dp_recal.baselines.comparison import COMPARED
                summary = COMPARED[algorithm](problem, data, network, epsilon=epsilon, delta=delta, plf=plf, decay=decay,
                                              clip=clip, replicas=replicas, rng=run_rng, x1=x1)
                points = _grid(summary.x_history.shape[0])
                frames.append(_rows(algorithm, epsilon, plf, dataset, loss, points, summary.iterations,
                                    summary.x_history[points - 1], truth, data, x1, summary.messages, summary.plf,
                                    time.perf_counter() - started, summary.settings, time.process_time() - cpu_started, graph))
    return pd.concat(frames, ignore_index=True)


def shared_parameters(values: dict) -> dict:
    """The parameters every task of a curves experiment takes; samples_per_agent "all" (the paper) -> None."""
    shared = {name: values[name] for name in ("loss", "lasso", "ridge", "algorithms", "epsilons", "plf", "delta",
                                              "decay", "clip", "replicas", "implementation") if name in values}
    samples = values["samples_per_agent"]
    shared["samples_per_agent"] = None if samples == ALL_SAMPLES else int(samples)
    return shared


def build_tasks(config: ExperimentConfig) -> list[Task]:
    values = config.values()
    shared = shared_parameters(values)
    return [Task(f"dp-recal/{config.id}/{dataset}", simulate_dataset, {"dataset": dataset, **shared},
                 cost=curves_cost(dataset, values))
            for dataset in values["datasets"]]


def final_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, algorithm and eps: mean final RE (and 10-90% band), accuracy, messages, PLF, time."""
    ok = results[results.status == "ok"]
    final = ok[ok.final] if not ok.empty else ok   # without any data there are no run columns to group by
    rows = []
    for (dataset, algorithm, epsilon), group in ([] if final.empty else final.groupby(
            ["dataset", "algorithm", "epsilon"], dropna=False, sort=True)):
        rows.append({"dataset": dataset, "algorithm": _label(algorithm), "id": algorithm,
                     "epsilon": epsilon, "runs": len(group), "RE_mean": group.relative_error.mean(),
                     "RE_q10": group.relative_error.quantile(0.1), "RE_q90": group.relative_error.quantile(0.9),
                     "accuracy": group.accuracy.mean(), "messages": group.messages.mean(), "plf": group.plf.mean(),
                     "seconds_per_run": group.seconds.iloc[0] / max(len(group), 1)})
    missing = results[results.status != "ok"]
    for row in missing.itertuples():
        rows.append({"dataset": row.dataset, "algorithm": "all", "id": "", "epsilon": np.nan, "runs": 0,
                     "RE_mean": np.nan, "note": row.status})
    return pd.DataFrame(rows)


def summarize(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    ok = results[results.status == "ok"]
    datasets = list(dict.fromkeys(ok.dataset))
    figure, axes = plt.subplots(2, max(len(datasets), 1), figsize=(4.6 * max(len(datasets), 1), 7.2), squeeze=False)
    for column, dataset in enumerate(datasets):
        part = ok[ok.dataset == dataset]
        for (algorithm, epsilon), group in part.groupby(["algorithm", "epsilon"], dropna=False, sort=False):
            label = _label(algorithm) + ("" if pd.isna(epsilon) else f", ε={epsilon:g}")
            curve = group.groupby("iteration")
            axes[0, column].plot(curve.relative_error.mean().index, curve.relative_error.mean().clip(lower=1e-17), label=label)
            axes[1, column].plot(curve.accuracy.mean().index, curve.accuracy.mean(), label=label)
        axes[0, column].set_yscale("log")
        axes[0, column].set_xscale("log")
        axes[1, column].set_xscale("log")
        axes[0, column].set_title(f"{dataset} ({config['loss']}), ||x*|| = {part.x_star_norm.iloc[0]:.3g}")
        axes[1, column].set_xlabel("iteration k")
        axes[0, column].set_ylabel("relative error (mean)")
        axes[1, column].set_ylabel("accuracy (mean)")
        axes[0, column].legend(fontsize=7)
    figure.tight_layout()
    table = final_table(results)
    missing = sorted(set(results.dataset) - set(datasets))
    parts = []
    for dataset in datasets:
        rows = table[(table.dataset == dataset) & table.RE_mean.notna()]
        parts.append(f"{dataset}: " + "; ".join(
            f"{r.algorithm}{'' if pd.isna(r.epsilon) else f' ε={r.epsilon:g}'} RE {r.RE_mean:.2g} acc {r.accuracy:.3f}"
            for r in rows.itertuples()) + f" (||x*|| = {ok[ok.dataset == dataset].x_star_norm.iloc[0]:.3g})")
    observed = (("Final relative error and accuracy (mean over runs) — " + " | ".join(parts) if parts else NOTHING_RUN)
                + (f". {', '.join(missing)}: data not available (no substitute used)." if missing else "."))
    if not datasets:   # no data at all: no empty figure in the report
        plt.close(figure)
    return FigureOutput({"curves": figure} if datasets else {}, observed, table)


EXPERIMENTS = [
    Experiment("figure-2", "dp-recal", HERE / "figure_2_linear_budgets.toml", build_tasks, summarize),
    Experiment("figure-5", "dp-recal", HERE / "figure_5_logistic_budgets.toml", build_tasks, summarize),
    Experiment("figure-3", "dp-recal", HERE / "figure_3_linear_comparison.toml", build_tasks, summarize),
    Experiment("figure-6", "dp-recal", HERE / "figure_6_logistic_comparison.toml", build_tasks, summarize),
]
