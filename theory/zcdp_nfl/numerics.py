"""Numerical and statistical checks of zCDP-NFL on the experiments' actual instances and parameters.

Each check is `(context) -> Measurement` (its rule, declared in claims.py, decides; Theorem III's
check still decides itself). Instances are built from the experiment parameters handed down in
`context.parameters` (the TOML files of reproductions/zcdp_nfl) and seeded from the root seed and a
fixed key, so every check sees the same instance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpverify.algorithms.core.errors import InvalidDataError, NotInContract
from dpverify.algorithms.core.noise import GAUSSIAN, PrivacyLedger, Release
from dpverify.algorithms.core.privacy import dynamic_zcdp_total, gaussian_zcdp, zcdp_to_dp
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.zcdp_nfl import contract
from dpverify.algorithms.zcdp_nfl.algorithm import (
    ClassicalGaussianSchedule,
    ZcdpSchedule,
    lemma1_sensitivity,
    primal_update,
    sensitivity_bound,
)
from dpverify.theory.claims import Measurement, holds
from dpverify.theory.door.implementations import REFERENCE, resolve
from dpverify.theory.execution import CheckContext, Task, task_seed_sequence
from dpverify.theory.instruments.stats import (
    SIGNIFICANCE,
    fit_rate_exponent,
    mann_kendall,
    one_sided_upper_mean_bound,
    rate_power_from_standard_error,
)
from dpverify.theory.verify.conformance import transcript
from dpverify.theory.zcdp_nfl.instances import (
    Instance,
    Settings,
    build_instance,
    contract_runs,
    finite,
    run_algorithm,
    zcdp_budget,
    zcdp_nfl_params,
)

FIGURES = {"figure-1": "elastic_net", "figure-2": "lad", "figure-3": "ridge"}
REFERENCE_EPSILON = 1.0        # default: the eps of the learning curves (spec Sec. 5.5) used by single-run checks
RELATIVE_TOLERANCE = 1e-9      # float64 identities (first-order condition, ledger sums)
CANARY_TARGET = 1e6            # |Y| of the LAD canary: residual sign fixed at every iterate (spec Sec. 7.4)
CONVERGENCE_THRESHOLD = 1e-3   # spec Sec. 7.3.1: mean normalized error below this at the horizon
RATE_THRESHOLD = -0.9          # spec Sec. 7.3.2: O(1/T) if the CI upper end of the slope is <= -0.9
DIVERGENCE_FACTOR = 1e6        # |G|+C growing by this factor over the run (or overflowing) is divergence, not a rate
GROUND_TRUTH_TOLERANCE = 1e-6  # stationarity residual and duality gap of the CVXPY reference
# sizes of the long runs: (noise replicas, horizon)
LONG_RUN_SIZES = {"quick": (16, 1000), "paper": (100, 5000)}
# eta^(n) = eta0 n^-p for Theorem III (Assumption 3 holds for p > 0) and Theorem IV (Assumption 4
# needs sum 1/eta < inf, i.e. p < -1; p = -1.1 is the spec's "increasing eta0 n^1.1")
THEOREM_3_POWERS = (0.5, 1.0)
THEOREM_4_POWER = -1.1         # spec Sec. 7.3.2: eta0 n^1.1, an increasing schedule under which Assumption 4 (L258) holds
RHO_READING = 1.0              # default: the other rho Theorem IV is decided at, the top of the grid {0.01, 0.05, 0.2, 1} the figures' rho was chosen from (their TOMLs)


def settings_of(values: dict[str, Any]) -> Settings:
    return Settings(values["rho"], values["eta0"], values["eta_power"], values["tau"], values["delta"],
                    values["c1"], values["horizon"], values["learning_rate"])


def instance_of(context: CheckContext, figure: str) -> tuple[Instance, Settings]:
    """The check instance of an experiment: its parameters, a graph/dataset seeded by a fixed key."""
    values = context.parameters[figure]

    def build() -> Instance:
        rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"zcdp-nfl/{figure}/check-instance"))
        return build_instance(rng, problem=values["problem"], num_agents=values["num_agents"],
                              num_edges=values["num_edges"], num_samples=values["num_samples"], dim=values["dim"],
                              lam=values["lam"], l2_weight=values["l2_weight"],
                              data_noise=values["data_noise"])

    return context.memoized(f"instance/{figure}", build), settings_of(values)


def _reference_run(context: CheckContext, figure: str, replicas: int = 4):
    instance, settings = instance_of(context, figure)
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"zcdp-nfl/{figure}/reference-run"))
    return instance, settings, run_algorithm("zcdp-nfl", instance, settings, REFERENCE_EPSILON,
                                             replicas=replicas, rng=rng)


def _implementation_run(context: CheckContext, implementation, figure: str, replicas: int = 4):
    """_reference_run with a user's implementation through the contract: the same instance, calibration and root
    Generator, one Generator per replica spawned from it (instances.contract_runs)."""
    instance, settings = instance_of(context, figure)
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, f"zcdp-nfl/{figure}/reference-run"))
    return instance, settings, contract_runs(implementation, instance, zcdp_nfl_params(settings, REFERENCE_EPSILON),
                                             horizon=settings.horizon, delta=settings.delta, replicas=replicas, rng=rng)


def check_update_solves_subproblem(context: CheckContext) -> Measurement:
    """The implemented update (8)-(9)'s primal step solves subproblem (7): the gradient of the
    objective of (7) vanishes at the output, on each experiment's instance at a random state."""
    residuals = {}
    for figure in FIGURES:
        instance, settings = instance_of(context, figure)
        rng = np.random.default_rng(7)
        network, n = instance.network, 3
        shape = (2, network.num_agents, instance.data.dim)
        broadcast, dual = rng.standard_normal(shape), rng.standard_normal(shape)
        eta = settings.eta0 * n ** (-settings.eta_power)
        g = instance.problem.local_subgradient(broadcast, instance.data)
        w = primal_update(broadcast, dual, g, network, settings.rho, eta)
        degrees = network.degrees[None, :, None]
        neighbour_sum = np.einsum("kl,rld->rkd", network.adjacency, broadcast)
        # seeds/004 eq. (7): (w - wt_k)/eta + g + gamma + 2 rho sum_l (w - (wt_k + wt_l)/2) = 0
        gradient = (w - broadcast) / eta + g + dual + 2 * settings.rho * (degrees * w - (degrees * broadcast + neighbour_sum) / 2)
        residuals[figure] = float(np.abs(gradient).max() / max(1.0, np.abs(g).max()))
    worst = max(residuals.values())
    return holds(worst < RELATIVE_TOLERANCE, f"max relative gradient of (7) at the update: {worst:.1e}",
                 tolerance=RELATIVE_TOLERANCE, **{f"residual_{k}": v for k, v in residuals.items()})


