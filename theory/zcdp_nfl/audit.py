"""Empirical privacy audits of zCDP-NFL (Theorem I, Corollary, Lemma I) as the adversary sees it.

Threat model (seeds/004 L26, L28): honest-but-curious clients and eavesdroppers, and an adversary
that "may aggregate all the exchanged messages". The audited observation is therefore every message
of the run: the broadcasts of all clients at every iteration. The score is the exact log-likelihood
ratio of that whole transcript: given the history, every message but the target client's has the
same density under both neighbouring datasets (the other clients' data and noise do not depend on
the target's record), so the LLR is the sum over iterations of the Gaussian LLR of the target's
broadcast, with its means under D and D' recomputed from the observed history (Neyman-Pearson: the
most powerful score; any score gives valid bounds).

Neighbouring datasets (Definition I, L104-L110: replace one sample of one client): a canary at the
data bound. LAD: (x_c, +Y) vs (x_c, -Y) with ||x_c|| = c1 and Y huge, so the canary's subgradients
are -x_c and +x_c at every iterate and Lemma I's bound is attained. Squared loss: the same canary
with a residual-sized Y; with `clip` the per-sample gradients are clipped to c1 (Assumption 1
enforced); without it (the experiments' setting) c1 is only a declared constant.

The audit instance is small (a network of 10 clients) so that tens of thousands of whole runs fit
in seconds; the guarantee under test holds for every instance, so a small one is a valid test case.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpverify.algorithms.core.network import random_connected_network
from dpverify.algorithms.core.privacy import corollary_epsilon, dynamic_zcdp_total, zcdp_to_dp
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.algorithms.core.synthetic import noisy_linear_observations
from dpverify.algorithms.zcdp_nfl.algorithm import (
    StepSchedule,
    ZcdpNflParams,
    ZcdpSchedule,
    lemma1_sensitivity,
    primal_update,
    run_zcdp_nfl,
)
from dpverify.theory.audit import AuditResult, PrivacyClaim, ProbeResult, accounting, audit, sensitivity_probe
from dpverify.theory.claims import Measurement
from dpverify.theory.execution import CheckContext, task_seed_sequence
from dpverify.theory.zcdp_nfl.instances import zcdp_budget
from dpverify.theory.zcdp_nfl.numerics import settings_of

AUDIT_AGENTS, AUDIT_EDGES, AUDIT_SAMPLES_PER_AGENT, AUDIT_DIM = 10, 15, 20, 2  # default: small audit instance
AUDIT_HORIZON = 50               # default: releases per audited transcript
AUDIT_EPSILON = 1.0              # default: the audited total budget (eps, with the experiments' delta)
TARGET = 0                       # the client whose record changes
LAD_CANARY_TARGET = 1e6          # |Y| of the LAD canary: residual sign fixed at every iterate
SQUARED_CANARY_TARGET = 10.0     # |Y| of the squared-loss canary: a large but plausible residual
SAMPLES = {"quick": 20_000, "paper": 200_000}   # whole runs per side
CHUNK = 5_000                    # runs per batched call of the sampler
RELEASE = AUDIT_HORIZON // 2     # the iteration of the per-iteration (single release) audit


def replace_one_adjacent(first: LocalData, second: LocalData) -> bool:
    """Definition I (L104-L110): the datasets differ in exactly one sample of one client."""
    if first.features.shape != second.features.shape:
        return False
    differs = np.any(first.features != second.features, axis=-1) | (first.targets != second.targets)
    return int(differs.sum()) == 1


@dataclass(frozen=True)
class AuditSetup:
    problem: Problem
    network: object
    params: ZcdpNflParams
    neighbours: tuple[LocalData, LocalData]
    phi1: float
    delta: float


def audit_setup(context: CheckContext, loss: str, clip: bool, subgradient_point: str = "broadcast") -> AuditSetup:
    """The audit instance with the experiments' algorithm parameters (rho, eta, tau, delta, c1)."""
    settings = settings_of({**context.parameters["figure-2"], "horizon": AUDIT_HORIZON})
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, "zcdp-nfl/audit/instance"))
    network = random_connected_network(AUDIT_AGENTS, AUDIT_EDGES, rng)
    data, _ = noisy_linear_observations(AUDIT_AGENTS, AUDIT_SAMPLES_PER_AGENT, AUDIT_DIM, rng)
    problem = Problem("absolute", "none", 1.0) if loss == "absolute" else Problem("squared", "l2", 1.0)
    canary = np.full(AUDIT_DIM, settings.c1 / np.sqrt(AUDIT_DIM))  # ||x_c|| = c1, at the data bound
    target = LAD_CANARY_TARGET if loss == "absolute" else SQUARED_CANARY_TARGET
    last = AUDIT_SAMPLES_PER_AGENT - 1
    neighbours = (data.replace_sample(TARGET, last, canary, target), data.replace_sample(TARGET, last, canary, -target))
    _, phi1 = zcdp_budget(AUDIT_EPSILON, settings)
    params = ZcdpNflParams(rho=settings.rho, step=StepSchedule(settings.eta0, settings.eta_power), c1=settings.c1,
                           noise=ZcdpSchedule(phi1, settings.tau), clip=clip, subgradient_point=subgradient_point)
    return AuditSetup(problem, network, params, neighbours, phi1, settings.delta)


