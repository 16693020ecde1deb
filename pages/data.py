"""Data: pick a bundled set or upload images or a table; preview; choose the feature family."""

from dataclasses import replace

import numpy as np
import streamlit as st

from core import InputError
from core.data.transforms import RARE_SHARE, transform_steps, transform_values
from core.data.bundled import list_datasets, load_dataset
from core.features.families import FEATURE_FAMILIES, to_feature_family
from core.data.loaders import COMPRESSED_EXTENSIONS, IMAGE_EXTENSIONS, TABLE_EXTENSIONS, finish, load_images, load_side_data
from core.plots import image_grid_figure
from core.data.stores import data_folder
from pages.ui import datasets, selection, server_data, session, snippets, widgets

session.page_start()

ORIENTATION_LABELS = {"auto": "Guess", "samples_as_rows": "Samples as rows",
                      "samples_as_columns": "Samples as columns (genes as rows)"}
MISSING_LABELS = {"refuse": "Refuse the table", "drop_samples": "Drop samples with missing values",
                  "drop_features": "Drop features with missing values", "mean": "Impute the feature's mean",
                  "median": "Impute the feature's median"}


def table_options(parsed, filename):
    """The choices for a parsed table (layout, labels, missing values), a preview, and Load."""
    st.caption(" ".join(parsed.notes))
    if parsed.format == "text":
        st.checkbox("The first row holds column names", value=parsed.header, key="table_header", persist_state="session",
                    help="Detected from the first lines; change it if the guess is wrong (the file is read again).")
    if parsed.format in ("npz", "mat") or len(parsed.arrays) > 1:
        st.selectbox("Array holding the data", parsed.arrays, index=parsed.arrays.index(parsed.x_key),
                     key="table_x_key", persist_state="session",
                     help="The samples x features matrix inside the file (AnnData: X, raw.X or a layer).")
    rows, columns = parsed.shape
    st.markdown(f"**As read:** {rows:,} rows x {columns:,} columns (the first rows and columns below).")
    st.dataframe(parsed.preview(), height=250)
    orientation = st.radio("Samples are", list(ORIENTATION_LABELS), format_func=ORIENTATION_LABELS.get,
                           horizontal=True, key="table_orientation", persist_state="session",
                           help="Gene-expression tables often have genes as rows and samples as columns.")
    if orientation == "auto":
        _, reason = parsed.guess_orientation()
        st.caption(f"Guess: {reason}")
    choices = parsed.label_choices(orientation)
    suggested, why = parsed.label_suggestion(orientation)
    options = ["(none)"] + choices
    if st.session_state.get("table_label") not in options:
        st.session_state["table_label"] = suggested if suggested in options else "(none)"
    label = st.selectbox("Labels", options, key="table_label", persist_state="session",
                         help="A column of class labels (samples as rows), a row such as 'class' (samples as "
                              "columns) or an obs column (AnnData). Text is fine.")
    if suggested is not None and label == suggested:
        st.caption(f"Labels offered: {suggested!r}, {why}. Choose another above if it is not the classes you mean.")
    elif suggested is None and choices:
        st.caption(f"No labels were chosen for you: {why}.")
    try:
        arrangement = parsed.arrange(label_column=None if label == "(none)" else label, orientation=orientation)
        arrangement.check_shape()  # refused here, in the preview, not after Load
    except InputError as error:
        widgets.show_error(error)
        return
    per_feature, per_sample = arrangement.missing_counts
    n_missing = int(per_feature.sum())
    n_samples, n_features = arrangement.X.shape
    st.markdown(f"**Will load:** {n_samples:,} samples x {n_features:,} features"
                + (f", labels from {label!r}" if label != "(none)" else ", no labels") + ".")
    missing = "refuse"
    if n_missing:
        with st.container(border=True):
            st.markdown(f"**Missing values:** {n_missing:,} in {int((per_feature > 0).sum()):,} features and "
                        f"{int((per_sample > 0).sum()):,} samples.")
            names = arrangement.feature_names or [f"feature {j}" for j in range(n_features)]
            # counted from 0, as the preview above and the data set's own sample names
            samples = arrangement.sample_names or [f"sample {i}" for i in range(n_samples)]
            worst_features = np.argsort(-per_feature, kind="stable")[:8]
            worst_samples = np.argsort(-per_sample, kind="stable")[:8]
            left, right = st.columns(2)
            left.dataframe({"feature": [names[j] for j in worst_features if per_feature[j]],
                            "missing": [int(per_feature[j]) for j in worst_features if per_feature[j]]},
                           hide_index=True)
            right.dataframe({"sample": [samples[i] for i in worst_samples if per_sample[i]],
                             "missing": [int(per_sample[i]) for i in worst_samples if per_sample[i]]},
                            hide_index=True)
            missing = st.radio("What to do with them", list(MISSING_LABELS)[1:], format_func=MISSING_LABELS.get,
                               index=3, key="table_missing", persist_state="session",
                               help="Drop the samples or the features that have a missing value, or fill each "
                                    "missing value with its feature's mean or median (scikit-learn's SimpleImputer).")
    if st.button("Load table", key="load_table", help="Make this table the current data set; if anything is wrong "
                                                      "the current data set stays."):
        label_column = None if label == "(none)" else label
        datasets.load_upload(lambda: finish(arrangement, missing, name=filename), recipe=dict(
            function="load_table", files=[filename],
            options=dict(label_column=label_column, orientation=orientation, missing=missing, header=parsed.header,
                         x_key=parsed.x_key)))


