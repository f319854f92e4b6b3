"""Reference mechanisms for the privacy auditor: correct ones and known-broken ones from the literature.

Every sampler is batched: `sampler(dataset, n, rng, **parameters)` returns n independent outputs at
once, shape (n,) or (n, k). A dataset is a vector of query answers (the data model of Ding, Wang,
Wang, Zhang & Kifer 2018, "Detecting Violations of Differential Privacy", CCS 2018, and of Lyu, Su &
Li 2017, "Understanding the Sparse Vector Technique for Differential Privacy", PVLDB 10(6)):
neighbouring datasets are answer vectors that differ by at most `sensitivity` in the mechanism's norm
(l1 for Laplace, l2 for Gaussian, l-infinity -- every query may move by up to `sensitivity` -- for
the sparse vector technique and report-noisy-max). `worst_case_neighbours(name)` gives a pair on which
the mechanism's flaw (if any) shows, `adjacency(name)` the matching neighbouring relation, and
`REFERENCE_MECHANISMS` what each mechanism claims and what is true.

Correct:
  laplace_count        q + Lap(Delta/eps) per coordinate, eps-DP              (Dwork & Roth 2014, Thm 3.6)
  gaussian_sum         q + N(0, sigma^2), sigma = Delta/sqrt(2 rho), rho-zCDP  (Bun & Steinke 2016, Prop. 1.6)
  sparse_vector        Lyu et al. 2017 Alg. 1 (threshold noise Lap(Delta/eps1), query noise
                       Lap(2 c Delta/eps2), halts after c positives), eps-DP  (Lyu et al. Thm 2)
  report_noisy_max     argmax_i q_i + Lap(2 Delta/eps), eps-DP for queries that may move in either
                       direction (Dwork & Roth 2014, Claim 3.9 with the factor 2 of non-monotone queries;
                       statdp `noisy_max_v1a` of Ding et al. 2018)
Broken:
  laplace_scale_epsilon     Laplace scale Delta*eps instead of Delta/eps: true eps = 1/eps
                            (Ding et al. 2018, Sec. 6, "histogram" with the wrong scale)
  laplace_half_sensitivity  calibrated to Delta/2: true eps = 2 eps
  gaussian_half_sensitivity calibrated to Delta/2 (sigma halved): true rho = 4 rho
  svt_roth_2011             Lyu et al. Alg. 3: outputs the noisy query q_i + nu_i instead of "above": not eps'-DP for any eps'
  svt_lee_clifton_2014      Lyu et al. Alg. 4: eps1 = eps/4, query noise Lap(Delta/eps2) (no factor 2c): ((1 + 6c)/4) eps-DP
  svt_stoddard_2014         Lyu et al. Alg. 5: no query noise, never halts: not eps'-DP for any eps'
  svt_chen_2015             Lyu et al. Alg. 6: query noise Lap(Delta/eps2), never halts: not eps'-DP for any eps'
  report_noisy_max_value    returns the noisy maximum VALUE instead of its index (Ding et al. 2018, Sec. 6)

Sparse-vector transcripts are (n, k) arrays: 1.0 = above the noisy threshold, 0.0 = below, -1.0 = not
answered (after the mechanism halted); `svt_roth_2011` appends k columns with the released noisy values
(0.0 where nothing was released), shape (n, 2k).

Pure numpy; the Laplace and Gaussian releases go through `dpverify.algorithms.core.noise` (the privacy ledger).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.noise import gaussian_mechanism, laplace_mechanism

# default: number of queries of the sparse-vector and noisy-max counterexamples (Ding et al. 2018 test
# inputs of length 5 and 10; 10 makes the violations of the unbounded sparse-vector variants large).
SVT_QUERIES = 10
NOISY_MAX_QUERIES = 5


# ------------------------------------------------------------------------------------------------
# Laplace and Gaussian releases


def laplace_count(dataset, n: int, rng: np.random.Generator, epsilon: float, sensitivity: float = 1.0, *, ledger=None) -> np.ndarray:
    """q + Lap(sensitivity/eps) per coordinate: eps-DP for l1-sensitivity `sensitivity` (Dwork & Roth 2014, Thm 3.6)."""
    epsilon, sensitivity = _positive("epsilon", epsilon), _positive("sensitivity", sensitivity)
    return _laplace_release(dataset, n, rng, sensitivity, sensitivity / epsilon, ledger, "laplace_count")


def laplace_scale_epsilon(dataset, n: int, rng: np.random.Generator, epsilon: float, sensitivity: float = 1.0, *, ledger=None) -> np.ndarray:
    """BROKEN: Laplace scale sensitivity * eps instead of sensitivity / eps (the bug of Ding et al.'s
    `histogram_eps`): claims eps-DP, is (1/eps)-DP (eps = Delta/b, Dwork & Roth Thm 3.6)."""
    epsilon, sensitivity = _positive("epsilon", epsilon), _positive("sensitivity", sensitivity)
    return _laplace_release(dataset, n, rng, sensitivity, sensitivity * epsilon, ledger, "laplace_scale_epsilon")


def laplace_half_sensitivity(dataset, n: int, rng: np.random.Generator, epsilon: float, sensitivity: float = 1.0, *, ledger=None) -> np.ndarray:
    """BROKEN: calibrated to sensitivity/2 (sensitivity under-stated by a factor 2): claims eps-DP, is 2 eps-DP."""
    epsilon, sensitivity = _positive("epsilon", epsilon), _positive("sensitivity", sensitivity)
    return _laplace_release(dataset, n, rng, sensitivity / 2.0, sensitivity / 2.0 / epsilon, ledger, "laplace_half_sensitivity")


def gaussian_sum(dataset, n: int, rng: np.random.Generator, rho: float | None = None, sensitivity: float = 1.0, *, sigma: float | None = None, ledger=None) -> np.ndarray:
    """q + N(0, sigma^2) per coordinate with sigma = sensitivity / sqrt(2 rho): rho-zCDP for l2-sensitivity
    `sensitivity` (Bun & Steinke 2016, Prop. 1.6). Pass `sigma` instead of rho to choose the noise directly
    (e.g. the classical (eps, delta) calibration, dpverify.algorithms.core.privacy.classical_gaussian_sigma)."""
    sensitivity = _positive("sensitivity", sensitivity)
    if (rho is None) == (sigma is None):
        raise InvalidParameterError(f"gaussian_sum needs exactly one of rho (zCDP) and sigma; got rho={rho!r}, sigma={sigma!r}")
    sigma = sensitivity / math.sqrt(2.0 * _positive("rho", rho)) if sigma is None else _positive("sigma", sigma)
    return _gaussian_release(dataset, n, rng, sensitivity, sigma, ledger, "gaussian_sum")


def gaussian_half_sensitivity(dataset, n: int, rng: np.random.Generator, rho: float, sensitivity: float = 1.0, *, ledger=None) -> np.ndarray:
    """BROKEN: calibrated to sensitivity/2, i.e. sigma halved: claims rho-zCDP, is 4 rho-zCDP (Prop. 1.6)."""
    rho, sensitivity = _positive("rho", rho), _positive("sensitivity", sensitivity)
    return _gaussian_release(dataset, n, rng, sensitivity / 2.0, sensitivity / 2.0 / math.sqrt(2.0 * rho), ledger, "gaussian_half_sensitivity")


def _laplace_release(dataset, n, rng, assumed_sensitivity, scale, ledger, label):
    queries, n = _queries(dataset), _count(n)
    values = np.broadcast_to(queries, (n, 1, queries.size))
    released = laplace_mechanism(values, assumed_sensitivity, scale, rng, ledger=ledger, label=label)[:, 0, :]
    return released[:, 0] if queries.size == 1 else released


def _gaussian_release(dataset, n, rng, assumed_sensitivity, sigma, ledger, label):
    queries, n = _queries(dataset), _count(n)
    values = np.broadcast_to(queries, (n, 1, queries.size))
    released = gaussian_mechanism(values, assumed_sensitivity, sigma, rng, ledger=ledger, label=label)[:, 0, :]
    return released[:, 0] if queries.size == 1 else released


# ------------------------------------------------------------------------------------------------
# sparse vector technique (Lyu, Su & Li 2017, Algorithms 1 and 3-6; Table 1 there)


def sparse_vector(dataset, n: int, rng: np.random.Generator, epsilon: float, threshold: float, cutoff: int = 1, sensitivity: float = 1.0) -> np.ndarray:
    """Lyu et al. 2017 Alg. 1 (correct, eps-DP, their Thm 2): eps1 = eps2 = eps/2, rho ~ Lap(Delta/eps1),
    nu_i ~ Lap(2 c Delta/eps2), answer "above" iff q_i + nu_i >= T + rho, halt after c "above"."""
    epsilon, sensitivity, cutoff = _positive("epsilon", epsilon), _positive("sensitivity", sensitivity), _cutoff(cutoff)
    eps1 = eps2 = epsilon / 2.0
    return _svt(dataset, n, rng, threshold, sensitivity / eps1, 2.0 * cutoff * sensitivity / eps2, cutoff)


def svt_roth_2011(dataset, n: int, rng: np.random.Generator, epsilon: float, threshold: float, cutoff: int = 1, sensitivity: float = 1.0) -> np.ndarray:
    """BROKEN, Lyu et al. 2017 Alg. 3 (Roth 2011 lecture notes): rho ~ Lap(Delta/eps1), nu_i ~ Lap(c Delta/eps2),
    eps1 = eps2 = eps/2, halts after c "above", but releases q_i + nu_i for each "above": claims eps-DP, is not
    eps'-DP for any finite eps' (Lyu et al. Sec. 4.1). Output (n, 2k): codes, then released values."""
    epsilon, sensitivity, cutoff = _positive("epsilon", epsilon), _positive("sensitivity", sensitivity), _cutoff(cutoff)
    eps1 = eps2 = epsilon / 2.0
    return _svt(dataset, n, rng, threshold, sensitivity / eps1, cutoff * sensitivity / eps2, cutoff, release_values=True)


def svt_lee_clifton_2014(dataset, n: int, rng: np.random.Generator, epsilon: float, threshold: float, cutoff: int = 1, sensitivity: float = 1.0) -> np.ndarray:
    """BROKEN, Lyu et al. 2017 Alg. 4 (Lee & Clifton 2014): eps1 = eps/4, rho ~ Lap(Delta/eps1), eps2 = 3 eps/4,
    nu_i ~ Lap(Delta/eps2) (no factor 2c), halts after c "above": claims eps-DP, is ((1 + 6c)/4) eps-DP
    (Lyu et al. Sec. 4.2)."""
    epsilon, sensitivity, cutoff = _positive("epsilon", epsilon), _positive("sensitivity", sensitivity), _cutoff(cutoff)
    eps1 = epsilon / 4.0
    eps2 = epsilon - eps1
    return _svt(dataset, n, rng, threshold, sensitivity / eps1, sensitivity / eps2, cutoff)


def svt_stoddard_2014(dataset, n: int, rng: np.random.Generator, epsilon: float, threshold: float, cutoff: int = 1, sensitivity: float = 1.0) -> np.ndarray:
    """BROKEN, Lyu et al. 2017 Alg. 5 (Stoddard, Chen & Machanavajjhala 2014): rho ~ Lap(Delta/eps1), eps1 = eps/2,
    NO noise on the queries and no halting (`cutoff` is ignored): claims eps-DP, is not eps'-DP for any finite
    eps' (Lyu et al. Sec. 4.3; statdp `iSVT1`)."""
    epsilon, sensitivity = _positive("epsilon", epsilon), _positive("sensitivity", sensitivity)
    return _svt(dataset, n, rng, threshold, sensitivity / (epsilon / 2.0), 0.0, None)


