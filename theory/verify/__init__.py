"""The checks `dpverify verify` runs on an implementation (docs/verify.md): conformance to the paper
(`conformance`) and the law of the noise it sent (`noise_law`). Imports: this floor and
`dpverify.algorithms`.
"""
