"""Checks of what Sec. VII of DP-RECAL says its figures and tables show, on the reproduced results
(context.experiments[figure id]; the claims declare them as `needs`, so without them they are not-run).

Decisions (fixed before results are seen): comparisons are paired by replica at the final iterate,
one-sided Wilcoxon signed-rank per dataset, Holm across datasets (family = one claim), level
stats.SIGNIFICANCE; confirmed if the claimed direction is significant on every available dataset, refuted if
the opposite is significant on one, inconclusive otherwise (rule paired_dominance, declared in claims.py).
Datasets that are not available are named, not used. Each check measures; its rule decides.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from dpverify.theory.claims import Measurement, NothingToMeasure, holds
from dpverify.theory.execution import CheckContext
from dpverify.theory.instruments.stats import SIGNIFICANCE, holm, paired_comparison

NEAR_NONPRIVATE = 10.0  # default: our reading of "nearly as good as non-private": final RE within this factor of RECAL's, or both <= 1e-12 (plausible 2-100)
# default: final RE at or below this is exact (float64 rounding of an RE near machine precision; x* = 0 reached by the prox)
EXACT = 1e-12
TRIVIAL_NORM = 1e-2     # default: ||x*|| <= this: the certified minimizer is (numerically) 0 (plausible 1e-6-1e-2)


def trivial_minimizers(results: pd.DataFrame) -> pd.Series:
    """||x*|| per dataset (its smallest over the runs) where the certified minimizer is x* = 0 (<= TRIVIAL_NORM)."""
    norms = results[results.status == "ok"].groupby("dataset").x_star_norm.min()
    return norms[norms <= TRIVIAL_NORM]


def degenerate_optimum(results: pd.DataFrame) -> str:
    """Why a comparison of relative errors on these results cannot confirm anything ('' if it can): on a dataset
    whose certified minimizer is x* = 0, RE measures whether x is exactly 0 (the prox thresholds to it), not how
    far an algorithm converged (DESIGN.md: a degenerate optimum cannot confirm)."""
    trivial = trivial_minimizers(results)
    if trivial.empty:
        return ""
    return (f"x* = 0 on {', '.join(f'{d} (||x*|| = {v:.2g})' for d, v in trivial.items())}: there RE measures whether "
            "x is exactly 0, not accuracy")


def _final(results: pd.DataFrame) -> pd.DataFrame:
    ok = results[results.status == "ok"]
    return ok[ok.final]


def _missing(results: pd.DataFrame) -> str:
    missing = sorted(set(results.dataset) - set(results[results.status == "ok"].dataset))
    return f" Not available: {', '.join(missing)} (no substitute used)." if missing else ""


def paired_tests(pairs: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict:
    """The one-sided paired Wilcoxon tests of 'a < b' per comparison, for the rule paired_dominance: `p_claimed`
    (a < b) and `p_opposite` (a > b) in the order of `pairs`, and Holm's rejections at SIGNIFICANCE in each
    direction (`yes`, `no`: the rule decides from the p-values; these only word the summary)."""
    claimed = [paired_comparison(a, b, alternative="less").p_value for a, b in pairs.values()]
    opposite = [paired_comparison(a, b, alternative="greater").p_value for a, b in pairs.values()]
    return {"p_claimed": claimed, "p_opposite": opposite,
            "yes": holm(claimed, SIGNIFICANCE) if claimed else np.zeros(0, bool),
            "no": holm(opposite, SIGNIFICANCE) if opposite else np.zeros(0, bool)}


def _decide(pairs: dict[str, tuple[np.ndarray, np.ndarray]], what: str) -> tuple[str, dict]:
    """The measurement of a paired ordering (rule paired_dominance): the summary line and the values, one entry
    per comparison plus `p_claimed` / `p_opposite`."""
    tests = paired_tests(pairs)
    values = {d: {"p_claimed": p, "p_opposite": q, "median_a": float(np.median(a)), "median_b": float(np.median(b))}
              for (d, (a, b)), p, q in zip(pairs.items(), tests["p_claimed"], tests["p_opposite"])}
    if any(tests["no"]):
        what += ": the opposite is significant on some dataset"
    elif pairs and all(tests["yes"]):
        what += ": significant on every dataset"
    else:
        what += ": not significant on every dataset with these runs"
    return what, {**values, "p_claimed": tests["p_claimed"], "p_opposite": tests["p_opposite"]}


def _comparisons(values: dict) -> dict:
    """The per-comparison entries of a paired measurement's values (without its p-value lists)."""
    return {k: v for k, v in values.items() if k not in ("p_claimed", "p_opposite")}


def larger_budget_converges_faster(figure: str):
    """v1:L570: 'faster convergence with a larger privacy budget' — final RE at the largest eps below that at
    the smallest eps (same PLF), paired by replica (rule paired_dominance)."""

    def check(context: CheckContext) -> Measurement:
        results = context.experiments[figure]
        final = _final(results)
        dp = final[final.algorithm == "dp-recal"]
        pairs = {}
        for dataset, group in dp.groupby("dataset"):
            table = group.pivot_table(index="replica", columns="epsilon", values="relative_error")
            pairs[dataset] = (table[table.columns.max()].to_numpy(), table[table.columns.min()].to_numpy())
        exact = {d: bool(np.all(a <= EXACT) and np.all(b <= EXACT)) for d, (a, b) in pairs.items()}
        if pairs and all(exact.values()):   # no comparison left: the rule has nothing to order (inconclusive)
            return Measurement(
                "Every budget reaches RE <= 1e-12 at the final iterate on every dataset (the printed objective's x* is 0 "
                "or nearly, and the prox thresholds to it): the final error cannot order the budgets." + _missing(results),
                {"exact": exact, "p_claimed": [], "p_opposite": []})
        what, values = _decide(pairs, "final RE at the largest eps < at the smallest eps")
        return Measurement(what + f" (Wilcoxon, Holm, level {SIGNIFICANCE})." + _missing(results), values,
                           cannot_confirm=degenerate_optimum(results))
    return check


