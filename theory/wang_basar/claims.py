"""Wang & Basar, "Decentralized Nonconvex Optimization with Guaranteed Privacy and Accuracy", seeds/003.

The paper's claims in the order of the paper, each wired to its checks. Line numbers are those of
seeds/003_c4bbc6c9028647d0.txt.
"""

from __future__ import annotations

from dpverify.theory.claims import FINDING, Check, Claim, Method, Paper
from dpverify.theory.instruments.stats import SIGNIFICANCE
from dpverify.theory.rules import (audit_lower_bounds, exact, interval_above, interval_below, paired_dominance, reported,
                                   worst_case_equality)
from dpverify.theory.wang_basar import coupling, figures, numerics, privacy, symbolic

S, N, ST, A = Method.SYMBOLIC, Method.NUMERICAL, Method.STATISTICAL, Method.AUDIT
EXACT = exact()
ESCAPES = interval_above(1 - numerics.ESCAPE_MU)   # every CP interval of a fraction of runs above 1 - mu (Theorem 3)
AUDIT = audit_lower_bounds()
WORST_CASE = worst_case_equality()     # a printed sensitivity: one rule in every paper
# the Fig. 5 differences in units of the margin, as simultaneous (1 - 2 level) intervals: below 1 is non-inferior (TOST
# with the mirrored intervals); the margin varies over its plausible range, so it cannot be the rule's parameter
COMPARABLE = interval_below(1.0, level=2 * SIGNIFICANCE)
REPORTED = reported()                            # a variant the paper does not claim: measured, never decided
# checks that run Algorithm 2 themselves, hundreds of runs of 3000 rounds: `dpverify verify` re-runs them on a user's
# implementation with --long (or --claim); about 5.6 million rounds of a per-agent loop in all
LONG_RUNS = {"runs_algorithm": True, "long_runs": True}


def claim(id_: str, kind: str, line: str, title: str, statement: str, *checks: Check, not_run: str = "") -> Claim:
    return Claim(f"wang-basar/{id_}", kind, line, title, statement, tuple(checks), not_run)


