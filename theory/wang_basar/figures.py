"""Checks of what Sec. 6 of Wang & Basar says its figures and Table 1 show, on the reproduced results
(context.experiments[experiment id], produced by reproductions/wang_basar); each check declares the
experiment it needs (claims.py), so it is not-run without it. Each check measures; its rule decides."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from dpverify.algorithms.wang_basar.algorithm import (
    SECTION_61_SCHEDULE,
    WangBasarParams,
    graph_weights,
    step,
)
from dpverify.algorithms.wang_basar.problems import Estimation
from dpverify.theory.claims import Measurement, holds
from dpverify.theory.execution import CheckContext
from dpverify.theory.instruments.stats import SIGNIFICANCE, clopper_pearson, mean_interval

CONFIDENCE = 1 - SIGNIFICANCE     # default: the shared level; Clopper-Pearson intervals are two-sided at 95%
CONSENSUS_TOLERANCE = 1e-2        # default: max ||x_i^K - xbar^K|| below this counts as consensus (as in numerics; plausible 1e-3 to 1e-1)
TABLE_1 = {0.1: 0.048, 0.2: 0.058, 0.3: 0.064, 0.4: 0.070, 0.5: 0.078, 0.6: 0.091}   # L583
TABLE_METRIC = "error_agents"     # spec P6 default: mean over agents of ||x_i^K - theta*||


def check_figure_3(context: CheckContext):
    final = context.experiments["figures-3-4"]
    final = final[(final.row == "final") & (final.case == "random")]
    worst = float(final.consensus_final.max())
    at_star = int(final.at_star.sum())
    low, high = clopper_pearson(at_star, len(final), CONFIDENCE)
    return holds(worst < CONSENSUS_TOLERANCE, f"{len(final)} runs from random starts: max ||x_i^K - xbar^K|| = {worst:.2e} (consensus); "
                 f"{at_star} end at theta* (CP {CONFIDENCE:.0%} [{low:.3f}, {high:.3f}]), the others at the other minimum of the "
                 "extended landscape (see estimation-unique-minimum)", worst=worst, at_star=at_star, runs=len(final))


def _table_runs(context: CheckContext):
    results = context.experiments["table-1"]
    return results[(results.graph == results.graph.iloc[0]) & (results.init == "uniform_box")]


def check_table_1_trend(context: CheckContext):
    """L583: error increases with sigma. Spearman's rho on the default runs: the one-sided p of an increase
    for the claim; against it, a decrease, tested two-sided (a conservative p-value). Rule paired_dominance."""
    runs = _table_runs(context)
    rows = {}
    for metric in ("error_agents", "error_mean", "error_max"):
        for subset, data in (("all runs", runs), ("runs ending at theta*", runs[runs.at_star])):
            rho, p_two = stats.spearmanr(data.sigma, data[metric])
            rows[f"{metric}, {subset}"] = (float(rho), float(p_two / 2 if rho > 0 else 1 - p_two / 2))
    rho, p = rows[f"{TABLE_METRIC}, all runs"]
    p_decrease = float(stats.spearmanr(runs.sigma, runs[TABLE_METRIC])[1]) if rho < 0 else 1.0
    text = "; ".join(f"{k}: rho {r:.3f}, one-sided p {q:.2g}" for k, (r, q) in rows.items())
    return Measurement(f"Spearman of final error vs sigma over {len(runs)} runs (alpha {SIGNIFICANCE}, default metric {TABLE_METRIC}): {text}",
                       {**{k: str(v) for k, v in rows.items()}, "p_claimed": [p], "p_opposite": [p_decrease]})


def check_table_1_values(context: CheckContext):
    results = context.experiments["table-1"]
    lines, inside_default = [], []
    for (graph, init), group in results.groupby(["graph", "init"], sort=False):
        cells = []
        for sigma, printed in TABLE_1.items():
            values = group[group.sigma == sigma][TABLE_METRIC].to_numpy()
            low, high = mean_interval(values, SIGNIFICANCE)
            mean, half = values.mean(), (high - low) / 2
            inside = low <= printed <= high
            if graph == results.graph.iloc[0] and init == "uniform_box":
                inside_default.append(inside)
            cells.append(f"{sigma}: {mean:.3g}±{half:.2g} vs {printed}")
        lines.append(f"{graph}/{init}: " + ", ".join(cells))
    return holds(all(inside_default), f"mean {TABLE_METRIC} at k = 3000 (95% t-CI) vs printed; printed inside the CI for "
                 f"{sum(inside_default)}/{len(inside_default)} sigma under the defaults — " + " | ".join(lines)
                 + " (the metric, the initial distribution and the graph are unspecified: see the reproduction's variants)")


COMPARABLE_MARGIN = 0.05        # default: |mean paired difference| of the error that still counts as "comparable": one
                                # run in 20 ending trapped (error ~1) in one case and not the other; plausible 0.02-0.1
COMPARABLE_MARGINS = (0.02, COMPARABLE_MARGIN, 0.1)   # the plausible range's ends and the default: the verdict under each
SPEED_ITERATIONS = (100, 300)   # default: "speed" = the curves compared before K: the end of the constant phase (L597), and k = 300
FIGURE_5_METRIC = "error_nearest_column"   # max_i min_{j,s} ||u_i - s a_j||: ICA recovers "one of multiple columns" (L593)
READINGS = {"non-inferior": "DP - noise-free < margin (comparable, or better by any amount)",
            "equivalent": "|DP - noise-free| < margin ('slightly' better bounded by the same margin; TOST)"}


def _paired_differences(final: pd.DataFrame, metric: str) -> dict[tuple[float, int], np.ndarray]:
    """(sigma_var, iteration) -> DP minus noise-free of `metric`, paired by replica (common A, Z, init)."""
    base = final[final.sigma == 0]
    return {(float(s), int(k)): (group.sort_values("replica")[metric].to_numpy()
                                 - base[base.iteration == k].sort_values("replica")[metric].to_numpy())
            for (s, k), group in final[final.sigma > 0].groupby(["sigma", "iteration"])}


def check_figure_5_comparable(context: CheckContext):
    """L597/L600: with DP noise, 'comparable or even slightly better convergence accuracy and speed' than
    noise-free. Per sigma_var and per iteration (SPEED_ITERATIONS for speed, K for accuracy): the
    Student interval of the mean paired difference DP - noise-free of the Fig. 5 metric, simultaneous over
    the n comparisons (Bonferroni: each two-sided 1 - 2 alpha/n, so each one-sided bound is at alpha/n).
    Under each reading of 'comparable or slightly better' (READINGS) and each margin in COMPARABLE_MARGINS,
    the intervals in units of the margin go to the rule interval_below(1) (equivalence as two one-sided
    intervals: DP - noise-free and noise-free - DP). A metric on which no run converges cannot confirm."""
    results = context.experiments["figure-5"]
    horizon = int(results.iteration.max())
    wanted = results[results.iteration.isin([*SPEED_ITERATIONS, horizon])]
    differences = _paired_differences(wanted, FIGURE_5_METRIC)
    level = 2 * SIGNIFICANCE / len(differences)
    intervals = {key: mean_interval(d, level) for key, d in differences.items()}
    final = results[results.iteration == horizon]
    converged = {("noise-free" if s == 0 else f"sigma_var {s:g}"): int((~g.trapped).sum()) for s, g in final.groupby("sigma")}
    blind = [case for case, n in converged.items() if n == 0]
    cannot = (f"no run of {', '.join(blind)} ends within the trap radius of any +-a_j at K = {horizon}: the metric "
              "cannot tell converged from stalled runs") if blind else ""
    readings = {}
    for reading in READINGS:
        for margin in COMPARABLE_MARGINS:
            scaled = {f"sigma_var {s:g}, k = {k}": (low / margin, high / margin) for (s, k), (low, high) in intervals.items()}
            if reading == "equivalent":
                scaled |= {f"{key} (noise-free - DP)": (-high, -low) for key, (low, high) in scaled.items()}
            worst = max(high for _, high in scaled.values())
            readings[f"{reading}, margin {margin:g}"] = Measurement(
                f"largest upper bound / margin {worst:.2f}", {"intervals": scaled}, cannot_confirm=cannot)
    base = final[final.sigma == 0].sort_values("replica")
    other_column = int(np.sum(base.error_a1.to_numpy() > base[FIGURE_5_METRIC].to_numpy() + 1e-9))
    a1_other = base.error_a1[base.error_a1 > base[FIGURE_5_METRIC] + 1e-9]
    lines = "; ".join(f"sigma_var {s:g}, k = {k}: {np.mean(differences[s, k]):+.4f} [{low:+.4f}, {high:+.4f}]"
                      for (s, k), (low, high) in intervals.items())
    summary = (f"mean paired difference DP - noise-free of the max-agent nearest-column error ({len(base)} runs, common A, Z, "
               f"init), simultaneous {1 - 2 * SIGNIFICANCE:.0%} Student intervals (Bonferroni over {len(differences)}: "
               f"each {1 - level:.2%}), speed at k = {list(SPEED_ITERATIONS)}, accuracy at K = {horizon}: {lines}; "
               f"margins {list(COMPARABLE_MARGINS)} (default {COMPARABLE_MARGIN}, not in the paper); runs ending within the "
               f"trap radius of a column at K: " + ", ".join(f"{c} {n}/{len(base)}" for c, n in converged.items())
               + f". The literal error of a_1 (L597) is not used: in {other_column}/{len(base)} noise-free runs the nearest "
               f"column is another +-a_j, where it is {np.median(a1_other) if len(a1_other) else float('nan'):.3f} (median; "
               f"sqrt 2 = {np.sqrt(2):.3f}) whether or not the run converged: it measures which column a run reaches")
    why = ("the paper gives no margin for 'comparable' (L597); a mean difference of 0.05 is one run in 20 ending "
           "trapped (error ~1) in one case and not in the other; plausible 0.02-0.1")
    return Measurement(summary, {"differences": {f"{s:g}, k = {k}": [float(np.mean(d)), *intervals[s, k]] for (s, k), d in differences.items()},
                                 "converged_at_K": converged, "a1_other_column_runs": other_column},
                       parameters={"comparable_margin": {"value": list(COMPARABLE_MARGINS), "source": "default", "note": why}},
                       readings=readings, depends_on="the reading of 'comparable or even slightly better' "
                       f"({' / '.join(READINGS)}) and the margin {list(COMPARABLE_MARGINS)}")


def check_figure_5_trapped(context: CheckContext):
    final = context.experiments["figure-5"]
    final = final[final.row == "final"]
    counts = {float(s): (int(g.trapped.sum()), len(g)) for s, g in final.groupby("sigma")}
    trapped, runs = counts[0.0]
    text = ", ".join(f"sigma_var {s}: {t}/{n}" for s, (t, n) in counts.items())
    return holds(0 < trapped < runs, f"runs not at any +-a_j (nearest-column error > 0.1 for some agent) at K: {text}", **{str(k): str(v) for k, v in counts.items()})


def check_one_message(context: CheckContext):
    """C4 (L6, L146): one d-vector per agent per iteration, read off the messages Algorithm 2 returns."""
    problem = Estimation.as_printed()
    params = WangBasarParams(graph_weights("ring"), SECTION_61_SCHEDULE, 2, 0.5)
    states = np.zeros((3, 5, 2))
    _, messages = step(states, 1, problem.local_gradients, params, np.random.default_rng(0))
    return holds(messages.shape == (3, 5, 2), f"messages of one iteration: shape {messages.shape} = (replicas, agents, d): "
                 "one d-vector per agent, scaled by public w_ji per receiver; no encryption step")
