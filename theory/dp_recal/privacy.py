"""Privacy claims of DP-RECAL (seeds/001 Sec. II, V; v0 seeds/000 Sec. V): symbolic checks,
accounting, sensitivity probes and audits of what the Sec. II-B adversary reads on the channel.
Each check measures; the rule declared in claims.py decides (exact for the exact computations and the
deterministic probe, counterexample for the Lemma 5 re-derivation, audit_lower_bounds for the audits).

Line numbers: v1 = seeds/001_221ba79ca483a42d.txt, v0 = seeds/000_5b038e032f1eca1c.txt.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import networkx as nx
import numpy as np
import sympy as sp

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.noise import PrivacyLedger, gaussian_mechanism
from dpverify.algorithms.core.privacy import zcdp_from_dp, zcdp_to_dp, zcdp_to_dp_tight
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.algorithm import (
    RecalParams,
    RelayNoise,
    geometric_total,
    lemma5_sensitivity,
    paper_beta,
    run_recal,
    sigma1_for_budget,
    theorem4_epsilon,
)
from dpverify.algorithms.dp_recal.composite import CompositeProblem
from dpverify.theory.audit import accounting
from dpverify.theory.audit.auditor import PrivacyClaim, audit, sensitivity_probe
from dpverify.theory.claims import Measurement, holds
from dpverify.theory.execution import CheckContext, task_seed_sequence

# ----- audit instance (defaults; the paper audits nothing, so every value is the harness's) -----
AUDIT_EPSILON, AUDIT_DELTA = 1.0, 1e-3   # the smallest budget of Figs. 2/5 (v1:L566)
AUDIT_DECAY = 1.05                       # default: R (spec §6 default)
AUDIT_PLF = 3                            # default: activations of the audited agent (short so the audit is fast; plausible 2-10)
AUDIT_CLIP = 1.0                         # default: c = G = 1, per-sample clipping (spec §6)
AUDIT_SAMPLES = {"quick": 20_000, "paper": 200_000}
TARGET = 0                               # default: the audited agent; its record 0 is replaced


def _rng(context: CheckContext, key: str) -> np.random.Generator:
    return np.random.default_rng(task_seed_sequence(context.root_seed, f"dp-recal/privacy/{key}"))


# ----- Section II: DP facts the analysis uses -------------------------------------------------
def check_proposition_1(context: CheckContext) -> Measurement:
    """Prop. 1 (v1:L81-L87) prints sequential composition as (sum eps_k, delta)-DP with the SAME delta.
    Exact counterexample: M_k(D) = 1 with probability delta if the record is in D, else 0; each M_k is
    (0, delta)-DP, but K independent copies output a 1 with probability 1-(1-delta)^K on D and 0 on D'."""
    delta, K = sp.Rational(1, 1000), 10
    reveal = 1 - (1 - delta) ** K  # P[some M_k outputs 1 | D] - e^0 P[... | D'] = required delta'
    ratio = float(reveal / delta)
    return holds(not reveal > delta,
        f"As printed (same delta after composition) the proposition is false: K={K} mechanisms, each (0, 1e-3)-DP, "
        f"compose to no better than (0, {float(reveal):.6f})-DP, {ratio:.2f} x the printed delta (exact, sympy). "
        "Basic composition gives (sum eps_k, sum delta_k). DP-RECAL's Theorem 4 composes zCDP instead, which is "
        "unaffected; Theorem 1's proof uses this proposition with eps only.",
        delta=float(delta), K=K, composed_delta_lower_bound=float(reveal))


