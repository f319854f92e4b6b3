"""Wang & Basar reproductions: parameters with provenance (the benchmark is tested in test_bench.py)."""

import pytest

from dpverify.reproductions.run.experiments import experiments_of


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_parameters_have_provenance(profile):
    for experiment in experiments_of("wang-basar"):
        config = experiment.config(profile)
        assert all(p.source in ("paper", "default") and p.note for p in config.parameters.values())
    assert experiments_of("wang-basar")[2].config(profile)["sigmas"] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
