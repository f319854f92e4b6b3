"""Symbolic checks of Wang & Basar (seeds/003): the test functions of Sec. 6, the constants of the
proofs of Theorems 1-2 and Lemma 3, the stepsize conditions, and the noise conditions of Theorems 4-6.
Each check is `(context) -> Measurement` of an exact computation (`holds`), for the rule `exact`."""

from __future__ import annotations

import numpy as np
import sympy as sp

from dpverify.theory.claims import holds
from dpverify.theory.execution import CheckContext
from dpverify.theory.instruments.symbolic import prove_identity
from dpverify.theory.wang_basar.instances import (
    THETA_SADDLE_PRINTED,
    THETA_STAR_PRINTED,
)

PRINTED_DIGITS_TOLERANCE = 5e-5   # the printed points have 4 decimals: half a unit of the last digit
BOX = ((-8, 4), (-3, 3))          # L574

t1, t2, kappa = sp.symbols("theta1 theta2 kappa", real=True)
THETA = sp.Matrix([t1, t2])
M = sp.Matrix([[1, 0], [0, 2], [0, 0]])


def _local_objective(i: int, kap=kappa) -> sp.Expr:
    y = i * sp.Matrix([sp.Rational(1, 3), sp.Rational(2, 3), 0])       # L562
    radius = sp.sqrt(t1**2 + t2**2)
    return ((y - M * THETA).T * (y - M * THETA))[0] + kap * radius**3  # L556


def check_printed_gradient(context: CheckContext):
    """L566: grad f_i = -2 M^T Y_i + 2 M^T M theta + 3 kappa ||theta|| theta."""
    radius = sp.sqrt(t1**2 + t2**2)
    results = []
    for i in range(1, 6):
        y = i * sp.Matrix([sp.Rational(1, 3), sp.Rational(2, 3), 0])
        printed = -2 * M.T * y + 2 * M.T * M * THETA + 3 * kappa * radius * THETA
        derived = sp.Matrix([sp.diff(_local_objective(i), v) for v in (t1, t2)])
        results.append(prove_identity(printed, derived))
    return holds(all(r.proved for r in results), "printed gradient (L566) equals the sympy gradient of (L556) for i = 1..5"
                 if all(r.proved for r in results) else "printed gradient differs: " + results[0].detail)


def check_printed_hessian(context: CheckContext):
    """L570: grad^2 f_i = 2 M^T M - 3 kappa ||theta|| I + 3 kappa theta theta^T/||theta||."""
    radius = sp.sqrt(t1**2 + t2**2)
    printed = 2 * M.T * M - 3 * kappa * radius * sp.eye(2) + 3 * kappa * THETA * THETA.T / radius
    derived = sp.hessian(_local_objective(1), (t1, t2))
    difference = sp.simplify(printed - derived)
    result = prove_identity(printed, derived)
    if result.proved:
        return holds(True, "printed Hessian (L570) equals the sympy Hessian")
    saddle = {t1: sp.Rational(-74336, 10000), t2: sp.Rational(13959, 10000), kappa: sp.Rational(-1, 10)}
    return holds(
        False, f"printed Hessian (L570) - true Hessian = {sp.simplify(difference[0, 0])} I (sign of the ||theta|| I term flipped: "
        f"d(||theta|| theta) = ||theta|| I + theta theta^T/||theta||); at the printed saddle with kappa = -0.1 the printed "
        f"matrix has eigenvalues {[round(float(e), 3) for e in printed.subs(saddle).evalf().eigenvals()]} vs true "
        f"{[round(float(e), 3) for e in derived.subs(saddle).evalf().eigenvals()]}",
        difference=str(difference))


def check_convex_for_positive_kappa(context: CheckContext):
    """L560: for kappa > 0 each f_i is convex. Hessian = 2M^TM + 3 kappa (rI + theta theta^T/r); the
    eigenvalues of rI + theta theta^T/r are r and 2r (eigenvectors orthogonal to / along theta)."""
    radius = sp.sqrt(t1**2 + t2**2)
    bracket = radius * sp.eye(2) + THETA * THETA.T / radius
    eigenvalues = sorted(sp.simplify(e) for e in bracket.eigenvals())
    mtm = sorted((2 * M.T * M).eigenvals())
    ok = all(sp.ask(sp.Q.nonnegative(e), sp.Q.real(t1) & sp.Q.real(t2)) is not False for e in eigenvalues) and min(mtm) >= 0
    return holds(ok, f"Hessian = 2M^TM (eigenvalues {mtm}) + 3 kappa x (PSD matrix with eigenvalues {eigenvalues}): "
                      "a sum of PSD matrices for kappa > 0, so f_i is convex", eigenvalues=str(eigenvalues))


