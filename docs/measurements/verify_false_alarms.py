"""False alarms of verify's exit status on each paper's correct example: 100 root seeds, --noise own, every check
but exact (exact is deterministic: the examples conform on the tape, tests/reproductions/test_verify*.py); the
measurement of tests/reproductions/test_verify_false_alarms.py, printed per paper.
Run from the checkout: python docs/measurements/verify_false_alarms.py dp-recal wang-basar zcdp-nfl dpdo-nc (docs/verify.md)."""
import json
import sys
import time
from pathlib import Path

import joblib
from scipy.stats import binomtest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.reproductions.test_verify_false_alarms import SEEDS, exit_status_of  # noqa: E402

for paper in sys.argv[1:]:
    started = time.time()
    rows = joblib.Parallel(n_jobs=2)(joblib.delayed(exit_status_of)(paper, seed) for seed in SEEDS)
    alarms = [r for r in rows if r[1] != 0]
    ci = binomtest(len(alarms), len(rows)).proportion_ci(0.95, method="exact")
    print(json.dumps({"paper": paper, "seeds": len(rows), "exit_3": len(alarms), "ci95": [ci.low, ci.high],
                      "which": [r[2] for r in alarms], "alarm_seeds": [r[0] for r in alarms],
                      "minutes": round((time.time() - started) / 60, 1)}), flush=True)
