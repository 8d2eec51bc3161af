"""axe-core in the site's pages: what the browser tests (and a check of any built site)
run to find accessibility problems, in the theme's light and dark modes.

axe-core comes from its npm package at the version pinned in
:data:`course_utils.tooling.site.assets.TEST_NPM`, kept and fetched like the site's own
mermaid and MathJax; the tests load it into every page (it is never part of a site).
A page fails on any violation axe rates "serious" or "critical" (contrast, alt text,
names of buttons and links, ...) and on ``heading-order``, which axe rates moderate.

``python -m tests.tooling.site.a11y DIR`` checks every page of a built site (its
``site.json`` lists them) in both modes and prints what fails; its exit status is 1
when anything does.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from pathlib import Path

from course_utils.tooling.site import assets as site_assets

ROOT = Path(__file__).resolve().parents[3]
FAILING_IMPACTS = ("serious", "critical")
FAILING_RULES = ("heading-order",)
# Only colours change with the theme, so the dark mode runs only the rules that read
# them (on the fixture site axe costs about 0.7 s of CPU per page and run).
COLOUR_RULES = ("color-contrast", "link-in-text-block")

# Switch the theme as its own menu does (the click handler of the "Dark"/"Light"
# entry), wait for the colour transitions to end, then run axe. The wait is there
# without a switch too: a page loaded in dark mode gets its theme from a script, and
# the theme's buttons fade from their light colours for 0.15 s (on a busy machine axe
# measured the search button's text half-way, at 3.3:1). The mode the page was in is
# what the theme stored; the caller clears it before the next page.
RUN = """async ({mode, rules}) => {
  if (mode) {
    const button = document.querySelector(`.theme-change-button[data-mode="${mode}"]`);
    if (!button) return {error: `no theme switch for ${mode} mode`};
    button.click();
  }
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  await Promise.all(document.getAnimations()
    .filter(a => a instanceof CSSTransition).map(a => a.finished.catch(() => null)));
  const options = {resultTypes: ["violations"]};
  if (rules) options.runOnly = {type: "rule", values: rules};
  const result = await axe.run(document, options);
  return {theme: document.documentElement.dataset.theme,
          violations: result.violations.map(v => ({
            id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
            nodes: v.nodes.slice(0, 3).map(n => ({
              target: n.target.join(" "),
              summary: (n.failureSummary || "").split("\\n").slice(1, 2).join(" ").trim()
            }))}))};
}"""


@functools.cache
def axe_script() -> str:
    """axe.min.js of the pinned axe-core (fetched with npm once, then kept)."""
    return site_assets.npm_text(ROOT, "axe-core", "axe.min.js")


def check(page, mode: str | None = None, rules=None) -> dict:
    """axe on the page as it is (``mode`` None) or after switching the theme to
    ``mode``; ``rules`` limits the run to those rules. Returns ``theme`` (the
    ``data-theme`` axe saw) and ``violations``."""
    rules = list(rules) if rules else None
    result = page.evaluate(RUN, {"mode": mode, "rules": rules})
    if "error" in result:
        raise AssertionError(f"{page.url}: {result['error']}")
    return result


def both_modes(page) -> dict[str, dict]:
    """The light run (every rule, the page as loaded in light mode), then the dark one
    (the colour rules, after switching); the stored mode is cleared afterwards, so
    the next page loads in light mode again."""
    light = check(page)
    dark = check(page, "dark", COLOUR_RULES)
    page.evaluate("() => localStorage.clear()")
    return {"light": light, "dark": dark}


def failures(name: str, runs: dict[str, dict]) -> list[str]:
    """One line per failing violation of one page's runs (mode -> :func:`check`)."""
    lines = []
    for mode, run in runs.items():
        if run["theme"] != mode:
            lines.append(f"{name} ({mode}): the page's theme was {run['theme']!r}")
        for v in run["violations"]:
            if v["impact"] in FAILING_IMPACTS or v["id"] in FAILING_RULES:
                where = "; ".join(f"{n['target']} ({n['summary']})" for n in v["nodes"])
                lines.append(
                    f"{name} ({mode}): {v['impact']} {v['id']} x{v['count']}: "
                    f"{v['help']}: {where}"
                )
    return lines


def check_site(site: Path) -> tuple[list[str], dict[str, dict]]:
    """Every page of the built ``site`` in both modes: the failing lines and each
    page's runs."""
    from playwright.sync_api import sync_playwright

    from course_utils.tooling.site.pdf import local_only, serve
    from tests.tooling.site.fixture import launch

    built = json.loads((site / "site.json").read_text())
    # the English pages, then the Chinese half's (under zh/)
    pages = built["pages"] + [f"zh/{p}" for p in built.get("zh_pages", [])]
    runs: dict[str, dict] = {}
    with serve(site) as base, sync_playwright() as pw:
        browser = launch(pw)
        context = browser.new_context(
            viewport={"width": 1280, "height": 900}, proxy=local_only(base)
        )  # nothing leaves the machine
        context.set_default_timeout(120_000)
        context.add_init_script(script=axe_script())
        page = context.new_page()
        for name in pages:
            page.goto(f"{base}{name}.html", wait_until="load")
            runs[name] = both_modes(page)
        browser.close()
    return [line for n, r in runs.items() for line in failures(n, r)], runs


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not (Path(argv[0]) / "site.json").exists():
        print("usage: python -m tests.tooling.site.a11y SITE_DIR (a built site)")
        return 2
    start = time.perf_counter()
    bad, runs = check_site(Path(argv[0]))
    seconds = time.perf_counter() - start
    counts: dict[str, int] = {}
    for page_runs in runs.values():
        for run in page_runs.values():
            for v in run["violations"]:
                key = f"{v['impact']} {v['id']}"
                counts[key] = counts.get(key, 0) + 1
    print(f"{len(runs)} pages, light and dark, in {seconds:.0f} s")
    for key, count in sorted(counts.items()):
        print(f"  {key}: on {count} page run(s)")
    print(
        "\n".join(bad) if bad else "no serious or critical violation, no heading-order"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