def stationary_radii(kap=sp.Rational(-1, 10)) -> list[float]:
    """grad F = 0 <=> theta1 = 2/(2 + 3 kappa r), theta2 = 8/(8 + 3 kappa r), r = ||theta|| (from L566 averaged
    over i: mean Y_i = [1, 2, 0]); substituting gives a degree-6 polynomial in r whose positive roots are all
    the stationary points of F on R^2 (theta = 0 is not: grad F(0) = -2 M^T mean Y != 0)."""
    r = sp.symbols("r", positive=True)
    equation = sp.together((2 / (2 + 3 * kap * r)) ** 2 + (8 / (8 + 3 * kap * r)) ** 2 - r**2)
    roots = sp.real_roots(sp.Poly(sp.numer(equation), r))
    return [float(sp.N(root, 30)) for root in roots if root > 0]


def stationary_points_closed_form(kap=-0.1) -> list[np.ndarray]:
    return [np.array([2 / (2 + 3 * kap * r), 8 / (8 + 3 * kap * r)]) for r in stationary_radii(sp.nsimplify(kap))]


def _in_box(point) -> bool:
    return BOX[0][0] <= point[0] <= BOX[0][1] and BOX[1][0] <= point[1] <= BOX[1][1]


def check_stationary_points(context: CheckContext):
    """L572: F has a local minimum at theta* and a saddle at theta_s; and (L574) no other stationary point on B."""
    points = stationary_points_closed_form()
    inside = [p for p in points if _in_box(p)]
    hessian = sp.hessian(sum(_local_objective(i, sp.Rational(-1, 10)) for i in range(1, 6)) / 5, (t1, t2))
    kinds = []
    for p in inside:
        eig = np.linalg.eigvalsh(np.array(hessian.subs({t1: p[0], t2: p[1]}).evalf(), dtype=float))
        kinds.append(("minimum" if eig.min() > 0 else "maximum" if eig.max() < 0 else "saddle", eig))
    star_gap = min(np.max(np.abs(p - THETA_STAR_PRINTED)) for p in inside)
    saddle_gap = min(np.max(np.abs(p - THETA_SADDLE_PRINTED)) for p in inside)
    ok = (len(inside) == 2 and star_gap <= PRINTED_DIGITS_TOLERANCE and saddle_gap <= PRINTED_DIGITS_TOLERANCE
          and sorted(k for k, _ in kinds) == ["minimum", "saddle"])
    description = "; ".join(f"({p[0]:.10f}, {p[1]:.10f}) {k} eig {np.round(e, 4).tolist()}" for p, (k, e) in zip(inside, kinds))
    outside = "; ".join(f"({p[0]:.3f}, {p[1]:.3f})" for p in points if not _in_box(p))
    return holds(ok, f"exact: F has {len(points)} stationary points on R^2 (degree-6 polynomial in r), {len(inside)} on B: "
                      f"{description}; printed values within {max(star_gap, saddle_gap):.1e} (4 decimals); outside B: {outside}",
                 inside=[p.tolist() for p in inside], outside=[p.tolist() for p in points if not _in_box(p)])


def check_strict_saddle(context: CheckContext):
    """L574 / Assumption 3: the saddle is strict (min eigenvalue of the Hessian < 0)."""
    saddle = min(stationary_points_closed_form(), key=lambda p: np.linalg.norm(p - THETA_SADDLE_PRINTED))
    hessian = sp.hessian(sum(_local_objective(i, sp.Rational(-1, 10)) for i in range(1, 6)) / 5, (t1, t2))
    eigenvalues = np.linalg.eigvalsh(np.array(hessian.subs({t1: saddle[0], t2: saddle[1]}).evalf(), dtype=float))
    return holds(eigenvalues.min() < 0 < eigenvalues.max(), f"Hessian of F at theta_s has eigenvalues {np.round(eigenvalues, 4).tolist()}",
                 eigenvalues=eigenvalues.tolist())


# ---- proofs of Theorems 1-2, Remark 3, Lemma 3 -------------------------------------------------------

