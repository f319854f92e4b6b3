"""What is shown. `cli` is the `dpverify` command (its inputs checked first by `inputs`); the groups it
drives: `bench/` (dpverify bench), `verify/` (the door for a user's implementation: dpverify verify and the
pytest plugin), `run/` (experiments, parameters, the runner and its caches), `report/` (what a run
publishes and how two reports compare) and `data/` (the real datasets). `<paper>/` holds one paper's
experiments (one per figure or table, parameters in TOML) and its benchmark. Imports: everything below,
and down the groups in that order (pyproject's import contracts); a paper room never imports another's.
"""
