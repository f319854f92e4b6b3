"""The runs of the checks that run Algorithm 1 themselves (Lemma 3, Lemma 4, proof step (11)): R independent runs
on Fig. 1's instance at one eps, from our batched reference or, under `dpverify verify`, from the implementation
the check context names (theory/door/implementations.py), through the contract, one call per run.

Both columns are then decided by the same code, from what a transcript carries: the iterates x_1..x_{T+1}, the
broadcasts q_1..q_T, and z_t = A(t) q_t computed from them with the public weights (contract.mixed, line 5); the
step sizes and noise scales are the paper's calibration (line 1), not the implementation's. A user's runs are
submitted as Tasks (the executor parallelises and caches them; the implementation is a task parameter, so it keys
the cache), each run seeded by its own key, so the numbers do not depend on how the runs are split into tasks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpverify.algorithms.dpdo_nc import contract
from dpverify.algorithms.dpdo_nc.algorithm import DpdoNcParams, paper_schedule, run_dpdo_nc
from dpverify.theory.claims import NothingToMeasure
from dpverify.theory.door.implementations import REFERENCE, resolve
from dpverify.theory.dpdo_nc.instances import instance_of, params_of
from dpverify.theory.execution import CheckContext, Task, task_seed_sequence
from dpverify.theory.verify.conformance import ImplementationError, independent_transcripts

RUNS_PER_TASK = 10   # default: runs of an implementation per task (parallelism only: each run has its own seed)
LITERAL = ("noisy", "per_node")   # the readings under which z_t follows from the broadcasts alone (the contract's)


@dataclass(frozen=True)
class Runs:
    """R runs of Algorithm 1: iterates (T+1, R, N, d) = x_1..x_{T+1}, messages (T, R, N, d) = q_t, mixed (T, R, N, d)
    = z_t, and the calibration of `params`: alphas (T,) and sigmas (T,)."""

    params: DpdoNcParams
    iterates: np.ndarray
    messages: np.ndarray
    mixed: np.ndarray
    alphas: np.ndarray
    sigmas: np.ndarray


def runs(context: CheckContext, values, requests: list[tuple[float, str]], replicas: int) -> list[Runs]:
    """For each (eps, key) of `requests`, `replicas` runs at eps on the instance of `values` (Fig. 1's parameters),
    phi its first mirror map, memoized for the checks of one run (Lemmas 3 and 4 share theirs). The reference's are
    one batched run seeded by `key`, as before this module existed; an implementation's run r is seeded by
    f"{key}/run-{r}", and every task of the requests is submitted at once, so the executor runs them in parallel."""
    if context.implementation == REFERENCE:
        return [_reference_runs(context, values, epsilon, key, replicas) for epsilon, key in requests]
    tasks = {}
    for epsilon, key in requests:
        _setting(values, params_of(values, epsilon, values["mirrors"][0]))   # NotInContract: not-run, nothing submitted
        tasks[key] = [Task(f"{key}/runs-{first}-{min(first + RUNS_PER_TASK, replicas)}", implementation_runs,
                           {"figure_values": values, "epsilon": epsilon, "first": first,
                            "count": min(RUNS_PER_TASK, replicas - first), "key": key, "root_seed": context.root_seed,
                            "implementation": context.implementation})
                      for first in range(0, replicas, RUNS_PER_TASK)]
    missing = [task for group in tasks.values() for task in group if task.key not in context.memo]
    try:
        frames = context.run_tasks(missing)
    except ImplementationError as error:   # the user's code raised or returned no transcript: nothing to measure
        raise NothingToMeasure(f"the implementation failed: {error}") from error
    for task, frame in zip(missing, frames):
        context.memo[task.key] = frame
    return [_stacked(values, epsilon, replicas, [context.memo[task.key] for task in tasks[key]])
            for epsilon, key in requests]


def _calibrated(values, epsilon: float) -> tuple[DpdoNcParams, np.ndarray, np.ndarray]:
    """The parameters of a run at eps, and the paper's alpha_t, sigma_t, t = 1..T (line 1)."""
    params = params_of(values, epsilon, values["mirrors"][0])
    horizon, n, dim = values["horizon"], values["num_agents"], values["dim"]
    return (params, np.array([params.alpha(t, n) for t in range(1, horizon + 1)]),
            np.array([params.sigma(t, n, dim) for t in range(1, horizon + 1)]))


def _reference_runs(context: CheckContext, values, epsilon: float, key: str, replicas: int) -> Runs:
    params, alphas, sigmas = _calibrated(values, epsilon)
    schedule = paper_schedule(values["window"])

    def batched():
        rng = np.random.default_rng(task_seed_sequence(context.root_seed, key))
        run = run_dpdo_nc(instance_of(values), schedule, params, horizon=values["horizon"], replicas=replicas, rng=rng,
                          dim=values["dim"], keep=True, regret=False)
        # another reading's z_t is not A(t) q_t (clean: node i's own x_t; per_link: one draw per link): its own
        literal = (params.self_copy, params.noise_draw) == LITERAL
        return run.iterates, run.broadcasts, contract.mixed(schedule.at, run.broadcasts) if literal else run.mixed
    return Runs(params, *context.memoized(f"{key}/reference/{replicas}", batched), alphas, sigmas)


def _stacked(values, epsilon: float, replicas: int, frames: list[pd.DataFrame]) -> Runs:
    """The Runs of an implementation's task frames (implementation_runs); NothingToMeasure if a value is not finite."""
    params, alphas, sigmas = _calibrated(values, epsilon)
    horizon = values["horizon"]
    shape = (replicas, horizon + 1, values["num_agents"], values["dim"])
    iterates, messages = (np.concatenate([frame[column].to_numpy() for frame in frames]).reshape(shape).swapaxes(0, 1)
                          for column in ("iterate", "message"))
    messages = messages[:-1]                                                     # rounds first; no q at T+1
    finite = np.isfinite(iterates)
    bad = ~(finite[:-1] & finite[1:] & np.isfinite(messages)).reshape(horizon, -1).all(axis=1)   # x_t, q_t, x_(t+1)
    if bad.any():
        raise NothingToMeasure(f"the implementation's iterates or messages are not finite from round "
                               f"{int(np.argmax(bad)) + 1} on")
    return Runs(params, iterates, messages, contract.mixed(paper_schedule(values["window"]).at, messages), alphas,
                sigmas)


def _setting(values, params: DpdoNcParams) -> contract.DpdoNcSetting:
    return contract.setting_of(instance_of(values), paper_schedule(values["window"]), params, values["horizon"],
                               np.zeros((values["num_agents"], values["dim"])))


def implementation_runs(rng: np.random.Generator, *, figure_values: dict, epsilon: float, first: int, count: int,
                        key: str, root_seed: int, implementation: Any) -> pd.DataFrame:
    """Runs first..first+count-1 of an implementation (its own Generator each, from f"{key}/run-{r}"; the task's
    `rng` is not used), one row per (run, round 1..T+1, node, coordinate): the iterate x_t and the message q_t
    (NaN at T+1)."""
    values = figure_values
    setting = _setting(values, params_of(values, epsilon, values["mirrors"][0]))
    rngs = (np.random.default_rng(task_seed_sequence(root_seed, f"{key}/run-{r}")) for r in range(first, first + count))
    transcripts = independent_transcripts(resolve(implementation), setting, rngs, contract.shapes)
    iterates = np.stack([t["iterates"] for t in transcripts])
    messages = np.stack([np.concatenate([t["messages"], np.full((1,) + t["messages"].shape[1:], np.nan)])
                         for t in transcripts])
    return pd.DataFrame({"iterate": iterates.ravel(), "message": messages.ravel()})
