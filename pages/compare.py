"""Compare: Q-alpha and sparse LDA against the baselines on the current data set."""

import json
import time
from dataclasses import asdict

import pandas as pd
import streamlit as st

from core import InputError
from core.evaluation.compare import (MEASURES as HELD_OUT_MEASURES, compare_methods, comparison_curves,
                                     comparison_folds, comparison_sizes)
from core.evaluation.metrics import projection_curves, stability_curve
from core.selection.modules import ranking_across_modules
from core.selection.methods import (METHODS, SPARSE_PCA_MAX_FEATURES, is_supervised, offered_methods, q_alpha_ranker,
                                    rank_features)
from core.selection.projections import PROJECTIONS
from core.selection.qalpha import CRITERION_NAMES, QAlphaParameters
from core.selection.side import SideInformation
from core.plots import comparison_figure
from pages.ui import comparison, datasets, downloads, runs, selection, session, settings, snippets, views, widgets

session.page_start()

SLOW = {"forward_wrapper", "backward_wrapper", "mutual_information", "rfe_svm", "l1_logistic", "udfs", "ndfs",
        "sparse PCA", "rfs", "l21", "l21_logistic"}
#: Feature extraction (combinations of features: the lecture's methods and those of Shashua & Wolf 2004 Sec. 6) placed beside the selections.
EXTRACTIONS = {"PCA": "pca", "kernel PCA": "kernel_pca", "LPP": "lpp", "LLE": "lle", "Isomap": "isomap"}
SIDE_EXTRACTIONS = {"CPCA": "cpca", "OPCA": "opca", "SDR-SI": "sdr_si"}
MEASURES = {**HELD_OUT_MEASURES, "kuncheva": "stability (Kuncheva index)"}

data = datasets.current_dataset()
st.title("Compare")
st.caption("Each method ranks the features on the training folds of a stratified cross-validation; the top k "
           "are judged on the held-out fold only: how well k-means groups those samples (Hungarian accuracy, NMI), "
           "the accuracy of a 1-nearest-neighbour classifier fitted on the training fold, and the normalised "
           "precision index of Shashua & Wolf, ECCV 2004, Sec. 6. A supervised method never sees the labels it is "
           "judged by; the unsupervised ones never see labels at all and form their own group. Mean and "
           "standard deviation over the folds. The table's best value is picked among the sizes after the fact "
           "and flatters every method; the mean over the sizes picks nothing.")
labelled = data.labels is not None and data.classes.size >= 2
if not labelled:
    st.info(f"**{data.name} has no labels, so nothing here can be judged held out** (every measure compares a "
            "selection with the classes). To give them: on the Data page, upload the table again and pick the "
            "column or row that holds the classes under **Labels** (a table with samples as rows takes a column, "
            "one with genes as rows a row such as 'class'); images take theirs from their folders or file-name "
            "prefixes. Or choose a labelled bundled set in the sidebar. Without labels, below: what the "
            "unsupervised methods select, and how much their selections agree.", icon=":material/label_off:")
# a model of counts or intensities (the dispersion, SDR-SI) is offered only on values without negatives
counts_like = bool(data.X.min() >= 0)
choices = offered_methods(data.classes.size, counts_like, data.n_features)  # without labels: the unsupervised only
side = datasets.current_side_dataset()
non_negative = side is not None and counts_like and side.X.min() >= 0
extraction_choices = list(EXTRACTIONS) + ([m for m, key in SIDE_EXTRACTIONS.items()
                                           if non_negative or not PROJECTIONS[key].models_counts]
                                          if side is not None else [])
VIEW = {"cmp_methods": lambda v: [views.choice_of(choices)(m) for m in v], "cmp_measure": views.choice_of(MEASURES),
        "cmp_bootstrap": views.integer_in(2, 50), "cmp_top_k": views.integer_in(1, data.n_features),
        "cmp_extract": lambda v: [views.choice_of(list(EXTRACTIONS) + list(SIDE_EXTRACTIONS))(m) for m in v]}
LABELS = {"cmp_methods": "Methods", "cmp_measure": "Measure", "cmp_bootstrap": "Bootstrap resamples",
          "cmp_top_k": "K — top features named and compared", "cmp_extract": "Feature extraction beside them"}
