"""The figures a slider step changes, drawn in Chromium as Streamlit draws them, and the browser's
CPU over the Q-alpha page's λ steps.

    python -m benchmarks.bench_figures [--repeats 20] [--skip build,figures,app]

Part 0 (build): on the server, what each figure of a λ step costs before the browser sees it:
building it in ``core.plots`` (Plotly's dicts taken as they are, ``core.plots._figure``) against
the same figure built with Plotly's validation of every property (``go.Figure(figure.to_dict())``,
how the builders made it before), and what ``st.plotly_chart`` then does to any figure (``to_dict``
and ``plotly.io.to_json``). Median of ``--repeats`` in milliseconds.

Streamlit identifies a chart by its figure: a figure that changed is a new chart, drawn with
``Plotly.newPlot`` from scratch (twice on mounting), never updated in place. So what a step costs
in the browser is, first, how long each changed figure takes to draw anew.

Part 1 (figures): the figures of a λ step on the AR faces (people 1-9 main, person 10 side; the λ
path computed), built by ``core.plots`` and drawn in a blank page with the plotly.js that the
Python package ships (Streamlit bundles its own build; the versions may differ) under a template
that turns ``automargin`` on as Streamlit's theme does. Median of ``--repeats`` draws each:
- as built (the axes' ``automargin`` off where ``core.plots`` fixes the margins);
- with automargin (the theme's setting left in force, as the figures were drawn before);
- the λ path as the one figure of two panels it was (weights above, the gap's strength below on a
  shared log axis).
Reference in the same run: the bare page's two figures of ``bench_app.py``.

Part 2 (app): the app served as in ``bench_app.py``, the Q-alpha page on the AR faces with side
classes, λ set by hand and the λ path computed; the browser's sampled CPU (DevTools protocol, 200
µs) over ``--presses`` λ steps, per step: Plotly (any sample inside its chunk), React, the
browser's own style, layout and paint ("(program)"), garbage collection and the rest; the same for
the bare page's slider.
"""

import argparse
import collections
import json
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import plotly
import plotly.graph_objects as go

ROOT = Path(__file__).resolve().parents[1]

from benchmarks import bench_app  # noqa: E402
from benchmarks.app_server import start_server  # noqa: E402
from core.data.bundled import load_dataset  # noqa: E402
from core.plots import gap_strength_figure, lambda_path_figure, sorted_weights_figure  # noqa: E402
from core.selection.lambda_path import q_alpha_path  # noqa: E402
from pages.ui.settings import QALPHA_PATH_LAMBDAS  # noqa: E402
from benchmarks.results import run_recorded  # noqa: E402

#: What Streamlit's theme sets that matters here: automargin on both axes, the title left and bold.
THEME = {"layout": {"xaxis": {"automargin": True, "showgrid": False, "zeroline": False},
                    "yaxis": {"automargin": True, "ticklabelposition": "outside"},
                    "margin": {"pad": 8, "r": 0, "l": 0}, "title": {"xanchor": "left", "x": 0},
                    "font": {"size": 12}}}

#: Draws ``figures[name]`` anew ``n`` times (each from a fresh copy, as a new chart is), milliseconds each.
DRAW = """
async ([figure, n]) => {
  const div = document.getElementById('chart');
  const times = [];
  for (let i = 0; i < n; i++) {
    const copy = JSON.parse(figure);
    copy.layout.width = 1100; copy.layout.height = copy.layout.height || 450;
    const start = performance.now();
    Plotly.purge(div);
    await Plotly.newPlot(div, copy.data, copy.layout, {displaylogo: false});
    div.getBoundingClientRect();
    times.push(performance.now() - start);
  }
  return times;
}
"""


def with_theme(figure: go.Figure, automargin: bool) -> str:
    """The figure's JSON under the theme's template; with ``automargin`` the axes' own setting is
    dropped, so that the theme's (on) applies, as it did before the margins were fixed."""
    spec = json.loads(figure.to_json())
    spec["layout"]["template"] = THEME
    if automargin:
        for name, axis in spec["layout"].items():
            if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
                axis.pop("automargin", None)
    return json.dumps(spec)


