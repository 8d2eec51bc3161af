"""Plausible wrong answers to the exercises, one module per exercise master.

Each module ``NN.py`` (the master's two-digit number) defines ``WRONG``: for each
exercise id, a list of ``(label, code, hint_words)``. ``code`` replaces the
exercise's solution cell; running that exercise's visible test cell must then
fail with :class:`course_utils.exercises.CheckFailed`, and its message must
contain ``hint_words`` (the hint that points at the actual mistake).
``tests/test_wrong_answers.py`` runs them.
"""