def check_ledger_matches_corollary(context: CheckContext) -> Measurement:
    """Theorem I + Corollary in the implementation: every release has sigma^2 = Delta^2/(2 phi^(n))
    (eq. (12)); the ledger's total over the T releases equals the Corollary's closed form; its
    Bun-Steinke conversion gives back the target eps. Under `dpverify verify` the ledger is built from the
    noise scales the user's implementation reports (optional in the transcript: not-run without them)."""
    implementation = resolve(context.implementation)
    if implementation is None:
        instance, settings, trajectory = _reference_run(context, "figure-2", replicas=1)
        ledger, source = trajectory.ledger, ""
    else:
        instance, settings, runs = _implementation_run(context, implementation, "figure-2", replicas=1)
        ledger, source = _reported_ledger(instance, settings, runs), " (from the implementation's reported noise scales)"
    rho_target, phi1 = zcdp_budget(REFERENCE_EPSILON, settings)
    schedule = ZcdpSchedule(phi1, settings.tau)
    per_release = [np.max(np.abs(r.zcdp / (phi1 * settings.tau ** -(r.iteration - 1)) - 1))
                   for r in ledger.releases]
    total = ledger.total_zcdp()
    closed_form = dynamic_zcdp_total(phi1, settings.tau, settings.horizon)
    epsilon = zcdp_to_dp(float(total.max()), settings.delta)
    deviations = {"per_release": float(max(per_release)), "total_vs_corollary": float(np.abs(total / closed_form - 1).max()),
                  "epsilon_vs_target": abs(epsilon / REFERENCE_EPSILON - 1)}
    return holds(max(deviations.values()) < 1e-9,
                 f"{len(per_release)} releases{source}; ledger total rho {total.max():.6g} vs Corollary "
                 f"{closed_form:.6g}; eps {epsilon:.6g} vs target {REFERENCE_EPSILON:g}",
                 schedule=schedule.label, rho_target=rho_target, phi1=phi1, **deviations)


