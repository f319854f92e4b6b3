"""Privacy checks of DPDO-NC (Lemma 1, Theorem 1, Remark 3) on the algorithm as implemented.

Threat model (Definition 4, L190-L198): the adversary observes every broadcast Q_t = X_t + Xi_t of
every node at every round, and X_1 (public). Given the observations, the execution is determined
(L190): we run once under F, record Q_1..Q_{t-1}, and replay under F and F' (`replay`), which is how
Definition 5 compares X_t and X_t'. Neighbouring costs (Definition 3, L186): node 0's cost replaced by
<c, x> under F and -<c, x> under F', ||c|| = theta along (1, 1) (the worst case of Lemma 1's bound,
gradients bounded by theta as the calibration assumes), the other nodes' localization costs unchanged.
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.dpdo_nc.algorithm import (
    NodeReplaced,
    paper_schedule,
    replay,
    run_dpdo_nc,
)
from dpverify.theory.audit import PrivacyClaim, accounting, audit, sensitivity_probe
from dpverify.theory.claims import Measurement
from dpverify.theory.dpdo_nc.instances import instance_of, params_of
from dpverify.theory.dpdo_nc.runs import runs as runs_of
from dpverify.theory.execution import CheckContext, task_seed_sequence

FIGURE = "figure-1"                # the experiment whose instance and parameters the audits use (Fig. 1, L503)
TARGET = 0                       # the node whose cost changes
PROBE_HISTORIES = 8              # default: independent observed histories replayed by the probe
AUDIT_ROUNDS = (2, 3, 10, 500)   # default: rounds audited (t = 1 releases the public x_1 only); t = 500 = T
SAMPLES = {"quick": 200_000, "paper": 1_000_000}  # default: outputs per side and audit
CHUNK = 100_000                  # default: outputs simulated at once (memory only; any value gives the same numbers)
SCORE_DIGITS = 9                 # default: LLR rounding (see _laplace_llr)
STEP_11_RUNS = 20                # default: runs per eps along which proof step (11) is evaluated


def _neighbours(values, theta: float | None = None):
    instance = instance_of(values)
    c = np.full(values["dim"], (values["theta"] if theta is None else theta) / np.sqrt(values["dim"]))
    return NodeReplaced(instance, TARGET, c), NodeReplaced(instance, TARGET, -c)


def _history(context: CheckContext, values, epsilon: float, replicas: int, key: str):
    costs, _ = _neighbours(values)
    params = params_of(values, epsilon, values["mirrors"][0])
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"dpdo-nc/audit/{key}/{epsilon}"))
    run = run_dpdo_nc(costs, paper_schedule(values["window"]), params, horizon=values["horizon"], replicas=replicas,
                      rng=rng, dim=values["dim"], keep=True, regret=False)
    return params, run


def _probe_epsilon(values) -> float:
    """The eps of the probe and of the horizon's privacy row: Fig. 1's second level (eps = 1), else its only one."""
    return float(values["epsilons"][1 if len(values["epsilons"]) > 1 else 0])


def _probe(context: CheckContext):
    """||X_t - X_t'||_1 / bound (8) at every round t = 1..T and, for the index-shifted reading, the
    ratio ||X_{t+1} - X_{t+1}'||_1 / (8) at t, over PROBE_HISTORIES observed histories."""
    values = context.parameters[FIGURE]
    epsilon = _probe_epsilon(values)
    params, run = _history(context, values, epsilon, PROBE_HISTORIES, "probe")
    schedule, n, dim = paper_schedule(values["window"]), values["num_agents"], values["dim"]
    horizon = values["horizon"]
    bounds = np.array([params.sensitivity_bound(t, n, dim) for t in range(1, horizon + 1)])
    neighbours = _neighbours(values)
    paths = {id(costs): replay(costs, schedule, params, run.broadcasts, run.iterates[0]) for costs in neighbours}
    shape = (horizon + 1, PROBE_HISTORIES, n * dim)

    def pre_noise(costs):  # X_t for t = 1..T, in units of (8) at the same t
        return paths[id(costs)].reshape(shape)[:horizon] / bounds[:, None, None]

    result = sensitivity_probe(pre_noise, neighbours, 1.0, norm="l1")
    first, second = (paths[id(c)].reshape(shape) for c in neighbours)
    per_round = np.abs(first - second).sum(-1).max(-1)               # (T+1,) max over histories
    shifted = float(np.max(per_round[1:] / bounds))                  # X_{t+1} against (8) at t
    return result, per_round[:horizon] / bounds, shifted, epsilon


