"""Privacy checks of Wang & Basar, Theorems 4-6 (seeds/003 Sec. 5, L488-L546).

Threat model (L114-L118): an honest-but-curious neighbour or an eavesdropper sees every message;
agent i's message at iteration k is w_ji (x_i^k - lambda^k (g_i^k + n_i^k)) for each receiver j. The
w_ji-scaled copies are post-processing of o = x_i^k - lambda^k (g_i^k + n_i^k) in the literal per-agent
noise draw, so the audited observation of one iteration is o (Theorems 4-6 are per-iteration, L500,
L520, L536). Only the protected quantity changes between the neighbours (the paper's sensitivity (28),
(30), (31)); the Sec. 6.1 estimation instance supplies f_i (n_i = 1, the sample is Y_i, spec P25).
Noise: the literal reading (a) of "sigma^2" (the per-coordinate variance sigma_var of n_i^k), set to
the smallest value the printed condition allows.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy import optimize

from dpverify.algorithms.core.noise import PrivacyLedger, gaussian_mechanism
from dpverify.algorithms.core.privacy import gaussian_dp_epsilon, gdp_mu_of_gaussians
from dpverify.algorithms.wang_basar.problems import Estimation
from dpverify.theory.audit import PrivacyClaim, accounting, audit, sensitivity_probe
from dpverify.theory.audit.scores import gaussian_log_likelihood_ratio
from dpverify.theory.claims import Measurement, holds
from dpverify.theory.execution import CheckContext, task_seed_sequence
from dpverify.theory.wang_basar.instances import THETA_SADDLE_PRINTED

AUDIT_EPSILON, AUDIT_DELTA = 0.5, 1e-5     # default: an (eps, delta) inside the theorems' range (0, 1); spec P22 delta
AUDIT_STEP = 0.02                          # the first-phase stepsize of Sec. 6.1 (L579)
AUDIT_AGENT = 0                            # default: the agent whose sample, gradient or state changes (any of the 5 agents)
SAMPLES = {"quick": 20_000, "paper": 200_000}
STEPS = (0.02, 1 / 501, 1 / 3000)          # lambda at k <= 500, k = 501, k = 3000 (Sec. 6.1 schedule)
PROBE_GRID = 25                            # grid points per axis of B for the sensitivity probes


def _problem() -> Estimation:
    return Estimation.as_printed()


def data_lipschitz(problem: Estimation) -> float:
    """Assumption 1, second line: sup ||grad l(., s_p) - grad l(., s_q)||_1 / ||s_p - s_q||_1 for
    l = ||Y - M theta||^2 + kappa||theta||^3: grad changes by -2 M^T (Y_p - Y_q), so it is the induced l1
    norm of 2 M^T (max column sum)."""
    return float(np.abs(2 * problem.matrix.T).sum(axis=0).max())


def gradient_lipschitz(problem: Estimation) -> float:
    """Assumption 1, first line, on B: max spectral norm of the Hessian on a grid of B."""
    grid = np.stack(np.meshgrid(np.linspace(*[-8, 4], 121), np.linspace(-3, 3, 61)), -1).reshape(-1, 2)
    grid = grid[np.linalg.norm(grid, axis=1) > 1e-9]
    return float(max(np.linalg.norm(problem.hessian(p), 2) for p in grid[::7]))


def nu_of(problem: Estimation) -> float:
    return max(data_lipschitz(problem), gradient_lipschitz(problem))


def _grid(problem: Estimation) -> np.ndarray:
    axes = [np.linspace(lo, hi, PROBE_GRID) for lo, hi in zip(problem.low, problem.high)]
    return np.stack(np.meshgrid(*axes), -1).reshape(-1, 2)


def _local_gradient(problem: Estimation, points: np.ndarray, measurement: np.ndarray) -> np.ndarray:
    """grad f_i(theta; Y_i) at points (n, d) for a given sample Y_i (L566)."""
    radius = np.linalg.norm(points, axis=-1, keepdims=True)
    return -2 * problem.matrix.T @ measurement + 2 * points @ (problem.matrix.T @ problem.matrix) + 3 * problem.kappa * radius * points


UNIT_L1_DIRECTIONS = np.array([[1, 0], [-1, 0], [0, 1], [0, -1], [0.5, 0.5], [0.5, -0.5], [-0.5, 0.5], [-0.5, -0.5]])
SAMPLE_DIRECTIONS = np.vstack([np.eye(3), -np.eye(3)])


def _state_message(problem: Estimation, points: np.ndarray, measurement: np.ndarray, lam: float):
    """M_i^k as a function of a shift of x_i^k ((31)'s neighbours), g_i^k recomputed at the shifted state (L496)."""
    return lambda shift: (points + shift) - lam * _local_gradient(problem, points + shift, measurement)


def _unit_l1_steps() -> list[tuple[np.ndarray, np.ndarray]]:
    return [(np.zeros(2), e) for e in UNIT_L1_DIRECTIONS]


def printed_sensitivity(theorem: str, lam: float) -> float:
    """The l1 sensitivities the theorems calibrate to: (28) nu lambda^k / n_i (n_i = 1, spec P25),
    (30) lambda^k, (31) 1 (seeds/003 L494-L530)."""
    return {"theorem-4": nu_of(_problem()) * lam, "theorem-5": lam, "theorem-6": 1.0}[theorem]


def sensitivities(lam: float) -> dict[str, dict]:
    """Measured l1 sensitivities of M_i^k at stepsize lam over a grid of x in B, against the printed ones."""
    problem = _problem()
    points = _grid(problem)
    measurement = problem.measurements[AUDIT_AGENT]
    nu = nu_of(problem)
    data = sensitivity_probe(lambda y: points - lam * _local_gradient(problem, points, y),
                             [(measurement, measurement + e) for e in SAMPLE_DIRECTIONS], nu * lam / 1, norm="l1")
    gradient = sensitivity_probe(lambda g: points - lam * g, [(np.zeros(2), e) for e in UNIT_L1_DIRECTIONS], lam, norm="l1")
    state = sensitivity_probe(_state_message(problem, points, measurement, lam), _unit_l1_steps(), 1.0, norm="l1")
    witness = points[state.witness_index[1]] if len(state.witness_index) > 1 else None
    return {"data (28)": {"measured": data.max_distance, "printed": printed_sensitivity("theorem-4", lam),
                          "refuted": data.refuted},
            "gradient (30)": {"measured": gradient.max_distance, "printed": printed_sensitivity("theorem-5", lam),
                              "refuted": gradient.refuted},
            "state (31)": {"measured": state.max_distance, "printed": printed_sensitivity("theorem-6", lam),
                           "refuted": state.refuted,
                           "witness_x": None if witness is None else witness.tolist()}}


def data_sensitivity_attained() -> tuple[bool, str]:
    """(28) is the supremum over Assumption 1's losses, not only a bound: l(u, s) = nu/2 ||u - s||^2 is coercive,
    its gradient nu (u - s) is nu-Lipschitz in u and nu-Lipschitz in s (l1), and moving one of agent i's n_i samples
    by a unit l1 step moves M_i = x - lambda grad f_i by exactly nu lambda / n_i (the other samples cancel)."""
    nu, lam, n = sp.symbols("nu lambda n_i", positive=True)
    u, s = sp.Matrix(sp.symbols("u1 u2", real=True)), sp.Matrix(sp.symbols("s1 s2", real=True))
    step = sp.Matrix([1, 0])
    gradient = nu * (u - s)
    moved = lam * (gradient.subs({s[0]: s[0] + step[0], s[1]: s[1] + step[1]}) - gradient) / n
    distance = sp.simplify(sum(abs(m) for m in moved))
    lipschitz_u = gradient.jacobian(u) == nu * sp.eye(2)             # spectral norm nu
    lipschitz_s = gradient.jacobian(s) == -nu * sp.eye(2)            # induced l1 norm nu
    attained = bool(lipschitz_u and lipschitz_s and sp.simplify(distance - nu * lam / n) == 0)
    return attained, f"l(u, s) = nu/2 ||u - s||^2 (Assumption 1 with constant nu) moves M_i by {distance}"


def check_sensitivity(name: str):
    """A printed sensitivity decided by the one rule for worst-case equalities: exceeded on the Sec. 6.1 instance
    (a grid of B) refutes; attained by an admissible instance confirms (for (28) the instance's own value
    4 lambda is below nu lambda, so attainment is shown on the loss of data_sensitivity_attained)."""
    def check(context: CheckContext):
        rows = {lam: sensitivities(lam)[name] for lam in STEPS}
        exceeded = any(r["refuted"] for r in rows.values())
        attained = all(r["measured"] >= r["printed"] * (1 - 1e-9) for r in rows.values())
        text = "; ".join(f"lambda = {lam:.3g}: measured {r['measured']:.5g} vs printed {r['printed']:.5g}" for lam, r in rows.items())
        extra = ""
        if name == "state (31)":
            extra = (" — with g_i^k = grad f_i(x_i^k) recomputed (L496); I - lambda Hess has l1 norm > 1 where f_i is nonconvex"
                     f" (witness x = {rows[STEPS[0]]['witness_x']})")
        if name == "data (28)":
            attained, witness = data_sensitivity_attained()
            extra = (f" (nu = max(data-Lipschitz {data_lipschitz(_problem()):g}, gradient-Lipschitz on B "
                     f"{gradient_lipschitz(_problem()):.3f}), n_i = 1); attained over Assumption 1: {witness}")
        return Measurement(f"{name} l1 sensitivity on a {PROBE_GRID}x{PROBE_GRID} grid of B: {text}{extra}",
                           {"exceeded": exceeded, "attained": attained, **{str(k): str(v) for k, v in rows.items()}})

    return check


THEOREM_EPSILONS = (0.01, 0.1, 0.5, 0.99)   # inside Theorem 6's range (0, 1); the threshold grows with eps


def _state_l2_sensitivity(lam: float) -> float:
    """The l2 distance the Gaussian release sees when x_i^k moves by a unit l1 step ((31)'s neighbours), g recomputed."""
    problem = _problem()
    points, measurement = _grid(problem), problem.measurements[AUDIT_AGENT]
    return sensitivity_probe(_state_message(problem, points, measurement, lam), _unit_l1_steps(), 1.0,
                             norm="l2").max_distance


def failing_delta(sensitivity: float, epsilon: float) -> float:
    """The largest delta at which Theorem 6's noise (its printed condition with equality: std sqrt(2 ln(1.25/delta))/eps
    on the release, calibrated to sensitivity 1) is not (eps, delta)-DP at this l2 sensitivity (exact Gaussian
    mechanism); 0 when it is DP at every delta in (0, 1)."""
    def excess(log_delta: float) -> float:
        delta = 10.0**log_delta
        mu = sensitivity * epsilon / math.sqrt(2 * math.log(1.25 / delta))
        return float(gaussian_dp_epsilon(delta, mu)) - epsilon
    if sensitivity <= 1.0 or excess(-300.0) <= 0:      # below 1e-300 the float64 conversion has no say
        return 0.0
    return 10.0 ** optimize.brentq(excess, -300.0, -1e-9, xtol=1e-6)


def check_theorem_6_privacy(context: CheckContext) -> Measurement:
    """What (31)'s excess does to Theorem 6's conclusion: at the measured state sensitivity (l2, largest at lambda =
    0.02), the printed noise fails (eps, delta)-DP exactly for delta below failing_delta; any such delta inside (0, 1) is
    a witness inside the theorem's hypotheses, and how small it is says how much the excess matters."""
    sensitivity = _state_l2_sensitivity(AUDIT_STEP)
    thresholds = {eps: failing_delta(sensitivity, eps) for eps in THEOREM_EPSILONS}
    shown = ", ".join(f"{d:.2g} at eps = {eps:g}" for eps, d in thresholds.items())
    return holds(not any(thresholds.values()),
                 f"l2 sensitivity of the state release {sensitivity:.4g} > 1 (lambda = {AUDIT_STEP}, unit l1 steps of x on "
                 f"B): the printed noise is not (eps, delta)-DP exactly for delta below {shown} (exact Gaussian "
                 "mechanism); at every larger delta the classical calibration's slack absorbs the excess",
                 l2_sensitivity=sensitivity, failing_delta={str(e): d for e, d in thresholds.items()})


# ---- audits of one message -----------------------------------------------------------------------------

def printed_sigma_var(theorem: str, lam: float, epsilon: float = AUDIT_EPSILON, delta: float = AUDIT_DELTA,
                      reading: str = "a") -> float:
    """The smallest sigma_var the printed condition allows: (29), Theorem 5, Theorem 6, with sigma^2 read as
    sigma_var (a) or as (lambda^k)^2 sigma_var (c) (spec Sec. 3.3)."""
    log_term = 2 * math.log(1.25 / delta) / epsilon**2
    nu = nu_of(_problem())
    bound = {"theorem-4": nu**2 * lam**2 * log_term, "theorem-5": lam**2 * log_term, "theorem-6": log_term / lam**2}[theorem]
    return bound if reading == "a" else bound / lam**2


def _neighbours(theorem: str):
    """(pre-noise message on d0, on d1) at x = the printed saddle (a point of the experiments, Fig. 4)."""
    problem = _problem()
    x = THETA_SADDLE_PRINTED
    y = problem.measurements[AUDIT_AGENT]
    lam = AUDIT_STEP
    message = lambda point, sample: point - lam * _local_gradient(problem, point[None], sample)[0]
    if theorem == "theorem-4":
        return message(x, y), message(x, y + np.array([0.0, 1.0, 0.0]))   # one sample changed by 1 in l1
    if theorem == "theorem-5":
        return message(x, y), message(x, y) - lam * np.array([1.0, 0.0])   # g vs g + e1
    return message(x, y), message(x + np.array([1.0, 0.0]), y)             # x vs x + e1, g recomputed


def audit_message(theorem: str, reading: str = "a"):
    """Audit one iteration's shared message with the noise the theorem prescribes (its printed bound with
    equality) against the theorem's (eps, delta): the audit's eps lower bound for the rule audit_lower_bounds."""

    def check(context: CheckContext):
        sigma_var = printed_sigma_var(theorem, AUDIT_STEP, reading=reading)
        std = AUDIT_STEP * math.sqrt(sigma_var)                     # released noise lambda n (L528)
        mean0, mean1 = _neighbours(theorem)
        means = {0: mean0, 1: mean1}

        def sample(dataset, n, rng):
            return means[dataset] + std * rng.standard_normal((n, 2))

        samples = context.audit_samples or SAMPLES[context.profile]
        rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"wang-basar/audit/{theorem}/{reading}"))
        result = audit(sample, (0, 1), PrivacyClaim(epsilon=AUDIT_EPSILON, delta=AUDIT_DELTA), samples=samples,
                       confidence=context.audit_confidence, rng=rng,
                       score=gaussian_log_likelihood_ratio(mean0, mean1, std))
        mu = float(np.linalg.norm(mean1 - mean0) / std)
        exact = float(gaussian_dp_epsilon(AUDIT_DELTA, mu))
        evidence = result.evidence()
        row = _message_row(theorem, reading, sigma_var, std, result)
        return Measurement(
            f"reading ({reading}), lambda = {AUDIT_STEP}, sigma_var = {sigma_var:.4g} (printed bound), x = printed saddle: "
            f"{result.summary()}; exact per-message eps at delta {AUDIT_DELTA:g}: {exact:.3g} (mu = {mu:.3g}, Balle-Wang/GDP)",
            {**evidence.values, "claimed_epsilon": AUDIT_EPSILON, "sigma_var": sigma_var, "exact_epsilon": exact, "mu": mu,
             "lower_bounds": {"eps": (evidence.values["epsilon_lower_bound"], AUDIT_EPSILON)},
             accounting.PRIVACY_KEY: [row]})

    return check


