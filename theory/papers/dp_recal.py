"""Differentially Private Decentralized Optimization with Relay Communication (DP-RECAL), seeds/001
(v1, measure PLF, authoritative) and seeds/000 (v0, measure LCI).

The claims in the order of the paper, each wired to its checks. Seed lines: v1:Lnnn of
seeds/001_221ba79ca483a42d.txt, v0:Lnnn of seeds/000_5b038e032f1eca1c.txt.
"""

from __future__ import annotations

from theory.claims import Check, Claim, Method, Paper
from theory.papers import dp_recal_figures as figures
from theory.papers import dp_recal_privacy as privacy
from theory.papers import dp_recal_v0 as v0

S, N, ST, G, A = Method.SYMBOLIC, Method.NUMERICAL, Method.STATISTICAL, Method.GROUND_TRUTH, Method.AUDIT


def claim(id_: str, kind: str, line: str, title: str, statement: str, *checks: Check, not_run: str = "") -> Claim:
    return Claim(f"dp-recal/{id_}", kind, line, title, statement, tuple(checks), not_run)


PRIVACY = (
    claim("proposition-1", "proposition", "v1:L81-L87", "Sequential composition keeps delta",
          "If M_k are (eps_k, delta)-DP, their composition is (sum_k eps_k, delta)-DP.",
          Check("exact counterexample (sympy)", S, privacy.check_proposition_1)),
    claim("proposition-2", "proposition", "v1:L89-L95", "Parallel composition",
          "On disjoint parts D_h, (M_1(D_1), ..., M_m(D_m)) is (max_i eps_i, delta)-DP.",
          Check("exact privacy loss of Laplace mechanisms", N, privacy.check_proposition_2)),
    claim("proposition-3", "proposition", "v1:L412", "zCDP to (eps, delta)-DP",
          "rho-zCDP implies (rho + 2 sqrt(rho ln(1/delta)), delta)-DP.",
          Check("against the accounting library and the optimal conversion", S, privacy.check_proposition_3)),
    claim("theorem-1", "theorem", "v1:L117-L127", "Overall budget = sum over the PLF",
          "Overall privacy budget of ALG = sum_{j=1}^{Theta_K} eps_j, Theta_K the PLF.",
          Check("identity on the activation counts of real walks", N, privacy.check_theorem_1)),
    claim("lemma-5", "lemma", "v1:L424-L436", "Sensitivity Delta = 4 alpha beta c",
          "Under Assumption 3, Delta = max ||u_D^{k+1} - u_D'^{k+1}|| = 4 alpha beta c, alpha = max_i alpha_i.",
          Check("sympy re-derivation from (7a)-(7e)", S, privacy.check_lemma_5_symbolic),
          Check("sensitivity probe on the implementation", A, privacy.probe_lemma_5)),
    claim("lemma-6", "lemma", "v1:L440-L454", "Per-activation zCDP",
          "The agent activated at iteration k is rho_tau-zCDP with rho_tau = 8 alpha^2 beta^2 c^2 / sigma_tau^2.",
          Check("sympy Gaussian Renyi divergence", S, privacy.check_lemma_6_symbolic)),
    claim("theorem-4", "theorem", "v1:L458-L468", "Overall (eps, delta)-DP",
          "Algorithm 1 is (eps, delta)-DP with eps = rho_1 (R^xi - 1)/(R - 1) + 2 sqrt(rho_1 (R^xi - 1) ln(1/delta)/(R - 1)).",
          Check("sympy composition of the schedule", S, privacy.check_theorem_4_symbolic),
          Check("calibration round trip used by the experiments", N, privacy.check_accounting_of_experiments)),
    claim("remark-2", "remark", "v1:L470-L472", "Privacy cost grows exponentially with the PLF",
          "When the PLF increases, the overall privacy cost exhibits exponential growth.",
          Check("growth rate of Theorem 4's eps", N, privacy.check_remark_2)),
    claim("audit-privacy", "theorem", "v1:L59-L65, L264, L458-L474",
          "DP-RECAL is (eps, delta)-DP against the Sec. II-B adversary",
          "The adversary 'accesses and stores the information passed between agents'; x^{k+1} needs no protection "
          "because the noise of u~ is coupled into it (v1:L264); DP-RECAL is (eps, delta)-DP with Theorem 4's eps "
          "and 'can be considered as privacy-preserving' (v1:L474).",
          Check("noisy u~ releases only (what Lemmas 5-6 account for), r = 0", A, privacy.audit_channel("u", 0.0, 0.0)),
          Check("everything passed (u~ and x), r = 0 (the '-' rows of Tables IV-V)", A, privacy.audit_channel("u+x", 0.0, 0.0)),
          Check("y reconstructed from the un-noised x, r = 0", A, privacy.audit_channel("x-reconstruction", 0.0, 0.0)),
          Check("everything passed, the printed r = 1/2||x||^2 + 1/2||x||_1", A, privacy.audit_channel("u+x", 0.5, 0.5))),
)

