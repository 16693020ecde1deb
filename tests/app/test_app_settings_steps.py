"""A setting changes only when the user changes it (issue 76): on every page with settings, each
control is stepped in turn and the page's address (which carries every setting) compared before
and after: only the stepped control's own value may change. (The browser-drawn K's report, which
wrote a λ the user never chose, is tested in the browser: tests/browser/test_qalpha_coverage.py.)"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.data.bundled import load_dataset

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("toggle", "checkbox", "selectbox", "radio", "number_input", "slider", "select_slider", "multiselect")


def another_value(widget):
    """A valid value of ``widget`` other than its own, or None where it offers none."""
    kind, value = type(widget).__name__.lower(), widget.value
    if value is None:
        return None
    if kind in ("toggle", "checkbox"):
        return not value
    if kind == "multiselect":
        shown = [str(option) for option in widget.options]
        if not all(str(chosen) in shown for chosen in value):  # shown through a format function
            return None
        others = [option for option in shown if option not in [str(chosen) for chosen in value]]
        return list(value) + others[:1] if others else None
    if kind in ("selectbox", "radio", "selectslider"):
        options = [str(option) for option in widget.options]
        if str(value) not in options:  # shown through a format function: the values behind are not known here
            return None
        others = [option for option in options if option != str(value)]
        return None if not others else others[0] if isinstance(value, str) else type(value)(others[0])
    if kind in ("numberinput", "slider"):
        if isinstance(value, (tuple, list)):
            return None
        step = widget.step or 1
        low, high = (getattr(widget, f"{end}_value", None) if kind == "numberinput" else getattr(widget, end, None)
                     for end in ("min", "max"))
        if high is None or value + step <= high:
            return value + step
        return value - step if low is None or value - step >= low else None
    return None


def address(app) -> dict:
    return {name: app.query_params[name] for name in app.query_params}


@pytest.mark.parametrize("page, data", [("qalpha", "wine"), ("kernel", "wine"), ("slda", "wine"),
                                        ("topographic", "wine"), ("haar", "digits"), ("compare", "wine")])
def test_stepping_each_control_changes_only_its_own_setting(page, data):
    app = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=300)
    app.session_state["dataset"] = load_dataset(data)
    app.run()
    assert not app.exception
    stepped = set()
    for kind in KINDS:
        for widget in list(getattr(app, kind)):
            key = widget.key
            if key is None or key in stepped or widget.disabled or key.startswith(("undo_", "data_")):
                continue
            value = another_value(widget)
            if value is None:
                continue
            before = address(app)
            widget.set_value(value).run()
            assert not app.exception, (key, [e.value for e in app.exception])
            after = address(app)
            # a setting the new choice no longer uses leaves the address, one it now uses joins it
            # (the kernel's gamma and degree); none may take another value
            changed = {name for name in set(before) & set(after) if before[name] != after[name]}
            assert changed <= {key}, (page, key, {name: (before[name], after[name]) for name in changed})
            stepped.add(key)
    assert stepped, "no control was stepped"