DELTA_NOTE = "harness default inside the theorems' range (0, 1) (spec P22)"


def _ledger_of(sensitivities, stds) -> PrivacyLedger:
    """The ledger's record of these Gaussian releases of one agent, as the algorithm records its own
    (Bun-Steinke zCDP, no declared (eps, delta))."""
    ledger, values, rng = PrivacyLedger(), np.zeros((1, 1, 1)), np.random.default_rng(0)
    for k, (sensitivity, std) in enumerate(zip(np.ravel(sensitivities), np.ravel(stds)), start=1):
        gaussian_mechanism(values, sensitivity, std, rng, ledger=ledger, iteration=k)
    return ledger


def _message_row(theorem: str, reading: str, sigma_var: float, std: float, result) -> dict:
    """The privacy-table row of one audited message: the Gaussian release lambda n with the printed
    sensitivity (an l1 value; used as the l2 sensitivity, which it bounds)."""
    ledger = _ledger_of([printed_sensitivity(theorem, AUDIT_STEP)], [std])
    return accounting.privacy_row(
        f"one message, lambda = {AUDIT_STEP}, reading ({reading}), sigma_var = {sigma_var:.4g}", AUDIT_DELTA, DELTA_NOTE,
        paper=accounting.cell(AUDIT_EPSILON, f"{theorem}'s printed condition with equality (classical Gaussian mechanism "
                              "form, ln(1.25/delta))"),
        accountant=accounting.accountant_cell(accounting.ledger_releases(ledger), AUDIT_DELTA),
        ledger=accounting.ledger_cell(ledger, AUDIT_DELTA),
        audit=accounting.audit_cell([result], AUDIT_DELTA, "exact Gaussian LLR score, neighbours at the printed saddle"))