views.restore_view("compare", VIEW, LABELS)
settings.set_defaults({"cmp_methods": ["Q-alpha", "fisher", "laplacian", "variance"], "cmp_measure": "accuracy",
                 "cmp_bootstrap": 10, "cmp_extract": [], "cmp_top_k": min(10, data.n_features)},
                valid={"cmp_methods": lambda v: all(m in choices for m in v),
                       "cmp_top_k": lambda v: v <= data.n_features,
                       "cmp_extract": lambda v: all(m in extraction_choices for m in v)},
                labels=LABELS, per_data=("cmp_top_k",))
settings.show_settings_notes()
views.undo_control("compare", VIEW, LABELS)
methods = st.multiselect("Methods", choices, key="cmp_methods", persist_state="session",
                         format_func=lambda m: METHODS[m].name + (" (slow)" if m in SLOW else ""),
                         help="Run times of every baseline are measured in benchmarks/bench_baselines.py.")
if not counts_like:
    st.caption("The dispersion (scanpy's highly variable genes) is not offered: it needs counts or intensities, "
               "and these data have negative values.")
# the papers' sparse methods: said where they are not offered, and why
not_offered = []
if "sparse LDA" not in choices and data.classes.size > 2:
    not_offered.append(f"sparse LDA needs two classes ({data.name} has {data.classes.size}; the Sparse LDA / PCA "
                       "page takes any pair of them)")
if "sparse PCA" not in choices:
    not_offered.append(f"sparse PCA's forward search is offered up to {SPARSE_PCA_MAX_FEATURES:,} features ("
                       f"{data.n_features:,} here; its cost grows as the cube: 70 s a ranking on 765 features): keep "
                       "the most variable features on the Data page")
if not_offered:
    st.caption("Not offered: " + "; ".join(not_offered) + ".")
sizes = comparison_sizes(data.n_features)
k = int(min(max(data.classes.size, 2), data.n_samples - 1))
try:
    folds = comparison_folds(data.labels) if labelled else None
except InputError as error:
    widgets.show_error(error)
    st.stop()

# the Q-alpha rows run the Q-alpha page's settings (its defaults if it was not visited)
qalpha = settings.chosen_qalpha(data, side is not None)
QALPHA_METHODS = ("Q-alpha", "Q-alpha (supervised)", "Q-alpha (across modules)")
side_mode = qalpha["qa_side_mode"]
qalpha_named = ", ".join(
    [f"k = {qalpha['qa_k']}", CRITERION_NAMES[qalpha["qa_criterion"]]]
    + {"none": ["no side information"],
       "side classes": [f"side classes {settings.shown(qalpha['qa_side_classes'])}"],
       "pairs": [f"{qalpha['qa_n_pairs']} pairs"],
       "uploaded side data": [f"side data {side.name if side is not None else ''}"]}[side_mode]
    + ([f"λ = {qalpha['qa_lambda']:g}"] if side_mode != "none" else []))
# k and λ the Q-alpha page chose from the data (its "Choose k and λ from the data"), said as such
auto_chose = st.session_state.get("_qa_auto_chose") or {}
qalpha_chosen_by_data = (bool(qalpha["qa_auto"]) and side_mode != "none" and not qalpha["qa_supervised"]
                         and auto_chose.get("data") == data.fingerprint and auto_chose.get("k") == qalpha["qa_k"])
if qalpha_chosen_by_data:
    qalpha_named += " (k and λ chosen from the data on the Q-alpha page)"


def label_of(method) -> str:
    """A method as the table names it: the Q-alpha rows with the settings they ran."""
    if method == "Q-alpha (supervised)":
        return f"Q-alpha (supervised; {qalpha_named.split(', ', 1)[1]})"
    if method in ("Q-alpha", "Q-alpha (across modules)"):
        return f"Q-alpha{', across modules' if method != 'Q-alpha' else ''} ({qalpha_named})"
    return METHODS[method].name if method in METHODS else method  # extraction rows are named already


def qalpha_parameters(method) -> QAlphaParameters:
    """The Q-alpha page's run for a Q-alpha row (the supervised row fixes Q to the classes)."""
    supervised_run = method == "Q-alpha (supervised)"
    return QAlphaParameters(
        k=None if supervised_run else int(qalpha["qa_k"]), supervised=supervised_run,
        criterion=qalpha["qa_criterion"], lam=float(qalpha["qa_lambda"]) if side_mode != "none" else 0.0,
        init=qalpha["qa_init"], n_init=int(qalpha["qa_n_init"]), max_iter=int(qalpha["qa_max_iter"]),
        tol=float(qalpha["qa_tol"]), random_state=int(qalpha["qa_seed"]))


