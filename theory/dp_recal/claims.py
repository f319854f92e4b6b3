"""Differentially Private Decentralized Optimization with Relay Communication (DP-RECAL), seeds/001
(v1, measure PLF, authoritative) and seeds/000 (v0, measure LCI).

The claims in the order of the paper, each wired to its checks. Seed lines: v1:Lnnn of
seeds/001_221ba79ca483a42d.txt, v0:Lnnn of seeds/000_5b038e032f1eca1c.txt.
"""

from __future__ import annotations

from dpverify.theory.claims import FINDING, Check, Claim, Method, Paper
from dpverify.theory.dp_recal import (
    activation,
    attacks,
    complexity,
    convergence,
    figures,
    privacy,
    tables,
    v0,
)
from dpverify.theory.rules import (
    audit_lower_bounds,
    converges,
    counterexample,
    exact,
    fits_identity,
    interval_below,
    paired_dominance,
    proof,
    reported,
    separated_below,
    within_tolerance,
    worst_case_equality,
)

S, N, ST, G, A = Method.SYMBOLIC, Method.NUMERICAL, Method.STATISTICAL, Method.GROUND_TRUTH, Method.AUDIT
EXACT = exact()
V1 = (tables.DATASETS,)   # a v1 figure or table check runs on any of the paper's datasets its experiment requests
V0 = (("covtype", "mnist-v0"),)   # the same for the v0 experiments (v0:L518)
AT_MOST = within_tolerance(0.0, relative=False)    # a measured value must not pass the criterion (`excess` <= 0)
DOMINANCE = paired_dominance()                     # an ordering, one-sided paired tests, Holm
# why the x* certificates decide the same at every value of the experiments' parameters they read
MINIMIZER_ARGUMENT = ("x* minimizes the printed objective (loss, ridge and l1 weights as printed) on the dataset split "
                      "over the agents; the free values the check reads (clipping, noise decay, budgets, PLF) shape "
                      "only the private runs, not the objective.")
AUDIT = audit_lower_bounds()
WORST_CASE = worst_case_equality()     # a printed sensitivity: one rule in every paper
WALK_LAW = fits_identity(activation.WALK_MARGIN, level=activation.WALK_LEVEL)   # the walk's exact laws vs simulated walks
RESIDUAL = within_tolerance(convergence.RELATIVE_TOLERANCE)                  # an identity up to float64 slack
ABSOLUTE_RESIDUAL = within_tolerance(convergence.RELATIVE_TOLERANCE, relative=False)
EXPONENT = interval_below(complexity.EXPONENT_MARGIN)   # CI of the growth exponent minus the printed one
# the wall-clock time of our own numpy code (baselines batched, the relay sequential) says nothing about the paper's
# implementations or hardware: measured and shown, never a witness either way
OWN_TIMING = reported("a CPU time measured on our implementations and this machine cannot refute or confirm a "
                      "statement about the paper's implementations (Matlab, i5-12500H)")
# an R-linear rate bounds the error: a slope CI at or above 0 refutes it, a fit that is not log-linear cannot confirm it
RATE = interval_below(0.0, level=1 - convergence.CONFIDENCE, min_r_squared=convergence.RATE_MIN_R_SQUARED)


def claim(id_: str, kind: str, line: str, title: str, statement: str, *checks: Check, not_run: str = "") -> Claim:
    return Claim(f"dp-recal/{id_}", kind, line, title, statement, tuple(checks), not_run)


