"""theory/verify/replayed_noise.py and the contracts' implied_noise: the privacy audit's score for noise reused across
rounds, and the choice between candidate scores on the fit part (theory/audit/scores.py, ChosenScore)."""

import numpy as np
import pytest

from dpverify.reproductions.run.experiments import parameters_of
from dpverify.reproductions.verify.command import suite_of
from dpverify.theory.audit.scores import CallableScore, ChosenScore, LdaScore
from dpverify.theory.execution import CheckContext
from dpverify.theory.verify.conformance import transcript
from dpverify.theory.verify.replayed_noise import likelihood_ratio_score, repetition, repetition_score


def test_repetition_is_zero_for_a_reused_draw_either_way_and_the_sum_of_squared_steps_otherwise():
    rng = np.random.default_rng(0)
    scale = np.array([1.0, 2.0, 4.0])                                     # (T,)
    draw = rng.normal(size=(1, 1, 2, 3))                                  # one draw per run and agent
    standard_kept = scale[None, :, None, None] * draw                     # the standard draw rescaled every round
    vector_kept = np.repeat(draw, 3, axis=1)                              # the same vector every round
    assert np.all(repetition(standard_kept, scale) < 1e-28) and np.all(repetition(vector_kept, scale) < 1e-28)
    fresh = rng.normal(size=(1, 3, 2, 3))
    standard = fresh / scale[None, :, None, None]
    by_standard = ((standard[:, 1:] - standard[:, :-1]) ** 2).sum(axis=(1, 3))
    by_vector = (((fresh[:, 1:] - fresh[:, :-1]) ** 2).sum(axis=3) / (scale[1:] * scale[:-1])[None, :, None]).sum(axis=1)
    np.testing.assert_allclose(repetition(fresh, scale), np.minimum(by_standard, by_vector), rtol=1e-14)


def test_repetition_reads_a_per_agent_scale_and_scores_an_agent_without_noise_zero():
    noise = np.random.default_rng(1).normal(size=(4, 5, 3, 2))
    scale = np.ones((5, 3))
    scale[:, 2] = 0.0
    noise[:, :, 2] = 0.0
    values = repetition(noise, scale)
    assert values.shape == (4, 3) and np.all(values[:, 2] == 0) and np.all(values[:, :2] > 0)


@pytest.mark.parametrize("paper", ["zcdp-nfl", "dpdo-nc", "wang-basar"])
def test_implied_noise_replayed_from_the_messages_alone_is_the_noise_the_reference_added(paper):
    """Under the neighbour a run was on, the noise replayed from its messages (the runs as one batch) is the noise it
    added, to rounding; under the other neighbour it differs in the audited agent only."""
    suite = suite_of(paper)
    setting = suite.setting(CheckContext(profile="quick", parameters=parameters_of(paper, "quick")))
    first, second = suite.neighbours(setting)
    runs = [transcript(suite.reference, first, np.random.default_rng(seed), suite.shapes) for seed in range(5)]
    messages = np.stack([run["messages"] for run in runs])
    added = np.stack([suite.added_noise(run) for run in runs])
    implied = suite.implied_noise(first, messages)
    np.testing.assert_allclose(implied, added, rtol=0, atol=1e-12)   # the sums' order aside
    other = suite.implied_noise(second, messages) - implied
    assert np.abs(other[:, :, 0]).max() > 1e-3 and np.all(other[:, :, 1:] == 0)