def probe_lemma_1(context: CheckContext) -> Measurement:
    """Lemma 1 / Definition 5 (L204, L212): sup ||X_t - X_t'||_1 <= 2 sqrt(d) alpha_t theta/omega, probed
    on the implementation at every round t = 1..T under common observations."""
    result, ratios, shifted, epsilon = context.memoized("dpdo-nc/probe", lambda: _probe(context))
    t_worst = int(result.witness_index[1]) + 1
    summary = (f"max_t ||X_t - X_t'||_1 / (8) = {result.max_distance:.4f} at t = {t_worst} ({PROBE_HISTORIES} histories, "
               f"eps = {epsilon:g}, rounds 1..{ratios.size}); ratio at t = 2, 3, 10: {ratios[1]:.4f}, {ratios[2]:.4f}, {ratios[9]:.4f} "
               f"(= sqrt(t/(t-1)) when unclipped). Index-shifted reading ||X_(t+1) - X_(t+1)'||_1 / (8)(t) <= {shifted:.4f}")
    return Measurement(summary, {"max_ratio": result.max_distance, "at_round": t_worst, "ratio_t2": float(ratios[1]),
                                 "shifted_reading_max_ratio": shifted, "histories": PROBE_HISTORIES,
                                 "lower_bounds": {"||X_t - X_t'||_1 / (8)": (result.max_distance, 1.0)}})


def check_proof_step_11(context: CheckContext) -> Measurement:
    """(11), L234: ||x_{t+1}^i - z_t^i|| <= alpha_t theta/omega, obtained by setting x = z_t^i in the
    optimality condition (9), valid only for x in Omega; along the experiment's runs z_t^i (a mix of
    Laplace-perturbed broadcasts) leaves Omega. The runs are context.implementation's, STEP_11_RUNS per eps of
    Fig. 1; z_t^i = sum_j a_ij(t) q_t^j from their broadcasts (line 5), alpha_t the paper's (line 1)."""
    values = context.parameters[FIGURE]
    worst, epsilons = {}, values["epsilons"]
    all_runs = runs_of(context, values, [(float(e), f"dpdo-nc/step-11/{e}") for e in epsilons], STEP_11_RUNS)
    for epsilon, run in zip(epsilons, all_runs):
        params = run.params
        moved = np.linalg.norm(run.iterates[1:] - run.mixed, axis=-1)            # (T, R, N)
        bound = run.alphas[:, None, None] * params.theta / params.omega
        outside = np.abs(run.mixed).sum(-1) > params.radius
        worst[f"eps={epsilon:g}"] = {"max_ratio": float((moved / bound).max()),
                                     "fraction_violated": float((moved > bound * (1 + 1e-9)).mean()),
                                     "fraction_z_outside_Omega": float(outside.mean())}
    ratio = max(v["max_ratio"] for v in worst.values())
    return Measurement(f"max ||x_(t+1) - z_t|| / (alpha_t theta/omega) = {ratio:.3g} over {STEP_11_RUNS} runs x T "
                       f"rounds x {values['num_agents']} nodes per eps; violated exactly where z_t is outside Omega "
                       "(x = z_t is not admissible in (9)); "
                       + "; ".join(f"{k}: {v['fraction_violated']:.1%} of steps" for k, v in worst.items()),
                       {"excess": ratio - 1, **worst})


def paper_epsilon_hat(params, rounds, num_agents: int, dim: int) -> float:
    """Theorem 1 (seeds/002 L278-L281): eps_hat = sum over the rounds of Delta(t)/sigma_t, Delta(t) the
    bound (8); one round gives the per-time eps of Theorem 1."""
    return float(sum(params.sensitivity_bound(t, num_agents, dim) / params.sigma(t, num_agents, dim) for t in rounds))


PURE_DELTA_NOTE = "the paper claims pure eps-DP (delta = 0); compared at the harness default delta"


def _round_sampler(means: dict, sigma: float):
    def sample(costs, count: int, rng: np.random.Generator) -> np.ndarray:
        centre = means[id(costs)]
        return centre + sigma * rng.laplace(size=(count, centre.size))
    return sample


def _laplace_llr(first: np.ndarray, second: np.ndarray, sigma: float):
    """Exact log p_F(Q_t)/p_F'(Q_t) of a round's broadcasts (product of Laplace densities, (14)), rounded
    to SCORE_DIGITS: the LLR has atoms at +-sup, and unrounded its last bits split an atom by the
    float rounding pattern of q, an event that separates the two means at the ulp level (Mironov
    2012's floating-point attack on textbook Laplace), a property of float64 sampling, not of the paper."""
    return lambda q: np.round(np.sum(np.abs(q - second) - np.abs(q - first), axis=-1) / sigma, SCORE_DIGITS)