PRIVACY = (
    claim("proposition-1", "proposition", "v1:L81-L87", "Sequential composition keeps delta",
          "If M_k are (eps_k, delta)-DP, their composition is (sum_k eps_k, delta)-DP.",
          Check("exact counterexample (sympy)", S, privacy.check_proposition_1, rule=EXACT)),
    claim("proposition-2", "proposition", "v1:L89-L95", "Parallel composition",
          "On disjoint parts D_h, (M_1(D_1), ..., M_m(D_m)) is (max_i eps_i, delta)-DP.",
          Check("exact privacy loss of Laplace mechanisms", N, privacy.check_proposition_2, rule=EXACT)),
    claim("proposition-3", "proposition", "v1:L412", "zCDP to (eps, delta)-DP",
          "rho-zCDP implies (rho + 2 sqrt(rho ln(1/delta)), delta)-DP.",
          Check("against the accounting library and the optimal conversion", S, privacy.check_proposition_3, rule=EXACT)),
    claim("theorem-1", "theorem", "v1:L117-L127", "Overall budget = sum over the PLF",
          "Overall privacy budget of ALG = sum_{j=1}^{Theta_K} eps_j, Theta_K the PLF.",
          Check("identity on the activation counts of real walks", N, privacy.check_theorem_1, rule=EXACT)),
    claim("lemma-5", "lemma", "v1:L424-L436", "Sensitivity Delta = 4 alpha beta c",
          "Under Assumption 3, Delta = max ||u_D^{k+1} - u_D'^{k+1}|| = 4 alpha beta c, alpha = max_i alpha_i.",
          Check("sympy re-derivation from (7a)-(7e)", S, privacy.check_lemma_5_symbolic, rule=WORST_CASE),
          Check("sensitivity probe on the implementation", A, privacy.probe_lemma_5, rule=counterexample())),
    claim("lemma-5-as-bound", FINDING, "v1:L424-L436", "Lemma 5's Delta as an upper bound, and how loose",
          "Not claimed by the paper (it prints an equality): 4 alpha beta c bounds the sensitivity, by a factor 2.",
          Check("sympy re-derivation from (7a)-(7e)", S, privacy.check_lemma_5_bound, rule=EXACT)),
    claim("lemma-6", "lemma", "v1:L440-L454", "Per-activation zCDP",
          "The agent activated at iteration k is rho_tau-zCDP with rho_tau = 8 alpha^2 beta^2 c^2 / sigma_tau^2.",
          Check("sympy Gaussian Renyi divergence", S, privacy.check_lemma_6_symbolic, rule=EXACT)),
    claim("theorem-4", "theorem", "v1:L458-L468", "Overall (eps, delta)-DP",
          "Algorithm 1 is (eps, delta)-DP with eps = rho_1 (R^xi - 1)/(R - 1) + 2 sqrt(rho_1 (R^xi - 1) ln(1/delta)/(R - 1)).",
          Check("sympy composition of the schedule", S, privacy.check_theorem_4_symbolic, rule=EXACT),
          Check("calibration round trip used by the experiments", N, privacy.check_accounting_of_experiments,
                rule=EXACT),
          # worst evidence wins: the audit of what the Sec. II-B adversary reads bears on this theorem too
          Check("audit: everything passed (u~ and x), r = 0, the Sec. II-B adversary", A,
                privacy.audit_channel("u+x", 0.0, 0.0), rule=AUDIT)),
    claim("remark-2", "remark", "v1:L470-L472", "Privacy cost grows exponentially with the PLF",
          "When the PLF increases, the overall privacy cost exhibits exponential growth.",
          Check("growth rate of Theorem 4's eps", N, privacy.check_remark_2, rule=EXACT)),
    claim("audit-privacy", "theorem", "v1:L59-L65, L264, L458-L474",
          "DP-RECAL is (eps, delta)-DP against the Sec. II-B adversary",
          "The adversary 'accesses and stores the information passed between agents'; x^{k+1} needs no protection "
          "because the noise of u~ is coupled into it (v1:L264); DP-RECAL is (eps, delta)-DP with Theorem 4's eps "
          "and 'can be considered as privacy-preserving' (v1:L474).",
          Check("noisy u~ releases only (what Lemmas 5-6 account for), r = 0", A, privacy.audit_channel("u", 0.0, 0.0), rule=AUDIT),
          Check("everything passed (u~ and x), r = 0 (the '-' rows of Tables IV-V)", A, privacy.audit_channel("u+x", 0.0, 0.0), rule=AUDIT),
          Check("y reconstructed from the un-noised x, r = 0", A, privacy.audit_channel("x-reconstruction", 0.0, 0.0),
                rule=AUDIT),
          Check("everything passed, the printed r = 1/2||x||^2 + 1/2||x||_1", A, privacy.audit_channel("u+x", 0.5, 0.5), rule=AUDIT)),
)

