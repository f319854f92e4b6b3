"""Private Networked Federated Learning for Nonsmooth Objectives (zCDP-NFL), seeds/004.

The paper's claims in the order of the paper, each wired to its checks. Line numbers are those of
seeds/004_15ab36c789ea4e62.txt.
"""

from __future__ import annotations

from dpverify.theory.audit.auditor import SENSITIVITY_RELATIVE_TOLERANCE
from dpverify.theory.claims import FINDING, Check, Claim, Method, Paper
from dpverify.theory.rules import audit_lower_bounds, converges, exact, interval_below, paired_dominance
from dpverify.theory.zcdp_nfl import audit as audits
from dpverify.theory.zcdp_nfl import bounds, numerics, symbolic
from dpverify.theory.zcdp_nfl.figures import outperforms

S, N, ST, G, A = Method.SYMBOLIC, Method.NUMERICAL, Method.STATISTICAL, Method.GROUND_TRUTH, Method.AUDIT
EXACT = exact()
AUDIT = audit_lower_bounds()     # an audit's eps_lb / rho_lb against the claimed eps / rho
# a probe's witnessed sensitivity against Lemma I's bound (in units of the bound), up to round-off
PROBE = audit_lower_bounds(relative_tolerance=SENSITIVITY_RELATIVE_TOLERANCE)
DOMINANCE = paired_dominance()   # Figs. 1-3: one-sided Wilcoxon per eps, Holm across eps
EPS_DELTA_RULE = ("(eps,delta)DP-NFL has no rule in the paper (L300); the harness default is the classical Gaussian "
                  "mechanism with basic composition (spec Sec. 2.10 A3), so the size of this gap is a property of that default")
# why the (14)-(17) residual checks decide the same at every value of the run's parameters they read
SUBGRADIENT_14_ARGUMENT = ("The printed subgradient of (14) differs from its derivative (W^(n+1) - tW^(n))/eta^(n+1) + "
                           "f'(tW^(n)) by (sqrt(2/eta^(n+1)) - 1/eta^(n+1)) (W^(n+1) - tW^(n)), in closed form: nonzero "
                           "wherever eta^(n+1) != 1/2 and W^(n+1) != tW^(n), so a private run at any parameter values "
                           "shows it.")
GRAD_STEP = "zCDP-grad-NFL's constant step is a default matched to zCDP-NFL's first effective step (L302)"
P_ADMM_SURROGATE = ("P-ADMM's update rules (ref. (24), arXiv:1901.02094) are not available here: the labelled surrogate of "
                    "spec Sec. 2.10 A5 ran (exact ridge ADMM step, output perturbation, linearly decaying variance), so "
                    "neither outcome is evidence about the paper's P-ADMM")


def claim(id_: str, kind: str, line: str, title: str, statement: str, *checks: Check, not_run: str = "") -> Claim:
    return Claim(f"zcdp-nfl/{id_}", kind, line, title, statement, tuple(checks), not_run)