def two_panels(path: go.Figure, gap: go.Figure) -> go.Figure:
    """The λ path as it was drawn before: the weights above, the gap's strength below, one log axis."""
    figure = go.Figure(path.to_dict())  # copies: the two figures are measured on their own too
    figure.add_trace(go.Scatter(gap.data[0].to_plotly_json(), xaxis="x2", yaxis="y2"))
    figure.update_layout(
        height=460, xaxis=dict(showticklabels=False, title_text=None, anchor="y"),
        yaxis=dict(domain=[0.36, 1.0]),
        xaxis2=dict(type="log", title_text="λ (log scale)", matches="x", anchor="y2", automargin=False),
        yaxis2=dict(title_text="gap strength", range=[0, 1], tickformat=".0%", domain=[0.0, 0.28], automargin=False),
        shapes=list(path.layout.shapes) + [dict(path.layout.shapes[0].to_plotly_json(), xref="x2", yref="y2 domain")])
    return figure


def step_recipes() -> dict:
    """How to build each figure a λ step on the computed path changes, at λ = 0.3 (and the one it
    does not): ``name -> builder`` called with no arguments."""
    faces = load_dataset("warpAR10P")
    main, side = faces.split_by_class([faces.classes[-1]])
    # k as the page sets it (the data set's classes), the λ of the page's slider
    path = q_alpha_path(main.X, faces.classes.size, side=side.X, solver="power",
                        lams=QALPHA_PATH_LAMBDAS)
    result = path.at(0.3)
    chosen = result.default_k
    # the weights over the mean image are not among them: a step sends them as a picture (caf5858),
    # the figure of the same map is drawn only while its expander is open
    return {
        "sorted weights (2,400 points)": partial(
            sorted_weights_figure, result.alpha, main.feature_names, result.gap.n_selected, clear_gap=result.gap.clear,
            top_k=chosen.k, default=chosen),
        "λ path: the weights": partial(lambda_path_figure, path.lams, path.weights, main.feature_names, current=0.3),
        "λ path: the gap's strength (unchanged by λ)": partial(gap_strength_figure, path.lams, path.gap_strength),
    }


def step_figures() -> dict:
    """The figures of :func:`step_recipes`, and the λ path as it was drawn before (two panels)."""
    figures = {name: build() for name, build in step_recipes().items()}
    figures["λ path as it was (two panels)"] = two_panels(figures["λ path: the weights"],
                                                          figures["λ path: the gap's strength (unchanged by λ)"])
    return figures


def bare_figures():
    rng = np.random.default_rng(0)
    return {"bare page: heat map 60 x 40": go.Figure(go.Heatmap(z=rng.random((60, 40)))),
            "bare page: 2,400 points": go.Figure(go.Scatter(y=np.sort(rng.random(2400))[::-1], mode="lines+markers"))}


def build_figures(repeats: int):
    """Part 0: milliseconds to build each figure of a λ step, as built and validated, and to send it."""
    import plotly.io as pio

    def median_ms(make):
        make()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            make()
            times.append(1000.0 * (time.perf_counter() - start))
        return statistics.median(times)

    print(f"building a λ step's figures on the server, median of {repeats} (ms)\n")
    print(f"{'figure':<46} {'as built':>9} {'validated':>10} {'x':>5} {'sent (to_dict + to_json)':>25}")
    for name, build in step_recipes().items():
        figure = build()
        built = median_ms(build)
        validated = median_ms(lambda: go.Figure(build().to_dict()))
        sent = median_ms(lambda: pio.to_json(figure.to_dict(), validate=False))
        print(f"{name:<46} {built:>9.1f} {validated:>10.1f} {validated / built:>5.1f} {sent:>25.1f}")
    print()


def draw_figures(browser, repeats: int):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_content("<html><body><div id='chart'></div></body></html>")
    page.add_script_tag(path=str(Path(plotly.__file__).parent / "package_data" / "plotly.min.js"))
    print(f"plotly.js {page.evaluate('() => Plotly.version')}, Plotly.newPlot, median of {repeats} draws (ms)\n")
    print(f"{'figure':<46} {'as built':>9} {'with automargin':>16}")
    for name, figure in {**bare_figures(), **step_figures()}.items():
        built, margins = (statistics.median(page.evaluate(DRAW, [with_theme(figure, automargin), repeats])[2:])
                          for automargin in (False, True))
        print(f"{name:<46} {built:>9.1f} {margins:>16.1f}")
    page.close()