CONVERGENCE = (
    claim("lemma-1", "lemma", "v1:L296-L300, L707-L729", "Activation probabilities g",
          "Under Assumption 2, g = (D^-1 L^2 D^-1 + 11^T)^-1 1 and g_i > 0, g_i the probability of agent i being activated.",
          Check("formula vs stationary law (exact)", S, activation.check_lemma1_formula, rule=EXACT),
          Check("long-run frequencies of the relay walk", ST, activation.check_lemma1_long_run_frequencies, rule=WALK_LAW),
          Check("P(i_k = i) at each iteration, i_1 uniform or stationary", ST,
                activation.check_activation_probability_each_iteration,
                rule=WALK_LAW)),
    claim("definition-2", "definition", "v1:L288-L292", "Activation probability in each iteration",
          "The probability of agent i being activated in each iteration is g_i = P(eta_i^k = 1).",
          Check("P(i_k = i) at each iteration, i_1 uniform or stationary", ST,
                activation.check_activation_probability_each_iteration,
                rule=WALK_LAW)),
    claim("lemma-2", "lemma", "v1:L310", "E^k idempotent, E_k[E^{k+1}] = Pi",
          "E^k is idempotent, (E^k)^t = E^k, and E_k[E^{k+1}] = Pi.",
          Check("idempotence", N, activation.check_lemma2_idempotent, rule=EXACT),
          Check("conditional activation law of the walk", ST, activation.check_lemma2_conditional_expectation,
                rule=WALK_LAW)),
    claim("stepsize-condition", "condition", "v1:L812", "alpha_i in (0, 2/(L_i+1)) makes S-hat positive definite",
          "The stepsize condition alpha_i in (0, 2/(L_i+1)) ensures the positive definiteness of S-hat.",
          Check("eigenvalues on random instances up to the endpoint", N, convergence.check_stepsize_condition_numeric,
                rule=EXACT),
          Check("Sylvester's criterion, n = 2", S, convergence.check_stepsize_condition_symbolic, rule=proof())),
    claim("scheme-5-matches-6", "equation", "v1:L159-L179 (5), (6)", "(5a)-(5b) is (6a)-(6d)",
          "The operator form (5) with H_1, H_2 is the explicit iteration (6a)-(6d) (H_1's first block read as lambda/beta + Ux - y).",
          Check("one step from random states", N, convergence.check_scheme5_matches_scheme6, rule=RESIDUAL)),
    claim("analysis-model-matches-recal", "implicit", "v1:L270-L318 (9), (10)", "The analysis model (10) is DP-RECAL",
          "Implicit in Lemmas 3-4 and Theorems 2-3: (10a)-(10b) with E^{k+1} selecting the holder is the relay algorithm (7).",
          Check("one step from the same state", N, convergence.check_analysis_model_matches_recal, rule=ABSOLUTE_RESIDUAL)),
    claim("lemma-3", "lemma", "v1:L330-L336 (11)", "One-step inequality (11)",
          "For alpha_i in (0, 2/(L_i+1)), the iterates of (9) satisfy (11) with D^k = [eps^k, 0, 0].",
          Check("(11) along trajectories and near w*, D^k as printed", N, convergence.lemma3_one_step("lambda_broadcast"),
                rule=EXACT)),
    claim("lemma-3-corrected", "corrected", "v1:L330-L336 (11), (9b)", "One-step inequality (11), D^k corrected",
          "Our correction: (11) holds with D^k = [0, eps^k, 0], eps^k in the x block where it enters (9b).",
          Check("(11) along trajectories and near w*, D^k = [0, eps, 0]", N, convergence.lemma3_one_step("x"), rule=EXACT)),
    claim("lemma-4", "lemma", "v1:L348-L354 (12)", "Quasi-Fejer inequality (12)",
          "E||w^{k+1} - w*||^2_Sbar <= ||w^k - w*||^2_Sbar - ||w^k - w-hat^{k+1}||^2_Sbar + M_1 M_2 ||eps^k||.",
          Check("exact conditional expectation with eps = 0", N, convergence.check_lemma4_expected_decrease, rule=EXACT)),
    claim("theorem-2", "theorem", "v1:L356-L362", "Almost-sure convergence",
          "For alpha_i in (0, 2/(L_i+1)), w^k converges a.s. to a saddle point; x^inf solves (1).",
          Check("RECAL to the certified x*", G, convergence.check_theorem2_recal,
                rule=converges(convergence.RECAL_TARGET), runs_algorithm=True),
          Check("DP-RECAL (R > 1) to the certified x*", G, convergence.check_theorem2_dp_recal,
                rule=converges(convergence.DP_TARGET), runs_algorithm=True)),
    claim("theorem-3", "theorem", "v1:L380-L390", "R-linear rate under metric subregularity",
          "If dL is metrically subregular, E_k dist^2(w^{k+1}, W*) <= phi/(phi+1) [dist^2(w^k, W*) + V||eps^k||^2].",
          Check("RECAL: log-error slope with bootstrap CI", ST, convergence.check_theorem3_recal_linear_rate,
                rule=RATE, runs_algorithm=True),
          Check("DP-RECAL: log-error slope", ST, convergence.check_theorem3_dp_linear_rate, rule=RATE,
                runs_algorithm=True),
          Check("the condition (phi/(phi+1))^l R > 1", N, convergence.check_theorem3_noise_condition,
                rule=reported("phi involves constants that exist only in the proof, and the walk has no finite l"))),
    claim("section-6-constants", "equation", "v1:L490-L498", "Constants of the complexity analysis",
          "||Sbar||, ||S-hat||, ||O||, ||C|| have the orders in n stated in Sec. VI.",
          Check("norms over network sizes", N, complexity.check_section6_constants, rule=EXACT)),
    claim("table-1-complete", "table", "v1:L504-L512", "Table I: complexity on complete graphs",
          "RECAL: iterations O(n ln 1/eps), PLF O(ln 1/eps), communications O(n ln 1/eps) on the complete graph.",
          Check("growth exponents in n with bootstrap CI", ST, complexity.complexity_check("complete"), rule=EXPONENT)),
    claim("table-2-ring", "table", "v1:L516-L524", "Table II: complexity on rings",
          "RECAL: iterations O(n ln 1/eps), PLF O(ln 1/eps), communications O(n ln 1/eps) on the ring.",
          Check("growth exponents in n with bootstrap CI", ST, complexity.complexity_check("ring"), rule=EXPONENT)),
    claim("table-3-general", "table", "v1:L532-L540", "Table III: complexity on general graphs",
          "RECAL's complexity orders on general graphs as printed in Table III.",
          Check("growth exponents in n with bootstrap CI", ST, complexity.complexity_check("general"), rule=EXPONENT)),
)

