"""What a grading run leaves behind: sealed records, the report folder, the class tables.

Imports ``inputs`` (and the layers below it), never the policy that fills the records.

- ``keyed``: keyed ``grade.json`` records (the report folder's key, seals, shape checks)
- ``store``: the report folder, the class tables and shard merging
- ``analytics``: what a class's records say: pass shares, failure groups, flags, resources
- ``classreport``: ``grade report``: the class report (HTML, Markdown, PNG figures)
- ``similarity``: ``grade similarity``: how alike the class's solution cells are
  (ranked pairs, CSV and HTML; evidence for a person, never a grade)
- ``answers``: ``grade answers``: the class's written answers, one page per question,
  and the ``manual.csv`` graders fill (optionally under pseudonyms)
"""
