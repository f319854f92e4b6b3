"""A rough size of each dp-recal task (`Task.cost`, in CPU seconds), so that the runner starts the largest first: with
`--jobs 2`, a run of DP-RW-ADMM on all of MNIST started last would leave the other worker idle for most of it. These
numbers only order the work; no result depends on them, and a wrong one costs idle time, never a wrong number.

PER_PLF: CPU seconds per PLF unit of one run of 20 replicas on Fashion-MNIST (one core, logistic loss; the CPU of a
run at PLF 30 minus that at PLF 10, over 20). DATA_SCALE: a data set's cost against Fashion-MNIST's, from the same
algorithms' ratios on ijcnn1 and on all of MNIST (v0)."""

from __future__ import annotations

PER_PLF = {"recal": 0.03, "dp-recal": 0.03, "dp-admm-12": 0.30, "dp-nids-28": 0.10, "dp-extra-27": 0.03,
           "dp-rwadmm-30": 0.48, "dp-mradmm-17": 0.25, "dp-admm-13": 0.06, "dp-ic-admm-25": 0.09}
DATA_SCALE = {"ijcnn1": 0.3, "mnist": 1.0, "fashion-mnist": 1.0, "cifar10": 3.0, "mnist-v0": 4.0, "covtype": 1.0}
REFERENCE_REPLICAS = 20
ATTACK_COST = 30.0   # an attack task: seconds (Figs. 4, 7-9 took 2-29 s of wall each on 2 cores)


def runs_cost(dataset: str, runs: list[tuple[str, int]], replicas: int) -> float:
    """CPU seconds of the (algorithm, PLF) runs on `dataset` with `replicas` replicas, roughly."""
    scale = DATA_SCALE.get(dataset, 1.0) * replicas / REFERENCE_REPLICAS
    return scale * sum(PER_PLF.get(algorithm, 0.1) * plf for algorithm, plf in runs)


def curves_cost(dataset: str, values: dict) -> float:
    """A curves task (Figs. 2, 3, 5, 6; v0 Figs. 2-4): each DP-RECAL budget is a run of its own."""
    runs = [(algorithm, values["plf"]) for algorithm in values["algorithms"]
            for _ in (values["epsilons"] if algorithm == "dp-recal" else [None])]
    return runs_cost(dataset, runs, values["replicas"])