def target_path(setup: AuditSetup, history: np.ndarray, data: LocalData) -> np.ndarray:
    """The target's pre-noise updates w_k^(n), n = 1..T, under `data`, given the observed broadcasts
    history (T+1, R, N, d): (T, R, d). Everything else is post-processing of the messages: the dual
    (eq. (9): gamma^(n-1) = rho L sum_{0<s<n} tw^(s)) and, in the `primal` reading of (25)-(26)
    (R' at the un-noised w_k), the previous updates, recomputed along the way (w^(0) = 0)."""
    params, problem, network = setup.params, setup.problem, setup.network
    clip = params.c1 if params.clip else None
    received = np.cumsum(history, axis=0) - history[0]
    primal, path = np.zeros(history.shape[1:]), []
    for n in range(1, history.shape[0]):  # a loop over iterations; replicas are batched
        dual = params.rho * np.einsum("kl,rld->rkd", network.laplacian, received[n - 1])
        regularizer_point = history[n - 1] if params.subgradient_point == "broadcast" else primal
        gradient = problem.loss_subgradient(history[n - 1], data, clip) + \
            problem.lam / network.num_agents * problem.regularizer_subgradient(regularizer_point)
        primal = primal_update(history[n - 1], dual, gradient, network, params.rho, params.step.eta(n))
        path.append(primal[:, TARGET])
    return np.stack(path)


def _canary_subgradient(setup: AuditSetup, point: np.ndarray, dataset: LocalData) -> np.ndarray:
    """l'(canary; point) of the target's last sample, clipped to c1 when `clip` (spec 2.6): (R, d)."""
    sample = LocalData(dataset.features[TARGET, -1:][None], dataset.targets[TARGET, -1:][None])
    gradient = setup.problem.per_sample_subgradients(point[:, None, :], sample)[:, 0, 0]
    if setup.params.clip:
        norms = np.linalg.norm(gradient, axis=-1, keepdims=True)
        gradient = gradient * np.minimum(1.0, setup.params.c1 / np.maximum(norms, np.finfo(float).tiny))
    return gradient


