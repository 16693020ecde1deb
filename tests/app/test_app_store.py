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
    assert set(address) == set(datasets.DATA_LINK_PARAMETERS), address
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