def _reported_ledger(instance: Instance, settings: Settings, runs: dict[str, np.ndarray]) -> PrivacyLedger:
    """The ledger of one run of a user's implementation: release n of client k spends Delta_k(n)^2 / (2 sigma_k(n)^2)
    (Theorem I (12); Bun-Steinke Prop. 1.6), Delta_k(n) Lemma I's bound (11) as the reference's ledger has it and
    sigma_k(n) the scale the implementation reports (inf for a data-dependent release it reports unnoised)."""
    if "noise_scales" not in runs:
        raise NotInContract("the implementation reports no noise_scales (optional in the transcript): the ledger of "
                            "Theorem I is built from them")
    params, ledger = zcdp_nfl_params(settings, REFERENCE_EPSILON), PrivacyLedger()
    for n, sigma in enumerate(runs["noise_scales"][:, 0], start=1):
        sensitivity = sensitivity_bound(params, instance.network, instance.data.num_samples, n)
        private = sigma > 0
        zcdp = np.full(sigma.shape, np.inf)
        zcdp[private] = gaussian_zcdp(sensitivity[private], sigma[private])
        ledger.record(Release(n, GAUSSIAN, sensitivity, sigma, zcdp, None, "zcdp-nfl (reported noise scales)"))
    return ledger


def _max_sample_subgradient_norms(instance: Instance, broadcasts: np.ndarray) -> float:
    """Largest per-sample loss subgradient norm at the linearization points tilde w^(n-1)."""
    largest = 0.0
    for state in broadcasts[:-1]:  # a loop over iterations, off the hot path
        norms = np.linalg.norm(instance.problem.per_sample_subgradients(state, instance.data), axis=-1)
        largest = max(largest, float(norms.max()))
    return largest


def check_assumption_1(context: CheckContext) -> Measurement:
    """Assumption 1 (L114), ||l'(.)|| <= c_1, on each experiment's instance along an actual run at
    the declared c_1 (per-sample subgradients, the quantity bounded in eq. (27))."""
    values, violated = {}, []
    implementation = resolve(context.implementation)
    for figure, problem in FIGURES.items():
        if implementation is None:
            instance, settings, trajectory = _reference_run(context, figure)
            broadcast = trajectory.broadcast
        else:
            instance, settings, runs = _implementation_run(context, implementation, figure)
            broadcast = finite(runs, "the per-sample subgradients")["broadcast"]
        largest = _max_sample_subgradient_norms(instance, broadcast)
        values[f"{problem}_max_norm"] = largest
        values[f"{problem}_c1"] = settings.c1
        if largest > settings.c1 * (1 + RELATIVE_TOLERANCE):
            violated.append(f"{problem} ({largest:.3g} > c1 = {settings.c1:g})")
    summary = ("violated on " + ", ".join(violated) + ": the noise is calibrated to a sensitivity the data exceed"
               if violated else "holds on every instance")
    return holds(not violated, summary, **values)


def _canary_pair(context: CheckContext) -> tuple[Instance, Settings, int, LocalData, LocalData]:
    """Fig. 2's check instance (LAD), the client whose record differs, and the neighbouring datasets D, D': that
    client's last record replaced by (x_c, +Y) and (x_c, -Y), ||x_c|| = c_1, Y = CANARY_TARGET."""
    instance, settings = instance_of(context, "figure-2")
    agent, last = 0, instance.data.num_samples - 1
    direction = np.ones(instance.data.dim) / np.sqrt(instance.data.dim) * settings.c1
    data = instance.data.replace_sample(agent, last, direction, CANARY_TARGET)
    return instance, settings, agent, data, data.replace_sample(agent, last, direction, -CANARY_TARGET)


