"""Kernel Q-alpha (Shashua & Wolf, ECCV 2004, Sec. 2): the same views, compared with linear Q-alpha."""

import json
import time
from functools import partial

import numpy as np
import streamlit as st

from core import InputError
from core.selection.kernel_qalpha import kernel_memory_bytes, kernel_q_alpha
from core.limits import memory_limit_bytes
from core.plots import history_figure, sorted_weights_figure
from core.selection.qalpha import QAlphaParameters
from core.selection.sparsity import default_k
from pages.ui import datasets, downloads, estimates, runs, sample_map, session, settings, snippets, views, widgets

session.page_start()

data = datasets.current_dataset()
st.title("Kernel Q-alpha")
st.caption("The features are mapped by a kernel and the algorithm runs on their n x n kernel matrix: "
           "the kernel reshapes the pairwise affinities between features (see the library notes on "
           "what it can and cannot add).")
needed, limit = kernel_memory_bytes(data.n_features), memory_limit_bytes()
if needed > limit:
    st.error(f"{data.n_features:,} features need about {needed / 2**30:.1f} GB for the kernel matrices, "
             f"more than the {limit / 2**30:.1f} GB allowed. Keep fewer features on the Data page (Values: "
             "Features kept, most variable first; for non-negative values), or pick a smaller data set.")
    st.stop()
