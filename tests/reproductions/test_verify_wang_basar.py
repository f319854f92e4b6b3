"""`dpverify verify` on Wang-Basar (seeds/003 Algorithm 2): the per-agent-loop example and our reference conform;
realistic bugs planted into copies of the example are each flagged by the checks that should see them; the correct
example's false-alarm rate over 20 seeds is within the stated level; the reference adapter is algorithm.run's
iteration."""

from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from joblib import Parallel, delayed

from dpverify.algorithms.core.tape import NoiseTape
from dpverify.algorithms.wang_basar import contract
from dpverify.algorithms.wang_basar.algorithm import run
from dpverify.algorithms.wang_basar.contract import _Negated  # -z: eq. (8) subtracts lambda n
from dpverify.reproductions.experiments import parameters_of
from dpverify.reproductions.verify import EXIT_NONCONFORMING, verify
from dpverify.theory.claims import Verdict
from dpverify.theory.execution import CheckContext
from dpverify.theory.stats import SIGNIFICANCE
from dpverify.theory.wang_basar.conformance import SUITE
from tests.reproductions.planting import planted

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "wang_basar" / "my_wang_basar.py"
CHEAP = {"accounting", "exact"}          # run beside the checks a bug must be flagged by (a few ms each)

# (bug, text in the example, planted text, the checks that must refute it)
BUGS = [
    ("sigma read as a standard deviation (noise scale off by sqrt(sigma_var))", "std = np.sqrt(setting.sigma_var)",
     "std = setting.sigma_var", {"accounting", "noise-scale", "exact"}),
    ("released noise scaled with the next round's stepsize (sensitivity lambda^k of (30) at the wrong index)",
     "sent[j] = x[j] - lam * (g + noise)", "sent[j] = x[j] - lam * g - stepsize(setting, k + 1) * noise",
     {"noise-scale", "exact"}),
    ("noise drawn but the un-noised value sent", "sent[j] = x[j] - lam * (g + noise)",
     "sent[j] = x[j] - lam * g", {"noise-scale", "exact"}),
    ("noise drawn but the un-noised values mixed", "x = weights @ sent", "x = weights @ unnoised",
     {"exact", "distribution"}),
    ("wrong mixing weights: agent i's own message left out (N_i taken without i)",
     "x = weights @ sent", "x = (weights - np.diag(np.diag(weights))) @ sent",
     {"exact", "distribution"}),
    ("stepsize off by one round", "lam = stepsize(setting, k)", "lam = stepsize(setting, k + 1)",
     {"exact", "accounting", "noise-scale"}),
    ("noise scaled by the stepsize twice (lambda^k lambda^k n)", "noise = rng.normal(0.0, std, size=d)",
     "noise = rng.normal(0.0, lam * std, size=d)", {"noise-scale", "exact"}),
    ("own un-noised message in the self-term (noise only in the copies sent to others)",
     "x = weights @ sent", "x = weights @ sent + np.diag(weights)[:, None] * (unnoised - sent)", {"exact"}),
]




def test_the_example_conforms_the_privacy_audit_included():
    """The five checks; the paper's claims re-run on the example are test_verify_claims_wang_basar.py's (minutes)."""
    result = verify("wang-basar", f"{EXAMPLE}:run", claims=False)
    assert result.conforms and result.exit_status == 0, result.lines()
    found = result.verdicts
    assert found["exact"] == found["accounting"] == found["noise-scale"] == Verdict.CONFIRMED, result.lines()
    assert found["privacy"] == Verdict.INCONCLUSIVE          # an audit never confirms
    assert result.lines()[-1].endswith("conforms to wang-basar: no check found a deviation")


def test_the_reference_conforms():
    result = verify("wang-basar", "dpverify.algorithms.wang_basar.contract:REFERENCE",
                    checks=("accounting", "exact", "noise-scale"))
    assert result.conforms and result.exit_status == 0, result.lines()
    assert set(result.verdicts.values()) == {Verdict.CONFIRMED}


@pytest.mark.parametrize("bug, original, replacement, flagged", BUGS, ids=[b[0] for b in BUGS])
def test_each_planted_bug_is_flagged_by_its_checks(bug, original, replacement, flagged, tmp_path):
    result = verify("wang-basar", f"{planted(EXAMPLE, tmp_path, original, replacement)}:run", checks=tuple(flagged | CHEAP))
    found = result.verdicts
    assert {name for name in flagged if found[name] == Verdict.REFUTED} == flagged, (bug, result.lines())
    assert result.exit_status == EXIT_NONCONFORMING
    assert "first failing check wang-basar/conformance-" in result.lines()[-1]


def _statistical_refutations(seed: int) -> int:
    found = (verify("wang-basar", f"{EXAMPLE}:run", seed=seed, checks=("noise-scale", "distribution"))).verdicts
    return sum(v == Verdict.REFUTED for v in found.values())


def test_false_alarm_rate_of_the_correct_example():
    """20 seeds x the two statistical checks (each refutes a conforming implementation at most at 0.05): the
    number of refutations is tested against that level with a one-sided binomial test at 0.001."""
    refuted = sum(Parallel(n_jobs=2)(delayed(_statistical_refutations)(seed) for seed in range(20)))
    assert scipy.stats.binomtest(refuted, 40, SIGNIFICANCE, alternative="greater").pvalue > 0.001, refuted


def test_the_reference_is_algorithm_run_with_the_draws_of_eq_8():
    """REFERENCE's states are algorithm.run's (same draws, sign of eq. (8)); its messages are eq. (8) with n = sqrt(
    sigma_var) z for the tape's z, its mechanism M = x - lambda g, and every round's draws come from the normal stream
    in (agent, coordinate) order."""
    setting = SUITE.setting(CheckContext(parameters=parameters_of("wang-basar", "quick")))
    t, n, d = setting.horizon, setting.num_agents, setting.dim
    ours = contract.REFERENCE(setting, NoiseTape(7))
    trajectory = run(setting.oracle, setting.x1[None], setting.params(), t + 1, _Negated(NoiseTape(7)),
                     snapshot_at=range(1, t + 2))
    assert np.array_equal(ours["iterates"], np.array([trajectory.snapshots[k][0] for k in range(1, t + 2)]))
    z = NoiseTape(7).standard_normal((t, n, d))
    lam = setting.schedule(np.arange(1, t + 1))[:, None, None]
    gradients = setting.oracle(ours["iterates"][:-1])
    np.testing.assert_allclose(ours["mechanism"], ours["iterates"][:-1] - lam * gradients, rtol=1e-12, atol=1e-14)
    sent = ours["iterates"][:-1] - lam * (gradients + np.sqrt(setting.sigma_var) * z)      # eq. (8), n = sqrt(sigma) z
    np.testing.assert_allclose(ours["messages"], sent, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours["noise_scales"], SUITE.calibration(setting), rtol=1e-12)
    assert setting.switch < t and setting.schedule(setting.switch + 1) < setting.schedule(setting.switch)  # both phases


def test_the_audit_neighbours_differ_in_one_gradient_by_an_l1_unit():
    setting = SUITE.setting(CheckContext(parameters=parameters_of("wang-basar", "quick")))
    first, second = SUITE.neighbours(setting)
    points = np.random.default_rng(0).uniform(-3, 3, size=(4, setting.num_agents, setting.dim))
    difference = first.oracle(points) - second.oracle(points)
    assert np.allclose(difference[:, 0], [1.0, 0.0]) and np.allclose(difference[:, 1:], 0.0)
    assert first.horizon == second.horizon == 1 and first.sigma_var == pytest.approx(93.89, rel=1e-3)
