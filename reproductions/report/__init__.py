"""What a run publishes: `summary.json`, `<paper>.md` and `index.html` (`publish`), their schema,
the comparison of two reports that gates CI (`compare`), JUnit XML (`junit`), and the constants table
(`constants`). Imports: only the floors below.
"""