def transcript_llr(setup: AuditSetup, trajectory, sampled: LocalData) -> np.ndarray:
    """LLR log p_D / p_D' of the whole transcript of a run on `sampled` (one of the neighbours): (R,).
    The target's means under both datasets are recomputed from the messages (`target_path`). In the
    default reading the shortcut is exact and cheap: the mean under the sampled dataset is the run's
    pre-noise iterate, and the other differs only through the canary's term in (7),
    w_other - w_sampled = -(l'_other - l'_sampled)/(M den)."""
    data, neighbour = setup.neighbours
    if setup.params.subgradient_point != "broadcast":
        means = {id(d): target_path(setup, trajectory.broadcast, d) for d in (data, neighbour)}
    else:
        other = neighbour if sampled is data else data
        points = trajectory.broadcast[:-1, :, TARGET]                           # tilde w_k^(n-1), n = 1..T
        n = np.arange(1, trajectory.broadcast.shape[0])
        eta = np.array([setup.params.step.eta(k) for k in n])
        denominator = 1.0 / eta + 2.0 * setup.params.rho * setup.network.degrees[TARGET]
        shift = np.stack([_canary_subgradient(setup, p, sampled) - _canary_subgradient(setup, p, other) for p in points])
        mean_sampled = trajectory.primal[1:, :, TARGET]
        means = {id(sampled): mean_sampled,
                 id(other): mean_sampled + shift / (AUDIT_SAMPLES_PER_AGENT * denominator[:, None, None])}
    observed = trajectory.broadcast[1:, :, TARGET]
    variances = trajectory.variances[1:, TARGET][:, None]
    return np.sum((np.sum((observed - means[id(neighbour)]) ** 2, -1) - np.sum((observed - means[id(data)]) ** 2, -1))
                  / (2 * variances), axis=0)


def transcript_sampler(setup: AuditSetup):
    def sample(dataset: LocalData, count: int, rng: np.random.Generator) -> np.ndarray:
        trajectory = run_zcdp_nfl(setup.problem, dataset, setup.network, setup.params, horizon=AUDIT_HORIZON,
                                  replicas=count, rng=rng)
        return transcript_llr(setup, trajectory, dataset)
    return sample


def release_sampler(setup: AuditSetup, history: np.ndarray, variance: float):
    """One release (iteration RELEASE) of the target given a fixed observed history: Theorem I's
    per-iteration guarantee. Returns the Gaussian LLR of each sample (the exact score)."""
    data, neighbour = setup.neighbours
    mean = target_path(setup, history[:RELEASE + 1], data)[-1, 0]
    other = target_path(setup, history[:RELEASE + 1], neighbour)[-1, 0]

    def sample(dataset: LocalData, count: int, rng: np.random.Generator) -> np.ndarray:
        centre = mean if dataset is data else other
        observed = centre + np.sqrt(variance) * rng.standard_normal((count, AUDIT_DIM))
        return (np.sum((observed - other) ** 2, -1) - np.sum((observed - mean) ** 2, -1)) / (2 * variance)
    return sample


def _history_run(setup: AuditSetup, context: CheckContext):
    """One run on the first neighbour: the observed history of the per-release audits and probes, and a ledger."""
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, "zcdp-nfl/audit/history"))
    return run_zcdp_nfl(setup.problem, setup.neighbours[0], setup.network, setup.params, horizon=AUDIT_HORIZON,
                        replicas=1, rng=rng)


def _history(setup: AuditSetup, context: CheckContext):
    trajectory = _history_run(setup, context)
    return trajectory.broadcast, trajectory.variances


def _samples(context: CheckContext) -> int:
    return context.audit_samples or SAMPLES["quick" if context.is_quick else "paper"]


def _audit_measurement(result: AuditResult) -> Measurement:
    """An audit as a measurement for the rule audit_lower_bounds: each claimed quantity (eps, rho)
    with its lower bound."""
    claimed = {"epsilon": (result.epsilon_lower_bound, result.claim.epsilon),
               "rho": (result.rho_lower_bound, result.claim.rho)}
    evidence = result.evidence()
    return Measurement(evidence.summary, {**evidence.values, "lower_bounds": {
        name: bounds for name, bounds in claimed.items() if bounds[1] is not None}})


