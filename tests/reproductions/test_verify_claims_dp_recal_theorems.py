"""`dpverify verify dp-recal`: Theorems 2-3's DP-RECAL checks re-run on a user's implementation through the
contract (theory/dp_recal/convergence.py: `_settings`, `_through_contract`). The contract gives a budget, not
sigma_1: each run's budget is the one Theorem 4 maps to DP_NOISE.sigma1 = 0.1, so the implementation calibrates
the very noise the reference runs with. Sizes are shrunk (2 replicas, K = 2000, ring only) to keep this fast."""

import functools
from pathlib import Path

import numpy as np
import pytest

from dpverify.algorithms.dp_recal import contract
from dpverify.algorithms.dp_recal.algorithm import RecalParams, paper_beta, sigma1_for_budget
from dpverify.theory.claims import Verdict
from dpverify.theory.door.implementations import implementation_value, load_implementation
from dpverify.theory.dp_recal import convergence
from dpverify.theory.execution import CheckContext
from dpverify.theory.papers import get_paper
from tests.reproductions.planting import planted

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "dp_recal" / "my_dp_recal.py"
PAPER_BUSIEST = 5624   # the busiest agent's activations over the paper profile's 96 walks of K = 20000 (random graph)


@pytest.fixture(autouse=True)
def small_runs(monkeypatch):
    monkeypatch.setattr(convergence, "RUN_SIZES", {"quick": (2, 2000)})
    monkeypatch.setattr(convergence, "RUN_GRAPHS", {"quick": ("ring",)})
    monkeypatch.setattr(convergence, "BOOTSTRAP", 50)


def _checks():
    claims = {c.id: c for c in get_paper("dp-recal").claims}
    return [(claim, check) for claim in ("dp-recal/theorem-2", "dp-recal/theorem-3")
            for check in claims[claim].checks if check.runs_algorithm]


def _verdicts(context: CheckContext) -> dict[str, Verdict]:
    return {check.name: check.execute(context).verdict for _, check in _checks()}


def test_both_dp_recal_checks_run_the_algorithm():
    assert [check.name for _, check in _checks()] == [
        "RECAL to the certified x*", "DP-RECAL (R > 1) to the certified x*",
        "RECAL: log-error slope with bootstrap CI", "DP-RECAL: log-error slope"]
    assert not any(check.long_runs for _, check in _checks())


def test_the_reference_runs_are_unchanged():
    """The numbers the code gives at these sizes (run_recal batched, DP_NOISE, both readings), pinned so that a
    refactoring which changes the arithmetic is seen. To 1e-9 relative, not to the bit: the order of floating-point
    sums differs between numpy versions (the lowest one pyproject allows, 1.26, gives the final REs up to 1e-10 apart, after
    2000 noisy iterations), and so does a deliberate regrouping (composite._few_rows_product moved
    received_mode_max_final_re by 2e-15); a change of the arithmetic itself moves them far more."""
    context = CheckContext()
    theorem2, theorem3 = convergence.check_theorem2_dp_recal(context), convergence.check_theorem3_dp_linear_rate(context)
    close = functools.partial(pytest.approx, rel=1e-9)
    assert convergence._runs(context)["ring/dp-literal"]["re"][-1].tolist() == close([2.4104076049566047e-05,
                                                                                      8.289177150196191e-05])
    assert theorem2.values["received_mode_max_final_re"] == close({"ring/dp-received": 1.4661310320704841})
    assert theorem3.values["ring/dp-literal"]["slope"] == close(-0.008081145770865703)
    assert theorem3.values["ring/dp-literal"]["r_squared"] == close(0.9727208072572445)


def test_the_budget_makes_the_implementation_draw_sigma_1():
    """Each run's setting: c unclipped, xi = its busiest agent's activations, and a budget whose Theorem 4
    calibration (with the setting's own Lemma 5 Delta) is DP_NOISE to round-off, up to the paper profile's xi;
    the example, given that setting, reports the noise scales of DP_NOISE."""
    instance = convergence._instance(CheckContext(), "ring")
    n = instance.data.num_agents
    params = RecalParams(1.0 / (instance.lipschitz + 1.0), paper_beta(n), convergence.DP_NOISE)
    rng = np.random.default_rng(5)
    walks = [contract.relay_walk(instance.network, rng, horizon=horizon) for horizon in (1, 30, 300)]
    settings = convergence._settings(instance, params, walks, np.zeros(instance.data.dim))
    for walk, setting in zip(walks, settings):
        assert setting.clip == convergence.UNCLIPPED and setting.plf == np.bincount(walk[:-1]).max()
        scales = convergence.DP_NOISE.std(contract.activation_counts(setting))
        np.testing.assert_allclose(contract.calibration(setting), scales, rtol=1e-15)
    example = load_implementation(f"{EXAMPLE}:run")
    reported = example(settings[1], np.random.default_rng(0))["noise_scales"]
    np.testing.assert_allclose(reported, convergence.DP_NOISE.std(contract.activation_counts(settings[1])), rtol=1e-12)
    delta = settings[0].sensitivity()
    for plf in (1, 700, PAPER_BUSIEST):
        epsilon = convergence.budget_for_sigma1(0.1, convergence.DP_DELTA, plf, 1.05, delta)
        assert sigma1_for_budget(epsilon, convergence.DP_DELTA, plf, 1.05, delta) == pytest.approx(0.1, rel=1e-15)


def test_the_example_gets_the_reference_verdicts():
    reference = _verdicts(CheckContext())
    assert set(reference.values()) == {Verdict.CONFIRMED}
    assert _verdicts(CheckContext(implementation=implementation_value(f"{EXAMPLE}:run"))) == reference


def test_noise_kept_in_u_makes_the_dp_recal_check_diverge(tmp_path):
    """The 'received' reading planted in the example (u^{k+1} = u~^{k+1}: the noise of every release stays in u):
    RECAL is untouched (eps = 0), DP-RECAL stalls far from x* while the reference converges."""
    buggy = planted(EXAMPLE, tmp_path, "x, u = x_new, u_new", "x, u = x_new, u_tilde")
    verdicts = _verdicts(CheckContext(implementation=implementation_value(f"{buggy}:run")))
    assert verdicts["RECAL to the certified x*"] == Verdict.CONFIRMED
    assert verdicts["DP-RECAL (R > 1) to the certified x*"] == Verdict.REFUTED