def audit_rounds(context: CheckContext) -> Measurement:
    """Theorem 1 (L253): eps-DP at each time t, audited on each round's broadcasts Q_t (all nodes)
    given a fixed observed history, for every eps of Fig. 1 and the rounds AUDIT_ROUNDS; Bonferroni
    over the audits (simultaneous confidence context.audit_confidence). The measurement carries the
    audit with the largest eps_lb / claimed eps (rule audit_lower_bounds): some audit's bound exceeds
    its claimed eps exactly when that one's does."""
    values = context.parameters[FIGURE]
    rounds = [t for t in AUDIT_ROUNDS if t <= values["horizon"]]
    epsilons = [float(e) for e in values["epsilons"]]
    samples = context.audit_samples or SAMPLES["quick" if context.is_quick else "paper"]
    confidence = 1 - (1 - context.audit_confidence) / (len(rounds) * len(epsilons))
    schedule, neighbours = paper_schedule(values["window"]), _neighbours(values)
    found, rows = {}, []
    for epsilon in epsilons:
        params, run = _history(context, values, epsilon, 1, "rounds")
        results = {}
        for t in rounds:
            means = {id(c): replay(c, schedule, params, run.broadcasts[: t - 1], run.iterates[0])[-1, 0].ravel()
                     for c in neighbours}
            sigma = float(run.sigmas[t - 1])
            first, second = (means[id(c)] for c in neighbours)
            rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"dpdo-nc/audit/round/{epsilon}/{t}"))
            result = audit(_round_sampler(means, sigma), neighbours, PrivacyClaim(epsilon=epsilon), samples=samples,
                           confidence=confidence, rng=rng, score=_laplace_llr(first, second, sigma), chunk_size=CHUNK)
            exact = float(np.abs(first - second).sum() / sigma)
            results[t] = result
            found[f"eps={epsilon:g}, t={t}"] = {"eps_lb": result.epsilon_lower_bound, "exact_loss_sup": exact,
                                                "claimed_epsilon": epsilon}
        rows.append(_round_row(values, params, run, results, accounting.COMPARISON_DELTA, context.audit_confidence))
    worst, _ = max(found.items(), key=lambda item: item[1]["eps_lb"] / item[1]["claimed_epsilon"])
    refuted = found[worst]["eps_lb"] > found[worst]["claimed_epsilon"]
    summary = (f"{len(found)} audits ({samples} samples/side each, simultaneous {context.audit_confidence:.0%}); "
               + "; ".join(f"{k}: eps_lb {v['eps_lb']:.3f} (sup loss {v['exact_loss_sup']:.3f})" for k, v in found.items())
               + (": REFUTED (a round's eps lower bound exceeds its claimed eps)" if refuted
                  else f": not refuted at {samples} samples"))
    return Measurement(summary, {"epsilon_lower_bound": found[worst]["eps_lb"], "claimed_epsilon": found[worst]["claimed_epsilon"],
                                 "audits": found, "worst": worst,
                                 "lower_bounds": {k: (v["eps_lb"], v["claimed_epsilon"]) for k, v in found.items()},
                                 accounting.PRIVACY_KEY: rows})


def _round_row(values, params, run, results: dict, delta: float, confidence: float) -> dict:
    """The privacy-table row of one eps of Fig. 1: one round's release (every round has Delta(t)/sigma_t
    = eps by the calibration, so the last audited round stands for all), its audits over the audited rounds."""
    n, dim, last = values["num_agents"], values["dim"], max(results)
    strongest = max(results, key=lambda t: accounting.audit_lower_bound_at(results[t], delta))
    ledger = accounting.ledger_at(run.ledger, last)
    return accounting.privacy_row(
        f"one round, eps = {params.epsilon:g}, all broadcasts Q_t", delta, PURE_DELTA_NOTE,
        paper=accounting.cell(paper_epsilon_hat(params, [last], n, dim), "Theorem 1 (L253-L281): Delta(t)/sigma_t with (8)"),
        accountant=accounting.accountant_cell(accounting.ledger_releases(ledger), delta),
        ledger=accounting.ledger_cell(ledger, delta),
        audit=accounting.audit_cell(list(results.values()), delta, f"largest over the audits of rounds {sorted(results)} "
                                    f"(at t = {strongest}), exact Laplace LLR score, worst-case neighbours", confidence))


