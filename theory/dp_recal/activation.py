"""Checks of the activation claims of DP-RECAL: Lemma 1, Definition 2, Lemma 2 (seeds/001 v1:L288-L310, App. B).

The walk is the one the algorithm performs: the holders i_k of `run_recal` (i_1 uniform, spec §6; the checks of
the law in each iteration also start it from g, the other reading of what the paper leaves open).
Each check is `(context) -> Measurement`; its rule (declared in claims.py) decides: exact for the exact
computations, fits_identity(WALK_MARGIN, level=WALK_LEVEL) for the statistical tests of the walk's laws: each such
check also bounds, simultaneously over its parts, how far the sampled law can be from g, so a confirmation rules out a
deviation of WALK_MARGIN instead of merely failing to reject. Criteria, margins and levels are fixed module constants.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy import stats
from statsmodels.stats.proportion import multinomial_proportions_confint

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.algorithm import (
    RecalParams,
    paper_beta,
    run_recal,
    uniform_transition_matrix,
)
from dpverify.algorithms.dp_recal.composite import CompositeProblem
from dpverify.theory.claims import Measurement, holds
from dpverify.theory.dp_recal.operators import check_graphs, lemma1_g, walk_marginals
from dpverify.theory.execution import CheckContext, task_seed_sequence
from dpverify.theory.instruments.stats import holm, mean_interval

NUM_AGENTS = 7                 # default: odd: the ring is aperiodic; star and path stay bipartite (periodic)
# default: family-wise level of each check (Holm over its tests), deliberately stricter than stats.SIGNIFICANCE
# (0.05): these checks test EXACT laws of the walk (its activation law and its conditional law) with thousands of
# simulated walks, where a false refutation of a true identity is the costlier error; passed to the rule as level=.
WALK_LEVEL = 0.01
# default: the deviation of an activation probability that matters: a walk's law is confirmed only if its samples rule
# out |P(i) - g_i| >= WALK_MARGIN for every agent i, simultaneously at 1 - WALK_LEVEL. 0.02 is a quarter of the smallest
# g_i of the checked graphs (1/12: the star's leaves, the path's ends) and 14% of the ring's 1/7; plausible 0.01-0.05.
# Fixed before looking at any verdict; each summary states the smallest margin its samples rule out, so the verdict
# anywhere in that range can be read off it.
WALK_MARGIN = 0.02
# default: iterations at which P(i_k = i) is tested: the first steps (where p_1 uniform is furthest from g), an
# odd/even pair of each size (bipartite graphs oscillate with the parity of k) and the last stored step
MARGINAL_ITERATIONS = (1, 2, 3, 10, 11, 40, 41)
# (replicas, horizon) of the walks: marginals need many independent walks, long-run frequencies long ones
MARGINAL_SIZES = {"quick": (2000, 41), "paper": (20000, 41)}
LONG_RUN_SIZES = {"quick": (40, 1500), "paper": (200, 10000)}


def _walk_problem(n: int) -> tuple[CompositeProblem, LocalData]:
    """A 1-dimensional dummy problem: only the holders of run_recal are used here."""
    return CompositeProblem(lasso=0.0), LocalData(np.ones((n, 1, 1)), np.ones((n, 1)))


FIRST_HOLDER_LAWS = ("uniform", "stationary")   # the law of i_1: the paper gives none; spec §6's default is uniform


def _holders(context: CheckContext, replicas: int, horizon: int, tag: str, start: str = "uniform") -> dict[str, np.ndarray]:
    """i_k of run_recal's walks, (K, R) per graph; i_1 uniform over V (run_recal's default) or drawn from g."""
    def simulate() -> dict[str, np.ndarray]:
        rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"dp-recal/activation/{tag}"))
        problem, data = _walk_problem(NUM_AGENTS)
        params = RecalParams(np.full(NUM_AGENTS, 0.5), paper_beta(NUM_AGENTS))
        out = {}
        for name, network in _graphs(context).items():
            first = None if start == "uniform" else rng.choice(NUM_AGENTS, size=replicas, p=lemma1_g(network))
            run = run_recal(problem, data, network, params, replicas=replicas, rng=rng, horizon=horizon,
                            keep_transcript=False, keep_x=False, first_holder=first)
            out[name] = run.holders
        return out
    suffix = "" if start == "uniform" else f"/{start}"
    return context.memoized(f"dp-recal/activation/{tag}/{replicas}/{horizon}{suffix}", simulate)


def _graphs(context: CheckContext) -> dict[str, Network]:
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, "dp-recal/activation/graphs"))
    return context.memoized("dp-recal/activation/graphs", lambda: check_graphs(NUM_AGENTS, rng))


def _exact_lemma1(network: Network) -> tuple[list, list, bool]:
    """Lemma 1's g in exact rational arithmetic, the stationary law D1/1^T D1, and whether the printed
    proof's balance equation g_i = sum_{j != i} P_ij g_j (App. B, v1:L711) holds for it."""
    A = sp.Matrix(network.adjacency.astype(int).tolist())
    n = A.shape[0]
    degrees = [sum(A.row(i)) for i in range(n)]
    D_inv = sp.diag(*[sp.Rational(1, d) for d in degrees])
    L = sp.diag(*degrees) - A
    ones = sp.ones(n, 1)
    g = (D_inv * L * L * D_inv + ones * ones.T).LUsolve(ones)                 # v1:L298
    pi = sp.Matrix([sp.Rational(d, sum(degrees)) for d in degrees])
    P = D_inv * A
    printed_balance = all(g[i] == sum(P[i, j] * g[j] for j in range(n) if j != i) for i in range(n))
    return list(g), list(pi), printed_balance


