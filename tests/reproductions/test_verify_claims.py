"""`dpverify verify`, part d: the paper's claims re-run on a user's implementation, beside the reference's
verdicts (reproductions/verify/rerun_claims.py). The agreement of the correct example is asserted in test_verify.py
(its full verify); here: a planted bug that breaks the regret makes claims diverge (exit 3), the cache keys
hold the implementation's source, and what cannot be re-run says so."""

import subprocess
import sys
from pathlib import Path

import pytest

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.reproductions.run.experiments import find_experiment
from dpverify.reproductions.run.runner import cache_key
from dpverify.reproductions.verify.command import EXIT_NONCONFORMING, verify
from dpverify.reproductions.verify.rerun_claims import claims_on, rerunnable
from dpverify.theory.claims import Verdict
from dpverify.theory.door.implementations import REFERENCE, implementation_value
from tests.reproductions.planting import planted

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "dpdo_nc" / "my_dpdo_nc.py"
ASCENT = ("z - alpha * g / (2.0", "z + alpha * g / (2.0")   # a gradient ascent step: the regret grows linearly


def test_a_bug_that_breaks_the_regret_makes_the_figure_claims_diverge(tmp_path):
    """The accounting check cannot see a sign error in the step; the re-run claims do: sublinear regret,
    confirmed on the reference's runs, is refuted on the implementation's (growth exponent > 1)."""
    result = verify("dpdo-nc", f"{planted(EXAMPLE, tmp_path, *ASCENT)}:run", checks=("accounting",),
                    claims=("figure-2",), cache=tmp_path / "cache")
    assert result.verdicts == {"accounting": Verdict.CONFIRMED}
    (figure_2,) = result.claims
    assert figure_2.reference.verdict == Verdict.CONFIRMED and figure_2.implementation.verdict == Verdict.REFUTED
    fit = figure_2.implementation.results[1].evidence.values["fits"]["figure-2/eps=5/half-euclidean"]
    assert fit["ci"][0] > 1.0, fit
    assert not result.conforms and result.exit_status == EXIT_NONCONFORMING
    assert result.lines()[-1].startswith(f"{tmp_path}/buggy.py:run does not conform to dpdo-nc: first diverging claim "
                                         "dpdo-nc/figure-2 (confirmed on the reference's runs, refuted on the "
                                         "implementation's): ")


def test_cache_keys_hold_the_implementation_source(tmp_path):
    """Same spec, edited file: another key; the reference's key differs from any implementation's."""
    experiment = find_experiment("dpdo-nc", "figure-2")
    config = experiment.config("quick")
    path = tmp_path / "mine.py"
    path.write_text(EXAMPLE.read_text())

    def key(value) -> str:
        (task,) = experiment.build_tasks(config)
        return cache_key(type(task)(task.key, task.function, {**task.params, "implementation": value}), 1)

    first = implementation_value(f"{path}:run")
    path.write_text(EXAMPLE.read_text() + "\n# an edit\n")
    edited = implementation_value(f"{path}:run")
    assert first["spec"] == edited["spec"] and first["source"] != edited["source"]
    assert len({key(REFERENCE), key(first), key(edited)}) == 3


def test_which_claims_are_rerun_and_what_cannot_be():
    assert [e.id for e in rerunnable("dpdo-nc", "quick")] == ["figure-1", "figure-2", "figure-3", "long-horizon"]
    remark_4 = next(c for c in claims_on("dpdo-nc", {"figure-1"}) if c.id == "dpdo-nc/remark-4")
    assert [check.name for check in remark_4.checks] == ["measured ordering of privacy levels"]   # sympy part not re-run
    with pytest.raises(DpverifyError, match="not a claim verify re-runs: dpdo-nc/lemma-2"):
        verify("dpdo-nc", f"{EXAMPLE}:run", checks=("accounting",), claims=("lemma-2",))


def test_the_command_names_the_diverging_claim(tmp_path):
    buggy = planted(EXAMPLE, tmp_path, *ASCENT)
    done = subprocess.run([sys.executable, "-m", "dpverify", "verify", "dpdo-nc", "--impl", f"{buggy}:run",
                           "--checks", "accounting", "--claim", "figure-2", "--cache", str(tmp_path / "cache")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=900)
    assert done.returncode == EXIT_NONCONFORMING, done.stdout + done.stderr
    assert "first diverging claim dpdo-nc/" in done.stdout.splitlines()[-1]