def _table_claims(table: str, number: str, loss: str, line: str) -> tuple[Claim, ...]:
    """The claims of Tables IV / V (v1:L597, L956) and their printed numbers (theory/dp_recal/tables.py)."""
    printed = [cell[1] for row_id, row in tables.PRINTED[table].items() if "/dp-recal/" in row_id
               for cell in row.cells.values()]
    return (
        claim(f"{table}-best-re", "table", line, f"Table {number}: DP-RECAL has the best RE at eps = 12 ({loss})",
              "At the same security level DP-RECAL holds better convergence accuracy than the other algorithms "
              "(each r group: r = l1 rows, r = 0 rows).",
              Check("paired Wilcoxon on final RE vs each row of its r group, Holm", ST, tables.best_relative_error(table),
                    rule=DOMINANCE, needs=(table,), datasets=V1)),
        claim(f"{table}-least-communication", "table", line,
              f"Table {number}: DP-RECAL has the least communication complexity ({loss})",
              "At the same security level DP-RECAL holds less communication complexity compared to other algorithms.",
              Check("messages counted from the runs (one vector over one edge = 1)", N, tables.least_communication(table),
                    rule=separated_below(), needs=(table,), datasets=V1)),
        claim(f"{table}-cpu-time", "table", line, f"Table {number}: DP-RECAL's CPU time is not inferior ({loss})",
              "As far as CPU time is concerned, DP-RECAL doesn't seem to be inferior or even better, especially "
              "compared to those algorithms with decaying stepsizes and internal loops.",
              Check("CPU time per replica vs each row of its r group (pre-registered ratios)", N,
                    tables.cpu_time_not_inferior(table), rule=OWN_TIMING, needs=(table,), datasets=V1)),
        claim(f"{table}-printed-values", "table", line, f"Table {number}: the printed Comm., Time and RE. ({loss})",
              "The printed values; quantitatively: DP-RECAL reaches a relative error at machine precision "
              f"({min(printed):.2g} .. {max(printed):.2g}) at eps = 12 with PLF 300 on every dataset, for r = l1 and r = 0.",
              Check("printed vs ours, every cell (relative differences)", N, tables.printed_numbers(table),
                    rule=AT_MOST, needs=(table,), datasets=V1)),
    )


