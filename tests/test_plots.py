import statistics
from types import SimpleNamespace

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from course_utils import plots  # noqa: E402
from course_utils.timing import Measurement  # noqa: E402


def test_training_curves_draws_both_on_given_axes():
    fig, ax = plt.subplots()
    out = plots.training_curves(
        {"PyTorch": [3, 2, 1], "JAX": [3, 2.1, 1.1]}, ax=ax, title="loss"
    )
    assert out is ax
    assert [line.get_label() for line in ax.get_lines()] == ["PyTorch", "JAX"]
    assert ax.get_lines()[0].get_color() == plots.COLORS["pytorch"]
    assert ax.get_xlabel() == "step"
    assert list(ax.get_lines()[0].get_xdata()) == [1, 2, 3]  # the first step is step 1
    plt.close(fig)


def test_timing_bars_whiskers_and_ratios():
    ms = {
        "torch": Measurement("torch", [0.010, 0.011, 0.012, 0.013], 1, 0.1),
        "jax": Measurement("jax", [0.005, 0.006, 0.006, 0.007], 1, 0.2),
    }
    ax = plots.timing_bars(ms, baseline="torch")
    bars = ax.patches
    assert len(bars) == 2
    assert abs(bars[0].get_width() - ms["torch"].median * 1e3) < 1e-9
    texts = [t.get_text().strip() for t in ax.texts]
    ratios = [t / j for t, j in zip(ms["torch"].times, ms["jax"].times, strict=True)]
    faster = statistics.median(ratios)  # the median of the per-round ratios
    assert texts == ["baseline", f"{faster:.2f}× faster, not judged"]  # 4 rounds
    assert ax.get_xscale() == "linear"  # bars never on a log axis
    plt.close(ax.figure)


def test_timing_bars_with_a_baseline_per_group():
    ms = {
        "torch a": Measurement("torch a", [0.010, 0.010, 0.010], 1, 0.1),
        "torch b": Measurement("torch b", [0.020, 0.020, 0.020], 1, 0.1),
        "jax a": Measurement("jax a", [0.004, 0.004, 0.004], 1, 0.2),
        "jax b": Measurement("jax b", [0.001, 0.001, 0.001], 1, 0.2),
    }
    own = {
        "torch a": "torch a",
        "torch b": "torch a",
        "jax a": "jax a",
        "jax b": "jax a",
    }
    ax = plots.timing_bars(ms, baseline=own)
    texts = [t.get_text().strip() for t in ax.texts]
    assert texts == [
        "baseline",
        "2.00× slower, not judged",  # too few rounds for a verdict
        "baseline",
        "4.00× faster, not judged",
    ]
    assert ax.get_xlabel().endswith(
        "labels: speed against torch a / jax a, median of the per-round ratios"
    )
    plt.close(ax.figure)


def test_timing_bars_on_a_log_axis_are_points():
    ms = {
        "torch": Measurement("torch", [0.0010, 0.0011, 0.0012], 1, 0.1),
        "jax eager": Measurement("jax eager", [0.10, 0.11, 0.12], 1, 0.2),
    }
    ax = plots.timing_bars(ms, baseline="torch", log=True)
    assert ax.get_xscale() == "log" and not ax.patches  # no bars on a log axis
    assert [t.get_text() for t in ax.get_yticklabels()] == ["torch", "jax eager"]
    assert "100× slower, not judged" in [t.get_text().strip() for t in ax.texts]
    assert ax.get_xlim()[1] > max(t.xy[0] for t in ax.texts)  # room for the label
    assert "log scale" in plots.describe(ax.figure)
    plt.close(ax.figure)


@pytest.mark.parametrize("log", [False, True])
def test_timing_bars_keep_each_label_inside_the_axes(log):
    ms = {
        "torch": Measurement("torch", [0.010, 0.010, 0.011, 0.011], 1, 0.1),
        "jax": Measurement("jax", [0.006, 0.006, 0.007, 0.040], 1, 0.2),  # long whisker
    }
    fig, ax = plt.subplots(figsize=(4, 2.5))
    plots.timing_bars(ms, ax=ax, baseline="torch", log=log)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    right = ax.get_window_extent(renderer).x1
    assert all(t.get_window_extent(renderer).x1 <= right + 0.5 for t in ax.texts)
    plt.close(fig)


