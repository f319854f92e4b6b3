"""Decision rules of the v0 experiment claims (theory/dp_recal/v0.py) on synthetic result tables
shaped like reproductions/dp_recal/v0.py's: each rule confirms and refutes (or stays inconclusive) where
its pre-registered criterion says so; missing experiments are not-run; graphs are never pooled."""

import numpy as np
import pandas as pd
import pytest

from dpverify.reproductions.data.datasets import DATASET_NAMES
from dpverify.theory.claims import Verdict, evaluate
from dpverify.theory.dp_recal import claims as dp_recal
from dpverify.theory.execution import CheckContext

AVAILABLE = {name: "" for name in DATASET_NAMES}   # the decision tests do not depend on the data files

REPLICAS = 8   # one-sided exact Wilcoxon: p = 1/256 when every pair agrees (below 0.05/8 after Holm)
V0_CLAIMS = [c for c in dp_recal.V0 if c.id.split("/", 1)[1] in (
    "v0-figure-2-noise-not-significant", "v0-figure-3-budget-ordering", "v0-figure-3-near-nonprivate",
    "v0-figure-4-best", "v0-table-5", "v0-objective-informative")]


def _rows(algorithm, final_re, graph="ring", epsilon=10.0, dataset="mnist-v0", iterations=(1, 10, 100), curve=None,
          messages=100.0, cpu_seconds=1.0, x_star_norm=0.3, accuracy=0.5):
    """One algorithm's runs: RE at the stored iterations (curve(replica) -> array, default: 1, then final_re)."""
    rows = []
    for replica in range(REPLICAS):
        values = curve(replica) if curve else [1.0] + [final_re[replica]] * (len(iterations) - 1)
        for iteration, re in zip(iterations, values):
            rows.append({"dataset": dataset, "graph": graph, "algorithm": algorithm, "epsilon": epsilon,
                         "replica": replica, "iteration": iteration, "relative_error": re, "accuracy": accuracy,
                         "final": iteration == iterations[-1], "messages": messages, "plf": 30.0,
                         "cpu_seconds": cpu_seconds, "x_star_norm": x_star_norm, "status": "ok"})
    return rows


def _frame(*parts):
    return pd.DataFrame([row for part in parts for row in part])


def _spread(level):
    return level * (1 + 0.1 * np.arange(REPLICAS))


def _run(check, experiments):
    """A check as declared in claims.py (its `needs` and rule decide): (verdict, evidence)."""
    result = check.execute(CheckContext(experiments=experiments, datasets=AVAILABLE))
    return result.verdict, result.evidence


def _declared(claim_id: str, index: int = 0):
    return dp_recal.PAPER.claim(claim_id).checks[index]


# ---------------------------------------------------------------- missing results and the Table V fallback
def test_every_v0_experiment_claim_is_not_run_without_results():
    assert len(V0_CLAIMS) == 6
    for claim in V0_CLAIMS:
        assert evaluate(claim, CheckContext()).verdict == Verdict.NOT_RUN


def test_table_5_is_read_from_the_ring_runs_of_figure_4():
    ring = _rows("dp-recal", _spread(1e-3), messages=50) + _rows("dp-nids-28", _spread(1e-1), messages=100)
    complete = _rows("dp-recal", _spread(1e-1), graph="complete", messages=500) + _rows(
        "dp-nids-28", _spread(1e-3), graph="complete", messages=100)
    figure_4 = _frame(ring, complete)
    check = _declared("v0-table-5", 1)
    verdict, evidence = _run(check, {"v0-figure-4": figure_4})
    assert verdict == Verdict.CONFIRMED and list(evidence.values["messages"]) == ["mnist-v0/ring"]
    verdict, _ = _run(_declared("v0-table-5", 0), {"v0-figure-4": figure_4})
    assert verdict == Verdict.CONFIRMED                                  # the complete graph is not in Table V
    assert _run(check, {"v0-figure-2": figure_4})[0] == Verdict.NOT_RUN


# ---------------------------------------------------------------- v0 Fig. 4: graphs are separate cases
def test_best_on_both_graphs_confirms_and_losing_on_one_graph_refutes():
    best = _declared("v0-figure-4-best")
    both = _frame(*(_rows("dp-recal", _spread(1e-6), graph=g) + _rows("dp-extra-27", _spread(1e-2), graph=g)
                    for g in ("ring", "complete")))
    verdict, evidence = _run(best, {"v0-figure-4": both})
    assert verdict == Verdict.CONFIRMED
    assert set(evidence.values) - {"p_claimed", "p_opposite"} == {"mnist-v0/ring/dp-extra-27",
                                                                  "mnist-v0/complete/dp-extra-27"}
    loses = _frame(_rows("dp-recal", _spread(1e-6)), _rows("dp-extra-27", _spread(1e-2)),
                   _rows("dp-recal", _spread(1e-2), graph="complete"), _rows("dp-extra-27", _spread(1e-6), graph="complete"))
    assert _run(best, {"v0-figure-4": loses})[0] == Verdict.REFUTED


