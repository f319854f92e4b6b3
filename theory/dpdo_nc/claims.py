"""Privacy-Preserving Distributed Online Mirror Descent for Nonconvex Optimization (DPDO-NC), seeds/002.

The paper's claims in the order of the paper, each wired to its checks. Line numbers are those of
seeds/002_982ba883ea3d0f38.txt.
"""

from __future__ import annotations

from dpverify.theory.audit.auditor import SENSITIVITY_RELATIVE_TOLERANCE
from dpverify.theory.claims import Check, Claim, Method, Paper
from dpverify.theory.dpdo_nc import audit as audits
from dpverify.theory.dpdo_nc import figures, numerics, symbolic, variant
from dpverify.theory.rules import (
    audit_lower_bounds,
    exact,
    interval_above,
    interval_below,
    paired_dominance,
    within_tolerance,
)

S, N, ST, G, A = Method.SYMBOLIC, Method.NUMERICAL, Method.STATISTICAL, Method.GROUND_TRUTH, Method.AUDIT
EXACT = exact()
SUBLINEAR = interval_below(1.0)                  # the regret's growth exponent, every CI below 1
ABOVE_ZERO = interval_above(0.0)                 # a gap (right side minus left side) of a claimed inequality
AT_MOST = within_tolerance(0.0, relative=False)  # a measured value (or ratio) must not exceed the paper's bound
# why the Assumption 3 check decides the same for every data seed it reads
ASSUMPTION_3_ARGUMENT = ("For every d > 0 the gradient of 1/2 (||x - s|| - d)^2 jumps by 2d across the sensor s, which "
                         "the paper places in Omega; the data seed moves only d = ||s - target|| + U(0, noise), positive "
                         "for every draw (with probability 1).")
A3_FAILS = " Assumption 3 does not hold on Example 1 (see dpdo-nc/assumption-3), so this lemma's hypotheses fail there."


def claim(id_: str, kind: str, line: str, title: str, statement: str, *checks: Check, not_run: str = "") -> Claim:
    return Claim(f"dpdo-nc/{id_}", kind, line, title, statement, tuple(checks), not_run)


