"""Uploads kept on the server by the hash of their content (issue 51, first step): a data set a
session loads joins the server's store and the link names it by its key; a new session given the
link gets the data set and the view back; a link whose key the server does not hold, or that names
no data set at all, says which."""

import json

import numpy as np
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from core import Dataset
from core.data.content_store import ContentStore, content_key


def uploaded_table(name="my genes.csv"):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 9))
    X[:20, :3] += 3.0
    return Dataset(X, labels=np.repeat(["a", "b"], 20), name=name, kind="table", source=f"uploaded: {name}",
                   meta={"load_report": ["Guessed: samples as rows."]})


def keep_and_share(table):
    """A page run that loads ``table`` as an upload does (``datasets.set_dataset``) and shares
    its view, as every page does."""
    def script(table):
        from pages.ui import datasets, views

        datasets.set_dataset(table)
        views.share_view([])

    return AppTest.from_function(script, args=(table,), default_timeout=120)


def test_a_loaded_data_set_is_kept_and_the_link_names_it_by_its_key():
    table = uploaded_table()
    app = keep_and_share(table)
    app.run()
    assert not app.exception
    key = app.query_params["key"]
    assert key == content_key(table) and app.query_params["data"] == "my genes.csv"
    assert key in ContentStore()
    assert ContentStore().get(key).fingerprint == table.fingerprint


def test_every_pages_address_names_the_upload_so_a_reload_of_the_data_page_keeps_it():
    """Issue 59: after a load the address still named the faces (only the analysis pages wrote
    an upload's key), so a reload of the Data or Home page lost the upload. The sidebar, drawn on
    every page, now names the current data and side data; a session opened on that address (a
    reload) has them, on the Data page too, whose bundled picker follows the current set."""
    from pages.ui import datasets

    table, side = uploaded_table("reload me.csv"), uploaded_table("side rows.csv")

    def data_page_after_a_load(table, side):
        from pages.ui import datasets, sidebar

        datasets.set_dataset(table)
        datasets.set_side_dataset(side)
        sidebar.sidebar_summary()

    first = AppTest.from_function(data_page_after_a_load, args=(table, side), default_timeout=120).run()
    assert not first.exception
    address = {name: first.query_params[name] for name in first.query_params}
    assert set(address) == set(datasets.DATA_LINK_PARAMETERS) - {"also"}, address  # no other upload
    assert address["data"] == "reload me.csv" and address["key"] == content_key(table)
    for page in ("data", "home"):
        reloaded = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        for name, value in address.items():
            reloaded.query_params[name] = value
        reloaded.run()
        reloaded.switch_page(f"pages/{page}.py").run()
        assert not reloaded.exception and not reloaded.warning
        assert reloaded.session_state["dataset"].fingerprint == table.fingerprint
        assert reloaded.session_state["side_dataset"].fingerprint == side.fingerprint
        assert {name: reloaded.query_params[name] for name in reloaded.query_params} == address
    yale = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    yale.query_params["data"] = "Yale"
    yale.run()
    yale.switch_page("pages/data.py").run()
    assert yale.selectbox(key="data_page_bundled").value == "Yale"
    assert "key" not in yale.query_params and "fp" not in yale.query_params


def test_the_link_in_a_new_session_brings_back_the_data_set_and_the_view(monkeypatch):
    table = uploaded_table("link me.csv")
    key = ContentStore().put(table)

    def written_again(self, dataset):
        raise AssertionError("a restored data set is kept already: it is not hashed and written again")

    monkeypatch.setattr(ContentStore, "put", written_again)
    app = AppTest.from_file(str(ROOT / "pages" / "qalpha.py"), default_timeout=300)
    for name, value in {"data": "link me.csv", "key": key, "fp": table.fingerprint[:16], "qa_k": "3"}.items():
        app.query_params[name] = value
    app.run()
    assert not app.exception and not app.error
    assert app.session_state["dataset"].fingerprint == table.fingerprint
    assert app.session_state["dataset"].name == "link me.csv"
    assert app.number_input(key="qa_k").value == 3
    assert app.query_params["key"] == key and json.loads(app.query_params["qa_k"]) == 3


def test_a_key_the_server_does_not_hold_and_a_name_that_never_existed_say_so():
    held_elsewhere = content_key(uploaded_table("elsewhere.csv"))
    for params, said in (({"data": "elsewhere.csv", "key": held_elsewhere}, "this server does not hold it"),
                         ({"data": "nonexistent"}, "no bundled data set has that name")):
        app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        for name, value in params.items():
            app.query_params[name] = value
        app.run()
        assert not app.exception
        app.switch_page("pages/data.py").run()
        warnings = " ".join(w.value for w in app.warning)
        assert said in warnings and params["data"] in warnings, warnings
        assert app.session_state["dataset"].name == "warpAR10P"  # the faces, until the file comes


