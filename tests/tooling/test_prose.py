"""The prose check's counting rules (course_utils/tooling/prose.py)."""

from __future__ import annotations

import nbformat

from course_utils.tooling import prose


def _nb(*cells: tuple[str, str]) -> nbformat.NotebookNode:
    make = {
        "markdown": nbformat.v4.new_markdown_cell,
        "code": nbformat.v4.new_code_cell,
    }
    return nbformat.v4.new_notebook(cells=[make[kind](text) for kind, text in cells])


def test_sentences_words_and_parentheses_are_counted_as_a_reader_reads_them():
    p = prose.measure(
        _nb(
            (
                "markdown",
                "# A heading of five words\n\nOne `jax.jit(f)` call compiles. "
                "Then (later) it is fast!\n\n| a | b |\n|---|---|\n| cell one | two |",
            ),
            ("code", "x = 1  # a comment of six words\n# another one\ny = 2"),
        )
    )
    assert p.sentences == [4, 5]  # the code span is one word; "(later)" two
    assert p.words == 5 + 4 + 5 + 5  # heading, sentences, table rows (not the rule)
    assert p.parens == 1  # the one inside the code span is code
    assert p.comment_words == 5 + 2


def test_links_images_tags_and_math_count_as_read():
    p = prose.measure(
        _nb(
            (
                "markdown",
                "[![badge](x.svg)](https://e.org) See [the docs](https://e.org/a) and "
                "$\\frac{a}{b}$ here.<!-- hidden words -->\n\n<details><summary>Why</summary>"
                "\n\nA folded sentence counts too.\n\n</details>",
            ),
        )
    )
    assert p.sentences == [6, 1, 5]  # "See the docs and X here." / "Why" / folded
    assert p.parens == 0


def test_lists_end_sentences_and_lower_case_does_not_start_one():
    text = "- first item without a stop\n- second. Third sentence here\n\nA sentence, e.g. this one."
    assert prose.measure(_nb(("markdown", text))).sentences == [5, 1, 3, 5]


def test_budget_failures_name_each_measure():
    long = " ".join(["word"] * 61) + "."
    p = prose.measure(_nb(("markdown", f"{long} (a) (b)"), ("code", "x" * 10_000)))
    failures = "\n".join(prose.budget_failures(p))
    for phrase in (
        "mean sentence",
        "90th percentile",
        "over 40",
        "over 60",
        "parentheses",
        "characters of prose",
    ):
        assert phrase in failures


def test_course_prose_prints_the_table_and_exits_1_over_budget(capsys):
    from course_utils import cli

    rc = cli.main(["prose", "09"])
    out = capsys.readouterr().out
    assert "notebooks/09_numerics_and_tools.py" in out and "Budgets a lesson" in out
    assert rc in (0, 1)
    assert (rc == 1) == ("over budget" in out)