#: The Q-alpha rows' side information as q_alpha_ranker takes it: from the samples each ranking
#: is handed (side classes, pairs), or the uploaded side data as is (the snippet writes it so)
qalpha_side = {"none": {}, "uploaded side data": {"side": side.X if side is not None else None},
               "side classes": {"side_classes": qalpha["qa_side_classes"]},
               "pairs": {"n_pairs": int(qalpha["qa_n_pairs"])}}[side_mode]
side_information = SideInformation.from_options(**qalpha_side)


def rank_with(method, X, y):
    """``method``'s ranking of the features of ``X``; ``y`` the labels it may use (None for an
    unsupervised method). The Q-alpha rows take the Q-alpha page's side information from these
    samples alone (:func:`core.q_alpha_ranker`)."""
    if method not in QALPHA_METHODS:
        return rank_features(method, X, y, n_clusters=k)
    ranking = q_alpha_ranker(qalpha_parameters(method), side=side_information)(X, y)
    # the alternative ordering of the Q-alpha page's modules view, judged beside the plain one (issue 77)
    return ranking_across_modules(X, ranking) if method == "Q-alpha (across modules)" else ranking


def stability_of(method, sizes, n_bootstrap, bar):
    """Kuncheva and Jaccard indices of the top-k sets over bootstrap resamples, with a progress bar."""
    key = json.dumps(dict(data=data.fingerprint, method=method, k=k, sizes=sizes, n_bootstrap=n_bootstrap,
                          qalpha=settings_of(method)))

    def compute():
        return stability_curve(data.X, data.labels, lambda X, y: rank_with(method, X, y if supervised(method) else None),
                               sizes,
                               n_bootstrap=n_bootstrap, random_state=0,
                               progress=lambda report: bar.progress(
                                   report.fraction, text=f"{method}: resample {report.done} of {report.total}"))
    return runs.memoised(key, compute)


def settings_of(method) -> dict | None:
    """What a method's result depends on beyond the data (the Q-alpha rows: the Q-alpha page's settings)."""
    if method not in QALPHA_METHODS:
        return None
    return dict(qalpha, side=side.fingerprint if side is not None and side_mode == "uploaded side data" else None)


def method_key(method) -> str:
    return json.dumps(dict(data=data.fingerprint, method=method, k=k, sizes=sizes, folds=folds, protocol="held-out",
                           qalpha=settings_of(method)), default=str)


def supervised(method) -> bool:
    """Whether a method uses the labels (Q-alpha does when its side information is side classes or pairs)."""
    return is_supervised(method, side_information)


def kind_of(name) -> str:
    """A row's group: a selection method's, or feature extraction's (fitted without labels)."""
    if name not in choices:
        return "extraction (unsupervised)"
    return "supervised" if supervised(name) else "unsupervised"


def selections_view(chosen) -> None:
    """What each method selects, ranked on every sample (labels too, for the supervised ones): the
    features a user would take away; the scores above, where there are labels, say how far to
    trust them."""
    full = {m: runs.memoised(method_key(m) + " on every sample",
                             lambda m=m: rank_with(m, data.X, data.labels if supervised(m) else None))
            for m in chosen}
    selection.method_selections(data, {label_of(m): ranking for m, ranking in full.items()},
                                {label_of(m): kind_of(m) for m in full})


if not labelled:
    if methods:
        with st.spinner(f"Ranking the features by {len(methods)} method(s)…"):
            selections_view(methods)
    views.share_view(VIEW)
    st.stop()


extract = st.multiselect(
    "Feature extraction beside them", extraction_choices, key="cmp_extract", persist_state="session",
    help="Methods that combine features instead of selecting them, drawn dashed against their number of "
         "dimensions: PCA, kernel PCA (RBF), LPP, LLE and Isomap (10 neighbours) on the standardised data, "
         "without labels. With side data loaded on the Data page, also CPCA, OPCA and SDR-SI, which "
         "suppress the side data's structure (SDR-SI models co-occurrences and needs non-negative data).")
if side is None:
    st.caption("CPCA, OPCA and SDR-SI need side data: load it on the Data page to place them here.")