HORIZON_THETA_SCALES = (1.0, 2.0)   # default: theta readings (spec P1, not given) as multiples of the TOML's theta
MIN_SENSOR_DISTANCE = 1e-9          # the replay is continuous at a transcript whose iterates keep off the sensors


def transcript_loss(first: np.ndarray, second: np.ndarray, broadcasts: np.ndarray, sigmas: np.ndarray) -> np.ndarray:
    """Per-round privacy loss ln p_F(Q_t | Q_<t) - ln p_F'(Q_t | Q_<t) (T, R) of observed transcripts
    `broadcasts` (T, R, N, d) for Definition 4's adversary (every broadcast, X_1 public; L190-L198): `first`,
    `second` are the two sides' replays on these observations (L190; x_1..x_T), the densities Laplace (14)."""
    return (np.abs(broadcasts - second).sum((-1, -2)) - np.abs(broadcasts - first).sum((-1, -2))) / sigmas[:, None]


def composition_bound(params, horizon: int, num_agents: int, dim: int) -> np.ndarray:
    """Per-round upper bounds on the privacy loss of every neighbouring pair (Definition 3, node-level) at every
    transcript, t = 1..T. Given the observations, only the changed node's iterate differs (the others mix the
    same q's and see the same costs), X_1 is public (t = 1: 0), and the step (7) is (alpha/omega)-Lipschitz in
    the gradient (omega-strong convexity, the two optimality conditions added), so ||X_t - X_t'||_1 <=
    sqrt(d) ||x_t - x_t'|| <= 2 sqrt(d) alpha_(t-1) theta/omega: Definition 5's sensitivity, (8) with alpha_(t-1);
    each round's Laplace loss is at most that over sigma_t ((14)). Holds for self_copy = noisy, per_node."""
    if params.self_copy != "noisy" or params.noise_draw != "per_node":
        return np.full(horizon, np.inf)   # not proved for the other readings (the clean copy accumulates)
    return np.array([0.0] + [params.sensitivity_bound(t - 1, num_agents, dim) / params.sigma(t, num_agents, dim)
                             for t in range(2, horizon + 1)])


def _horizon_reading(values, theta: float) -> Measurement:
    """Theorem 1's horizon claim for every eps of Fig. 1 at one theta: the exact loss of the worst pair (node 0's
    cost <c, x> vs <-c, x>, ||c|| = theta) at the noise-free transcript O* (q_t = x_t under F: every coordinate
    at the F-side mean, where each round's loss is ||X_t - X_t'||_1 / sigma_t, its maximum), beside the proved
    bound; eps_hat as the paper computes it, sum_t (8)/sigma_t (Algorithm 1 line 1: sigma_t = (8)/eps)."""
    n, dim, horizon = values["num_agents"], values["dim"], values["horizon"]
    pair, schedule = _neighbours(values, theta), paper_schedule(values["window"])
    mirror = values["mirrors"][0]
    silent = run_dpdo_nc(pair[0], schedule, params_of(values, None, mirror, theta=theta), horizon=horizon, replicas=1,
                         rng=np.random.default_rng(0), dim=dim, keep=True, regret=False)
    observed, x1 = silent.broadcasts, silent.iterates[0]
    paths = [replay(costs, schedule, params_of(values, None, mirror, theta=theta), observed, x1)[:-1] for costs in pair]
    sensors = instance_of(values).sensors
    clearance = float(min(np.linalg.norm(path[:, :, 1:] - sensors[1:], axis=-1).min() for path in paths))
    rows = {}
    for epsilon in values["epsilons"]:
        params = params_of(values, float(epsilon), mirror, theta=theta)
        sigmas = np.array([params.sigma(t, n, dim) for t in range(1, horizon + 1)])
        witness = float(transcript_loss(*paths, observed, sigmas).sum())
        rows[f"eps={epsilon:g}"] = {"eps_hat": paper_epsilon_hat(params, range(1, horizon + 1), n, dim),
                                    "witness_loss": witness,
                                    "proved_bound": float(composition_bound(params, horizon, n, dim).sum())}
    holds = all(r["proved_bound"] <= r["eps_hat"] * (1 + 1e-12) for r in rows.values())
    exceeds = [k for k, r in rows.items() if r["witness_loss"] > r["eps_hat"]]
    continuous = clearance > MIN_SENSOR_DISTANCE
    line = "; ".join(f"{k}: loss at O* {r['witness_loss']:.4f}, proved bound {r['proved_bound']:.4f}, eps_hat "
                     f"{r['eps_hat']:.4f}" for k, r in rows.items())
    summary = (f"theta = {theta:.4g}, T = {horizon}: {line}; iterates >= {clearance:.3g} from the sensors on O* (replay "
               "continuous there, so the loss exceeds its value minus any margin on an open set of transcripts, of "
               "positive probability under both sides)")
    if holds:
        summary += ": the proved bound is at most eps_hat"
    elif exceeds and continuous:
        summary += (f": the loss exceeds eps_hat on a set of positive probability ({', '.join(exceeds)}), so Definition 4 "
                    "fails for that set")
    refute_gap = "" if holds or (exceeds and continuous) else (
        "the proved bound exceeds eps_hat but this witness does not (its steps are clipped by Omega, or the replay is "
        "not continuous at O*); a witness reaching the bound would decide")
    return Measurement(summary, {"holds": holds, "theta": theta, "clearance": clearance, "per_epsilon": rows},
                       cannot_refute=refute_gap)


