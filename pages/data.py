"""Data: pick a bundled set or upload images or a table; preview; choose the feature family."""

import numpy as np
import streamlit as st

from core import InputError
from core.bundled import list_datasets, load_dataset
from core.features import FEATURE_FAMILIES, to_feature_family
from core.loaders import (IMAGE_EXTENSIONS, TABLE_EXTENSIONS, load_images, load_side_data, load_table,
                          table_columns)
from core.plots import image_grid_figure
from pages import ui

st.title("Data")
st.caption("Everything else works on the current data set. A failed upload leaves it as it was.")

bundled_tab, images_tab, table_tab = st.tabs(["Bundled data sets", "Upload images", "Upload a table"])

with bundled_tab:
    infos = {info.name: info for info in list_datasets()}
    choice = st.selectbox("Data set", list(infos), key="data_page_bundled",
                          format_func=lambda n: f"{n} — {infos[n].description}",
                          help="The data sets bundled with the app (assets/README.md says where each comes from).")
    st.caption(infos[choice].source)
    if st.button("Use this data set", key="use_bundled", help="Make it the current data set of every page."):
        ui.set_dataset(load_dataset(choice))
        st.rerun()

with images_tab:
    uploads = st.file_uploader(
        "Image files, or a ZIP with one folder per class",
        type=[e.lstrip(".") for e in IMAGE_EXTENSIONS] + ["zip"], accept_multiple_files=True,
        key="image_upload", help="PNG, JPEG, BMP, TIFF, GIF, PGM/PPM. Converted to grey values in [0, 1]; "
                                 "images of another size are resized to the most common size.")
    labels_from = st.radio("Labels from", ["folder", "prefix", "none"], horizontal=True,
                           help="folder: the folder of each image inside the ZIP; prefix: the part "
                                "of the file name before the separator (alice_01.png -> alice).")
    separator = st.text_input("Prefix separator", "_", max_chars=3, disabled=labels_from != "prefix",
                              help="The label is the file name up to this separator (alice_01.png -> alice).")
    strict = st.checkbox("Refuse images of another size instead of resizing them",
                         help="Off: images of another size are resized to the most common size (and listed).")
    if st.button("Load images", disabled=not uploads, key="load_images",
                 help="Read the files; if anything is wrong the current data set stays."):
        ui.load_upload(lambda: load_images(
            [(f.name, f.getvalue()) for f in uploads],
            labels_from=None if labels_from == "none" else labels_from,
            prefix_separator=separator or "_", strict_size=strict,
            name=uploads[0].name if len(uploads) == 1 else f"{len(uploads)} uploaded files"))

with table_tab:
    upload = st.file_uploader("A table (samples x features)", type=[e.lstrip(".") for e in TABLE_EXTENSIONS],
                              key="table_upload",
                              help="CSV/TSV with or without a header, NPY, NPZ or MATLAB .mat (X and Y).")
    label_column = x_key = y_key = None
    if upload is not None:
        try:
            columns = table_columns(upload.name, upload.getvalue())
        except InputError as error:
            ui.show_error(error)
            columns = []
        if upload.name.lower().endswith((".npz", ".mat")):
            x_key = st.selectbox("Array holding the data", columns, index=columns.index("X") if "X" in columns else 0,
                                 help="The samples x features matrix inside the file.")
            y_key = st.selectbox("Array holding the labels", ["(none)"] + columns,
                                 index=1 + columns.index("Y") if "Y" in columns else 0,
                                 help="One class label per sample, or none.")
            y_key = None if y_key == "(none)" else y_key
        elif columns:
            label_column = st.selectbox("Label column", ["(none)"] + columns, index=0,
                                        help="A column of class labels (it may hold text).")
            label_column = None if label_column == "(none)" else label_column
    if st.button("Load table", disabled=upload is None, key="load_table",
                 help="Read the table; if anything is wrong the current data set stays."):
        ui.load_upload(lambda: load_table(upload.name, upload.getvalue(), label_column=label_column,
                                          x_key=x_key, y_key=y_key))