EXPERIMENTS = (
    claim("figure-2-budget-ordering", "experiment", "v1:L566-L575", "Fig. 2: larger eps converges faster (linear)",
          "DP-RECAL achieves faster convergence with a larger privacy budget eps.",
          Check("paired Wilcoxon on final RE, Holm over datasets", ST, figures.larger_budget_converges_faster("figure-2"),
                rule=DOMINANCE, needs=("figure-2",), datasets=V1)),
    claim("figure-2-near-nonprivate", "experiment", "v1:L570", "Fig. 2: large eps is nearly non-private (linear)",
          "When the privacy budget is large enough, the model is nearly as good as the non-private one.",
          Check("final RE and accuracy vs RECAL", N, figures.nearly_nonprivate("figure-2"), rule=EXACT, needs=("figure-2",), datasets=V1)),
    claim("figure-5-budget-ordering", "experiment", "v1:L954, L967", "Fig. 5: larger eps converges faster (logistic)",
          "DP-RECAL achieves faster convergence with a larger privacy budget eps (logistic regression).",
          Check("paired Wilcoxon on final RE, Holm over datasets", ST, figures.larger_budget_converges_faster("figure-5"),
                rule=DOMINANCE, needs=("figure-5",), datasets=V1)),
    claim("figure-5-near-nonprivate", "experiment", "v1:L954", "Fig. 5: large eps is nearly non-private (logistic)",
          "When the privacy budget is large enough, the model is nearly as good as the non-private one.",
          Check("final RE and accuracy vs RECAL", N, figures.nearly_nonprivate("figure-5"), rule=EXACT, needs=("figure-5",), datasets=V1)),
    claim("figure-3-best", "experiment", "v1:L568-L578", "Fig. 3: DP-RECAL is the most accurate at eps = 12 (linear)",
          "DP-RECAL consistently presents the best convergence accuracy when consuming the same privacy budget.",
          Check("paired Wilcoxon on final RE vs each algorithm, Holm", ST, figures.best_at_same_budget("figure-3"),
                rule=DOMINANCE, needs=("figure-3",), datasets=V1)),
    claim("figure-6-best", "experiment", "v1:L956, L970", "Fig. 6: DP-RECAL is the most accurate at eps = 12 (logistic)",
          "DP-RECAL consistently presents the best convergence accuracy when consuming the same privacy budget.",
          Check("paired Wilcoxon on final RE vs each algorithm, Holm", ST, figures.best_at_same_budget("figure-6"),
                rule=DOMINANCE, needs=("figure-6",), datasets=V1)),
    *(c for table in (("table-4", "IV", "linear", "v1:L580-L597"), ("table-5", "V", "logistic", "v1:L956, L972-L986"))
      for c in _table_claims(*table)),
    claim("experiment-objective-informative", "implicit", "v1:L554-L572, L944-L950",
          "The printed objective gives an informative classifier",
          "Implicit in reporting convergence and classification accuracy (Figs. 2-3, 5-6): the minimizer of the printed "
          "objective (+ 1/2||x||^2 + 1/2||x||_1) is a non-trivial classifier.",
          Check("certified x* of the linear objective per dataset", G, figures.minimizer_is_trivial("figure-2"),
                rule=EXACT, needs=("figure-2",), datasets=V1, decision_reads=(), decision_argument=MINIMIZER_ARGUMENT),
          Check("certified x* of the logistic objective per dataset", G, figures.minimizer_is_trivial("figure-5"),
                rule=EXACT, needs=("figure-5",), datasets=V1, decision_reads=(),
                decision_argument=MINIMIZER_ARGUMENT)),
)