def exact_horizon_loss(context: CheckContext) -> Measurement:
    """Theorem 1, second part (L278-L283): over T rounds Algorithm 1 is eps_hat-DP, eps_hat = sum_t Delta(t)/sigma_t,
    decided exactly (no sampling). Privacy loss of a pair at a transcript = sum over rounds of Laplace terms, each
    <= ||X_t - X_t'||_1 / sigma_t (equality when every coordinate of q_t lies beyond both means on X_t's side), the
    means depending on earlier outputs (adaptive). Upper bound for every pair: `composition_bound`. Lower bound: one
    pair attains every round's bound at once on the noise-free transcript O* (both executions stay unclipped), and
    the loss is continuous at O*, so loss > eps_hat on an open set of transcripts, of positive probability (Laplace
    has full support): P_F(S) > exp(eps_hat) P_F'(S), a witness against Definition 4 inside Theorem 1's hypotheses
    (Assumptions 2, 4; gradients bounded by theta). eps_hat is the paper's, with (8) as Delta(t) (Algorithm 1's
    sigma_t = (8)/eps, as Theorem 2 uses it); with Definition 5's Delta(t) (alpha_(t-1) in (8)) the composition
    bound is the corrected eps_hat, which the witness attains. theta (spec P1) is read at HORIZON_THETA_SCALES x
    the default; for theta above about 3.2 x default the first steps leave Omega and this witness falls short."""
    values = context.parameters[FIGURE]
    readings = {f"theta = {scale:g} x default": _horizon_reading(values, scale * values["theta"])
                for scale in HORIZON_THETA_SCALES}
    params, run = _history(context, values, _probe_epsilon(values), 1, "ledger")
    delta, horizon = accounting.COMPARISON_DELTA, values["horizon"]
    row = accounting.privacy_row(
        f"T = {horizon} rounds, eps = {params.epsilon:g} per round, all broadcasts", delta, PURE_DELTA_NOTE,
        paper=accounting.cell(paper_epsilon_hat(params, range(1, horizon + 1), values["num_agents"], values["dim"]),
                              "Theorem 1 (L278-L281): eps_hat = sum_t Delta(t)/sigma_t with (8), basic composition"),
        accountant=accounting.accountant_cell(accounting.ledger_releases(run.ledger), delta),
        ledger=accounting.ledger_cell(run.ledger, delta),
        audit=accounting.not_applicable("decided exactly at delta = 0 (theorem-1-horizon); the witness's set of "
                                        "transcripts is too rare to bound eps at this delta"))
    first = next(iter(readings.values())).values["per_epsilon"]
    attained = all(abs(r["witness_loss"] - r["proved_bound"]) <= 1e-9 * r["proved_bound"] for r in first.values())
    return Measurement("exact whole-transcript privacy loss, Definition 4's adversary (all broadcasts, X_1 public), "
                       f"T = {horizon}, default theta, per eps: loss at O* "
                       f"{', '.join(format(r['witness_loss'], '.4f') for r in first.values())}, proved bound "
                       f"{', '.join(format(r['proved_bound'], '.4f') for r in first.values())}"
                       + (" (attained: the exact eps)" if attained else "") + ", eps_hat "
                       f"{', '.join(format(r['eps_hat'], '.4f') for r in first.values())}",
                       {accounting.PRIVACY_KEY: [row]}, readings=readings,
                       depends_on="theta (gradient bound, not given; spec P1)")
