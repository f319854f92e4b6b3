"""`--sweep`: a claim re-decided over a default's plausible range, on a synthetic experiment with known flips.

The toy check confirms when the experiment's measured y = x lies below a threshold and refutes otherwise, so the
verdict at each end of x's range is known in advance: it holds for all, fails for all, or depends on toy/x."""

from pathlib import Path

import pandas as pd
import pytest

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.reproductions.report.publish import claim_record
from dpverify.reproductions.run.experiments import Experiment
from dpverify.reproductions.run.sweep import SweepError, parse_sweeps, sweep_claims
from dpverify.theory.claims import Check, Claim, Method, evaluate, holds
from dpverify.theory.execution import CheckContext
from dpverify.theory.rules import exact

TOML = """
[experiment]
id = "toy"
title = "t"
seed_line = "L1"
paper_says = "y stays below 1/2"

[parameters]
x = {{ value = 0.2, source = "default", why = "not given", range = [{low}, {high}], range_why = "what a reader could pick" }}
n = {{ value = 10, source = "paper", line = "L2" }}
law = {{ value = "a", source = "default", why = "not given", alternatives = ["a", "b"], range_why = "two readings" }}
"""


def _experiment(tmp_path: Path, low: float, high: float) -> Experiment:
    path = tmp_path / "toy.toml"
    path.write_text(TOML.format(low=low, high=high))
    return Experiment("toy", "toy-paper", path, build_tasks=None, summarize=None)


def _rerun(experiment, config) -> pd.DataFrame:   # the toy experiment: it measures y = x
    if config["x"] < 0:
        raise InvalidParameterError("x must be >= 0")
    return pd.DataFrame({"y": [config["x"]]})


def _claim(threshold: float) -> Claim:
    def below(context: CheckContext):
        y = float(context.experiments["toy"]["y"].iloc[0])
        context.parameters["toy"]["x"]     # noqa: B018  (the check reads x through the experiment it needs)
        return holds(y < threshold, f"y = {y:g} vs {threshold:g}", y=y)
    return Claim("toy-paper/claim-1", "experiment", "L1", "t", "y < threshold",
                 (Check("below", Method.NUMERICAL, below, rule=exact(), needs=("toy",)),))


def _swept(tmp_path, low, high, threshold):
    experiment = _experiment(tmp_path, low, high)
    config = experiment.config("quick")
    context = CheckContext(parameters={"toy": config.as_parameters()}, experiments={"toy": _rerun(experiment, config)})
    claim = _claim(threshold)
    sweeps = parse_sweeps(["toy/x"], "toy-paper", "quick", [experiment])
    first = evaluate(claim, context)
    return first, sweep_claims([first], sweeps, context, evaluate, _rerun)[0]


def test_holds_for_all_fails_for_all_and_depends_on(tmp_path):   # about 0.1 s
    first, holds_all = _swept(tmp_path, 0.1, 0.4, threshold=0.5)
    assert first.verdict == holds_all.verdict == "confirmed"
    record = claim_record(holds_all, tmp_path)
    assert record["sweeps"] == [{"parameter": "toy/x", "outcome": "holds for all",
                                 "at": [{"value": 0.2, "verdict": "confirmed", "ours": True},
                                        {"value": 0.1, "verdict": "confirmed", "ours": False},
                                        {"value": 0.4, "verdict": "confirmed", "ours": False}]}]
    # the check reads the experiment's results, so it rests on all of its free defaults: x (swept) and law (not)
    assert record["free_defaults"] == [
        {"parameter": "toy/law", "value": "a", "alternatives": ["a", "b"], "range_why": "two readings", "swept": False},
        {"parameter": "toy/x", "value": 0.2, "range": [0.1, 0.4], "range_why": "what a reader could pick", "swept": True}]
    assert record["qualification"] == 'confirmed at our defaults (toy/law = "a", alternatives "a", "b"; not swept)'
    _, fails_all = _swept(tmp_path, 0.1, 0.4, threshold=0.05)
    assert fails_all.verdict == "refuted" and claim_record(fails_all, tmp_path)["sweeps"][0]["outcome"] == "fails for all"
    _, flips = _swept(tmp_path, 0.0, 1.0, threshold=0.5)
    assert first.verdict == "confirmed" and flips.verdict == "inconclusive"
    summary = flips.results[0].evidence.summary   # the verdict and the evidence at each value
    assert summary.startswith("Depends on toy/x (at our defaults: confirmed; toy/x = 0.0: confirmed; toy/x = 1.0: "
                              "refuted): inconclusive.")
    assert "toy/x = 1.0: y = 1 vs 0.5" in summary and "toy/x = 0.0: y = 0 vs 0.5" in summary
    assert claim_record(flips, tmp_path)["sweeps"][0]["outcome"] == "depends on toy/x"


def test_a_value_the_experiment_cannot_run_leaves_the_claim_undecided_there(tmp_path):
    _, result = _swept(tmp_path, -1.0, 0.4, threshold=0.5)
    assert result.verdict == "inconclusive"       # confirmed at ours and at 0.4, not run at -1: not "holds for all"
    assert "toy could not run at x = -1.0: x must be >= 0" in result.results[0].evidence.summary


def test_a_sweep_names_a_free_default(tmp_path):
    experiment = _experiment(tmp_path, 0.1, 0.4)
    assert [s.values() for s in parse_sweeps(["toy/x", "toy/law"], "toy-paper", "quick", [experiment])] == [
        [0.1, 0.4], ["b"]]
    for spec, message in [("toy/n", "'n' is the paper's value; free defaults of toy under the quick profile: x, law"),
                          ("toy/m", "'m' is not declared"), ("toy", "expected EXPERIMENT/PARAM"),
                          ("other/x", "expected EXPERIMENT/PARAM with EXPERIMENT one of paper 'toy-paper''s")]:
        with pytest.raises(SweepError, match=message):
            parse_sweeps([spec], "toy-paper", "quick", [experiment])


def test_a_run_of_every_paper_sweeps_the_defaults_its_specs_name_by_paper():
    from dpverify.reproductions.cli import _sweeps
    sweeps = _sweeps(None, ["dpdo-nc:figure-1/window", "zcdp-nfl:figure-1/rho", "dpdo-nc:figure-1/self_copy"], "quick")
    assert {paper: [s.parameter.name for s in found] for paper, found in sweeps.items()} == {
        "dpdo-nc": ["window", "self_copy"], "zcdp-nfl": ["rho"]}
    assert [s.values() for s in sweeps["zcdp-nfl"]] == [[0.05, 1.0]]
    assert _sweeps("dpdo-nc", ["figure-1/window", "dpdo-nc:figure-1/data_seed"], "quick")["dpdo-nc"][1].values() == [1, 3]   # ours (2) is the report's