def check_proposition_2(context: CheckContext) -> Measurement:
    """Prop. 2 (parallel composition, v1:L89-L95): with disjoint parts, a record changes one part only,
    so the privacy loss of the joint output is that of one mechanism. Exact check on Laplace mechanisms
    (log-likelihood ratio of the joint output under neighbouring datasets, maximized over outputs)."""
    epsilons = np.array([0.3, 1.2, 0.7])
    outputs = np.linspace(-20, 20, 4001)
    worst = 0.0
    for changed, eps in enumerate(epsilons):
        # only part `changed` shifts by its sensitivity 1; the others' densities cancel in the ratio
        loss = np.abs(np.abs(outputs - 1.0) - np.abs(outputs)) * eps
        worst = max(worst, float(loss.max()))
    return holds(worst <= epsilons.max() + 1e-12, f"Max privacy loss of the joint output of 3 Laplace mechanisms on disjoint parts: {worst:.6g} "
                             f"= max_i eps_i = {epsilons.max():g} (exact log-likelihood ratios).",
                 max_loss=worst, epsilons=epsilons.tolist())


def check_proposition_3(context: CheckContext) -> Measurement:
    """Prop. 3 (v1:L412): rho-zCDP => (rho + 2 sqrt(rho ln 1/delta), delta)-DP (Bun-Steinke 2016 Prop. 1.3).
    Compared with dpverify.algorithms.core.privacy (checked against dp-accounting) and the optimal conversion."""
    rho, delta = sp.symbols("rho delta", positive=True)
    printed = rho + 2 * sp.sqrt(rho * sp.log(1 / delta))
    grid = [(r, d) for r in (1e-3, 0.05, 1.0, 8.0) for d in (1e-5, 1e-3, 0.1)]
    printed_values = np.array([float(printed.subs({rho: r, delta: d})) for r, d in grid])
    library = np.array([zcdp_to_dp(r, d) for r, d in grid], dtype=float)
    tight = np.array([zcdp_to_dp_tight(r, d) for r, d in grid], dtype=float)
    same = np.allclose(printed_values, library, rtol=1e-12)
    valid = bool(np.all(printed_values >= tight - 1e-9))
    return holds(same and valid, f"Printed conversion equals Bun-Steinke Prop. 1.3 on {len(grid)} (rho, delta) points: {same}; "
                             f"never below the optimal conversion (valid upper bound): {valid}; it is loose by up to "
                             f"{float(np.max(printed_values[tight > 0] / tight[tight > 0])):.2f}x where the optimal eps > 0.",
                 printed=printed_values.tolist(), optimal=tight.tolist())


# ----- Section V: sensitivity, per-activation zCDP, overall budget ------------------------------
def lemma_5_difference() -> tuple[sp.Expr, bool]:
    """Lemma 5 (v1:L424-L436) re-derived with sympy from (7a)-(7e) for one activation from a common state:
    u_D - u_D' = lam_D - lam_D' = -beta (y_D - y_D') = alpha beta (g_D - g_D') (x+ does not depend on the data).
    Returns the difference and whether it is alpha beta (g - g')."""
    alpha, beta, lam, x, y, u, g = sp.symbols("alpha beta lambda x y u g", real=True)
    g_prime, x_new = sp.symbols("g_prime x_new", real=True)

    def u_next(gradient):
        lam_half = lam + beta * (x - y)                                   # (7a)
        y_new = y - alpha * (gradient - lam_half)                         # (7c)
        lam_new = lam_half + beta * ((x_new - x) - (y_new - y))           # (7d); x_new is data-free (7b)
        return u + lam_new - lam                                          # (7e)

    difference = sp.simplify(u_next(g) - u_next(g_prime))
    return difference, sp.simplify(difference - alpha * beta * (g - g_prime)) == 0


LEMMA_5_LOOSENESS = sp.Integer(4) / 2    # printed 4 alpha beta c over the supremum 2 alpha beta c (||g||, ||g'|| <= c)


