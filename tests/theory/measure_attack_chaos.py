"""How chaotic the DP-RECAL gradient-inversion attacks are (issue 16): the numbers behind
theory/dp_recal/attacks.py CHAOS_TOLERANCE, and the helpers its test uses.

One attack task (reproductions/dp_recal/attacks.simulate_attack) is run under perturbations that another machine
could bring: 1 vs 2 BLAS threads (threadpoolctl), the features moved by one ulp (np.nextafter towards 0), and, as a
bound for a trajectory that fully decorrelates, other attack seeds. Printed: each row's per-image PSNR moves and
the moves of the statistics the checks decide on, relative to their dB value.

    DPVERIFY_DATA=/path/to/data python tests/theory/measure_attack_chaos.py figure-4 [targets]
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from unittest import mock

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from dpverify.reproductions.data.datasets import Dataset, load_dataset
from dpverify.reproductions.dp_recal import attacks
from dpverify.theory.dp_recal.attacks import shown_psnr

SEED = 20240221   # the harness's default root seed
FIGURES = {"figure-4": ("dlg", "mnist", 300), "figure-7": ("inverting-gradients", "mnist", 2000),
           "figure-8": ("gradinversion", "mnist", 2000), "figure-9": ("dlg", "ijcnn1", 300)}   # quick profile sizes


def task_parameters(figure: str, targets: int = 8) -> dict:
    """The figure's task as its TOML sets it (record targets), with `targets` attacked agents."""
    attack, dataset, iterations = FIGURES[figure]
    return dict(dataset=dataset, attack=attack, target_kind="record", loss="linear", num_agents=8, targets=targets,
                clip=1.0, epsilon=12.0, delta=1e-3, decay=1.05, plf_calibration=300, horizon=200, x1_scale=0.1,
                iterations=iterations, snapshots=[0, iterations])


def one_ulp_down(source: Dataset) -> Dataset:
    """The dataset with every non-zero feature moved by one unit in the last place towards 0 (stays in [0, 1])."""
    features = np.where(source.features > 0, np.nextafter(source.features, 0.0), 0.0)
    return dataclasses.replace(source, features=features)


def run_task(source: Dataset, parameters: dict, *, threads: int = 1, perturb: bool = False,
             attack_seed: int | None = None, seed: int = SEED) -> pd.DataFrame:
    """simulate_attack on `source` (instead of the named file), under the given perturbation."""
    data = one_ulp_down(source) if perturb else source
    original = attacks.run_attack

    def reseeded(*args, rng, **kwargs):   # only the attack's dummy init changes
        return original(*args, rng=np.random.default_rng(attack_seed), **kwargs)

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(attacks, "load_dataset", lambda name: data))
        if attack_seed is not None:
            stack.enter_context(mock.patch.object(attacks, "run_attack", reseeded))
        stack.enter_context(threadpool_limits(limits=threads, user_api="blas"))
        return attacks.simulate_attack(np.random.default_rng(seed), **parameters)


def row_psnr(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per-image PSNR (capped at float rounding) of each (mechanism, inference) row."""
    ok = frame[frame.psnr.notna()]
    return {f"{m}/{i}": shown_psnr(g.psnr) for (m, i), g in ok.groupby(["mechanism", "inference"])}


def main(figure: str, targets: int) -> None:
    parameters = task_parameters(figure, targets)
    source = load_dataset(parameters["dataset"])
    variants = {"1 thread": {}, "2 threads": {"threads": 2}, "one ulp": {"perturb": True}}
    variants |= {f"attack seed {s}": {"attack_seed": s} for s in (1, 2, 3)}
    psnr = {name: row_psnr(run_task(source, parameters, **kwargs)) for name, kwargs in variants.items()}
    base = psnr["1 thread"]
    for row, values in base.items():
        scale = np.maximum(np.abs(values), 1e-12)
        for kind, names in (("threads/ulp", ["2 threads", "one ulp"]), ("seeds", [n for n in psnr if "seed" in n])):
            moves = np.max([np.abs(psnr[n][row] - values) / scale for n in names], axis=0)
            medians = [abs(np.median(psnr[n][row]) - np.median(values)) / max(abs(np.median(values)), 1e-12)
                       for n in names]
            print(f"{figure} {row:16s} median {np.median(values):7.2f} dB  {kind:11s}: per-image move <= "
                  f"{moves.max():.1%}, median move <= {max(medians):.1%}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8)
