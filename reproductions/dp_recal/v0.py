"""The v0 experiments of DP-RECAL (seeds/000 Sec. VII-A, v0:L506-L541): the "distributed Lasso problem on
real-world datasets" (the objective of v1's linear regression) on covtype and mnist, 8 agents.

* v0-figure-2: RECAL vs DP-RECAL (v0 Fig. 2); v0-figure-3: DP-RECAL at eps in {1, 5, 10} (v0 Fig. 3);
* v0-figure-4: DP-NIDS, DP-PG-EXTRA, DP-IC-ADMM, DP-RW-ADMM and DP-RECAL at one budget, LCI 600, on the
  circular and the complete graph (v0 Fig. 4);
* v0-table-5: Time, Comm. and Acc. on the circular graph (v0 Table V, v0:L532-L539), next to the printed
  numbers. Its runs ARE the ring runs of v0-figure-4 (same task keys and parameters, so the cache serves
  one to the other); its checks also read them from v0-figure-4 when only that figure was reproduced.

The runs are `curves.simulate_dataset` (the v1 Figs. 2/3 machinery) with a `graph` and, in the quick
profile, a uniform subsample of each agent's share (`samples_per_agent`). covtype is not shipped: its rows
say "data not available" unless a directory holding it is given (reproductions/data/datasets.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dpverify.reproductions.dp_recal import curves
from dpverify.reproductions.dp_recal.workload import curves_cost
from dpverify.reproductions.run.experiments import Experiment, FigureOutput
from dpverify.reproductions.run.params import ExperimentConfig
from dpverify.theory.dp_recal.v0 import cases
from dpverify.theory.execution import Task

HERE = Path(__file__).parent
SHARED_RUNS = {"v0-table-5": "v0-figure-4"}   # experiment -> the experiment whose task keys it reuses
TABLE_5_LINE = "v0:L535-L539"
# seeds/000 v0:L535-L539: algorithm key -> (name in Table V, {dataset: (Time, Comm., Acc.)})
PRINTED_TABLE_5 = {
    "dp-nids-28": ("DP-NIDS", {"covtype": (55.3, 9600, 9.7e-5), "mnist-v0": (302.6, 9600, 8.7e-6)}),
    "dp-extra-27": ("DP-PG-EXTRA", {"covtype": (55.5, 19200, 5.4e-5), "mnist-v0": (304.5, 19200, 4.5e-7)}),
    "dp-ic-admm-25": ("DP-IC-ADMM", {"covtype": (56.5, 19200, 2.5e-7), "mnist-v0": (295.1, 19200, 9.0e-11)}),
    "dp-rwadmm-30": ("DP-RW-ADMM", {"covtype": (53.9, 19200, 4.56e-8), "mnist-v0": (280.0, 19200, 6.3e-8)}),
    "dp-recal": ("DP-RECAL", {"covtype": (54.5, 4800, 7.9e-16), "mnist-v0": (292.6, 4800, 4.2e-16)}),
}


def build_tasks(config: ExperimentConfig) -> list[Task]:
    """One task per (dataset, graph); keys dp-recal/<experiment whose runs these are>/<dataset>/<graph>."""
    values = config.values()
    shared = curves.shared_parameters(values)
    group = SHARED_RUNS.get(config.id, config.id)
    return [Task(f"dp-recal/{group}/{dataset}/{graph}", curves.simulate_dataset,
                 {"dataset": dataset, "graph": graph, **shared}, cost=curves_cost(dataset, values))
            for dataset in values["datasets"] for graph in values["graphs"]]


def summarize_figure(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    """The v1 summary (which groups by dataset) with one case per (dataset, graph)."""
    return curves.summarize(config, cases(results))


def _relative_difference(ours: float, printed: float) -> float:
    return (ours - printed) / printed


def table_5_rows(results: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and algorithm: our CPU seconds per run, messages, final RE and classification accuracy,
    beside the printed Time, Comm. and Acc. with the relative difference (ours - printed) / printed."""
    ok = results[(results.status == "ok") & (results.graph == "ring")]
    final = ok[ok.final] if "final" in ok else pd.DataFrame(columns=["dataset", "algorithm"])  # no dataset available
    rows = []
    for dataset in sorted(set(results.dataset)):
        part = final[final.dataset == dataset]
        for key, (name, printed) in PRINTED_TABLE_5.items():
            time_p, comm_p, acc_p = printed[dataset] if dataset in printed else (np.nan,) * 3
            row = {"dataset": dataset, "algorithm": name, "id": key, "Time_printed": time_p, "Comm_printed": comm_p,
                   "Acc_printed": acc_p}
            runs = part[part.algorithm == key]
            if runs.empty:
                reason = results[(results.dataset == dataset) & (results.status != "ok")].status
                rows.append(row | {"note": reason.iloc[0] if len(reason) else "not run"})
                continue
            cpu = float(runs.cpu_seconds.iloc[0]) / len(runs)   # the batched run's CPU time / replicas
            messages, re = float(runs.messages.mean()), float(runs.relative_error.mean())
            rows.append(row | {
                "runs": len(runs), "cpu_seconds_per_run": cpu, "messages": messages, "plf": float(runs.plf.mean()),
                "RE_mean": re, "RE_median": float(runs.relative_error.median()), "accuracy": float(runs.accuracy.mean()),
                "x_star_norm": float(runs.x_star_norm.iloc[0]),
                "Time_relative_difference": _relative_difference(cpu, time_p),
                "Comm_relative_difference": _relative_difference(messages, comm_p),
                "Acc_as_RE_relative_difference": _relative_difference(re, acc_p), "note": ""})
    return pd.DataFrame(rows)