def side_images(n_features=2400):
    """Side data with one value per pixel of the bundled faces (60 x 40)."""
    rng = np.random.default_rng(9)
    return Dataset(rng.normal(size=(12, n_features)), name="other person.csv", kind="table",
                   source="uploaded: other person.csv")


def test_side_data_are_kept_and_the_link_brings_them_back_with_the_choice_that_uses_them():
    side = side_images()

    def script(side):
        from pages.ui import datasets, views

        datasets.current_dataset()
        datasets.set_side_dataset(side)
        views.share_view([])

    first = AppTest.from_function(script, args=(side,), default_timeout=120)
    first.run()
    assert not first.exception
    key = first.query_params["side"]
    assert key == content_key(side) and key in ContentStore()
    assert first.query_params["side_name"] == "other person.csv" and first.query_params["data"] == "warpAR10P"

    again = AppTest.from_file(str(ROOT / "pages" / "qalpha.py"), default_timeout=300)
    for name, value in {"data": "warpAR10P", "side": key, "side_name": "other person.csv",
                        "qa_side_mode": json.dumps("uploaded side data")}.items():
        again.query_params[name] = value
    again.run()
    assert not again.exception and not again.error
    restored = again.session_state["side_dataset"]
    assert restored.fingerprint == side.fingerprint and restored.name == "other person.csv"
    assert again.radio(key="qa_side_mode").value == "uploaded side data"
    assert again.query_params["side"] == key  # the page's own link still carries them


def test_side_data_the_server_does_not_hold_are_named_in_a_note():
    missing = content_key(side_images(2399))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for name, value in {"data": "warpAR10P", "side": missing, "side_name": "lost.csv"}.items():
        app.query_params[name] = value
    app.run()
    assert not app.exception
    notes = " ".join(note.value for note in app.sidebar.info)
    assert "lost.csv" in notes and "does not hold them" in notes and "Side data" in notes, notes
    assert app.session_state["dataset"].name == "warpAR10P"


def derived_and_laid_out_sets():
    """The three sets issue 76 found lost on a reload: an .h5ad's cells with the file's UMAP, a
    table after "Non-zero in at least 1%" removed features, and the Haar features of uploaded images."""
    from core.data.transforms import transform_values
    from core.features.families import to_feature_family

    rng = np.random.default_rng(7)
    cells = Dataset(rng.poisson(1.0, (30, 12)).astype(float), labels=np.repeat(["B", "T", "NK"], 10), name="pbmc.h5ad",
                    kind="table", source="uploaded: pbmc.h5ad", meta={"layouts": {"X_umap": rng.normal(size=(30, 2))}})
    counts = rng.poisson(2.0, (40, 10)).astype(float)
    counts[:, 3] = 0.0  # an empty gene: removed by the filter
    table = Dataset(counts, name="counts.csv", kind="table", source="uploaded: counts.csv")
    filtered = transform_values(table, min_nonzero_share=0.01)
    images = Dataset(rng.random((20, 64)), labels=np.repeat(["face", "other"], 10), image_shape=(8, 8), name="lfw.zip",
                     kind="images", source="uploaded: lfw.zip")
    haar = to_feature_family(images, "haar", levels=2)
    haar = Dataset(haar.X, labels=haar.labels, feature_names_=haar.feature_names_, name=haar.name, kind=haar.kind,
                   source=haar.source, meta={**haar.meta, "family_options": {"family": "haar", "options": {"levels": 2}}})
    return cells, filtered, haar