def _probe_measurement(result: ProbeResult, summary: str, values: dict) -> Measurement:
    """A sensitivity probe as a measurement for the rule audit_lower_bounds: the largest witnessed
    ||w_D - w_D'|| / Delta(n) is a lower bound on the sensitivity, claimed to be at most 1 (Lemma I)."""
    return Measurement(summary, {**values, "lower_bounds": {
        "||w_D - w_D'|| / Delta(n)": (result.max_distance, result.claimed_sensitivity)}})


def _audit_result(context: CheckContext, sampler, claim: PrivacyClaim, setup: AuditSetup, key: str) -> AuditResult:
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"zcdp-nfl/audit/{key}"))
    return audit(sampler, setup.neighbours, claim, samples=_samples(context), confidence=context.audit_confidence,
                 rng=rng, adjacency=replace_one_adjacent, chunk_size=CHUNK)


def _run_audit(context: CheckContext, sampler, claim: PrivacyClaim, setup: AuditSetup, key: str) -> Measurement:
    return _audit_measurement(_audit_result(context, sampler, claim, setup, key))


def audit_release(loss: str, clip: bool):
    """Theorem I (L125-L132): the release at one iteration is varphi^(n)-zCDP given the history."""

    def check(context: CheckContext) -> Measurement:
        setup = audit_setup(context, loss, clip)
        history, variances = _history(setup, context)
        claim = PrivacyClaim(rho=float(setup.phi1 * setup.params.noise.tau ** -(RELEASE - 1)))
        result = _audit_result(context, release_sampler(setup, history, float(variances[RELEASE, TARGET])), claim,
                               setup, f"release/{loss}/clip={clip}")
        ledger = accounting.ledger_at(_history_run(setup, context).ledger, RELEASE)
        delta = setup.delta
        row = accounting.privacy_row(
            f"one release (n = {RELEASE}) given the history, {loss} loss{', clipped' if clip else ''}, {AUDIT_AGENTS} clients",
            delta, "the experiments' delta (figure-2 parameters); Theorem I states rho only",
            paper=accounting.cell(zcdp_to_dp(claim.rho, delta), f"Theorem I's varphi^(n) = {claim.rho:.4g} (L125-L132) "
                                  "converted as the Corollary converts (Bun & Steinke Prop. 1.3)"),
            accountant=accounting.accountant_cell(accounting.ledger_releases(ledger, TARGET), delta),
            ledger=accounting.ledger_cell(ledger, delta, TARGET),
            audit=accounting.audit_cell([result], delta, "exact Gaussian LLR of the release; the audit's events, "
                                        "chosen for its rho bound, read at the row's delta"))
        measurement = _audit_measurement(result)
        return Measurement(measurement.summary, {**measurement.values, accounting.PRIVACY_KEY: [row]})
    return check


def audit_transcript(loss: str, clip: bool, reading: str = "broadcast"):
    """Corollary (L134-L140) against the whole message transcript (L28's adversary): the run is
    (eps, delta)-DP with the Corollary's eps, and rho_total-zCDP (Theorem I composed, App. C)."""

    def check(context: CheckContext) -> Measurement:
        setup = audit_setup(context, loss, clip, reading)
        tau = setup.params.noise.tau
        claim = PrivacyClaim(epsilon=float(corollary_epsilon(setup.phi1, tau, AUDIT_HORIZON, setup.delta)),
                             delta=setup.delta, rho=float(dynamic_zcdp_total(setup.phi1, tau, AUDIT_HORIZON)))
        result = _audit_result(context, transcript_sampler(setup), claim, setup, f"transcript/{loss}/clip={clip}/{reading}")
        measurement = _audit_measurement(result)
        row = _transcript_row(setup, _history_run(setup, context).ledger, result,
                              f"whole transcript, T = {AUDIT_HORIZON}, {loss} loss{', clipped' if clip else ''}"
                              f"{'' if reading == 'broadcast' else f', reading {reading}'}, {AUDIT_AGENTS} clients")
        return Measurement(measurement.summary, {**measurement.values, accounting.PRIVACY_KEY: [row]})
    return check


