"""What checks measure with: statistical tests with stated confidence and power (`stats`), sympy
proofs and counterexamples (`symbolic`) and certified ground truth (`ground_truth`). Imports: only
`dpverify.algorithms`; nothing here decides a verdict.
"""