EXPERIMENTS = (
    claim("figure-2-budget-ordering", "experiment", "v1:L566-L575", "Fig. 2: larger eps converges faster (linear)",
          "DP-RECAL achieves faster convergence with a larger privacy budget eps.",
          Check("paired Wilcoxon on final RE, Holm over datasets", ST, figures.larger_budget_converges_faster("figure-2"))),
    claim("figure-2-near-nonprivate", "experiment", "v1:L570", "Fig. 2: large eps is nearly non-private (linear)",
          "When the privacy budget is large enough, the model is nearly as good as the non-private one.",
          Check("final RE and accuracy vs RECAL", N, figures.nearly_nonprivate("figure-2"))),
    claim("figure-5-budget-ordering", "experiment", "v1:L954, L967", "Fig. 5: larger eps converges faster (logistic)",
          "DP-RECAL achieves faster convergence with a larger privacy budget eps (logistic regression).",
          Check("paired Wilcoxon on final RE, Holm over datasets", ST, figures.larger_budget_converges_faster("figure-5"))),
    claim("figure-5-near-nonprivate", "experiment", "v1:L954", "Fig. 5: large eps is nearly non-private (logistic)",
          "When the privacy budget is large enough, the model is nearly as good as the non-private one.",
          Check("final RE and accuracy vs RECAL", N, figures.nearly_nonprivate("figure-5"))),
    claim("experiment-objective-informative", "implicit", "v1:L554-L572, L944-L950",
          "The printed objective gives an informative classifier",
          "Implicit in reporting convergence and classification accuracy (Figs. 2-3, 5-6): the minimizer of the printed "
          "objective (+ 1/2||x||^2 + 1/2||x||_1) is a non-trivial classifier.",
          Check("certified x* of the linear objective per dataset", G, figures.minimizer_is_trivial("figure-2")),
          Check("certified x* of the logistic objective per dataset", G, figures.minimizer_is_trivial("figure-5"))),
)

V0 = (
    claim("v0-lemma-4", "lemma", "v0:L382-L403", "v0: sensitivity Delta = 4 alpha beta L",
          "(v0) Under Assumption 1 (L_i-smooth f_i), Delta = 4 alpha beta L, L = max_i L_i.",
          Check("sensitivity probe with label-replacing neighbours", A, v0.check_v0_lemma_4)),
    claim("v0-lemma-5-theorem-3", "theorem", "v0 Lemma 5, Theorem 3", "v0: zCDP and overall budget with L",
          "(v0) rho_tau = 8 alpha^2 beta^2 L^2 / sigma_tau^2, and Theorem 3 = v1 Theorem 4 with L in place of c.",
          Check("inherits v0 Lemma 4's sensitivity (probe)", A, v0.check_v0_lemma_4)),
)

CLAIMS = PRIVACY + EXPERIMENTS + V0

PAPER = Paper("dp-recal", "Differentially Private Decentralized Optimization with Relay Communication (DP-RECAL)",
              "seeds/001_221ba79ca483a42d.txt (v1); seeds/000_5b038e032f1eca1c.txt (v0)", CLAIMS)
