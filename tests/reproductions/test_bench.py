"""`dpverify bench`: every baseline computes the reference's numbers on the same draws; the interleaving is
a rotation; medians, ranges, paired ratios with their intervals, exponent fits and target verdicts on
synthetic numbers; the machine line; the command through typer's CliRunner. The synthetic tests time nothing
(the grid and CLI tests run tiny settings to check the wiring, not the numbers)."""

import itertools
import math
import platform

import numpy as np
import pytest
from scipy import stats
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
    "dpdo-nc grid cell, d = 512": lambda: dpdo_bench.grid_contenders(3, 10, 512),   # the projection's partial sort
    "wang-basar": lambda: wang_bench.contenders(4, 8),
    "wang-basar grid cell": lambda: wang_bench.grid_contenders(3, 10, 8),
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


def test_the_grid_is_the_issues_without_cells_over_the_size_limit():
    cells = bench.grid_cells()
    assert len(cells) == 35 and sum(r >= bench.GRID_NEVER_SLOWER_MIN_REPLICAS for r, _, _ in cells) == 26
    assert (1000, 200, 512) not in cells and (1000, 50, 512) in cells and (1, 10, 8) in cells
    assert max(r * n * d for r, n, d in cells) <= bench.GRID_MAX_ENTRIES


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
    assert (ratio.value, ratio.low, ratio.high) == (2.0, -math.inf, math.inf)    # 3 repeats: no interval
    assert ratio.text("x") == "2.00x (95% CI none)"
    with pytest.raises(ValueError, match="same repeats"):
        timing.paired_ratio(np.ones(3), np.ones(2))