elif not non_negative:
    st.caption("SDR-SI is not offered: it models counts or intensities, and these data have negative values.")
dims = [d for d in (1, 2, 3, 5, 10, 20, 50) if d <= min(data.n_samples - 1, data.n_features)]


def extraction_of(name, bar):
    """The curves of one extraction method, cached per data, side data and method."""
    key = json.dumps(dict(data=data.fingerprint, side=side.fingerprint if side is not None else None,
                          method=name, dims=dims))

    def compute():
        method = {**EXTRACTIONS, **SIDE_EXTRACTIONS}[name]
        return projection_curves(data.X, data.labels, {name: method}, dims,
                                 side=side.X if name in SIDE_EXTRACTIONS else None,
                                 progress=lambda report: bar.progress(
                                     report.fraction, text=f"{name}: {dims[report.done - 1]} dimensions fitted"))[name]
    return runs.memoised(key, compute)


if not methods and not extract:
    st.info("Choose at least one method.")
    st.stop()
if any(m in QALPHA_METHODS for m in methods):
    st.caption(f"Q-alpha runs as set on the Q-alpha page: {qalpha_named}. Side classes and pairs come from the "
               "training folds' labels, so that Q-alpha is then judged as a supervised method."
               + (" The automatic choice judged k and λ by the reproducibility of k-means, not by these held-out "
                  "scores: set them by hand on the Q-alpha page to compare others." if qalpha_chosen_by_data else ""))
metric = st.radio("Measure", list(MEASURES), horizontal=True, key="cmp_measure", persist_state="session", format_func=MEASURES.get,
                  help="accuracy: k-means clusters matched to classes (Hungarian); NMI: normalised mutual "
                       "information; precision: the normalised precision index of Shashua & Wolf 2004 Sec. 6 (k-NN purity); "
                       "stability: Kuncheva's consistency index of the top-k sets chosen on bootstrap "
                       "resamples (1: always the same features, 0: chance).")


def curves_of(method) -> tuple[dict, float]:
    """One method's held-out curves at every size (the ranking made on each training fold; an
    unsupervised method is handed no labels), and the seconds they took: kept per method, so
    that adding a method to the list computes that one only."""
    def compute():
        start = time.perf_counter()
        table = compare_methods(data.X, data.labels, {method: lambda X, y: rank_with(method, X, y)}, sizes=sizes,
                                n_splits=folds, supervised={method: supervised(method)}, random_state=0)
        return comparison_curves(table)[method], time.perf_counter() - start
    return runs.memoised(method_key(method), compute)


# the methods run one after another when asked (five rankings and their judgement per method: the
# four defaults on the AR faces took 5.8 s in the browser, a wrapper takes minutes), each row shown
# when its method is done; Stop (shown only while they run) keeps the rows done and computes
# nothing more until Resume
pending = [m for m in methods if not runs.is_memoised(method_key(m))]
run_slot = st.empty()  # the button goes once pressed: its run is under way below
go_ahead = bool(pending) and not runs.is_stopped("compare") and run_slot.button(
    f"Run {len(pending)} method(s)", key="compare_run", type="primary",
    help=f"Each ranks the features on the training folds of a stratified {folds}-fold cross-validation and is "
         "judged on the held-out folds; the rows appear one by one.")
if pending and not go_ahead and not runs.is_stopped("compare"):
    st.caption(f"{', '.join(pending)}: not run yet on these data. "
               + ("The rows below are the methods already run." if len(pending) < len(methods) else
                  "Press Run: the table, the curves and what each method selects appear here."))
if not pending:  # everything asked for is here: a Stop pressed earlier has nothing left to hold back
    st.session_state["compare_stopped"] = False
runs.stop_control("compare", message=f"{len(methods) - len(pending)} of {len(methods)} methods are done and shown "
                                     "below. " if pending else None)
