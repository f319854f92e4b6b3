"""What is shown: the CLI, the runner (joblib/Dask, cache), datasets, parameters from TOML, the
report; `<paper>/` holds one paper's experiments (one per figure or table, parameters in TOML)
and its benchmark. Imports: everything below; a paper room never imports another paper's room.
"""