IMAGE_DATASETS = ("mnist", "fashion-mnist", "cifar10")
ATTACK_FIGURES = (("figure-4", "v1:L600-L615", "DLG [3]"), ("figure-7", "v1:L960, L995", "Inverting Gradients [19]"),
                  ("figure-8", "v1:L960, L1004", "GradInversion [20]"))


def _attack_claims(figure: str, line: str, attack: str) -> tuple[Claim, Claim]:
    number = figure.split("-")[1]
    return (
        claim(f"{figure}-recal-reconstructs", "experiment", line, f"Fig. {number}: {attack} reconstructs RECAL's images",
              "The adversary could effectively reconstruct the original image from a shared model update of the "
              "non-private RECAL (MNIST, Fashion-MNIST, CIFAR-10).",
              *(Check(f"median PSNR of batch-1 reconstructions, {d}", N, attacks.effective_reconstruction(figure, d),
                      rule=AT_MOST, needs=(figure,), datasets=(d,)) for d in IMAGE_DATASETS)),
        claim(f"{figure}-dp-recal-meaningless-noise", "experiment", line,
              f"Fig. {number}: under DP-RECAL {attack} yields meaningless noise",
              "DP-RECAL effectively thwarts the adversary's attempts to infer the original images, resulting in "
              "meaningless noise (MNIST, Fashion-MNIST, CIFAR-10).",
              *(Check(f"own vs other records, one-sided Wilcoxon, {d}", ST, attacks.meaningless_noise(figure, d),
                      rule=DOMINANCE, needs=(figure,), datasets=(d,)) for d in IMAGE_DATASETS)),
    )


ATTACKS = tuple(c for figure in ATTACK_FIGURES for c in _attack_claims(*figure)) + (
    claim("figure-9-recal-mse-to-zero", "experiment", "v1:L964, L1007", "Fig. 9: DLG's MSE on RECAL converges to zero",
          "On ijcnn1 the attacker accurately infers the data under RECAL: the estimation error converges to zero.",
          Check("median final DLG MSE", N, attacks.mse_converges_to_zero(), rule=AT_MOST, needs=("figure-9",),
                datasets=("ijcnn1",))),
    claim("figure-9-dp-recal-mse-large", "experiment", "v1:L964, L1007", "Fig. 9: DLG's MSE on DP-RECAL stays large",
          "On ijcnn1, under DP-RECAL the estimation error remained consistently large.",
          Check("median MSE trace vs its value at the dummy init", N, attacks.mse_remains_large(), rule=AT_MOST,
                needs=("figure-9",), datasets=("ijcnn1",))),
    claim("x-passing-needs-no-protection", "statement", "v1:L264; v0:L170",
          "x^{k+1} needs no additional protection",
          "Gaussian noise is coupled into the update of x^{k+1} when u^{k+1} is perturbed, so no additional protection "
          "is required for the passing of x^{k+1}.",
          *(Check(f"x-leak inference + {name}, {d}", A, attacks.x_needs_no_protection(f, d),
                  rule=counterexample(), needs=(f,), datasets=(d,))
            for f, name, d in (("figure-4", "DLG", "mnist"), ("figure-4", "DLG", "fashion-mnist"),
                               ("figure-9", "DLG", "ijcnn1")))),
)

