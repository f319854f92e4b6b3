"""What is claimed: the claim model, the rules that decide, statistics, symbolic and ground-truth
machinery and the privacy auditor; `<paper>/` holds one paper's `claims.py` and its
checks. Imports: `dpverify.algorithms` and this floor; a paper room never imports another paper's
room. Theory reads no file: experiment parameters and results arrive in the CheckContext.
"""
