"""Numerical and statistical checks of Wang & Basar (seeds/003) on the Sec. 6.1 estimation instance:
consensus (Theorem 1), limit points (Theorem 2), escape from the strict saddle (Theorem 3), the
landscape after the modification of L574, and the statements about Figures 3-5 and Table 1.

Runs are seeded from the root seed and a fixed key (`task_seed_sequence`), so every check sees the
same numbers. Under `dpverify verify` (context.implementation not the reference) the checks that run Algorithm 2
run the user's implementation through the contract instead, from the same starts (one run per replica, CHUNK_RUNS
runs per Task, so verify's workers share them and its cache keeps them); Algorithm 1 (sigma_var = 0) stays ours.
Clopper-Pearson intervals at CONFIDENCE = 1 - SIGNIFICANCE, Mann-Kendall at the shared
SIGNIFICANCE; all with fixed seeds. Each check measures; its rule (declared in claims.py) decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath as mp
import numpy as np
import pandas as pd

from dpverify.algorithms.wang_basar import contract
from dpverify.algorithms.wang_basar.algorithm import (
    GRAPHS,
    StepSchedule,
    WangBasarParams,
    consensus_contraction,
    consensus_moments,
    graph_weights,
    run,
    step,
)
from dpverify.algorithms.wang_basar.problems import QuarticMaximumTest
from dpverify.theory.claims import Measurement, holds
from dpverify.theory.door.implementations import REFERENCE, resolve
from dpverify.theory.execution import CheckContext, Task, task_seed_sequence, value_digest
from dpverify.theory.instruments.stats import SIGNIFICANCE, clopper_pearson, mann_kendall
from dpverify.theory.verify.conformance import generators, independent_transcripts
from dpverify.theory.wang_basar.instances import (
    DESCENT_TOLERANCE,
    DESTINATION_RADIUS,
    SEARCH_GRID,
    SEARCH_HIGH,
    SEARCH_LOW,
    THETA_SADDLE_PRINTED,
    MinimumSearch,
    RunSummary,
    contract_iterates,
    contract_summary,
    destination_table,
    estimation,
    initial_states,
    minimum_search,
    nearest,
    refined_minimum,
    refined_saddle,
    schedule,
    simulate,
    stationary_points,
    summarize,
    summary_frame,
    summary_of,
)
from dpverify.theory.wang_basar.privacy import gradient_lipschitz

EXPERIMENT = "figures-3-4"       # the experiment whose parameters the checks use
CONFIDENCE = 1 - SIGNIFICANCE    # default: the shared level; Clopper-Pearson intervals are two-sided at 95%
RUNS = {"quick": 400, "paper": 2000}   # 400: a 400/400 outcome has a CP 95% lower bound 0.9908 >= 1 - ESCAPE_MU          # runs per configuration of the checks
ESCAPE_WINDOW = 500                           # the constant-stepsize phase of Sec. 6.1 (k <= 500, L579)
ESCAPE_MU = 0.01                              # Theorem 3's mu at which the escape probability is tested
CONSENSUS_TOLERANCE = 1e-2                    # ||x_i^K - xbar^K|| below this for every run counts as consensus
STEP_SWEEP = (0.01, 0.02, 0.05)               # constant stepsizes of the 1/lambda scaling of the escape time
SWEEP_RUNS = {"quick": 200, "paper": 2000}    # runs per stepsize of the sweep (quantiles only, no CP decision)
SWEEP_HORIZON = 25.0                          # iterations = SWEEP_HORIZON / lambda (99% quantile ~ 3/lambda)
MAX_TEST_SCHEDULE = StepSchedule(0.05, 200, 1.0, 1.0)   # spec Sec. 7.3 synthetic maximum-avoidance test
MAX_TEST_ITERATIONS = 3000       # default: horizon of the synthetic maximum-avoidance test (spec Sec. 7.3), Sec. 6.1's horizon; plausible 1000-5000
TREND_STRIDE = 50                # iterations between the points of Theorem 1's Mann-Kendall trend (k > switch)
EQ11_RUNS, EQ11_STEPS = 64, 199  # runs and steps on which (11) is tested
CHUNK_RUNS = 50                  # runs of a user's implementation per Task (400 runs: 8 tasks for verify's workers)
# the parameters an implementation's runs on the estimation instance read (instances.estimation, instances.parameters)
INSTANCE_KEYS = ("kappa", "extension", "ext_c", "ext_delta_r", "graph", "num_agents", "lam0", "switch", "lam_scale")


def _values(context: CheckContext) -> dict:
    return context.parameters[EXPERIMENT]


def _rng(context: CheckContext, key: str) -> np.random.Generator:
    return np.random.default_rng(task_seed_sequence(context.root_seed, f"wang-basar/check/{key}"))


def _variant_key(values: dict) -> str:
    return f"{values['extension']}/{values['ext_c']}/{values['ext_delta_r']}"


def _search(context: CheckContext, values: dict) -> MinimumSearch:
    problem = estimation(values)
    return context.memoized(f"minimum-search/{_variant_key(values)}", lambda: minimum_search(problem, gradient_lipschitz(problem)))


def _points(context: CheckContext, values: dict):
    search = _search(context, values)
    return context.memoized(f"points/{_variant_key(values)}", lambda: stationary_points(estimation(values), search=search))


def _on_reference(context: CheckContext) -> bool:
    return context.implementation == REFERENCE


def _reference_runs(context: CheckContext, start: str, sigma_var: float, **options) -> dict[str, np.ndarray]:
    """Our batched runs (instances.simulate), whole paths; memoized under the keys they always had."""
    values = _values(context)
    replicas = options.pop("replicas", RUNS[context.profile])
    iterations = options.pop("iterations", values["iterations"])
    key = f"runs/{start}/{sigma_var}/{replicas}/{iterations}/{sorted(options.items())}"
    return context.memoized(key, lambda: simulate(_rng(context, key), values=values, start=start, sigma_var=sigma_var,
                                                  replicas=replicas, iterations=iterations, **options))


def _trend_rows(values: dict, iterations: int) -> list[int]:
    """The rows of the consensus error Theorem 1's check reads (row k - 1 holds x^k): k = switch, every TREND_STRIDE
    iterations after it, and K."""
    switch = values["switch"]
    return sorted({switch - 1, *range(switch, iterations, TREND_STRIDE), iterations - 1} & set(range(iterations)))


def _runs(context: CheckContext, start: str, sigma_var: float, **options) -> RunSummary:
    return _runs_batch(context, [(start, sigma_var, options)])[0]


def _runs_batch(context: CheckContext, requests: list[tuple[str, float, dict]]) -> list[RunSummary]:
    """The summaries (instances.summarize) of runs (start, sigma_var, options of simulate; replicas and iterations
    default to RUNS and the experiment's horizon): the reference's from our batched runs; an implementation's of
    Algorithm 2 from its runs through the contract, every missing one submitted in one batch of Tasks (the
    implementation is a task parameter, so it keys the cache) from the starts the reference draws."""
    values = _values(context)
    instance = {name: values[name] for name in INSTANCE_KEYS}   # read on every call: a memo hit credits them too
    saddle = refined_saddle(estimation(values))
    tag = "" if _on_reference(context) else f"@{value_digest(context.implementation)[:16]}"
    keys, pending = [], {}
    for start, sigma_var, options in requests:
        options = dict(options)
        replicas = options.pop("replicas", RUNS[context.profile])
        iterations = options.pop("iterations", values["iterations"])
        key = f"runs/{start}/{sigma_var}/{replicas}/{iterations}/{sorted(options.items())}"
        rows = _trend_rows(values, iterations)
        if _on_reference(context) or sigma_var == 0:   # Algorithm 1 is not in the contract: always ours
            keys.append(f"{key}/summary")
            raw = _reference_runs(context, start, sigma_var, replicas=replicas, iterations=iterations, **options)
            context.memoized(keys[-1], lambda raw=raw, rows=rows: summarize(raw["mean"], raw["consensus"], saddle, rows))
            continue
        keys.append(f"{key}/summary{tag}")
        if keys[-1] in context.memo or keys[-1] in pending:
            continue
        lam_override = options.pop("lam_override", None)
        if options:
            raise ValueError(f"options {sorted(options)} of simulate have no contract counterpart here")
        initial = initial_states(_rng(context, key), values, start, replicas)   # the reference's starts
        tasks = [Task(f"wang-basar/check/{key}/runs-{first}", contract_summary,
                      {"values": instance, "initial": initial[first:first + CHUNK_RUNS], "sigma_var": float(sigma_var),
                       "iterations": iterations, "lam_override": lam_override, "rows": rows,
                       "implementation": context.implementation})
                 for first in range(0, replicas, CHUNK_RUNS)]
        pending[keys[-1]] = (tasks, rows, iterations)
    frames = iter(context.run_tasks([task for tasks, _, _ in pending.values() for task in tasks]))
    for key, (tasks, rows, iterations) in pending.items():
        context.memo[key] = summary_of([next(frames) for _ in tasks], rows, iterations)
    return [context.memo[key] for key in keys]


def check_assumption_4(context: CheckContext):
    """Assumption 4 for the default W (ring, 1/3) and the variants (path, star Metropolis, complete)."""
    etas = {graph: consensus_contraction(graph_weights(graph)) for graph in GRAPHS}
    return holds(all(eta < 1 for eta in etas.values()), "eta = ||W - 11^T/m||: " + ", ".join(f"{g} {e:.4f}" for g, e in etas.items())
                 + " (all validated symmetric, doubly stochastic, w_ii > 0)", **etas)


def check_equation_11(context: CheckContext):
    """(11): xbar^{k+1} = xbar^k - (lambda^k/m) sum_i (g_i^k + n_i^k), on every step of noisy runs. On an
    implementation, g_i^k + n_i^k is recovered from its messages by eq. (8), (x_i^k - message_i^k) / lambda^k, and
    xbar^{k+1} is the average of its iterates."""
    values = _values(context)
    problem = estimation(values)
    params = WangBasarParams(graph_weights(values["graph"]), StepSchedule(values["lam0"], values["switch"], values["lam_scale"], 1.0),
                             2, values["sigma_var"])
    rng = _rng(context, "eq-11")
    states = rng.uniform(problem.low, problem.high, size=(EQ11_RUNS, values["num_agents"], 2))
    if not _on_reference(context):
        worst = _equation_11_on_transcripts(resolve(context.implementation), problem, params, states, rng)
        return holds(worst < 1e-10, f"max |xbar^(k+1) - (11)| over {EQ11_STEPS} steps x {EQ11_RUNS} runs = {worst:.2e} "
                                    "(g + n recovered from the messages, eq. (8))", worst=worst)
    worst = 0.0
    for k in range(1, EQ11_STEPS + 1):
        gradients = problem.local_gradients(states)
        following, messages = step(states, k, problem.local_gradients, params, rng)
        noise = (states - params.schedule(k) * gradients - messages) / params.schedule(k)   # n_i^k recovered from (8)
        worst = max(worst, float(np.max(_equation_11_gap(states, following, gradients + noise, params.schedule(k)))))
        states = following
    return holds(worst < 1e-10, f"max |xbar^(k+1) - (11)| over {EQ11_STEPS} steps x {EQ11_RUNS} runs = {worst:.2e}", worst=worst)


def _equation_11_gap(states: np.ndarray, following: np.ndarray, g_plus_n: np.ndarray, lam) -> np.ndarray:
    """|xbar^{k+1} - (xbar^k - (lambda^k/m) sum_i (g_i^k + n_i^k))| (seeds/003 L228 (11)); agents on axis -2."""
    predicted = states.mean(axis=-2) - lam / states.shape[-2] * g_plus_n.sum(axis=-2)
    return np.abs(following.mean(axis=-2) - predicted)


def _equation_11_on_transcripts(implementation, problem, params: WangBasarParams, starts: np.ndarray,
                                rng: np.random.Generator) -> float:
    """The worst gap of (11) over EQ11_STEPS rounds of runs of `implementation` from `starts`, one Generator each."""
    settings = [contract.setting_of(problem.local_gradients, params, start, EQ11_STEPS, problem.agent_gradient) for start in starts]
    runs = independent_transcripts(implementation, settings, generators(int(rng.integers(2**63 - 1)), len(starts)), contract.shapes)
    iterates = np.stack([run["iterates"] for run in runs])            # (R, K+1, m, d)
    messages = np.stack([run["messages"] for run in runs])            # (R, K, m, d)
    lam = params.schedule(np.arange(1, EQ11_STEPS + 1))[:, None]      # (K, 1)
    g_plus_n = (iterates[:, :-1] - messages) / lam[..., None]         # eq. (8): message = x - lambda (g + n)
    with np.errstate(all="ignore"):   # a diverging run: NaN, which fails the test below
        gap = _equation_11_gap(iterates[:, :-1], iterates[:, 1:], g_plus_n, lam)
    return float(np.max(gap)) if np.all(np.isfinite(gap)) else np.inf


def check_theorem_1(context: CheckContext):
    """Theorem 1 / Remark 3: consensus a.s. and in mean square under sum lambda^2 < inf (Sec. 6.1 schedule)."""
    values = _values(context)
    runs = _runs(context, "uniform", values["sigma_var"])
    switch, last = values["switch"], runs.iterations - 1   # rows: row k - 1 holds ||x^k - 1 xbar^k||^2 over the runs
    worst_final = float(np.sqrt(runs.consensus_at(last).max()))
    mean_square = dict(zip(runs.rows, runs.consensus.mean(axis=1)))
    tail = np.array([mean_square[row] for row in range(switch, runs.iterations, TREND_STRIDE)])
    trend = mann_kendall(tail, alpha=SIGNIFICANCE)
    ratio = float(mean_square[last] / mean_square[switch - 1])
    ok = worst_final < CONSENSUS_TOLERANCE and trend.trend == "decreasing"   # NaN (a diverged run) fails
    return holds(ok, f"max over {runs.consensus.shape[1]} runs of ||x^K - 1 xbar^K|| = {worst_final:.2e} at K = {runs.iterations}; "
                      f"E||.||^2 falls by x{ratio:.2e} from k = {values['switch']} to K, Mann-Kendall {trend.trend} "
                      f"(p = {trend.p_value:.1e}, alpha = {SIGNIFICANCE})",
                 worst_final=worst_final, mean_square_final=float(mean_square[last]), ratio=ratio)


def check_theorem_2(context: CheckContext):
    """Theorem 2: all agents converge to the same point in the union of saddles and minima. Every run from
    uniform starts ends (K = iterations) within DESTINATION_RADIUS of a stationary point of the extended
    landscape; the kinds reached are counted."""
    values = _values(context)
    points = _points(context, values)
    runs = _runs(context, "uniform", values["sigma_var"])
    index, distance = nearest(points, runs.final_mean)
    reached = distance < DESTINATION_RADIUS
    kinds = {p.kind for i, p in enumerate(points) if np.any(reached & (index == i))}
    table = destination_table(points, runs.final_mean)
    low, _ = clopper_pearson(int(reached.sum()), reached.size, CONFIDENCE, side="lower")
    ok = bool(reached.all()) and "maximum" not in kinds
    return holds(ok, f"{int(reached.sum())}/{reached.size} runs end within {DESTINATION_RADIUS} of a stationary point "
                      f"(CP {CONFIDENCE:.0%} lower bound {low:.3f}); kinds reached: {sorted(kinds)}; "
                      + "; ".join(f"{r.point} {r.kind}: {r.runs}" for r in table.itertuples()),
                 destinations=table.to_dict(orient="records"))


def check_maximum_avoidance(context: CheckContext):
    """Theorem 2, local maxima avoided a.s.: harness test F = sum_j(theta_j^4/4 - theta_j^2/2) (+ zero-sum b_i),
    strict maximum at 0; all agents start at 0. Algorithm 1 is run from the same start for comparison (ours, also
    under verify: the contract states Algorithm 2). Memoized: lemma-1 and theorem-2 share it."""
    return context.memoized("maximum-avoidance", lambda: _maximum_avoidance(context))


def _maximum_avoidance(context: CheckContext):
    rng = _rng(context, "maximum")
    replicas = SWEEP_RUNS[context.profile]
    offsets = rng.normal(scale=0.3, size=(5, 2))
    cases = {"b=0": np.zeros((5, 2)), "zero-sum b": offsets - offsets.mean(0)}
    start = np.zeros((replicas, 5, 2))
    finals = {} if _on_reference(context) else _quartic_runs(context, cases, start)
    outcomes = {}
    for label, b in cases.items():
        problem = QuarticMaximumTest(b)
        for algorithm, sigma in ((2, 0.5), (1, 0.0)):
            params = WangBasarParams(graph_weights("ring"), MAX_TEST_SCHEDULE, algorithm, sigma)
            final = finals.get((label, algorithm))
            if final is None:   # the reference, and Algorithm 1 (noise-free: it draws nothing from rng)
                final = run(problem.local_gradients, start, params, MAX_TEST_ITERATIONS, rng).mean[-1]
            at_max = int(np.sum(np.linalg.norm(final, axis=1) < 0.5))
            at_min = int(np.sum(np.all(np.abs(np.abs(final) - 1) < DESTINATION_RADIUS, axis=1)))
            outcomes[f"{label}, Algorithm {algorithm}"] = {"at_maximum": at_max, "at_minimum": at_min, "runs": replicas}
    noisy = [v for k, v in outcomes.items() if "Algorithm 2" in k]
    upper = max(clopper_pearson(v["at_maximum"], v["runs"], CONFIDENCE, side="upper")[1] for v in noisy)
    ok = all(v["at_maximum"] == 0 for v in noisy)
    whose = "" if _on_reference(context) else " (Algorithm 2: the implementation's runs; Algorithm 1: dpverify's, the contract states Algorithm 2)"
    return holds(ok, "runs ending at the maximum / at a minimum: " + "; ".join(f"{k}: {v['at_maximum']}/{v['at_minimum']} of {v['runs']}"
                 for k, v in outcomes.items()) + f"; Algorithm 2: P(maximum) <= {upper:.3f} (CP {CONFIDENCE:.0%})" + whose, **outcomes)


def _quartic_runs(context: CheckContext, cases: dict[str, np.ndarray], start: np.ndarray) -> dict[tuple[str, int], np.ndarray]:
    """xbar^K of the implementation's Algorithm 2 runs of the maximum test for each case, (R, 2), from one batch of tasks."""
    tasks = {label: [Task(f"wang-basar/check/maximum/{label}/runs-{first}", quartic_summary,
                          {"offsets": b, "initial": start[first:first + CHUNK_RUNS], "sigma_var": 0.5,
                           "iterations": MAX_TEST_ITERATIONS, "implementation": context.implementation})
                     for first in range(0, len(start), CHUNK_RUNS)] for label, b in cases.items()}
    frames = iter(context.run_tasks([task for group in tasks.values() for task in group]))
    return {(label, 2): summary_of([next(frames) for _ in group], (), MAX_TEST_ITERATIONS).final_mean
            for label, group in tasks.items()}


@dataclass(frozen=True)
class _QuarticAgent:
    """Agent j's gradient theta^3 - theta + b_j of the maximum test, one agent at a time (WangBasarSetting.gradient)."""

    offsets: np.ndarray

    def __call__(self, j: int, theta: np.ndarray) -> np.ndarray:
        return theta * theta * theta - theta + self.offsets[j]


def quartic_summary(rng: np.random.Generator, *, offsets: np.ndarray, initial: np.ndarray, sigma_var: float,
                    iterations: int, implementation) -> pd.DataFrame:
    """Task: the summary of runs of a user's Algorithm 2 on the maximum test (ring, MAX_TEST_SCHEDULE) from `initial`."""
    offsets = np.asarray(offsets, dtype=float)
    problem = QuarticMaximumTest(offsets)
    params = WangBasarParams(graph_weights("ring"), MAX_TEST_SCHEDULE, 2, sigma_var)
    iterates = contract_iterates(resolve(implementation), problem.local_gradients, np.asarray(initial, dtype=float), params,
                                 iterations, rng, agent_oracle=_QuarticAgent(offsets))
    with np.errstate(all="ignore"):   # a diverging run: NaN/inf, at neither the maximum nor a minimum
        mean, consensus = consensus_moments(iterates)
    return summary_frame(summarize(mean, consensus, None, ()))


def check_theorem_3(context: CheckContext):
    """Theorem 3: from the strict saddle, escape with probability >= 1 - mu within O(log(1/mu)/lambda)
    iterations. Measured: T = first k with ||xbar^k - theta_s|| > 0.5, from the refined and the printed
    saddle; P(T <= 500) with a CP bound against 1 - mu; the (1-mu)-quantiles of T against log(1/mu)/lambda
    for constant stepsizes (the 1/lambda scaling). Rule interval_above(1 - ESCAPE_MU) on the CP intervals
    (a CI straddling 1 - mu is inconclusive: power)."""
    values = _values(context)
    problem = estimation(values)
    saddle = refined_saddle(problem)
    sweep = {lam: {"lam_override": lam, "iterations": int(SWEEP_HORIZON / lam), "replicas": SWEEP_RUNS[context.profile]}
             for lam in STEP_SWEEP}
    _runs_batch(context, [(start, values["sigma_var"], {}) for start in ("saddle_refined", "saddle_printed")]
                + [("saddle_refined", values["sigma_var"], options) for options in sweep.values()])   # one batch of tasks
    evidence = {}
    for start in ("saddle_refined", "saddle_printed"):
        times = _runs(context, start, values["sigma_var"]).escape   # T from the refined saddle
        escaped = int(np.sum(times <= ESCAPE_WINDOW))
        low, high = clopper_pearson(escaped, times.size, CONFIDENCE)
        evidence[start] = {"escaped_by_500": escaped, "runs": times.size, "ci": (low, high),
                           "quantiles": {q: float(np.quantile(times, q)) for q in (0.5, 0.9, 0.99)}}
    scaling = {}
    for lam in STEP_SWEEP:
        times = _runs(context, "saddle_refined", values["sigma_var"], **sweep[lam]).escape
        finite = times[np.isfinite(times)]
        scaling[lam] = {mu: float(np.quantile(times, 1 - mu)) * lam / np.log(1 / mu) if finite.size == times.size else np.inf
                        for mu in (0.5, 0.1, 0.01)}
    gamma = -np.linalg.eigvalsh(problem.hessian(saddle)).min()
    ref = evidence["saddle_refined"]
    summary = (f"sigma_var = {values['sigma_var']}: escaped by k = 500 in {ref['escaped_by_500']}/{ref['runs']} runs from the refined saddle "
               f"(CP {CONFIDENCE:.0%} [{ref['ci'][0]:.4f}, {ref['ci'][1]:.4f}] vs 1 - mu = {1 - ESCAPE_MU}), "
               f"{evidence['saddle_printed']['escaped_by_500']}/{evidence['saddle_printed']['runs']} from the printed one; "
               f"median/90%/99% T = {list(ref['quantiles'].values())}; T_(1-mu) lambda / log(1/mu) for lambda in {STEP_SWEEP}, mu = 0.5/0.1/0.01: "
               + "; ".join(f"{lam}: " + "/".join(f"{v:.2f}" for v in s.values()) for lam, s in scaling.items())
               + f" (roughly constant in lambda: the O(log(1/mu)/lambda) form; 1/gamma = {1 / gamma:.3f})")
    return Measurement(summary, {**{k: str(v) for k, v in evidence.items()}, "scaling": str(scaling),
                                 "intervals": {k: v["ci"] for k, v in evidence.items()}})


ESCAPE_DISTANCE = 0.5            # ||xbar^k - theta_s|| past this counts as leaving the saddle (inside B from theta_s)
PRECISIONS = (30, 60)            # decimal digits of the exact-arithmetic replays of Algorithm 1 (float64 has about 16)
RATIONAL_DENOMINATOR = 10**6     # the printed data, weights and stepsizes as the fractions they are (1/3, 1/50, -1/10)


def _rational(value: float) -> mp.mpf:
    fraction = Fraction(value).limit_denominator(RATIONAL_DENOMINATOR)
    return mp.mpf(fraction.numerator) / fraction.denominator


def precise_escape(values: dict, digits: int, horizon: int) -> dict:
    """Algorithm 1 (eq. (6), (9)) from the saddle of F with `digits` decimal digits (mpmath), on the printed f_i
    inside B (L566; the extension outside B is never used: the replay stops if a state leaves B). The saddle is
    the root of grad F at that precision; W, Y_i, kappa and lambda^k enter as exact fractions. Returns the first
    k with ||xbar^k - theta_s|| > ESCAPE_DISTANCE (x^1 the start; None if none by `horizon`), whether a state left B
    first, and the largest ||grad f_i(theta_s)|| (the agents' gradients at the saddle; only their mean vanishes)."""
    problem = estimation(values)
    with mp.workdps(digits):
        matrix = [[_rational(v) for v in row] for row in problem.matrix]
        gram = [[sum(matrix[r][a] * matrix[r][b] for r in range(len(matrix))) for b in range(2)] for a in range(2)]
        offsets = [[-2 * sum(matrix[r][b] * _rational(y[r]) for r in range(len(matrix))) for b in range(2)]
                   for y in problem.measurements]
        kappa, weights = _rational(problem.kappa), [[_rational(w) for w in row] for row in graph_weights(
            values["graph"], values["num_agents"])]
        if any(sum(row) != 1 for row in weights):
            raise ValueError("the rational weights are not row-stochastic")

        # grad f_i (L566) again, as Estimation.agent_gradient has it: that one computes in float64, this in mpmath
        def gradient(i: int, x: list) -> list:        # -2 M^T Y_i + 2 M^T M x + 3 kappa ||x|| x
            radius = mp.sqrt(x[0] ** 2 + x[1] ** 2)
            return [offsets[i][b] + 2 * (gram[0][b] * x[0] + gram[1][b] * x[1]) + 3 * kappa * radius * x[b] for b in range(2)]

        agents = range(len(offsets))
        root = mp.findroot(lambda a, b: [sum(gradient(i, [a, b])[c] for i in agents) for c in range(2)],
                           tuple(_rational(v) for v in THETA_SADDLE_PRINTED))
        saddle = [root[0], root[1]]
        spread = float(max(mp.sqrt(sum(g ** 2 for g in gradient(i, saddle))) for i in agents))
        steps = schedule(values)
        states = [list(saddle) for _ in agents]
        for k in range(1, horizon + 1):
            lam = (_rational(steps.initial) if k <= steps.switch          # StepSchedule's law, in mpmath
                   else _rational(steps.scale) * mp.mpf(k) ** (-_rational(steps.power)))
            sent = [[x[c] - lam * g[c] for c in range(2)] for x, g in ((x, gradient(j, x)) for j, x in zip(agents, states))]
            states = [[sum(weights[i][j] * sent[j][c] for j in agents) for c in range(2)] for i in agents]
            if any(not (problem.low[c] <= x[c] <= problem.high[c]) for x in states for c in range(2)):
                return {"escape_iteration": None, "left_box_at": k + 1, "agent_gradient": spread}
            mean = [sum(x[c] for x in states) / len(states) for c in range(2)]
            if mp.sqrt((mean[0] - saddle[0]) ** 2 + (mean[1] - saddle[1]) ** 2) > ESCAPE_DISTANCE:
                return {"escape_iteration": k + 1, "left_box_at": None, "agent_gradient": spread}   # x^{k+1}
    return {"escape_iteration": None, "left_box_at": None, "agent_gradient": spread}


def check_noise_free_trapped(context: CheckContext):
    """L589: 'without the differential-privacy noise, all states would be trapped at the saddle point'. Decided on
    Algorithm 1 in exact arithmetic (precise_escape at PRECISIONS digits: a float64 round-off cannot make the
    verdict); the float64 runs from the printed (4 decimals) and the refined saddle are reported beside it."""
    values = _values(context)
    saddle = refined_saddle(estimation(values))
    outcome = {}
    for start in ("saddle_printed", "saddle_refined"):
        mean = _reference_runs(context, start, 0.0, replicas=1)["mean"][:, 0]
        distance = np.linalg.norm(mean - saddle, axis=-1)
        escape = int(np.argmax(distance > ESCAPE_DISTANCE)) + 1 if np.any(distance > ESCAPE_DISTANCE) else None
        outcome[start] = {"final_distance": float(distance[-1]), "escape_iteration": escape, "final_point": mean[-1].round(4).tolist()}
    precise = {f"{digits} digits": precise_escape(values, digits, values["iterations"]) for digits in PRECISIONS}
    left = [f"{name}: a state left B at k = {r['left_box_at']}" for name, r in precise.items() if r["left_box_at"]]
    trapped = all(r["escape_iteration"] is None for r in precise.values())
    floats = "; ".join(f"{k}: ||xbar^K - theta_s|| = {v['final_distance']:.3g}" + (
        f", leaves at k = {v['escape_iteration']} and ends at {v['final_point']}" if v["escape_iteration"] else ", stays")
        for k, v in outcome.items())
    exact = "; ".join(f"{name}: " + (f"leaves at k = {r['escape_iteration']}" if r["escape_iteration"] else "stays")
                      for name, r in precise.items())
    spread = precise[f"{PRECISIONS[-1]} digits"]["agent_gradient"]
    cause = (f" — the same at every precision, so not round-off: the agents' gradients at theta_s reach norm {spread:.3g} "
             "(only their mean vanishes), and xbar drifts off the saddle" if not trapped and
             len({r["escape_iteration"] for r in precise.values()}) == 1 else "")
    return Measurement(f"Algorithm 1 from the saddle of F, exact arithmetic (rational data, inside B): {exact}{cause}; "
                       f"float64 runs: {floats}", {"holds": trapped, **outcome, "precise": precise},
                       outside="; ".join(left))


def check_saddle_destination(context: CheckContext):
    """L589 / Fig. 4: 'the differential-privacy noise avoided the saddle point and ensured the convergence of all
    agents to the optimal value'. Destinations of noisy runs from the saddle, by stationary point; the CP
    intervals of the fraction at theta* against 1 - ESCAPE_MU (rule interval_above)."""
    values = _values(context)
    points = _points(context, values)
    star = refined_minimum(estimation(values))
    rows, intervals = {}, {}
    for start in ("saddle_printed", "saddle_refined"):
        ends = _runs(context, start, values["sigma_var"]).final_mean
        at_star = int(np.sum(np.linalg.norm(ends - star, axis=1) < DESTINATION_RADIUS))
        low, high = clopper_pearson(at_star, len(ends), CONFIDENCE)
        table = destination_table(points, ends)
        rows[start] = {"at_theta_star": at_star, "runs": len(ends), "ci": (round(low, 4), round(high, 4)),
                       "destinations": table.to_dict(orient="records")}
        intervals[start] = (low, high)
    others = "; ".join(f"{r['point']} {r['kind']}: {r['runs']}" for r in rows["saddle_printed"]["destinations"])
    return Measurement(f"fraction of noisy runs from the saddle ending within {DESTINATION_RADIUS} of theta*: printed start "
                       f"{rows['saddle_printed']['at_theta_star']}/{rows['saddle_printed']['runs']} (CP {CONFIDENCE:.0%} {rows['saddle_printed']['ci']}), "
                       f"refined {rows['saddle_refined']['at_theta_star']}/{rows['saddle_refined']['runs']} {rows['saddle_refined']['ci']}; "
                       f"destinations (printed start): {others}", {**{k: str(v) for k, v in rows.items()}, "intervals": intervals})


LANDSCAPE_VARIANTS = (("default", {}), ("ext_c = 5", {"ext_c": 5.0}), ("ext_delta_r = 0.5", {"ext_delta_r": 0.5}))   # spec P8


def _point_text(point, basin: int | None = None) -> str:
    starts = "" if basin is None else f", {basin} starts"
    return (f"{point.location.round(4).tolist()} (|grad| {point.gradient_norm:.1e}, Hessian eig "
            f"{', '.join(f'{e:.3g}' for e in point.eigenvalues)}{starts})")


def check_modified_landscape(context: CheckContext):
    """L574: after the modification outside B, 'one minimum ... (and no other local minimum) and one saddle'.
    Extension-independent: if on the edge theta1 = -8 the interior F decreases outward (dF/dtheta1 > 0 at the
    edge's minimizer in theta2), F restricted to B has a local minimum on that edge, which any extension that
    increases outside B keeps. Measured for the default and two variants of the extension: the minima of a
    certified multi-start descent (instances.minimum_search) and the saddles among all zeros of the oracle."""
    values = _values(context)
    problem = estimation(values)
    edge = np.linspace(-3, 3, 60001)
    on_edge = np.stack([np.full_like(edge, -8.0), edge], axis=1)
    best = on_edge[np.argmin(problem.objective(on_edge))]
    slope = float(problem.gradient(best)[0])
    f_edge, f_saddle = float(problem.objective(best)), float(problem.objective(THETA_SADDLE_PRINTED))
    variants, texts = {}, []
    for label, options in LANDSCAPE_VARIANTS:
        variant = {**values, **options}
        search = _search(context, variant)
        saddles = [p for p in _points(context, variant) if p.kind == "saddle"]
        variants[label] = {"minima": [p.location.round(4).tolist() for p in search.minima], "saddles": [p.location.round(4).tolist() for p in saddles],
                           "converged": search.converged, "starts": search.starts, "other_ends": search.other_ends}
        texts.append(f"{label}: {len(search.minima)} minima " + "; ".join(_point_text(p, n) for p, n in zip(search.minima, search.basins))
                     + f"; {len(saddles)} saddles " + "; ".join(_point_text(p) for p in saddles)
                     + f" ({search.converged}/{search.starts} descents converged to |grad| < {DESCENT_TOLERANCE:g}, "
                     f"{search.other_ends} at a non-minimum)")
    unique = all(len(v["minima"]) == 1 and len(v["saddles"]) == 1 for v in variants.values())
    outward = "decreases" if slope > 0 else "does not decrease"
    return holds(unique and slope <= 0,
                 f"F on B has a constrained local minimum on the edge theta1 = -8 at {best.round(4).tolist()} "
                 f"(F = {f_edge:.4f} {'<' if f_edge < f_saddle else '>='} F(theta_s) = {f_saddle:.4f}, dF/dtheta1 = {slope:.3f}: "
                 f"F {outward} out of the box); minima and saddles of the extended oracle (descent from a "
                 f"{SEARCH_GRID[0]}x{SEARCH_GRID[1]} grid on {list(SEARCH_LOW)}-{list(SEARCH_HIGH)} and starts just outside each edge): "
                 + " | ".join(texts), edge_slope=slope, **{k: str(v) for k, v in variants.items()},
                 minima={k: v["minima"] for k, v in variants.items()})
