"""`dpverify bench`: every baseline computes the reference's numbers on the same draws; the interleaving is
a rotation; medians, ranges, paired ratios, exponent fits and target verdicts on synthetic numbers; the
command through typer's CliRunner. No test times anything."""

import itertools

import numpy as np
import pytest
from typer.testing import CliRunner

from dpverify.reproductions import cli
from dpverify.reproductions.bench import papers as bench
from dpverify.reproductions.bench import timing
from dpverify.reproductions.dpdo_nc import bench as dpdo_bench
from dpverify.reproductions.wang_basar import bench as wang_bench
from dpverify.reproductions.zcdp_nfl import bench as zcdp_bench

SMALL = {
    "zcdp-nfl": lambda: zcdp_bench.contenders(3, 4, agents=8, dim=3),
    "zcdp-nfl grid cell": lambda: zcdp_bench.grid_contenders(2, 10, 2),
    "dpdo-nc": lambda: dpdo_bench.contenders(4, 8),
    "dpdo-nc grid cell": lambda: dpdo_bench.grid_contenders(3, 10, 8),
    "wang-basar": lambda: wang_bench.contenders(4, 8),
}


@pytest.mark.parametrize("name", list(SMALL))
def test_every_baseline_gives_the_reference_numbers_on_the_same_draws(name):
    contenders = SMALL[name]()
    rounds = 6
    expected = contenders.reference(np.random.default_rng(5), rounds)
    assert np.abs(expected).max() > 0.1          # a state that moved, so agreement means something
    for baseline in (contenders.loop, contenders.vectorized):
        np.testing.assert_allclose(baseline(np.random.default_rng(5), rounds), expected, rtol=1e-12, atol=1e-12)
    # other draws give other numbers: the agreement is not an accident of the noise being irrelevant
    assert not np.allclose(contenders.vectorized(np.random.default_rng(6), rounds), expected, rtol=1e-6)
    bench.check_same_numbers(contenders)


def test_a_baseline_that_differs_makes_the_benchmark_invalid():
    contenders = zcdp_bench.contenders(2, 3, agents=6, dim=2)
    vectorized = contenders.vectorized
    broken = bench.replace(contenders, vectorized=lambda rng, rounds: vectorized(rng, rounds) * (1 + 1e-9))
    with pytest.raises(bench.BenchmarkInvalid, match="vectorized baseline and the reference disagree"):
        bench.check_same_numbers(broken)


def test_every_limit_draws_its_noise_from_the_generator_it_is_given():
    """The limit is no algorithm, but its noise draw is part of the floor it measures."""
    for make in (lambda: zcdp_bench.contenders(3, 2, agents=6, dim=2), lambda: dpdo_bench.contenders(3, 2),
                 lambda: wang_bench.contenders(3, 2)):
        contenders = make()
        rng = np.random.default_rng(0)
        contenders.limit(rng, 2)
        assert rng.bit_generator.state != np.random.default_rng(0).bit_generator.state


def test_interleaving_is_a_rotation():
    assert timing.rotation_schedule("ABC", 5) == [("A", "B", "C"), ("B", "C", "A"), ("C", "A", "B"),
                                                  ("A", "B", "C"), ("B", "C", "A")]
    assert timing.rotation_schedule(["x"], 2) == [("x",), ("x",)]


def test_interleaved_seconds_warm_up_then_follow_the_schedule():
    calls, ticks = [], itertools.count()
    implementations = {name: (lambda name=name: calls.append(name)) for name in "ABC"}
    seconds = timing.interleaved_seconds(implementations, repeats=4, warmup=1, clock=lambda: float(next(ticks) ** 2))
    assert calls == list("ABC") + list("ABC" "BCA" "CAB" "ABC")
    # clock reads t^2 at the k-th reading: call j of the timed ones spans readings 2j, 2j+1 -> (2j+1)^2 - (2j)^2 = 4j+1
    spans = {name: [] for name in "ABC"}
    for j, name in enumerate(list("ABC" "BCA" "CAB" "ABC")):
        spans[name].append(4 * j + 1)
    for name in "ABC":
        np.testing.assert_array_equal(seconds[name], spans[name])


def test_short_calls_are_repeated_to_the_minimum_duration():
    calls, now = [], [0.0]
    durations = {"short": 0.01, "long": 0.3}

    def implementation(name):
        calls.append(name)
        now[0] += durations[name]

    seconds = timing.interleaved_seconds({name: (lambda name=name: implementation(name)) for name in durations},
                                         repeats=2, min_seconds=0.05, clock=lambda: now[0])
    assert calls == ["short", "long"] + ["short"] * 5 + ["long"] + ["long"] + ["short"] * 5
    np.testing.assert_allclose(seconds["short"], [0.01, 0.01])
    np.testing.assert_allclose(seconds["long"], [0.3, 0.3])


def test_spread_and_paired_ratios():
    spread = timing.Spread.of([3.0, 1.0, 2.0, 10.0, 4.0])
    assert (spread.median, spread.low, spread.high) == (3.0, 1.0, 10.0)
    assert spread.text(scale=1e3, digits=1) == "3000.0 (1000.0-10000.0)"
    # paired: the ratio of each repeat, not the ratio of medians (which would be 2.0 here)
    ratio = timing.paired_ratio(np.array([2.0, 4.0, 9.0]), np.array([1.0, 4.0, 3.0]))
    assert (ratio.median, ratio.low, ratio.high) == (2.0, 1.0, 3.0)
    with pytest.raises(ValueError, match="same repeats"):
        timing.paired_ratio(np.ones(3), np.ones(2))