def check_theorem_1_constants(context: CheckContext):
    """(16)->(18): with 1 + eps = 1/eta, eta^2 (1 + eps) = eta = 1 - (1 - eta), eta^2 (1 + 1/eps) = eta^2/(1 - eta)."""
    eta = sp.symbols("eta", positive=True)
    eps = 1 / eta - 1
    first = prove_identity(eta**2 * (1 + eps), 1 - (1 - eta))
    second = prove_identity(eta**2 * (1 + 1 / eps), eta**2 / (1 - eta))
    positive = sp.solve_univariate_inequality(eps > 0, eta, relational=False)
    return holds(first.proved and second.proved, f"eta^2(1+eps) = eta: {first.status}; eta^2(1+1/eps) = eta^2/(1-eta): "
                 f"{second.status}; eps > 0 for eta in {positive}")


def check_inequality_19(context: CheckContext):
    """(19), second inequality: ||g + N||^2 <= ||g||^2 + ||N||^2 (used with no factor 2)."""
    g = sp.Matrix(sp.symbols("g1 g2", real=True))
    lhs = ((g + g).T * (g + g))[0]
    rhs = 2 * (g.T * g)[0]
    at = {"g1": 1, "g2": 0}
    ratio = sp.simplify(lhs / rhs)
    return holds(
        ratio <= 1, f"false for N = g: ||g+N||^2 = 4||g||^2 > ||g||^2 + ||N||^2 = 2||g||^2 (ratio {ratio}); e.g. g = N = (1, 0): 4 > 2. "
        "The valid bound is 2||g||^2 + 2||N||^2 (as used in (20)); the conclusion of Theorem 1 survives with the factor 2",
        counterexample=at)


def check_remark_3_noise_term(context: CheckContext):
    """(20): E||N^k||^2 bounded by m sigma ('n_i^k has covariance sigma I_d', L302)."""
    m, d, sigma = sp.symbols("m d sigma", positive=True, integer=False)
    exact = m * d * sigma   # sum over m agents and d coordinates of the per-coordinate variance sigma
    printed = m * sigma
    gap = sp.simplify(exact - printed)
    at = {m: 5, d: 2, sigma: 0.5}                          # Sec. 6.1
    numeric = {"m": 5, "d": 2, "sigma": 0.5, "exact": float(exact.subs(at)), "printed": float(printed.subs(at))}
    return holds(
        numeric["exact"] <= numeric["printed"], f"E||N^k||^2 = m d sigma (trace of sigma I_{{md}}), printed m sigma: gap {gap} > 0 for every d >= 2; Sec. 6.1 "
        "(m = 5, d = 2, sigma = 0.5): 5.0 vs 2.5. Finite either way, so Remark 3's conclusion survives",
        **numeric)


def check_lemma_3(context: CheckContext):
    """Lemma 3 (L608-L610): sum_k sum_{l<=k} beta^{k-l} gamma^l = sum_l gamma^l / (1 - beta) < inf; and the bound
    sum_k lambda^k eta^k <= lambda^0/(1-eta) used after (25)."""
    j, l = sp.symbols("j l", integer=True, nonnegative=True)
    beta = sp.symbols("beta", positive=True)
    inner = sp.summation(beta**j, (j, 0, sp.oo))            # sum_{k >= l} beta^(k-l), j = k - l (order swapped)
    inner = inner.args[0][0] if isinstance(inner, sp.Piecewise) else inner   # the branch |beta| < 1
    outer = sp.summation(1 / (l + 1) ** 2, (l, 0, sp.oo))   # gamma^l = 1/(l+1)^2
    closed = sp.simplify(inner * outer)
    identity = prove_identity(closed, sp.pi**2 / 6 / (1 - beta))
    lam0, eta = sp.symbols("lambda0 eta", positive=True)
    return holds(identity.proved and prove_identity(lam0 * inner.subs(beta, eta), lam0 / (1 - eta)).proved,
                 f"order swapped: sum_l gamma^l sum_(k>=l) beta^(k-l) = {closed} for gamma^l = 1/(l+1)^2, finite for "
                 f"0 < beta < 1 ({identity.status}); sum lambda^0 eta^k = lambda^0/(1-eta) bounds sum lambda^k eta^k "
                 "for non-increasing lambda")