CLAIMS = (
    # ---- Sec. 2-3: network and algorithm ----------------------------------------------------------
    claim("assumption-4", "assumption", "L98-L100", "The weight matrices satisfy Assumption 4",
          "W symmetric, doubly stochastic, w_ii > 0, eta = ||W - 11^T/m|| < 1 (for the graphs used).",
          Check("eta of the default and variant graphs", N, numerics.check_assumption_4, rule=EXACT)),
    claim("equation-11", "equation", "L228 (11)", "Average dynamics (11)",
          "xbar^{k+1} = xbar^k - (lambda^k/m) sum_i (g_i^k + n_i^k), since W is column stochastic.",
          Check("every step of noisy runs", N, numerics.check_equation_11, rule=EXACT, runs_algorithm=True)),
    # ---- Sec. 4.1: consensus -----------------------------------------------------------------------
    claim("theorem-1-constants", "equation", "L262-L270 (16)-(18)", "Young's inequality constants of (18)",
          "With 1 + eps = 1/eta: eta^2(1+eps) = eta and eta^2(1+1/eps) = eta^2/(1-eta).",
          Check("sympy", S, symbolic.check_theorem_1_constants, rule=EXACT)),
    claim("theorem-1-equation-19", "equation", "L272-L280 (19)", "Second inequality of (19)",
          "sum (lambda^k)^2 ||g^k + N^k||^2 <= sum (lambda^k)^2 ||g^k||^2 + sum (lambda^k)^2 ||N^k||^2.",
          Check("sympy counterexample", S, symbolic.check_inequality_19, rule=EXACT)),
    claim("theorem-1", "theorem", "L234-L284", "Consensus almost surely",
          "Under Assumptions 1, 2, 4 and sum (lambda^k)^2 < inf, lim ||x_i^k - xbar^k|| = 0 a.s. for all i.",
          Check("stepsize conditions of the experiments", S, symbolic.check_schedules, rule=EXACT),
          Check("consensus error over runs (Sec. 6.1 instance)", ST, numerics.check_theorem_1, rule=EXACT, **LONG_RUNS)),
    claim("remark-3-equation-20", "equation", "L296-L302 (20)", "Noise term of (20)",
          "E[2||g^k||^2 + 2||N^k||^2] <= 2mG^2 + 2m sigma, because n_i^k has covariance sigma I_d.",
          Check("sympy expectation", S, symbolic.check_remark_3_noise_term, rule=EXACT)),
    claim("remark-3", "remark", "L290-L310", "Consensus in mean square",
          "lim E||x_i^k - xbar^k||^2 = 0.",
          Check("mean-square consensus over runs", ST, numerics.check_theorem_1, rule=EXACT, **LONG_RUNS)),
    # ---- Sec. 4.2: convergence -----------------------------------------------------------------------
    claim("lemma-1", "lemma", "L316-L340", "Stochastic approximation avoids local maxima ([32])",
          "Under its four conditions, x^k converges a.s. to saddles or minima (or their boundary) and avoids maxima.",
          Check("conclusion on the harness maximum test (Algorithm 2 as the recursion)", ST, numerics.check_maximum_avoidance, rule=EXACT,
                **LONG_RUNS),
          not_run=""),
    claim("lemma-3", "lemma", "L608-L610", "Summable convolution ([35])",
          "gamma^k >= 0 summable, 0 < beta < 1 => sum_k sum_{l<=k} beta^{k-l} gamma^l < inf.",
          Check("sympy closed form", S, symbolic.check_lemma_3, rule=EXACT)),
    claim("theorem-2", "theorem", "L344-L393", "Convergence to the same saddle or minimum; maxima avoided",
          "With lambda^k non-increasing, sum lambda = inf, sum lambda^2 < inf, all x_i^k converge a.s. to the same point "
          "among saddles and minima (or the boundary); local maxima are avoided a.s.",
          Check("stepsize conditions", S, symbolic.check_schedules, rule=EXACT),
          Check("destinations from random starts (Sec. 6.1 instance)", ST, numerics.check_theorem_2, rule=EXACT, **LONG_RUNS),
          Check("maximum avoidance (harness test, start at the maximum)", ST, numerics.check_maximum_avoidance, rule=EXACT,
                **LONG_RUNS)),
    # ---- Sec. 4.3: saddles --------------------------------------------------------------------------
    claim("lemma-2", "lemma", "L423-L425", "Escape under a dominating perturbation ([23])",
          "If w^k dominates the coupling difference, x^k escapes x_0 w.p. >= 1 - mu within O(log(1/mu)/a) iterates (a <= 1/l).",
          Check("coupled Algorithm 2 runs from the saddle: domination hypothesis and escape (CP)", ST, coupling.check_lemma_2,
                rule=interval_above(1 - coupling.LEMMA_MU), **LONG_RUNS)),
    claim("theorem-3", "theorem", "L429-L439", "Escape from strict saddles with probability >= 1 - mu",
          "With constant lambda <= 1/l for O(log(1/mu)/lambda) iterates, then diminishing, Algorithm 2 avoids saddle points "
          "with probability >= 1 - mu.",
          Check("escape probability and time from the saddle (CP), 1/lambda scaling", ST, numerics.check_theorem_3, rule=ESCAPES,
                **LONG_RUNS)),
    # ---- Sec. 5: privacy ----------------------------------------------------------------------------
    claim("sensitivity-28", "equation", "L494-L496 (28)", "Data-sample sensitivity nu lambda^k / n_i",
          "S_i = nu lambda^k / n_i for one changed sample (l1).",
          Check("probe on the Sec. 6.1 f_i over B; supremum over Assumption 1 (sympy)", A, privacy.check_sensitivity("data (28)"), rule=WORST_CASE)),
    claim("sensitivity-30", "equation", "L512-L516 (30)", "Gradient sensitivity lambda^k",
          "S_g,i = lambda^k.", Check("probe", A, privacy.check_sensitivity("gradient (30)"), rule=WORST_CASE)),
    claim("sensitivity-31", "equation", "L528-L530 (31)", "State sensitivity 1",
          "S_x,i = 1 (l1), with g_i^k = grad f_i(x_i^k).", Check("probe on the Sec. 6.1 f_i over B", A, privacy.check_sensitivity("state (31)"), rule=WORST_CASE)),
    claim("theorem-4", "theorem", "L498-L504 (29)", "Per-iteration DP of data samples",
          "For eps, delta in (0,1), n_i^k gives (eps, delta)-DP for every sample of agent i at iteration k when "
          "sigma^2 >= 2 nu^2 (lambda^k)^2 ln(1.25/delta)/(n_i^2 eps^2).",
          Check("printed condition vs Gaussian mechanism on the release", S, symbolic.check_privacy_condition("theorem-4"), rule=EXACT),
          Check("audit of one message, printed noise, reading (a)", A, privacy.audit_message("theorem-4"), rule=AUDIT)),
    claim("remark-4", "remark", "L506-L508", "Infinitely many (eps, delta) pairs satisfy (29)",
          "For a given noise, (29) holds on a continuum of (eps, delta).", Check("sympy", S, symbolic.check_remark_4, rule=EXACT)),
    claim("theorem-5", "theorem", "L518-L524", "Per-iteration DP of gradients",
          "n_i^k gives (eps, delta)-DP for g_i^k at iteration k when sigma^2 >= 2 (lambda^k)^2 ln(1.25/delta)/eps^2.",
          Check("printed condition vs Gaussian mechanism on the release", S, symbolic.check_privacy_condition("theorem-5"), rule=EXACT),
          Check("audit of one message, printed noise, reading (a)", A, privacy.audit_message("theorem-5"), rule=AUDIT),
          Check("audit of one message, printed noise, reading (c)", A, privacy.audit_message("theorem-5", "c"), rule=AUDIT)),
    claim("noise-vs-samples", "statement", "L526", "Data-sample noise decreases with n_i; gradient noise does not depend on it",
          "The noise for data-sample privacy decreases as n_i grows; for gradient privacy it is independent of n_i.",
          Check("sympy derivative", S, symbolic.check_l526, rule=EXACT)),
    claim("theorem-6", "theorem", "L528-L538", "Per-iteration DP of optimization variables",
          "n_i^k gives (eps, delta)-DP for x_i^k at iteration k when sigma^2 >= 2 ln(1.25/delta)/((lambda^k)^2 eps^2).",
          Check("printed condition vs Gaussian mechanism on the release", S, symbolic.check_privacy_condition("theorem-6"), rule=EXACT),
          Check("sensitivity (31) it rests on", A, privacy.check_sensitivity("state (31)"), rule=WORST_CASE),
          Check("exact privacy at the measured sensitivity", N, privacy.check_theorem_6_privacy, rule=EXACT),
          Check("audit of one message, printed noise, reading (a)", A, privacy.audit_message("theorem-6"), rule=AUDIT)),
    claim("remark-5", "remark", "L540-L542", "State privacy vanishes as lambda^k -> 0",
          "At fixed sigma, privacy of x_i^k decreases with lambda^k and reduces to zero as the algorithm converges.",
          Check("sympy limit", S, symbolic.check_remark_5, rule=EXACT)),
    claim("experiments-privacy", FINDING, "L579", "Per-iteration privacy of the Sec. 6.1 noise",
          "Not claimed by the paper: the exact per-message eps of sigma_var = 0.5 'for privacy protection'.",
          Check("exact Gaussian mechanism", N, privacy.check_experiment_privacy, rule=REPORTED)),
    claim("privacy-over-iterations", FINDING, "L500, L520, L536", "Privacy of the whole run (composition)",
          "Not claimed by the paper (Theorems 4-6 are per iteration): the whole transcript of one agent over K iterations.",
          Check("GDP composition of the exact releases", N, privacy.check_composition, rule=REPORTED)),
    # ---- Sec. 6.1: estimation test function ---------------------------------------------------------
    claim("estimation-gradient", "equation", "L566", "Printed gradient of f_i", "grad f_i = -2M^T Y_i + 2M^TM theta + 3 kappa ||theta|| theta.",
          Check("sympy", S, symbolic.check_printed_gradient, rule=EXACT)),
    claim("estimation-hessian", "equation", "L570", "Printed Hessian of f_i",
          "grad^2 f_i = 2M^TM - 3 kappa ||theta|| I_2 + 3 kappa theta theta^T/||theta||.", Check("sympy", S, symbolic.check_printed_hessian, rule=EXACT)),
    claim("estimation-convex", "statement", "L560", "f_i is convex for kappa > 0", "When kappa is positive, f_i is convex.",
          Check("sympy eigenvalues", S, symbolic.check_convex_for_positive_kappa, rule=EXACT)),
    claim("estimation-stationary-points", "statement", "L572", "Stationary points of F",
          "F has a local minimum at [1.3478, 1.0690] and a saddle at [-7.4336, 1.3959].",
          Check("exact roots (degree-6 polynomial) and Hessian", S, symbolic.check_stationary_points, rule=EXACT)),
    claim("estimation-strict-saddle", "statement", "L574", "The saddle is strict", "The saddle point is a strict saddle point.",
          Check("Hessian eigenvalues", S, symbolic.check_strict_saddle, rule=EXACT)),
    claim("estimation-unique-minimum", "statement", "L574", "After the modification: one minimum, no other local minimum",
          "Outside [-8,4]x[-3,3] f_i increases linearly with ||theta|| (smooth connection); the problem then has one "
          "minimum (no other local minimum) and one saddle.",
          Check("constrained minimum on the edge; certified multi-start descent and zeros of the extended oracle (3 extensions)", N, numerics.check_modified_landscape, rule=EXACT)),
    # ---- Sec. 6.1: figures and table ----------------------------------------------------------------
    claim("figure-3", "experiment", "L579, L587", "Consensus under DP noise from random starts",
          "The algorithm ensures all agents converge to the same state under DP noise (Fig. 3).",
          Check("consensus and destinations of the reproduced runs", ST, figures.check_figure_3, rule=EXACT, needs=("figures-3-4",))),
    claim("figure-4-noise-free-trapped", "experiment", "L579, L589", "Without noise the states stay at the saddle",
          "Without the DP noise, all states would be trapped at the saddle point.",
          Check("Algorithm 1 from the saddle, exact arithmetic", N, numerics.check_noise_free_trapped, rule=EXACT,
                decision_reads=("graph", "num_agents", "kappa", "lam0", "switch", "lam_scale", "iterations"),
                decision_argument="decided on the exact-arithmetic replays, which stop if a state leaves B: the "
                                  "extension outside B (extension, ext_c, ext_delta_r) never enters them")),
    claim("figure-4-converge-to-optimum", "experiment", "L579, L589", "With noise, all agents converge to the optimum",
          "The DP noise avoided the saddle and ensured the convergence of all agents to the optimal value (Fig. 4).",
          Check("destinations of noisy runs from the saddle (CP)", ST, numerics.check_saddle_destination, rule=ESCAPES, **LONG_RUNS)),
    claim("table-1-trend", "experiment", "L579-L583", "Error increases with sigma",
          "The optimization error increases with the noise magnitude sigma (Table 1).",
          Check("Spearman over the reproduced runs", ST, figures.check_table_1_trend, rule=paired_dominance(), needs=("table-1",))),
    claim("table-1-values", "experiment", "L581-L583", "Table 1 values",
          "Average optimization error at k = 3000 over 100 runs: 0.048, 0.058, 0.064, 0.070, 0.078, 0.091 for sigma = 0.1..0.6.",
          Check("printed value inside our 95% CI", ST, figures.check_table_1_values, rule=EXACT, needs=("table-1",))),
    # ---- Sec. 6.2: ICA ---------------------------------------------------------------------------------
    claim("ica-saddles", "statement", "L597", "u* = d^-1/2(+-1,...,+-1) are strict saddles",
          "The saddles include all u* = d^-1/2(+-1,...,+-1), all strict.", Check("Riemannian Hessian (sympy d=3, numeric d=4, 10)", S, symbolic.check_ica_saddles, rule=EXACT)),
    claim("figure-5-comparable", "experiment", "L597, L600", "ICA: DP comparable or slightly better than noise-free",
          "With DP noise the accuracy and speed are comparable or even slightly better than noise-free (Fig. 5).",
          Check("non-inferiority / equivalence of the paired error curves (speed and final accuracy)", ST,
                figures.check_figure_5_comparable, rule=COMPARABLE, needs=("figure-5",))),
    claim("figure-5-trapped", "experiment", "L597", "ICA: noise-free trapped at saddles in some of 100 runs",
          "The noise-free case was trapped at saddle points in some of the 100 runs (not always).",
          Check("runs ending near a saddle, by case", ST, figures.check_figure_5_trapped, rule=EXACT, needs=("figure-5",))),
    # ---- headline claims ----------------------------------------------------------------------------
    claim("headline-encryption-free", "headline", "L6, L31, L146", "One shared variable per iteration",
          "Each agent shares one d-dimensional variable per iteration; no encryption.",
          Check("message shapes of Algorithm 2", N, figures.check_one_message, rule=EXACT)),
)

PAPER = Paper("wang-basar", "Decentralized Nonconvex Optimization with Guaranteed Privacy and Accuracy (Wang & Basar)",
              "seeds/003_c4bbc6c9028647d0.txt", CLAIMS)