def cpu_per_step(context, page, steps):
    """The browser's sampled CPU over ``steps()`` (which returns the steps taken), ms per step by
    where the time went."""
    devtools = context.new_cdp_session(page)
    devtools.send("Profiler.enable")
    devtools.send("Profiler.setSamplingInterval", {"interval": 200})
    devtools.send("Profiler.start")
    times = steps()
    profile = devtools.send("Profiler.stop")["profile"]
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}

    def kind(node_id):
        frames = []
        while node_id is not None:
            frames.append(nodes[node_id]["callFrame"])
            node_id = parent.get(node_id)
        if any("PlotlyChart" in frame["url"] for frame in frames):
            return "Plotly"
        if any("react-dom" in frame["url"] for frame in frames):
            return "React"
        name = frames[0]["functionName"]
        return name if name in ("(program)", "(garbage collector)", "(idle)") else "other"

    spent = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"]):
        spent[kind(sample)] += delta / 1000.0
    return times, {name: spent[name] / max(len(times), 1)
                   for name in ("Plotly", "React", "(program)", "(garbage collector)", "other")}


def profile_app(browser, presses: int):
    folder = tempfile.TemporaryDirectory()
    bare, bare_url = bench_app.serve_bare(folder.name)
    server, url = start_server()
    rows = []
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.add_init_script(bench_app.WATCH)
        page = context.new_page()
        for _ in range(100):  # the bare server's start
            try:
                page.goto(bare_url)
                page.get_by_role("slider", name="value").wait_for(timeout=2_000)
                break
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.3)
        bench_app.settled(page, 0)
        rows.append(("bare page: slider", *cpu_per_step(
            context, page, lambda: bench_app.slider_steps(page, "value", presses))))
        page.close()
        page = context.new_page()
        bench_app.open_page(page, url, "qalpha", "Selected (K)")
        bench_app.click_and_settle(page, page.get_by_text("side classes", exact=True))
        bench_app.click_and_settle(page, page.get_by_text("Choose k and λ from the data", exact=True))
        bench_app.settled(page, 0)
        bench_app.click_and_settle(page, page.get_by_role("button", name="Compute the λ path (13 values of λ)"))
        page.locator(".js-plotly-plot").filter(has_text="Weights along λ").wait_for(timeout=300_000)
        bench_app.settled(page, 0)
        keys = ("ArrowLeft", "ArrowRight")
        bench_app.slider_steps(page, bench_app.LAMBDA, 4, keys)  # every λ of the sweep seen once
        rows.append(("Q-alpha: λ on the λ path", *cpu_per_step(
            context, page, lambda: bench_app.slider_steps(page, bench_app.LAMBDA, presses, keys))))
        context.close()
    finally:
        for process in (server, bare):
            process.terminate()
            process.wait(timeout=20)
        folder.cleanup()
    print(f"\nbrowser CPU per step, ms (sampled every 200 µs over {presses} presses)\n")
    print(f"{'step':<28} {'median s':>9} {'Plotly':>7} {'React':>7} {'(program)':>10} {'GC':>5} {'other':>6}")
    for name, times, spent in rows:
        print(f"{name:<28} {statistics.median(times):>9.3f} {spent['Plotly']:>7.0f} {spent['React']:>7.0f} "
              f"{spent['(program)']:>10.0f} {spent['(garbage collector)']:>5.0f} {spent['other']:>6.0f}")


def main():
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--presses", type=int, default=12)
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out: build, figures, app")
    options = parser.parse_args()
    skip = set(filter(None, options.skip.split(",")))
    if "build" not in skip:
        build_figures(options.repeats)
    if not {"figures", "app"} - skip:
        return
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=bench_app.ARGS)
        if "figures" not in skip:
            draw_figures(browser, options.repeats)
        if "app" not in skip:
            profile_app(browser, options.presses)
        browser.close()


if __name__ == "__main__":
    run_recorded(main, "bench_figures", __doc__)
