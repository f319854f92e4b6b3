"""A rough size of each dp-recal task (`Task.cost`, in CPU seconds), so that the runner starts the largest first: with
`--jobs 2`, a run of DP-RW-ADMM on all of MNIST started last would leave the other worker idle for most of it. These
numbers only order the work (and the time-left estimate); no result depends on them, and a wrong one costs idle time,
never a wrong number.

PER_PLF: CPU seconds per PLF unit of one run of 20 replicas on Fashion-MNIST (one core); DATA_SCALE: a data set's cost
against Fashion-MNIST's. Both from the paper profile of 2026-11-26 (commit 7239a18, `reproduce --profile paper
--jobs 2`; the `cpu_seconds` of its curves and the `run_cpu_seconds` of its tables, over the PLF): e.g. DP-RECAL
0.083-0.093 on Fashion-MNIST, 0.061-0.073 on MNIST 0/1, 0.012-0.027 on ijcnn1 and 0.36-0.41 on all of MNIST (v0, CSR
data read a few replicas at a time). CIFAR-10 and covtype were not available there: their scales are guesses."""

from __future__ import annotations

PER_PLF = {"recal": 0.085, "dp-recal": 0.085, "dp-admm-12": 0.17, "dp-nids-28": 0.047, "dp-extra-27": 0.047,
           "dp-rwadmm-30": 0.37, "dp-mradmm-17": 0.17, "dp-admm-13": 0.05, "dp-ic-admm-25": 0.047}
DATA_SCALE = {"ijcnn1": 0.4, "mnist": 0.8, "fashion-mnist": 1.0, "cifar10": 3.0, "mnist-v0": 4.7, "covtype": 1.0}
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