V0 = (
    claim("v0-stepsize-condition", "assumption", "v0:L126-L134 (11)", "v0 Assumption 2: (11) is positive definite",
          "(v0) alpha_i in (0, 2/(L_i+1)) guarantees the matrix inequality (11).",
          Check("eigenvalues on random instances", N, convergence.check_v0_stepsize_condition_numeric, rule=EXACT),
          Check("Sylvester's criterion, n = 2", S, convergence.check_v0_stepsize_condition_symbolic, rule=proof())),
    claim("v0-scheme-5-matches-12", "equation", "v0:L112-L122", "v0 (5) is the explicit iteration",
          "(v0) w^{k+1/2} = (H+G)^-1 (H-A-F) w^k, w^{k+1} = w^k + S^-1 (H + A^T)(w^{k+1/2} - w^k) is (6).",
          Check("one step from random states", N, convergence.check_v0_scheme5_matches_scheme6, rule=RESIDUAL)),
    claim("v0-lemma-3", "lemma", "v0:L280-L285 (17)", "v0 quasi-Fejer inequality (17)",
          "(v0) the expected-decrease inequality (17) holds for DP-RECAL.",
          Check("exact conditional expectation with eps = 0", N, convergence.check_v0_lemma3_expected_decrease,
                rule=EXACT)),
    claim("v0-lemma-4", "lemma", "v0:L382-L403", "v0: sensitivity Delta = 4 alpha beta L",
          "(v0) Under Assumption 1 (L_i-smooth f_i), Delta = 4 alpha beta L, L = max_i L_i.",
          Check("sensitivity probe with label-replacing neighbours", A, v0.check_v0_lemma_4, rule=counterexample())),
    claim("v0-lemma-5-theorem-3", "theorem", "v0 Lemma 5, Theorem 3", "v0: zCDP and overall budget with L",
          "(v0) rho_tau = 8 alpha^2 beta^2 L^2 / sigma_tau^2, and Theorem 3 = v1 Theorem 4 with L in place of c.",
          Check("inherits v0 Lemma 4's sensitivity (probe)", A, v0.check_v0_lemma_4, rule=counterexample())),
    claim("v0-figure-5", "experiment", "v0:L543-L548", "v0 Fig. 5: DLG on MNIST, RECAL vs DP-RECAL",
          "(v0) The attacker recovers the original MNIST image clearly from RECAL's shared update; under DP-RECAL it "
          "ends up with a meaningless noise image.",
          Check("RECAL: median PSNR of batch-1 reconstructions (v1 Fig. 4 runs)", N,
                attacks.effective_reconstruction("figure-4", "mnist"), rule=AT_MOST, needs=("figure-4",),
                datasets=("mnist",)),
          Check("DP-RECAL: own vs other records (v1 Fig. 4 runs)", ST, attacks.meaningless_noise("figure-4", "mnist"),
                rule=DOMINANCE, needs=("figure-4",), datasets=("mnist",))),
    claim("v0-figure-2-noise-not-significant", "experiment", "v0:L541",
          "v0 Fig. 2: the effect of noise on convergence accuracy is not significant",
          "(v0) The comparisons between DP-RECAL and RECAL show that the effect of noise on the convergence accuracy "
          "of DP-RECAL is not significant (DP-RECAL is somewhat robust); Fig. 2's budget is not stated (run at eps = 10).",
          Check("final RE within 10x of RECAL's (or both <= 1e-12) and accuracy within 0.01", N,
                v0.on_cases(figures.nearly_nonprivate, "v0-figure-2"), rule=EXACT, needs=v0.needs("v0-figure-2"), datasets=V0)),
    claim("v0-figure-3-budget-ordering", "experiment", "v0:L541", "v0 Fig. 3: larger eps converges faster",
          "(v0) DP-RECAL achieves faster convergence with a larger privacy budget eps (eps in {1, 5, 10}).",
          Check("mean log10 RE along the curve, largest vs smallest eps, Wilcoxon, Holm", ST,
                v0.on_cases(v0.faster_with_larger_budget, "v0-figure-3"), rule=DOMINANCE,
                needs=v0.needs("v0-figure-3"), datasets=V0)),
    claim("v0-figure-3-near-nonprivate", "experiment", "v0:L541", "v0 Fig. 3: large eps is nearly non-private",
          "(v0) When the privacy budget is large enough, the trained model is nearly as good as the non-private one.",
          Check("final RE and accuracy at the largest eps vs RECAL", N, v0.on_cases(figures.nearly_nonprivate, "v0-figure-3"),
                rule=EXACT, needs=v0.needs("v0-figure-3"), datasets=V0)),
    claim("v0-figure-4-best", "experiment", "v0:L520-L522, L541",
          "v0 Fig. 4: DP-RECAL is the most accurate on the circular and complete graphs",
          "(v0) On both the circular and the complete graph DP-RECAL owns the highest accuracy when consuming the same "
          "privacy budget as DP-NIDS, DP-PG-EXTRA, DP-IC-ADMM and DP-RW-ADMM (LCI 600; the common budget is not stated: "
          "eps = 10).",
          Check("paired Wilcoxon on final RE vs each algorithm, Holm over (dataset, graph, algorithm)", ST,
                v0.on_cases(figures.best_at_same_budget, "v0-figure-4"), rule=DOMINANCE,
                needs=v0.needs("v0-figure-4"), datasets=V0)),
    claim("v0-table-5", "table", "v0:L532-L541",
          "v0 Table V: on the ring, higher accuracy and less communication in a similar time",
          "(v0) On the circular graph DP-RECAL holds not only higher accuracy but also less communication complexity in "
          "a similar amount of time compared to the other algorithms (Table V: Time, Comm., Acc.).",
          Check("accuracy: paired Wilcoxon on final RE vs each algorithm, Holm", ST,
                v0.on_cases(figures.best_at_same_budget, "v0-table-5"), rule=DOMINANCE, needs=v0.needs("v0-table-5"), datasets=V0),
          Check("communication: mean messages below every other algorithm's", N,
                v0.on_cases(v0.less_communication, "v0-table-5", note_minimizer=False), rule=EXACT,
                needs=v0.needs("v0-table-5"), datasets=V0),
          Check(f"time: CPU time per run <= {v0.TIME_FACTOR:g} x the others' median", N,
                v0.on_cases(v0.similar_time, "v0-table-5", note_minimizer=False), rule=OWN_TIMING,
                needs=v0.needs("v0-table-5"), datasets=V0)),
    claim("v0-objective-informative", "implicit", "v0:L512-L522",
          "v0: the Lasso objective gives an informative classifier",
          "Implicit in reporting relative errors and 'accuracy' on covtype and mnist: the minimizer of the printed "
          "objective (+ 1/2||x||^2 + 1/2||x||_1) is not trivial.",
          Check("certified x* per dataset (v0 Fig. 4 runs)", G,
                v0.on_cases(figures.minimizer_is_trivial, "v0-figure-4", note_minimizer=False), rule=EXACT,
                needs=v0.needs("v0-figure-4"), datasets=V0, decision_reads=(), decision_argument=MINIMIZER_ARGUMENT)),
)

CLAIMS = PRIVACY + CONVERGENCE + EXPERIMENTS + ATTACKS + V0

PAPER = Paper("dp-recal", "Differentially Private Decentralized Optimization with Relay Communication (DP-RECAL)",
              "seeds/001_221ba79ca483a42d.txt (v1); seeds/000_5b038e032f1eca1c.txt (v0)", CLAIMS)