CLAIMS = (
    # ---- Sections 1-2: related work, problem, assumptions ---------------------------------------
    claim("table-1", "headline", "L25-L33", "Comparison with prior private online algorithms",
          "Table 1: prior work needs convex costs / fixed or undirected graphs; this work handles nonconvex costs on "
          "time-varying directed graphs.",
          not_run="a statement about other papers' settings; nothing in this paper's artefacts can check it"),
    claim("assumption-1", "assumption", "L63, L487", "Schedule is B-strongly connected and doubly stochastic",
          "For all t, G(t) is B-strongly connected and A(t) doubly stochastic (checked on the schedule of Sec. 5).",
          Check("validated schedule, smallest B", N, numerics.check_assumption_1, rule=EXACT)),
    claim("assumption-2", "assumption", "L69", "Omega bounded, closed, convex", "Omega = {||x||_1 <= 3} is compact convex.",
          Check("diameter of the l1 ball", N, numerics.check_assumption_2,
                rule=within_tolerance(1e-12, relative=False))),
    claim("assumption-3", "assumption", "L71", "f_t^i differentiable and beta-smooth",
          "Each f_t^i is differentiable with a beta-Lipschitz gradient on R^d (checked on Example 1's costs).",
          Check("gradient jump at the sensor", N, numerics.check_assumption_3, rule=EXACT, decision_reads=(),
                decision_argument=ASSUMPTION_3_ARGUMENT)),
    claim("gradient-bound", "assumption", "L75", "Bounded gradients on Omega",
          "By Assumptions 2-3, ||grad f_t^i(x)|| <= theta on Omega (theta unspecified; the default is checked).",
          Check("grid of Omega, all t, i", N, numerics.check_theta, rule=AT_MOST)),
    claim("example-1", "assumption", "L75-L87", "Example 1 satisfies Assumptions 1-3",
          "The localization problem (nonconvex) satisfies Assumptions 1-3.",
          Check("Assumption 1", N, numerics.check_assumption_1, rule=EXACT),
          Check("Assumption 2", N, numerics.check_assumption_2, rule=within_tolerance(1e-12, relative=False)),
          Check("Assumption 3", N, numerics.check_assumption_3, rule=EXACT, decision_reads=(),
                decision_argument=ASSUMPTION_3_ARGUMENT)),
    claim("remark-1-convex", "remark", "L111-L119",
          "Regret (2) dominates function-value regret for convex costs (checked on a convex variant of Example 1)",
          "If the costs are convex, (4) <= E[sum <grad f, x_t - x*>] <= E[R_T^i]. Example 1 is nonconvex, so this is "
          "checked on a labelled variant (not in the paper): Example 1's target tracked with f_t^i = ½||x - y_t^i||².",
          Check("both gaps per node and eps on Algorithm 1's runs, bootstrap intervals", ST, variant.check_remark_1,
                rule=ABOVE_ZERO)),
    claim("assumption-4", "assumption", "L139-L141, L513", "Both Bregman divergences satisfy Assumption 4",
          "For phi = ½||x||², ||x||² and x^T Q x, D_phi(x, .) is convex and M-smooth (L513: 'Both distance functions "
          "satisfy Assumption 4').", Check("sympy Hessians in y", S, symbolic.check_assumption_4, rule=EXACT)),
    claim("remark-2-assumption-4", "remark", "L169-L171, L139", "The entropic map of Remark 2 under Assumption 4",
          "Remark 2 offers phi = sum x log x as a mirror map for Algorithm 1 (which assumes Assumption 4).",
          Check("sympy Hessian of D_phi(x, .)", S, symbolic.check_entropic_assumption_4, rule=EXACT)),
    claim("remark-2", "remark", "L169-L171", "Entropic update stays in the simplex",
          "With phi = sum x log x on the simplex the update is a normalized exponential and the iterates remain in Omega.",
          Check("sympy identity", S, symbolic.check_remark_2, rule=EXACT)),
    claim("unique-solution-7", "equation", "L153-L157", "Subproblem (7) has a unique solution (the implemented step)",
          "The objective of (7) is strongly convex in x, so (7) has a unique solution.",
          Check("implemented step vs CVXPY", G, numerics.check_subproblem_7,
                rule=within_tolerance(numerics.OBJECTIVE_TOLERANCE, relative=False))),
    # ---- Section 4.1: privacy -------------------------------------------------------------------
    claim("lemma-1", "lemma", "L210-L249 (8)", "Sensitivity bound",
          "Delta(t) = sup ||X_t - X_t'||_1 <= 2 sqrt(d) alpha_t theta / omega (Definition 5, L204).",
          Check("sympy: sensitivity of X_t vs (8)", S, symbolic.check_sensitivity_index, rule=EXACT),
          Check("sensitivity probe at every round", A, audits.probe_lemma_1,
                rule=audit_lower_bounds(relative_tolerance=SENSITIVITY_RELATIVE_TOLERANCE))),
    claim("lemma-1-step-11", "equation", "L225-L236 (11)", "Proof step (11)",
          "||x_{t+1}^i - z_t^i|| <= alpha_t theta / omega (from (9) with x = z_t^i).",
          Check("along the experiment's runs", N, audits.check_proof_step_11, rule=within_tolerance(1e-9, relative=False),
                runs_algorithm=True)),
    claim("calibration", "equation", "L161, L255", "Noise calibration sigma_t = (8)/eps",
          "Algorithm 1's sigma_t = 2 sqrt(d) alpha_t theta/(omega eps) is Theorem 1's Delta(t)/eps with (8); (8) decreases.",
          Check("sympy", S, symbolic.check_calibration, rule=EXACT)),
    claim("eq-14", "equation", "L266-L274 (14)", "Laplace likelihood-ratio bound (14)",
          "The ratio of the broadcast densities is at most exp(||X_t - X_t'||_1 / sigma_t).",
          Check("triangle inequality per coordinate", S, symbolic.check_eq_14, rule=EXACT)),
    claim("theorem-1", "theorem", "L253-L283, L9, L35", "eps-DP at each time",
          "With sigma_t = Delta(t)/eps, Algorithm 1 is eps-differentially private at each time t (the adversary observes "
          "every broadcast).", Check("audit of each round's broadcasts, worst-case neighbours", A, audits.audit_rounds,
                                       rule=audit_lower_bounds())),
    claim("theorem-1-horizon", "theorem", "L278-L283", "eps_hat-DP over the horizon",
          "Over T rounds Algorithm 1 (sigma_t = (8)/eps) is eps_hat-DP with eps_hat = sum_t Delta(t)/sigma_t = T eps, "
          "Delta(t) the bound (8) as the paper uses it (the adversary observes every broadcast).",
          Check("exact whole-transcript privacy loss: proved bound vs a witness pair and transcript", N,
                audits.exact_horizon_loss, rule=EXACT)),
    claim("remark-3", "remark", "L284-L286", "Decaying sensitivity, privacy-accuracy trade-off",
          "The sensitivity bound decreases with alpha_t; smaller eps gives stronger privacy (more noise).",
          Check("sympy", S, symbolic.check_calibration, rule=EXACT)),
    # ---- Section 4.2: regret --------------------------------------------------------------------
    claim("lemma-2", "lemma", "L292-L304 (15)", "Geometric mixing of Phi(t, s)",
          "|[Phi(t,s)]_ij - 1/N| <= C lambda^(t-s) with the printed C, lambda.",
          Check("products of the schedule's matrices", N, numerics.check_lemma_2, rule=AT_MOST)),
    claim("laplace-norm", "equation", "L345, L447", "E||xi|| = sqrt(2d) sigma",
          "E[||xi_t^h||] = sqrt(2d) sigma_t and E[||Xi_k||] = sqrt(2Nd) sigma (used in (21), (30), (31)).",
          Check("quadrature", N, numerics.check_laplace_norm, rule=within_tolerance(1e-6, relative=False))),
    claim("lemma-3", "lemma", "L308-L347 (16)", "Consensus bound",
          "E||x_t^i - x_t^j|| is bounded by (16)." + A3_FAILS,
          Check("Monte-Carlo vs (16)", N, numerics.check_lemma_3, rule=AT_MOST, runs_algorithm=True)),
    claim("lemma-4", "lemma", "L349-L365 (22)", "Bregman telescoping bound (22)",
          "sum_t sum_i E[D(x, z_t^i) - D(x, x_{t+1}^i)]/alpha_t <= N M eta^2/(2 alpha_T) + sum M/(2 alpha_t) E||xi||^2.",
          Check("Monte-Carlo vs (22)", N, numerics.check_lemma_4, rule=AT_MOST, runs_algorithm=True)),
    claim("lemma-4-step-24", "equation", "L369-L379 (24)", "Telescoping identity (24) as printed",
          "(24)'s identity with the sum to T-1 and its final equality M eta^2/(2 alpha_T).",
          Check("sympy, T = 2..6", S, symbolic.check_lemma_4_telescoping, rule=EXACT)),
    claim("lemma-5", "lemma", "L381-L389", "Optimality of the Bregman subproblem",
          "x* solves min D(x, y) + <s, x> iff <s, x* - z> <= D(z,y) - D(z,x*) - D(x*,y) for all z in Omega.",
          Check("sympy three-point identity", S, symbolic.check_lemma_5, rule=EXACT)),
    claim("lemma-6", "lemma", "L390-L419 (25)", "Regret decomposition (25) (checked on a beta-smooth variant of Example 1)",
          "E[sum <grad f_t^j(x_t^i), x_t^i - x>] is bounded by the five terms of (25). Example 1 has no finite beta "
          "(dpdo-nc/assumption-3), so this is checked on a labelled variant (not in the paper) with beta = 1: Example 1's "
          "target tracked with f_t^i = ½||x - y_t^i||².",
          Check("right minus left per node and eps, each term from the iterates, bootstrap intervals", ST,
                variant.check_lemma_6, rule=ABOVE_ZERO)),
    claim("summation-facts", "equation", "L464-L466", "Series bounds used in Theorem 2",
          "sum alpha_t <= 2 sqrt(T)/N; sum_t sum_{k<t} lambda^(t-k) alpha_k <= 2 sqrt(T)/(N(1-lambda)).",
          Check("numeric, T <= 2000", N, symbolic.check_summation_facts, rule=AT_MOST)),
    claim("theorem-2-combination", "equation", "L455-L473", "Combined display to penultimate display",
          "The two brackets of the combined inequality add up to the penultimate display's coefficients.",
          Check("sympy coefficients", S, symbolic.check_combined_display, rule=EXACT)),
    claim("theorem-2-constants", "theorem", "L425-L475 (28), (33)", "U_1, U_2 follow from the proof",
          "Substituting alpha_t, sigma_t and the series bounds into the penultimate display gives U_1 + U_2 sqrt(T) as printed.",
          Check("sympy term by term", S, symbolic.check_theorem_2_constants, rule=EXACT)),
    claim("theorem-2", "theorem", "L423-L428 (28)", "Regret bound E[R_T^i] <= U_1 + U_2 sqrt(T)",
          "Under Assumptions 1-4 the regret satisfies (28)." + A3_FAILS,
          Check("bound (beta = 0) vs measured regret", N, numerics.check_theorem_2_bound, rule=AT_MOST,
                needs=("figure-1",))),
    claim("sublinear-regret", "headline", "L9, L37, L428", "Regret grows sublinearly",
          "lim E[R_T^i]/T = 0: measured regret grows with exponent < 1 (Fig. 1 at T = 500 and the long horizon).",
          Check("growth exponent, bootstrap CI", ST, figures.sublinear(("figure-1", "long-horizon")), rule=SUBLINEAR,
                needs=(("figure-1", "long-horizon"),))),
    claim("sqrt-t-rate", "headline", "L9, L37", "O(sqrt T) regret",
          "The regret is O(sqrt T), the same order as without privacy.",
          Check("plateau test: growth exponent over the last decade of the long horizon", ST, figures.sqrt_rate,
                rule=interval_below(figures.SQRT_RATE_LIMIT), needs=("long-horizon",), long_runs=True)),
    claim("remark-4", "remark", "L479-L481", "Privacy changes the coefficient, not the order",
          "DP does not affect the order of the bound, only its coefficient; larger eps, tighter bound.",
          Check("sympy: eps enters the bound only as a coefficient", S, symbolic.check_eps_coefficient, rule=EXACT),
          Check("measured ordering of privacy levels", ST, figures.privacy_ordering, rule=paired_dominance(),
                needs=("figure-1",))),
    # ---- Section 5: experiments -----------------------------------------------------------------
    claim("figure-1", "experiment", "L503-L506", "Convergence under every privacy level, better with larger eps",
          "Algorithm 1 converges under different privacy levels; the larger eps, the better.",
          Check("sublinear at T = 500", ST, figures.sublinear(("figure-1",)), rule=SUBLINEAR, needs=("figure-1",)),
          Check("paired ordering no-DP < 5 < 1 < 0.5", ST, figures.privacy_ordering, rule=paired_dominance(),
                needs=("figure-1",))),
    claim("figure-2", "experiment", "L508-L511", "All nodes converge at almost identical speeds",
          "At eps = 5 every node's regret is sublinear and the nodes' curves almost coincide.",
          Check("spread across nodes", ST, figures.nodes_alike, rule=interval_below(figures.NODE_SPREAD), needs=("figure-2",)),
          Check("sublinear", ST, figures.sublinear(("figure-2",)), rule=SUBLINEAR, needs=("figure-2",))),
    claim("figure-3", "experiment", "L513-L516", "Both Bregman divergences give sublinear regret",
          "With phi = ||x||² and x^T Q x at eps = 5 the algorithm converges with sublinear regret.",
          Check("sublinear for both maps", ST, figures.sublinear(("figure-3",)), rule=SUBLINEAR, needs=("figure-3",))),
)

PAPER = Paper("dpdo-nc", "Privacy-Preserving Distributed Online Mirror Descent for Nonconvex Optimization (DPDO-NC)",
              "seeds/002_982ba883ea3d0f38.txt", CLAIMS)