# ---- the experiments' own noise: per iteration and composed (not claimed) -------------------------------

def _protected_mu(lam: np.ndarray, sigma_var: float) -> dict[str, np.ndarray]:
    """Exact GDP mu of one message for each protected quantity: l2 sensitivity / released noise std.
    l2 sensitivities (worst l1-unit change): data 4 lam (2 M^T column), gradient lam, state ~1 (printed)."""
    std = lam * math.sqrt(sigma_var)
    return {"data": 4 * lam / std, "gradient": lam / std, "state": 1.0 / std}


def check_experiment_privacy(context: CheckContext):
    """What (eps, delta) the Sec. 6.1 noise (sigma_var = 0.5) gives per iteration (exact Gaussian mechanism),
    and what the printed conditions would require; labelled: the paper states no eps for its experiments."""
    sigma_var = context.parameters["figures-3-4"]["sigma_var"]
    rows = {}
    for lam in STEPS:
        mus = _protected_mu(np.array(lam), sigma_var)
        rows[f"lambda={lam:.3g}"] = {name: float(gaussian_dp_epsilon(AUDIT_DELTA, float(mu))) for name, mu in mus.items()}
    text = "; ".join(f"{k}: " + ", ".join(f"{n} eps {v:.3g}" for n, v in r.items()) for k, r in rows.items())
    return Measurement(f"not claimed by the paper (no eps is given for Sec. 6): exact per-message eps at delta "
                       f"{AUDIT_DELTA:g} with sigma_var = {sigma_var}: {text}", rows)


