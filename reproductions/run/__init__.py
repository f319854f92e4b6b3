"""How an experiment runs: parameters from TOML (`params`), experiments and their tasks
(`experiments`), seeded tasks through joblib or Dask with a content-hash cache (`runner`), cached claim
checks (`check_cache`), sweeps of a default (`sweep`), progress, BLAS threads and malloc settings of
the worker processes. Imports: `report` and `data` of this floor, and the floors below.
"""