def nearly_nonprivate(figure: str):
    """v1:L570: 'when the privacy budget is large enough, the trained model is nearly as good as the non-private
    one' — at the largest eps, mean final RE within NEAR_NONPRIVATE x RECAL's (or both <= 1e-12) and accuracy
    within 1 percentage point, on every available dataset (criterion fixed here; rule exact)."""

    def check(context: CheckContext) -> Measurement:
        results = context.experiments[figure]
        final = _final(results)
        rows, ok = {}, []
        for dataset, group in final.groupby("dataset"):
            dp = group[(group.algorithm == "dp-recal") & (group.epsilon == group.epsilon.max())]
            base = group[group.algorithm == "recal"]
            re_dp, re_base = dp.relative_error.mean(), base.relative_error.mean()
            acc_gap = base.accuracy.mean() - dp.accuracy.mean()
            good = (re_dp <= NEAR_NONPRIVATE * re_base or max(re_dp, re_base) <= EXACT) and acc_gap <= 0.01
            rows[dataset] = {"re_dp_largest_eps": re_dp, "re_recal": re_base, "accuracy_gap": acc_gap, "nearly": bool(good)}
            ok.append(good)
        if not ok:
            raise NothingToMeasure(f"{figure}: no runs with data" + _missing(results))
        text = "; ".join(f"{d}: RE {v['re_dp_largest_eps']:.2g} vs {v['re_recal']:.2g}, accuracy gap {v['accuracy_gap']:.3f}"
                         for d, v in rows.items())
        measured = holds(all(ok), f"At the largest eps vs RECAL — {text}. Criterion: RE within {NEAR_NONPRIVATE:g}x (or "
                         "both <= 1e-12) and accuracy within 0.01." + _missing(results), **rows)
        return replace(measured, cannot_confirm=degenerate_optimum(results))
    return check


def minimizer_is_trivial(figure: str):
    """Not claimed by the paper: is the printed objective's minimizer informative? With + 1/2||x||_1 the
    minimizer may be x* = 0, whose accuracy is the share of the class sign(0) predicts (rule exact)."""

    def check(context: CheckContext) -> Measurement:
        results = context.experiments[figure]
        ok = results[results.status == "ok"]
        norms = ok.groupby("dataset").x_star_norm.first().to_dict()
        trivial = {d: n <= TRIVIAL_NORM for d, n in norms.items()}
        text = ", ".join(f"{d}: ||x*|| = {n:.3g}" for d, n in norms.items())
        return holds(not any(trivial.values()), f"Certified minimizers of the printed objective: {text}. Trivial "
                     f"(||x*|| <= 0.01) on {sum(trivial.values())} of {len(trivial)} datasets: the l1 weight n/2 after the "
                     "mapping to (1) dominates the data term." + _missing(results), norms=norms)
    return check


def best_at_same_budget(figure: str):
    """v1:L570: 'DP-RECAL consistently presents the best convergence accuracy when consuming the same privacy
    budget' — final RE of DP-RECAL below each compared algorithm's, per dataset (replicas share the instance and
    x^1), Holm over all (dataset, algorithm) comparisons (rule paired_dominance)."""

    def check(context: CheckContext) -> Measurement:
        results = context.experiments[figure]
        final = _final(results)
        pairs = {}
        for dataset, group in final.groupby("dataset"):
            table = group.pivot_table(index="replica", columns="algorithm", values="relative_error")
            for other in (c for c in table.columns if c != "dp-recal"):
                pairs[f"{dataset}/{other}"] = (table["dp-recal"].to_numpy(), table[other].to_numpy())
        if not pairs:
            raise NothingToMeasure(f"{figure}: no paired runs" + _missing(results))
        exact = [k for k, (a, b) in pairs.items() if np.all(a <= EXACT) and np.all(b <= EXACT)]
        decided = {k: v for k, v in pairs.items() if k not in exact}
        if not decided:   # no comparison left: the rule has nothing to order (inconclusive)
            return Measurement("every algorithm reaches RE <= 1e-12 (x* = 0 is reached exactly by the prox): the final "
                               "error cannot order them." + _missing(results), {"p_claimed": [], "p_opposite": []})
        what, values = _decide(decided, "final RE of DP-RECAL < each compared algorithm")
        medians = "; ".join(f"{k}: {v['median_a']:.2g} vs {v['median_b']:.2g}" for k, v in _comparisons(values).items())
        return Measurement(f"{what} (Wilcoxon, Holm over {len(decided)} comparisons, level {SIGNIFICANCE}). "
                           f"Median final RE DP-RECAL vs other: {medians}."
                           + (f" Both exact (<= 1e-12): {', '.join(exact)}." if exact else "") + _missing(results)
                           + " Baseline noise, sensitivity and stepsizes are harness defaults (spec §6).", values,
                           cannot_confirm=degenerate_optimum(results))
    return check