def check_composition(context: CheckContext):
    """Not claimed by the paper: the whole transcript of agent i over K iterations (GDP composition of the
    exact Gaussian releases, Dong-Roth-Su Cor. 3.3), for the Sec. 6.1 schedule and sigma_var."""
    values = context.parameters["figures-3-4"]
    k = np.arange(1, values["iterations"])
    lam = np.where(k <= values["switch"], values["lam0"], values["lam_scale"] / k)
    std = lam * math.sqrt(values["sigma_var"])
    rows, table = {}, []
    for name, sensitivity in (("data", 4 * lam), ("gradient", lam), ("state", np.ones_like(lam))):
        mu = gdp_mu_of_gaussians(sensitivity, std)
        rows[name] = {"mu": mu, "epsilon": float(gaussian_dp_epsilon(AUDIT_DELTA, mu))}
        ledger = _ledger_of(sensitivity, std)
        table.append(accounting.privacy_row(
            f"{name} privacy, one agent's {len(k)} messages (Sec. 6.1 schedule, sigma_var = {values['sigma_var']})",
            AUDIT_DELTA, DELTA_NOTE,
            paper=accounting.not_applicable("the paper states no eps for the whole run (Theorems 4-6 are per iteration)"),
            accountant=accounting.accountant_cell(accounting.ledger_releases(ledger), AUDIT_DELTA),
            ledger=accounting.ledger_cell(ledger, AUDIT_DELTA),
            audit=accounting.not_applicable("no audit of the whole run")))
    return Measurement(
        f"not claimed by the paper: composing the {len(k)} messages of one agent (Sec. 6.1 schedule, sigma_var = {values['sigma_var']}) "
        f"gives at delta {AUDIT_DELTA:g}: " + ", ".join(f"{n} mu = {r['mu']:.3g}, eps = {r['epsilon']:.3g}" for n, r in rows.items())
        + " (state privacy of earlier x_i^k is also leaked through later messages; the per-iteration theorems do not cover it)",
        {**rows, accounting.PRIVACY_KEY: table})
