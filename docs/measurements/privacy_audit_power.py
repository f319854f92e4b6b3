"""What verify's whole-run privacy audit catches: the leak factor it prints for bugs planted into copies of each
paper's example (`--checks privacy --noise own`, the default root seed 20240221, the quick profile's 10,000 runs per side).
Run from the checkout: python docs/measurements/privacy_audit_power.py (about 10 minutes on 2 cores; docs/verify.md)."""
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from dpverify.reproductions.verify.command import verify  # noqa: E402
from tests.reproductions.planting import planted  # noqa: E402

LAPLACE = "q = [x[i] + rng.laplace(0.0, sigma, size=d) if sigma > 0 else x[i].copy() for i in range(n)]"
DPDO_SIGMA, ZCDP_SIGMA, WB_STD = ("sigma = 2.0 * np.sqrt(d) * alpha", "sigmas = sensitivity / np.sqrt(2.0 * phi)",
                                  "std = np.sqrt(setting.sigma_var)")
REUSED = {
    "dpdo-nc": (LAPLACE, "base = base if t > 1 else [rng.laplace(0.0, 1.0, size=d) for i in range(n)]\n"
                         "        q = [x[i] + sigma * base[i] for i in range(n)]"),
    "zcdp-nfl": ("noise = sigmas * rng.standard_normal((K, d))", "base = base if n > 1 else rng.standard_normal((K, d))\n"
                 "        noise = sigmas * base"),
    "wang-basar": ("noise = rng.normal(0.0, std, size=d)", "base = base if k > 1 or j > 0 else {}\n"
                   "            base.setdefault(j, rng.normal(0.0, std, size=d))\n            noise = base[j]"),
}
CLEAR = {
    "dpdo-nc": (LAPLACE, "q = [x[i] + (rng.laplace(0.0, sigma, size=d) if t == 1 else 0.0) for i in range(n)]"),
    "zcdp-nfl": ("sent = new_w + noise", "sent = new_w + noise * (n == 1)"),
    "wang-basar": ("noise = rng.normal(0.0, std, size=d)", "noise = rng.normal(0.0, std, size=d) * (k == 1)"),
}
SCALE = {"dpdo-nc": DPDO_SIGMA, "zcdp-nfl": ZCDP_SIGMA, "wang-basar": WB_STD}
MORE = {   # the other privacy bugs docs/verify.md names
    "dpdo-nc": {"one noise vector shared by all nodes": (LAPLACE, "shared = rng.laplace(0.0, 1.0, size=d)\n"
                                                                  "        q = [x[i] + sigma * shared for i in range(n)]"),
                "the same noise in every run": (LAPLACE, "fixed = np.random.default_rng(t)\n"
                                                         "        q = [x[i] + fixed.laplace(0.0, sigma, size=d) for i in range(n)]"),
                "Gaussian of the Laplace variance": (LAPLACE, "q = [x[i] + rng.normal(0.0, np.sqrt(2.0) * sigma, size=d) "
                                                              "for i in range(n)]")},
    "zcdp-nfl": {"per-sample clipping skipped": ("gradients = clipped(gradients, setting.c1)", "pass")},
}

for paper in ("dpdo-nc", "zcdp-nfl", "wang-basar"):
    room = paper.replace("-", "_")
    example = Path(f"examples/{room}/my_{room}.py")
    cases = {"correct": None, "clear after round 1": CLEAR[paper], "reused": REUSED[paper]}
    cases |= {f"{f}x too small": (SCALE[paper], f"{SCALE[paper]} / {f}") for f in (2, 3, 4)} | MORE.get(paper, {})
    for name, plant in cases.items():
        spec = f"{example}:run" if plant is None else f"{planted(example, Path(tempfile.mkdtemp()), *plant)}:run"
        result = verify(paper, spec, checks=("privacy",), noise="own", claims=False)
        line = next(line for line in result.lines() if "conformance-privacy" in line)
        score = {"discriminant": "D", "implied-noise repetition": "R", "implied-noise likelihood ratio": "L"}[
            line.split("scored by the ")[1].split(" (the fit part")[0]]   # the fit part's choice (docs/verify.md)
        print(f"{paper} | {name} | {result.verdicts['privacy']} | {line.split('leak factor >= ')[1].split()[0]} {score}",
              flush=True)