st.title("Data")
st.caption("Everything else works on the current data set. A failed upload leaves it as it was.")

datasets.show_link_request()
folder = data_folder()
current = datasets.current_dataset()
TAB_OF_LOADER = {"load_images": "Upload images", "load_table": "Upload a table"}
tab_names = ["Bundled data sets", "Upload images", "Upload a table"] + (["Server data"] if folder else [])
# the page opens on the tab the current data came from, its picker on the current set
opened_on = TAB_OF_LOADER.get(current.meta.get("loaded_with", {}).get("function"), "Bundled data sets")
tabs = st.tabs(tab_names, default=opened_on if opened_on in tab_names else None)
bundled_tab, images_tab, table_tab = tabs[:3]

with bundled_tab:
    infos = {info.name: info for info in list_datasets()}
    if st.session_state.get("_data_page_shown_for") != current.name:
        st.session_state["_data_page_shown_for"] = current.name
        if datasets.is_bundled(current):  # the picker follows data chosen elsewhere, not the user's browsing
            st.session_state["data_page_bundled"] = current.name
    choice = st.selectbox("Data set", list(infos), key="data_page_bundled", persist_state="session",
                          format_func=lambda n: f"{n} — {infos[n].description}",
                          help="The data sets bundled with the app (assets/README.md says where each comes from).")
    st.caption(infos[choice].source)
    if st.button("Use this data set", key="use_bundled", help="Make it the current data set of every page."):
        datasets.set_dataset(load_dataset(choice))
        st.rerun()

with images_tab:
    uploads = st.file_uploader(
        "Image files, or a ZIP with one folder per class",
        type=[e.lstrip(".") for e in IMAGE_EXTENSIONS] + ["zip"], accept_multiple_files=True,
        key="image_upload", on_change=datasets.forget_load_messages,
        help="PNG, JPEG, BMP, TIFF (a multi-page stack gives one image per page), GIF, PGM/PPM. Converted to "
             "grey values in [0, 1]; images of another size are resized to the most common size.")
    labels_from = st.radio("Labels from", ["folder", "prefix", "none"], horizontal=True,
                           help="folder: the folder of each image inside the ZIP; prefix: the part "
                                "of the file name before the separator (alice_01.png -> alice).")
    separator = st.text_input("Prefix separator", "_", max_chars=3, disabled=labels_from != "prefix",
                              help="The label is the file name up to this separator (alice_01.png -> alice).")
    strict = st.checkbox("Refuse images of another size instead of resizing them",
                         help="Off: images of another size are resized to the most common size (and listed).")
    if st.button("Load images", disabled=not uploads, key="load_images",
                 help="Read the files; if anything is wrong the current data set stays."):
        image_options = dict(labels_from=None if labels_from == "none" else labels_from,
                             prefix_separator=separator or "_", strict_size=strict)
        datasets.load_upload(lambda: load_images(
            [(f.name, f.getvalue()) for f in uploads], **image_options,
            name=uploads[0].name if len(uploads) == 1 else f"{len(uploads)} uploaded files"),
            recipe=dict(function="load_images", files=[f.name for f in uploads], options=image_options))