def test_exponent_fit_recovers_known_exponents():
    rng = np.random.default_rng(0)
    cells = list(itertools.product([1, 10, 100], [10, 50, 200], [2, 8]))
    R, N, d = (np.array(column, dtype=float) for column in zip(*cells))
    seconds = 1e-4 * N**0.8 * R**0.5 * d**0.1 * np.exp(rng.normal(0, 0.02, len(cells)))   # 2% noise
    fitted = timing.fit_exponents({"N": N, "R": R, "d": d}, seconds)
    for name, true in (("N", 0.8), ("R", 0.5), ("d", 0.1)):
        assert abs(fitted[name].estimate - true) < 0.02
        assert fitted[name].low < fitted[name].estimate < fitted[name].high < fitted[name].low + 0.05
    exact = timing.fit_exponents({"N": N, "R": R}, 3.0 * N**1.25 * R)
    assert exact["N"].estimate == pytest.approx(1.25, abs=1e-9) and exact["R"].estimate == pytest.approx(1, abs=1e-9)
    assert exact["N"].high - exact["N"].low < 1e-9


@pytest.mark.parametrize("target, value, met", [
    (bench.LIMIT_TARGET, 2.0, True), (bench.LIMIT_TARGET, 2.0 + 1e-9, False), (bench.LIMIT_TARGET, 1.1, True),
    (bench.VECTORIZED_TARGET, 3.0, True), (bench.VECTORIZED_TARGET, 3.0 - 1e-9, False),
    (bench.GRID_NEVER_SLOWER, 1.0, True), (bench.GRID_NEVER_SLOWER, 1.01, False),
    (bench.SPARSE_N_EXPONENT, 1.0, True), (bench.SPARSE_N_EXPONENT, 1.2, False),
])
def test_target_verdicts_at_the_boundaries(target, value, met):
    assert target.met(value) is met
    line = target.line(timing.Spread(value, value, value))
    assert line.endswith(": met") if met else line.endswith(": NOT met")


def test_a_range_across_the_bound_is_said():
    line = bench.LIMIT_TARGET.line(timing.Spread(1.9, 1.5, 2.4))
    assert line == "reference / physical limit: 1.90 (1.50-2.40)x (target <= 2x): met (the range crosses the bound)"
    assert "crosses" not in bench.VECTORIZED_TARGET.line(timing.Spread(4.0, 3.5, 5.0))


def test_default_targets_from_synthetic_timings():
    per_round = {"reference": np.array([1.0, 2.0, 1.0]), "vectorized": np.array([4.0, 5.0, 2.0]),
                 "limit": np.array([0.5, 0.5, 0.6])}
    rows = {target.description: (measured, why) for target, measured, why in bench.default_targets(per_round, 100)}
    assert rows["reference / physical limit"][0] == timing.Spread(2.0, 1.0 / 0.6, 4.0)
    assert rows["speed-up over the vectorized baseline"] == (timing.Spread(2.5, 2.0, 4.0), "")
    below = {target.description: why for target, _, why in bench.default_targets(per_round, 99)}
    assert below["speed-up over the vectorized baseline"] == "applies at R >= 100"


def test_worst_cell_ignores_single_replicas():
    cells = [bench.GridCell(r, 10, 2, timing.Spread(1, 1, 1), timing.Spread(1, 1, 1), timing.Spread(ratio, ratio, ratio))
             for r, ratio in ((1, 5.0), (10, 0.5), (100, 0.8), (10, 0.7))]
    assert bench.worst_cell(cells).ratio.median == 0.8


def test_grid_reports_ratios_exponents_and_targets():
    lines = []
    results = bench.run_grid("zCDP-NFL", zcdp_bench.grid_contenders, repeats=1,
                             cells=list(itertools.product([1, 10], [5, 8], [2, 3])), echo=lines.append)
    assert set(results) == {"N_exponent", "R_exponent", "d_exponent", "worst_reference_over_vectorized"}
    assert sum(line.startswith(("     1 ", "    10 ")) for line in lines) == 8     # one table row per cell
    assert any(line.lstrip().startswith("worst reference / vectorized time on the grid at R >= 10") for line in lines)
    assert any("fitted N exponent of the reference (sparse graph)" in line for line in lines)
    assert all("load average" in lines[i] for i in (0, -1))


runner = CliRunner()


def test_bench_help_names_the_baselines():
    result = runner.invoke(cli.app, ["bench", "--help"])
    assert result.exit_code == 0
    for word in ("loop:", "vectorized:", "limit:", "--grid", "--repeats", "1e-12"):
        assert word in result.output


def test_tiny_bench_through_the_cli():
    result = runner.invoke(cli.app, ["bench", "zcdp-nfl", "--replicas", "2", "--iterations", "2", "--repeats", "2",
                                     "--no-audit"])
    assert result.exit_code == 0, result.output
    assert "load average" in result.output
    for name in ("reference:", "loop:", "vectorized:", "limit:", "speed-up over the loop:"):
        assert name in result.output
    assert "reference / physical limit:" in result.output and "(target <= 2x)" in result.output
    assert "(target 3x applies at R >= 100)" in result.output


def test_a_disagreeing_baseline_is_a_harness_error_through_the_cli(monkeypatch):
    monkeypatch.setattr(zcdp_bench.Setting, "loop", lambda self, rng, rounds, replicas: np.zeros(1))
    result = runner.invoke(cli.app, ["bench", "zcdp-nfl", "--replicas", "2", "--iterations", "2", "--no-audit"])
    assert result.exit_code == cli.EXIT_HARNESS_ERROR
    assert "loop baseline and the reference disagree" in result.output


def test_grid_for_a_paper_without_one_is_a_user_error():
    result = runner.invoke(cli.app, ["bench", "wang-basar", "--grid"])
    assert result.exit_code != 0
    assert "no --grid for paper 'wang-basar'; grids exist for: dpdo-nc, zcdp-nfl" in str(result.exception)