def svt_chen_2015(dataset, n: int, rng: np.random.Generator, epsilon: float, threshold: float, cutoff: int = 1, sensitivity: float = 1.0) -> np.ndarray:
    """BROKEN, Lyu et al. 2017 Alg. 6 (Chen, Xiao, Zhang & Xu 2015): rho ~ Lap(Delta/eps1), nu_i ~ Lap(Delta/eps2),
    eps1 = eps2 = eps/2, no halting (`cutoff` is ignored): claims eps-DP, is not eps'-DP for any finite eps'
    (Lyu et al. Sec. 4.3; statdp `iSVT2`)."""
    epsilon, sensitivity = _positive("epsilon", epsilon), _positive("sensitivity", sensitivity)
    eps1 = eps2 = epsilon / 2.0
    return _svt(dataset, n, rng, threshold, sensitivity / eps1, sensitivity / eps2, None)


def _svt(dataset, n, rng, threshold, threshold_scale, query_scale, cutoff, release_values=False) -> np.ndarray:
    """Batched sparse vector: one noisy threshold per run, one noise per query and run; "above" iff
    q_i + nu_i >= T + rho; with a cutoff c the run stops answering after its c-th "above"."""
    queries, n = _queries(dataset), _count(n)
    threshold = _finite("threshold", threshold)
    noisy_threshold = threshold + rng.laplace(0.0, threshold_scale, size=(n, 1))
    noisy_queries = queries + (rng.laplace(0.0, query_scale, size=(n, queries.size)) if query_scale > 0 else 0.0)
    above = noisy_queries >= noisy_threshold
    if cutoff is None:
        answered = np.ones_like(above)
    else:
        positives_before = np.cumsum(above, axis=1) - above
        answered = positives_before < cutoff
    codes = np.where(answered, above.astype(float), -1.0)
    if not release_values:
        return codes
    released = np.where(answered & above, noisy_queries, 0.0)
    return np.concatenate([codes, released], axis=1)


