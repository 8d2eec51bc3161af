"""Markdown cut into messages and put back together; what a translation must keep; catalogs."""

from pathlib import Path

import nbformat
import pytest

from course_utils.tooling.errors import CourseError
from course_utils.tooling.translation import catalog

ROOT = Path(__file__).resolve().parents[3]
ENGLISH = (
    sorted((ROOT / "notebooks").glob("*.ipynb"))
    + sorted((ROOT / "exercises").glob("*.ipynb"))
    + sorted((ROOT / "docs").glob("*.md"))
    + [ROOT / "README.md"]
)

SAMPLE = """\
## 2. Tracing

A paragraph over
two lines with `code | pipe` and $x^2$.

- first item, long enough
  to wrap onto a second line
- second item
  1. nested item

| task | PyTorch | JAX |
|---|---|---|
| gradient | `loss.backward()` | `jax.grad(f)` |

```python
x = 1  # never a message

y = 2
```

$$
\\nabla f
$$

> a quoted line
> and its second line

<!-- EXERCISE: why -->
<details><summary>1. Why?</summary>
Because.
</details>"""


def _texts(markdown: str) -> list[str]:
    return [m.text for m in catalog.split(markdown).messages()]


@pytest.mark.parametrize("path", ENGLISH, ids=[p.name for p in ENGLISH])
def test_every_english_text_splits_and_joins_back_byte_for_byte(path):
    if path.suffix == ".ipynb":
        texts = [
            c.source
            for c in nbformat.read(path, as_version=4).cells
            if c.cell_type == "markdown"
        ]
    else:
        texts = [path.read_text(encoding="utf-8")]
    for text in texts:
        assert catalog.split(text).render() == text


def test_messages_are_paragraphs_headings_items_cells_quotes_and_summaries():
    assert _texts(SAMPLE) == [
        "2. Tracing",
        "A paragraph over\ntwo lines with `code | pipe` and $x^2$.",
        "first item, long enough\nto wrap onto a second line",
        "second item",
        "nested item",
        "task",
        "PyTorch",
        "JAX",
        "gradient",
        "a quoted line\nand its second line",
        "1. Why?",
        "Because.",
    ]


def test_a_translation_keeps_the_layout_and_leaves_code_alone():
    out = catalog.split(SAMPLE).render(lambda t: "译:" + t.replace("\n", "\n续:"))
    assert "## 译:2. Tracing\n" in out
    assert "- 译:first item, long enough\n  续:to wrap onto a second line\n" in out
    assert "  1. 译:nested item\n" in out
    assert "| 译:gradient | `loss.backward()` | `jax.grad(f)` |" in out
    assert "|---|---|---|" in out
    assert "```python\nx = 1  # never a message\n\ny = 2\n```" in out
    assert "$$\n\\nabla f\n$$" in out
    assert "> 译:a quoted line\n> 续:and its second line" in out
    assert "<!-- EXERCISE: why -->\n<details><summary>译:1. Why?</summary>\n" in out
    # A translation with fewer lines than the English is laid out with the same prefixes.
    short = catalog.split("- one\n  two").render(lambda t: "一二")
    assert short == "- 一二"
    longer = catalog.split("- one").render(lambda t: "一\n二")
    assert longer == "- 一\n  二"


def test_text_without_words_is_never_a_message():
    assert _texts("`jax.jit` | $x$\n\n| `a` | 3 |\n|---|---|\n\n<br>") == []


def test_a_translation_must_keep_code_math_links_tags_and_numbers():
    en = "Use `jax.jit` on $f(x)$ for [3 calls](https://a.example/x) <b>now</b>, 1,024 times."
    good = "对 $f(x)$ 使用 `jax.jit`，[3 次调用](https://a.example/x) <b>现在</b>，1024 次。"
    assert catalog.differences(en, good) == []
    bad = "对 f(x) 使用 `jit`，[三次](https://b.example) 现在，1,000 次。"
    found = "\n".join(catalog.differences(en, bad))
    for kind in ("code span missing: `jax.jit`", "math missing: $f(x)$"):
        assert kind in found
    assert "link target missing: https://a.example/x" in found
    assert "HTML tag missing" in found
    assert "number missing: 1024, 3" in found
    assert "number not in the English: 1000" in found


def _entries(*texts):
    return [
        catalog.Entry(t, f"notebooks/x.ipynb cell {k}") for k, t in enumerate(texts)
    ]


def test_a_changed_english_message_turns_fuzzy_and_the_problem_names_where(tmp_path):
    cat = catalog.update(
        None, "zh", _entries("Tracing runs the function once.", "Old.")
    )
    assert all(not m.string for m in cat if m.id)
    assert catalog.problems(cat, _entries("Tracing runs the function once."), "x") == [
        "x: notebooks/x.ipynb cell 0: “Tracing runs the function once.” is not translated"
    ]
    cat["Tracing runs the function once."].string = "追踪会运行函数一次。"
    path = tmp_path / "x.po"
    catalog.write(path, cat)
    changed = _entries("Tracing runs the function twice.")
    merged = catalog.update(catalog.read(path), "zh", changed)
    message = merged["Tracing runs the function twice."]
    assert message.fuzzy and message.string == "追踪会运行函数一次。"
    assert message.previous_id == ["Tracing runs the function once."]
    assert "Old." not in merged
    assert catalog.problems(merged, changed, "03_jit") == [
        "03_jit: notebooks/x.ipynb cell 0: “Tracing runs the function twice.” is fuzzy "
        "(its English changed): revise the translation, then remove the fuzzy flag"
    ]
    assert catalog.translations(merged) == {}
    missing = catalog.problems(merged, _entries("A new paragraph."), "03_jit")
    assert (
        "is not in the catalog" in missing[0]
        and "course translate --update" in missing[0]
    )


def test_a_long_previous_english_never_becomes_a_comment_of_the_revised_message(
    tmp_path,
):
    old = "Tracing runs the function once, " + "and then the program is replayed, " * 4
    cat = catalog.update(None, "zh", _entries(old))
    cat[old].string = "追踪会运行函数一次。"
    path = tmp_path / "x.po"
    catalog.write(path, cat)
    new = old.replace("once", "twice")
    catalog.write(path, catalog.update(catalog.read(path), "zh", _entries(new)))
    assert "#| msgid" in path.read_text(
        encoding="utf-8"
    )  # the reviser sees the old text
    revised = catalog.read(path)
    revised[new].flags.discard("fuzzy")
    revised[new].previous_id = []
    catalog.write(path, revised)
    text = path.read_text(encoding="utf-8")
    assert "| msgid" not in text and "once" not in text


def test_writing_an_unchanged_catalog_changes_nothing(tmp_path):
    cat = catalog.update(None, "zh", _entries("One paragraph."))
    path = tmp_path / "x.po"
    catalog.write(path, cat)
    before = path.stat().st_mtime_ns, path.read_text(encoding="utf-8")
    catalog.write(
        path, catalog.update(catalog.read(path), "zh", _entries("One paragraph."))
    )
    assert (path.stat().st_mtime_ns, path.read_text(encoding="utf-8")) == before


def test_a_broken_catalog_names_its_file(tmp_path):
    path = tmp_path / "broken.po"
    path.write_text('msgid "a"\nnot a keyword\n', encoding="utf-8")
    with pytest.raises(CourseError, match="broken.po: not a readable gettext catalog"):
        catalog.read(path)