def test_at_x_star_zero_the_note_is_added_and_nothing_is_confirmed():
    """The trap of a degenerate optimum: the same significant ordering confirms at ||x*|| = 0.3 and is
    inconclusive at x* = 0, where RE measures whether x is exactly 0."""
    best = _declared("v0-figure-4-best")
    results = _frame(_rows("dp-recal", _spread(1e-6), x_star_norm=0.0), _rows("dp-nids-28", _spread(1e-2), x_star_norm=0.0))
    verdict, evidence = _run(best, {"v0-figure-4": results})
    assert "x* = 0" in evidence.summary and verdict == Verdict.INCONCLUSIVE
    assert evidence.summary.startswith("The rule confirms, but this instance could not have refuted the claim (x* = 0 on ")
    results = _frame(_rows("dp-recal", _spread(1e-6), x_star_norm=0.3), _rows("dp-nids-28", _spread(1e-2), x_star_norm=0.3))
    verdict, evidence = _run(best, {"v0-figure-4": results})
    assert "x* = 0" not in evidence.summary and verdict == Verdict.CONFIRMED


# ---------------------------------------------------------------- v0 Figs. 2-3
def _budgets(fast, slow):
    """DP-RECAL at eps 1 and 10 with the given curves, and RECAL."""
    iterations = (1, 2, 4, 8, 16)
    return _frame(_rows("dp-recal", None, epsilon=10.0, iterations=iterations, curve=fast),
                  _rows("dp-recal", None, epsilon=1.0, iterations=iterations, curve=slow),
                  _rows("recal", None, epsilon=np.nan, iterations=iterations, curve=fast))


def test_larger_budget_faster_by_the_area_under_the_log_curve():
    check = _declared("v0-figure-3-budget-ordering")
    quick = lambda r: [1.0, 1e-3, 0.0, 0.0, 0.0]                                   # noqa: E731
    slow = lambda r: [1.0, 1e-1 * (1 + r), 1e-5, 0.0, 0.0]                         # noqa: E731
    verdict, evidence = _run(check, {"v0-figure-3": _budgets(quick, slow)})
    # mean log10 over the 5 stored points: (0 - 3 - 16 - 16 - 16)/5 = -10.2 vs about (0 - 1 - 5 - 32)/5
    assert verdict == Verdict.CONFIRMED
    assert evidence.values["mnist-v0/ring"]["median_a"] == pytest.approx(-10.2)
    assert _run(check, {"v0-figure-3": _budgets(slow, quick)})[0] == Verdict.REFUTED
    same = lambda r: [1.0, 0.0, 0.0, 0.0, 0.0]                                     # noqa: E731
    assert _run(check, {"v0-figure-3": _budgets(same, same)})[0] == Verdict.INCONCLUSIVE


def test_noise_effect_rule_at_the_figure_2_budget():
    check = _declared("v0-figure-2-noise-not-significant")
    close = _frame(_rows("dp-recal", _spread(5e-9), epsilon=10.0), _rows("recal", _spread(1e-9), epsilon=np.nan))
    assert _run(check, {"v0-figure-2": close})[0] == Verdict.CONFIRMED        # within 10x of RECAL
    far = _frame(_rows("dp-recal", _spread(1e-3), epsilon=10.0), _rows("recal", _spread(1e-9), epsilon=np.nan))
    assert _run(check, {"v0-figure-2": far})[0] == Verdict.REFUTED


# ---------------------------------------------------------------- Table V: communication and time
def test_less_communication_rule():
    check = _declared("v0-table-5", 1)
    fewer = _frame(_rows("dp-recal", _spread(0.0), messages=4800), _rows("dp-nids-28", _spread(0.1), messages=9600))
    assert _run(check, {"v0-table-5": fewer})[0] == Verdict.CONFIRMED
    more = _frame(_rows("dp-recal", _spread(0.0), messages=9700), _rows("dp-nids-28", _spread(0.1), messages=9600),
                  _rows("dp-extra-27", _spread(0.1), messages=19200))
    verdict, evidence = _run(check, {"v0-table-5": more})
    assert verdict == Verdict.REFUTED and evidence.values["fewer"] == {"mnist-v0/ring": False}


@pytest.mark.parametrize("recal_seconds, expected", [(8.0 * 1.5, Verdict.CONFIRMED), (8.0 * 2.0, Verdict.CONFIRMED),
                                                     (8.0 * 2.1, Verdict.REFUTED), (0.8, Verdict.CONFIRMED)])
def test_similar_time_rule(recal_seconds, expected):
    """cpu_seconds is the batched run's (8 replicas): per run 1.5, 2.0, 2.1, 0.1 x the others' median (1 s)."""
    check = _declared("v0-table-5", 2)
    results = _frame(_rows("dp-recal", _spread(0.0), cpu_seconds=recal_seconds),
                     _rows("dp-nids-28", _spread(0.1), cpu_seconds=6.0), _rows("dp-extra-27", _spread(0.1), cpu_seconds=8.0),
                     _rows("dp-rwadmm-30", _spread(0.1), cpu_seconds=800.0))
    verdict, evidence = _run(check, {"v0-table-5": results})
    assert verdict == Verdict.INCONCLUSIVE      # our own CPU times are reported, never a verdict
    assert (evidence.values["excess"] <= 0) == (expected == Verdict.CONFIRMED)
    assert evidence.values["ratio"]["mnist-v0/ring"] == pytest.approx(recal_seconds / 8.0)