with table_tab:
    upload = st.file_uploader(
        "A table: samples x features or genes x samples",
        type=[e.lstrip(".") for e in TABLE_EXTENSIONS + COMPRESSED_EXTENSIONS],
        key="table_upload",
        help="CSV/TSV/TXT (also .gz, .bz2, .xz, or one table in a .zip), Parquet, AnnData .h5ad, NPY, NPZ or "
             "MATLAB .mat. Read once; the choices below do not read it again.")
    if upload is not None:
        parsed = datasets.parsed_upload(upload, prefix="table_")
        if isinstance(parsed, InputError):
            widgets.show_error(parsed)
        else:
            table_options(parsed, upload.name)

if folder:
    with tabs[3]:
        server_data.server_tab(folder)

datasets.show_load_messages()


def values_section(data) -> None:
    """A table's values transformed before selection (equal totals, log1p, the most variable
    features, z-scores): a new data set in the sidebar's list, beside the one it came from, which
    stays as it was."""
    st.markdown("**Values**")
    source = data.meta.get("transformed_from")
    if source is not None:
        steps = ", ".join(transform_steps(data.meta["transform"]))
        st.caption(f"These are the values of {source.name}, transformed: {steps}. "
                   f"{source.name} stays in the sidebar's list as it was.")
    # equal totals, log1p and the dispersion are statistics of counts: not offered on negatives
    negative = bool(data.X.min() < 0)
    for_counts = ("Not offered: these values have negatives (already logged or centred)." if negative
                  else "For non-negative values only.")
    row = st.container(horizontal=True, vertical_alignment="bottom", gap="medium")
    normalise_total = row.checkbox(
        "Equal totals per sample", key="data_normalise_total", persist_state="session", disabled=negative,
        help="First: each sample scaled so that its values sum to the median of the samples' sums, as "
             f"scanpy.pp.normalize_total (counts of sequencing depth, words of document length). {for_counts}")
    log1p = row.checkbox("log1p: log(1 + x)", key="data_log1p", persist_state="session", disabled=negative,
                         help="Each value x becomes log(1 + x), as scanpy.pp.log1p: it tames the heavy tails of raw "
                              f"counts and intensities, which every method, Q-alpha too, sees. {for_counts}")
    # keyed by the data: another data set has another number of features, and starts from all
    kept = row.number_input("Features kept, most variable first", 1, data.n_features, data.n_features,
                            key=f"data_most_variable_{data.fingerprint[:12]}", persist_state="session", width=220,
                            disabled=negative,
                            help="Keep this many features, those of largest dispersion (variance over mean) for their "
                                 "level of expression: the highly variable genes scanpy keeps (flavor 'seurat': the "
                                 f"same 2,000 on the five wide bundled tables of raw values). {for_counts} All of them: nothing dropped. Fewer "
                                 "features make Kernel Q-alpha and sparse PCA possible on wide tables.")
    standardise = row.checkbox("z-scores: each feature centred, unit variance", key="data_standardise",
                               persist_state="session",
                               help="Each feature minus its mean, divided by its standard deviation (last), as "
                                    "scanpy.pp.scale without clipping. Q-alpha's weights and the k-means scores do not "
                                    "change: they normalise the features themselves. The variance ranking (every "
                                    "variance becomes 1), the Laplacian score and SPEC do. A constant feature becomes 0.")
    # a box ticked on other data stays ticked while it is disabled: what is disabled is not asked
    normalise_total, log1p = normalise_total and not negative, log1p and not negative
    n_most_variable = None if kept == data.n_features or negative else int(kept)
    row.button("Transform the values", key="data_transform",
               disabled=not (normalise_total or log1p or standardise or n_most_variable is not None),
               on_click=_transform, args=(data, normalise_total, log1p, n_most_variable, standardise),
               help="Makes a new data set of the transformed values and selects it; the current one stays in "
                    "the sidebar's list.")
    refusal = st.session_state.pop("_transform_refused", None)
    if refusal is not None:
        widgets.show_error(refusal)