def probability_deviation(counts: np.ndarray, law: np.ndarray, level: float) -> float:
    """Upper bound on max_i |p_i - law_i| for the law p behind multinomial `counts`, from Goodman's simultaneous
    (1 - level) intervals of p (statsmodels)."""
    low, high = multinomial_proportions_confint(counts, alpha=level, method="goodman").T
    return float(np.max(np.maximum(high - law, law - low)))


def deviation_summary(deviations: dict[str, float], samples: int, unit: str, rejected: bool) -> str:
    """What the deviation bounds rule out, against WALK_MARGIN; if too few and the law is not rejected, about how
    many samples would do (the bounds shrink as 1/sqrt(samples) when the law holds)."""
    label, bound = max(deviations.items(), key=lambda item: item[1])
    text = (f"max_i |P(i) - g_i| <= {bound:.3g} at the widest ({label}; simultaneous {1 - WALK_LEVEL:.0%} over "
            f"{len(deviations)} parts)")
    if rejected:
        return text
    if bound < WALK_MARGIN:
        return f"{text}: rules out a deviation of the margin {WALK_MARGIN:g}"
    return (f"{text}: too few {unit} ({samples}) to rule out a deviation of the margin {WALK_MARGIN:g}, about "
            f"{samples * (bound / WALK_MARGIN) ** 2:.0f} would")


def check_lemma1_formula(context: CheckContext) -> Measurement:
    """Lemma 1 exactly (sympy, rationals): g of the printed formula equals the walk's stationary law
    D1/(1^T D 1) and is > 0, on ring, complete, star, path and a random graph (n = 7)."""
    rows = {}
    for name, network in _graphs(context).items():
        g, pi, printed_balance = _exact_lemma1(network)
        rows[name] = {"g": [str(v) for v in g], "equals_stationary": g == pi, "positive": all(v > 0 for v in g),
                      "printed_proof_balance_holds": printed_balance}
    ok = all(r["equals_stationary"] and r["positive"] for r in rows.values())
    broken = [name for name, r in rows.items() if not r["printed_proof_balance_holds"]]
    summary = (f"g = (D^-1 L^2 D^-1 + 11^T)^-1 1 equals D1/1^T D1 exactly and is > 0 on {len(rows)} graphs: {ok}; "
               f"the proof's first equation g_i = sum_(j != i) P_ij g_j fails on {broken or 'none'} "
               "(the stationary equation is g_i = sum_j P_ji g_j, which (19) uses)")
    return holds(ok, summary, graphs=rows, n=NUM_AGENTS)


