"""One door for our implementations and the user's: which implementation a run uses
(`implementations`) and how user code runs isolated in a worker process of its own (`isolation`).
Imports: only `dpverify.algorithms`.
"""
