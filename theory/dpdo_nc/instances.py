"""The DPDO-NC experiment setup (seeds/002 Sec. 5), shared by the figures and the checks.

`simulate_curves` runs Algorithm 1 for every curve of a figure on one fixed data sequence (data
seed from the TOML) with common random numbers across curves (the same Laplace draws, scaled by
each curve's sigma_t), and returns the regret accumulators per run, node and checkpoint. Its parameter
`implementation` is our batched reference, or a user's implementation through the contract
(theory/door/implementations.py; `dpverify verify` re-runs the figures' claims on it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpverify.algorithms.core.errors import InvalidParameterError, NotInContract
from dpverify.algorithms.core.mirror import Mahalanobis, SquaredEuclidean
from dpverify.algorithms.dpdo_nc import contract
from dpverify.algorithms.dpdo_nc.algorithm import (
    DpdoNcParams,
    Localization,
    localization_instance,
    paper_schedule,
    regret_of_iterates,
    run_dpdo_nc,
)
from dpverify.theory.door.implementations import resolve
from dpverify.theory.verify.conformance import generators, independent_iterates

NO_PRIVACY = "no-dp"   # the label of the noise-free curve in the results (Fig. 1's "without DP", L503)


def mirror_of(name: str, weight=None):
    """'half-euclidean': phi = ½||x||² (Figs. 1-2, L501); 'euclidean': ||x||²; 'mahalanobis': x^T Q x (Fig. 3, L513)."""
    if name == "half-euclidean":
        return SquaredEuclidean(0.5)
    if name == "euclidean":
        return SquaredEuclidean(1.0)
    if name == "mahalanobis":
        return Mahalanobis(np.array(weight, dtype=float))
    raise InvalidParameterError(f"unknown mirror map {name!r}; expected half-euclidean, euclidean or mahalanobis")


def instance_of(values: dict[str, Any]) -> Localization:
    rng = np.random.default_rng(values["data_seed"])
    return localization_instance(rng, values["horizon"], num_agents=values["num_agents"],
                                 sensor_layout=values["sensor_layout"], measurement_noise=values["measurement_noise"])


def params_of(values: dict[str, Any], epsilon: float | None, mirror: str, theta: float | None = None) -> DpdoNcParams:
    """Algorithm 1's parameters for one curve; `theta` overrides the TOML's (a reading of spec P1)."""
    return DpdoNcParams(epsilon, values["theta"] if theta is None else theta, mirror_of(mirror, values["q_matrix"] if mirror == "mahalanobis" else None), values["radius"],
                        values["self_copy"], values["noise_draw"])


def curves_of(values: dict[str, Any]) -> list[tuple[str, float | None, str]]:
    """(label, eps or None, mirror) of every curve: eps x mirrors, plus the no-privacy curve if asked."""
    curves = [(f"eps={eps:g}/{mirror}", float(eps), mirror) for mirror in values["mirrors"] for eps in values["epsilons"]]
    if values["no_privacy"]:
        curves += [(f"{NO_PRIVACY}/{mirror}", None, mirror) for mirror in values["mirrors"]]
    return curves


def checkpoints_of(horizon: int, count: int = 60) -> np.ndarray:
    """Log-spaced and linear horizons T' in 1..T (the regret is re-optimized at each T', spec 5.2)."""
    marks = np.concatenate([np.geomspace(1, horizon, count), np.linspace(1, horizon, count)])
    return np.unique(np.round(marks).astype(int))


def simulate_curves(rng: np.random.Generator, **values: Any) -> pd.DataFrame:
    """One row per (curve, checkpoint, run, node): dot = sum <G, x>, s0, s1 = sum G (spec 5.2)."""
    instance = instance_of(values)
    schedule = paper_schedule(values["window"], values["switching"], values["horizon"],
                              np.random.default_rng(values["data_seed"] + 1))
    marks = checkpoints_of(values["horizon"])
    noise_seed = int(rng.integers(2**63 - 1))  # common random numbers across curves
    frames = []
    implementation = resolve(values["implementation"])
    for label, epsilon, mirror in curves_of(values):
        params = params_of(values, epsilon, mirror)
        if implementation is None:
            run = run_dpdo_nc(instance, schedule, params, horizon=values["horizon"], replicas=values["runs"],
                              rng=np.random.default_rng(noise_seed), dim=values["dim"], checkpoints=marks)
            regret_dot, regret_sum = run.regret_dot, run.regret_sum
        else:
            try:
                regret_dot, regret_sum = _through_contract(implementation, instance, schedule, params, values,
                                                           noise_seed, marks)
            except NotInContract:   # e.g. Fig. 3's Mahalanobis map: this curve is not re-run (docs/verify.md)
                continue
        _k, r, n = regret_dot.shape
        grid_k, grid_r, grid_n = np.meshgrid(marks, np.arange(r), np.arange(n), indexing="ij")
        frame = {"curve": label, "epsilon": np.nan if epsilon is None else epsilon, "mirror": mirror,
                 "horizon": grid_k.ravel(), "run": grid_r.ravel(), "node": grid_n.ravel(),
                 "dot": regret_dot.ravel()}
        for axis in range(regret_sum.shape[-1]):
            frame[f"s{axis}"] = regret_sum[..., axis].ravel()
        frames.append(pd.DataFrame(frame))
    return pd.concat(frames, ignore_index=True)


def _through_contract(implementation, instance: Localization, schedule, params: DpdoNcParams, values: dict[str, Any],
                      noise_seed: int, marks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The regret accumulators of `values["runs"]` runs of a user's implementation (contract.py), each with its
    own Generator from `noise_seed` (the same per curve: common random numbers, if it draws in one order)."""
    x1 = np.zeros((values["num_agents"], values["dim"]))
    setting = contract.setting_of(instance, schedule, params, values["horizon"], x1)
    iterates = independent_iterates(implementation, setting, generators(noise_seed, values["runs"]), contract.shapes)
    return regret_of_iterates(instance, iterates, marks)


def accumulators(results: pd.DataFrame, curve: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """horizons (K,), dot (R, K, N), sums (R, K, N, d) of one curve, runs first (for resampling)."""
    rows = results[results.curve == curve].sort_values(["run", "horizon", "node"])
    horizons = np.sort(rows.horizon.unique())
    runs, nodes = rows.run.nunique(), rows.node.nunique()
    dims = sorted(c for c in rows.columns if c.startswith("s") and c[1:].isdigit())
    dot = rows["dot"].to_numpy().reshape(runs, horizons.size, nodes)
    sums = rows[dims].to_numpy().reshape(runs, horizons.size, nodes, len(dims))
    return horizons, dot, sums


def plug_in_regret(dot: np.ndarray, sums: np.ndarray, radius: float, weights: np.ndarray | None = None) -> np.ndarray:
    """max_i of the plug-in E[R_T^i] of (2): mean over runs (optionally resampling weights (B, R))
    of sum <G, x> plus r ||mean S||_inf. Returns (K,) or (B, K)."""
    if weights is None:
        mean_dot, mean_sum = dot.mean(axis=0), sums.mean(axis=0)
    else:
        mean_dot = np.einsum("br,rkn->bkn", weights, dot)
        mean_sum = np.einsum("br,rknd->bknd", weights, sums)
    return (mean_dot + radius * np.abs(mean_sum).max(axis=-1)).max(axis=-1)