def _transcript_row(setup: AuditSetup, ledger, result: AuditResult, setting: str) -> dict:
    """The privacy-table row of a whole-transcript audit: the target client's T releases (the other
    clients' messages do not depend on its record), at the experiments' delta."""
    delta = setup.delta
    return accounting.privacy_row(
        setting, delta, "the experiments' delta (figure-2 parameters)",
        paper=accounting.cell(result.claim.epsilon, "Corollary (L134-L140): rho_total + 2 sqrt(rho_total log(1/delta)), "
                              f"rho_total = {result.claim.rho:.4g} by App. C's sum"),
        accountant=accounting.accountant_cell(accounting.ledger_releases(ledger, TARGET), delta),
        ledger=accounting.ledger_cell(ledger, delta, TARGET),
        audit=accounting.audit_cell([result], delta, "exact LLR of the whole transcript, canary at the data bound"))


def _lemma1_bounds(setup: AuditSetup) -> np.ndarray:
    """Lemma I's Delta(n) of the target, n = 1..T: (T,)."""
    return np.array([lemma1_sensitivity(setup.params.rho, setup.params.c1, setup.network, setup.params.step.eta(n),
                                        AUDIT_SAMPLES_PER_AGENT)[TARGET] for n in range(1, AUDIT_HORIZON + 1)])


def _normalized_updates(setup: AuditSetup, context: CheckContext):
    """dataset -> the target's pre-noise updates at n = 1..T from one fixed observed history, each in
    units of Lemma I's bound Delta(n) (so a probe against sensitivity 1 tests (11) at every n)."""
    history, _ = _history(setup, context)
    bounds = _lemma1_bounds(setup)

    def normalized_updates(dataset: LocalData) -> np.ndarray:
        return target_path(setup, history, dataset)[:, 0] / bounds[:, None]
    return normalized_updates


def probe_sensitivity(loss: str, clip: bool, reading: str = "broadcast"):
    """Lemma I (L118-L120) by a sensitivity probe: the target's pre-noise update under D and D' from
    the SAME observed history (Definition I compares the two updates with identical inputs; running
    both datasets with identical noise would let the histories drift apart, which adaptive
    composition does not charge to one release), at every iteration of a run."""

    def check(context: CheckContext) -> Measurement:
        setup = audit_setup(context, loss, clip, reading)
        result = sensitivity_probe(_normalized_updates(setup, context), setup.neighbours, 1.0)
        worst = result.witness_index[-1] + 1
        summary = (f"max ||w_D - w_D'|| / Delta(n) = {result.max_distance:.6g} at n = {worst} over {AUDIT_HORIZON} "
                   f"iterations: {'REFUTED (the bound of Lemma I is exceeded)' if result.refuted else 'not refuted on this history'}")
        return _probe_measurement(result, summary, {"max_ratio_to_bound": result.max_distance, "at_iteration": worst,
                                                    "loss": loss, "clip": clip})
    return check


RANDOM_NEIGHBOURS = {"quick": 200, "paper": 2000}  # default: replacement records tried by the random search
RANDOM_TARGET_SCALE = 10.0                          # default: |y'| of the random records up to this (y is unbounded)


def random_neighbour_pairs(setup: AuditSetup, count: int, rng: np.random.Generator):
    """Random neighbours under Definition I: the target's last record replaced by (x', y'), x' uniform
    in the data ball ||x'|| <= c1 (Assumption 1's bound for LAD), y' uniform in [-10, 10]."""
    data = setup.neighbours[0]
    last = AUDIT_SAMPLES_PER_AGENT - 1
    for _ in range(count):
        direction = rng.standard_normal(AUDIT_DIM)
        radius = setup.params.c1 * rng.uniform() ** (1 / AUDIT_DIM)
        x = radius * direction / np.linalg.norm(direction)
        yield data, data.replace_sample(TARGET, last, x, rng.uniform(-RANDOM_TARGET_SCALE, RANDOM_TARGET_SCALE))