def check_lemma_5_symbolic(context: CheckContext) -> Measurement:
    """Lemma 5 states Delta = max ||u_D - u_D'|| = 4 alpha beta c, a worst case (rule worst_case_equality): by the
    derivation the supremum under Assumption 3's ||g|| <= c is 2 alpha beta c (g = c e, g' = -c e), never 4 alpha
    beta c. The printed proof writes beta ||-2 y_D + 2 y_D'||: a spurious factor 2."""
    difference, derived = lemma_5_difference()
    return Measurement(
        f"u_D - u_D' = {difference} (sympy), so Delta = sup ||alpha beta (g_D - g_D')|| = 2 alpha beta c (attained at "
        f"g_D = -g_D', ||g|| = c), not 4 alpha beta c as printed (the proof's '-2 y + 2 y' doubles the y difference): "
        f"the printed value holds only as an upper bound, {LEMMA_5_LOOSENESS}x loose (finding lemma-5-as-bound).",
        {"difference": str(difference), "true_sup_over_c": "2*alpha*beta", "printed_over_c": "4*alpha*beta",
         "exceeded": False, "attained": bool(LEMMA_5_LOOSENESS == 1) if derived else None})


def check_lemma_5_bound(context: CheckContext) -> Measurement:
    """The finding beside Lemma 5: its 4 alpha beta c bounds the true sensitivity, so the noise the paper calibrates
    is larger than needed for one release, by the factor LEMMA_5_LOOSENESS."""
    difference, derived = lemma_5_difference()
    return holds(bool(derived and LEMMA_5_LOOSENESS >= 1),
                 f"u_D - u_D' = {difference}: Delta = 2 alpha beta c <= 4 alpha beta c; the printed value bounds the "
                 f"sensitivity, {LEMMA_5_LOOSENESS}x loose, so one release's noise is {LEMMA_5_LOOSENESS}x the needed scale "
                 f"(its rho_tau {LEMMA_5_LOOSENESS ** 2}x the needed one).", looseness=float(LEMMA_5_LOOSENESS))


def check_lemma_6_symbolic(context: CheckContext) -> Measurement:
    """Lemma 6 (v1:L440-L454): Gaussian noise sigma_tau on a query of sensitivity Delta = 4 alpha beta c is
    rho = 8 alpha^2 beta^2 c^2 / sigma^2 -zCDP: the Renyi divergence of N(mu, s^2 I), N(mu', s^2 I) of order
    k is k ||mu - mu'||^2 / (2 s^2) (sympy integral in one dimension), so rho = Delta^2 / (2 sigma^2)."""
    k, s, d, t = sp.symbols("kappa sigma Delta t", positive=True)
    # p^k q^(1-k) = exp(-E/(2 s^2))/(sqrt(2 pi) s) with E = k t^2 + (1-k)(t-d)^2 = (t-(1-k)d)^2 - k(k-1)d^2, and a
    # normal density integrates to 1, so the integral is exp(k(k-1)d^2/(2 s^2)) (completing the square, sympy)
    exponent = k * t**2 + (1 - k) * (t - d) ** 2
    completed = sp.expand(exponent - ((t - (1 - k) * d) ** 2 - k * (k - 1) * d**2)) == 0
    integral = sp.exp(k * (k - 1) * d**2 / (2 * s**2)) if completed else sp.nan
    renyi = sp.simplify(sp.log(integral) / (k - 1))
    rho = sp.simplify(renyi / k)
    a, b, c = sp.symbols("alpha beta c", positive=True)
    printed = 8 * a**2 * b**2 * c**2 / s**2
    ok = sp.simplify(rho.subs(d, 4 * a * b * c) - printed) == 0
    return holds(ok,
        f"D_kappa(N(0,s^2)||N(Delta,s^2)) = {renyi}; rho = {rho}; with Delta = 4 alpha beta c this is {printed}: {ok}. "
        "The lemma is exact GIVEN Lemma 5's Delta (2x loose, see lemma-5), and holds per release conditioned on the "
        "history; what else the adversary reads is audited in audit-privacy.",
        renyi=str(renyi), rho=str(rho))


