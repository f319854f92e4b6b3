"""RECAL and DP-RECAL (seeds/001 Algorithm 1, eqs. (7a)-(7e)), batched over replicas.

One token ("baton") (u, x) walks on the graph; at iteration k only its holder i = i_k computes
    lam_half = lam_i + beta (x - y_i)                                        (7a)
    x+       = prox_{nr}(x - (u_recv + lam_half - lam_i))                   (7b), Alg. 1 uses u~^k
    y_i+     = y_i - alpha_i (grad f_i(y_i) - lam_half)                      (7c)
    lam_i+   = lam_half + beta [(x+ - x) - (y_i+ - y_i)]                     (7d)
    u+       = u + lam_i+ - lam_i                                            (7e)
    u~+      = u+ - eps^k,  eps^k ~ N(0, sigma^2_{tau_i(k)} I)               Alg. 1 line 3, v1:L264
and passes (u~+, x+) to a neighbour drawn from row i of P (Alg. 1 line 5). RECAL is sigma = 0.

Reading switch `u_mode` (spec §2.4): in (7e) the holder needs u^k, but it received u~^k.
  "literal"  (default): u^{k+1} = u^k + lam_i+ - lam_i with the exact running sum u^k = sum_j lam_j
             (as printed; the noise of one release does not enter later ones);
  "received": u^{k+1} = u~^k + lam_i+ - lam_i (what a holder can compute from what it received; the
             noise then accumulates along the walk).

Noise: sigma^2_tau = sigma_1^2 R^{1 - tau}, tau = the holder's own activation count (v1:L264-L266).
The Gaussian draw is made here rather than through `dpverify.algorithms.core.noise.gaussian_mechanism` because
each replica has its own holder and its own variance at every iteration (that mechanism takes one
variance per agent for all replicas); the privacy spent is recorded per (replica, agent) in
`RelayRun.rho_spent` with Lemma 6's formula applied to the sensitivity the run assumes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from dpverify.algorithms.core.errors import InvalidGraphError, InvalidParameterError
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.privacy import zcdp_from_dp
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.core.validation import (
    require_finite,
    require_positive,
    require_positive_int,
)
from dpverify.algorithms.dp_recal.composite import ActiveGradients, CompositeProblem

U_MODES = ("literal", "received")


def paper_beta(num_agents: int) -> float:
    """beta = 1/2(n+1), read 1/(2(n+1)) (v1 Algorithm 1 input; v0:L117 prints \\frac{1}{2(n+1)})."""
    return 1.0 / (2.0 * (num_agents + 1))


def uniform_transition_matrix(network: Network) -> np.ndarray:
    """P = I - D^{-1} L: the next holder uniform over the holder's neighbours (Assumption 2, v1:L223)."""
    return network.adjacency / network.degrees[:, None]


def validate_transition_matrix(P: np.ndarray, network: Network, atol: float = 1e-12) -> np.ndarray:
    """Row stochastic, supported on the graph's edges (v1 Sec. III: P_ij = 0 off N_i), irreducible
    (otherwise some agents are never visited and the relay cannot solve (1))."""
    P = np.asarray(require_finite("P", P), dtype=float)
    n = network.num_agents
    if P.shape != (n, n):
        raise InvalidGraphError(f"transition matrix must be ({n}, {n}); got {P.shape}")
    if np.any(P < -atol):
        raise InvalidGraphError(f"transition matrix has negative entries, e.g. P{tuple(np.argwhere(P < -atol)[0])}")
    if not np.allclose(P.sum(axis=1), 1.0, atol=1e-10):
        row = int(np.argmax(np.abs(P.sum(axis=1) - 1)))
        raise InvalidGraphError(f"transition matrix rows must sum to 1; row {row} sums to {P[row].sum():.12g}")
    off_graph = (np.abs(P) > atol) & (network.adjacency == 0)
    if np.any(off_graph):
        i, j = np.argwhere(off_graph)[0]
        raise InvalidGraphError(f"P[{i}, {j}] = {P[i, j]:.3g} but ({i}, {j}) is not an edge: the baton only moves along edges")
    walk = nx.from_numpy_array((P > atol).astype(int), create_using=nx.DiGraph)
    if not nx.is_strongly_connected(walk):
        parts = [sorted(c) for c in nx.strongly_connected_components(walk)]
        raise InvalidGraphError(f"the random walk with this P is not irreducible: its classes are {parts}")
    return P