ui.show_load_messages()


data = ui.current_dataset()
side_data = ui.current_side_dataset()
with st.expander("Side data: a second upload whose structure Q-alpha should ignore", expanded=side_data is not None):
    st.caption("000 Sec. 3: features that vary within the side data (e.g. another person's images under "
               "every lighting) are suppressed. Q-alpha offers it as \"uploaded side data\".")
    side_uploads = st.file_uploader(
        "A table or images with the same features as the current data",
        type=[e.lstrip(".") for e in IMAGE_EXTENSIONS + TABLE_EXTENSIONS] + ["zip"],
        accept_multiple_files=True, key="side_upload",
        help="The side matrix W of 000 Def. 3: its per-feature variances form D.")
    if st.button("Load side data", disabled=not side_uploads, key="load_side",
                 help="Read the side data; if anything is wrong nothing changes."):
        try:
            ui.set_side_dataset(load_side_data([(f.name, f.getvalue()) for f in side_uploads], like=data))
            st.rerun()
        except InputError as error:
            ui.show_error(error)
    if side_data is not None:
        st.markdown(f"Side data: **{side_data.name}**, {side_data.n_samples:,} samples x "
                    f"{side_data.n_features:,} features.")
        if st.button("Remove side data", key="clear_side", help="Forget the uploaded side data."):
            ui.set_side_dataset(None)
            st.rerun()

st.subheader(f"Current: {data.name}")
summary = data.summary()
st.markdown(f"{summary['samples']:,} samples x {summary['features']:,} features"
            + (f", {summary['classes']} classes" if summary["classes"] else ", no labels")
            + (f", images of {summary['image shape']}" if summary["image shape"] else "")
            + (f" — {data.source}" if data.source else ""))

pixels = data.meta.get("pixels", data if data.is_image else None)
if pixels is not None:
    st.markdown("**Feature family**")
    family = st.radio("Features of the images", list(FEATURE_FAMILIES), horizontal=True,
                      index=["pixels", "haar", "haarlike"].index(data.kind) if data.kind in ("haar", "haarlike") else 0,
                      captions=list(FEATURE_FAMILIES.values()),
                      help="What the selection algorithms see: the grey values, Haar wavelet coefficients "
                           "(000 Sec. 6) or Haar-like rectangle features (lecture, Viola-Jones).")
    options = {}
    if family == "haar":
        options["levels"] = st.slider("Levels", 1, 5, 3, help="Scales of the Haar decomposition.")
    elif family == "haarlike":
        step = st.slider("Stride and scale step (pixels)", 1, 8, 4,
                         help="Positions and cell sizes on this grid; smaller means many more features.")
        options = dict(stride=step, scale_step=step, min_cell=step)
    if st.button("Apply feature family", help="Turn the current images into this feature family."):
        try:
            ui.set_dataset(to_feature_family(pixels, family, **options))
            st.rerun()
        except InputError as error:
            ui.show_error(error)
    images = pixels.images()[:16]
    titles = [str(label) for label in (pixels.labels[:16] if pixels.labels is not None else range(16))]
    st.plotly_chart(image_grid_figure(images, titles=titles, n_cols=8, title="First images"), key="preview")
else:
    shown = min(data.n_features, 200)
    st.markdown(f"**Per-feature statistics** (first {shown} features)")
    X = data.X[:, :shown]
    st.dataframe({"feature": list(data.feature_names[:shown]), "mean": X.mean(axis=0),
                  "std": X.std(axis=0), "min": X.min(axis=0), "max": X.max(axis=0)},
                 hide_index=True, height=260)
    if data.labels is not None:
        classes, counts = np.unique(data.labels, return_counts=True)
        st.markdown("**Samples per class:** " + ", ".join(f"{c}: {n}" for c, n in zip(classes, counts)))