def check_lemma_1_realized(context: CheckContext) -> Measurement:
    """Lemma I (11) realized: neighbouring LAD datasets with a canary (x_c, +Y) vs (x_c, -Y),
    ||x_c|| = c_1, under a shared noisy history: ||w_D^(n) - w_D'^(n)|| <= Delta_{k,2}(n) at every n,
    attained (ratio 1) since the canary's subgradients are -x_c and +x_c. Under `dpverify verify` the
    user's implementation is measured at n = 1 only (`_lemma_1_first_update`)."""
    instance, settings, agent, data, neighbour = _canary_pair(context)
    implementation = resolve(context.implementation)
    if implementation is not None:
        return _lemma_1_first_update(context, implementation, instance, settings, agent, data, neighbour)
    canary = Instance(instance.network, data, instance.problem, instance.truth)
    rng = np.random.default_rng(task_seed_sequence(context.root_seed, "zcdp-nfl/lemma-1/canary"))
    trajectory = run_algorithm("zcdp-nfl", canary, settings, REFERENCE_EPSILON, replicas=8, rng=rng)
    network, broadcasts = instance.network, trajectory.broadcast
    # the dual is post-processing of received messages, eq. (9): gamma^(n) = rho L sum_{s<=n} tilde w^(s)
    duals = settings.rho * np.einsum("kl,nrld->nrkd", network.laplacian, np.cumsum(broadcasts, axis=0))
    ratios = []
    for n in range(1, settings.horizon + 1):
        eta = settings.eta0 * n ** (-settings.eta_power)
        g_d = instance.problem.local_subgradient(broadcasts[n - 1], data)
        g_n = instance.problem.local_subgradient(broadcasts[n - 1], neighbour)
        w_d = primal_update(broadcasts[n - 1], duals[n - 1], g_d, network, settings.rho, eta)
        w_n = primal_update(broadcasts[n - 1], duals[n - 1], g_n, network, settings.rho, eta)
        bound = lemma1_sensitivity(settings.rho, settings.c1, network, eta, data.num_samples)[agent]
        ratios.append(np.linalg.norm(w_d[:, agent] - w_n[:, agent], axis=-1).max() / bound)
    ratios = np.array(ratios)
    return holds(ratios.max() <= 1 + 1e-9,
                 f"max realized/bound over {settings.horizon} iterations x 8 runs: {ratios.max():.9f} "
                 f"(min {ratios.min():.9f}); the bound is attained by the canary",
                 max_ratio=float(ratios.max()), min_ratio=float(ratios.min()))


def _lemma_1_first_update(context: CheckContext, implementation, instance: Instance, settings: Settings, agent: int,
                          data: LocalData, neighbour: LocalData) -> Measurement:
    """Lemma I (11) realized on a user's implementation, at n = 1 only: one-iteration runs through the contract on D
    and on D', whose w^(1) (the transcript's un-noised iterates[1], eq. (7)) share the public history of Algorithm 1's
    initialization (w^(0) = 0, gamma^(0) = 0, L94; nothing broadcast at n = 0). A later n is out of reach: the
    contract starts every run there and cannot be handed a released history, and runs on D and D' release different
    broadcasts from n = 1 on. Also reported: the largest change of another client's w^(1) (its data are the same)."""
    params = zcdp_nfl_params(settings, REFERENCE_EPSILON)
    seed = task_seed_sequence(context.root_seed, "zcdp-nfl/lemma-1/canary")
    first = [finite(contract_runs(implementation, Instance(instance.network, d, instance.problem, instance.truth), params,
                                  horizon=1, delta=settings.delta, replicas=1, rng=np.random.default_rng(seed)),
                    "w^(1)")["iterates"][1, 0] for d in (data, neighbour)]
    change = np.linalg.norm(first[0] - first[1], axis=-1)   # per client, (K,)
    bound = lemma1_sensitivity(settings.rho, settings.c1, instance.network, params.step.eta(1),
                               data.num_samples)[agent]
    ratio, others = float(change[agent] / bound), float(np.delete(change, agent).max())
    return holds(ratio <= 1 + RELATIVE_TOLERANCE,
                 f"realized/bound of client {agent}'s w^(1) (n = 1: the only iteration at which runs through the contract "
                 f"share their history): {ratio:.9f}; another client's w^(1) changed by at most {others:.3g}",
                 ratio=ratio, realized=float(change[agent]), bound=float(bound), other_clients_max_change=others,
                 iterations="n = 1 (the contract cannot start a run from a released history)")