def check_schedules(context: CheckContext):
    """Theorems 1-3: the schedules of Sec. 6 are non-increasing, non-summable and square-summable; for
    a/k^v the conditions hold exactly for v in (1/2, 1]."""
    k = sp.symbols("k", integer=True, positive=True)
    rows = {}
    ok = True
    for name, (initial, switch, scale) in {"Sec. 6.1 (L579)": (sp.Rational(2, 100), 500, 1), "Sec. 6.2 (L597)": (sp.Rational(3, 1000), 100, sp.Rational(3, 10))}.items():
        tail = scale / k
        not_summable = sp.summation(tail, (k, switch + 1, sp.oo)) == sp.oo
        square = sp.summation(tail**2, (k, switch + 1, sp.oo))
        monotone = bool(tail.subs(k, switch + 1) <= initial)
        rows[name] = {"sum lambda": "oo" if not_summable else "finite", "sum lambda^2": str(sp.N(square + switch * initial**2, 6)),
                      "non-increasing at the switch": f"{initial} -> {tail.subs(k, switch + 1)}"}
        ok = ok and not_summable and square.is_finite and monotone
    for power in (sp.Rational(1, 2), sp.Rational(3, 4), 1, sp.Rational(11, 10)):
        rows[f"1/k^{power}"] = {"sum lambda": str(sp.summation(k ** (-power), (k, 1, sp.oo))),
                                "sum lambda^2": str(sp.summation(k ** (-2 * power), (k, 1, sp.oo)))}
    return holds(ok, "both Sec. 6 schedules: non-increasing (0.02 -> 1/501, 0.003 -> 0.3/101), sum = oo, sum of squares "
                      f"finite ({rows['Sec. 6.1 (L579)']['sum lambda^2']}, {rows['Sec. 6.2 (L597)']['sum lambda^2']}); a/k^v "
                      "qualifies iff 1/2 < v <= 1", **rows)


# ---- privacy conditions (Theorems 4-6) -----------------------------------------------------------------

lam, eps, delta, nu, n_i, sigma_var = sp.symbols("lambda epsilon delta nu n_i sigma_var", positive=True)
GAUSS = 2 * sp.log(sp.Rational(5, 4) / delta) / eps**2    # Dwork & Roth Thm A.1 / [13]: var >= 2 ln(1.25/delta) S^2/eps^2

# the l1 sensitivities printed in (28), (30), (31) and the printed lower bounds on "sigma^2"
PRIVACY_THEOREMS = {
    "theorem-4": {"sensitivity": nu * lam / n_i, "printed": 2 * nu**2 * lam**2 * sp.log(sp.Rational(5, 4) / delta) / (n_i**2 * eps**2)},
    "theorem-5": {"sensitivity": lam, "printed": 2 * lam**2 * sp.log(sp.Rational(5, 4) / delta) / eps**2},
    "theorem-6": {"sensitivity": sp.Integer(1), "printed": 2 * sp.log(sp.Rational(5, 4) / delta) / (lam**2 * eps**2)},
}
# spec Sec. 3.3: what "sigma^2" of Theorems 4-6 is, in terms of sigma_var (per-coordinate variance of n_i^k)
READINGS = {"a": sigma_var, "b": sigma_var**2, "c": lam**2 * sigma_var}
SYMBOLIC_READINGS = ("a", "c")   # (b) mixes units (variance squared); reported numerically by the audit module


def required_sigma_var(theorem: str) -> sp.Expr:
    """The condition of the Gaussian mechanism on the RELEASE x - lambda g - lambda n: the released noise
    lambda n has per-coordinate variance lambda^2 sigma_var (L528), so lambda^2 sigma_var >= GAUSS S^2."""
    return sp.simplify(GAUSS * PRIVACY_THEOREMS[theorem]["sensitivity"] ** 2 / lam**2)


def printed_sigma_var(theorem: str, reading: str) -> sp.Expr:
    """The smallest sigma_var the printed condition allows under a reading of sigma^2."""
    solution = sp.solve(sp.Eq(READINGS[reading], PRIVACY_THEOREMS[theorem]["printed"]), sigma_var)
    return sp.simplify(solution[0])


def privacy_condition_table(theorem: str) -> dict[str, str]:
    required = required_sigma_var(theorem)
    table = {"required (Gaussian mechanism on the release)": str(required)}
    for reading in SYMBOLIC_READINGS:
        ratio = sp.simplify(printed_sigma_var(theorem, reading) / required)
        table[f"reading ({reading}): printed / required"] = str(ratio)
    return table