def probe_random_neighbours(loss: str, clip: bool):
    """Lemma I against a randomized search over neighbouring datasets (not only the canary): the
    largest ||w_D - w_D'|| / Delta(n) over random replacement records and every iteration of a run."""

    def check(context: CheckContext) -> Measurement:
        setup = audit_setup(context, loss, clip)
        count = RANDOM_NEIGHBOURS["quick" if context.is_quick else "paper"]
        rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"zcdp-nfl/audit/random/{loss}/{clip}"))
        pairs = list(random_neighbour_pairs(setup, count, rng))
        result = sensitivity_probe(_normalized_updates(setup, context), pairs, 1.0)
        summary = (f"max ||w_D - w_D'|| / Delta(n) = {result.max_distance:.4g} over {count} random neighbours x "
                   f"{AUDIT_HORIZON} iterations: " + ("REFUTED (Lemma I's bound exceeded)" if result.refuted
                                                      else f"not refuted at {count} neighbours"))
        return _probe_measurement(result, summary, {"max_ratio_to_bound": result.max_distance, "neighbours": count,
                                                    "witness": list(result.witness_index), "loss": loss, "clip": clip})
    return check


# ---- a probe aimed at the leak of the un-noised state (reading `primal` of (25)-(26)) ------------------------------
# Where R' is taken at the un-noised w_k^(n-1), which depends on the record, the update of n carries the previous
# difference w_D^(n-1) - w_D'^(n-1) through (7)'s regulariser term on top of the canary's own gradient difference;
# with an l2 R the carry is linear, -(2 lam / N) / (1/eta + 2 rho |N_k|) per step, so the differences of earlier
# releases add up in a release when the canary's gradient difference switches on and off at the right iterations.
# The search drives that switch through the (public, any-value-possible under Gaussian noise) history.
LEAK_WINDOW = 8   # default: every on/off pattern of the 8 iterations before each release (256 histories); a difference
#                   s iterations back reaches a release through s carries (about 0.06-0.13 each here), so patterns
#                   further back move the ratio by < 1e-8. Plausible 4-12 (cost 2^window histories).


def on_off_patterns(window: int, length: int) -> np.ndarray:
    """(length, 2^window) booleans, column r the binary digits of r repeated with period `window`: the `window`
    entries before any position show each of the 2^window on/off patterns in some column."""
    bits = (np.arange(2 ** window)[None, :] >> np.arange(window)[:, None]) & 1
    return bits[np.arange(length) % window].astype(bool)


def steered_histories(history: np.ndarray, direction: np.ndarray, on: float, off: float, patterns: np.ndarray) -> np.ndarray:
    """The observed history (T+1, 1, N, d) once per column of `patterns` (T, R): the target's broadcast at iterations
    1..T moved along the unit `direction` to the coordinate `on` where the pattern is set and `off` where it is not,
    its orthogonal part kept; the initial broadcast (iteration 0) as observed. (T+1, R, N, d)."""
    histories = np.repeat(history, patterns.shape[1], axis=1)
    broadcasts = histories[1:, :, TARGET]
    coordinate = np.where(patterns, on, off)[..., None]
    histories[1:, :, TARGET] = broadcasts + (coordinate - (broadcasts @ direction)[..., None]) * direction
    return histories


def leak_search(pre_noise, neighbours, history: np.ndarray, direction: np.ndarray, on: float, off: float,
                bounds: np.ndarray, window: int = LEAK_WINDOW):
    """The largest ||pre_noise(D) - pre_noise(D')|| / bounds[n] over every release n and every steered history
    (`steered_histories` of the `on_off_patterns`). pre_noise(histories, dataset) -> (T, R, d), the updates
    n = 1..T given each history. Returns the sensitivity probe's result (witness (pair, n - 1, history)), the
    patterns and the histories."""
    patterns = on_off_patterns(window, history.shape[0] - 1)
    histories = steered_histories(history, direction, on, off, patterns)
    result = sensitivity_probe(lambda dataset: pre_noise(histories, dataset) / bounds[:, None, None], neighbours, 1.0)
    return result, patterns, histories