def check_assumption_2(context: CheckContext) -> Measurement:
    """Assumption 2 (L146), f convex, on each instance: midpoint convexity at random pairs
    (a necessary condition; the losses and regularizers are convex by construction)."""
    rng = np.random.default_rng(11)
    gaps = {}
    for figure, problem in FIGURES.items():
        instance, _ = instance_of(context, figure)
        shape = (512, instance.network.num_agents, instance.data.dim)
        a, b = 3 * rng.standard_normal(shape), 3 * rng.standard_normal(shape)
        f = lambda w: instance.problem.objective(w, instance.data)  # noqa: E731
        gaps[problem] = float(np.min((f(a) + f(b)) / 2 - f((a + b) / 2)))
    worst = min(gaps.values())
    return holds(worst >= -1e-9, f"min of (f(a)+f(b))/2 - f((a+b)/2) over 512 random pairs per problem: {worst:.3g}",
                 **gaps)


def check_noise_eps_delta_vs_zcdp(context: CheckContext) -> Measurement:
    """At equal total (eps, delta), T and tau, the (eps,delta)DP-NFL calibration (harness default,
    spec Sec. 2.10 A3) adds more noise than zCDP-NFL at every iteration (spec 7.1.13)."""
    values = context.parameters["figure-1"]
    settings = settings_of(values)
    ratios = {}
    for epsilon in values["epsilons"]:
        _, phi1 = zcdp_budget(epsilon, settings)
        zcdp, classical = ZcdpSchedule(phi1, settings.tau), ClassicalGaussianSchedule(epsilon, settings.delta, settings.tau,
                                                                                        settings.horizon)
        n = np.arange(1, settings.horizon + 1)
        ratio = np.array([classical.variance(k, 1.0) / zcdp.variance(k, 1.0) for k in n]).ravel()
        ratios[f"eps={epsilon:g}"] = [float(ratio.min()), float(ratio.max())]
    smallest = min(r[0] for r in ratios.values())
    return holds(smallest > 1, f"variance ratio (eps,delta)/zCDP over n = 1..T: min {smallest:.3g}, under the "
                 "harness default (eps,delta) rule (classical Gaussian + basic composition, spec 2.10 A3: the paper "
                 "gives none)", **ratios)


# ---- long runs: Theorem III (exact convergence) and Theorem IV (O(1/n) rate) -------------------

