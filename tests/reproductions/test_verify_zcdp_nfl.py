"""`dpverify verify` on zCDP-NFL: the example and our reference conform; seven realistic bugs
planted into copies of the example are each flagged by the checks that should see them; bugs in the update (7)/(9)
are refuted by the replay with the implementation's own noise, where the exact check cannot run; the correct
example's false-alarm rate over 20 seeds is within the stated level.

Every verification of this file runs once, in one joblib batch over 2 workers (a module fixture): the statistical
checks cost 400 runs of each implementation, the privacy audit 20,000 short runs (it runs once, on the example)."""

from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from joblib import Parallel, delayed

from dpverify.algorithms.zcdp_nfl.contract import replay
from dpverify.reproductions.run.experiments import parameters_of
from dpverify.reproductions.verify.command import EXIT_NONCONFORMING, load_implementation, suite_of, verify
from dpverify.theory.claims import Verdict
from dpverify.theory.execution import DEFAULT_ROOT_SEED, CheckContext
from dpverify.theory.instruments.stats import SIGNIFICANCE
from tests.reproductions.once import computed_once
from tests.reproductions.planting import planted

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "zcdp_nfl" / "my_zcdp_nfl.py"
REFERENCE = "dpverify.algorithms.zcdp_nfl.contract:REFERENCE"
# the reference's checks (its distribution against itself adds nothing)
CHEAP = ("accounting", "exact", "replay", "noise-scale")
STATISTICAL = ("noise-scale", "distribution")
FALSE_ALARM_SEEDS = range(20)
LAST_LINE = f"{EXAMPLE}:run conforms to zcdp-nfl: no check found a deviation (inconclusive: distribution, privacy)"

# (bug, text in the example, planted text, the checks that must refute it). Each bug runs only the checks named.
BUGS = [
    ("noise scale off by a factor (the variance used as the standard deviation)",
     "sigmas = sensitivity / np.sqrt(2.0 * phi)", "sigmas = sensitivity ** 2 / (2.0 * phi)",
     {"accounting", "exact", "noise-scale"}),
    ("sensitivity computed with the next iteration's step eta^(n+1)",
     "sensitivity = 2.0 * setting.c1 / (samples * (2.0 * rho * degrees + 1.0 / eta))",
     "sensitivity = 2.0 * setting.c1 / (samples * (2.0 * rho * degrees + (n + 1) ** setting.eta_power / setting.eta0))",
     {"accounting", "exact"}),
    ("noise drawn but the neighbours' un-noised values mixed into (7)",
     "neighbour_sum = adjacency @ sent", "neighbour_sum = adjacency @ w",
     {"exact"}),
    ("noise drawn but the un-noised value sent", "sent = new_w + noise", "sent = new_w",
     {"exact", "noise-scale"}),
    ("per-sample clipping to c1 skipped", "gradients = clipped(gradients, setting.c1)", "pass",
     {"exact", "distribution"}),
    ("step size off by one iteration", "eta = setting.eta0 * n ** (-setting.eta_power)",
     "eta = setting.eta0 * (n + 1) ** (-setting.eta_power)", {"accounting", "exact"}),
    ("wrong mixing weights (own broadcast weighted 1 instead of |N_k| in (7))",
     "rho * (degrees * x + neighbour_sum)", "rho * (x + neighbour_sum)", {"exact"}),
    # issue 30 item 7: the setting states the total budget (epsilon, delta) over T; the example converts and splits it
    ("the whole budget spent at every iteration (a max instead of a sum over the T releases)",
     "return rho / sum(setting.tau ** (-(n - 1)) for n in range(1, setting.horizon + 1))", "return rho",
     {"accounting", "noise-scale", "privacy"}),
    ("the budget split over T - 1 iterations", "for n in range(1, setting.horizon + 1))",
     "for n in range(1, setting.horizon))", {"accounting"}),
]
PLANTED = {bug: (original, replacement) for bug, original, replacement, _ in BUGS}

# (bug, text in the example, planted text): bugs in the update, each refuted by `replay` alone with the
# implementation's own noise (noise="own"): the state it reports is not (7) of the broadcasts it received.
UPDATE_BUGS = [
    ("the dual's sign flipped in (7)", "- gamma - g", "+ gamma - g"),
    ("rho |N_k| instead of 2 rho |N_k| in the denominator of (7)",
     "new_w = numerator / (1.0 / eta + 2.0 * rho * degrees)", "new_w = numerator / (1.0 / eta + rho * degrees)"),
    ("the sum of the per-sample subgradients instead of their mean", "g = gradients.sum(axis=1) / samples",
     "g = gradients.sum(axis=1)"),
    ("the dual (9) updated from the un-noised states instead of the received broadcasts",
     "gamma = gamma + rho * (degrees * sent - adjacency @ sent)",
     "gamma = gamma + rho * (degrees * new_w - adjacency @ new_w)"),
] + [(bug, *PLANTED[bug]) for bug in (
    "step size off by one iteration", "noise drawn but the neighbours' un-noised values mixed into (7)",
    "per-sample clipping to c1 skipped", "wrong mixing weights (own broadcast weighted 1 instead of |N_k| in (7))")]