def first_of_each_class(labels, count: int, n_samples: int) -> list[int]:
    """Up to ``count`` sample indices, the classes in turn (each class's first, then each one's
    second, ...), in their order in the file: a preview of LFW's faces and non-faces showed 16
    faces and no non-face. Without labels, the first ``count``."""
    if labels is None:
        return list(range(min(count, n_samples)))
    _, codes = np.unique(np.asarray(labels).astype(str), return_inverse=True)
    by_class = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(codes))[:-1]])
    occurrence = np.empty(codes.size, dtype=np.intp)  # 0 for a class's first sample, 1 for its second...
    occurrence[by_class] = np.arange(codes.size) - starts[codes[by_class]]
    picked = np.lexsort((np.arange(codes.size), occurrence))[:count]
    return sorted(picked.tolist(), key=lambda i: (codes[i], i))


def near_empty_section(data) -> None:
    """Features non-zero in only a few samples (a digit's border pixels, a gene seen in two cells):
    how many there are, and scanpy's guard against them (``filter_genes(min_cells=...)``), off
    unless asked for, as the papers' results are on every feature."""
    share = selection.nonzero_shares(data)
    rare = int(np.sum(share < RARE_SHARE))
    st.markdown("**Near-empty features**")
    st.caption(f"{rare:,} of {data.n_features:,} features are non-zero in fewer than {RARE_SHARE:.0%} of the samples. "
               "Q-alpha scales every feature to unit norm, so such a feature weighs as much as a full one and can "
               "rank high on a handful of samples." if rare else
               f"Every feature is non-zero in at least {RARE_SHARE:.0%} of the samples.")
    row = st.container(horizontal=True, vertical_alignment="bottom", gap="medium")
    percent = row.number_input("Non-zero in at least (%)", 0.0, 50.0, 0.0, step=0.5, format="%.1f",
                               key="data_min_nonzero_percent", persist_state="session", width=240,
                               help="The share of the samples a feature must be non-zero in. Features non-zero in "
                                    "fewer samples are removed, as scanpy.pp.filter_genes("
                                    "min_cells=...): dropped from a table; in images set to 0, so the images keep "
                                    "their grid (Q-alpha gives a feature of zeros weight 0). 0: keep every feature.")
    removed = int(np.sum(share < percent / 100)) if percent else 0
    row.button(f"Remove {removed:,} near-empty features" if percent else "Remove near-empty features",
               key="data_remove_rare", disabled=not removed or removed == data.n_features,
               on_click=_transform, args=(data, False, False, None, False, percent / 100),
               help="Makes a new data set without them and selects it; the current one stays in the sidebar's list.")


def _transform(data, normalise_total: bool, log1p: bool, n_most_variable: int | None, standardise: bool,
               min_nonzero_share: float | None = None) -> None:
    """The button's callback, run before the page: the new data set becomes current and the boxes
    are cleared (ticked, they would offer the same steps again on values that already took them)."""
    try:
        datasets.set_dataset(transform_values(data, normalise_total=normalise_total, log1p=log1p,
                                              n_most_variable=n_most_variable, standardise=standardise,
                                              min_nonzero_share=min_nonzero_share))
    except InputError as error:
        st.session_state["_transform_refused"] = error
        return
    for box in ("data_normalise_total", "data_log1p", "data_standardise"):
        st.session_state[box] = False


