"""`dpverify verify` on DP-RECAL: the example (one run along the walk, plain numpy) and our reference conform;
nine realistic bugs planted into copies of the example are each flagged by the checks that should see them; the
correct example's false-alarm rate over 20 seeds is within the stated level."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from joblib import Parallel, delayed

from dpverify.algorithms.core.tape import NoiseTape
from dpverify.algorithms.dp_recal import contract
from dpverify.reproductions.experiments import parameters_of
from dpverify.reproductions.verify import EXIT_NONCONFORMING, load_implementation, verify
from dpverify.theory.claims import Verdict
from dpverify.theory.dp_recal.conformance import setting
from dpverify.theory.execution import CheckContext
from dpverify.theory.stats import SIGNIFICANCE
from tests.reproductions.planting import planted

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "dp_recal" / "my_dp_recal.py"

# (bug, text in the example, planted text, the checks that must refute it); each bug is verified with these checks only
BUGS = [
    ("noise scale off by a factor (half)", "np.sqrt(sensitivity ** 2 / (2.0 * rho1))",
     "np.sqrt(sensitivity ** 2 / (8.0 * rho1))", {"accounting", "noise-scale", "exact"}),
    ("sensitivity with the holder's stepsize instead of max_j alpha_j", "sensitivity = 4.0 * alpha.max() * beta * c",
     "sensitivity = 4.0 * alpha[i] * beta * c", {"accounting", "noise-scale", "exact"}),
    ("composition by max instead of sum (rho_xi = rho_1 R^(xi-1) set to the budget)",
     "rho1 = total * (decay - 1.0) / (decay ** setting.plf - 1.0)", "rho1 = total / decay ** (setting.plf - 1)",
     {"accounting", "noise-scale", "exact"}),
    ("noise decayed with the iteration k instead of the activation count tau", "decay ** (-(tau[i] - 1) / 2.0)",
     "decay ** (-k / 2.0)", {"accounting", "noise-scale", "exact"}),
    ("noise drawn but the un-noised u passed", "u_tilde = u_new - noise", "u_tilde = u_new.copy()",
     {"noise-scale", "exact"}),
    ("un-noised u mixed into the x-update (the holder only has u~)", "x_new = prox_nr(x - (u_tilde + lam_half",
     "x_new = prox_nr(x - (u + lam_half", {"exact", "distribution"}),
    ("prox_{nr} skipped", "x_new = prox_nr(x - (u_tilde + lam_half - lam[i]), n, setting.lasso, setting.ridge)",
     "x_new = x - (u_tilde + lam_half - lam[i])", {"exact", "distribution"}),
    ("per-sample clipping skipped", "g = clipped_gradient(setting.sample_gradients(i, y[i]), c)",
     "g = setting.sample_gradients(i, y[i]).mean(axis=0)", {"exact"}),
    ("stepsize of the previous agent (alpha_{i-1} for alpha_i)", "y_new = y[i] - alpha[i] * (g - lam_half)",
     "y_new = y[i] - alpha[i - 1] * (g - lam_half)", {"exact"}),
]




def test_the_example_and_the_reference_conform():
    """The example with every check, the privacy audit of its own messages included (run once in this file, not
    refuted); the reference with the exact and accounting checks (against itself, along the same walk)."""
    result = verify("dp-recal", f"{EXAMPLE}:run", claims=False)   # the claims: test_verify_claims_dp_recal.py
    assert result.conforms and result.exit_status == 0, result.lines()
    found = result.verdicts
    assert found["exact"] == found["accounting"] == Verdict.CONFIRMED, result.lines()
    assert found["distribution"] == Verdict.INCONCLUSIVE    # not rejected; too few runs to rule out DISTRIBUTION_MARGIN
    assert found["noise-scale"] in (Verdict.CONFIRMED, Verdict.INCONCLUSIVE)    # 400 runs x q = 3 draws a round
    assert found["privacy"] == Verdict.INCONCLUSIVE                              # an audit never confirms
    assert result.lines()[-1].endswith("conforms to dp-recal: no check found a deviation")
    reference = verify("dp-recal", "dpverify.algorithms.dp_recal.contract:REFERENCE", checks=("accounting", "exact"))
    assert reference.exit_status == 0 and set(reference.verdicts.values()) == {Verdict.CONFIRMED}, reference.lines()


def test_the_reference_follows_the_walk_and_the_tape():
    """run_recal driven along the setting's walk, its u^{k+1} recovered from the recorded draws: the transcript's
    noise is the tape's N(0, 1) draws times the calibration, and the holders are the walk."""
    instance = setting(CheckContext(parameters=parameters_of("dp-recal", "quick")))
    ours = contract.REFERENCE(instance, NoiseTape(7))
    draws = NoiseTape(7).standard_normal((instance.horizon, instance.dim))
    assert np.allclose(contract.added_noise(ours), draws * contract.calibration(instance)[:, None], rtol=1e-12, atol=1e-12)
    assert np.array_equal(ours["noise_scales"], contract.calibration(instance))
    other = replace(instance, walk=instance.walk[::-1].copy())
    assert not np.allclose(contract.REFERENCE(other, NoiseTape(7))["messages"], ours["messages"])
    theirs = load_implementation(f"{EXAMPLE}:run")(instance, NoiseTape(7))
    assert np.allclose(theirs["messages"], ours["messages"], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("bug, original, replacement, flagged", BUGS, ids=[b[0] for b in BUGS])
def test_each_planted_bug_is_flagged_by_its_checks(bug, original, replacement, flagged, tmp_path):
    result = verify("dp-recal", f"{planted(EXAMPLE, tmp_path, original, replacement)}:run", checks=tuple(sorted(flagged)))
    found = result.verdicts
    assert {name for name in flagged if found[name] == Verdict.REFUTED} == flagged, (bug, result.lines())
    assert result.exit_status == EXIT_NONCONFORMING
    assert "first failing check dp-recal/conformance-" in result.lines()[-1]


def refutations(seed: int) -> int:
    found = (verify("dp-recal", f"{EXAMPLE}:run", seed=seed, checks=("noise-scale", "distribution"))).verdicts
    return sum(v == Verdict.REFUTED for v in found.values())


def test_false_alarm_rate_of_the_correct_example():
    """20 seeds (each its own walk and draws) x the two statistical checks (each refutes a conforming implementation
    at most at 0.05): the number of refutations is tested against that level with a one-sided binomial test at 0.001."""
    refuted = sum(Parallel(n_jobs=2)(delayed(refutations)(seed) for seed in range(20)))
    assert scipy.stats.binomtest(refuted, 40, SIGNIFICANCE, alternative="greater").pvalue > 0.001, refuted
