"""Paper figures page: one click runs a reproduction and shows the paper's numbers, the checked
claims and the figures; the UCI protocol runs on the current data set too."""

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from core.dataset import Dataset

ROOT = Path(__file__).resolve().parents[1]


def page(dataset=None):
    app = AppTest.from_file(str(ROOT / "pages" / "figures.py"), default_timeout=300)
    if dataset is not None:
        app.session_state["dataset"] = dataset
    return app.run()


def test_run_shows_comparison_claims_and_figures():
    app = page()
    assert not app.exception and "Press **Run**" in app.info[0].value
    app.selectbox[0].set_value("topographic").run()
    app.button(key="run_experiment").click().run()
    assert not app.exception and not app.error
    assert any("Holds: Each round surfaces a different solution set" in s.value for s in app.success)
    comparison = app.table[0].value
    assert list(comparison.columns) == ["quantity", "paper", "ours"]
    assert "000 Fig. 2" in app.subheader[0].value
    # the result stays when another widget changes and comes back
    app.number_input[0].set_value(1).run()
    assert "Press **Run**" in app.info[0].value
    app.number_input[0].set_value(0).run()
    assert "000 Fig. 2" in app.subheader[0].value


def test_uci_protocol_on_the_current_data_set():
    rng = np.random.default_rng(1)
    labels = np.repeat(["a", "b", "c"], 15)
    X = rng.normal(size=(45, 6))
    X[labels == "b", 0] += 4.0
    X[labels == "c", 1] += 4.0
    app = page(Dataset(X, labels=labels, name="my table"))
    app.selectbox[0].set_value("uci_side").run()
    app.toggle[1].set_value(True).run()
    app.button(key="run_experiment").click().run()
    assert not app.exception and not app.error
    assert "my table" in app.caption[1].value
    assert set(app.table[0].value["paper"]) == {"—"}


def test_uci_protocol_refuses_a_two_class_table():
    X = np.random.default_rng(2).normal(size=(20, 4))
    app = page(Dataset(X, labels=np.arange(20) % 2, name="two classes"))
    app.selectbox[0].set_value("uci_side").run()
    assert app.toggle[1].disabled  # on-current needs 3+ classes: the paper's wine is used instead