def check_privacy_condition(theorem: str):
    """The printed noise condition vs the Gaussian mechanism (cited as [13] in the proof of Theorem 4)
    applied to the released noise lambda^k n_i^k with the printed sensitivity, under each reading of sigma^2.
    Verdict on the literal reading (a); the others are reported."""

    def check(context: CheckContext):
        table = privacy_condition_table(theorem)
        ratio_a = sp.simplify(printed_sigma_var(theorem, "a") / required_sigma_var(theorem))
        sufficient = {r: bool(sp.simplify(printed_sigma_var(theorem, r) / required_sigma_var(theorem) - 1) == 0)
                      or _at_least_one(printed_sigma_var(theorem, r) / required_sigma_var(theorem)) for r in SYMBOLIC_READINGS}
        summary = (f"printed condition gives sigma_var >= required x {ratio_a} under reading (a) (sigma^2 = sigma_var); "
                   f"sufficient for lambda < 1 under readings: {[r for r, ok in sufficient.items() if ok]}")
        return holds(sufficient["a"], summary, **table)

    return check


def _at_least_one(ratio: sp.Expr) -> bool:
    """ratio >= 1 for every lambda in (0, 1) (the experiments' stepsizes), checked at lambda -> 0+ and 1/2."""
    values = [ratio.subs(lam, point) for point in (sp.Rational(1, 2), sp.Rational(1, 1000))]
    return all(sp.simplify(value - 1) >= 0 for value in values if value.free_symbols == set()) and all(v.free_symbols == set() for v in values)


def check_remark_4(context: CheckContext):
    """Remark 4 (L506-L508): infinitely many (eps, delta) pairs satisfy (29): eps(delta) = sqrt(2 ln(1.25/delta)) nu lambda/(n_i sigma)."""
    sigma = sp.symbols("sigma", positive=True)
    epsilon_of_delta = sp.solve(sp.Eq(sigma**2, PRIVACY_THEOREMS["theorem-4"]["printed"]), eps)[0]
    derivative = sp.simplify(sp.diff(epsilon_of_delta, delta))
    unit = {nu: 1, lam: 1, n_i: 1, sigma: 1}
    slopes = [float(derivative.subs(unit).subs(delta, point)) for point in (1e-6, 1e-3, 0.5, 0.99)]
    return holds(all(s < 0 for s in slopes) and epsilon_of_delta.free_symbols >= {delta},
                 f"boundary of (29): eps = {epsilon_of_delta}, continuous and strictly decreasing in delta on (0, 1) "
                 f"(d eps/d delta at delta = 1e-6, 1e-3, 0.5, 0.99 with unit constants: {[f'{s:.3g}' for s in slopes]}): a curve of pairs")


def check_l526(context: CheckContext):
    """L526: the noise needed for data samples decreases with n_i; for gradients it does not depend on n_i."""
    data = PRIVACY_THEOREMS["theorem-4"]["printed"]
    gradient = PRIVACY_THEOREMS["theorem-5"]["printed"]
    ok = sp.simplify(sp.diff(data, n_i)).could_extract_minus_sign() and sp.diff(gradient, n_i) == 0
    return holds(ok, f"d(29)/d n_i = {sp.simplify(sp.diff(data, n_i))} < 0; Theorem 5's bound has no n_i")


def check_remark_5(context: CheckContext):
    """Remark 5 (L540-L542): at fixed sigma, privacy of x_i^k decreases as lambda^k decreases and vanishes as
    lambda^k -> 0. From Theorem 6 (either reading), eps_k = sqrt(2 ln(1.25/delta))/(lambda sigma) -> oo."""
    sigma = sp.symbols("sigma", positive=True)
    epsilon_k = sp.solve(sp.Eq(sigma**2, PRIVACY_THEOREMS["theorem-6"]["printed"]), eps)[0]
    limit = sp.limit(epsilon_k.subs(delta, sp.Rational(1, 10**5)), lam, 0, "+")
    exact_mu = 1 / (lam * sp.sqrt(sigma_var))   # exact GDP parameter of one release, l2 sensitivity 1
    return holds(limit == sp.oo and sp.limit(exact_mu, lam, 0, "+") == sp.oo,
                 f"eps_k = {epsilon_k} -> {limit} as lambda -> 0; the exact mechanism's mu = 1/(lambda sqrt(sigma_var)) -> oo too")


# ---- ICA (Sec. 6.2) -------------------------------------------------------------------------------------