def test_sets_with_layouts_transforms_and_feature_families_come_back_after_a_reload():
    """Issue 76: only sets whose meta was plain JSON were kept, silently. Each of the three comes
    back with a reload of its address: the layout, the set a transform came from, the feature
    family (made again from the kept images); and the session's other sets are back in the list."""
    cells, filtered, haar = derived_and_laid_out_sets()

    def load_all(sets):
        from pages.ui import datasets, sidebar

        for dataset in sets:
            datasets.set_dataset(dataset)
        sidebar.sidebar_summary()

    for current in range(3):
        order = [s for i, s in enumerate((cells, filtered, haar)) if i != current] + [(cells, filtered, haar)[current]]
        first = AppTest.from_function(load_all, args=(order,), default_timeout=120).run()
        assert not first.exception and not first.sidebar.info, [n.value for n in first.sidebar.info]
        address = {name: first.query_params[name] for name in first.query_params}
        assert len(address["also"].split(",")) == 2
        reloaded = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        for name, value in address.items():
            reloaded.query_params[name] = value
        reloaded.run()
        assert not reloaded.exception and not reloaded.sidebar.info, [n.value for n in reloaded.sidebar.info]
        back = reloaded.session_state["dataset"]
        assert back.fingerprint == order[-1].fingerprint and back.name == order[-1].name
        listed = reloaded.session_state["session_datasets"]
        assert [d.fingerprint for d in listed.values()] == [d.fingerprint for d in order]
        by_name = {d.name: d for d in listed.values()}
        np.testing.assert_array_equal(by_name["pbmc.h5ad"].meta["layouts"]["X_umap"], cells.meta["layouts"]["X_umap"])
        source = by_name[filtered.name].meta["transformed_from"]
        assert source.fingerprint == filtered.meta["transformed_from"].fingerprint and source.name == "counts.csv"
        family = by_name[haar.name].family
        assert family is not None and family.name == "haar"
        assert family.images.fingerprint == haar.family.images.fingerprint
        np.testing.assert_allclose(family.inverse(by_name[haar.name].X).reshape(20, -1), haar.family.images.X, atol=1e-12)
        assert {name: reloaded.query_params[name] for name in reloaded.query_params} == address


def test_a_set_that_cannot_be_kept_is_said_at_once():
    """Something in meta the store cannot hold: the sidebar says the set is not kept and why."""
    odd = Dataset(np.arange(12.0).reshape(4, 3), name="odd.csv", kind="table", source="uploaded: odd.csv",
                  meta={"model": object()})

    def load(dataset):
        from pages.ui import datasets, sidebar

        datasets.set_dataset(dataset)
        sidebar.sidebar_summary()

    app = AppTest.from_function(load, args=(odd,), default_timeout=120).run()
    assert not app.exception
    notes = " ".join(note.value for note in app.sidebar.info)
    assert "odd.csv" in notes and "could not be kept" in notes and "'model'" in notes, notes
    assert "key" not in app.query_params


def test_the_same_numbers_uploaded_under_another_name_take_the_new_name_and_recipe():
    """Issue 76 (10): a second file with the same numbers kept the first file's name, and
    Compare's snippet then opened the wrong file. One copy stays, under the newest name."""
    first = uploaded_table("first.csv")
    second = Dataset(first.X, labels=first.labels, name="segmentation.csv", kind="table",
                     source="uploaded: segmentation.csv",
                     meta={"loaded_with": {"function": "load_table", "files": ["segmentation.csv"], "options": {}}})

    def load(sets):
        from pages.ui import datasets

        for dataset in sets:
            datasets.set_dataset(dataset)

    app = AppTest.from_function(load, args=([first, second],), default_timeout=120).run()
    assert not app.exception
    assert list(app.session_state["session_datasets"]) == ["segmentation.csv"]
    current = app.session_state["dataset"]
    assert current.name == "segmentation.csv" and current.meta["loaded_with"]["files"] == ["segmentation.csv"]


def test_a_subset_of_server_data_is_kept_with_its_rows_and_columns():
    """A server data set's subset carries its rows and columns as arrays in meta: kept (as lists in
    the entry) and arrays again on the way back, not refused as "not data the server can store"."""
    subset = Dataset(np.arange(24.0).reshape(6, 4), name="cells (6 x 4 by variance)", kind="table",
                     source="server: cells", meta={"subset_rows": np.array([0, 3, 5, 7, 8, 9]),
                                                    "subset_columns": np.array([1, 2, 6, 9])})

    def load(dataset):
        from pages.ui import datasets, sidebar

        datasets.set_dataset(dataset)
        sidebar.sidebar_summary()

    app = AppTest.from_function(load, args=(subset,), default_timeout=120).run()
    assert not app.exception and not app.sidebar.info, [n.value for n in app.sidebar.info]
    reloaded = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for name in app.query_params:
        reloaded.query_params[name] = app.query_params[name]
    reloaded.run()
    back = reloaded.session_state["dataset"]
    assert back.fingerprint == subset.fingerprint
    np.testing.assert_array_equal(back.meta["subset_rows"], subset.meta["subset_rows"])
    assert isinstance(back.meta["subset_columns"], np.ndarray)