def stepsize_bounds(problem: CompositeProblem, data: LocalData) -> np.ndarray:
    """2 / (L_i + 1): the open upper end of the stepsize condition alpha_i in (0, 2/(L_i+1))
    (v0 Assumption 2, v1 Lemma 3 / Theorems 2-3)."""
    return 2.0 / (problem.lipschitz_constants(data) + 1.0)


@dataclass(frozen=True)
class RelayNoise:
    """sigma_tau^2 = sigma_1^2 R^{1-tau} (v1:L264-L266); sigma_1 = 0 is RECAL."""

    sigma1: float = 0.0
    decay: float = 1.0  # R (> 1 for DP-RECAL; printed "attenuation coefficient of noise")

    def __post_init__(self) -> None:
        if not (np.isfinite(self.sigma1) and self.sigma1 >= 0):
            raise InvalidParameterError(f"sigma1 must be finite and >= 0; got {self.sigma1!r}")
        if self.sigma1 > 0 and not (np.isfinite(self.decay) and self.decay > 1):
            raise InvalidParameterError(f"R must be > 1 (v1:L264, sigma^2_tau = R sigma^2_(tau+1)); got {self.decay!r}")

    def std(self, activation_count: np.ndarray) -> np.ndarray:
        return self.sigma1 * self.decay ** (-(np.asarray(activation_count, dtype=float) - 1.0) / 2.0)


@dataclass(frozen=True)
class RecalParams:
    alpha: np.ndarray                 # alpha_i per agent
    beta: float
    noise: RelayNoise = field(default_factory=RelayNoise)
    u_mode: str = "literal"
    clip: float | None = None         # per-sample gradient clipping (spec §6: makes Assumption 3 hold with c = clip)
    sensitivity_bound: float = 0.0    # the Delta the run's accounting assumes (Lemma 5: 4 alpha beta c)

    def __post_init__(self) -> None:
        alpha = np.asarray(require_finite("alpha", self.alpha), dtype=float)
        if alpha.ndim != 1 or np.any(alpha <= 0):
            raise InvalidParameterError(f"alpha must be a vector of positive per-agent stepsizes; got {alpha!r}")
        object.__setattr__(self, "alpha", alpha)
        require_positive("beta", self.beta, "Algorithm 1 input")
        if self.u_mode not in U_MODES:
            raise InvalidParameterError(f"u_mode must be one of {U_MODES} (spec §2.4); got {self.u_mode!r}")


def checked_stepsizes(alpha, problem: CompositeProblem, data: LocalData, allow_outside: bool = False) -> np.ndarray:
    """alpha broadcast to (n,), required inside (0, 2/(L_i+1)) unless `allow_outside` (then the caller
    records that the run is outside the theorems' condition)."""
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (data.num_agents,)).copy()
    bounds = stepsize_bounds(problem, data)
    outside = (alpha <= 0) | (alpha >= bounds)
    if np.any(outside) and not allow_outside:
        i = int(np.flatnonzero(outside)[0])
        raise InvalidParameterError(
            f"alpha_{i} = {alpha[i]:.6g} is outside (0, 2/(L_i+1)) = (0, {bounds[i]:.6g}) (v1 Theorems 2-3); "
            "pass allow_outside=True to run it anyway (recorded)")
    return alpha


