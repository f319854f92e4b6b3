"""The v0 (seeds/000, measure LCI) versions of DP-RECAL's privacy statements that differ from v1.

v0 Lemma 4 (v0:L382-L403) states the sensitivity Delta = 4 alpha beta L with L = max_i L_i, the
Lipschitz constant of the GRADIENTS (v0 Assumption 1), instead of v1's gradient bound c. A Lipschitz
constant of grad f_i bounds how the gradient changes with the point, not with the data: two datasets
with the same features (so the same L_i) but different labels have gradients that differ by any amount.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from algorithms.composite import CompositeProblem
from algorithms.dp_recal import RecalParams, lemma5_sensitivity, paper_beta, run_recal
from algorithms.network import Network
from algorithms.problems import LocalData
from theory.audit.auditor import sensitivity_probe
from theory.claims import Evidence, Verdict

LABEL_SCALES = (1.0, 10.0, 100.0)  # replacement labels b = +-scale: features (hence L_i) unchanged


def check_v0_lemma_4(context) -> tuple[Verdict, Evidence]:
    """Sensitivity probe of one u-release against v0's Delta = 4 alpha beta L, on neighbours that replace one
    record's label (linear loss, no clipping: v0 has no Assumption 3)."""
    rng = np.random.default_rng(7)
    features = rng.uniform(0, 1, (2, 4, 2))
    data = LocalData(features, rng.choice([-1.0, 1.0], (2, 4)))
    problem = CompositeProblem("linear", lasso=0.0)
    L = problem.lipschitz_constants(data)
    alpha, beta = 1.0 / (L + 1.0), paper_beta(2)
    bound = lemma5_sensitivity(alpha, beta, float(L.max()))          # 4 alpha beta L (v0 Lemma 4)
    network = Network.from_networkx(nx.path_graph(2))
    neighbours = [(data, data.replace_sample(0, 0, features[0, 0], scale)) for scale in LABEL_SCALES]

    def pre_noise(dataset: LocalData) -> np.ndarray:
        run = run_recal(problem, dataset, network, RecalParams(alpha, beta), replicas=1, rng=np.random.default_rng(0),
                        horizon=1, first_holder=0, x1=np.zeros(2), keep_x=False)
        return run.u_sent[0]
    result = sensitivity_probe(pre_noise, neighbours, bound)
    return (Verdict.REFUTED if result.refuted else Verdict.CONFIRMED), Evidence(
        result.summary() + f"; v0's Delta = 4 alpha beta L = {bound:.4g} with L = {L.max():.4g}. Changing one label "
        f"(features, hence L, unchanged) moves the release by {', '.join(f'{d:.3g}' for d in result.distances)} for "
        f"labels +-{', '.join(f'{s:g}' for s in LABEL_SCALES)}: the Lipschitz constant of the gradient does not bound "
        "the sensitivity (v1 replaced it by Assumption 3's gradient bound c).",
        {"distances": list(result.distances), "bound": bound})
