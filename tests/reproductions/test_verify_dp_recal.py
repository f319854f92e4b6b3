"""`dpverify verify` on DP-RECAL: the example (one run along the walk, plain numpy) and our reference conform;
nine realistic bugs planted into copies of the example are each flagged by the checks that should see them; update
bugs are refuted by the replay with the implementation's own noise, which accepts either reading of (7e) followed
consistently; the correct example's false-alarm rate over 20 seeds is within the stated level."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from joblib import Parallel, delayed

from dpverify.algorithms.core.tape import NoiseTape
from dpverify.algorithms.dp_recal import contract
from dpverify.reproductions.run.experiments import parameters_of
from dpverify.reproductions.verify.command import EXIT_NONCONFORMING, load_implementation, verify
from dpverify.theory.claims import Verdict
from dpverify.theory.dp_recal.conformance import followed_reading, replay, setting
from dpverify.theory.execution import CheckContext
from dpverify.theory.instruments.stats import SIGNIFICANCE
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

U_UPDATE = "u_new = u + lam_new - lam[i]"
RECEIVED = "u_new = u_tilde + lam_new - lam[i]"   # the reading a relay agent can compute: u^{k+1} = u~^k + lam+ - lam
# (bug, text in the example, planted text): each is refuted by the replay alone, with the implementation's own noise
UPDATE_BUGS = [
    ("clip of the mean gradient instead of each record's", "g = clipped_gradient(setting.sample_gradients(i, y[i]), c)",
     "g = clipped_gradient(setting.sample_gradients(i, y[i]).mean(axis=0, keepdims=True), c)"),
    ("per-sample clipping skipped", "g = clipped_gradient(setting.sample_gradients(i, y[i]), c)",
     "g = setting.sample_gradients(i, y[i]).mean(axis=0)"),
    ("stepsize of the previous agent (alpha_{i-1} for alpha_i)", "y_new = y[i] - alpha[i] * (g - lam_half)",
     "y_new = y[i] - alpha[i - 1] * (g - lam_half)"),
    ("beta = 1/2(n+1) read as (n+1)/2", "beta = 1.0 / (2.0 * (n + 1))", "beta = 1.0 / 2.0 * (n + 1)"),
    ("wrong sign in the dual update (7d)", "lam_new = lam_half + beta * ((x_new - x) - (y_new - y[i]))",
     "lam_new = lam_half + beta * ((x_new - x) + (y_new - y[i]))"),
    ("wrong sign in the u update (7e)", U_UPDATE, "u_new = u - lam_new + lam[i]"),
    ("un-noised u mixed into the x-update (the holder only has u~)", "x_new = prox_nr(x - (u_tilde + lam_half",
     "x_new = prox_nr(x - (u + lam_half"),
    ("prox_{nr} skipped", "x_new = prox_nr(x - (u_tilde + lam_half - lam[i]), n, setting.lasso, setting.ridge)",
     "x_new = x - (u_tilde + lam_half - lam[i])"),
    ("the two readings of (7e) mixed (received at odd k)", U_UPDATE,
     "u_new = (u_tilde if k % 2 else u) + lam_new - lam[i]"),
]


def _transcript(implementation, instance, seed: int) -> dict[str, np.ndarray]:
    run = implementation(instance, np.random.default_rng(seed))
    return {name: np.asarray(value, dtype=float) for name, value in run.items()}


def _residual(instance, transcript) -> float:
    """The largest |replayed - reported| over every value the replay predicts."""
    return max(float(np.max(np.abs(predicted - transcript[name])[np.isfinite(predicted)]))
               for name, predicted in replay(instance, transcript).items())


def test_the_example_and_the_reference_conform():
    """The example with every check, the privacy audit of its own messages included (run once in this file, not
    refuted); the reference with the exact and accounting checks (against itself, along the same walk)."""
    result = verify("dp-recal", f"{EXAMPLE}:run", claims=False)   # the claims: test_verify_claims_dp_recal.py
    assert result.conforms and result.exit_status == 0, result.lines()
    found = result.verdicts
    assert found["exact"] == found["accounting"] == found["replay"] == Verdict.CONFIRMED, result.lines()
    assert found["distribution"] == Verdict.INCONCLUSIVE    # not rejected; too few runs to rule out DISTRIBUTION_MARGIN
    assert found["noise-scale"] == Verdict.CONFIRMED        # 1,096 runs x q = 3 draws a round (10 of 10 seeds)
    assert found["privacy"] == Verdict.INCONCLUSIVE                              # an audit never confirms
    assert result.lines()[-1] == (f"{EXAMPLE}:run conforms to dp-recal: no check found a deviation "
                                  "(inconclusive: distribution, privacy)")
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


def test_the_replay_predicts_the_example_and_the_reference_to_round_off(tmp_path):
    """Each iteration replayed from the transcript's own values (the holder's y_i, lam_i rebuilt as Appendix A does):
    the example and the reference in both readings of (7e) match it to round-off, each in the reading it follows."""
    instance = setting(CheckContext(parameters=parameters_of("dp-recal", "quick")))
    example = load_implementation(f"{EXAMPLE}:run")
    received = load_implementation(f"{planted(EXAMPLE, tmp_path, U_UPDATE, RECEIVED)}:run")
    runs = [(example, instance, "literal"), (contract.REFERENCE, instance, "literal"), (received, instance, "received"),
            (contract.REFERENCE, replace(instance, u_reading="received"), "received")]
    for implementation, run_setting, reading in runs:
        for seed in range(3):
            transcript = _transcript(implementation, run_setting, seed)
            assert followed_reading(instance, transcript) == reading
            assert _residual(instance, transcript) < 1e-12, (reading, seed)
    literal = _transcript(example, instance, 0)     # the other reading's replay refutes it by the noise, O(sigma)
    predicted = contract.replay(instance, literal, "received")["iterates"]
    assert np.max(np.abs(predicted - literal["iterates"])) > 1.0


def test_the_reference_runs_the_settings_reading(tmp_path):
    """u_reading switches the reference (hence the exact check): on the same draws it equals the example in that
    reading, and the two readings differ from the second iteration on."""
    instance = setting(CheckContext(parameters=parameters_of("dp-recal", "quick")))
    assert instance.u_reading == "literal"
    received = load_implementation(f"{planted(EXAMPLE, tmp_path, U_UPDATE, RECEIVED)}:run")
    ours = contract.REFERENCE(replace(instance, u_reading="received"), NoiseTape(7))
    theirs = received(instance, NoiseTape(7))
    for name in ("messages", "iterates"):
        assert np.allclose(theirs[name], ours[name], rtol=1e-9, atol=1e-12)
    literal = contract.REFERENCE(instance, NoiseTape(7))
    assert np.array_equal(literal["messages"][0], ours["messages"][0])
    assert not np.allclose(literal["messages"][1:, 0], ours["messages"][1:, 0])


@pytest.mark.parametrize("bug, original, replacement", UPDATE_BUGS, ids=[b[0] for b in UPDATE_BUGS])
def test_each_update_bug_is_refuted_by_the_replay_with_its_own_noise(bug, original, replacement, tmp_path):
    result = verify("dp-recal", f"{planted(EXAMPLE, tmp_path, original, replacement)}:run", noise="own",
                    checks=("replay",))
    assert result.verdicts == {"replay": Verdict.REFUTED}, (bug, result.lines())
    assert result.exit_status == EXIT_NONCONFORMING
    assert "first failing check dp-recal/conformance-replay" in result.lines()[-1]


@pytest.mark.parametrize("reading, replacement", [("received", RECEIVED), ("literal", U_UPDATE)])
def test_the_replay_confirms_either_reading_followed_consistently(reading, replacement, tmp_path):
    """The deployable reading (u~^k + lam+ - lam) and the printed one both pass the replay with their own noise."""
    result = verify("dp-recal", f"{planted(EXAMPLE, tmp_path, U_UPDATE, replacement)}:run", noise="own",
                    checks=("replay",))
    assert result.verdicts == {"replay": Verdict.CONFIRMED} and result.exit_status == 0, (reading, result.lines())
    # 3 runs x (66 values of (u^k, x^k), k = 1..11, and 30 of the x passed; u~ carries the noise, not predicted)
    assert "(288 values over 3 runs with its own noise, 10 rounds each, rtol 1e-09)" in result.lines()[0]


def test_the_received_reading_is_judged_against_the_literal_reference_by_the_distribution(tmp_path):
    """verify's reference runs the printed (literal) reading: code in the received reading passes the replay, and the
    distribution check, which compares its messages with the reference's, refutes it (its u~ carries every earlier
    release's noise)."""
    received = f"{planted(EXAMPLE, tmp_path, U_UPDATE, RECEIVED)}:run"
    found = verify("dp-recal", received, noise="own", checks=("replay", "distribution")).verdicts
    assert found == {"replay": Verdict.CONFIRMED, "distribution": Verdict.REFUTED}


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