@dataclass
class RelayRun:
    """A batched run. Transcript arrays are indexed by iteration k = 1..K (axis 0) and replica (axis 1).

    holders[k-1]   = i_k, the agent active at iteration k (the sender of the k-th message)
    receivers[k-1] = i_{k+1}
    u_sent[k-1]    = u~^{k+1} as sent;  x_sent[k-1] = x^{k+1} as sent (what an eavesdropper reads)
    counts[k-1]    = tau_{i_k}(k), the holder's activation count at iteration k
    noise_std[k-1] = sigma_{tau}
    active[k-1]    = the replica had not yet reached its stopping rule (frozen replicas repeat their state)
    x_history      = x^1 .. x^{K+1} (K+1, R, q) if kept
    """

    holders: np.ndarray
    receivers: np.ndarray
    u_sent: np.ndarray
    x_sent: np.ndarray
    counts: np.ndarray
    noise_std: np.ndarray
    active: np.ndarray
    x_initial: np.ndarray
    y_initial: np.ndarray
    x_final: np.ndarray
    y_final: np.ndarray
    lam_final: np.ndarray
    rho_spent: np.ndarray             # (R, n): sum over the agent's activations of Delta^2 / (2 sigma_tau^2)
    x_history: np.ndarray | None = None

    @property
    def activations(self) -> np.ndarray:
        """tau_i(K) per replica and agent: (R, n)."""
        n = self.y_final.shape[1]
        onehot = (self.holders[..., None] == np.arange(n)) & self.active[..., None]
        return onehot.sum(axis=0)

    @property
    def plf(self) -> np.ndarray:
        """Theta_K = max_i tau_i(K) (v1 Definition of PLF, L107-L113) per replica."""
        return self.activations.max(axis=1)

    @property
    def iterations(self) -> np.ndarray:
        """K per replica (iterations before the stopping rule froze it)."""
        return self.active.sum(axis=0)

    @property
    def messages(self) -> np.ndarray:
        """Messages sent (one baton over one edge = 1) per replica."""
        return self.iterations

    @property
    def vectors_sent(self) -> np.ndarray:
        """Vectors sent (one vector over one edge = 1) per replica: each hop passes the baton (u~^{k+1}, x^{k+1}),
        two vectors of R^q (Alg. 1 line 5)."""
        return 2 * self.iterations


