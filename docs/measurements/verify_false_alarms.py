"""False alarms of verify's exit status on each paper's correct example: 100 root seeds, --noise own, every check
but exact (exact is deterministic: the examples conform on the tape, tests/reproductions/test_verify*.py).
Run from the checkout: python docs/measurements/verify_false_alarms.py dp-recal wang-basar zcdp-nfl dpdo-nc (docs/verify.md)."""
import json
import sys
import time

import joblib
from scipy.stats import binomtest

CHECKS = "accounting,replay,noise-scale,noise-law,distribution,privacy"

def one(paper, seed):
    from dpverify.reproductions.verify.command import verify
    room = paper.replace("-", "_")
    result = verify(paper, f"examples/{room}/my_{room}.py:run", seed=seed, noise="own", checks=CHECKS)
    return seed, result.exit_status, sorted(k for k, v in result.verdicts.items() if v == "refuted")

for paper in sys.argv[1:]:
    started = time.time()
    rows = joblib.Parallel(n_jobs=2)(joblib.delayed(one)(paper, 20240221 + s) for s in range(100))
    alarms = [r for r in rows if r[1] != 0]
    ci = binomtest(len(alarms), len(rows)).proportion_ci(0.95, method="exact")
    print(json.dumps({"paper": paper, "seeds": len(rows), "exit_3": len(alarms), "ci95": [ci.low, ci.high],
                      "which": [r[2] for r in alarms], "minutes": round((time.time() - started) / 60, 1)}), flush=True)