def binomial_tail(n, k):
    """P(Binomial(n, 1/2) <= k), summed from the binomial coefficients."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def test_median_interval_ranks_from_the_binomial_at_n_10():
    # 2 P(B <= 1) = 2 * 11/1024 <= 0.05 < 2 P(B <= 2) = 2 * 56/1024: the 2nd and 9th of 10, coverage 1002/1024
    assert timing.median_interval_ranks(10) == (2, 9)
    assert timing.median_interval_coverage(10, 2) == pytest.approx(1 - 2 * binomial_tail(10, 1)) == 1002 / 1024
    assert 1 - 2 * binomial_tail(10, 2) == 1 - 112 / 1024 < 0.95      # rank 3 would cover too little
    assert timing.median_interval_ranks(15) == (4, 12)
    assert timing.median_interval_coverage(15, 4) == pytest.approx(1 - 2 * binomial_tail(15, 3)) == 0.96484375


def test_median_interval_needs_six_values_at_95_percent():
    assert timing.MIN_REPEATS == 6 == min(n for n in range(1, 20) if 1 - 2.0 ** (1 - n) >= 0.95)
    assert timing.median_interval_ranks(5) is None
    assert timing.median_interval_ranks(6) == (1, 6) and timing.median_interval_coverage(6, 1) == 1 - 2 / 64
    assert timing.DEFAULT_REPEATS >= timing.MIN_REPEATS and bench.GRID_REPEATS >= timing.MIN_REPEATS


@pytest.mark.parametrize("n", range(6, 41))
def test_median_interval_agrees_with_scipys_quantile_test(n):
    values = np.random.default_rng(n).lognormal(0.0, 0.5, n)
    ours = timing.median_with_interval(values)
    theirs = stats.quantile_test(values, q=0, p=0.5).confidence_interval(0.95)
    assert (ours.low, ours.high) == (theirs.low, theirs.high)


def test_median_with_interval_reads_the_order_statistics():
    values = np.random.default_rng(3).permutation(np.arange(1.0, 11.0))     # 1..10 in a shuffled order
    estimate = timing.median_with_interval(values)
    assert (estimate.value, estimate.low, estimate.high, estimate.confidence) == (5.5, 2.0, 9.0, 0.95)
    assert estimate.text("x") == "5.50x (95% CI 2.00 to 9.00)"


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
    line = target.line(timing.Estimate(value, value, value))
    assert line.endswith(": met") if met else line.endswith(": NOT met")


@pytest.mark.parametrize("target, low, high, expected", [
    (bench.LIMIT_TARGET, 1.3, 1.9, "met"),                        # <= 2: the whole interval below
    (bench.LIMIT_TARGET, 1.5, 2.0, "met"),                        # the bound itself is on the target's side
    (bench.LIMIT_TARGET, 2.1, 3.0, "NOT met"),                    # the whole interval above
    (bench.LIMIT_TARGET, 1.55, 3.04, "undecided at this load"),   # issue 32's zcdp-nfl range at load 2.8
    (bench.LIMIT_TARGET, 2.0, 2.5, "undecided at this load"),
    (bench.VECTORIZED_TARGET, 3.2, 3.8, "met"),                   # >= 3: the whole interval above
    (bench.VECTORIZED_TARGET, 2.0, 2.9, "NOT met"),
    (bench.VECTORIZED_TARGET, 2.9, 3.1, "undecided at this load"),
    (bench.VECTORIZED_TARGET, -math.inf, math.inf, "undecided (no interval)"),     # fewer than 6 repeats
    (bench.LIMIT_TARGET, -math.inf, math.inf, "undecided (no interval)"),
    (bench.LIMIT_TARGET, math.nan, math.nan, "undecided (no interval)"),           # a fit without residual dof
])
def test_a_verdict_is_decided_only_by_an_interval_on_one_side(target, low, high, expected):
    for value in (low, high, (low + high) / 2):       # the median does not decide
        measured = timing.Estimate(value, low, high)
        assert timing.verdict(target, measured) == expected
        assert target.line(measured).endswith(f": {expected}")
    number = timing.verdict_number(target, timing.Estimate(low, low, high))
    assert number == {"met": 1.0, "NOT met": 0.0}[expected] if "undecided" not in expected else math.isnan(number)


def test_default_targets_from_synthetic_timings():
    rng = np.random.default_rng(11)
    reference = rng.uniform(1.0, 2.0, 15)
    per_round = {"reference": reference, "vectorized": reference * rng.permutation(np.linspace(3.3, 4.0, 15)),
                 "limit": reference / rng.permutation(np.linspace(1.30, 1.58, 15))}
    rows = {target.description: (measured, why) for target, measured, why in bench.default_targets(per_round, 100)}
    limit, why = rows["reference / physical limit"]
    assert why == "" and (limit.value, limit.low, limit.high) == pytest.approx((1.44, 1.36, 1.52))
    vectorized, why = rows["speed-up over the vectorized baseline"]
    assert why == "" and (vectorized.value, vectorized.low, vectorized.high) == pytest.approx((3.65, 3.45, 3.85))
    below = {target.description: why for target, _, why in bench.default_targets(per_round, 99)}
    assert below["speed-up over the vectorized baseline"] == "applies at R >= 100"


def synthetic_timings(limit_ratios, speedups, seed=7):
    """15 repeats of per-round seconds whose paired ratios are the given ones, in a shuffled order."""
    rng = np.random.default_rng(seed)
    reference = rng.uniform(1.0e-3, 1.2e-3, len(limit_ratios))
    return {"reference": reference, "loop": reference * 80.0,
            "vectorized": reference * rng.permutation(speedups), "limit": reference / rng.permutation(limit_ratios)}


def synthetic_contenders(replicas=100):
    def never_called(rng, rounds):
        raise AssertionError("the report times nothing")

    return bench.Contenders("synthetic, R = 100", replicas, never_called, never_called, never_called, never_called,
                            rounds=1, loop_rounds=1, check_rounds=1)


def test_paper_verdicts_from_synthetic_timings(monkeypatch):
    monkeypatch.setattr(bench, "load_average", lambda: "2.80")
    lines = []
    results = bench.report_paper_timings(synthetic_contenders(), synthetic_timings(
        np.linspace(1.30, 1.58, 15), np.linspace(2.0, 2.7, 15)), lines.append)
    assert "  reference / physical limit: 1.44x (95% CI 1.36 to 1.52) (target <= 2x): met" in lines
    assert "  speed-up over the vectorized baseline: 2.35x (95% CI 2.15 to 2.55) (target >= 3x): NOT met" in lines
    assert "  speed-up over the loop: 80.00x (95% CI 80.00 to 80.00)" in lines
    assert lines[-1] == ("  (15 interleaved repeats after a warm-up; times: median (min-max); ratios paired within a "
                         "repeat: median (95% CI of a median: sorted ratios number 4 and 12 of 15, distribution-free, "
                         "coverage 96.5%); load average 2.80 at the end)")
    assert (results["reference_over_limit_met"], results["speedup_over_vectorized_met"]) == (1.0, 0.0)
    assert (results["reference_over_limit_ci_low"], results["reference_over_limit_ci_high"]) == pytest.approx(
        (1.36, 1.52))


def test_a_ratio_whose_interval_straddles_the_bound_is_undecided(monkeypatch):
    lines = []
    results = bench.report_paper_timings(synthetic_contenders(), synthetic_timings(
        np.linspace(1.6, 2.3, 15), np.linspace(2.6, 3.3, 15)), lines.append)
    assert "  reference / physical limit: 1.95x (95% CI 1.75 to 2.15) (target <= 2x): undecided at this load" in lines
    assert ("  speed-up over the vectorized baseline: 2.95x (95% CI 2.75 to 3.15) (target >= 3x): "
            "undecided at this load") in lines
    assert math.isnan(results["reference_over_limit_met"]) and math.isnan(results["speedup_over_vectorized_met"])


def test_few_repeats_decide_nothing():
    lines = []
    bench.report_paper_timings(synthetic_contenders(), synthetic_timings(np.full(5, 1.2), np.full(5, 9.0)),
                               lines.append)
    assert "  reference / physical limit: 1.20x (95% CI none) (target <= 2x): undecided (no interval)" in lines
    assert "5 repeats give no 95% interval for a median (at least 6 do): no target can be decided" in lines[-1]


def grid_cell(replicas, agents, dim, ratio, low, high):
    seconds = 1e-4 * agents**0.8 * replicas**0.5
    return bench.GridCell(replicas, agents, dim, timing.Spread(seconds, seconds, seconds),
                          timing.Spread(seconds / ratio, seconds / ratio, seconds / ratio),
                          timing.Estimate(ratio, low, high))


@pytest.mark.parametrize("worst, expected", [
    ((0.9, 0.85, 0.97), "met"), ((1.2, 1.1, 1.3), "NOT met"), ((0.98, 0.9, 1.05), "undecided at this load")])
def test_grid_verdict_from_synthetic_cells(worst, expected):
    cells = [grid_cell(1, 10, 2, 3.0, 2.0, 4.0)]                      # R = 1: no target there
    cells += [grid_cell(r, n, d, 0.5, 0.45, 0.55) for r, n, d in itertools.product((10, 100), (10, 50), (2, 8))]
    cells.append(grid_cell(100, 200, 2, *worst))
    lines = []
    results = bench.report_grid(cells, 9, lines.append)
    line = next(line for line in lines if "worst reference / vectorized" in line)
    assert line.startswith(f"  worst reference / vectorized time on the grid at R >= 10: {worst[0]:.2f}x "
                           f"(95% CI {worst[1]:.2f} to {worst[2]:.2f}) (target <= 1x): {expected}; "
                           f"largest median at R = 100, N = 200, d = 2")
    assert results["worst_reference_over_vectorized"] == worst[0]
    # time ~ N^0.8 R^0.5 exactly: the fitted N exponent is 0.8 and the d exponent 0, each with a zero-width interval,
    # under the bound: met
    assert lines[-3] == ("  fitted N exponent of the reference (sparse graph): 0.80 (95% CI 0.80 to 0.80) "
                         "(target <= 1): met (the OLS interval)")
    assert lines[-2].startswith("  fitted d exponent of the reference: ") and lines[-2].endswith(": met (the OLS interval)")
    assert results["N_exponent_met"] == results["d_exponent_met"] == 1.0


def test_the_grid_interval_spans_the_largest_ends_of_the_cells():
    cells = [grid_cell(10, 10, 2, 0.8, 0.7, 1.2), grid_cell(100, 10, 2, 0.95, 0.9, 0.99),
             grid_cell(1, 10, 2, 5.0, 4.0, 6.0)]
    assert bench.largest_ratio(cells) == timing.Estimate(0.95, 0.9, 1.2)   # a wide cell keeps it undecided
    assert bench.worst_cell(cells) is cells[1]


def test_cpu_model_and_machine_line(tmp_path, monkeypatch):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n")
    assert timing.cpu_model(cpuinfo) == "AMD EPYC 7B13 64-Core Processor"
    monkeypatch.setattr(platform, "processor", lambda: "x86_64")
    assert timing.cpu_model(tmp_path / "absent") == "x86_64"
    line = bench.machine_line()
    assert line.startswith("machine: ") and f"{timing.usable_cores()} usable cores" in line
    assert f"Python {platform.python_version()}, numpy {np.__version__}, BLAS " in line
    assert "1 thread" in line      # the bench's BLAS threads (DPVERIFY_BLAS_THREADS, default 1)


def test_worst_cell_ignores_single_replicas():
    cells = [grid_cell(r, 10, 2, ratio, ratio, ratio) for r, ratio in ((1, 5.0), (10, 0.5), (100, 0.8), (10, 0.7))]
    assert bench.worst_cell(cells).ratio.value == 0.8


def test_grid_reports_ratios_exponents_and_targets():
    lines = []
    results = bench.run_grid("zCDP-NFL", zcdp_bench.grid_contenders, repeats=1,
                             cells=list(itertools.product([1, 10], [5, 8], [2, 3])), echo=lines.append)
    assert set(results) == {"N_exponent", "R_exponent", "d_exponent", "worst_reference_over_vectorized",
                            "worst_reference_over_vectorized_met", "N_exponent_met", "d_exponent_met"}
    assert math.isnan(results["worst_reference_over_vectorized_met"])     # one repeat per cell: no interval
    assert sum(line.startswith(("     1 ", "    10 ")) for line in lines) == 8     # one table row per cell
    assert any(line.lstrip().startswith("worst reference / vectorized time on the grid at R >= 10") for line in lines)
    assert any("fitted N exponent of the reference (sparse graph)" in line for line in lines)
    assert all("load average" in lines[i] for i in (0, -1))
    assert "undecided (no interval)" in next(line for line in lines if "worst reference" in line)


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
    first, second = result.output.splitlines()[:2]
    assert first.startswith("machine: ") and "usable cores" in first and "numpy" in first and "BLAS" in first
    assert "load average" in second and "at the start" in second
    assert "load average" in result.output.split("ratios paired within a repeat")[1]    # and at the end
    for name in ("reference:", "loop:", "vectorized:", "limit:", "speed-up over the loop:"):
        assert name in result.output
    assert "reference / physical limit:" in result.output and "(target <= 2x): undecided (no interval)" in result.output
    assert "(target 3x applies at R >= 100)" in result.output


def test_a_disagreeing_baseline_is_a_harness_error_through_the_cli(monkeypatch):
    monkeypatch.setattr(zcdp_bench.Setting, "loop", lambda self, rng, rounds, replicas: np.zeros(1))
    result = runner.invoke(cli.app, ["bench", "zcdp-nfl", "--replicas", "2", "--iterations", "2", "--no-audit"])
    assert result.exit_code == cli.EXIT_HARNESS_ERROR
    assert "loop baseline and the reference disagree" in result.output


def test_grid_for_a_paper_without_one_is_a_user_error():
    result = runner.invoke(cli.app, ["bench", "dp-recal", "--grid"])
    assert result.exit_code != 0
    assert "no --grid for paper 'dp-recal'; grids exist for: dpdo-nc, wang-basar, zcdp-nfl" in str(result.exception)


def test_the_regret_share_is_the_paired_share_of_a_regret_on_round(monkeypatch):
    """Issue 32 item 3: (on - off) / on per repeat, its median and interval decide the 25% target (known timings)."""
    on, off = np.array([4.0, 4.0, 4.1, 3.9, 4.0, 4.2, 4.0, 4.0, 4.0]), np.array([3.0, 3.1, 3.0, 3.0, 3.2, 3.0, 2.9, 3.0, 3.0])
    monkeypatch.setattr(dpdo_bench, "interleaved_seconds", lambda runs, **options: {"on": on, "off": off})
    lines = []
    results = dpdo_bench.regret_share(3, 2, len(on), lines.append)
    shares = np.sort((on - off) / on)
    assert results["regret_tracker_share"] == pytest.approx(np.median(shares), rel=1e-12)
    assert results["regret_tracker_share_ci_low"] <= 0.25 <= results["regret_tracker_share_ci_high"]
    assert np.isnan(results["regret_tracker_share_met"]) and "(target <= 0.25): undecided" in lines[0]


def test_the_release_share_is_what_the_release_adds_to_its_draw_over_a_round(monkeypatch):
    """Issue 32 item 3: (releases - draws) / reference per repeat decides the 10% target (known timings)."""
    from dpverify.reproductions.bench import papers
    seconds = {"reference": np.full(9, 10.0), "releases": np.full(9, 3.0) + np.arange(9) * 0.01, "draws": np.full(9, 2.5)}
    monkeypatch.setattr(papers, "interleaved_seconds", lambda runs, **options: seconds)
    lines = []
    results = papers.release_share(wang_bench.contenders(3, 2), wang_bench.NUM_AGENTS, 2, 9, lines.append)
    assert results["release_share"] == pytest.approx(0.054, rel=1e-12)
    assert results["release_share_met"] == 1.0 and "(target <= 0.1): met" in lines[0]