def run_recal(problem: CompositeProblem, data: LocalData, network: Network, params: RecalParams, *,
              replicas: int, rng: np.random.Generator, horizon: int | None = None, plf_target: int | None = None,
              transition: np.ndarray | None = None, x1: np.ndarray | None = None, y1: np.ndarray | None = None,
              first_holder: int | np.ndarray | None = None, keep_transcript: bool = True, keep_x=True,
              gradients: ActiveGradients | None = None) -> RelayRun:
    """Algorithm 1 on `replicas` independent walks and noise draws at once.

    Stopping: after `horizon` iterations, or (if `plf_target`) at the first K with max_i tau_i(K) =
    plf_target (spec §6 default), whichever comes first; replicas that stopped are frozen.
    x1 (q,) or (R, q), y1 (n, q) or (R, n, q): initial points (spec §6 default: the caller draws
    x1 = 0.1 N(0, I) and y_i^1 = x1); lam^1 = 0, u^1 = u~^1 = 0 (Alg. 1 line 1).
    first_holder: i_1, one agent for every replica or one per replica (R,) (default: uniform over V, drawn per replica).
    keep_x: True (x^1..x^{K+1} in x_history), False, or an increasing array of iteration indices k whose
    x^k are kept (long runs on large data: the curve at a few points without storing every iterate).
    gradients: a prebuilt `ActiveGradients(problem, data, params.clip)` (its Gram matrices or restricted
    features are computed once; pass it to reuse them across runs on the same data).
    """
    n, q = data.num_agents, data.dim
    if network.num_agents != n:
        raise InvalidParameterError(f"network has {network.num_agents} agents but the data are split over {n}")
    if params.alpha.shape != (n,):
        raise InvalidParameterError(f"alpha must have one stepsize per agent ({n}); got shape {params.alpha.shape}")
    replicas = require_positive_int("replicas", replicas)
    if horizon is None and plf_target is None:
        raise InvalidParameterError("give a horizon K or a plf_target (the stopping rule of Algorithm 1)")
    if plf_target is not None:
        require_positive_int("plf_target", plf_target)
    max_iterations = require_positive_int("horizon", horizon) if horizon is not None else None
    if gradients is None:
        gradients = ActiveGradients(problem, data, params.clip)
    elif gradients.problem != problem or gradients.data is not data or gradients.clip != params.clip:
        raise InvalidParameterError("gradients must be built for this run's problem, data and params.clip")
    P = validate_transition_matrix(uniform_transition_matrix(network) if transition is None else transition, network)
    cumulative = np.cumsum(P, axis=1)
    cumulative[:, -1] = np.inf  # guards the last bin against rounding in the row sums

    x = np.broadcast_to(np.zeros(q) if x1 is None else np.asarray(x1, dtype=float), (replicas, q)).copy()
    y = np.broadcast_to(x[:, None, :] if y1 is None else np.asarray(y1, dtype=float), (replicas, n, q)).copy()
    x_initial, y_initial = x.copy(), y.copy()
    lam = np.zeros((replicas, n, q))
    u = np.zeros((replicas, q))           # exact running sum sum_j lam_j (7e)
    u_tilde = np.zeros((replicas, q))     # the received copy (u~^1 = u^1 = 0, spec §6)
    counts = np.zeros((replicas, n), dtype=np.int64)
    rho_spent = np.zeros((replicas, n))
    rows = np.arange(replicas)
    holder = (rng.integers(0, n, replicas) if first_holder is None
              else np.broadcast_to(np.asarray(first_holder, dtype=int), (replicas,)).copy())
    running = np.ones(replicas, dtype=bool)
    always, transcript = ("holders", "counts", "active"), ("receivers", "u_sent", "x_sent", "noise_std")
    record: dict[str, list] = {key: [] for key in always + (transcript if keep_transcript else ())}
    keep_at = None if isinstance(keep_x, bool) else set(int(k) for k in np.asarray(keep_x).ravel())
    x_history = [x.copy()] if (keep_x is True or (keep_at is not None and 1 in keep_at)) else ([] if keep_at is not None else None)
    alpha, beta = params.alpha, params.beta
    noisy, literal = params.noise.sigma1 > 0, params.u_mode == "literal"
    eps = np.empty((replicas, q))
    k = 0
    # The arithmetic of each line is that of the formula beside it, term for term (sums and products
    # reordered only where IEEE arithmetic is commutative), computed in place to spare temporaries.
    while np.any(running) and (max_iterations is None or k < max_iterations):
        k += 1
        lam_i, y_i = lam[rows, holder], y[rows, holder]
        lam_half = np.subtract(x, y_i)
        lam_half *= beta
        lam_half += lam_i                                                                     # (7a)
        step = u_tilde + lam_half
        step -= lam_i
        x_new = problem.prox_scaled_r(np.subtract(x, step, out=step), n)                      # (7b) with u~^k (Alg. 1)
        y_new = gradients(y_i, holder)
        y_new -= lam_half
        y_new *= alpha[holder, None]
        np.subtract(y_i, y_new, out=y_new)                                                    # (7c)
        lam_new = np.subtract(x_new, x)
        lam_new -= y_new - y_i
        lam_new *= beta
        lam_new += lam_half                                                                   # (7d)
        counts[rows, holder] += running
        std = params.noise.std(counts[rows, holder]) if noisy else np.zeros(replicas)
        rng.standard_normal(out=eps)
        eps *= std[:, None]
        u_next = u + lam_new
        u_next -= lam_i                                                                       # (7e), exact sum
        if literal:
            u_tilde_next = u_next - eps                                                       # then u~ = u - eps^k
        else:
            u_tilde_next = u_tilde + lam_new
            u_tilde_next -= lam_i
            u_tilde_next -= eps
        receiver = (rng.random(replicas)[:, None] < cumulative[holder]).argmax(axis=1)        # Alg. 1 line 5
        if noisy:
            rho_spent[rows, holder] += running * params.sensitivity_bound**2 / (2.0 * std**2)  # Lemma 6 form
        if running.all():
            lam[rows, holder], y[rows, holder] = lam_new, y_new
            x, u, u_tilde = x_new, u_next, u_tilde_next
        else:  # frozen replicas keep their state
            keep = running[:, None]
            lam[rows, holder] = np.where(keep, lam_new, lam_i)
            y[rows, holder] = np.where(keep, y_new, y_i)
            x = np.where(keep, x_new, x)
            u = np.where(keep, u_next, u)   # the exact sum, tracked for the literal reading and checks
            u_tilde = np.where(keep, u_tilde_next, u_tilde)
        values = {"holders": holder, "counts": counts[rows, holder], "active": running, "receivers": receiver,
                  "u_sent": u_tilde, "x_sent": x, "noise_std": std}
        for key in record:
            record[key].append(np.array(values[key]))
        if keep_x is True or (keep_at is not None and k + 1 in keep_at):
            x_history.append(x.copy())
        holder = np.where(running, receiver, holder)
        if plf_target is not None:
            running = running & (counts.max(axis=1) < plf_target)
    stacked = {key: np.stack(value) for key, value in record.items()}
    no_messages = np.empty((0, replicas, q))
    return RelayRun(
        holders=stacked["holders"], receivers=stacked.get("receivers", np.empty((0, replicas), dtype=int)),
        u_sent=stacked.get("u_sent", no_messages), x_sent=stacked.get("x_sent", no_messages),
        counts=stacked["counts"], noise_std=stacked.get("noise_std", np.empty((0, replicas))), active=stacked["active"],
        x_initial=x_initial, y_initial=y_initial, x_final=x, y_final=y, lam_final=lam, rho_spent=rho_spent,
        x_history=np.stack(x_history) if x_history else None)


