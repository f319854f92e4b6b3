"""The real datasets (`datasets`) and where their files come from, byte-checked (`sources`).
Imports: nothing of dpverify above `algorithms`.
"""