def check_theorem_4_symbolic(context: CheckContext) -> Measurement:
    """Theorem 4 (v1:L458-L468): sigma_t^2 = R sigma_{t+1}^2 and Lemma 6 give rho_{t+1} = R rho_t, the sum over
    xi activations is rho_1 (R^xi - 1)/(R - 1), and Prop. 3 gives eps."""
    r1, h, delta = sp.symbols("rho_1 h delta", positive=True)
    t, xi = sp.symbols("t xi", integer=True, positive=True)
    R = 1 + h                                     # R > 1
    rho_t = r1 * R ** (t - 1)                     # rho_t = Delta^2/(2 sigma_1^2 R^(1-t)), Lemma 6
    total = sp.summation(rho_t, (t, 1, xi))
    closed = r1 * (R**xi - 1) / (R - 1)
    sums = sp.simplify(total - closed) == 0
    eps = closed + 2 * sp.sqrt(closed * sp.log(1 / delta))
    numeric = float(eps.subs({r1: 0.01, h: sp.Rational(1, 20), xi: 300, delta: sp.Rational(1, 1000)}))
    library = float(theorem4_epsilon(0.01, 1.05, 300, 1e-3))
    ok = sums and np.isclose(numeric, library, rtol=1e-12)
    return holds(ok,
        f"sum_(t=1..xi) rho_1 R^(t-1) = rho_1 (R^xi - 1)/(R - 1) (sympy): {sums}; eps at rho_1 = 0.01, R = 1.05, "
        f"xi = 300, delta = 1e-3: {numeric:.6g} (implementation {library:.6g}). The theorem composes ONLY the "
        "releases of the busiest agent's own activations (Theorem 1); whether that covers everything the adversary "
        "reads is audited in audit-privacy.", eps_example=numeric)


def check_theorem_1(context: CheckContext) -> Measurement:
    """Theorem 1 (v1:L117-L121): overall budget = sum_{j <= PLF} eps_j. Given Props. 1-2 and eps_j >= 0 the
    identity max_i sum_{j <= tau_i} eps_j = sum_{j <= max_i tau_i} eps_j is arithmetic; checked on the
    activation counts of real runs (8-ring), with increasing eps_j (DP-RECAL's rho_t = R^(t-1) rho_1)."""
    rng = _rng(context, "theorem-1")
    setup = AuditSetup.ring(rng)
    run = run_recal(setup.problem, setup.data, setup.network, setup.params, replicas=64, rng=rng, horizon=400,
                    keep_transcript=False, keep_x=False)
    per_agent = geometric_total(setup.rho1, AUDIT_DECAY, run.activations).max(axis=1)
    by_plf = geometric_total(setup.rho1, AUDIT_DECAY, run.plf)
    ledger = run.rho_spent.max(axis=1)
    ok = np.allclose(per_agent, by_plf) and np.allclose(ledger, by_plf, rtol=1e-10)
    return holds(ok,
        f"max_i sum_(j<=tau_i) rho_j = sum_(j<=PLF) rho_j on 64 walks of 400 iterations (PLF {int(run.plf.min())}-"
        f"{int(run.plf.max())}), and equals the run's ledger: {ok}. The identity needs 'an inactive agent leaks "
        "nothing'; DP-RECAL's messages carry every agent's lambda_i (u = sum_j lambda_j) and the un-noised x, so "
        "that premise is audited separately (audit-privacy).", plf_range=[int(run.plf.min()), int(run.plf.max())])


def check_remark_2(context: CheckContext) -> Measurement:
    """Remark 2 (v1:L470-L472): the overall privacy cost grows exponentially with the PLF (for fixed sigma_1, R):
    log eps(xi) becomes linear in xi with slope ln R."""
    xi = np.arange(100, 2001, 100)
    eps = theorem4_epsilon(1e-4, AUDIT_DECAY, xi, AUDIT_DELTA)
    slope = float(np.polyfit(xi[-5:], np.log(eps[-5:]), 1)[0])
    ok = np.isclose(slope, np.log(AUDIT_DECAY), rtol=0.02)
    return holds(ok,
        f"d log eps / d xi over xi in [1600, 2000] = {slope:.5f} vs ln R = {np.log(AUDIT_DECAY):.5f} (R = {AUDIT_DECAY}, "
        "rho_1 = 1e-4): exponential growth. (The remark's other sentences — stepsize influence, using max alpha — "
        "are design statements, not checked.)", slope=slope)