def test_bar_labels_follow_the_verdict_of_the_same_rounds():
    """The label is the verdict's number; a contended run's label says not judged."""
    from course_utils import claims, timing
    from course_utils.contention import Contention

    torch_t = [0.010, 0.012, 0.011, 0.013, 0.010, 0.012, 0.011, 0.013]
    jax_t = [0.004, 0.009, 0.005, 0.003, 0.006, 0.004, 0.005, 0.007]
    ms = {
        "torch": Measurement("torch", torch_t, 1, 0.1),
        "jax": Measurement("jax", jax_t, 1, 0.2),
    }
    assert ms["torch"].median / ms["jax"].median != pytest.approx(2.4)  # medians: 2.30
    for reason, status in ((None, ""), ("load 4.1 on 2 cores", ", not judged")):
        c = Contention(2, 0.5, 0.5, 0.0, 1.0, {"cores": 2}, reason)
        cmp = timing.Comparison(ms, "torch", contention=c)
        verdict = claims.faster(cmp, "torch", "jax")
        ax = cmp.plot()
        label = ax.texts[1].get_text().strip()
        assert label == f"{verdict.factor:.2f}× faster{status}"
        assert label.split(",")[0] in verdict.line() and cmp.speed_text("jax") in label
        plt.close(ax.figure)


def test_a_break_even_not_judged_says_so():
    ax = plots.break_even(first_call_s=1.0, steady_s=0.01, eager_s=0.02, judged=False)
    assert [t.get_text() for t in ax.texts] == [" break-even: 99 calls (not judged)"]
    plt.close(ax.figure)


def test_break_even_marks_crossing():
    ax = plots.break_even(first_call_s=1.0, steady_s=0.01, eager_s=0.02, label="jax")
    compiled = ax.get_lines()[1].get_ydata()
    eager = ax.get_lines()[0].get_ydata()
    # the crossing is at ceil((1 - 0.01) / 0.01) = 99 calls
    assert compiled[98] <= eager[98] + 1e-12 and compiled[97] > eager[97]
    assert any("99" in t.get_text() for t in ax.texts)
    plt.close(ax.figure)


def test_speedups_are_points_with_intervals_on_a_log_axis():
    import matplotlib

    matplotlib.use("Agg", force=False)
    from course_utils import plots

    rows = [
        {
            "label": "a",
            "median": 2.0,
            "low": 1.5,
            "high": 3.0,
            "band": (1.5, 2.0),
            "verdict": "holds",
        },
        {"label": "b", "median": 0.5, "low": 0.4, "high": 0.6, "band": (2.3, None)},
        {"label": "c", "median": None, "verdict": "not testable here"},
    ]
    ax = plots.speedups(rows, title="t")
    assert ax.get_xscale() == "log" and not ax.patches  # no bars
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert ax.get_xlim()[1] >= 2.3 * 1.5  # the "at least" band reaches past its start
    assert "× faster" in ax.get_xlabel()
    assert "colour: the verdict" in ax.get_xlabel()
    assert (
        "(median, interval;" in ax.get_xlabel()
    )  # rows that do not name their interval


def test_speedups_clipped_mark_a_far_row_at_the_edge_and_explain_in_a_legend():
    rows = [
        {
            "label": "near",
            "median": 2.0,
            "low": 1.5,
            "high": 3.0,
            "band": (1.5, 2.0),
            "verdict": "holds",
        },
        {
            "label": "far",
            "median": 300.0,
            "low": 200.0,
            "high": 500.0,
            "band": (1.0, None),
            "verdict": "inconclusive",
        },
    ]
    ax = plots.speedups(rows, clip=20, legend=True)
    assert ax.get_xlim()[1] == 20  # the far row does not stretch the axis
    assert any("300x (200x–500x)" in t.get_text() for t in ax.texts)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:3] == list(plots.VERDICT_COLOURS)
    assert "stated as one number: that or more" in labels
    assert "colour" not in ax.get_xlabel()  # the legend says it
    plt.close(ax.figure)
    plain = plots.speedups(rows[:1], clip=20)
    assert plain.get_legend() is None and plain.get_xlim()[1] < 20  # nothing to clip
    plt.close(plain.figure)


def test_speedups_name_the_interval_the_verdicts_read():
    import matplotlib

    matplotlib.use("Agg", force=False)
    from course_utils import claims, plots
    from course_utils.claims.verdict_rule import INTERVAL_LABEL

    ratios = [2.0, 2.1, 1.9, 2.05, 1.95, 2.0, 2.02, 1.98]
    verdict = claims.faster(ratios, "A", "B")
    ax = plots.speedups([verdict.plot_row("A vs B")])
    assert (
        INTERVAL_LABEL in ax.get_xlabel()
    )  # widened for run-to-run drift, not the bare 95 %