def summarize_table_5(config: ExperimentConfig, results: pd.DataFrame) -> FigureOutput:
    table = table_5_rows(results)
    parts = []
    for dataset, group in table.groupby("dataset", sort=True):
        if "runs" not in group or group.runs.isna().all():
            parts.append(f"{dataset}: {group.note.iloc[0]}")
            continue
        cells = "; ".join(
            f"{r.algorithm}: Time {r.cpu_seconds_per_run:.3g} s CPU (printed {r.Time_printed:g}, "
            f"{r.Time_relative_difference:+.0%}), Comm. {r.messages:.0f} (printed {r.Comm_printed:.0f}, "
            f"{r.Comm_relative_difference:+.0%}), RE {r.RE_mean:.2g} (printed Acc. {r.Acc_printed:.2g}), "
            f"accuracy {r.accuracy:.3f}" for r in group.itertuples())
        parts.append(f"{dataset} (||x*|| = {group.x_star_norm.iloc[0]:.3g}) — {cells}")
    observed = (f"Ours vs printed ({TABLE_5_LINE}), circular graph, {config['replicas']} runs, LCI {config['plf']}, "
                f"eps {config['epsilons'][0]:g}: " + " | ".join(parts) + ". Time = this machine's CPU seconds per run "
                "(batched runs / replicas; the paper: Matlab on an i5-12500H, unit not stated). Comm. = messages, one "
                "vector over one edge = 1. The printed 'Acc.' values (down to 4.2e-16) are read as relative errors "
                "||x^k - x*||/||x^0 - x*|| (v0:L522's metric); classification accuracy (sign(B x) = b) is reported "
                "beside them.")
    return FigureOutput({}, observed, table)


V0_EXPERIMENTS = [
    Experiment("v0-figure-2", "dp-recal", HERE / "v0_figure_2_noise.toml", build_tasks, summarize_figure),
    Experiment("v0-figure-3", "dp-recal", HERE / "v0_figure_3_budgets.toml", build_tasks, summarize_figure),
    Experiment("v0-figure-4", "dp-recal", HERE / "v0_figure_4_comparison.toml", build_tasks, summarize_figure),
    Experiment("v0-table-5", "dp-recal", HERE / "v0_table_5_ring.toml", build_tasks, summarize_table_5),
]