def ica_population_classes(dim: int) -> dict[int, str]:
    """Type of w = s^-1/2 (+-1 on s coordinates) for min_{||w|| = 1} E[(w^T Z)^4] with Rademacher Z:
    E[(w^T Z)^4] = 3||w||^4 - 2 sum w_j^4 (mu4 = 1). Riemannian Hessian P(grad^2 g - (w^T grad g) I)P."""
    w = sp.Matrix(sp.symbols(f"w1:{dim + 1}", real=True))
    objective = 3 * (w.T * w)[0] ** 2 - 2 * sum(x**4 for x in w)
    gradient = sp.Matrix([sp.diff(objective, x) for x in w])
    hessian = sp.hessian(objective, list(w))
    classes = {}
    for support in range(1, dim + 1):
        point = {x: (1 / sp.sqrt(support) if j < support else 0) for j, x in enumerate(w)}
        wp = w.subs(point)
        projector = sp.eye(dim) - wp * wp.T
        riemannian_gradient = sp.simplify(projector * gradient.subs(point))
        riemannian_hessian = projector * (hessian.subs(point) - (wp.T * gradient.subs(point))[0] * sp.eye(dim)) * projector
        eigenvalues = [e for e, mult in riemannian_hessian.eigenvals().items() for _ in range(mult)]
        tangent = sorted(eigenvalues, key=lambda e: abs(e))[1:]   # drop the normal direction (eigenvalue 0 along w)
        stationary = all(sp.simplify(g) == 0 for g in riemannian_gradient)
        kind = ("not stationary" if not stationary else "minimum" if all(e > 0 for e in tangent)
                else "maximum" if all(e < 0 for e in tangent) else "saddle")
        classes[support] = kind
    return classes


def ica_population_classes_numeric(dim: int) -> dict[int, str]:
    """The same classification in floating point (for d = 4, 10): Riemannian gradient norm and tangent
    eigenvalues of P(grad^2 g - (w^T grad g) I)P, g = 3||w||^4 - 2 sum w^4."""
    classes = {}
    for support in range(1, dim + 1):
        w = np.where(np.arange(dim) < support, 1 / np.sqrt(support), 0.0)
        gradient = 12 * (w @ w) * w - 8 * w**3
        hessian = 12 * (w @ w) * np.eye(dim) + 24 * np.outer(w, w) - 24 * np.diag(w**2)
        projector = np.eye(dim) - np.outer(w, w)
        riemannian = projector @ (hessian - (w @ gradient) * np.eye(dim)) @ projector
        basis = np.linalg.svd(projector)[0][:, : dim - 1]          # orthonormal basis of the tangent space
        tangent = np.linalg.eigvalsh(basis.T @ riemannian @ basis)
        stationary = np.linalg.norm(projector @ gradient) < 1e-12
        classes[support] = ("not stationary" if not stationary else "minimum" if tangent.min() > 0
                            else "maximum" if tangent.max() < 0 else "saddle")
    return classes


def check_ica_saddles(context: CheckContext):
    """L597: all u* = d^-1/2 (+-1, ..., +-1) are strict saddles. In source coordinates (u* = A w*) the
    point w* = d^-1/2(+-1..) is the MAXIMUM of 3 - 2 sum w^4 on the sphere; in the literal coordinates
    (u* in Y-coordinates, A random) it is generically not stationary."""
    exact = ica_population_classes(3)
    numeric = {dim: ica_population_classes_numeric(dim) for dim in (4, 10)}
    rng = np.random.default_rng(0)
    a_matrix, _ = np.linalg.qr(rng.normal(size=(10, 10)))
    w = a_matrix.T @ (np.ones(10) / np.sqrt(10))
    euclidean = 12 * w - 8 * w**3
    riemannian_norm = float(np.linalg.norm(euclidean - (euclidean @ w) * w))
    summary = (f"source coordinates, type s = d (u* = A d^-1/2(+-1..)): d=3 (sympy) {exact[3]}, d=4 {numeric[4][4]}, d=10 "
               f"{numeric[10][10]} — a strict local MAXIMUM of the minimized objective, not a saddle (1 < s < d are saddles, "
               f"s = 1 minima); literal Y-coordinates with a random orthonormal A (seed 0): ||Riemannian gradient|| at "
               f"u* = {riemannian_norm:.3f} != 0 (not stationary)")
    refuted = exact[3] != "saddle" or numeric[10][10] != "saddle"
    return holds(not refuted, summary, **{"d=3": str(exact), "d=4": str(numeric[4]), "d=10": str(numeric[10])})