rows_slot = st.empty()
results, seconds = {}, {}
try:
    if go_ahead:
        run_slot.empty()
        progress_slot, bar = runs.progress_with_stop("compare", "compare_stop", f"{len(pending)} method(s) to run",
                                                     "Stop after the method that runs now; the rows done stay.")
        for index, method in enumerate(methods):
            if method in pending:
                bar.progress(index / len(methods), text=f"{method}: ranking the features and clustering with the top k "
                                                         f"({index + 1} of {len(methods)})")
            results[method] = curves_of(method)
            rows_slot.dataframe(comparison.table_of(results, metric, MEASURES, label_of, kind_of) if metric != "kuncheva" else
                                {"method": list(results)}, hide_index=True)
        progress_slot.empty()
    else:
        results = {m: curves_of(m) for m in methods if m not in pending}
    curves = {m: dict(value[0]) for m, value in results.items()}
    seconds = {m: value[1] for m, value in results.items()}
    extracted = {}
    if extract:
        bar = st.progress(0.0)
        try:
            for name in extract:
                start = time.perf_counter()
                label = f"{name} (extracted)"
                extracted[label] = extraction_of(name, bar)
                seconds[label] = time.perf_counter() - start
        finally:
            bar.empty()
except InputError as error:
    widgets.show_error(error)
    st.stop()
if metric == "kuncheva":
    n_bootstrap = st.slider("Bootstrap resamples", 2, 50, key="cmp_bootstrap", persist_state="session",
                            help="Each method ranks the features again on this many resamples of the samples "
                                 "(drawn with replacement); the cost grows with it.")
    bar = st.progress(0.0)
    try:
        for method in curves:
            start = time.perf_counter()
            curves[method].update(stability_of(method, [s for s in sizes if s < data.n_features], n_bootstrap, bar))
            seconds[method] += time.perf_counter() - start
    except InputError as error:
        widgets.show_error(error)
        st.stop()
    finally:
        bar.empty()
    st.caption(f"{n_bootstrap} bootstrap resamples per method; sizes below {data.n_features} features.")
for name, values in extracted.items():
    if values["skipped"]:
        st.caption(f"{name} could not give {', '.join(str(d) for d, _ in values['skipped'])} dimensions here: "
                   f"{values['skipped'][0][1]}")
if metric == "kuncheva" and extracted:
    st.caption("Stability is a property of selected feature sets: the extraction methods are not drawn.")
    extracted = {}
shown = {**curves, **extracted}


if shown:  # before anything is run there is no table, and an empty chart's axes would only say nothing
    reference = comparison.all_features(curves, metric, data.n_features)
    final_table = comparison.table_of({m: (shown[m], seconds[m]) for m in shown}, metric, MEASURES, label_of, kind_of,
                                      reference=reference, n_features=data.n_features)
    rows_slot.dataframe(final_table, hide_index=True, column_config={"method": st.column_config.TextColumn(width="medium")})
    if note := comparison.standing_note(final_table, metric, MEASURES):
        st.caption(note)
    widgets.chart(comparison_figure({label_of(m): values for m, values in curves.items()}, metric,
                                    title=MEASURES[metric], extracted=extracted, y_title=MEASURES[metric],
                                    reference=None if reference is None else reference[0]),
                  "comparison")
if curves:
    selections_view(curves)


def curves_table():
    """The curves as one tidy table: a row per method, size and measure (held-out means and their
    spread over folds); built when downloaded."""
    rows = [(label_of(m), kind_of(m), size, MEASURES[name], value, shown[m].get(f"{name}_sd", [None] * len(shown[m]["size"]))[i])
            for m in shown for name in MEASURES if name in shown[m]
            for i, (size, value) in enumerate(zip(shown[m]["size"], shown[m][name]))]
    return pd.DataFrame(rows, columns=["method", "kind", "features or dimensions", "measure", "mean", "sd over folds"])


if shown:
    st.download_button("Curves, every measure (CSV)", lambda: downloads.frame_csv(curves_table()),
                       file_name=downloads.file_name(data.name, "compare", "csv"), mime="text/csv", key="cmp_csv", on_click="ignore")
if curves:
    qalpha_code = None
    if any(m in QALPHA_METHODS for m in curves):
        qalpha_code = dict(params={m: asdict(qalpha_parameters(m)) for m in QALPHA_METHODS},
                           side="".join(f", {name}={value!r}" for name, value in qalpha_side.items() if name != "side"))
        if side_mode == "uploaded side data":
            qalpha_code.update(side=", side=side.X", setup=[
                f"side = load_side_data([(name, open(name, 'rb').read()) for name in [{side.name!r}]], like=data)"])
    widgets.snippet("Python: these curves in a notebook", "compare_snippet",
                    lambda: snippets.compare_snippet(data, datasets.is_bundled(data), list(curves),
                                                     {m: supervised(m) for m in curves}, k, sizes, folds, qalpha_code))
views.share_view(VIEW)