def probe_state_leak(loss: str = "squared", clip: bool = True, reading: str = "primal"):
    """Lemma I per release under a reading where the private state enters later updates (`primal`: R' at the
    un-noised w_k, (25)-(26)): the leak_search over histories where the target's broadcast sits at the canary's
    centre (x_c.w = 0: D's and D''s clipped gradients are opposite, their difference 2 c1) or beyond it
    (x_c.w = 2 y_c: both clipped alike, no difference), every pattern over the LEAK_WINDOW iterations before each
    release. The canary is the audit's feature x_c (||x_c|| = c1) with the label +-y_c, y_c = c1 / ||x_c||^2: twice the
    smallest label at which the squared loss's clipped gradients at the centre are opposite (|l'| = 2 |y| ||x||^2
    there), which keeps the steered broadcasts near the observed ones. Defined for the clipped squared loss (what
    makes 'beyond' switch the difference off)."""

    def check(context: CheckContext) -> Measurement:
        setup = audit_setup(context, loss, clip, reading)
        history, variances = _history(setup, context)
        data, last = setup.neighbours[0], AUDIT_SAMPLES_PER_AGENT - 1
        canary = data.features[TARGET, last]
        label = setup.params.c1 / float(canary @ canary)
        neighbours = (data.replace_sample(TARGET, last, canary, label), data.replace_sample(TARGET, last, canary, -label))
        direction, beyond = canary / np.linalg.norm(canary), 2 * label / float(np.linalg.norm(canary))
        result, patterns, histories = leak_search(lambda h, d: target_path(setup, h, d), neighbours, history,
                                                  direction, 0.0, beyond, _lemma1_bounds(setup))
        _, step, column = result.witness_index
        n = step + 1
        window = range(max(0, n - LEAK_WINDOW), n)                  # the broadcasts release n is computed from
        coordinates = histories[window.start:n, column, TARGET] @ direction
        centred = [i for i, c in zip(window, coordinates) if abs(c) < beyond / 2]
        moved = (histories[1:n, column, TARGET] - history[1:n, 0, TARGET]) @ direction
        sigmas = float(np.max(np.abs(moved) / np.sqrt(variances[1:n, TARGET]), initial=0.0))
        searched = (f"{patterns.shape[1]} histories (every on/off pattern of the {LEAK_WINDOW} iterations before each "
                    f"release: the target's broadcast at the canary's centre x_c.w = 0, where the clipped gradients of "
                    f"(x_c, +-{label:g}) are opposite, or beyond it at x_c.w = {beyond:g}, where they agree; the other "
                    f"clients as observed) x {AUDIT_HORIZON} releases")
        outcome = (f"REFUTED: Lemma I's bound exceeded by {result.max_distance - 1:.3g} of itself; witness: the target's "
                   f"broadcasts {window.start}..{n - 1} at the centre at {centred} and beyond it otherwise, up to "
                   f"{sigmas:.3g} noise standard deviations from the observed run's" if result.refuted
                   else "not refuted by this search")
        summary = f"max ||w_D - w_D'|| / Delta(n) = {result.max_distance:.9g} at n = {n} over {searched}: {outcome}"
        return _probe_measurement(result, summary, {
            "max_ratio_to_bound": result.max_distance, "at_iteration": n, "histories": int(patterns.shape[1]),
            "window": LEAK_WINDOW, "centred_broadcasts": centred, "steered_noise_sds": sigmas, "canary_label": label,
            "loss": loss, "clip": clip, "reading": reading})
    return check
