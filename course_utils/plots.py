"""Plots the lessons share. Each takes an optional ``ax`` and returns the axes it drew on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from course_utils.stats import quartiles

# Same colour for the same framework everywhere in the course.
COLORS = {"pytorch": "#ee4c2c", "jax": "#5e97f6"}


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 3.5))
    return ax


def _color(name: str) -> str | None:
    low = name.lower()
    if "torch" in low:
        return COLORS["pytorch"]
    if "jax" in low or "flax" in low:
        return COLORS["jax"]
    return None


def training_curves(
    curves: Mapping[str, Sequence[float]],
    *,
    ax=None,
    xlabel: str = "step",
    ylabel: str = "loss",
    title: str | None = None,
    logy: bool = False,
):
    """One line per framework (or variant) on shared axes: ``{"PyTorch": losses, "JAX": losses}``.

    Values are counted from 1 (step 1 or epoch 1 is the first value's).
    """
    ax = _axes(ax)
    for name, values in curves.items():
        ax.plot(range(1, len(values) + 1), list(values), label=name, color=_color(name))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.legend()
    ax.grid(alpha=0.3)
    return ax


def timing_bars(
    measurements: Any,
    *,
    ax=None,
    title: str | None = None,
    baseline: str | Mapping[str, str] | None = None,
    unit: str = "ms",
    log: bool = False,
):
    """Median time per variant with IQR whiskers, each label read as its verdict reads it.

    ``measurements`` maps names to :class:`timing.Measurement` objects, or is a
    ``timing.compare`` result (then each label carries its verdict). ``baseline``
    names the variant each label's speed is taken against, or maps each variant
    to its own baseline (variants not in the mapping get no label), so that
    groups which must not be compared, such as eager PyTorch and jitted JAX,
    each have theirs. A label is the median of the per-round ratios, the
    number a verdict line prints, marked "not judged" or "no clear winner"
    where no verdict named a winner (:func:`_speed_label`).
    ``log``: a log time axis, for times that span orders of magnitude; each
    median is then a point, since a bar's length means nothing on a log axis.
    """
    compared = measurements  # a timing.compare result reads its verdicts
    measurements = getattr(measurements, "measurements", measurements)
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6, "µs": 1e6}[unit]
    ax = _axes(ax)
    names = list(measurements)
    medians = [measurements[n].median * scale for n in names]
    errors = []
    for n in names:
        q1, q3 = quartiles(measurements[n].times)
        med = measurements[n].median
        errors.append((max(0.0, med - q1) * scale, max(0.0, q3 - med) * scale))
    colors = [_color(n) or "#888888" for n in names]
    if log:
        for i, (med, err, colour) in enumerate(
            zip(medians, errors, colors, strict=True)
        ):
            ax.errorbar(
                med, i, xerr=[[err[0]], [err[1]]], fmt="o", color=colour, capsize=4
            )
        ax.set_xscale("log")
        ax.set_yticks(range(len(names)), names)
    else:
        ax.barh(
            names,
            medians,
            xerr=list(zip(*errors, strict=True)),
            color=colors,
            capsize=4,
        )
    ax.invert_yaxis()
    bases = (
        {n: baseline for n in names}
        if isinstance(baseline, str)
        else dict(baseline or {})
    )
    against = " / ".join(dict.fromkeys(bases.values()))
    what = "median with IQR"
    sep = "\n" if isinstance(baseline, Mapping) else " "  # several names: own line
    ax.set_xlabel(
        f"time per call ({unit}), {what};{sep}labels: speed against {against}, "
        "median of the per-round ratios"
        if bases
        else f"time per call ({unit}), {what}"
    )
    if bases:
        ends = [m + up for m, (_, up) in zip(medians, errors, strict=True)]
        # each label past its whisker's end, so that neither hides the other
        labels = []
        for i, n in enumerate(names):
            if n not in bases:
                continue
            labels.append(
                ax.annotate(
                    f" {_speed_label(compared, n, bases[n])}",
                    (ends[i], i),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=9,
                )
            )
        # room for the longest bar's label: a share of the axis, linear or log
        ax.set_xlim(right=max(ends) * (6.0 if log else 1.3))
        _fit_labels(ax, labels, log)
    ax.set_title(title or "on this machine")
    ax.grid(axis="x", alpha=0.3)
    return ax


def _fit_labels(ax, labels, log: bool) -> None:
    """Widen the x axis until every label ends inside it, at the figure's current size."""
    import math

    renderer = ax.figure.canvas.get_renderer()
    width = ax.get_window_extent(renderer).width
    to = math.log10 if log else float
    lo, hi = (to(v) for v in ax.get_xlim())
    need = hi
    for label in labels:
        start = ax.transData.transform(label.xy)[0]
        room = label.get_window_extent(renderer).x1 - start  # pixels past the whisker
        share = min(room / width, 0.9)  # a label wider than the axis gets 90 % of it
        need = max(need, lo + (to(label.xy[0]) - lo) / (1 - share))
    if need > hi:
        ax.set_xlim(right=10**need if log else need)


VERDICT_COLOURS = {
    "holds": "#2e7d32",
    "does not hold": "#c62828",
    "inconclusive": "#9e9e9e",
}


_BAND = {"color": "#ffe082", "alpha": 0.6}  # a stated range
_OPEN_BAND = {
    "facecolor": "#fff3c4",
    "hatch": "///",
    "edgecolor": "#d4a017",
}  # "or more"


def speedups(
    rows: Sequence[Mapping[str, Any]],
    *,
    ax=None,
    title: str | None = None,
    clip: float | None = None,
    legend: bool = False,
):
    """Speed-ups as "× faster" points with their intervals on a log axis.

    Each row: ``label``, ``median``, ``low``, ``high`` (the interval, named in the
    axis label by the rows' ``interval_label`` when they all give the same one), and
    optionally ``band`` (the stated magnitude, ``(low, high)``; ``high`` may be
    None for "at least") and ``verdict`` (colours the point). A line marks 1x
    (no difference); a shaded band marks what the claim states. Rows without a
    median are listed with their ``verdict`` only. Lessons pass
    ``claims.Verdict.plot_row()``.

    ``clip`` keeps the axis within ``1/clip`` and ``clip``: a row that reaches
    past an edge is drawn to the edge, marked with an arrow and its numbers in
    text, so one far row does not squeeze the others. ``legend`` names the
    verdict colours, the 1x line and the two kinds of band (a stated range, and
    one stated number, hatched: that number or more) in a legend above the plot,
    instead of in the axis label.
    """
    ax = _axes(ax)
    ax.set_xscale("log")
    ax.axvline(1.0, color="k", lw=1)
    lo_lim, hi_lim = _clipped_limits(rows, clip) if clip else (None, None)
    for y, row in enumerate(rows):
        if row.get("median") is None:
            ax.annotate(f" {row.get('verdict', '')}", (1.0, y), va="center", fontsize=8)
            continue
        colour = VERDICT_COLOURS.get(row.get("verdict", ""), "#1565c0")
        med, low, high = row["median"], row["low"], row["high"]
        if lo_lim is not None and (low < lo_lim or high > hi_lim):
            _clipped_row(ax, y, med, low, high, lo_lim, hi_lim, colour)
            continue
        ax.errorbar(
            med, y, xerr=[[med - low], [high - med]], fmt="o", capsize=4, color=colour
        )
    right = ax.get_xlim()[1] if hi_lim is None else hi_lim
    for y, row in enumerate(rows):  # bands last, so "at least" ones end at the frame
        if row.get("band"):
            lo, hi = row["band"]
            if hi_lim is None:
                right = max(right, lo * 1.5)
            ax.fill_betweenx(
                [y - 0.4, y + 0.4],
                lo,
                hi or right,
                lw=0,
                zorder=0,
                **(_OPEN_BAND if legend and hi is None else _BAND),
            )
    if lo_lim is not None:
        ax.set_xlim(lo_lim, hi_lim)
    else:
        ax.set_xlim(right=right)
    _ratio_ticks(ax)
    ax.set_yticks(range(len(rows)), [r["label"] for r in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    names = {r.get("interval_label") for r in rows if r.get("median") is not None}
    interval = names.pop() if len(names) == 1 and None not in names else "interval"
    if legend:
        ax.set_xlabel(f"× faster (median, {interval}; log scale)")
        _speedups_legend(ax)
    else:
        ax.set_xlabel(
            f"× faster (median, {interval}; log scale);\n"
            "colour: the verdict; line: 1x; band: the stated magnitude"
        )
    ax.set_title(title or "on this machine", pad=44 if legend else None)
    ax.grid(axis="x", alpha=0.3)
    return ax


def _clipped_limits(
    rows: Sequence[Mapping[str, Any]], clip: float
) -> tuple[float, float]:
    """The axis's ends: the rows' values and 1x with a margin, at most a factor ``clip`` from 1x."""
    values = [1.0]
    for row in rows:
        if row.get("median") is not None:
            values += [row["low"], row["high"]]
        if row.get("band"):
            values.append(row["band"][0] * 1.5)  # an "at least" band shows some width
    return max(min(values) / 1.3, 1 / clip), min(max(values) * 1.3, clip)


def _clipped_row(ax, y, med, low, high, lo_lim, hi_lim, colour) -> None:
    """A row past an edge: its part inside, an arrow at the edge, its numbers in text."""
    inside_low, inside_high = max(low, lo_lim), min(high, hi_lim)
    at = min(max(med, lo_lim), hi_lim)
    ax.plot([inside_low, inside_high], [y, y], color=colour, lw=1.5)
    ax.plot(at, y, "o", color=colour)
    right = high > hi_lim
    edge = hi_lim if right else lo_lim
    ax.plot(edge, y, ">" if right else "<", color=colour, ms=9, clip_on=False)
    ax.annotate(
        f"{_times(med)} ({_times(low)}–{_times(high)})",
        (edge, y),
        xytext=(-6 if right else 6, 5),
        textcoords="offset points",
        ha="right" if right else "left",
        va="bottom",
        fontsize=8,
    )


def _times(value: float) -> str:
    """'0.123x', '4.5x', '196x', '1,130x': three significant figures, no exponent."""
    return f"{value:,.0f}x" if value >= 100 else f"{value:.3g}x"


def _speedups_legend(ax) -> None:
    """The verdict colours, the 1x line and the two kinds of band, above the plot."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Line2D([], [], marker="o", ls="", color=c, label=v)
        for v, c in VERDICT_COLOURS.items()
    ]
    handles += [
        Line2D([], [], color="k", lw=1, label="1x: no difference"),
        Patch(**_BAND, label="stated range"),
        Patch(**_OPEN_BAND, lw=0, label="stated as one number: that or more"),
    ]
    ax.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=3,
        fontsize=8,
        frameon=False,
    )


def _ratio_ticks(ax) -> None:
    """Label a log axis of ratios with a few round values ('0.5x', '1x', '2x').

    Matplotlib's default labels every minor tick of a short log range as
    '3×10⁻¹', '4×10⁻¹', ..., which collide. The values here are 1, 2 and 5 times
    powers of ten (only the powers over more than three decades), or four evenly
    spaced round values where the range is too short to hold two of those.
    """
    import math

    from matplotlib.ticker import MaxNLocator, NullFormatter, NullLocator

    lo, hi = ax.get_xlim()
    decades = math.log10(hi / lo)
    subs = (1,) if decades > 3 else (1, 2, 5)
    ticks = [
        m * 10.0**e
        for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
        for m in subs
        if lo <= m * 10.0**e <= hi
    ]
    if len(ticks) < 2:
        ticks = [
            t for t in MaxNLocator(4).tick_values(lo, hi) if lo <= t <= hi and t > 0
        ]
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
    ax.set_xlim(lo, hi)


def _speed_label(measurements: Any, name: str, base: str) -> str:
    """'2.00× faster' than ``base``, '4.00× slower', or 'baseline'; marked where not judged.

    The factor is the median of the per-round ratios (:func:`course_utils.stats.speed`,
    the number a verdict line prints). A ``timing.compare`` result marks it as its
    verdict reads it (``Comparison.reading``); bare measurements carry no verdict,
    so they are marked not judged, and times not taken in the same rounds give the
    ratio of their medians.
    """
    from course_utils.stats import format_factor, speed

    if hasattr(measurements, "reading"):
        return measurements.reading(name, base)
    if name == base:
        return "baseline"
    a, b = measurements[base].times, measurements[name].times
    if len(a) == len(b) and a:
        side, k = speed([x / y for x, y in zip(a, b, strict=True)])  # >1: name faster
    else:
        r = measurements[base].median / measurements[name].median
        side, k = (1 if r > 1 else -1 if r < 1 else 0), max(r, 1 / r)
    word = {1: "faster", -1: "slower"}.get(side)
    return (f"{format_factor(k)} {word}" if word else "same speed") + ", not judged"


def break_even(
    *,
    first_call_s: float,
    steady_s: float,
    eager_s: float,
    label: str = "",
    ax=None,
    max_calls: int | None = None,
    judged: bool | None = None,
):
    """Cumulative time against number of calls, compiled vs eager, with the crossing marked.

    ``judged=False`` marks the crossing "not judged": the per-call verdict it
    rests on named no winner (``CompileReport.plot`` passes it).
    """
    import math

    ax = _axes(ax)
    gain = eager_s - steady_s
    crossing = math.ceil((first_call_s - steady_s) / gain) if gain > 0 else None
    if max_calls is None:
        max_calls = max(10, 2 * crossing) if crossing else 100
    # Both totals are straight lines in n: one point per call up to a few thousand calls,
    # then a regular sample (a far break-even would otherwise mean millions of points).
    step = max(1, max_calls // 2000)
    calls = list(range(1, max_calls + 1, step))
    if calls[-1] != max_calls:
        calls.append(max_calls)
    compiled = [first_call_s + (n - 1) * steady_s for n in calls]
    eager = [n * eager_s for n in calls]
    ax.plot(calls, eager, label="eager", color="#888888")
    ax.plot(
        calls,
        compiled,
        label="compiled (first call includes compile)",
        color=_color(label),
    )
    if crossing and crossing <= max_calls:
        ax.axvline(crossing, ls="--", color="k", alpha=0.5)
        unjudged = " (not judged)" if judged is False else ""
        ax.annotate(
            f" break-even: {crossing:,} calls{unjudged}",
            (crossing, compiled[0]),
            fontsize=9,
        )
    ax.set_xlabel("number of calls")
    ax.set_ylabel("cumulative time (s)")
    ax.set_title(label or "break-even")
    ax.legend()
    ax.grid(alpha=0.3)
    return ax


# ------------------------------------------------------- figures described in words

# Where :func:`set_description` keeps a figure's own description.
DESCRIPTION_ATTR = "course_description"


def set_description(fig, text: str):
    """Give ``fig`` its description (the alt text of its image), instead of the one
    :func:`describe` reads off its titles, axis labels and legend; returns ``fig``."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"set_description: text must be a non-empty str, got {text!r}")
    setattr(fig, DESCRIPTION_ATTR, text.strip())
    return fig


def _is_number(text: str) -> bool:
    """A tick label that is a value (``0.25``, ``−1``, ``1,000``, ``10%``, ``2x``, or
    mathtext such as a log axis's ``$\\mathdefault{10^{1}}$``), not a name."""
    if text.startswith("$"):
        return True
    plain = text.replace("\u2212", "-").replace(",", "").rstrip("%x×")
    try:
        float(plain)
    except ValueError:
        return False
    return True


def _categories(axis) -> list[str]:
    """An axis's tick labels when they name things (a bar per variant), not values
    (each on one line, for the description)."""
    texts = [" ".join(t.get_text().split()) for t in axis.get_ticklabels()]
    return [t for t in texts if t and not _is_number(t)]


def _quoted(names: list[str]) -> str:
    """Names in quotes, as a series' own name may hold a comma."""
    return ", ".join(f'"{name}"' for name in names)


def _series(ax) -> list[str]:
    """What the legend names, or else the labels the artists were given."""
    legend = ax.get_legend()
    if legend is not None:
        names = [t.get_text() for t in legend.get_texts()]
    else:
        artists = [*ax.get_lines(), *ax.collections, *ax.patches, *ax.containers]
        names = [str(a.get_label()) for a in artists]
    seen: dict[str, None] = {}
    for name in names:
        if name.strip() and not name.startswith("_"):
            seen[name.strip()] = None
    return list(seen)


def _axes_words(ax) -> str:
    """One axes in words: its title, axis labels (and log scales), series, categories."""
    parts = []
    for which in ("x", "y"):
        label = " ".join(getattr(ax, f"get_{which}label")().split())  # one line
        log = getattr(ax, f"get_{which}scale")() == "log"
        if label:
            parts.append(f'{which} axis "{label}"' + (" (log scale)" if log else ""))
        categories = _categories(getattr(ax, f"{which}axis"))
        if categories:
            parts.append(f"{_quoted(categories)} on the {which} axis")
    series = _series(ax)
    if series:
        parts.append("series: " + _quoted(series))
    title = " ".join(
        t
        for t in (ax.get_title(loc=loc).strip() for loc in ("left", "center", "right"))
        if t
    )
    if not parts and not title:
        return ""
    words = f'titled "{title}"' if title else ""
    if parts:
        words += (", with " if title else "with ") + "; ".join(parts)
    return words


def describe(fig) -> str | None:
    """``fig`` in words, for its image's alt text: the description given with
    :func:`set_description`, or else what its text says (its title, and each plot's
    title, axis labels, log scales, series and named categories). None when the
    figure holds no text at all, which nothing can describe."""
    own = getattr(fig, DESCRIPTION_ATTR, None)
    if own:
        return own
    get_suptitle = getattr(fig, "get_suptitle", None)  # matplotlib >= 3.8
    suptitle = (get_suptitle() if get_suptitle else "").strip()
    plots = [w for w in (_axes_words(ax) for ax in fig.get_axes()) if w]
    titled = f' titled "{suptitle}"' if suptitle else ""
    if not plots:
        return f"A figure{titled}." if suptitle else None
    if len(plots) == 1:
        return (
            f"A figure{titled}: a plot {plots[0]}."
            if suptitle
            else f"A plot {plots[0]}."
        )
    each = " ".join(f"Plot {i} {w}." for i, w in enumerate(plots, 1))
    return f"A figure{titled} of {len(plots)} plots. {each}"


def _figure_metadata(fig) -> tuple[dict, dict]:
    """IPython's mime-bundle formatter for a figure: no data (its PNG comes from the
    inline backend as before), only the description as the PNG's ``alt``."""
    text = describe(fig)
    return {}, ({"image/png": {"alt": text}} if text else {})


def describe_figures(shell=None) -> bool:
    """Have IPython (``shell``, by default the running one) store each matplotlib
    figure's :func:`describe` with its image, as the output's
    ``metadata["image/png"]["alt"]``, which the course's site turns into the image's
    alt text. Nothing outside IPython (False); matplotlib is not imported."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    formatter = shell.display_formatter.mimebundle_formatter
    formatter.for_type_by_name("matplotlib.figure", "Figure", _figure_metadata)
    return True