# ----- noise calibration (spec §3.6: Theorem 4 and Proposition 3 inverted) -----
def geometric_total(first: float, decay: float, count) -> np.ndarray:
    """sum_{t=1}^{count} first * decay^(t-1) = first (R^xi - 1)/(R - 1) (Theorem 4's sum, v1:L466)."""
    count = np.asarray(count, dtype=float)
    return first * count if decay == 1 else first * (decay**count - 1.0) / (decay - 1.0)


def sigma1_for_budget(epsilon: float, delta: float, plf: int, decay: float, sensitivity: float) -> float:
    """sigma_1 such that a run whose busiest agent is activated `plf` times spends exactly (epsilon, delta)
    by Theorem 4: rho_1 = S* (R - 1)/(R^xi - 1), sigma_1^2 = Delta^2 / (2 rho_1) (Lemma 6 with Delta = 4 alpha beta c
    gives sigma_1^2 = 8 alpha^2 beta^2 c^2 / rho_1)."""
    require_positive_int("plf", plf)
    require_positive("sensitivity", sensitivity, "the Gaussian mechanism")
    rho1 = zcdp_from_dp(epsilon, delta) / float(geometric_total(1.0, decay, plf))  # Prop. 3 (v1:L412) solved for rho
    return float(np.sqrt(sensitivity**2 / (2.0 * rho1)))


def theorem4_epsilon(rho1: float, decay: float, plf, delta: float) -> np.ndarray:
    """epsilon = S + 2 sqrt(S ln(1/delta)), S = rho_1 (R^xi - 1)/(R - 1) (Theorem 4, v1:L458-L468, as printed)."""
    total = geometric_total(rho1, decay, plf)
    return total + 2.0 * np.sqrt(total * np.log(1.0 / delta))


def lemma5_sensitivity(alpha, beta: float, c: float) -> float:
    """Delta = 4 alpha beta c with alpha = max_i alpha_i (Lemma 5, v1:L424-L436, as printed)."""
    return 4.0 * float(np.max(alpha)) * beta * c


def calibrated_params(alpha, num_agents: int, *, epsilon: float | None, delta: float, plf: int, decay: float,
                      clip: float | None, gradient_bound: float | None = None, u_mode: str = "literal") -> RecalParams:
    """DP-RECAL's parameters as the paper calibrates them (spec §6): beta = 1/(2(n+1)), Lemma 5's Delta = 4 alpha beta c
    with c = `gradient_bound` (the clip unless given), and sigma_1 spending (epsilon, delta) over `plf` activations by
    Theorem 4 (0, i.e. RECAL, when epsilon is None); per-sample gradients clipped to `clip`."""
    beta = paper_beta(num_agents)
    sensitivity = lemma5_sensitivity(alpha, beta, clip if gradient_bound is None else gradient_bound)
    sigma1 = 0.0 if epsilon is None else sigma1_for_budget(epsilon, delta, plf, decay, sensitivity)
    return RecalParams(alpha, beta, RelayNoise(sigma1, decay), u_mode=u_mode, clip=clip, sensitivity_bound=sensitivity)