def long_run(rng: np.random.Generator, *, figure_values: dict, figure: str, eta_power: float, horizon: int,
             replicas: int, root_seed: int, grid: list[int], implementation: Any = REFERENCE) -> pd.DataFrame:
    """Run zCDP-NFL for `horizon` iterations on the figure's check instance and record, at the
    iterations in `grid`: normalized error of w^(n) (L304), the objective gap f(hW^(T)) - f* of the
    ergodic average of the broadcasts (eq. (19), L216) and its consensus violation C(T) (spec 4.7).
    `implementation` (theory/door/implementations.py): our batched reference, or a user's, run once per replica
    through the contract with a Generator spawned from `rng`."""
    instance_rng = np.random.default_rng(task_seed_sequence(root_seed, f"zcdp-nfl/{figure}/check-instance"))
    values = figure_values
    instance = build_instance(instance_rng, problem=values["problem"], num_agents=values["num_agents"],
                              num_edges=values["num_edges"], num_samples=values["num_samples"], dim=values["dim"],
                              lam=values["lam"], l2_weight=values["l2_weight"], data_noise=values["data_noise"])
    settings = settings_of({**values, "eta_power": eta_power, "horizon": horizon})
    _, phi1_at_figure_horizon = zcdp_budget(REFERENCE_EPSILON, settings_of(values))
    reference = instance.reference
    optimum = float(instance.problem.objective(np.broadcast_to(reference, (instance.network.num_agents, len(reference))),
                                               instance.data))
    edges = instance.network.edges
    running_sum = np.zeros((replicas, instance.network.num_agents, len(reference)))
    rows, wanted = [], set(grid)

    def record(n, primal, running_sum):
        average = running_sum / n
        gap = instance.problem.objective(average, instance.data) - optimum
        consensus = np.sum((average[:, edges[:, 0]] - average[:, edges[:, 1]]) ** 2, axis=(1, 2))
        error = np.sum((primal - reference) ** 2, axis=(1, 2)) / np.sum(reference ** 2)
        for r in range(replicas):
            rows.append((n, r, error[r], gap[r], consensus[r]))

    def observe(n, primal, broadcast, dual):
        running_sum[...] += broadcast
        if n in wanted:
            record(n, primal, running_sum)

    # the privacy schedule of the figures (phi^(1) for eps = 1 over the figure's T), continued
    from dpverify.algorithms.zcdp_nfl.algorithm import (
        StepSchedule,
        ZcdpNflParams,
        run_zcdp_nfl,
    )

    params = ZcdpNflParams(rho=settings.rho, step=StepSchedule(settings.eta0, eta_power), c1=settings.c1,
                           noise=ZcdpSchedule(phi1_at_figure_horizon, settings.tau))
    users = resolve(implementation)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging run is a finding, recorded as inf
        if users is not None:   # a diverging run's non-finite values reach the rows as they are
            points, sums = _grid_points_through_contract(users, instance, params, settings, replicas, rng, grid)
            for n, primal, summed in zip(grid, points, sums):
                record(n, primal, summed)
            return pd.DataFrame(rows, columns=["iteration", "replica", "normalized_error", "objective_gap", "consensus"])
        try:
            run_zcdp_nfl(instance.problem, instance.data, instance.network, params, horizon=horizon,
                         replicas=replicas, rng=rng, keep_iterates=False, observer=observe)
        except InvalidDataError:  # the iterates overflowed: the grid points not reached diverged
            reached = {row[0] for row in rows}
            rows += [(n, r, np.inf, np.inf, np.inf) for n in grid if n not in reached for r in range(replicas)]
    return pd.DataFrame(rows, columns=["iteration", "replica", "normalized_error", "objective_gap", "consensus"])