DEGREES, COEF0S, GAMMAS = range(1, 7), [0.0, 0.1, 0.5, 1.0, 2.0], [0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
max_k = max(1, min(50, data.n_samples - 1))
VIEW = {"kq_kernel": views.choice_of(["rbf", "poly", "linear"]), "kq_k": views.integer_in(1, max_k),
        "kq_degree": views.choice_of(DEGREES), "kq_coef0": views.choice_of(COEF0S), "kq_gamma": views.choice_of(GAMMAS),
        "kq_exact": views.flag}
LABELS = {"kq_kernel": "Kernel", "kq_k": "k — number of clusters", "kq_degree": "degree", "kq_coef0": "coef0",
          "kq_gamma": "gamma", "kq_exact": "Exact step"}
views.restore_view("kernel", VIEW, LABELS)
settings.set_defaults({"kq_kernel": "rbf", "kq_k": int(min(max(data.classes.size, 2), max_k)),
                 "kq_degree": 2, "kq_coef0": 0.0, "kq_gamma": 5.0, "kq_exact": False}, valid={"kq_k": lambda v: v <= max_k},
                labels=LABELS, per_data=("kq_k",))
settings.show_settings_notes()
views.undo_control("kernel", VIEW, LABELS)
# the controls wrap into as many rows as the window needs (five columns squeezed k's box under its label)
controls = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
kernel = controls.selectbox("Kernel", ["rbf", "poly", "linear"], key="kq_kernel", persist_state="session", width=160,
                               help="k(m_i, m_j) of Shashua & Wolf 2004 Def. 2 on the (unit-norm) feature vectors; linear "
                                    "reproduces plain Q-alpha.")
k = controls.number_input("k — number of clusters", 1, max_k, key="kq_k", persist_state="session", width=180,
                             help="k of Shashua & Wolf 2004 Def. 2: the number of columns of E (clusters).")
options = {}
if kernel == "poly":
    options["degree"] = controls.slider("degree", 1, 6, key="kq_degree", persist_state="session", width=220,
                                           help="d of (m_i . m_j + coef0)^d.")
    options["coef0"] = controls.select_slider("coef0", COEF0S, key="kq_coef0", persist_state="session", width=220,
                                                 help="The constant of (m_i . m_j + coef0)^d; 0 keeps weights sparse.")
elif kernel == "rbf":
    options["gamma"] = controls.select_slider("gamma", GAMMAS, key="kq_gamma", persist_state="session", width=260,
                                                 help="exp(-gamma |m_i - m_j|^2) on unit-norm features.")
exact = controls.toggle(
    "Exact step", key="kq_exact", persist_state="session",
    help="Off (fast): step 3 of Definition 2 as one power step per iteration, matrix-free, with float32 products "
         "(about 7x faster per iteration on the AR faces with the app's one BLAS thread) until the residual is 1e-4, "
         "then float64 to the tolerance: a float64 run's weights. On: the leading eigenvector "
         "of G solved at every iteration in float64, as printed. Both end at a fixed point of the same iteration; "
         "where there are several they may end at different ones (the objective says which is larger).")
# the fast setting for stepping through kernels; the printed algorithm one click away
solve = dict(solver="eigen", dtype="float64") if exact else dict(solver="power", dtype="float32")
MAX_ITER = 1000


def run_key(k, kernel, options) -> str:
    """What determines a run of this page: the data, the kernel and its options, k and the solver."""
    return json.dumps(dict(data=data.fingerprint, kernel=kernel, k=k, **options, **solve), sort_keys=True)


def run_kernel(k, kernel, options):
    """kernel_q_alpha with a progress bar that gives an estimate before the first iteration (from
    this data set's last run with the same solver: its time per iteration and its number of
    iterations; else from the measured cost per kernel entry), and Stop."""
    key = run_key(k, kernel, options)
    past = st.session_state.setdefault("kq_past_runs", {})
    seconds, rate, iterations = estimates.kernel_seconds(data.n_features, solve["solver"],
                                                         past.get((data.fingerprint, solve["solver"])))

    def run(progress):
        start = time.perf_counter()
        result = kernel_q_alpha(data.X, k, kernel, progress=progress, max_iter=MAX_ITER, **options, **solve)
        past[(data.fingerprint, solve["solver"])] = ((time.perf_counter() - start) / max(result.n_iter, 1),
                                                     result.n_iter)
        return result

    return runs.run_with_progress(key, run, stop="kernel", status=runs.iteration_status(MAX_ITER), every=5,
                                text=f"Kernel Q-alpha on {data.n_features:,} features: about {seconds:.1f} s "
                                     f"({rate:.2f} s per iteration, about {iterations} iterations as "
                                     f"{'the last run here' if (data.fingerprint, solve['solver']) in past else 'usual'}"
                                     f"; at most {MAX_ITER})")


runs.stop_control("kernel")
try:
    result = run_kernel(int(k), kernel, options)
    if result is None:  # stopped before a first result (the note above says so)
        st.stop()
    # the Q-alpha page's default run for the result's k (after a Stop, the shown result may be of
    # other settings): the two pages share its result; not started again after a Stop
    linear = runs.run_q_alpha(data, None, None, QAlphaParameters(k=int(result.k), lam=0.0), stop="kernel", last=False)
except InputError as error:
    widgets.show_error(error)
    st.stop()
top = min(20, data.n_features)
if linear is not None:
    cosine = f"{float(result.alpha @ linear.alpha / np.linalg.norm(result.alpha) / np.linalg.norm(linear.alpha)):.3f}"
    overlap = f"{len(set(result.top(top)) & set(linear.top(top)))}/{top}"
else:
    cosine = overlap = "—"
gap = result.gap
cols = widgets.row(4)
widgets.gap_metric(cols[0], gap)
cols[1].metric("Iterations", result.n_iter, help="converged" if result.converged else "not converged")
cols[2].metric("cos(alpha, linear alpha)", cosine)
cols[3].metric(f"Top-{top} overlap with linear", overlap)
st.caption(("Exact step: the leading eigenvector of G at every iteration, float64 (Shashua & Wolf 2004, "
            "Definition 2 as printed)." if result.solver == "kernel" else
            "Fast step: one power step per iteration, float32 products to a residual of 1e-4 and float64 after; "
            "switch on Exact step for the printed "
            "algorithm in float64.") + (f" Converged after {result.n_iter} iterations." if result.converged else ""))
widgets.convergence_warning(result, f"The page stops at {MAX_ITER:,} iterations. A kernel that makes the features "
                            "almost alike (a large γ of the RBF kernel, a high degree) often keeps the iteration "
                            "moving: try a smaller γ or degree, or switch on Exact step.")
default = default_k(result.alpha, gap)
widgets.chart(sorted_weights_figure(result.alpha, data.feature_names, gap.n_selected, clear_gap=gap.clear,
                                    default=default, log_rank=True), "kernel_sorted")
widgets.pixel_view(data, result.alpha, result.top(default.k), "kernel_overlay")
sample_map.selection_map(data, result.top(default.k), n_clusters=int(result.k), seed=0, key="kernel_samples",
                         what="the top {k} features of kernel Q-alpha", order=result.ranking,
                         k_label="K — top features on the map")
# drawn only when asked for (as on the Q-alpha page): with the snippet drawn when opened, a new
# tab's first open of this page was painted 1.05 s after the bare page's, now 0.55-0.77 s
# (bench_app, medians of 3 opens)
convergence = widgets.when_open(f"Convergence: the objective at each of the {result.n_iter} iterations",
                                "kq_convergence")
if convergence is not None:
    widgets.chart(history_figure(result.history), "kernel_history", where=convergence)
ranking = result.ranking
table = {"rank": np.arange(1, data.n_features + 1), "feature": np.asarray(data.feature_names)[ranking],
         "alpha": result.alpha[ranking]}
if linear is not None:
    table["linear alpha"] = linear.alpha[ranking]
# the names of the features the kernel weighs most, beside the linear weights: on a gene table
# they are what the user came for (the whole ranking is the CSV below)
st.dataframe({column: values[:50] for column, values in table.items()}, hide_index=True, height=240)
download = widgets.row(2)
download[0].download_button("Weights and ranking (CSV)", partial(downloads.table_csv, table),
                            file_name=downloads.file_name(data.name, "kernel-qalpha", "csv"), mime="text/csv", key="kq_csv",
                            on_click="ignore")
download[1].download_button(
    "Parameters (JSON)", json.dumps(dict(data_set=data.name, kernel=kernel, k=int(k), **options, **solve,
                                         iterations=result.n_iter, converged=bool(result.converged)), indent=1),
    file_name=downloads.file_name(data.name, "kernel-qalpha-parameters", "json"), mime="application/json", key="kq_json", on_click="ignore")
widgets.snippet("Python: this result in a notebook", "kq_snippet",
                lambda: snippets.kernel_snippet(data, datasets.is_bundled(data), int(result.k), kernel, options, solve,
                                                MAX_ITER))
# only the parameters of the chosen kernel: the others do not shape this view
views.share_view(["kq_kernel", "kq_k", "kq_exact", *{"poly": ("kq_degree", "kq_coef0"), "rbf": ("kq_gamma",)}.get(kernel, ())])

# The RBF kernel's other γ's, where their estimate is short (the AR faces: about 3 s), solved on
# the server after this run by its background thread (pages/ui/runs.py): a γ step is then a
# lookup, as a λ step is on the Q-alpha page's λ path (a new γ was a solve of 0.3-1.0 s there,
# 1.0-1.8 s from key press to settled page). Solved in the run, with a progress bar, they held a
# first open on a fresh server 6.1-6.5 s against 1.2 s (bench_app). A γ step that asks for one
# still waiting solves it at once; one being solved is waited for.
if kernel == "rbf" and not runs.is_stopped("kernel"):
    shown_k = int(result.k)
    keys = {g: run_key(shown_k, "rbf", {"gamma": g}) for g in GAMMAS}
    others = {g: key for g, key in keys.items() if not runs.is_memoised(key)}
    # by the cost model alone (not this session's last run, which a session that found the result
    # computed lacks): every session decides alike on the same data
    each, _, _ = estimates.kernel_seconds(data.n_features, solve["solver"])
    if others and len(others) * each <= estimates.AUTO_PATH_SECONDS:
        for other, key in others.items():
            runs.memoise_later(key, partial(kernel_q_alpha, data.X, shown_k, "rbf", gamma=other, max_iter=MAX_ITER,
                                            **solve))
        st.caption(f"The other γ's ({', '.join(f'{g:g}' for g in others)}) are solved on the server after this "
                   f"result, about {len(others) * each:.0f} s in all: moving γ then shows each at once.")
