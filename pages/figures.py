"""Paper figures: each reproduction of the papers' figures and tables, one click each, the paper's numbers beside ours."""

import json

import streamlit as st

from core import InputError
from experiments import EXPERIMENTS, experiment_figures, load_experiments, run_experiment
from experiments.tables import K_RULES, STANDARDISABLE, UCI_RULE, WEIGHTINGS
from pages.ui import datasets, runs, session, snippets, widgets

session.page_start()

load_experiments()
st.title("Paper figures")
st.caption("Every figure and table of the papers (Wolf & Shashua 2003, Shashua & Wolf 2004, Moghaddam et al. 2007) "
           "that the library reproduces, on the bundled data. "
           "Each run prints the paper's number beside ours and checks the paper's qualitative claims. "
           "The same runs are available as `python -m experiments run NAME --out DIR`.")

names = list(EXPERIMENTS)
# the controls wrap into as many rows as the window needs (in four columns random_state was squeezed)
controls = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
name = controls.selectbox(
    "Reproduction", names, width=440, format_func=lambda n: f"{EXPERIMENTS[n].reference} — {EXPERIMENTS[n].title}",
    help="Which figure or table to reproduce; the docstring of each experiment says how our data "
         "and protocol differ from the paper's.")
quick = controls.toggle("Quick version", value=True,
                           help="Fewer repetitions and grid points: under a minute. Off: the full "
                                "protocol (20 AR splits, 30 SVM draws ...), which can take several minutes.")
seed = controls.number_input("random_state", 0, 10_000, 0, width=160,
                                help="Seeds every random draw (splits, data, k-means): the same seed gives the same numbers.")
options = {}
if name == "uci_side":
    data = datasets.current_dataset()
    usable = data.labels is not None and data.classes.size >= 2 and data.n_features <= 20_000
    on_current = controls.toggle(
        "On the current data", value=False, disabled=not usable,
        help="Run the protocol on the data set chosen in the sidebar or uploaded (labels with at least 2 "
             "classes; with 2, half of each class in turn is the side data) instead of the paper's wine data. "
             "Off: wine.")
    if on_current and usable:
        options["dataset"] = data
    with st.expander("The protocol's open choices (default: the rule of the sensitivity study)"):
        choices = st.columns(3)
        options["weighting"] = choices[0].selectbox(
            "How alpha enters k-means", list(WEIGHTINGS), index=list(WEIGHTINGS).index(UCI_RULE["weighting"]),
            format_func=WEIGHTINGS.get, help="000 says only that the features were weighted by alpha.")
        options["k"] = choices[1].selectbox(
            "Q-alpha's k", K_RULES, index=K_RULES.index(UCI_RULE["k"]),
            help="Number of eigenvectors, relative to the number of clusters c (the main data's classes).")
        options["lam"] = choices[2].select_slider(
            "λ — weight of the side information", [0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 10.0], value=UCI_RULE["lam"],
            help="lambda of Shashua & Wolf 2004 Eq. (2); the paper fixed 0.1 for this table. 0: Q-alpha without the side data.")
        options["weight_zscores"] = st.toggle(
            "Weights multiply the standardised features", value=UCI_RULE["weight_zscores"],
            help="Q-alpha normalises the features internally, so alpha weighs z-scores. Off: the weights "
                 "multiply the data as given.")
        options["standardize"] = st.multiselect(
            "Baselines fitted on standardised features", list(STANDARDISABLE), default=list(UCI_RULE["standardize"]),
            help="z-scores before raw k-means, PCA, CPCA or OPCA; the others take the data as given (SDR-SI "
                 "always does). The paper's raw-data numbers imply the data as given; the study found each "
                 "baseline's better choice on four tables.")

key = json.dumps(dict(name=name, quick=quick, seed=int(seed),
                      **{option: value for option, value in options.items() if option != "dataset"},
                      data=options["dataset"].fingerprint if "dataset" in options else None), sort_keys=True)
results = st.session_state.setdefault("experiment_results", {})
if st.button("Run", type="primary", key="run_experiment",
             help="Run this reproduction (results are kept for this session)."):
    bar = st.progress(0.0, text=EXPERIMENTS[name].title)
    try:
        results[key] = runs.memoised(key, lambda: run_experiment(
            name, quick=quick, random_state=int(seed),
            progress=lambda report: bar.progress(report.fraction, text=report.message),
            **options))
    except InputError as error:
        widgets.show_error(error)
    finally:
        bar.empty()

result = results.get(key)
if result is None:
    st.info("Press **Run** to reproduce this figure" + (" (quick version)." if quick else "."))
    st.stop()

st.subheader(f"{result.reference}: {result.title}")
st.caption(f"Data: {result.data}. Ran in {result.seconds:.1f} s.")
for claim in result.claims:
    more = " Too few runs to tell: the full version (Quick version off) runs more." if claim.holds is None and quick else ""
    {True: st.success, False: st.warning, None: st.info}[claim.holds](
        f"{claim.verdict}: {claim.statement} — {claim.evidence}.{more}")
st.markdown("**The paper's numbers beside ours**")
# a static table wraps long cells (a data grid cut the wine table's last cell short)
st.table(result.comparison.astype(str), hide_index=True)
for index, figure in enumerate(experiment_figures(result)):
    widgets.chart(figure, f"figure_{name}_{index}")
with st.expander("Summary table"):
    st.dataframe(result.summary, hide_index=True)
widgets.snippet("Python: this reproduction in a notebook", "figures_snippet",
                lambda: snippets.figures_snippet(name, quick, int(seed), options, options.get("dataset"),
                                                 "dataset" in options and datasets.is_bundled(options["dataset"])))
downloads = widgets.row(3)
downloads[0].download_button("All measurements (CSV)", result.table.to_csv(index=False).encode(),
                             file_name=f"{name}.csv", mime="text/csv", on_click="ignore")
downloads[1].download_button("Summary (CSV)", result.summary.to_csv(index=False).encode(),
                             file_name=f"{name}_summary.csv", mime="text/csv", on_click="ignore")
downloads[2].download_button("Comparison, claims, parameters (JSON)", json.dumps(result.to_json(), indent=1),
                             file_name=f"{name}.json", mime="application/json", on_click="ignore")