# ------------------------------------------------------------------------------------------------
# report noisy max


def report_noisy_max(dataset, n: int, rng: np.random.Generator, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """argmax_i (q_i + Lap(2 Delta/eps)), the INDEX only (as float): eps-DP when each query may move by up to
    Delta in either direction (Dwork & Roth 2014, Claim 3.9 -- Lap(1/eps) for monotone counting queries;
    statdp `noisy_max_v1a`). Output (n,)."""
    epsilon, sensitivity = _positive("epsilon", epsilon), _positive("sensitivity", sensitivity)
    queries, n = _queries(dataset), _count(n)
    noisy = queries + rng.laplace(0.0, 2.0 * sensitivity / epsilon, size=(n, queries.size))
    return np.argmax(noisy, axis=1).astype(float)


def report_noisy_max_value(dataset, n: int, rng: np.random.Generator, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """BROKEN: returns the noisy maximum VALUE instead of its index (Ding et al. 2018, Sec. 6; statdp
    `noisy_max_v1b`): claims eps-DP; when all k queries move by Delta ("all below"), the maximum of k
    Laplace(2 Delta/eps) variables shifts by Delta and its density ratio k F^{k-1} f / (k F^{k-1} f)(x - Delta)
    reaches e^{k eps/2} in the lower tail (F(x) = e^{x/b}/2 there): true eps = k eps / 2 on that pair. Output (n,)."""
    epsilon, sensitivity = _positive("epsilon", epsilon), _positive("sensitivity", sensitivity)
    queries, n = _queries(dataset), _count(n)
    noisy = queries + rng.laplace(0.0, 2.0 * sensitivity / epsilon, size=(n, queries.size))
    return noisy.max(axis=1)


# ------------------------------------------------------------------------------------------------
# registry, neighbouring pairs, adjacency


@dataclass(frozen=True)
class ReferenceMechanism:
    """name: registry key; sampler: the batched sampler; correct: whether the claimed guarantee holds;
    claim: which guarantee the implementation claims ("epsilon" DP or "rho" zCDP); norm: the neighbouring
    relation of its datasets; true_privacy: (parameters) -> the true eps (or rho) on `worst_case_neighbours`
    as far as known (an upper bound, inf when unbounded), in terms of the claimed one; source: citation."""

    name: str
    sampler: Callable[..., np.ndarray]
    correct: bool
    claim: str
    norm: str
    true_privacy: Callable[..., float]
    source: str


def _eps(p):
    return p["epsilon"]


REFERENCE_MECHANISMS: dict[str, ReferenceMechanism] = {
    m.name: m
    for m in (
        ReferenceMechanism("laplace_count", laplace_count, True, "epsilon", "l1", _eps, "Dwork & Roth 2014, Thm 3.6"),
        ReferenceMechanism("gaussian_sum", gaussian_sum, True, "rho", "l2", lambda p: p["rho"], "Bun & Steinke 2016, Prop. 1.6"),
        ReferenceMechanism("sparse_vector", sparse_vector, True, "epsilon", "linf", _eps, "Lyu, Su & Li 2017, Alg. 1 / Thm 2"),
        ReferenceMechanism("report_noisy_max", report_noisy_max, True, "epsilon", "linf", _eps, "Dwork & Roth 2014, Claim 3.9; Ding et al. 2018"),
        ReferenceMechanism(
            "laplace_scale_epsilon", laplace_scale_epsilon, False, "epsilon", "l1", lambda p: 1.0 / p["epsilon"],
            "Ding, Wang, Wang, Zhang & Kifer 2018, Sec. 6 (histogram with scale eps)",
        ),
        ReferenceMechanism("laplace_half_sensitivity", laplace_half_sensitivity, False, "epsilon", "l1", lambda p: 2.0 * p["epsilon"], "sensitivity under-stated by 2"),
        ReferenceMechanism("gaussian_half_sensitivity", gaussian_half_sensitivity, False, "rho", "l2", lambda p: 4.0 * p["rho"], "sensitivity under-stated by 2 (sigma halved)"),
        ReferenceMechanism("svt_roth_2011", svt_roth_2011, False, "epsilon", "linf", lambda p: math.inf, "Lyu, Su & Li 2017, Alg. 3 (Roth 2011)"),
        ReferenceMechanism(
            "svt_lee_clifton_2014", svt_lee_clifton_2014, False, "epsilon", "linf",
            lambda p: (1.0 + 6.0 * p.get("cutoff", 1)) / 4.0 * p["epsilon"], "Lyu, Su & Li 2017, Alg. 4 (Lee & Clifton 2014)",
        ),
        ReferenceMechanism("svt_stoddard_2014", svt_stoddard_2014, False, "epsilon", "linf", lambda p: math.inf, "Lyu, Su & Li 2017, Alg. 5 (Stoddard et al. 2014)"),
        ReferenceMechanism("svt_chen_2015", svt_chen_2015, False, "epsilon", "linf", lambda p: math.inf, "Lyu, Su & Li 2017, Alg. 6 (Chen et al. 2015)"),
        ReferenceMechanism(
            "report_noisy_max_value", report_noisy_max_value, False, "epsilon", "linf",
            lambda p: NOISY_MAX_QUERIES * p["epsilon"] / 2.0, "Ding, Wang, Wang, Zhang & Kifer 2018, Sec. 6",
        ),
    )
}


def mechanism_names() -> list[str]:
    return list(REFERENCE_MECHANISMS)


def get_mechanism(name: str) -> ReferenceMechanism:
    if name not in REFERENCE_MECHANISMS:
        raise InvalidParameterError(f"unknown reference mechanism {name!r}; known: {', '.join(REFERENCE_MECHANISMS)}")
    return REFERENCE_MECHANISMS[name]


def make_sampler(name: str, **parameters) -> Callable[[object, int, np.random.Generator], np.ndarray]:
    """`sample(dataset, n, rng)` of a reference mechanism with its parameters fixed (for `dpverify.theory.audit.audit`)."""
    mechanism = get_mechanism(name)

    def sample(dataset, n, rng):
        return mechanism.sampler(dataset, n, rng, **parameters)

    sample.__name__ = f"{name}_sampler"
    return sample


def worst_case_neighbours(name: str, sensitivity: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The natural neighbouring pair of a reference mechanism (datasets = query-answer vectors).

    Laplace / Gaussian: one query moved by the full sensitivity, ([0], [Delta]).
    Sparse vector and noisy max (every query may move by up to Delta), scaled by `sensitivity`:
      sparse_vector, svt_stoddard_2014, svt_chen_2015, svt_roth_2011: the "x shape" pattern of Ding et
        al.'s input generator (statdp `generate_databases`, Sec. 5 of the paper), [1]*5+[0]*5 vs
        [0]*5+[1]*5; e.g. without query noise (Alg. 5) and T = 1 the transcript "above x5, below x5" has
        positive probability under d0 and probability 0 under d1;
      svt_lee_clifton_2014: d0 = [0]*9+[1] vs d1 = [1]*9+[0], the pair behind Lyu et al.'s analysis of
        Alg. 4 (nine queries move down, the last one up: d0 favours "below x9, then above", whose
        privacy loss approaches eps1 + 2 eps2 = 7 eps / 4 for c = 1);
      report_noisy_max: "one above rest below" of Ding et al.: [1]*5 vs [2]+[0]*4 (index 0 gains, the others lose);
      report_noisy_max_value: "all below" of Ding et al.: [1]*5 vs [0]*5 (the maximum moves by Delta in every run).
    """
    sensitivity = _positive("sensitivity", sensitivity)
    get_mechanism(name)
    if name in ("laplace_count", "laplace_scale_epsilon", "laplace_half_sensitivity", "gaussian_sum", "gaussian_half_sensitivity"):
        d0, d1 = [0.0], [1.0]
    elif name in ("sparse_vector", "svt_stoddard_2014", "svt_chen_2015", "svt_roth_2011"):
        half = SVT_QUERIES // 2
        d0, d1 = [1.0] * half + [0.0] * (SVT_QUERIES - half), [0.0] * half + [1.0] * (SVT_QUERIES - half)
    elif name == "svt_lee_clifton_2014":
        d0, d1 = [0.0] * (SVT_QUERIES - 1) + [1.0], [1.0] * (SVT_QUERIES - 1) + [0.0]
    elif name == "report_noisy_max":
        d0, d1 = [1.0] * NOISY_MAX_QUERIES, [2.0] + [0.0] * (NOISY_MAX_QUERIES - 1)
    else:  # report_noisy_max_value
        d0, d1 = [1.0] * NOISY_MAX_QUERIES, [0.0] * NOISY_MAX_QUERIES
    return sensitivity * np.array(d0), sensitivity * np.array(d1)


def neighbouring(d0, d1, *, sensitivity: float = 1.0, norm: str = "linf") -> bool:
    """True iff the query-answer vectors have the same length and ||d1 - d0||_norm <= sensitivity (+1e-12 relative)."""
    a, b = _queries(d0), _queries(d1)
    if a.shape != b.shape:
        return False
    difference = np.abs(b - a)
    distances = {"l1": difference.sum(), "l2": float(np.sqrt(np.sum(difference**2))), "linf": difference.max()}
    if norm not in distances:
        raise InvalidParameterError(f"norm must be one of {sorted(distances)}; got {norm!r}")
    return bool(distances[norm] <= sensitivity * (1.0 + 1e-12))


def adjacency(name: str, sensitivity: float = 1.0) -> Callable[[object, object], bool]:
    """`adjacency(d0, d1) -> bool` of a reference mechanism (its norm, at `sensitivity`), for `audit(adjacency=...)`."""
    norm = get_mechanism(name).norm
    sensitivity = _positive("sensitivity", sensitivity)

    def is_neighbouring(d0, d1) -> bool:
        return neighbouring(d0, d1, sensitivity=sensitivity, norm=norm)

    return is_neighbouring


# ------------------------------------------------------------------------------------------------
# validation


def _queries(dataset) -> np.ndarray:
    try:
        queries = np.atleast_1d(np.asarray(dataset, dtype=float))
    except (TypeError, ValueError) as error:
        raise InvalidDataError(f"a dataset is a vector of query answers; got {type(dataset).__name__}") from error
    if queries.ndim != 1 or queries.size == 0:
        raise InvalidDataError(f"a dataset is a non-empty 1-D vector of query answers; got shape {queries.shape}")
    if not np.all(np.isfinite(queries)):
        raise InvalidDataError(f"query answers must be finite; got {queries}")
    return queries


def _count(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError(f"n (number of runs) must be a positive integer; got {n!r}")
    return int(n)


def _positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not (math.isfinite(value) and value > 0):
        raise InvalidParameterError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def _finite(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(value):
        raise InvalidParameterError(f"{name} must be a finite number; got {value!r}")
    return float(value)


def _cutoff(cutoff) -> int:
    if isinstance(cutoff, bool) or not isinstance(cutoff, (int, np.integer)) or cutoff < 1:
        raise InvalidParameterError(f"cutoff c (number of 'above' answers before halting) must be a positive integer; got {cutoff!r}")
    return int(cutoff)