# ----- audits of what the adversary reads --------------------------------------------------------
@dataclass
class AuditSetup:
    """A small instance (defaults, named above): the audited agent 0 holds 4 records; D' replaces record 0
    with a canary whose gradient points the other way (both clipped to c)."""

    problem: CompositeProblem
    data: LocalData
    neighbour: LocalData
    network: Network
    params: RecalParams
    sigma1: float
    rho1: float

    @classmethod
    def build(cls, rng, *, agents: int, lasso: float, ridge: float = 0.5, graph=None) -> "AuditSetup":
        samples, dim = 4, 2
        features = rng.uniform(0, 1, (agents, samples, dim))
        targets = rng.choice([-1.0, 1.0], (agents, samples))
        data = LocalData(features, targets)
        neighbour = data.replace_sample(TARGET, 0, np.array([1.0, 1.0]), -float(targets[TARGET, 0]) * 10)
        problem = CompositeProblem("linear", ridge=ridge, lasso=lasso)
        network = Network.from_networkx(graph if graph is not None else nx.path_graph(agents))
        alpha = 1.0 / (problem.lipschitz_constants(data) + 1.0)        # spec §6 default
        beta = paper_beta(agents)
        sensitivity = lemma5_sensitivity(alpha, beta, AUDIT_CLIP)
        sigma1 = sigma1_for_budget(AUDIT_EPSILON, AUDIT_DELTA, AUDIT_PLF, AUDIT_DECAY, sensitivity)
        params = RecalParams(alpha, beta, RelayNoise(sigma1, AUDIT_DECAY), clip=AUDIT_CLIP, sensitivity_bound=sensitivity)
        return cls(problem, data, neighbour, network, params, sigma1, sensitivity**2 / (2 * sigma1**2))

    @classmethod
    def ring(cls, rng) -> "AuditSetup":
        return cls.build(rng, agents=8, lasso=0.5, graph=nx.cycle_graph(8))

    @cached_property
    def x1(self) -> np.ndarray:
        return np.full(self.data.dim, 0.1)   # public initial point (spec §6: x^1 nonzero, y^1 = x^1)


def transcript_sampler(setup: AuditSetup, channel: str):
    """dataset -> (n, k) observations: the messages of a 2-agent relay (the walk alternates 0, 1, 0, ... so
    the holders are the same in every run) during agent 0's first AUDIT_PLF activations. channel: 'u' (the
    noisy u~ only: what Lemmas 5-6 account for), 'u+x' (everything passed: Sec. II-B)."""
    horizon = 2 * AUDIT_PLF - 1

    def sample(dataset: LocalData, n: int, rng: np.random.Generator) -> np.ndarray:
        run = run_recal(setup.problem, dataset, setup.network, setup.params, replicas=n, rng=rng, horizon=horizon,
                        x1=setup.x1, first_holder=TARGET, keep_x=False)
        parts = [run.u_sent] if channel == "u" else [run.u_sent, run.x_sent]
        return np.concatenate([p.transpose(1, 0, 2).reshape(n, -1) for p in parts], axis=1)
    return sample


