"""Tune the stepsize / penalty rules of the DP-RECAL baselines (algorithms/dp_recal/baselines/dp_*.py) on the
NON-private problem (spec §6: "tune ... for fastest convergence, then freeze").

Instance shaped like seeds/001 Sec. VII: 8-agent ring, features U[0, 1], labels +-1, ridge 0.5 and a
small lasso (x* != 0; with the printed lasso 0.5 x* = 0 on ijcnn1); DP-MRADMM with r = 0 (lasso 0).
Each rule is a multiple of 1/L (stepsizes) or of L (ADMM penalties), L = `smoothness` = max_i L_i + 2 ridge; the score is the number
of PLF units until the relative error ||x^k - x*||/||x^0 - x*|| first stays below TARGET (smaller is
better). `--ijcnn1` checks the frozen defaults on ijcnn1 (8 agents, shuffled split, seed 0).

    PYTHONPATH=. python reproductions/dp_recal/tune_baselines.py [--ijcnn1]
"""

import sys

import networkx as nx
import numpy as np

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.baselines.comparison import MODULES
from dpverify.algorithms.dp_recal.baselines.dp_common import smoothness
from dpverify.algorithms.dp_recal.composite import CompositeProblem
from dpverify.theory.dp_recal.composite_ground_truth import solve_composite

TARGET = 1e-8
PLF = 400
GRID = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0)
# (how a grid value g maps to the stepsize argument given L_max, lasso); the modules are comparison.MODULES
CANDIDATES = {
    "dp-extra-27": (lambda g, L: g / L, 0.02),
    "dp-nids-28": (lambda g, L: g / L, 0.02),
    "dp-admm-12": (lambda g, L: 1 / (g * L), 0.02),
    "dp-admm-13": (lambda g, L: g / L, 0.02),
    "dp-mradmm-17": (lambda g, L: 1 / (g * L), 0.0),
    "dp-rwadmm-30": (lambda g, L: 1 / (g * L), 0.02),
    "dp-ic-admm-25": (lambda g, L: 1 / (g * L), 0.02),
}


def synthetic(seed=0, agents=8, samples=40, dim=6):
    rng = np.random.default_rng(seed)
    return LocalData(rng.uniform(0, 1, (agents, samples, dim)), rng.choice([-1.0, 1.0], (agents, samples)))


def plf_to_target(module, problem, data, network, stepsize, truth, plf=PLF, kwargs=None):
    run = module.run(problem, data, network, epsilon=None, plf=plf, decay=1.0, clip=None, replicas=1,
                     rng=np.random.default_rng(0), stepsize=stepsize, **(kwargs or {}))
    error = np.linalg.norm(run.x_history[:, 0] - truth, axis=-1) / np.linalg.norm(run.x_history[0, 0] - truth)
    if not np.all(np.isfinite(error)) or error[-1] > TARGET:
        return np.inf
    above = np.flatnonzero(error > TARGET)
    first = 0 if above.size == 0 else above[-1] + 1
    return first * float(run.plf[0]) / (run.x_history.shape[0] - 1)   # iterations -> PLF units


def tune(data, network):
    for key, (to_step, lasso) in CANDIDATES.items():
        module = MODULES[key]
        for loss in ("linear", "logistic"):
            problem = CompositeProblem(loss, lasso=lasso)
            truth = solve_composite(problem, data).x
            L = smoothness(problem, data)
            kwargs = {"stepsize_decay": 1.0} if module is MODULES["dp-admm-13"] else None
            scores = {g: plf_to_target(module, problem, data, network, to_step(g, L), truth, kwargs=kwargs) for g in GRID}
            best = min(scores, key=scores.get)
            print(f"{key:14s} {loss:8s} best {best:4} -> PLF {scores[best]:.0f};  "
                  + " ".join(f"{g}:{s:.0f}" for g, s in scores.items()), flush=True)


def check_ijcnn1():
    from dpverify.reproductions.data.datasets import load_dataset, split_over_agents
    data = split_over_agents(load_dataset("ijcnn1"), 8, rng=0, shuffle=True)
    network = Network.from_networkx(nx.cycle_graph(8))
    for key, (_, lasso) in CANDIDATES.items():
        module = MODULES[key]
        for loss in ("linear", "logistic"):
            problem = CompositeProblem(loss, lasso=lasso)
            truth = solve_composite(problem, data).x
            print(f"ijcnn1 {key:14s} {loss:8s} default: PLF to {TARGET:g} =",
                  plf_to_target(module, problem, data, network, None, truth, plf=300), flush=True)


if __name__ == "__main__":
    if "--ijcnn1" in sys.argv:
        check_ijcnn1()
    else:
        tune(synthetic(), Network.from_networkx(nx.cycle_graph(8)))