# bugs in the noise alone: the update of what was received is right, so the replay confirms them (the accounting,
# noise-scale and exact checks above refute them)
NOISE_BUGS = ["noise scale off by a factor (the variance used as the standard deviation)",
              "noise drawn but the un-noised value sent"]



def verdicts_of(implementation: str, checks: tuple[str, ...] | None, seed: int | None = None, noise: str = "tape"):
    """One verification, in a joblib worker: the verdict of each check, the exit status and the report lines. The
    paper's claims re-run on the implementation are tested in test_verify_claims_zcdp_nfl.py."""
    result = verify("zcdp-nfl", implementation, checks=checks, claims=False, noise=noise,
                    **({} if seed is None else {"seed": seed}))
    return result.verdicts, result.exit_status, result.lines()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, worker_id):
    """label -> (verdicts, exit status, lines) of every verification below, computed in one parallel batch, once
    per test run (`computed_once`: not again on each xdist worker that runs a test of this module)."""
    return computed_once("zcdp-nfl-verify-outcomes", lambda: _outcomes(tmp_path_factory.mktemp("planted")),
                         tmp_path_factory, worker_id)


def _outcomes(directory: Path) -> dict:
    jobs = {"example": (f"{EXAMPLE}:run", None, None), "reference": (REFERENCE, CHEAP, None)}
    bugs = {bug: planted(EXAMPLE, directory, original, replacement, f"buggy_zcdp_nfl_{i}.py")
            for i, (bug, original, replacement, _) in enumerate(BUGS)}
    jobs |= {f"bug/{bug}": (f"{bugs[bug]}:run", tuple(sorted(flagged)), None)
             for bug, _, _, flagged in BUGS}
    jobs |= {f"seed/{seed}": (f"{EXAMPLE}:run", STATISTICAL, seed) for seed in FALSE_ALARM_SEEDS}
    replayed = UPDATE_BUGS + [(bug, *PLANTED[bug]) for bug in NOISE_BUGS]
    jobs |= {f"replay/{bug}": (f"{planted(EXAMPLE, directory, original, replacement, f'replayed_zcdp_nfl_{i}.py')}:run",
                               ("replay",), None, "own") for i, (bug, original, replacement) in enumerate(replayed)}
    # the longest jobs first, so that the two workers finish together
    order = sorted(jobs, key=lambda label: (label != "example", jobs[label][1] is None or "distribution" not in jobs[label][1]))
    results = Parallel(n_jobs=2)(delayed(verdicts_of)(*jobs[label]) for label in order)
    return dict(zip(order, results))


def test_the_example_and_the_reference_conform(outcomes):
    """The example with every check, the privacy audit of its own messages included (not refuted); the reference
    with the accounting, exact, replay and noise-scale checks."""
    found, status, lines = outcomes["example"]
    assert status == 0, lines
    assert found["exact"] == found["accounting"] == found["replay"] == found["noise-scale"] == Verdict.CONFIRMED
    assert found["distribution"] == Verdict.INCONCLUSIVE    # not rejected; too few runs to rule out DISTRIBUTION_MARGIN
    assert found["privacy"] == Verdict.INCONCLUSIVE          # an audit never confirms
    assert lines[-1] == LAST_LINE
    found, status, lines = outcomes["reference"]
    assert status == 0 and set(found.values()) == {Verdict.CONFIRMED}, lines


def test_the_replay_reproduces_the_reference_and_the_example_to_round_off():
    """The replay of the transcript's own broadcasts gives back its iterates, w^(0..T), to round-off (fixed seeds)."""
    setting = suite_of("zcdp-nfl").setting(CheckContext(profile="quick", root_seed=DEFAULT_ROOT_SEED,
                                                        parameters=parameters_of("zcdp-nfl", "quick")))
    for implementation in (REFERENCE, f"{EXAMPLE}:run"):
        for seed in range(3):
            run = load_implementation(implementation)(setting, np.random.default_rng(seed))
            residual = np.abs(replay(setting, run)["iterates"] - run["iterates"]).max()
            assert residual < 1e-12, (implementation, seed, residual)


@pytest.mark.parametrize("bug", [b[0] for b in UPDATE_BUGS])
def test_each_bug_in_the_update_is_refuted_by_the_replay_with_its_own_noise(bug, outcomes):
    found, status, lines = outcomes[f"replay/{bug}"]
    assert found["replay"] == Verdict.REFUTED and status == EXIT_NONCONFORMING, (bug, lines)