def x_channel_statistic(setup: AuditSetup):
    """dataset -> (n,) the adversary's reconstruction of y_0 at agent 0's SECOND activation from the
    un-noised x it reads. With lasso = 0, prox_{nr}(v) = v/(1 + 2 n ridge) is invertible, so (7b) gives
    x^4 (1 + 2 n ridge) = x^3 - u~^3 - beta (x^3 - y_0^3), i.e. y_0^3 = (x^4 (1 + 2 n ridge) - (1 - beta) x^3 + u~^3)/beta
    (with lasso > 0 the same holds on coordinates not thresholded to 0). Its first coordinate is the observation."""
    if setup.problem.lasso != 0:
        raise InvalidParameterError("the x-channel reconstruction inverts the prox, which needs lasso = 0")
    beta = setup.params.beta
    scale = 1.0 + 2.0 * setup.data.num_agents * setup.problem.prox_ridge
    base = transcript_sampler(setup, "u+x")
    q = setup.data.dim

    def sample(dataset: LocalData, n: int, rng: np.random.Generator) -> np.ndarray:
        obs = base(dataset, n, rng)
        u_sent, x_sent = obs[:, : obs.shape[1] // 2].reshape(n, -1, q), obs[:, obs.shape[1] // 2:].reshape(n, -1, q)
        x3, x4, u3 = x_sent[:, 1], x_sent[:, 2], u_sent[:, 1]     # x^3, x^4 (sent at k=2, 3), u~^3 (sent at k=2)
        y = (x4 * scale - (1 - beta) * x3 + u3) / beta
        return y[:, 0]
    return sample


def _claim(setup: AuditSetup) -> PrivacyClaim:
    eps = float(theorem4_epsilon(setup.rho1, AUDIT_DECAY, AUDIT_PLF, AUDIT_DELTA))
    return PrivacyClaim(epsilon=eps, delta=AUDIT_DELTA)


def _run_audit(context: CheckContext, setup: AuditSetup, sampler, channel: str, key: str, score=None) -> Measurement:
    """The audit's measurement for the rule audit_lower_bounds (its eps lower bound against the claimed eps)."""
    samples = context.audit_samples or AUDIT_SAMPLES.get(context.profile, AUDIT_SAMPLES["quick"])
    result = audit(sampler, (setup.data, setup.neighbour), _claim(setup), samples=samples,
                   confidence=context.audit_confidence, rng=_rng(context, f"audit/{key}"), score=score, chunk_size=20_000)
    evidence = result.evidence()
    note = (f" Instance (defaults): 2 agents on a path (the walk alternates, so holders are public and fixed), 4 records "
            f"each, dim 2, linear loss, lasso {setup.problem.lasso:g}, ridge {setup.problem.ridge:g}, c = {AUDIT_CLIP:g} "
            f"(per-sample clipping), alpha = 1/(L+1), R = {AUDIT_DECAY}, sigma_1 = {setup.sigma1:.4g} calibrated for "
            f"(eps, delta) = ({AUDIT_EPSILON:g}, {AUDIT_DELTA:g}) over PLF {AUDIT_PLF} by Theorem 4.")
    return Measurement(evidence.summary + note, {**evidence.values, "claimed_epsilon": result.claim.epsilon,
                        "lower_bounds": {"eps": (evidence.values["epsilon_lower_bound"], result.claim.epsilon)},
                        accounting.PRIVACY_KEY: [_channel_row(setup, result, channel)]},
                       figure=evidence.figure)


def _noisy_u_ledger(setup: AuditSetup) -> PrivacyLedger:
    """The ledger's record of the target's noisy u~ releases during its AUDIT_PLF activations: Gaussian
    with Lemma 5's Delta and sigma_tau of the relay schedule (v1:L264-L266), what Theorem 4 composes."""
    ledger, values, rng = PrivacyLedger(), np.zeros((1, 1, 1)), np.random.default_rng(0)
    for activation in range(1, AUDIT_PLF + 1):
        gaussian_mechanism(values, setup.params.sensitivity_bound, float(setup.params.noise.std(activation)), rng,
                           ledger=ledger, iteration=activation)
    return ledger


def _channel_row(setup: AuditSetup, result, channel: str) -> dict:
    ledger = _noisy_u_ledger(setup)
    what = {"u": "noisy u~ only", "u+x": "everything passed (u~ and x)", "x-reconstruction": "y reconstructed from x"}
    return accounting.privacy_row(
        f"agent 0's {AUDIT_PLF} activations, {what[channel]}, lasso {setup.problem.lasso:g}", AUDIT_DELTA,
        "the audit's delta (v1:L566's smallest budget, eps = 1 at delta = 1e-3)",
        paper=accounting.cell(result.claim.epsilon, f"Theorem 4 (v1:L458-L468) with PLF {AUDIT_PLF}, R = {AUDIT_DECAY}"),
        accountant=accounting.accountant_cell(accounting.ledger_releases(ledger), AUDIT_DELTA),
        ledger=accounting.ledger_cell(ledger, AUDIT_DELTA),
        audit=accounting.audit_cell([result], AUDIT_DELTA, f"channel {channel!r}; the accountant and the ledger count the "
                                    "noisy u~ releases only (what Lemmas 5-6 account for)"))


def audit_channel(channel: str, lasso: float, ridge: float = 0.5):
    """Theorem 4 against the Sec. II-B adversary (v1:L59-L65: reads all information passed between agents)."""

    def measure(context: CheckContext) -> Measurement:
        setup = AuditSetup.build(_rng(context, f"setup/{channel}/{lasso}"), agents=2, lasso=lasso, ridge=ridge)
        if channel == "x-reconstruction":
            return _run_audit(context, setup, x_channel_statistic(setup), channel, f"{channel}/{lasso}", score="identity")
        return _run_audit(context, setup, transcript_sampler(setup, channel), channel, f"{channel}/{lasso}", score="lda")

    def check(context: CheckContext) -> Measurement:   # once per run: theorem-4 and audit-privacy share it
        return context.memoized(f"dp-recal/audit/{channel}/{lasso}/{ridge}", lambda: measure(context))
    return check


def probe_lemma_5(context: CheckContext) -> Measurement:
    """Lemma 5 on the implementation: ||u_D^{k+1} - u_D'^{k+1}|| from a common state (same walk, same history,
    no noise), over random states, in units of the printed Delta = 4 alpha beta c. A pair above it is a
    counterexample (rule counterexample); a probe that finds none proves nothing."""
    rng = _rng(context, "probe-lemma-5")
    setup = AuditSetup.build(rng, agents=2, lasso=0.0)
    states = rng.normal(scale=3.0, size=(200, setup.data.dim))
    local = rng.normal(scale=3.0, size=(200, setup.data.num_agents, setup.data.dim))
    quiet = RecalParams(setup.params.alpha, setup.params.beta, clip=AUDIT_CLIP)

    def pre_noise(dataset: LocalData) -> np.ndarray:
        run = run_recal(setup.problem, dataset, setup.network, quiet, replicas=len(states), rng=np.random.default_rng(0),
                        horizon=1, x1=states, y1=local, first_holder=TARGET, keep_x=False)
        return run.u_sent[0] / setup.params.sensitivity_bound
    result = sensitivity_probe(pre_noise, (setup.data, setup.neighbour), 1.0)
    worst = result.max_distance
    return Measurement(result.summary() + f" The bound is 2x loose for one release (largest ratio {worst:.3g} <= 0.5 "
                       "expected from the derivation in lemma-5; the data's own 1/m_i factor makes it looser).",
                       {"found": result.refuted, "max_ratio": worst})


def check_accounting_of_experiments(context: CheckContext) -> Measurement:
    """The sigma_1 the experiments use reproduces their stated eps through Theorem 4 (spec §3.6 calibration)."""
    rows = []
    for eps in (1.0, 5.0, 10.0, 12.0):
        for xi in (300, 500, 2000):
            sigma1 = sigma1_for_budget(eps, 1e-3, xi, AUDIT_DECAY, 1.0)
            back = float(theorem4_epsilon(1.0 / (2 * sigma1**2), AUDIT_DECAY, xi, 1e-3))
            rows.append((eps, xi, sigma1, back))
    worst = max(abs(back - eps) / eps for eps, _, _, back in rows)
    rho = zcdp_from_dp(12.0, 1e-3)
    return holds(worst < 1e-10,
        f"Calibrating sigma_1 by inverting Theorem 4 and re-evaluating Theorem 4 returns the stated eps to {worst:.1e} "
        f"(eps in 1/5/10/12, PLF 300/500/2000, R = {AUDIT_DECAY}); e.g. eps = 12 is a total rho of {rho:.4g}.",
        rows=[list(r) for r in rows])