CLAIMS = (
    # ---- Section 2: the algorithm -------------------------------------------------------------
    claim("closed-form-update", "equation", "L83-L100 (7)", "Primal update (7) has the closed form used",
          "The argmin of subproblem (7) is the preconditioned step of spec Sec. 2.4 (re-derived, not printed).",
          Check("sympy first-order condition", S, symbolic.check_primal_closed_form, rule=EXACT),
          Check("implementation solves (7)", N, numerics.check_update_solves_subproblem, rule=EXACT)),
    claim("appendix-a-eq-25", "equation", "L327-L336 (25)-(26)", "Eq. (25) is the primal update",
          "(25)-(26) as printed give the primal updates w_{k,D}^{(n)} of (7) for D and D'.",
          Check("sympy comparison with (7)", S, symbolic.check_appendix_a_update, rule=EXACT)),
    # ---- Section 3: privacy -------------------------------------------------------------------
    claim("assumption-1", "assumption", "L114", "Bounded per-sample subgradients, ||l'|| <= c1",
          "The losses have gradients bounded by c1 (the constant the noise is calibrated to).",
          Check("per-sample subgradients on the experiments' runs", N, numerics.check_assumption_1, rule=EXACT,
                runs_algorithm=True)),
    claim("lemma-1", "lemma", "L118-L120 (11)", "Sensitivity bound",
          "Delta_{k,2}(n) <= 2 c1 / (M_k (2 rho |N_k| + 1/eta^(n))).",
          Check("sympy (27) and bound", S, symbolic.check_lemma_1, rule=EXACT),
          Check("realized with a canary under a shared history", N, numerics.check_lemma_1_realized, rule=EXACT,
                runs_algorithm=True)),
    claim("theorem-1", "theorem", "L125-L132 (12)", "Per-iteration dynamic zCDP",
          "zCDP-NFL is dynamic varphi_k^(n)-zCDP with sigma_k^2(n) = Delta_{k,2}^2(n) / (2 varphi_k^(n)).",
          Check("sympy Gaussian Renyi divergence", S, symbolic.check_theorem_1_gaussian_renyi, rule=EXACT),
          Check("ledger: every release calibrated by (12)", N, numerics.check_ledger_matches_corollary, rule=EXACT,
                runs_algorithm=True)),
    claim("appendix-c-sum", "equation", "L371-L375", "Sum of the dynamic budgets",
          "sum_{0<n<T} varphi_k^(n) = varphi_k^(1) (1 - tau^T) / (tau^(T-1) - tau^T).",
          Check("sympy geometric sum", S, symbolic.check_appendix_c_sum, rule=EXACT)),
    claim("corollary", "corollary", "L134-L140", "Total (eps, delta)-DP",
          "For tau, delta in (0,1), zCDP-NFL is (max_k eps_k, delta)-DP with eps_k = phi(1-tau^T)/(tau^(T-1)-tau^T)"
          " + 2 sqrt(phi (1-tau^T)/(tau^(T-1)-tau^T) log(1/delta)).",
          Check("sympy composition + conversion", S, symbolic.check_corollary, rule=EXACT),
          Check("ledger total vs closed form", N, numerics.check_ledger_matches_corollary, rule=EXACT,
                runs_algorithm=True)),
    claim("audit-privacy", "theorem", "L118-L140, L28", "Privacy holds for what the adversary observes",
          "Under Assumption 1, each release is varphi^(n)-zCDP (Theorem I) and a whole run is (eps, delta)-DP with the "
          "Corollary's eps, against an adversary who aggregates all exchanged messages.",
          Check("sensitivity probe, LAD canary", A, audits.probe_sensitivity("absolute", False), rule=PROBE),
          Check("sensitivity probe, squared loss clipped to c1", A, audits.probe_sensitivity("squared", True),
                rule=PROBE),
          Check("sensitivity probe, random LAD neighbours", A, audits.probe_random_neighbours("absolute", False),
                rule=PROBE),
          Check("one release, LAD canary (Theorem I)", A, audits.audit_release("absolute", False), rule=AUDIT),
          Check("whole transcript, LAD canary (Corollary)", A, audits.audit_transcript("absolute", False), rule=AUDIT),
          Check("whole transcript, squared loss clipped (Corollary)", A, audits.audit_transcript("squared", True),
                rule=AUDIT)),
    claim("audit-experiments-privacy", "experiment", "L125-L140, L298-L321",
          "The privacy levels of the squared-loss experiments hold",
          "Figures 1 and 3 (squared loss, noise calibrated to c1, which the paper does not give, no clipping) run at the "
          "stated total (eps, delta) for the adversary of L28.",
          Check("sensitivity probe, squared-loss canary", A, audits.probe_sensitivity("squared", False), rule=PROBE),
          Check("sensitivity probe, random squared-loss neighbours", A, audits.probe_random_neighbours("squared", False),
                rule=PROBE),
          Check("one release, squared-loss canary", A, audits.audit_release("squared", False), rule=AUDIT),
          Check("whole transcript, squared-loss canary", A, audits.audit_transcript("squared", False), rule=AUDIT)),
    claim("audit-reading-25", FINDING, "L331-L336 (25)-(26)", "Privacy under the reading of (25)-(26)",
          "Not claimed by the paper: with R' at the un-noised w_k as written in (25)-(26) (spec 2.6 R_subgrad_point), "
          "the private state leaks into later releases; does Lemma I's bound still hold per release?",
          Check("sensitivity probe, ridge clipped, R' at w_k", A, audits.probe_sensitivity("squared", True, "primal"),
                rule=PROBE),
          Check("probe aimed at the leak: histories steered on and off the canary's centre", A,
                audits.probe_state_leak("squared", True, "primal"), rule=PROBE)),
    claim("zcdp-stronger-than-renyi", "headline", "L10, L28", "zCDP is stronger than Renyi-DP",
          "zCDP bounds all positive moments linearly, hence a stronger guarantee than Renyi-DP's single moment.",
          Check("sympy orders", S, symbolic.check_zcdp_vs_renyi, rule=EXACT)),
    claim("zcdp-less-noise-than-eps-delta", "headline", "L10", "zCDP allows better accuracy than (eps, delta)-DP",
          "At the same total privacy, zCDP calibration adds less noise than conventional (eps, delta)-DP rules.",
          Check("noise variances at equal budget", N, numerics.check_noise_eps_delta_vs_zcdp, rule=EXACT)),
    # ---- Section 4: convergence ---------------------------------------------------------------
    claim("assumption-2", "assumption", "L146", "f is convex", "The objective f is convex.",
          Check("midpoint convexity on the instances", N, numerics.check_assumption_2, rule=EXACT)),
    claim("assumptions-3-4", "assumption", "L226, L258, L266", "Assumption 4 is stronger than Assumption 3",
          "Assumption 3: eta_k^(n) -> 0. Assumption 4: ||D^(n+1)||^2 summable; 'stronger than Assumption 3'.",
          Check("sympy limits and series per schedule", S, symbolic.check_assumptions_3_4, rule=EXACT)),
    claim("subgradient-14", "equation", "L167-L172 (14)", "Subgradient of the linearized objective (14)",
          "hat f'(W^(n+1)) = 2 D^(n+1) (x) I_P (W^(n+1) - tW^(n)) + f'(tW^(n)).",
          Check("finite differences along a private run", N, bounds.check_subgradient_14, rule=EXACT,
                runs_algorithm=True, decision_reads=(), decision_argument=SUBGRADIENT_14_ARGUMENT)),
    claim("representation-16", "equation", "L180-L183 (16)", "Network form (16) of the ADMM steps",
          "The steps of Algorithm 1 satisfy both lines of (16) (with alpha the stacked duals).",
          Check("residuals along runs", N, bounds.check_representation_16, rule=EXACT, runs_algorithm=True,
                decision_reads=(), decision_argument=SUBGRADIENT_14_ARGUMENT + " Line 1 of (16) carries it.")),
    claim("representation-17", "equation", "L185-L187 (17)", "Combined form (17)",
          "hat f'(W^(n+1))/rho + 2 Q r^(n+1) + L_+ (W^(n+1) - tW^(n)) = 2 M xi^(n+1).",
          Check("residuals along runs", N, bounds.check_representation_17, rule=EXACT, runs_algorithm=True,
                decision_reads=(), decision_argument=SUBGRADIENT_14_ARGUMENT + " (17) carries it, and its right "
                "side 2 M xi^(n+1) is off by L_+ xi^(n+1) (derived from (16)), nonzero on every run with noise.")),
    claim("lemma-2", "lemma", "L193-L204 (18)", "Per-iteration bound (18)",
          "For any r and any n, inequality (18) holds along the iterates.",
          Check("both sides of (18) along runs, r = 0 and random r", N, bounds.check_lemma_2, rule=EXACT,
                runs_algorithm=True, long_runs=True)),
    claim("theorem-2", "theorem", "L208-L220 (19)", "Expected error bound (19)",
          "E[f(hW^(T)) - f(W*)] is bounded by the right-hand side of (19).",
          Check("Monte-Carlo LHS vs RHS with 95% CIs", ST, bounds.check_theorem_2, rule=interval_below(0.0),
                runs_algorithm=True, long_runs=True)),
    claim("identity-21", "equation", "L243-L246 (21)", "Identity and bound (21)",
          "-2<Qa, Qb> = -||Qa||^2 - ||Qb||^2 + ||Q(b-a)||^2 <= -||Qa||^2 - ||Qb||^2 + ||Q||^2 ||b-a||^2.",
          Check("sympy", S, symbolic.check_identity_21, rule=EXACT)),
    claim("theorem-3", "theorem", "L222-L254", "Convergence to the exact solution",
          "Under Assumptions 2 and 3, zCDP-NFL (7)-(9) converges to the exact solution.",
          Check("Monte-Carlo long runs", ST, numerics.check_theorem_3,
                rule=converges(numerics.CONVERGENCE_THRESHOLD), runs_algorithm=True, long_runs=True)),
    claim("theorem-4", "theorem", "L256-L278", "O(1/n) rate",
          "Under Assumptions 2 and 4, zCDP-NFL converges with a rate of O(1/n) iterations.",
          Check("slope of log error vs log T", ST, numerics.check_theorem_4,
                rule=interval_below(numerics.RATE_THRESHOLD), runs_algorithm=True, long_runs=True)),
    claim("tradeoff-22", "equation", "L280-L286 (22)", "Noise term of the trade-off bound",
          "Under Assumption 4, the noise enters (19) as (alpha_xi/T) sum_k sigma_k^2(0)/(1 - tau).",
          Check("sympy noise series", S, symbolic.check_noise_term_22, rule=EXACT)),
    claim("tradeoff-23-24", "equation", "L288-L296 (23)-(24)", "Trade-off in terms of the privacy budget",
          "(23) follows from (22) and Theorem I; (24) is (23) with varphi_k^(1) = varphi^(1).",
          Check("sympy substitution", S, symbolic.check_tradeoff_23_24, rule=EXACT)),
    # ---- Section 5: experiments ---------------------------------------------------------------
    claim("experiments-within-hypotheses", "implicit", "L298-L304", "The experiments satisfy the theorems' hypotheses",
          "Implicit in using Sec. 5 to illustrate Theorems I-IV: the instances and parameters satisfy Assumptions 1-4.",
          Check("assumptions on the experiments' instances and parameters", N, numerics.check_experiment_hypotheses,
                rule=EXACT)),
    claim("centralized-solution", "experiment", "L304", "The reference w_c is the exact centralized solution",
          "The normalized error is measured against w_c, the centralized solution (CVX).",
          Check("CVXPY with optimality certificate", G, numerics.check_ground_truth_certified, rule=EXACT)),
    claim("figure-1-admm-beats-subgradient", "experiment", "L308", "Elastic net: ADMM beats subgradient",
          "zCDP-NFL significantly outperforms zCDP-grad-NFL.",
          Check("paired Wilcoxon at n = T", ST, outperforms("figure-1", "zcdp-nfl", "zcdp-grad-nfl", GRAD_STEP),
                rule=DOMINANCE, needs=("figure-1",))),
    claim("figure-1-zcdp-beats-eps-delta", "experiment", "L308-L310", "Elastic net: zCDP beats (eps,delta)-DP",
          "zCDP gives better accuracy than (eps,delta)-DP at the same budget, for various total privacy losses.",
          Check("paired Wilcoxon at n = T", ST, outperforms("figure-1", "zcdp-nfl", "eps-delta-nfl", EPS_DELTA_RULE),
                rule=DOMINANCE, needs=("figure-1",))),
    claim("figure-2-admm-beats-subgradient", "experiment", "L313-L315", "LAD: ADMM beats subgradient",
          "zCDP-NFL significantly outperforms zCDP-grad-NFL, which cannot reach high accuracy at a similar "
          "initial speed.",
          Check("paired Wilcoxon at n = T", ST, outperforms("figure-2", "zcdp-nfl", "zcdp-grad-nfl", GRAD_STEP),
                rule=DOMINANCE, needs=("figure-2",))),
    claim("figure-2-zcdp-beats-eps-delta", "experiment", "L315", "LAD: zCDP beats (eps,delta)-DP",
          "The use of zCDP allows for better accuracy than (eps,delta)-DP.",
          Check("paired Wilcoxon at n = T", ST, outperforms("figure-2", "zcdp-nfl", "eps-delta-nfl", EPS_DELTA_RULE),
                rule=DOMINANCE, needs=("figure-2",))),
    claim("figure-3-beats-p-admm", "experiment", "L319-L321", "Ridge: zCDP-NFL slightly beats P-ADMM at all eps",
          "zCDP-NFL slightly outperforms P-ADMM on the smooth ridge problem, for all total privacy losses.",
          Check("paired Wilcoxon at n = T", ST, outperforms("figure-3", "zcdp-nfl", "p-admm",
                                                           caveat="'slightly' is not quantified by the paper",
                                                           surrogate=P_ADMM_SURROGATE),
                rule=DOMINANCE, needs=("figure-3",))),
    claim("prior-work-rates", "headline", "L30", "Rates of prior work",
          "Subgradient methods converge at O(1/sqrt(n)) [Nedic2009]; ADMM-based methods at O(1/n) [Zhuhan].",
          not_run="a statement about other papers' results; nothing in this paper's artefacts can check it"),
)

PAPER = Paper("zcdp-nfl", "Private Networked Federated Learning for Nonsmooth Objectives (zCDP-NFL)",
              "seeds/004_15ab36c789ea4e62.txt", CLAIMS)
