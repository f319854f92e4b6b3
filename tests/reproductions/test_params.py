"""Experiment TOML: every value attributed; profiles override as labelled defaults; bad files fail."""

import pytest

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.reproductions.run.params import load_experiment

GOOD = """
[experiment]
id = "figure-9"
title = "t"
seed_line = "L1"
paper_says = "s"

[parameters.num_agents]
value = 50
source = "paper"
line = "L304"

[parameters.tau]
value = 0.99
source = "default"
why = "not given"
range = [0.95, 0.99]
range_why = "the spec's sweep"

[parameters.law]
value = "a"
source = "default"
why = "not given"
alternatives = ["a", "b"]
range_why = "both readings"

[parameters.theta]
value = 4.0
source = "default"
why = "not given"
derived = "the smallest valid bound"

[profiles.quick]
num_agents = 10
"""


def write(tmp_path, text):
    path = tmp_path / "experiment.toml"
    path.write_text(text)
    return path


def test_profiles_and_provenance(tmp_path):
    path = write(tmp_path, GOOD)
    paper = load_experiment(path, "paper")
    assert paper["num_agents"] == 50 and paper.parameters["num_agents"].source == "paper"
    assert paper.parameters["num_agents"].note == "L304"
    quick = load_experiment(path, "quick")
    assert quick["num_agents"] == 10
    assert quick.parameters["num_agents"].source == "default"
    assert "quick profile" in quick.parameters["num_agents"].note and "50" in quick.parameters["num_agents"].note
    assert [p.name for p in quick.defaults()] == ["num_agents", "tau", "law", "theta"]


def test_each_default_says_how_far_our_choice_reaches(tmp_path):
    quick = load_experiment(write(tmp_path, GOOD), "quick")
    tau, law, theta, agents = (quick.parameters[n] for n in ("tau", "law", "theta", "num_agents"))
    assert tau.free and tau.sweep_values() == [0.95, 0.99]
    assert tau.spread() == {"range": [0.95, 0.99], "range_why": "the spec's sweep"}
    assert law.free and law.sweep_values() == ["a", "b"]
    assert not theta.free and theta.spread() == {"derived": "the smallest valid bound"}
    assert not agents.free and agents.spread() == {"profile": True}     # a profile override: the profile's size
    provenance = quick.as_parameters().provenance("tau", "num_agents")
    assert provenance["tau"]["range"] == [0.95, 0.99] and "range" not in provenance["num_agents"]
    swept = quick.with_value("tau", 0.95)
    assert swept["tau"] == 0.95 and swept.parameters["tau"].range == (0.95, 0.99) and quick["tau"] == 0.99


def test_every_shipped_default_carries_a_range_alternatives_or_derivation():
    from dpverify.reproductions.run.experiments import experiments_of
    from dpverify.theory.papers import paper_ids

    free = 0
    for paper in paper_ids():
        for experiment in experiments_of(paper):
            for p in experiment.config("paper").defaults():
                assert p.free or p.derived, f"{experiment.config_file}: {p.name}"
                free += p.free
    assert free > 100


def test_unattributed_value_and_unknown_profile_rejected(tmp_path):
    with pytest.raises(InvalidParameterError, match="source"):
        load_experiment(write(tmp_path, GOOD.replace('line = "L304"', "")), "paper")
    with pytest.raises(InvalidParameterError, match="unknown profile"):
        load_experiment(write(tmp_path, GOOD), "huge")
    with pytest.raises(InvalidParameterError, match="undeclared"):
        load_experiment(write(tmp_path, GOOD + "rho = 3\n"), "quick")


def test_checks_receive_values_with_provenance_and_no_silent_default():
    from dpverify.reproductions.run.experiments import experiments_of
    from dpverify.theory.execution import UndeclaredParameterError

    parameters = experiments_of("dpdo-nc")[0].config("quick").as_parameters()
    assert parameters["radius"] == 3.0 and dict(parameters)["radius"] == 3.0
    assert parameters.provenance("radius") == {"radius": {"value": 3.0, "source": "paper",
                                                          "note": "L501: Omega = {x : ||x||_1 <= 3}"}}
    with pytest.raises(UndeclaredParameterError, match="declares no parameter 'learning_rate'"):
        parameters.get("learning_rate", 0.05)
