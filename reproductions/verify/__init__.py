"""`dpverify verify`, the door for a user's implementation (docs/verify.md): the command
(`command`), the paper's claims re-run on the user's code (`rerun_claims`) and the pytest plugin
(`pytest_plugin`). Imports: `run` and `data` of this floor, and the floors below.
"""