def test_the_repetition_score_separates_the_neighbours_completely_when_the_standard_draw_is_reused():
    """zCDP-NFL's reference with each client's standard draw kept from the first iteration (messages rebuilt from its
    states and calibration): every run on the first neighbour scores above every run on the second."""
    suite = suite_of("zcdp-nfl")
    setting = suite.setting(CheckContext(profile="quick", parameters=parameters_of("zcdp-nfl", "quick")))
    pair = suite.neighbours(setting)
    rng = np.random.default_rng(2)
    score = repetition_score(suite.implied_noise, suite.calibration, pair, suite.shapes(pair[0])["messages"])
    sides = []
    for side in pair:
        shape, sigma = suite.shapes(side)["messages"], suite.calibration(side)
        draws = rng.normal(size=(20, 1) + shape[1:])                      # one standard draw per run and client
        messages = np.zeros((20,) + shape)
        for n in range(shape[0]):   # w^(n) depends on the broadcasts before n only: with tilde w^(n) = 0, xi^(n) = -w^(n)
            messages[:, n] = -suite.implied_noise(side, messages)[:, n] + sigma[n][:, None] * draws[:, 0]
        sides.append(score(messages.reshape(20, -1)))
    assert sides[0].min() > 0 > sides[1].max()


def test_the_chosen_score_is_the_candidate_that_separates_the_fit_part_best():
    rng = np.random.default_rng(3)
    side0, side1 = rng.normal(size=(400, 2)), rng.normal(size=(400, 2))
    side1[:, 1] += 5.0                                                    # only the second coordinate separates
    chosen = ChosenScore({"first": CallableScore(lambda x: x[:, 0]), "second": CallableScore(lambda x: x[:, 1]),
                          "lda": LdaScore()})
    chosen.partial_fit(side0[:200], side1[:200])
    chosen.partial_fit(side0[200:], side1[200:])
    chosen.finalize()
    assert chosen.separation["first"] < 0.2 < 0.9 < chosen.separation["second"]
    assert chosen.chosen in ("second", "lda") and chosen.separation[chosen.chosen] == max(chosen.separation.values())
    np.testing.assert_array_equal(chosen(side1), chosen.candidates[chosen.chosen](side1))
    assert chosen.describe()["chosen"] == chosen.chosen


def test_wang_basar_neighbours_per_agent_oracle_gives_the_batched_oracles_gradients_wiggle_included():
    """The per-agent oracle an implementation calls (the audit's second neighbour carries the wiggle) gives the batched
    oracle's gradients, which the reference and the implied noise use (the pair itself: test_verify_wang_basar.py)."""
    suite = suite_of("wang-basar")
    pair = suite.neighbours(suite.setting(CheckContext(profile="quick", parameters=parameters_of("wang-basar", "quick"))))
    states = np.random.default_rng(4).uniform(-3, 3, size=(5,) + pair[0].x1.shape)
    for setting in pair:
        per_agent = np.array([[setting.agent_oracle(j, x[j]) for j in range(x.shape[0])] for x in states])
        np.testing.assert_allclose(per_agent, setting.oracle(states), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("paper, penalty", [("zcdp-nfl", lambda u: u * u / 2), ("dpdo-nc", np.abs)])
def test_the_likelihood_ratio_score_is_the_log_density_ratio_of_the_implied_standard_noise(paper, penalty):
    """ln p_first - ln p_second from the noise implied under each neighbour, standardized by the calibration: the
    Gaussian or Laplace log densities summed over every entry; larger on the first neighbour's runs on average."""
    suite = suite_of(paper)
    pair = suite.neighbours(suite.setting(CheckContext(profile="quick", parameters=parameters_of(paper, "quick"))))
    shape = suite.shapes(pair[0])["messages"]
    score = likelihood_ratio_score(suite.implied_noise, suite.calibration, suite.noise, pair, shape)
    runs = [np.stack([transcript(suite.reference, side, np.random.default_rng(seed), suite.shapes)["messages"]
                      for seed in range(200)]) for side in pair]
    scale = np.broadcast_to(np.asarray(suite.calibration(pair[0])).reshape(shape[0], -1), shape[:2])[None, :, :, None]
    first, second = (penalty(suite.implied_noise(side, runs[0]) / scale) for side in pair)
    np.testing.assert_allclose(score(runs[0].reshape(200, -1)), (second - first).sum(axis=(1, 2, 3)), rtol=1e-12)
    assert score(runs[0].reshape(200, -1)).mean() > 0 > score(runs[1].reshape(200, -1)).mean()