def check_lemma1_long_run_frequencies(context: CheckContext) -> Measurement:
    """Time-average activation frequencies of run_recal's walk vs g: per agent, the mean over independent
    replicas of tau_i(K)/K with a t-interval (stats.mean_interval); simultaneous (Bonferroni) over agents and
    graphs at WALK_LEVEL, i.e. each at WALK_LEVEL / tests. The rule reads the two-sided t-test p-values of the same
    means: Holm rejects one at WALK_LEVEL exactly when its smallest p-value is below WALK_LEVEL / tests, i.e. when
    one of these simultaneous intervals excludes its g_i (1e-12 slack for the rounding of g; a star's centre has
    sd 0 and its p-value is 1 or 0)."""
    replicas, horizon = LONG_RUN_SIZES[context.profile]
    holders = _holders(context, replicas, horizon, "long-run")
    graphs = _graphs(context)
    tests = len(graphs) * NUM_AGENTS
    rows, ok, p_values, deviations = {}, True, [], {}
    for name, walk in holders.items():
        frequencies = (walk[..., None] == np.arange(NUM_AGENTS)).mean(axis=0)        # (R, n)
        mean = frequencies.mean(axis=0)
        low, high = np.array([mean_interval(f, WALK_LEVEL / tests) for f in frequencies.T]).T
        g = lemma1_g(graphs[name])
        inside = (low - 1e-12 <= g) & (g <= high + 1e-12)  # rounding of g (a star's centre has sd 0)
        standard_error = frequencies.std(axis=0, ddof=1) / np.sqrt(replicas)
        distance = np.maximum(np.abs(mean - g) - 1e-12, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(standard_error > 0, 2 * stats.t.sf(distance / standard_error, replicas - 1),
                         (distance == 0).astype(float))
        p_values.extend(p.tolist())
        deviations[name] = float(np.max(np.maximum(high - g, g - low)))   # the same simultaneous intervals
        ok &= bool(inside.all())
        rows[name] = {"g": g.round(4).tolist(), "frequency": mean.round(4).tolist(),
                      "max_abs_deviation": float(np.abs(mean - g).max()), "all_inside": bool(inside.all())}
    summary = (f"long-run frequencies of the walk (K = {horizon}, {replicas} replicas) "
               f"{'consistent with' if ok else 'differ from'} g on every graph (simultaneous {1 - WALK_LEVEL:.0%} "
               f"t-intervals); {deviation_summary(deviations, replicas, 'replicas', not ok)}")
    return Measurement(summary, {"graphs": rows, "p_values": p_values, "deviations": deviations})


def check_activation_probability_each_iteration(context: CheckContext) -> Measurement:
    """Definition 2(2) / Lemma 1 read as printed: P(eta_i^k = 1) = g_i "in each iteration". Over independent
    walks of run_recal, chi-square goodness of fit of i_k to g at several k; Holm at WALK_LEVEL. The paper gives
    no law for i_1, so both readings are measured (FIRST_HOLDER_LAWS): uniform (spec §6, run_recal's default) and
    the stationary law g. The exact marginals p_k = p_1 P^(k-1) are reported next to each test."""
    readings = {f"i_1 {law}": _marginal_fit(context, law) for law in FIRST_HOLDER_LAWS}
    return Measurement(f"P(i_k = i) = g_i at k in {MARGINAL_ITERATIONS} on {', '.join(_graphs(context))}", {},
                       readings=readings, depends_on="the law of the first holder i_1 (not given by the paper)")


def _marginal_fit(context: CheckContext, law: str) -> Measurement:
    replicas, horizon = MARGINAL_SIZES[context.profile]
    holders = _holders(context, replicas, horizon, "marginals", start=law)
    graphs = _graphs(context)
    keys, p_values, rows, counts_of = [], [], {}, {}
    for name, walk in holders.items():
        g = lemma1_g(graphs[name])
        start = np.full(NUM_AGENTS, 1 / NUM_AGENTS) if law == "uniform" else g
        exact = walk_marginals(uniform_transition_matrix(graphs[name]), start, horizon)
        for k in MARGINAL_ITERATIONS:
            counts = np.bincount(walk[k - 1], minlength=NUM_AGENTS)
            p = stats.chisquare(counts, replicas * g).pvalue
            counts_of[f"{name}/k={k}"] = (counts, g)
            keys.append((name, k))
            p_values.append(p)
            rows[f"{name}/k={k}"] = {"p_value": float(p), "exact_max_abs(p_k - g)": float(np.abs(exact[k - 1] - g).max())}
    rejected = holm(np.array(p_values), WALK_LEVEL)
    failing = sorted({name for (name, _), r in zip(keys, rejected) if r})
    largest = max(rows.items(), key=lambda item: item[1]["exact_max_abs(p_k - g)"])
    deviations = {label: probability_deviation(counts, g, WALK_LEVEL / len(counts_of))
                  for label, (counts, g) in counts_of.items()}
    summary = (f"rejected (Holm, level {WALK_LEVEL}) on {failing}" if failing else
               f"not rejected at k in {MARGINAL_ITERATIONS} on any graph") + (
        f"; {deviation_summary(deviations, replicas, 'walks', bool(failing))}; exact max |p_k - g| = "
        f"{largest[1]['exact_max_abs(p_k - g)']:.3g} ({largest[0]})")
    return Measurement(summary, {"tests": rows, "replicas": replicas, "first_holder": law, "level": WALK_LEVEL,
                                 "p_values": [float(p) for p in p_values], "deviations": deviations})


def check_lemma2_idempotent(context: CheckContext) -> Measurement:
    """(E^k)^t = E^k for t = 1..5 on the activation matrices E^k = diag(E~ (x) I_q, I_q, E~ (x) I_q) of sampled
    holders (exact 0/1 arithmetic)."""
    q = 2
    holders = _holders(context, *MARGINAL_SIZES[context.profile], "marginals")["random"][:, :5].ravel()
    ok = True
    for agent in np.unique(holders):
        Et = np.diag((np.arange(NUM_AGENTS) == agent).astype(float))
        E = np.block([[np.kron(Et, np.eye(q)), np.zeros((NUM_AGENTS * q, q + NUM_AGENTS * q))],
                      [np.zeros((q, NUM_AGENTS * q)), np.eye(q), np.zeros((q, NUM_AGENTS * q))],
                      [np.zeros((NUM_AGENTS * q, NUM_AGENTS * q + q)), np.kron(Et, np.eye(q))]])
        ok &= all(np.array_equal(np.linalg.matrix_power(E, t), E) for t in range(1, 6))
    return holds(ok, f"E^k idempotent for every sampled holder: {ok}", agents=np.unique(holders).tolist())


def check_lemma2_conditional_expectation(context: CheckContext) -> Measurement:
    """E_k[E~^{k+1}] = Pi~ = diag(g): given F_k, the next holder should be distributed as g whatever i_k.
    For the walk the law of i_{k+1} given i_k is row i_k of P (Markov property), so the transition counts
    from each state are multinomial; chi-square of each row vs g, Holm over rows and graphs at WALK_LEVEL."""
    replicas, horizon = LONG_RUN_SIZES[context.profile]
    holders = _holders(context, replicas, horizon, "long-run")
    graphs = _graphs(context)
    p_values, rows, counts_of = [], {}, {}
    stay_count = stay_total = 0
    for name, walk in holders.items():
        g = lemma1_g(graphs[name])
        transitions = np.zeros((NUM_AGENTS, NUM_AGENTS))
        np.add.at(transitions, (walk[:-1].ravel(), walk[1:].ravel()), 1)
        stay_count += int(np.trace(transitions))
        stay_total += int(transitions.sum())
        for i in range(NUM_AGENTS):
            if transitions[i].sum() > 0:
                p_values.append(stats.chisquare(transitions[i], transitions[i].sum() * g).pvalue)
                counts_of[f"{name}/i_k={i}"] = (transitions[i], g)
        rows[name] = {"empirical_P_row0": (transitions[0] / transitions[0].sum()).round(3).tolist(),
                      "g": g.round(3).tolist()}
    rejected = holm(np.array(p_values), WALK_LEVEL)
    deviations = {label: probability_deviation(counts, g, WALK_LEVEL / len(counts_of))
                  for label, (counts, g) in counts_of.items()}
    summary = (f"E_k[E~^(k+1)] = diag(g) rejected for {int(rejected.sum())}/{len(p_values)} (graph, i_k) rows "
               f"(Holm, level {WALK_LEVEL}); the holder never keeps the baton ({stay_count}/{stay_total} "
               "self-transitions) while Pi~ gives it probability g_(i_k) > 0: E_k[E~^(k+1)] = diag(P[i_k, :])")
    return Measurement(summary, {"graphs": rows, "self_transitions": stay_count, "transitions": stay_total,
                                 "p_values": [float(p) for p in p_values], "deviations": deviations})
