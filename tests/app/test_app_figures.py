"""Paper figures page: one click runs a reproduction and shows the paper's numbers, the checked
claims and the figures; the UCI protocol runs on the current data set too."""

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from core.data.dataset import Dataset
from experiments.tables import UCI_RULE

ROOT = Path(__file__).resolve().parents[2]


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
    assert "Shashua & Wolf 2004 Fig. 2" in app.subheader[0].value
    # the result stays when another widget changes and comes back
    app.number_input[0].set_value(1).run()
    assert "Press **Run**" in app.info[0].value
    app.number_input[0].set_value(0).run()
    assert "Shashua & Wolf 2004 Fig. 2" in app.subheader[0].value


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


def test_uci_protocol_on_two_classes_with_chosen_options():
    rng = np.random.default_rng(2)
    labels = np.arange(40) % 2
    X = rng.normal(size=(40, 4))
    X[labels == 1, 0] += 4.0
    app = page(Dataset(X, labels=labels, name="two classes"))
    app.selectbox[0].set_value("uci_side").run()
    assert not app.toggle[1].disabled  # 2 classes: half of each class in turn is the side data
    app.toggle[1].set_value(True).run()
    weighting = next(box for box in app.selectbox if box.label == "How alpha enters k-means")
    weighting.set_value("gap").run()
    app.button(key="run_experiment").click().run()
    assert not app.exception and not app.error
    caption = app.caption[1].value
    assert "two classes" in caption and "a random half of each class" in caption
    [result] = app.session_state["experiment_results"].values()
    assert result.parameters["weighting"] == "gap" and result.parameters["k"] == UCI_RULE["k"]
    one_class = page(Dataset(X, labels=np.zeros(40, dtype=int), name="one class"))
    one_class.selectbox[0].set_value("uci_side").run()
    assert one_class.toggle[1].disabled  # nothing to cluster by class: the paper's wine is used instead
