"""`dpverify bench`: how it times (`timing`), the per-paper benchmarks' shared driver (`papers`;
each `<paper>/bench.py` supplies the implementations), the privacy auditor's benchmark (`audit`) and
the time of `dpverify verify` per paper (`verify`). Imports: anything on this floor but `cli`.
"""