data = datasets.current_dataset()
side_data = datasets.current_side_dataset()
with st.expander("Side data: a second upload whose structure Q-alpha should ignore", expanded=side_data is not None):
    st.caption("Shashua & Wolf 2004 Sec. 3: features that vary within the side data (e.g. another person's images under "
               "every lighting) are suppressed. Q-alpha offers it as \"uploaded side data\".")
    side_uploads = st.file_uploader(
        "A table or images with the same features as the current data",
        type=[e.lstrip(".") for e in IMAGE_EXTENSIONS + TABLE_EXTENSIONS + COMPRESSED_EXTENSIONS],
        accept_multiple_files=True, key="side_upload",
        help="The side matrix W of Shashua & Wolf 2004 Def. 3: its per-feature variances form D.")
    if st.button("Load side data", disabled=not side_uploads, key="load_side",
                 help="Read the side data; if anything is wrong nothing changes."):
        try:
            side = load_side_data([(f.name, f.getvalue()) for f in side_uploads], like=data)
            datasets.set_side_dataset(datasets.with_recipe(side, dict(
                function="load_side_data", files=[f.name for f in side_uploads], options={})))
            st.rerun()
        except InputError as error:
            widgets.show_error(error)
    if side_data is not None:
        st.markdown(f"Side data: **{side_data.name}**, {side_data.n_samples:,} samples x "
                    f"{side_data.n_features:,} features.")
        if st.button("Remove side data", key="clear_side", help="Forget the uploaded side data."):
            datasets.set_side_dataset(None)
            st.rerun()

st.subheader(f"Current: {data.name}")
summary = data.summary()
st.markdown(f"{summary['samples']:,} samples x {summary['features']:,} features"
            + (f", {summary['classes']} classes" if summary["classes"] else ", no labels")
            + (f", images of {summary['image shape']}" if summary["image shape"] else "")
            + (f" — {data.source}" if data.source else ""))

widgets.snippet("Python: these data in a notebook", "data_snippet",
                lambda: snippets.data_snippet(data, datasets.is_bundled(data)))

if data.family is not None:
    pixels = data.family.images
    st.markdown("**Feature family**")
    chosen = st.radio("Features of the images", list(FEATURE_FAMILIES), horizontal=True,
                      index=list(FEATURE_FAMILIES).index(data.family.name),
                      captions=list(FEATURE_FAMILIES.values()),
                      help="What the selection algorithms see: the grey values, Haar wavelet coefficients "
                           "(Shashua & Wolf 2004 Sec. 6) or Haar-like rectangle features (lecture, Viola-Jones).")
    options = {}
    if chosen == "haar":
        options["levels"] = st.slider("Levels", 1, 5, 3, help="Scales of the Haar decomposition.")
    elif chosen == "haarlike":
        step = st.slider("Stride and scale step (pixels)", 1, 8, 4,
                         help="Positions and cell sizes on this grid; smaller means many more features.")
        options = dict(stride=step, scale_step=step, min_cell=step)
    if st.button("Apply feature family", help="Turn the current images into this feature family."):
        try:
            family = to_feature_family(pixels, chosen, **options)
            # how the library makes the same features (the pages' Python snippets)
            recipe = {} if chosen == "pixels" else {"family_options": dict(family=chosen, options=options)}
            datasets.set_dataset(replace(family, meta={**family.meta, **recipe}))
            st.rerun()
        except InputError as error:
            widgets.show_error(error)
    shown = first_of_each_class(pixels.labels, 16, pixels.n_samples)
    titles = [str(pixels.labels[i]) if pixels.labels is not None else str(i) for i in shown]
    widgets.chart(image_grid_figure(pixels.images()[shown], titles=titles, n_cols=8,
                                    title="First images" + (" of each class" if pixels.labels is not None else "")),
                  "preview")
    if data.family is not None and data.family.name == "pixels":
        near_empty_section(data)
else:
    shown = min(data.n_features, 200)
    st.markdown(f"**Per-feature statistics** (first {shown} features)")
    X = data.X[:, :shown]
    st.dataframe({"feature": list(data.feature_names[:shown]), "mean": X.mean(axis=0),
                  "std": X.std(axis=0), "min": X.min(axis=0), "max": X.max(axis=0)},
                 # four significant digits: a z-scored mean is 6e-15, not 0.000000000000006
                 column_config={name: st.column_config.NumberColumn(format="%.4g")
                                for name in ("mean", "std", "min", "max")},
                 hide_index=True, height=260)
    if data.labels is not None:
        classes, counts = np.unique(data.labels, return_counts=True)
        st.markdown("**Samples per class:** " + ", ".join(f"{c}: {n}" for c, n in zip(classes, counts)))
    values_section(data)
    near_empty_section(data)
