"""My Paper's experiments: one per figure or table, parameters in the TOML file beside it."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpverify.algorithms.my_paper.algorithm import noisy_averaging  # noqa: E402
from dpverify.reproductions.run.experiments import Experiment, FigureOutput  # noqa: E402
from dpverify.reproductions.run.params import ExperimentConfig  # noqa: E402
from dpverify.theory.execution import Task  # noqa: E402

HERE = Path(__file__).parent
WEIGHTS = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])


def consensus_errors(rng: np.random.Generator, iterations: int, sigma: float, replicas: int) -> pd.DataFrame:
    values = rng.normal(size=(replicas, 3, 2))
    released = noisy_averaging(values, WEIGHTS, sigma=sigma, iterations=iterations,
                               noise=rng.standard_normal((iterations, replicas, 3, 2)))
    error = np.linalg.norm(released - values.mean(axis=1, keepdims=True), axis=(2, 3))   # (iterations, replicas)
    k, r = np.meshgrid(np.arange(iterations), np.arange(replicas), indexing="ij")
    return pd.DataFrame({"iteration": k.ravel(), "replica": r.ravel(), "error": error.ravel()})


def build_tasks(config: ExperimentConfig) -> list[Task]:
    return [Task(f"my-paper/{config.id}", consensus_errors, config.values())]


def summarize(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    mean = results.groupby("iteration").error.mean()
    figure, axis = plt.subplots(figsize=(5, 3.5))
    axis.semilogy(mean.index, mean.to_numpy())
    axis.set_xlabel("iteration")
    axis.set_ylabel("mean consensus error")
    return FigureOutput({"error": figure}, f"mean error {mean.iloc[0]:.3g} -> {mean.iloc[-1]:.3g}")


EXPERIMENTS = [Experiment("figure-1", "my-paper", HERE / "figure_1.toml", build_tasks, summarize)]