def _grid_points_through_contract(implementation, instance: Instance, params, settings: Settings, replicas: int,
                                  rng: np.random.Generator, grid: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """w^(n) and sum_{s<=n} tilde w^(s) at the iterations n of `grid`, (G, R, N, d) each, of `replicas` runs of a
    user's implementation through the contract, one Generator each spawned from `rng`. Each run is reduced to the
    grid as soon as it returns (a long run's whole transcript, kept for every replica, would not fit at the paper's
    sizes)."""
    setting = contract.setting_of(instance.problem, instance.data, instance.network, params, settings.horizon,
                                  settings.delta)
    at = np.asarray(grid)
    points = np.empty((len(grid), replicas, instance.network.num_agents, instance.data.dim))
    sums = np.empty_like(points)
    for r, generator in enumerate(rng.spawn(replicas)):   # one call of the user's code per run: the contract's unit
        run = transcript(implementation, setting, generator, contract.shapes)
        points[:, r] = run["iterates"][at]
        sums[:, r] = np.cumsum(run["messages"], axis=0)[at - 1]
    return points, sums


def _long_runs(context: CheckContext, runs: list[tuple[str, float]], rho: float | None = None
               ) -> dict[tuple[str, float], pd.DataFrame]:
    """The long runs of (figure, eta power) pairs, submitted together so the executor can run them in
    parallel; memoized for the checks of one run (and cached by the runner across runs). `rho` replaces the
    figures' ADMM penalty (a reading of a value the paper does not give)."""
    replicas, horizon = LONG_RUN_SIZES["quick" if context.is_quick else "paper"]
    grid = sorted({int(round(t)) for t in np.geomspace(20, horizon, 12)})

    def figure_values(figure: str):
        return context.parameters[figure] if rho is None else {**context.parameters[figure], "rho": rho}
    # a user's implementation (dpverify verify) is a parameter, so it keys the cache; the reference's tasks are as before
    implementation = {} if context.implementation == REFERENCE else {"implementation": context.implementation}
    tasks = {(figure, power): Task(f"zcdp-nfl/{figure}/long-run/p={power}" + ("" if rho is None else f"/rho={rho:g}"),
                                   long_run,
                                   {"figure_values": figure_values(figure), "figure": figure, "eta_power": power,
                                    "horizon": horizon, "replicas": replicas, "root_seed": context.root_seed,
                                    "grid": grid, **implementation})
             for figure, power in runs}
    missing = [key for key, task in tasks.items() if task.key not in context.memo]
    for key, frame in zip(missing, context.run_tasks([tasks[key] for key in missing])):
        context.memo[tasks[key].key] = frame
    return {key: context.memo[task.key] for key, task in tasks.items()}


def check_theorem_3(context: CheckContext) -> Measurement:
    """Theorem III (L228): under Assumptions 2-3, convergence to the exact solution. Per case, `cases` for
    the rule converges(CONVERGENCE_THRESHOLD) (spec 7.3.1): final_upper = one-sided 95% upper bound of the
    mean normalized error at the horizon, final = that mean, stalled = no decreasing Mann-Kendall trend over
    the grid (a diverged run: inf, stalled). A plateau above the threshold refutes; a decreasing error still
    above it is inconclusive."""
    values, cases = {}, {}
    all_runs = _long_runs(context, [(figure, power) for figure in FIGURES for power in THEOREM_3_POWERS])
    for figure, problem in FIGURES.items():
        for power in THEOREM_3_POWERS:
            runs = all_runs[(figure, power)]
            horizon = runs.iteration.max()
            final = runs[runs.iteration == horizon].normalized_error.to_numpy()
            label = f"{problem}, eta0 n^-{power:g}"
            if not np.all(np.isfinite(final)):
                values[label] = {"diverged": True, "T": int(horizon)}
                cases[label] = {"final_upper": np.inf, "final": np.inf, "stalled": True}
                continue
            upper = one_sided_upper_mean_bound(final, 1 - SIGNIFICANCE, rng=np.random.default_rng(3))
            trend = mann_kendall(runs.groupby("iteration").normalized_error.mean().to_numpy())
            values[label] = {"mean_error_at_T": float(final.mean()), "upper_95": float(upper), "T": int(horizon),
                             "mann_kendall_p": float(trend[1]), "trend": trend[2]}
            cases[label] = {"final_upper": float(upper), "final": float(final.mean()), "stalled": trend[2] != "decreasing"}
    summary = "; ".join(f"{k}: diverged" if v.get("diverged") else
                        f"{k}: e(T)={v['mean_error_at_T']:.2g} (upper {v['upper_95']:.2g}), {v['trend']}"
                        for k, v in values.items())
    return Measurement(summary, {**values, "cases": cases})


def check_theorem_4(context: CheckContext) -> Measurement:
    """Theorem IV (L260): under Assumptions 2 and 4, O(1/n). Schedule eta0 n^1.1 (Assumption 4
    holds: sum 1/eta < inf). OLS slope of log(|G(T)| + C(T)) vs log T over T >= 200, 95% bootstrap CI
    over runs (spec 7.3.2), per problem, as `intervals` for the rule interval_below(RATE_THRESHOLD):
    confirmed if every CI lies below -0.9, refuted if one lies at or above it. A diverging run (|G|+C
    overflows or grows by DIVERGENCE_FACTOR) has no rate: its interval is (inf, inf), so it refutes. Theorem IV
    states no condition on the ADMM penalty rho: decided at the figures' rho and at RHO_READING, the top of the grid
    they were chosen from, a divergence at either being a counterexample (and the other says what converges)."""
    instances = {"rho as in the figures (default)": _theorem_4_rate(context, None),
                 f"rho = {RHO_READING:g}": _theorem_4_rate(context, RHO_READING)}
    return Measurement("eta = eta0 n^1.1 (Assumption 4 holds)", {}, instances=instances,
                       for_every="ADMM penalty rho > 0 (Theorem IV states no condition on it)")


def _theorem_4_rate(context: CheckContext, rho: float | None) -> Measurement:
    values, intervals = {}, {}
    all_runs = _long_runs(context, [(figure, THEOREM_4_POWER) for figure in FIGURES], rho)
    for figure, problem in FIGURES.items():
        runs = all_runs[(figure, THEOREM_4_POWER)]
        runs = runs.assign(error=runs.objective_gap.abs() + runs.consensus)
        table = runs.pivot(index="replica", columns="iteration", values="error")
        means = table.mean(axis=0)
        if not np.all(np.isfinite(means)) or means.iloc[-1] > DIVERGENCE_FACTOR * means.iloc[0]:
            values[problem] = {"diverged": True, "mean_error_by_T": {int(t): float(v) for t, v in means.items()}}
            intervals[problem] = (np.inf, np.inf)
            continue
        fit = fit_rate_exponent(table.columns.to_numpy(), table.to_numpy(), min_horizon=200,
                                confidence=1 - SIGNIFICANCE, rng=np.random.default_rng(5))
        # power of the decision rule if the true slope were exactly -1, at the measured standard error
        power = rate_power_from_standard_error(-1.0, fit.bootstrap_std_error, RATE_THRESHOLD, 1 - SIGNIFICANCE)
        values[problem] = {"slope": fit.slope, "ci": [fit.ci_low, fit.ci_high], "runs": fit.n_runs,
                           "power_if_slope_is_-1": float(power.power)}
        intervals[problem] = (fit.ci_low, fit.ci_high)
    summary = "; ".join(f"{k}: diverges (|G|+C from {min(v['mean_error_by_T'].values()):.2g} to "
                        f"{max(v['mean_error_by_T'].values()):.2g})" if v.get("diverged") else
                        f"{k}: slope {v['slope']:.2f} [{v['ci'][0]:.2f}, {v['ci'][1]:.2f}]" for k, v in values.items())
    return Measurement(summary, {"intervals": intervals, **values})


def check_ground_truth_certified(context: CheckContext) -> Measurement:
    """The reference w_c of the normalized error (L304, 'obtained by the CVX toolbox'): solved with
    CVXPY on each experiment's instance and accepted only with its optimality certificate."""
    values = {}
    for figure, problem in FIGURES.items():
        certificate = instance_of(context, figure)[0].truth.certificate
        values[problem] = {"stationarity_residual": certificate.stationarity_residual,
                           "duality_gap": certificate.duality_gap, "solver": certificate.solver}
    certified = all(instance_of(context, f)[0].truth.certified(GROUND_TRUTH_TOLERANCE) for f in FIGURES)
    worst = max(max(abs(v["stationarity_residual"]), abs(v["duality_gap"])) for v in values.values())
    return holds(certified, f"certificates (stationarity, duality gap) <= {worst:.1e} (tolerance {GROUND_TRUTH_TOLERANCE:g})",
                 **values)


def check_experiment_hypotheses(context: CheckContext) -> Measurement:
    """Do the Sec. 5 experiments, with the parameters actually used, satisfy the hypotheses of
    Theorems I-IV? Assumption 1 (per-sample subgradients <= c1, measured), Assumption 2 (convexity,
    measured), Assumption 3 (eta^(n) -> 0) and Assumption 4 (sum_n max_k 1/(2 eta_k^(n+1)) < inf)
    for eta^(n) = eta0 n^-p: A3 iff p > 0, A4 iff the p-series sum n^p converges, i.e. p < -1."""
    bounded = check_assumption_1(context).values
    assumption_2 = check_assumption_2(context).values["holds"]
    values, failing = {}, []
    for figure, problem in FIGURES.items():
        power = context.parameters[figure]["eta_power"]
        assumption_1 = bounded[f"{problem}_max_norm"] <= bounded[f"{problem}_c1"] * (1 + RELATIVE_TOLERANCE)
        met = {"A1": assumption_1, "A2": assumption_2, "A3": power > 0, "A4": power < -1}
        values[f"{problem} (eta0 n^-{power:g})"] = met
        failing += [f"{problem}: {name}" for name, ok in met.items() if not ok]
    summary = ("every hypothesis holds" if not failing else
               "outside the theorems' hypotheses: " + ", ".join(sorted(set(failing))))
    return holds(not failing, summary, **values)