@pytest.mark.parametrize("bug", NOISE_BUGS)
def test_a_bug_in_the_noise_alone_passes_the_replay(bug, outcomes):
    found, status, lines = outcomes[f"replay/{bug}"]
    assert found["replay"] == Verdict.CONFIRMED and status == 0, (bug, lines)


@pytest.mark.parametrize("bug, flagged", [(b[0], b[3]) for b in BUGS], ids=[b[0] for b in BUGS])
def test_each_planted_bug_is_flagged_by_its_checks(bug, flagged, outcomes):
    found, status, lines = outcomes[f"bug/{bug}"]
    assert {name for name in flagged if found[name] == Verdict.REFUTED} == flagged, (bug, lines)
    assert status == EXIT_NONCONFORMING
    assert "first failing check zcdp-nfl/conformance-" in lines[-1]


def test_false_alarm_rate_of_the_correct_example(outcomes):
    """20 seeds x the two statistical checks (each refutes a conforming implementation at most at 0.05): the
    number of refutations is tested against that level with a one-sided binomial test at 0.001."""
    refuted = sum(verdict == Verdict.REFUTED for seed in FALSE_ALARM_SEEDS
                  for verdict in outcomes[f"seed/{seed}"][0].values())
    trials = len(FALSE_ALARM_SEEDS) * len(STATISTICAL)
    assert scipy.stats.binomtest(refuted, trials, SIGNIFICANCE, alternative="greater").pvalue > 0.001, refuted


def test_the_setting_states_the_budget_in_the_papers_terms_and_phi1_agrees():
    """Issue 30 item 7: epsilon (the whole run's (eps, delta), L302) is handed over; phi1 is its conversion (Prop. 1.3
    inverted, the Corollary's split), checked; a run of another horizon states no total."""
    from dataclasses import replace

    from dpverify.algorithms.core.errors import InvalidParameterError
    from dpverify.algorithms.core.privacy import dynamic_zcdp_total, zcdp_to_dp

    setting = suite_of("zcdp-nfl").setting(CheckContext(parameters=parameters_of("zcdp-nfl", "quick")))
    total = dynamic_zcdp_total(setting.phi1, setting.tau, setting.horizon)
    assert setting.epsilon == 1.0 and zcdp_to_dp(total, setting.delta) == pytest.approx(1.0, rel=1e-12)
    assert setting.with_data(setting.data, 1).epsilon is None
    with pytest.raises(InvalidParameterError, match="does not spend epsilon = 1.0"):
        replace(setting, phi1=2 * setting.phi1)


def test_the_audit_of_the_whole_run_alone_refutes_noise_two_times_too_small(tmp_path):
    """Issue 30 item 3: the privacy check alone, --noise own, observing every broadcast of the 10 iterations, refutes
    noise 2x too small (leak factor about 1.5 at the default root seed, 99.75%; it read 0.80 when the score estimated the mean
    difference from the implementation's own runs: docs/verify.md, "The privacy audit")."""
    scale = "sigmas = sensitivity / np.sqrt(2.0 * phi)"
    result = verify("zcdp-nfl", f"{planted(EXAMPLE, tmp_path, scale, scale + ' / 2')}:run", checks=("privacy",),
                    noise="own", claims=False)
    assert result.verdicts["privacy"] == Verdict.REFUTED and result.exit_status == EXIT_NONCONFORMING, result.lines()


def test_the_audit_of_the_whole_run_alone_refutes_noise_reused_across_iterations(tmp_path):
    """Issue 30 item 3: each client's standard draw kept from the first iteration and rescaled by sigma_k(n). The
    neighbours differ by a constant clipped subgradient, so the messages' mean difference alone does not show it
    (leak factor 0 with the discriminant); the noise the messages imply under the other neighbour changes from
    iteration to iteration (Lemma I's step and varphi^(n) weigh the difference differently), under the true one it
    repeats, and the fit part chooses that score: leak factor 23.1 at the default root seed (docs/verify.md)."""
    reused = "base = base if n > 1 else rng.standard_normal((K, d))\n        noise = sigmas * base"
    result = verify("zcdp-nfl", f"{planted(EXAMPLE, tmp_path, 'noise = sigmas * rng.standard_normal((K, d))', reused)}:run",
                    checks=("privacy",), noise="own", claims=False)
    assert result.verdicts["privacy"] == Verdict.REFUTED and result.exit_status == EXIT_NONCONFORMING, result.lines()
    line = next(line for line in result.lines() if line.startswith("zcdp-nfl/conformance-privacy"))
    assert "scored by the implied-noise repetition" in line and float(line.split("leak factor >= ")[1].split()[0]) > 10