def test_a_figure_is_described_by_its_titles_labels_and_legend():
    fig, (left, right) = plt.subplots(1, 2)
    left.plot([1, 2], label="PyTorch float32")
    left.plot([1, 3], label="_hidden")
    left.set(xlabel="step", ylabel="training loss", yscale="log", title="one MLP")
    left.legend()
    right.plot([0, 1])
    right.set(xlabel="step", ylabel="loss difference")
    fig.suptitle("bfloat16")
    assert plots.describe(fig) == (
        'A figure titled "bfloat16" of 2 plots. Plot 1 titled "one MLP", with x axis '
        '"step"; y axis "training loss" (log scale); series: "PyTorch float32". '
        'Plot 2 with x axis "step"; y axis "loss difference".'
    )
    plt.close(fig)


def test_the_helpers_plots_name_their_variants_and_claims():
    ms = {
        "torch eager": Measurement("torch eager", [0.010, 0.011, 0.012], 1, 0.1),
        "jax.jit": Measurement("jax.jit", [0.005, 0.006, 0.007], 1, 0.2),
    }
    ax = plots.timing_bars(ms, baseline="torch eager")
    assert '"torch eager", "jax.jit" on the y axis' in plots.describe(ax.figure)
    plt.close(ax.figure)
    row = {"label": "claim A, eager", "median": 2.0, "low": 1.5, "high": 3.0}
    ax = plots.speedups([row])
    text = plots.describe(ax.figure)
    assert '(log scale); "claim A, eager" on the y axis' in text  # no tick values
    plt.close(ax.figure)


def test_a_figure_without_text_has_no_description_until_given_one():
    fig, ax = plt.subplots()
    ax.imshow([[0, 1], [1, 0]])
    ax.axis("off")
    assert plots.describe(fig) is None
    assert plots.set_description(fig, " Two digits. ") is fig
    assert plots.describe(fig) == "Two digits."
    with pytest.raises(ValueError, match="set_description: text must be"):
        plots.set_description(fig, " ")
    plt.close(fig)


def test_the_site_fixtures_figure_reads_as_its_alt_text():
    """tests/fixtures/site/90's figure (two lines, a legend) carries this alt text."""
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2, 3], [0, 1, 4, 9], label="torch")
    ax.plot([0, 1, 2, 3], [0, 1, 4, 9], "--", label="jax")
    ax.legend()
    assert plots.describe(fig) == 'A plot with series: "torch", "jax".'
    plt.close(fig)


def test_ipython_stores_each_figures_description_as_its_alt_text():
    from IPython.core.formatters import DisplayFormatter

    shell = SimpleNamespace(display_formatter=DisplayFormatter())
    assert plots.describe_figures(shell)
    fig, ax = plt.subplots()
    ax.set_title("loss")
    _, metadata = shell.display_formatter.format(fig)
    assert metadata["image/png"] == {"alt": 'A plot titled "loss".'}
    fig.axes[0].set_title("")
    assert "image/png" not in shell.display_formatter.format(fig)[1]
    plt.close(fig)
    assert plots.describe_figures() is False  # no IPython running here


def test_a_label_on_two_lines_is_described_on_one():
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    ax.set_xlabel("× faster;\ncolour: the verdict")
    ax.set_yticks([0, 1], ["one\n(two)", "three"])
    assert plots.describe(fig) == (
        'A plot with x axis "× faster; colour: the verdict"; "one (two)", "three" on the y axis.'
    )
    plt.close(fig)


def test_bar_labels_sit_past_their_whiskers_and_say_slower_below_one():
    ms = {
        "torch": Measurement("torch", [0.010, 0.011, 0.012, 0.013], 1, 0.1),
        "scan": Measurement("scan", [0.040, 0.044, 0.050, 0.060], 1, 0.2),
    }
    ax = plots.timing_bars(ms, baseline="torch")
    texts = {t.get_text().strip(): t.xy[0] for t in ax.texts}
    slower = statistics.median(
        s / t for s, t in zip(ms["scan"].times, ms["torch"].times, strict=True)
    )
    label = f"{slower:.2f}× slower, not judged"
    assert label in texts
    assert texts[label] > ms["scan"].median * 1e3  # past the bar's end
    assert ax.get_xlim()[1] > max(texts.values())  # room for the label
    plt.close(ax.figure)


@pytest.mark.parametrize(
    ("low", "high", "some"),
    [(0.3, 6.0, ["0.5x", "1x", "2x", "5x"]), (0.01, 100.0, ["0.01x", "1x", "100x"])],
)
def test_speedups_label_a_few_round_ratios(low, high, some):
    ax = plots.speedups([{"label": "a", "median": 1.1, "low": low, "high": high}])
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert set(some) <= set(labels) and len(labels) <= 13
    assert not [t for t in ax.xaxis.get_minorticklabels() if t.get_text()]
    plt.close(ax.figure)
    ax = plots.speedups([{"label": "b", "median": 1.1, "low": 1.05, "high": 1.15}])
    assert len(ax.get_xticklabels()) >= 2  # a short range still has values to read
    plt.close(ax.figure)
