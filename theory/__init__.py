"""What is claimed. The spine: the claim model (`claims`), the rules that decide (`rules`), what a check
may ask of the floor above (`execution`), the papers found from their rooms (`papers`) and the robustness
of a verdict to seeds and defaults (`robustness`). The groups: `instruments/` (statistics, sympy, certified
ground truth), `audit/` (the empirical privacy auditor and the privacy table), `verify/` (the checks
`dpverify verify` runs) and `door/` (which implementation a run uses, and user code isolated). `<paper>/`
holds one paper's `claims.py` and its checks. Imports: `dpverify.algorithms` and this floor, down the groups
(pyproject's import contracts); a paper room never imports another paper's room. Theory reads no file:
experiment parameters and results arrive in the CheckContext.
"""
